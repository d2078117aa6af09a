// Convolutions through cuDNN on the CUDA backend, on machines without a
// GPU: the fake driver (fake_driver/, device memory is host memory) and the
// fake cuDNN (fake_cudnn/, which really computes each convolution on the
// host from the descriptors it is given and records each call). A
// convolution the backend hands to cuDNN is checked against the
// interpreter, so a wrong stride, format, padding or group count fails; the
// recorded call says which path ran and with which descriptors. The fake
// driver runs no kernels, so a convolution left to Kiln's implicit GEMM is
// only seen launching one.
//
// cuDNN and the driver load once per process, so each scenario is its own
// ctest (tests/cuda/CMakeLists.txt) with its own environment, selecting one
// suite with --gtest_filter:
//   CudnnPlanning               no environment: PlanCudnnConvolution
//   CudnnConvolution            the fake driver and the fake cuDNN
//   ForcedKernelConvolution     ... and KILN_CUDA_CONVOLUTION=kernel
//   MissingCudnn                KILN_CUDNN_LIBRARY = a path with no file
//   RequiredCudnnMissing        KILN_CUDA_CONVOLUTION=cudnn and no cuDNN
//   BadConvolutionSetting       KILN_CUDA_CONVOLUTION=fast
#include "backends/cuda/cudnn_convolution.h"

#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/cudnn_convolution_runner.h"
#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/literal.h"
#include "tests/cuda/fake_cudnn/fake_cudnn.h"
#include "tests/cuda/fake_library_backend_test.h"
#include "tests/cuda/single_instruction_modules.h"
#include "tests/unit/padded_convolution_cases.h"

namespace kiln {
namespace {

using cuda::fake::FakeConvolutionCall;
using cuda::fake::kFakeAlgorithmSearches;
using cuda::fake::kFakeDescriptorsCreated;
using cuda::fake::kFakeHeuristicQueries;
using testing::ConvolutionModule;

// Small integers (exact in every type, and so are the sums here).
Literal Values(const Shape& shape, int salt) {
  std::vector<double> values(static_cast<size_t>(shape.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>((i * 7 + salt) % 7) - 3;
  StatusOr<Literal> converted = Literal::FromVector(values, shape.dimensions()).Convert(shape.element_type());
  EXPECT_TRUE(converted.ok()) << converted.status().ToString();
  return converted.ok() ? std::move(converted).value() : Literal();
}

std::vector<Literal> ArgumentsOf(const Module& module) {
  std::vector<Literal> arguments;
  int salt = 1;
  for (const Instruction* parameter : module.entry()->parameters())
    arguments.push_back(Values(parameter->shape, salt++));
  return arguments;
}

// ---------------------------------------------------------------------------
// PlanCudnnConvolution alone.

std::unique_ptr<Module> g_planned;  // keeps the instruction PlanOf plans alive

StatusOr<cuda::CudnnConvolutionPlan> PlanOf(const std::string& text) {
  g_planned = testing::ParseHloOrFail(text);
  if (g_planned == nullptr) return InvalidArgument("does not parse");
  return cuda::PlanCudnnConvolution(*g_planned->entry()->root());
}

TEST(CudnnPlanning, NchwIsDescribedAsItLies) {
  StatusOr<cuda::CudnnConvolutionPlan> plan = PlanOf(ConvolutionModule(
      "f32[2,3,9,8]", "f32[6,3,3,2]", "f32[2,6,4,8]",
      "window={size=3x2 stride=2x1 pad=0_0x1_1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->data_type, cuda::CUDNN_DATA_FLOAT);
  EXPECT_EQ(plan->input_dims, (std::vector<int>{2, 3, 9, 8}));
  EXPECT_EQ(plan->input_strides, (std::vector<int>{216, 72, 8, 1}));
  EXPECT_EQ(plan->filter_dims, (std::vector<int>{6, 3, 3, 2}));
  EXPECT_EQ(plan->filter_format, cuda::CUDNN_TENSOR_NCHW);
  EXPECT_EQ(plan->output_strides, (std::vector<int>{192, 32, 8, 1}));
  EXPECT_EQ(plan->padding, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan->strides, (std::vector<int>{2, 1}));
  EXPECT_EQ(plan->dilations, (std::vector<int>{1, 2}));
  EXPECT_EQ(plan->mode, cuda::CUDNN_CROSS_CORRELATION);
  EXPECT_EQ(plan->groups, 1);
  EXPECT_EQ(plan->math, cuda::CUDNN_FMA_MATH) << "f32 stays f32 (no TF32)";
}

TEST(CudnnPlanning, NhwcIsDescribedInCudnnsOrderWithItsStrides) {
  StatusOr<cuda::CudnnConvolutionPlan> plan =
      PlanOf(ConvolutionModule("f16[2,5,5,4]", "f16[6,3,3,2]", "f16[2,5,5,6]",
                               "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_o01i->b01f, "
                               "feature_group_count=2"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->data_type, cuda::CUDNN_DATA_HALF);
  EXPECT_EQ(plan->input_dims, (std::vector<int>{2, 4, 5, 5}));
  EXPECT_EQ(plan->input_strides, (std::vector<int>{100, 1, 20, 4}));
  EXPECT_EQ(plan->filter_dims, (std::vector<int>{6, 2, 3, 3}));
  EXPECT_EQ(plan->filter_format, cuda::CUDNN_TENSOR_NHWC);
  EXPECT_EQ(plan->mode, cuda::CUDNN_CONVOLUTION) << "a window reversed along every dimension";
  EXPECT_EQ(plan->groups, 2);
  EXPECT_EQ(plan->math, cuda::CUDNN_DEFAULT_MATH);
}

TEST(CudnnPlanning, WhatCudnnDoesNotTakeIsRefusedWithAReason) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {ConvolutionModule("f32[1,5,5,3]", "f32[3,3,3,4]", "f32[1,3,3,4]",
                         "window={size=3x3}, dim_labels=b01f_01io->b01f"),
       "filter"},  // JAX's HWIO
      {ConvolutionModule("f32[1,3,5,5]", "f32[4,3,3,3]", "f32[1,4,11,11]",
                         "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01"),
       "base"},
      {ConvolutionModule("f32[1,3,6,6]", "f32[4,3,2,2]", "f32[1,4,6,6]",
                         "window={size=2x2 pad=0_1x0_1}, dim_labels=bf01_oi01->bf01"),
       "asymmetric"},
      {ConvolutionModule("f32[4,3,5,5]", "f32[4,3,2,2]", "f32[2,4,4,4]",
                         "window={size=2x2}, dim_labels=bf01_oi01->bf01, batch_group_count=2"),
       "batch groups"},
      {ConvolutionModule("f32[2,3,9]", "f32[4,3,3]", "f32[2,4,7]",
                         "window={size=3}, dim_labels=bf0_oi0->bf0"),
       "2 or 3"},
      {ConvolutionModule("s32[1,3,5,5]", "s32[4,3,3,3]", "s32[1,4,3,3]",
                         "window={size=3x3}, dim_labels=bf01_oi01->bf01"),
       "f32, f16 or bf16"},
      {ConvolutionModule("bf16[1,3,5,5]", "bf16[4,3,3,3]", "f32[1,4,3,3]",
                         "window={size=3x3}, dim_labels=bf01_oi01->bf01"),
       "mixed"},
      {ConvolutionModule("f32[1,3,5,5]", "f32[4,3,3,3]", "f32[1,4,3,3]",
                         "window={size=3x3 rhs_reversal=1x0}, dim_labels=bf01_oi01->bf01"),
       "reversed"},
  };
  for (const auto& [text, reason] : refused) {
    StatusOr<cuda::CudnnConvolutionPlan> plan = PlanOf(text);
    ASSERT_FALSE(plan.ok()) << "planned " << plan->ToString() << " for\n" << text;
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find(reason), std::string::npos) << plan.status().ToString();
  }
}

// ---------------------------------------------------------------------------
// The fake driver and the fake cuDNN.

// The fake cuDNN's test hooks, from the library the backend loaded.
struct CudnnHooks {
  cuda::fake::ForwardCountHook forward_count = nullptr;
  cuda::fake::ForwardHook forward = nullptr;
  cuda::fake::FailNextHook fail_next = nullptr;
  cuda::fake::LiveCountHook live_handles = nullptr;
  cuda::fake::LiveCountHook live_descriptors = nullptr;
  cuda::fake::CallCountHook calls = nullptr;
  cuda::fake::FailNextSearchHook fail_next_search = nullptr;
};

CudnnHooks LoadCudnnHooks() {
  void* cudnn = testing::OpenLibraryNamedBy("KILN_CUDNN_LIBRARY");
  CudnnHooks hooks;
  hooks.forward_count =
      testing::FindHook<cuda::fake::ForwardCountHook>(cudnn, "kiln_fake_cudnn_forward_count");
  hooks.forward = testing::FindHook<cuda::fake::ForwardHook>(cudnn, "kiln_fake_cudnn_forward");
  hooks.fail_next = testing::FindHook<cuda::fake::FailNextHook>(cudnn, "kiln_fake_cudnn_fail_next");
  hooks.live_handles = testing::FindHook<cuda::fake::LiveCountHook>(cudnn, "kiln_fake_cudnn_live_handles");
  hooks.live_descriptors =
      testing::FindHook<cuda::fake::LiveCountHook>(cudnn, "kiln_fake_cudnn_live_descriptors");
  hooks.calls = testing::FindHook<cuda::fake::CallCountHook>(cudnn, "kiln_fake_cudnn_calls");
  hooks.fail_next_search =
      testing::FindHook<cuda::fake::FailNextSearchHook>(cudnn, "kiln_fake_cudnn_fail_next_search");
  return hooks;
}

class CudaConvolutionTest : public testing::FakeDriverBackendTest {
 protected:
  void SetUp() override {
    FakeDriverBackendTest::SetUp();
    if (HasFatalFailure()) return;
    hooks_ = LoadCudnnHooks();
  }

  // A convolution that must run as Kiln's kernel: one launch, no cuDNN call.
  void ExpectKernel(const std::string& text) {
    std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
    ASSERT_NE(module, nullptr);
    ExpectOneKernel(text, ArgumentsOf(*module), hooks_.forward_count, "cuDNN");
  }

  CudnnHooks hooks_;
};

class CudnnConvolution : public CudaConvolutionTest {
 protected:
  void SetUp() override {
    CudaConvolutionTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_NE(hooks_.forward_count, nullptr) << "KILN_CUDNN_LIBRARY is not the fake cuDNN";
    ASSERT_NE(hooks_.forward, nullptr);
    ASSERT_NE(hooks_.fail_next, nullptr);
    ASSERT_NE(hooks_.live_handles, nullptr);
    ASSERT_NE(hooks_.live_descriptors, nullptr);
    ASSERT_NE(hooks_.calls, nullptr);
    ASSERT_NE(hooks_.fail_next_search, nullptr);
  }

  // The fake's calls so far, per cuda::fake::FakeCudnnCounter.
  using Counts = std::array<int, cuda::fake::kFakeCudnnCounters>;
  Counts CallCounts() const {
    Counts counts{};
    for (size_t i = 0; i < counts.size(); ++i) counts[i] = hooks_.calls(static_cast<int>(i));
    return counts;
  }
  static Counts Growth(const Counts& from, const Counts& to) {
    Counts growth{};
    for (size_t i = 0; i < growth.size(); ++i) growth[i] = to[i] - from[i];
    return growth;
  }

  // What running one compiled program several times made the fake do.
  struct RepeatedRuns {
    Counts first{};                            // the calls of the first run
    Counts later{};                            // those of every later run together
    std::vector<FakeConvolutionCall> forward;  // every forward call, in order
  };

  // Compiles `text` once and runs it `runs` times on the same arguments,
  // from `threads` threads at once (each `runs` times; the first run is then
  // the first round), each run through cuDNN alone and matching the
  // interpreter. Destroys the executable before it returns and expects its
  // descriptors gone with it.
  RepeatedRuns RunCompiledOnce(const std::string& text, int runs, int threads = 1) {
    RepeatedRuns seen;
    std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
    if (module == nullptr) return seen;
    const std::vector<Literal> arguments = ArgumentsOf(*module);
    StatusOr<Literal> expected = testing::Execute(*interpreter_, *module, arguments);
    EXPECT_TRUE(expected.ok()) << expected.status().ToString();
    StatusOr<std::unique_ptr<Executable>> executable = cuda_->Compile(*module, CompileOptions{});
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    if (!expected.ok() || !executable.ok()) return seen;
    std::vector<std::unique_ptr<DeviceBuffer>> owned;
    std::vector<DeviceBuffer*> buffers;
    for (const Literal& argument : arguments) {
      StatusOr<std::unique_ptr<DeviceBuffer>> buffer =
          cuda_->BufferFromLiteral(argument, cuda_->devices()[0]);
      EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
      if (!buffer.ok()) return seen;
      buffers.push_back(buffer->get());
      owned.push_back(std::move(buffer).value());
    }
    auto run_once = [&]() {
      StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results = (*executable)->Execute(buffers, {});
      EXPECT_TRUE(results.ok()) << results.status().ToString();
      if (!results.ok() || results->size() != 1) return;
      StatusOr<Literal> got = (*results)[0]->ToLiteral();
      EXPECT_TRUE(got.ok() && *got == *expected) << text;
    };
    auto run_round = [&]() {
      std::vector<std::thread> running;
      for (int t = 1; t < threads; ++t) running.emplace_back(run_once);
      run_once();
      for (std::thread& thread : running) thread.join();
    };
    const int first_forward = hooks_.forward_count();
    const int launches = launch_count_();
    const Counts before = CallCounts();
    run_round();
    const Counts after_first = CallCounts();
    for (int run = 1; run < runs; ++run) run_round();
    seen.first = Growth(before, after_first);
    seen.later = Growth(after_first, CallCounts());
    for (int i = first_forward; i < hooks_.forward_count(); ++i) {
      FakeConvolutionCall call;
      EXPECT_EQ(hooks_.forward(i, &call), 1);
      seen.forward.push_back(call);
    }
    EXPECT_EQ(launch_count_(), launches) << "a kernel ran:\n" << text;
    EXPECT_GT(hooks_.live_descriptors(), 0) << "the executable keeps its descriptors";
    executable->reset();
    EXPECT_EQ(hooks_.live_descriptors(), 0) << "descriptors outlived the executable";
    return seen;
  }

  // Runs `text` on cuda (through one cuDNN call and no kernel) and on the
  // interpreter, expects equal results, and returns the call.
  FakeConvolutionCall ExpectCudnn(const std::string& text) {
    FakeConvolutionCall call;
    std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
    if (module == nullptr) return call;
    const int index = ExpectOneLibraryCall(text, ArgumentsOf(*module), hooks_.forward_count, "cuDNN");
    if (index < 0) return call;
    EXPECT_EQ(hooks_.forward(index, &call), 1);
    EXPECT_EQ(hooks_.live_descriptors(), 0) << "descriptors outlived the call";
    return call;
  }
};

TEST_F(CudnnConvolution, TheDeviceSaysConvolutionsRunThroughCudnn) {
  EXPECT_NE(Description().find("convolution: cudnn 9.1.0"), std::string::npos) << Description();
}

TEST_F(CudnnConvolution, NchwWithStridesPaddingAndDilationMatchesTheInterpreter) {
  const FakeConvolutionCall call = ExpectCudnn(ConvolutionModule(
      "f32[2,3,9,8]", "f32[6,3,3,2]", "f32[2,6,4,8]",
      "window={size=3x2 stride=2x1 pad=0_0x1_1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01"));
  EXPECT_EQ(call.rank, 4);
  EXPECT_EQ(call.data_type, cuda::CUDNN_DATA_FLOAT);
  EXPECT_EQ(call.filter_format, cuda::CUDNN_TENSOR_NCHW);
  EXPECT_EQ(call.input_strides[1], 72);
  EXPECT_EQ(call.padding[1], 1);
  EXPECT_EQ(call.strides[0], 2);
  EXPECT_EQ(call.dilations[1], 2);
  EXPECT_EQ(call.compute_type, cuda::CUDNN_DATA_FLOAT);
  EXPECT_EQ(call.math, cuda::CUDNN_FMA_MATH);
  EXPECT_GE(call.workspace_bytes, 4096u) << "the workspace cuDNN asked for";
  EXPECT_NE(call.stream, nullptr) << "cuDNN ran on the execution's stream";
}

TEST_F(CudnnConvolution, NhwcGroupedReversedAndLowPrecisionMatchTheInterpreter) {
  const FakeConvolutionCall grouped = ExpectCudnn(
      ConvolutionModule("f32[2,5,5,4]", "f32[6,3,3,2]", "f32[2,5,5,6]",
                        "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_o01i->b01f, "
                        "feature_group_count=2"));
  EXPECT_EQ(grouped.filter_format, cuda::CUDNN_TENSOR_NHWC);
  EXPECT_EQ(grouped.groups, 2);
  EXPECT_EQ(grouped.mode, cuda::CUDNN_CONVOLUTION);
  EXPECT_EQ(grouped.input_strides[1], 1) << "features innermost";
  for (const char* type : {"f16", "bf16"}) {
    const std::string t = type;
    const FakeConvolutionCall low = ExpectCudnn(ConvolutionModule(
        t + "[1,4,6,6]", t + "[2,4,3,3]", t + "[1,2,4,4]", "window={size=3x3}, dim_labels=bf01_oi01->bf01"));
    EXPECT_EQ(low.data_type, t == "f16" ? cuda::CUDNN_DATA_HALF : cuda::CUDNN_DATA_BFLOAT16);
    EXPECT_EQ(low.compute_type, cuda::CUDNN_DATA_FLOAT) << "sums in f32";
  }
  const FakeConvolutionCall three =
      ExpectCudnn(ConvolutionModule("f32[1,2,4,5,3]", "f32[3,2,2,3,2]", "f32[1,3,3,3,2]",
                                    "window={size=2x3x2}, dim_labels=bf012_oi012->bf012"));
  EXPECT_EQ(three.rank, 5);
}

TEST_F(CudnnConvolution, WhatCudnnDoesNotTakeRunsAsKilnsKernel) {
  // JAX's NHWC input with an HWIO filter.
  ExpectKernel(ConvolutionModule("f32[1,5,5,3]", "f32[3,3,3,4]", "f32[1,3,3,4]",
                                 "window={size=3x3}, dim_labels=b01f_01io->b01f"));
}

TEST_F(CudnnConvolution, ACudnnFailureIsAnErrorNamingTheCallAndCudnnsWords) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(ConvolutionModule(
      "f32[1,3,5,5]", "f32[4,3,3,3]", "f32[1,4,3,3]", "window={size=3x3}, dim_labels=bf01_oi01->bf01"));
  ASSERT_NE(module, nullptr);
  hooks_.fail_next(5000);  // cuDNN 9's CUDNN_STATUS_EXECUTION_FAILED
  StatusOr<Literal> result = testing::Execute(*cuda_, *module, ArgumentsOf(*module));
  ASSERT_FALSE(result.ok()) << "the failed cuDNN call went unnoticed";
  EXPECT_EQ(result.status().code(), StatusCode::kInternal);
  for (const char* part :
       {"cudnnConvolutionForward", "CUDNN_STATUS_EXECUTION_FAILED", "5000", "input [1,3,5,5]"})
    EXPECT_NE(result.status().message().find(part), std::string::npos) << result.status().ToString();
  EXPECT_EQ(hooks_.live_descriptors(), 0) << "descriptors leaked on the error";
  // The next execution is unaffected.
  ExpectCudnn(ConvolutionModule("f32[1,3,5,5]", "f32[4,3,3,3]", "f32[1,4,3,3]",
                                "window={size=3x3}, dim_labels=bf01_oi01->bf01"));
}

TEST_F(CudnnConvolution, HandlesArePooledAndDestroyedWithTheBackend) {
  const int base = hooks_.live_handles();
  for (int i = 0; i < 3; ++i)
    ExpectCudnn(ConvolutionModule("f32[1,3,5,5]", "f32[4,3,3,3]", "f32[1,4,3,3]",
                                  "window={size=3x3}, dim_labels=bf01_oi01->bf01"));
  EXPECT_EQ(hooks_.live_handles(), base + 1) << "sequential executions should share one handle";
  cuda_.reset();
  EXPECT_EQ(hooks_.live_handles(), base) << "cuDNN handles outlived the backend";
}

const std::string kSmallNchwConvolution = ConvolutionModule("f32[1,3,5,5]", "f32[4,3,3,3]", "f32[1,4,3,3]",
                                                            "window={size=3x3}, dim_labels=bf01_oi01->bf01");

// The first run sets the convolution up (four descriptors, one timed
// search of its algorithms); later runs only call cudnnConvolutionForward,
// with the same algorithm and the same workspace.
TEST_F(CudnnConvolution, RepeatedExecutionsSetTheConvolutionUpOnce) {
  const RepeatedRuns seen = RunCompiledOnce(kSmallNchwConvolution, 4);
  EXPECT_EQ(seen.first[kFakeDescriptorsCreated], 4) << "two tensors, a filter and a convolution";
  EXPECT_EQ(seen.first[kFakeAlgorithmSearches], 1);
  EXPECT_EQ(seen.first[kFakeHeuristicQueries], 0) << "the timed search found an algorithm";
  EXPECT_EQ(seen.later, Counts{}) << "a later run set something up again (counts per FakeCudnnCounter)";
  ASSERT_EQ(seen.forward.size(), 4u);
  for (const FakeConvolutionCall& call : seen.forward) {
    EXPECT_EQ(call.algo, seen.forward[0].algo);
    EXPECT_EQ(call.workspace, seen.forward[0].workspace) << "a run took a workspace of its own";
  }
}

// The fake's FFT algorithm is the fastest but needs 16 GiB of workspace,
// its heuristics propose it first, and its timed search does not sort its
// answers: the algorithm run is the fastest timed within the limit.
TEST_F(CudnnConvolution, TheFastestAlgorithmWithinTheWorkspaceLimitIsChosen) {
  static_assert(cuda::kCudnnWorkspaceLimitBytes <
                static_cast<int64_t>(cuda::fake::kFakeBeyondLimitWorkspace));
  const RepeatedRuns seen = RunCompiledOnce(kSmallNchwConvolution, 1);
  ASSERT_EQ(seen.forward.size(), 1u);
  EXPECT_EQ(seen.forward[0].algo, cuda::fake::kFakeFastestAlgorithmWithinLimit);
  EXPECT_GE(seen.forward[0].workspace_bytes, cuda::fake::kFakeFastestAlgorithmWorkspace);
  EXPECT_NE(seen.forward[0].workspace, nullptr);
}

TEST_F(CudnnConvolution, AFailedSearchFallsBackToTheHeuristicsFirstAlgorithmWithinTheLimit) {
  hooks_.fail_next_search(3000);  // cuDNN 9's CUDNN_STATUS_NOT_SUPPORTED
  const RepeatedRuns seen = RunCompiledOnce(kSmallNchwConvolution, 3);
  EXPECT_EQ(seen.first[kFakeAlgorithmSearches], 1);
  EXPECT_EQ(seen.first[kFakeHeuristicQueries], 1);
  EXPECT_EQ(seen.later, Counts{}) << "the heuristics' choice was not kept";
  ASSERT_EQ(seen.forward.size(), 3u);
  for (const FakeConvolutionCall& call : seen.forward) {
    EXPECT_EQ(call.algo, cuda::fake::kFakeFirstHeuristicWithinLimit)
        << "the first proposed, FFT, needs 16 GiB";
    EXPECT_GE(call.workspace_bytes, cuda::fake::kFakeFirstHeuristicWorkspace);
  }
}

TEST_F(CudnnConvolution, AnExecutionsConvolutionsShareOneWorkspace) {
  const std::string text =
      "HloModule two\nENTRY main {\n  x = f32[1,3,5,5] parameter(0)\n  w = f32[3,3,3,3] parameter(1)\n"
      "  a = f32[1,3,5,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
      "  ROOT b = f32[1,3,5,5] convolution(a, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n"
      "}\n";
  const RepeatedRuns seen = RunCompiledOnce(text, 2);
  EXPECT_EQ(seen.first[kFakeDescriptorsCreated], 8) << "four per convolution";
  EXPECT_EQ(seen.first[kFakeAlgorithmSearches], 2);
  EXPECT_EQ(seen.later, Counts{});
  ASSERT_EQ(seen.forward.size(), 4u);
  for (const FakeConvolutionCall& call : seen.forward)
    EXPECT_EQ(call.workspace, seen.forward[0].workspace) << "a convolution took a workspace of its own";
}

// Executions racing to run a new executable set its convolution up once.
TEST_F(CudnnConvolution, ConcurrentExecutionsSetTheConvolutionUpOnce) {
  const RepeatedRuns seen = RunCompiledOnce(kSmallNchwConvolution, 3, /*threads=*/4);
  EXPECT_EQ(seen.first[kFakeDescriptorsCreated], 4);
  EXPECT_EQ(seen.first[kFakeAlgorithmSearches], 1);
  EXPECT_EQ(seen.later, Counts{});
  ASSERT_EQ(seen.forward.size(), 12u);
  for (const FakeConvolutionCall& call : seen.forward)
    EXPECT_EQ(call.algo, cuda::fake::kFakeFastestAlgorithmWithinLimit);
}

// The padded-tap cases (padded_convolution_cases.h) cuDNN takes (2-D,
// filter arranged as the input, symmetric padding): cuDNN multiplies the
// padding's zeros by the weights, as the fake does, so an infinite or NaN
// weight at a tap in the padding gives NaN there, as on the interpreter.
TEST_F(CudnnConvolution, PaddedTapsMultiplyThePaddingsZeros) {
  int taken = 0;
  for (const testing::PaddedTapCase& c : testing::PaddedTapCases()) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Module> module = testing::ParsePaddedTapModule(c);
    ASSERT_NE(module, nullptr);
    if (!cuda::PlanCudnnConvolution(*module->entry()->root()).ok()) continue;
    ++taken;
    const std::vector<Literal> arguments = testing::PaddedTapArguments(c, *module);
    KILN_ASSERT_OK_AND_ASSIGN(Literal want, testing::Execute(*interpreter_, *module, arguments));
    const int launches = launch_count_();
    const int calls = hooks_.forward_count();
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::Execute(*cuda_, *module, arguments));
    EXPECT_EQ(hooks_.forward_count(), calls + 1) << "not one cuDNN call";
    EXPECT_EQ(launch_count_(), launches) << "a kernel ran";
    EXPECT_TRUE(testing::MatchesPaddedTapCase(c, *module, got, want));
  }
  EXPECT_GE(taken, 4);
}

// ---------------------------------------------------------------------------
// Without cuDNN, or told not to use it: Kiln's kernels, and the device says
// why.

using ForcedKernelConvolution = CudaConvolutionTest;
using MissingCudnn = CudaConvolutionTest;

const char kNchwConvolution[] =
    "HloModule conv\nENTRY main {\n  x = f32[1,3,5,5] parameter(0)\n  w = f32[4,3,3,3] parameter(1)\n"
    "  ROOT c = f32[1,4,3,3] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01\n}\n";

TEST_F(ForcedKernelConvolution, ConvolutionsRunAsKernels) {
  EXPECT_NE(Description().find("convolution: kiln kernels (KILN_CUDA_CONVOLUTION=kernel)"), std::string::npos)
      << Description();
  ASSERT_NE(hooks_.forward_count, nullptr) << "KILN_CUDNN_LIBRARY is not the fake cuDNN";
  ExpectKernel(kNchwConvolution);
  EXPECT_EQ(hooks_.forward_count(), 0);
}

TEST_F(MissingCudnn, ConvolutionsRunAsKernelsAndTheDeviceSaysWhy) {
  for (const char* part : {"convolution: kiln kernels (cuDNN not loaded: ",
                           "KILN_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9", "No such file"})
    EXPECT_NE(Description().find(part), std::string::npos) << Description();
  ExpectKernel(kNchwConvolution);
}

TEST(RequiredCudnnMissing, BackendIsUnavailableSayingWhy) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "KILN_CUDA_CONVOLUTION=cudnn made a backend without cuDNN";
  EXPECT_EQ(backend.status().code(), StatusCode::kUnavailable) << backend.status().ToString();
  for (const char* part : {"KILN_CUDA_CONVOLUTION=cudnn", "/nonexistent/libcudnn.so.9"})
    EXPECT_NE(backend.status().message().find(part), std::string::npos) << backend.status().ToString();
}

TEST(BadConvolutionSetting, BackendCreationIsAnInvalidArgumentNamingTheValue) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "KILN_CUDA_CONVOLUTION=fast was accepted";
  EXPECT_EQ(backend.status().code(), StatusCode::kInvalidArgument) << backend.status().ToString();
  EXPECT_NE(backend.status().message().find("'fast'"), std::string::npos) << backend.status().ToString();
}

}  // namespace
}  // namespace kiln
