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

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
