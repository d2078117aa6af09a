// The cpu backend runs JAX's LAPACK custom calls on its own buffers
// (backends/cpu/lapack_thunk.h): each call becomes a "lapack" thunk, not the
// interpreter's library thunk, and gives the interpreter's bytes (both run
// the same LAPACK calls on the same column-major matrices), on any number of
// intra-op threads and from several threads at once.
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::CountThunks;
using testing::FirstByteDifference;
using testing::ParseOrDie;
using testing::RunExecutable;
using testing::RunOn;

// jnp.linalg.cholesky as JAX exports it: the factor is computed in place in
// a temporary (output_to_operand_aliasing), then masked.
const char* const kCholesky = R"(
HloModule cholesky

ENTRY main {
  a = f32[2,24,24]{2,1,0} parameter(0)
  t = f32[2,24,24]{2,1,0} transpose(a), dimensions={0,2,1}
  product = f32[2,24,24]{2,1,0} dot(a, t), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  shift = f32[] constant(24)
  shifts = f32[2,24,24]{2,1,0} broadcast(shift), dimensions={}
  spd = f32[2,24,24]{2,1,0} add(product, shifts)
  call = (f32[2,24,24]{1,2,0}, s32[2]{0}) custom-call(spd), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[2,24,24]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  factor = f32[2,24,24]{2,1,0} get-tuple-element(call), index=0
  info = s32[2]{0} get-tuple-element(call), index=1
  ROOT result = (f32[2,24,24]{2,1,0}, s32[2]{0}) tuple(factor, info)
}
)";

// jnp.linalg.eigh, svd and qr's LAPACK calls on one batch of matrices.
const char* const kEighSvdQr = R"(
HloModule eigh_svd_qr

ENTRY main {
  a = f64[3,9,9]{2,1,0} parameter(0)
  t = f64[3,9,9]{2,1,0} transpose(a), dimensions={0,2,1}
  symmetric = f64[3,9,9]{2,1,0} add(a, t)
  eigh = (f64[3,9,9]{1,2,0}, f64[3,9]{1,0}, s32[3]{0}) custom-call(symmetric), custom_call_target="lapack_dsyevd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, uplo = 76 : ui8}
  svd = (f64[3,9,9]{1,2,0}, f64[3,9]{1,0}, f64[3,9,9]{1,2,0}, f64[3,9,9]{1,2,0}, s32[3]{0}) custom-call(a), custom_call_target="lapack_dgesdd_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={mode = 65 : ui8}
  qr = (f64[3,9,9]{1,2,0}, f64[3,9]{1,0}) custom-call(a), custom_call_target="lapack_dgeqrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={}
  reflectors = f64[3,9,9]{1,2,0} get-tuple-element(qr), index=0
  scales = f64[3,9]{1,0} get-tuple-element(qr), index=1
  q = f64[3,9,9]{1,2,0} custom-call(reflectors, scales), custom_call_target="lapack_dorgqr_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={}
  ROOT result = ((f64[3,9,9]{1,2,0}, f64[3,9]{1,0}, s32[3]{0}), (f64[3,9,9]{1,2,0}, f64[3,9]{1,0}, f64[3,9,9]{1,2,0}, f64[3,9,9]{1,2,0}, s32[3]{0}), f64[3,9,9]{1,2,0}) tuple(eigh, svd, q)
}
)";

// Expects the cpu backend's result leaves to be the interpreter's, byte
// for byte, on 1, 2 and 4 intra-op threads.
void ExpectInterpretersBytes(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = testing::RandomArguments(*module);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, *module, arguments));
  for (int threads : {1, 2, 4}) {
    CpuBackend cpu;
    CompileOptions options;
    options.num_threads = threads;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, RunExecutable(cpu, *executable, arguments));
    ASSERT_EQ(got.size(), want.size());
    for (size_t leaf = 0; leaf < want.size(); ++leaf) {
      const int64_t at = FirstByteDifference(got[leaf], want[leaf]);
      EXPECT_EQ(at, -1) << threads << " threads: leaf " << leaf << " differs at element " << at;
    }
  }
}

TEST(RuntimeLapackTest, CholeskyFactorsInPlaceOnTheSlotsWithTheInterpretersBytes) {
  EXPECT_EQ(CountThunks(kCholesky, "lapack"), 1);
  EXPECT_EQ(CountThunks(kCholesky, "library"), 0);
  ExpectInterpretersBytes(kCholesky);
}

TEST(RuntimeLapackTest, EighSvdAndQrRunOnTheSlotsWithTheInterpretersBytes) {
  EXPECT_EQ(CountThunks(kEighSvdQr, "lapack"), 4);
  EXPECT_EQ(CountThunks(kEighSvdQr, "library"), 0);
  ExpectInterpretersBytes(kEighSvdQr);
}

TEST(RuntimeLapackTest, OneExecutableFactorsFromSeveralThreadsAtOnce) {
  // Each thread transposes through its own scratch (lapack_calls.cc): four
  // threads running the same executable at once must each get the answer
  // one thread gets alone.
  std::unique_ptr<Module> module = ParseOrDie(kEighSvdQr);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  std::vector<std::vector<Literal>> arguments;
  std::vector<std::vector<Literal>> alone;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    arguments.push_back(testing::RandomArguments(*module, seed));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> result, RunExecutable(cpu, *executable, arguments.back()));
    alone.push_back(std::move(result));
  }
  std::vector<std::vector<Literal>> together(arguments.size());
  std::vector<Status> statuses(arguments.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < arguments.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        StatusOr<std::vector<Literal>> result = RunExecutable(cpu, *executable, arguments[t]);
        if (!result.ok()) {
          statuses[t] = result.status();
          return;
        }
        together[t] = std::move(result).value();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < arguments.size(); ++t) {
    ASSERT_TRUE(statuses[t].ok()) << statuses[t].ToString();
    ASSERT_EQ(together[t].size(), alone[t].size());
    for (size_t leaf = 0; leaf < alone[t].size(); ++leaf) {
      EXPECT_EQ(FirstByteDifference(together[t][leaf], alone[t][leaf]), -1)
          << "thread " << t << " leaf " << leaf;
    }
  }
}

TEST(RuntimeLapackTest, ACallLapackCannotTakeKeepsTheInterpretersError) {
  // 'X' is no triangle letter: the call stays on the library thunk, which
  // reports what the interpreter reports.
  std::string text = kCholesky;
  const std::string letter = "uplo = 76";
  text.replace(text.find(letter), letter.size(), "uplo = 88");
  EXPECT_EQ(CountThunks(text, "lapack"), 0);
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = testing::RandomArguments(*module);
  CpuBackend cpu;
  interpreter::InterpreterBackend reference;
  StatusOr<std::vector<Literal>> got = RunOn(cpu, *module, arguments);
  StatusOr<std::vector<Literal>> want = RunOn(reference, *module, arguments);
  ASSERT_FALSE(want.ok());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("lapack_spotrf_ffi"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("uplo = 88"), std::string::npos) << got.status().ToString();
}

}  // namespace
}  // namespace kiln::cpu
