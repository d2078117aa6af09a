// Dots through cuBLAS on the CUDA backend, on machines without a GPU: the
// fake driver (fake_driver/, device memory is host memory) and the fake
// cuBLAS (fake_cublas/, which really computes its GEMMs column-major on
// the host and records each call). A dot the backend hands to cuBLAS is
// checked against the interpreter, so a slip in the row-major trick fails;
// the recorded call says which path ran and with which arguments. The fake
// driver runs no kernels, so a dot left to Kiln's kernels is only seen
// launching one.
//
// cuBLAS and the driver load once per process, so each scenario is its own
// ctest (tests/cuda/CMakeLists.txt) with its own environment, selecting one
// suite with --gtest_filter:
//   GemmPlanning           no environment: PlanGemm's arguments and refusals
//   CublasDot              the fake driver and the fake cuBLAS
//   ForcedKernelDot        ... and KILN_CUDA_DOT=kernel
//   MissingCublas          KILN_CUBLAS_LIBRARY = a path with no file
//   NotALibrary            KILN_CUBLAS_LIBRARY = a text file
//   WrongLibrary           KILN_CUBLAS_LIBRARY = the fake driver (no cuBLAS symbols)
//   RequiredCublasMissing  KILN_CUDA_DOT=cublas and no cuBLAS
//   BadDotSetting          KILN_CUDA_DOT=fast
#include <complex>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/cublas_gemm.h"
#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/literal.h"
#include "tests/cuda/fake_cublas/fake_cublas.h"
#include "tests/cuda/fake_library_backend_test.h"
#include "tests/cuda/single_instruction_modules.h"

namespace kiln {
namespace {

using cuda::fake::FakeGemmCall;
using testing::DotModule;

// Small integers (exact in every type, and so are the sums here), complex
// ones with imaginary parts of their own.
Literal Values(ElementType type, const std::vector<int64_t>& dims, int salt) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<double> real(static_cast<size_t>(count)), imaginary(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    real[static_cast<size_t>(i)] = static_cast<double>((i * 7 + salt) % 7 - 3);
    imaginary[static_cast<size_t>(i)] = static_cast<double>((i * 5 + salt * 3) % 5 - 2);
  }
  if (type == ElementType::kC64) {
    std::vector<std::complex<float>> values;
    for (size_t i = 0; i < real.size(); ++i)
      values.emplace_back(static_cast<float>(real[i]), static_cast<float>(imaginary[i]));
    return Literal::FromVector(values, dims);
  }
  if (type == ElementType::kC128) {
    std::vector<std::complex<double>> values;
    for (size_t i = 0; i < real.size(); ++i) values.emplace_back(real[i], imaginary[i]);
    return Literal::FromVector(values, dims);
  }
  StatusOr<Literal> converted = Literal::FromVector(real, dims).Convert(type);
  EXPECT_TRUE(converted.ok()) << converted.status().ToString();
  return converted.ok() ? std::move(converted).value() : Literal();
}

// The fake cuBLAS's test hooks, from the library the backend loaded.
struct CublasHooks {
  cuda::fake::GemmCountHook gemm_count = nullptr;
  cuda::fake::GemmHook gemm = nullptr;
  cuda::fake::FailNextHook fail_next = nullptr;
  cuda::fake::LiveHandlesHook live_handles = nullptr;
};

CublasHooks LoadCublasHooks() {
  void* cublas = testing::OpenLibraryNamedBy("KILN_CUBLAS_LIBRARY");
  CublasHooks hooks;
  hooks.gemm_count = testing::FindHook<cuda::fake::GemmCountHook>(cublas, "kiln_fake_cublas_gemm_count");
  hooks.gemm = testing::FindHook<cuda::fake::GemmHook>(cublas, "kiln_fake_cublas_gemm");
  hooks.fail_next = testing::FindHook<cuda::fake::FailNextHook>(cublas, "kiln_fake_cublas_fail_next");
  hooks.live_handles =
      testing::FindHook<cuda::fake::LiveHandlesHook>(cublas, "kiln_fake_cublas_live_handles");
  return hooks;
}

class CudaDotTest : public testing::FakeDriverBackendTest {
 protected:
  void SetUp() override {
    FakeDriverBackendTest::SetUp();
    if (HasFatalFailure()) return;
    hooks_ = LoadCublasHooks();
  }

  // Compiles and runs `text` on the cuda backend; true when it ran.
  bool RunsOnCuda(const std::string& text, const std::vector<Literal>& arguments) {
    std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
    if (module == nullptr) return false;
    StatusOr<Literal> result = testing::Execute(*cuda_, *module, arguments);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok();
  }

  // A dot that must run as a Kiln kernel: one launch, no GEMM.
  void ExpectKernel(const std::string& text, const std::vector<Literal>& arguments) {
    ExpectOneKernel(text, arguments, hooks_.gemm_count, "cuBLAS");
  }

  CublasHooks hooks_;
};

// ---------------------------------------------------------------------------
// PlanGemm alone.

std::unique_ptr<Module> g_planned;  // keeps the instruction PlanOf returns alive

StatusOr<cuda::GemmPlan> PlanOf(const std::string& text) {
  g_planned = testing::ParseHloOrFail(text);
  if (g_planned == nullptr) return InvalidArgument("does not parse");
  return cuda::PlanGemm(*g_planned->entry()->root());
}

TEST(GemmPlanning, RowMajorProductIsTheSwappedColumnMajorOne) {
  // C[3,4] = A[3,5] B[5,4]: cuBLAS computes C' (4 x 3) = B' A'.
  StatusOr<cuda::GemmPlan> plan = PlanOf(
      DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->transa, cuda::CUBLAS_OP_N);
  EXPECT_EQ(plan->transb, cuda::CUBLAS_OP_N);
  EXPECT_EQ(plan->m, 4);
  EXPECT_EQ(plan->n, 3);
  EXPECT_EQ(plan->k, 5);
  EXPECT_EQ(plan->lda, 4);
  EXPECT_EQ(plan->ldb, 5);
  EXPECT_EQ(plan->ldc, 4);
  EXPECT_EQ(plan->batch, 1);
  EXPECT_EQ(plan->a_type, cuda::CUDA_R_32F);
  EXPECT_EQ(plan->compute, cuda::CUBLAS_COMPUTE_32F);
}

TEST(GemmPlanning, TransposedOperandsAndCollapsedDimensions) {
  // lhs [b=2, K=(2,3), M=(3,2)], rhs [b=2, N=4, K=(2,3)].
  StatusOr<cuda::GemmPlan> plan =
      PlanOf(DotModule("bf16[2,2,3,3,2]", "bf16[2,4,2,3]", "f32[2,3,2,4]",
                       "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1,2}, "
                       "rhs_contracting_dims={2,3}"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->transa, cuda::CUBLAS_OP_T);
  EXPECT_EQ(plan->transb, cuda::CUBLAS_OP_T);
  EXPECT_EQ(plan->m, 4);
  EXPECT_EQ(plan->n, 6);
  EXPECT_EQ(plan->k, 6);
  EXPECT_EQ(plan->lda, 6);
  EXPECT_EQ(plan->ldb, 6);
  EXPECT_EQ(plan->ldc, 4);
  EXPECT_EQ(plan->batch, 2);
  EXPECT_EQ(plan->stride_a, 24);
  EXPECT_EQ(plan->stride_b, 36);
  EXPECT_EQ(plan->stride_c, 24);
  EXPECT_EQ(plan->a_type, cuda::CUDA_R_16BF);
  EXPECT_EQ(plan->c_type, cuda::CUDA_R_32F);
  EXPECT_EQ(plan->compute, cuda::CUBLAS_COMPUTE_32F);
}

TEST(GemmPlanning, WhatIsNoGemmIsRefusedWithAReason) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {DotModule("s32[3,5]", "s32[5,4]", "s32[3,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
       "s32"},
      {DotModule(
           "f32[5,2,3]", "f32[2,5,4]", "f32[2,3,4]",
           "lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={1}"),
       "batch"},
      {DotModule("f32[3,5,2]", "f32[5,4]", "f32[3,2,4]",
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
       "both sides"},
      {DotModule("f32[2,3,5]", "f32[3,2,4]", "f32[5,4]",
                 "lhs_contracting_dims={0,1}, rhs_contracting_dims={1,0}"),
       "block"},
      {DotModule("f32[3]", "f32[4]", "f32[3,4]", "lhs_contracting_dims={}, rhs_contracting_dims={}"),
       "outer"},
      {DotModule("f32[3,0]", "f32[0,4]", "f32[3,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
       "empty"},
  };
  for (const auto& [text, reason] : refused) {
    StatusOr<cuda::GemmPlan> plan = PlanOf(text);
    ASSERT_FALSE(plan.ok()) << "planned " << plan->ToString() << " for\n" << text;
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find(reason), std::string::npos) << plan.status().ToString();
  }
}

// ---------------------------------------------------------------------------
// The fake driver and the fake cuBLAS.

class CublasDot : public CudaDotTest {
 protected:
  void SetUp() override {
    CudaDotTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_NE(hooks_.gemm_count, nullptr) << "KILN_CUBLAS_LIBRARY is not the fake cuBLAS";
    ASSERT_NE(hooks_.gemm, nullptr);
    ASSERT_NE(hooks_.fail_next, nullptr);
    ASSERT_NE(hooks_.live_handles, nullptr);
  }

  // Runs `text` on cuda (through one cuBLAS call and no kernel) and on the
  // interpreter, expects equal results, and returns the call.
  FakeGemmCall ExpectGemm(const std::string& text, const std::vector<Literal>& arguments) {
    FakeGemmCall call;
    const int index = ExpectOneLibraryCall(text, arguments, hooks_.gemm_count, "cuBLAS");
    if (index < 0) return call;
    EXPECT_EQ(hooks_.gemm(index, &call), 1);
    return call;
  }
};

TEST_F(CublasDot, TheDeviceSaysDotsRunThroughCublas) {
  EXPECT_NE(Description().find("dot: cublas 13.1.0"), std::string::npos) << Description();
}

struct TypeCase {
  std::string operand, result;  // HLO type names
  ElementType type;
  int data_type, result_data_type, compute;
};

TEST_F(CublasDot, EveryTypeAndTranspositionMatchesTheInterpreter) {
  using namespace cuda;
  const std::vector<TypeCase> types = {
      {"f32", "f32", ElementType::kF32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
      {"f64", "f64", ElementType::kF64, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F},
      {"f16", "f16", ElementType::kF16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F},
      {"bf16", "bf16", ElementType::kBF16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
      {"f16", "f32", ElementType::kF16, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
      {"bf16", "f32", ElementType::kBF16, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F},
      {"c64", "c64", ElementType::kC64, CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F},
      {"c128", "c128", ElementType::kC128, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F},
  };
  constexpr int64_t kM = 3, kK = 5, kN = 4;
  for (const TypeCase& t : types) {
    for (const bool lhs_transposed : {false, true}) {
      for (const bool rhs_transposed : {false, true}) {
        const std::vector<int64_t> lhs =
            lhs_transposed ? std::vector<int64_t>{kK, kM} : std::vector<int64_t>{kM, kK};
        const std::vector<int64_t> rhs =
            rhs_transposed ? std::vector<int64_t>{kN, kK} : std::vector<int64_t>{kK, kN};
        auto shape = [](const std::string& type, const std::vector<int64_t>& dims) {
          return type + "[" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "]";
        };
        const std::string text =
            DotModule(shape(t.operand, lhs), shape(t.operand, rhs), shape(t.result, {kM, kN}),
                      std::string("lhs_contracting_dims={") + (lhs_transposed ? "0" : "1") +
                          "}, rhs_contracting_dims={" + (rhs_transposed ? "1" : "0") + "}");
        SCOPED_TRACE(text);
        const FakeGemmCall call = ExpectGemm(text, {Values(t.type, lhs, 1), Values(t.type, rhs, 2)});
        EXPECT_EQ(call.batched, 0);
        EXPECT_EQ(call.transa, rhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
        EXPECT_EQ(call.transb, lhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N);
        EXPECT_EQ(call.m, kN);
        EXPECT_EQ(call.n, kM);
        EXPECT_EQ(call.k, kK);
        EXPECT_EQ(call.lda, rhs_transposed ? kK : kN);
        EXPECT_EQ(call.ldb, lhs_transposed ? kM : kK);
        EXPECT_EQ(call.ldc, kN);
        EXPECT_EQ(call.a_type, t.data_type);
        EXPECT_EQ(call.b_type, t.data_type);
        EXPECT_EQ(call.c_type, t.result_data_type);
        EXPECT_EQ(call.compute_type, t.compute);
        EXPECT_EQ(call.math_mode, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
            << "f32 must stay f32 (no TF32)";
        EXPECT_NE(call.stream, nullptr) << "the GEMM did not go on the execution's stream";
      }
    }
  }
}

TEST_F(CublasDot, BatchedDotsAreOneStridedBatchedCall) {
  // One batch dimension, both operands transposed.
  FakeGemmCall call = ExpectGemm(
      DotModule("f32[2,5,3]", "f32[2,4,5]", "f32[2,3,4]",
                "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}"),
      {Values(ElementType::kF32, {2, 5, 3}, 3), Values(ElementType::kF32, {2, 4, 5}, 4)});
  EXPECT_EQ(call.batched, 1);
  EXPECT_EQ(call.batch_count, 2);
  EXPECT_EQ(call.transa, cuda::CUBLAS_OP_T);
  EXPECT_EQ(call.transb, cuda::CUBLAS_OP_T);
  EXPECT_EQ(call.stride_a, 20);
  EXPECT_EQ(call.stride_b, 15);
  EXPECT_EQ(call.stride_c, 12);

  // Two batch dimensions, two free and two contracting dimensions collapsed.
  call = ExpectGemm(
      DotModule("f64[2,3,3,2,2,3]", "f64[2,3,2,3,4]", "f64[2,3,3,2,4]",
                "lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={4,5}, "
                "rhs_contracting_dims={2,3}"),
      {Values(ElementType::kF64, {2, 3, 3, 2, 2, 3}, 5), Values(ElementType::kF64, {2, 3, 2, 3, 4}, 6)});
  EXPECT_EQ(call.batched, 1);
  EXPECT_EQ(call.batch_count, 6);
  EXPECT_EQ(call.m, 4);
  EXPECT_EQ(call.n, 6);
  EXPECT_EQ(call.k, 6);
  EXPECT_EQ(call.stride_a, 24);
  EXPECT_EQ(call.stride_b, 36);
  EXPECT_EQ(call.stride_c, 24);

  // A batched complex product.
  call = ExpectGemm(
      DotModule("c64[3,2,4]", "c64[3,4,5]", "c64[3,2,5]",
                "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"),
      {Values(ElementType::kC64, {3, 2, 4}, 7), Values(ElementType::kC64, {3, 4, 5}, 8)});
  EXPECT_EQ(call.batch_count, 3);
}

TEST_F(CublasDot, MatrixVectorProductsAreGemms) {
  FakeGemmCall call = ExpectGemm(
      DotModule("f32[3,5]", "f32[5]", "f32[3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Values(ElementType::kF32, {3, 5}, 1), Values(ElementType::kF32, {5}, 2)});
  EXPECT_EQ(call.m, 1);
  EXPECT_EQ(call.n, 3);
  call = ExpectGemm(
      DotModule("f32[5]", "f32[5,4]", "f32[4]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
      {Values(ElementType::kF32, {5}, 3), Values(ElementType::kF32, {5, 4}, 4)});
  EXPECT_EQ(call.m, 4);
  EXPECT_EQ(call.n, 1);
}

TEST_F(CublasDot, DotsThatAreNoGemmStayOnKilnKernels) {
  ExpectKernel(
      DotModule("s32[3,5]", "s32[5,4]", "s32[3,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Values(ElementType::kS32, {3, 5}, 1), Values(ElementType::kS32, {5, 4}, 2)});
  ExpectKernel(
      DotModule("f32[5,2,3]", "f32[2,5,4]", "f32[2,3,4]",
                "lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={1}"),
      {Values(ElementType::kF32, {5, 2, 3}, 1), Values(ElementType::kF32, {2, 5, 4}, 2)});
  ExpectKernel(
      DotModule("f32[3,5,2]", "f32[5,4]", "f32[3,2,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      {Values(ElementType::kF32, {3, 5, 2}, 1), Values(ElementType::kF32, {5, 4}, 2)});
  ExpectKernel(DotModule("f32[3]", "f32[4]", "f32[3,4]", "lhs_contracting_dims={}, rhs_contracting_dims={}"),
               {Values(ElementType::kF32, {3}, 1), Values(ElementType::kF32, {4}, 2)});
}

// A dot between kernels: the GEMM reads and writes the slots the kernels
// use, on the same stream.
TEST_F(CublasDot, ADotBetweenKernelsIsOneCallAmongLaunches) {
  const int launches = launch_count_();
  const int gemms = hooks_.gemm_count();
  ASSERT_TRUE(RunsOnCuda(R"(HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  n = f32[3,5] negate(a)
  d = f32[3,4] dot(n, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[3,4] exponential(d)
})",
                         {Values(ElementType::kF32, {3, 5}, 1), Values(ElementType::kF32, {5, 4}, 2)}));
  EXPECT_EQ(hooks_.gemm_count(), gemms + 1);
  EXPECT_EQ(launch_count_(), launches + 2);
}

TEST_F(CublasDot, ACublasErrorNamesTheCallAndTheStatus) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(
      DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = {Values(ElementType::kF32, {3, 5}, 1),
                                          Values(ElementType::kF32, {5, 4}, 2)};
  hooks_.fail_next(cuda::CUBLAS_STATUS_EXECUTION_FAILED);
  StatusOr<Literal> failed = testing::Execute(*cuda_, *module, arguments);
  ASSERT_FALSE(failed.ok()) << "a failed GEMM gave a result";
  EXPECT_EQ(failed.status().code(), StatusCode::kInternal) << failed.status().ToString();
  for (const char* part : {"cublasGemmEx", "CUBLAS_STATUS_EXECUTION_FAILED", "'d'"})
    EXPECT_NE(failed.status().ToString().find(part), std::string::npos) << failed.status().ToString();
  // The next execution works again.
  StatusOr<Literal> again = testing::Execute(*cuda_, *module, arguments);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

// Executions running at once on one executable each take a handle of their
// own, bound to their own stream, and all compute the right product.
TEST_F(CublasDot, ConcurrentExecutionsEachHaveTheirOwnHandle) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(DotModule(
      "f32[16,24]", "f32[24,8]", "f32[16,8]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"));
  ASSERT_NE(module, nullptr);
  const Literal lhs = Values(ElementType::kF32, {16, 24}, 1);
  const Literal rhs = Values(ElementType::kF32, {24, 8}, 2);
  StatusOr<Literal> expected = testing::Execute(*interpreter_, *module, std::vector<Literal>{lhs, rhs});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  StatusOr<std::unique_ptr<Executable>> executable = cuda_->Compile(*module, CompileOptions{});
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  StatusOr<std::unique_ptr<DeviceBuffer>> a = cuda_->BufferFromLiteral(lhs, cuda_->devices()[0]);
  StatusOr<std::unique_ptr<DeviceBuffer>> b = cuda_->BufferFromLiteral(rhs, cuda_->devices()[0]);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<DeviceBuffer*> arguments = {a->get(), b->get()};
  const int gemms = hooks_.gemm_count();
  constexpr int kThreads = 4, kRuns = 5;
  std::vector<int> right(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results =
            (*executable)->Execute(arguments, ExecuteOptions{});
        if (!results.ok() || results->size() != 1) continue;
        StatusOr<Literal> got = (*results)[0]->ToLiteral();
        right[static_cast<size_t>(t)] += got.ok() && *got == *expected;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(right[static_cast<size_t>(t)], kRuns) << "thread " << t;
  ASSERT_EQ(hooks_.gemm_count(), gemms + kThreads * kRuns);
  EXPECT_GE(hooks_.live_handles(), 1);
  EXPECT_LE(hooks_.live_handles(), kThreads) << "more handles than executions at once";
  for (int i = gemms; i < gemms + kThreads * kRuns; ++i) {
    FakeGemmCall call;
    ASSERT_EQ(hooks_.gemm(i, &call), 1);
    EXPECT_NE(call.stream, nullptr) << "call " << i << " ran on no execution's stream";
  }
}

// The handles live in a pool shared by the backend and its executables,
// and all go once the last of them does.
TEST_F(CublasDot, HandlesAreReusedAndDestroyedWithTheBackend) {
  const int before = hooks_.live_handles();
  cuda_.reset();
  EXPECT_LE(hooks_.live_handles(), before);
  const int base = hooks_.live_handles();
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  cuda_ = std::move(backend).value();
  const std::vector<Literal> arguments = {Values(ElementType::kF32, {3, 5}, 1),
                                          Values(ElementType::kF32, {5, 4}, 2)};
  const std::string text =
      DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunsOnCuda(text, arguments));
  EXPECT_EQ(hooks_.live_handles(), base + 1) << "sequential executions should share one handle";
  cuda_.reset();
  EXPECT_EQ(hooks_.live_handles(), base) << "cuBLAS handles outlived the backend";
}

// ---------------------------------------------------------------------------
// Without cuBLAS, or told not to use it: Kiln's kernels, and the device
// says why.

using ForcedKernelDot = CudaDotTest;
using MissingCublas = CudaDotTest;
using NotALibrary = CudaDotTest;
using WrongLibrary = CudaDotTest;

const char kMatrixProduct[] = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";

TEST_F(ForcedKernelDot, DotsRunAsKernels) {
  EXPECT_NE(Description().find("dot: kiln kernels (KILN_CUDA_DOT=kernel)"), std::string::npos)
      << Description();
  ASSERT_NE(hooks_.gemm_count, nullptr) << "KILN_CUBLAS_LIBRARY is not the fake cuBLAS";
  ExpectKernel(DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", kMatrixProduct),
               {Values(ElementType::kF32, {3, 5}, 1), Values(ElementType::kF32, {5, 4}, 2)});
  EXPECT_EQ(hooks_.gemm_count(), 0);
}

TEST_F(MissingCublas, DotsRunAsKernelsAndTheDeviceSaysWhy) {
  for (const char* part : {"dot: kiln kernels (cuBLAS not loaded: ",
                           "KILN_CUBLAS_LIBRARY=/nonexistent/libcublas.so.13", "No such file"})
    EXPECT_NE(Description().find(part), std::string::npos) << Description();
  ExpectKernel(DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", kMatrixProduct),
               {Values(ElementType::kF32, {3, 5}, 1), Values(ElementType::kF32, {5, 4}, 2)});
}

TEST_F(NotALibrary, DotsRunAsKernelsAndTheDeviceSaysWhy) {
  const std::string path = testing::EnvironmentValue("KILN_CUBLAS_LIBRARY");
  ASSERT_FALSE(path.empty());
  for (const std::string& part :
       {std::string("dot: kiln kernels (cuBLAS not loaded: "), "KILN_CUBLAS_LIBRARY=" + path})
    EXPECT_NE(Description().find(part), std::string::npos) << Description();
  ExpectKernel(DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", kMatrixProduct),
               {Values(ElementType::kF32, {3, 5}, 1), Values(ElementType::kF32, {5, 4}, 2)});
}

TEST_F(WrongLibrary, DotsRunAsKernelsAndTheDeviceNamesTheMissingSymbol) {
  EXPECT_NE(Description().find("has no cublasGetProperty"), std::string::npos) << Description();
  ExpectKernel(DotModule("f32[3,5]", "f32[5,4]", "f32[3,4]", kMatrixProduct),
               {Values(ElementType::kF32, {3, 5}, 1), Values(ElementType::kF32, {5, 4}, 2)});
}

TEST(RequiredCublasMissing, BackendIsUnavailableSayingWhy) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "KILN_CUDA_DOT=cublas made a backend without cuBLAS";
  EXPECT_EQ(backend.status().code(), StatusCode::kUnavailable) << backend.status().ToString();
  for (const char* part : {"KILN_CUDA_DOT=cublas", "/nonexistent/libcublas.so.13"})
    EXPECT_NE(backend.status().message().find(part), std::string::npos) << backend.status().ToString();
}

TEST(BadDotSetting, BackendCreationIsAnInvalidArgumentNamingTheValue) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "KILN_CUDA_DOT=fast was accepted";
  EXPECT_EQ(backend.status().code(), StatusCode::kInvalidArgument) << backend.status().ToString();
  EXPECT_NE(backend.status().message().find("'fast'"), std::string::npos) << backend.status().ToString();
}

}  // namespace
}  // namespace kiln
