// f32 dots large enough for the oneDNN matmul path, against the interpreter,
// with each operand plain or transposed and with a batch dimension, plus dots
// that stay on Eigen. In a build without oneDNN the same comparisons check the
// Eigen path and the routing checks expect Eigen (OneDnnMatmul::Available()).
#include <time.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/onednn_matmul.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;
using testing::ParseOrDie;

// Whether the dot thunk made for the root of `text` runs on oneDNN (the
// root's operands must already be in an order PlanDot takes as it is).
bool MatmulRootUsesOneDnn(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return false;
  std::optional<DotPlan> plan = PlanDot(*module->entry()->root());
  EXPECT_TRUE(plan.has_value());
  if (!plan.has_value()) return false;
  EXPECT_TRUE(plan->lhs_permutation.empty() && plan->rhs_permutation.empty());
  DotThunk thunk(0, 1, 2, plan->geometry);
  return thunk.uses_onednn();
}

void ExpectMatmulMatchesOnPath(const std::string& text, bool onednn_can_run_it, double tolerance = 1e-3) {
  ExpectMatchesInterpreter(text, tolerance);
  EXPECT_EQ(MatmulRootUsesOneDnn(text), onednn_can_run_it && OneDnnMatmul::Available())
      << "oneDNN in this build: " << OneDnnMatmul::Available();
}

TEST(RuntimeOneDnnMatmulTest, PlainProduct) {
  ExpectMatmulMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[70,96] parameter(0)
  b = f32[96,80] parameter(1)
  ROOT d = f32[70,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            true);
}

TEST(RuntimeOneDnnMatmulTest, TransposedOperands) {
  ExpectMatmulMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[96,70] parameter(0)
  b = f32[80,96] parameter(1)
  ROOT d = f32[70,80] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})",
                            true);
}

TEST(RuntimeOneDnnMatmulTest, BatchedProduct) {
  ExpectMatmulMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[3,64,72] parameter(0)
  b = f32[3,72,66] parameter(1)
  ROOT d = f32[3,64,66] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
                            true);
}

// Large enough that a two-thread backend splits it among its threads.
TEST(RuntimeOneDnnMatmulTest, ProductThatRunsOnSeveralThreads) {
  ExpectMatmulMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[256,384] parameter(0)
  b = f32[384,512] parameter(1)
  ROOT d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            true, 1e-2);
}

// The pieces a pool of `threads` cuts the root product of `text` into (0
// without oneDNN).
size_t MatmulRootPieces(const std::string& text, int threads) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return 0;
  std::optional<DotPlan> plan = PlanDot(*module->entry()->root());
  if (!plan.has_value()) return 0;
  std::unique_ptr<OneDnnMatmul> matmul = OneDnnMatmul::Create(plan->geometry, threads);
  return matmul == nullptr ? 0 : matmul->pieces(threads);
}

// Large products run in pieces on the intra-op pool, each a view of the
// operands: batch elements, bands of rows of the result (also of a
// transposed lhs) or, for a wide and short result, bands of columns (also of
// a transposed rhs), with a shorter last piece. One thread runs it whole.
TEST(RuntimeOneDnnMatmulTest, LargeProductsRunInPieces) {
  const std::string texts[] = {
      R"(HloModule m
ENTRY e {
  a = f32[6,100,128] parameter(0)
  b = f32[6,128,112] parameter(1)
  ROOT d = f32[6,100,112] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
      R"(HloModule m
ENTRY e {
  a = f32[300,250] parameter(0)
  b = f32[300,130] parameter(1)
  ROOT d = f32[250,130] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
      R"(HloModule m
ENTRY e {
  a = f32[24,512] parameter(0)
  b = f32[1000,512] parameter(1)
  ROOT d = f32[24,1000] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})",
      R"(HloModule m
ENTRY e {
  a = f32[2,40,512] parameter(0)
  b = f32[2,512,300] parameter(1)
  ROOT d = f32[2,40,300] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
  };
  for (const std::string& text : texts) {
    std::unique_ptr<Module> module = ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 3, 4}, 1e-3);
    if (!OneDnnMatmul::Available()) continue;
    EXPECT_EQ(MatmulRootPieces(text, 1), 1u) << text;
    EXPECT_GT(MatmulRootPieces(text, 2), 1u) << text;
    EXPECT_GT(MatmulRootPieces(text, 3), MatmulRootPieces(text, 2)) << text;
  }
}

double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// After a product that two threads share, no thread keeps spinning: the
// process uses next to no processor time in a pause that follows. When
// oneDNN ran its own OpenMP team, libgomp's threads spun for milliseconds
// after every product (measured for this product: 0.8 to 10.9 ms of CPU
// time in the pause), which a machine busy with other processes cannot
// spare: a 256^3 product then took 8-20 ms instead of 0.9 ms. The bound is on CPU
// time, not elapsed time, and on most pauses rather than every one: a
// spinning team shows in each pause, while a CI machine running other tests
// beside this one once charged 5.9 ms to a single pause of three.
TEST(RuntimeOneDnnMatmulTest, NoThreadSpinsAfterAParallelProduct) {
  std::unique_ptr<Module> module = ParseOrDie(R"(HloModule m
ENTRY e {
  a = f32[256,256] parameter(0)
  b = f32[256,256] parameter(1)
  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  CompileOptions options;
  options.num_threads = 2;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> buffers;
  for (const Literal& argument : testing::RandomArguments(*module)) {
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> buffer, cpu.BufferFromLiteral(argument, nullptr));
    buffers.push_back(buffer.get());
    owned.push_back(std::move(buffer));
  }
  constexpr int kPauses = 7;
  constexpr double kIdleBound = 0.002;  // seconds of CPU time in a 50 ms pause
  int busy_pauses = 0;
  std::string measured;
  for (int pause = 0; pause < kPauses; ++pause) {
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                              executable->Execute(buffers, {}));
    const double before = ProcessCpuSeconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double idle = ProcessCpuSeconds() - before;
    if (idle >= kIdleBound) ++busy_pauses;
    measured += " " + std::to_string(idle * 1e3);
  }
  EXPECT_LE(busy_pauses, 2) << busy_pauses << " of " << kPauses << " pauses used " << kIdleBound * 1e3
                            << " ms of CPU time or more while nothing ran; each pause's ms:" << measured;
}

TEST(RuntimeOneDnnMatmulTest, SmallProductStaysOnEigen) {
  ExpectMatmulMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            false);
}

TEST(RuntimeOneDnnMatmulTest, DoubleStaysOnEigen) {
  ExpectMatmulMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f64[70,96] parameter(0)
  b = f64[96,80] parameter(1)
  ROOT d = f64[70,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                            false);
}

}  // namespace
}  // namespace kiln::cpu
