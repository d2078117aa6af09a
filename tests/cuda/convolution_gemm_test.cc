// The CUDA backend's implicit-GEMM convolution (convolution_gemm_emitter.h):
// its plan (what takes the GEMM, what keeps the elemental path), and its
// kernel's own IR run on this host (host_kernel_harness.h, every block's
// 256 threads as fibers meeting at the barriers) against the interpreter,
// over shapes that are not multiples of the tiles, every window feature,
// groups and layouts. The sum runs in another order than the
// interpreter's, so the results agree within a bound on f32 rounding that
// grows with K (and one rounding of a low-precision output).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/convolution_gemm_emitter.h"
#include "core/hlo_parser.h"
#include "tests/cuda/host_kernel_harness.h"
#include "tests/cuda/single_instruction_modules.h"
#include "tests/unit/padded_convolution_cases.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using cuda::ConvolutionGemmPlan;
using testing::ConvolutionModule;

StatusOr<ConvolutionGemmPlan> PlanOf(const std::string& text) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(text));
  return cuda::PlanConvolutionGemmKernel(*module->entry());
}

TEST(ConvolutionGemmPlan, NhwcConvolutionIsBatchTimesPositionsByFeaturesByWindowTimesInputs) {
  KILN_ASSERT_OK_AND_ASSIGN(
      ConvolutionGemmPlan plan,
      PlanOf(ConvolutionModule("f32[2,7,9,3]", "f32[3,3,3,5]", "f32[2,7,9,5]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")));
  EXPECT_EQ(plan.groups, 1);
  EXPECT_EQ(plan.m, 2 * 7 * 9);
  EXPECT_EQ(plan.n, 5);
  EXPECT_EQ(plan.k, 3 * 3 * 3);
  EXPECT_EQ(plan.input_batch_stride, 7 * 9 * 3);
  EXPECT_EQ(plan.input_feature_stride, 1);
  EXPECT_EQ(plan.kernel_input_feature_stride, 5);
  EXPECT_EQ(plan.kernel_output_feature_stride, 1);
  ASSERT_EQ(plan.spatial.size(), 2u);
  EXPECT_EQ(plan.spatial[0].input_stride, 9 * 3);
  EXPECT_EQ(plan.spatial[1].kernel_stride, 3 * 5);
  EXPECT_EQ(plan.spatial[1].output_stride, 5);
  EXPECT_EQ(plan.blocks(), 2);  // 126 rows: two tiles of 64; 5 columns: one
  EXPECT_TRUE(plan.stage_input_along_k) << "features are the input's contiguous dimension";
  EXPECT_FALSE(plan.window_minor_depth);
  EXPECT_FALSE(plan.stage_filter_along_k) << "HWIO: output features are the filter's contiguous dimension";
  KILN_ASSERT_OK_AND_ASSIGN(
      ConvolutionGemmPlan nchw,
      PlanOf(ConvolutionModule("f32[2,3,11,10]", "f32[6,3,3,3]", "f32[2,6,5,4]",
                               "window={size=3x3 stride=2x2}, dim_labels=bf01_oi01->bf01")));
  EXPECT_FALSE(nchw.stage_input_along_k) << "output positions are the input's contiguous dimension";
  EXPECT_TRUE(nchw.window_minor_depth) << "OIHW is contiguous along k with window positions fastest";
  EXPECT_TRUE(nchw.stage_filter_along_k);
}

TEST(ConvolutionGemmPlan, GroupsSplitFeaturesOrBatch) {
  KILN_ASSERT_OK_AND_ASSIGN(
      ConvolutionGemmPlan grouped,
      PlanOf(ConvolutionModule("f32[1,6,6,6]", "f32[3,3,2,9]", "f32[1,4,4,9]",
                               "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3")));
  EXPECT_EQ(grouped.groups, 3);
  EXPECT_EQ(grouped.n, 3);
  EXPECT_EQ(grouped.k, 2 * 9);
  EXPECT_EQ(grouped.input_group_stride, 2) << "the next group's first input feature";
  KILN_ASSERT_OK_AND_ASSIGN(
      ConvolutionGemmPlan batched,
      PlanOf(ConvolutionModule("f32[4,5,5,3]", "f32[2,2,3,4]", "f32[2,4,4,4]",
                               "window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2")));
  EXPECT_EQ(batched.groups, 2);
  EXPECT_EQ(batched.n, 2);
  EXPECT_EQ(batched.m, 2 * 4 * 4);
  EXPECT_EQ(batched.input_group_stride, 2 * 5 * 5 * 3) << "the next group's first batch";
}

TEST(ConvolutionGemmPlan, OtherTypesAndFusedOperandsKeepTheElementalPath) {
  for (const char* type : {"s32", "f64", "s8"}) {
    const std::string t = type;
    const StatusOr<ConvolutionGemmPlan> plan = PlanOf(ConvolutionModule(
        t + "[1,4,4,2]", t + "[3,3,2,2]", t + "[1,2,2,2]", "window={size=3x3}, dim_labels=b01f_01io->b01f"));
    EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented) << type;
  }
  const StatusOr<ConvolutionGemmPlan> empty = PlanOf(ConvolutionModule(
      "f32[0,4,4,2]", "f32[3,3,2,2]", "f32[0,2,2,2]", "window={size=3x3}, dim_labels=b01f_01io->b01f"));
  EXPECT_EQ(empty.status().code(), StatusCode::kUnimplemented);
  const StatusOr<ConvolutionGemmPlan> fused = PlanOf(R"(HloModule conv
ENTRY main {
  x = f32[1,4,4,2] parameter(0)
  w = f32[3,3,2,2] parameter(1)
  n = f32[1,4,4,2] negate(x)
  ROOT c = f32[1,2,2,2] convolution(n, w), window={size=3x3}, dim_labels=b01f_01io->b01f
})");
  EXPECT_EQ(fused.status().code(), StatusCode::kUnimplemented);
}

// Uniform values in [-1, 1) of `shape`'s type (rounded to it).
Literal RandomLiteral(const Shape& shape, std::mt19937& random) {
  Literal values(Shape(ElementType::kF32, shape.dimensions()));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& value : values.data<float>()) value = uniform(random);
  if (shape.element_type() == ElementType::kF32) return values;
  StatusOr<Literal> converted = values.Convert(shape.element_type());
  EXPECT_TRUE(converted.ok()) << converted.status().ToString();
  return std::move(converted).value();
}

// Runs `kernel` (a convolution of its parameters) as the implicit-GEMM
// kernel of `plan` on the host on `inputs`, into `got`.
void RunGemmOnHost(const Computation& kernel, const ConvolutionGemmPlan& plan, std::vector<Literal>& inputs,
                   Literal& got) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto ir = std::make_unique<llvm::Module>("convolution_host", *context);
  KILN_ASSERT_OK_AND_ASSIGN(cuda::PtxKernel emitted,
                            cuda::EmitConvolutionGemmKernel(*ir, kernel, plan, "conv"));
  EXPECT_EQ(emitted.parallel_extent, plan.blocks() * cuda::kConvolutionThreads);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<cuda_test::HostKernels> host,
                            cuda_test::HostKernels::Compile(std::move(context), std::move(ir), {"conv"}));
  // The output poisoned with NaN bytes, so an element no thread writes shows.
  got = Literal(kernel.root()->shape);
  std::memset(got.raw().data(), 0xFF, got.raw().size());
  std::vector<uint64_t> arguments;
  for (Literal& input : inputs) arguments.push_back(reinterpret_cast<uint64_t>(input.raw().data()));
  arguments.push_back(reinterpret_cast<uint64_t>(got.raw().data()));
  arguments.push_back(static_cast<uint64_t>(emitted.parallel_extent));
  ASSERT_EQ(arguments.size(), static_cast<size_t>(emitted.buffer_count) + 1);
  for (int64_t block = 0; block < plan.blocks(); ++block) {
    KILN_ASSERT_OK(host->RunBlock("conv", arguments, block, static_cast<int>(cuda::kConvolutionThreads),
                                  cuda_test::BlockThreads::kTogether));
  }
}

// Runs the convolution module `text` as the implicit-GEMM kernel on the
// host on random inputs and compares with the interpreter.
void ExpectInterpretersResults(const std::string& text, uint32_t seed = 1) {
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  const Computation& kernel = *module->entry();
  KILN_ASSERT_OK_AND_ASSIGN(ConvolutionGemmPlan plan, cuda::PlanConvolutionGemmKernel(kernel));
  std::mt19937 random(seed);
  std::vector<Literal> inputs;
  for (const Instruction* parameter : kernel.parameters())
    inputs.push_back(RandomLiteral(parameter->shape, random));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected,
                            testing::ExecuteLeaves(*interpreter, *module, inputs));
  ASSERT_EQ(expected.size(), 1u);
  Literal got;
  RunGemmOnHost(kernel, plan, inputs, got);
  if (::testing::Test::HasFatalFailure()) return;
  const Shape& result_shape = kernel.root()->shape;
  // |a| and |w| are below 1: a sum of K products rounded in any order is
  // within K * K * 2^-24 of the exact one, and a low-precision output adds
  // one rounding (half an ulp of its type, relative).
  const double sum_error = static_cast<double>(plan.k) * static_cast<double>(plan.k) * std::ldexp(1.0, -24);
  const int mantissa = result_shape.element_type() == ElementType::kF16    ? 11
                       : result_shape.element_type() == ElementType::kBF16 ? 8
                                                                           : 24;
  int64_t wrong = 0;
  std::string first_wrong;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const double want = expected[0].GetAsDouble(i);
    const double have = got.GetAsDouble(i);
    const double tolerance = 2 * sum_error + std::abs(want) * std::ldexp(1.0, -mantissa + 1);
    if (!(std::abs(have - want) <= tolerance)) {
      if (wrong++ == 0)
        first_wrong = "element " + std::to_string(i) + ": " + std::to_string(have) +
                      " where the interpreter has " + std::to_string(want);
    }
  }
  EXPECT_EQ(wrong, 0) << wrong << " of " << got.element_count() << " outputs differ; " << first_wrong;
}

TEST(ConvolutionGemmOnHost, NhwcSamePaddingOverPartialTiles) {
  // 126 rows (a full and a partial tile), 5 columns, K = 27 (three steps
  // and a partial one).
  ExpectInterpretersResults(ConvolutionModule("f32[2,7,9,3]", "f32[3,3,3,5]", "f32[2,7,9,5]",
                                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
}

TEST(ConvolutionGemmOnHost, ManyFeaturesTakeSeveralTilesEachWay) {
  // M = 81, N = 70, K = 180: two tiles along each of M and N.
  ExpectInterpretersResults(ConvolutionModule("f32[1,9,9,20]", "f32[3,3,20,70]", "f32[1,9,9,70]",
                                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
}

TEST(ConvolutionGemmOnHost, NchwStridedValid) {
  ExpectInterpretersResults(ConvolutionModule("f32[2,3,11,10]", "f32[6,3,3,3]", "f32[2,6,5,4]",
                                              "window={size=3x3 stride=2x2}, dim_labels=bf01_oi01->bf01"));
}

TEST(ConvolutionGemmOnHost, UnusualLayoutsOfEveryOperand) {
  // Features first and batch last in the input, output features in the
  // middle of the output, the filter's spatial dimensions between its
  // feature dimensions.
  ExpectInterpretersResults(ConvolutionModule("f32[4,8,7,3]", "f32[5,3,2,4]", "f32[6,5,6,3]",
                                              "window={size=3x2}, dim_labels=f01b_o01i->0f1b"));
}

TEST(ConvolutionGemmOnHost, WindowDilationAndNegativePadding) {
  // Along the first dimension: (13 - 1 + 2 - 5) + 1 = 10; the second:
  // (9 - 1 - 3) / 2 + 1 = 3.
  ExpectInterpretersResults(ConvolutionModule(
      "f32[2,13,9,3]", "f32[3,2,3,4]", "f32[2,10,3,4]",
      "window={size=3x2 stride=1x2 pad=-1_2x0_-1 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f"));
}

TEST(ConvolutionGemmOnHost, BaseDilationAsATransposedConvolution) {
  // 5 inputs dilated to 9, padded by 2 each side: 13 - 3 + 1 = 11 outputs.
  ExpectInterpretersResults(
      ConvolutionModule("f32[2,5,5,3]", "f32[3,3,3,4]", "f32[2,11,11,4]",
                        "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f"));
}

TEST(ConvolutionGemmOnHost, WindowReversal) {
  ExpectInterpretersResults(
      ConvolutionModule("f32[1,6,7,2]", "f32[3,2,2,3]", "f32[1,6,6,3]",
                        "window={size=3x2 pad=1_1x0_0 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f"));
}

TEST(ConvolutionGemmOnHost, FeatureGroupsAndDepthwise) {
  ExpectInterpretersResults(
      ConvolutionModule("f32[2,6,6,6]", "f32[3,3,2,9]", "f32[2,4,4,9]",
                        "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3"));
  // Depthwise with a multiplier of 2: 5 groups of one input feature.
  ExpectInterpretersResults(
      ConvolutionModule("f32[1,7,7,5]", "f32[3,3,1,10]", "f32[1,7,7,10]",
                        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=5"));
}

TEST(ConvolutionGemmOnHost, BatchGroups) {
  ExpectInterpretersResults(
      ConvolutionModule("f32[4,5,5,3]", "f32[2,2,3,4]", "f32[2,4,4,4]",
                        "window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2"));
}

TEST(ConvolutionGemmOnHost, OneAndThreeSpatialDimensions) {
  ExpectInterpretersResults(ConvolutionModule("f32[3,17,4]", "f32[5,4,6]", "f32[3,15,6]",
                                              "window={size=5 pad=1_1}, dim_labels=b0f_0io->b0f"));
  ExpectInterpretersResults(
      ConvolutionModule("f32[2,5,6,4,3]", "f32[2,3,2,3,4]", "f32[2,4,3,3,4]",
                        "window={size=2x3x2 stride=1x2x1 pad=0_0x1_0x0_0}, dim_labels=b012f_012io->b012f"));
}

TEST(ConvolutionGemmOnHost, NoSpatialDimensionsIsAMatrixProduct) {
  ExpectInterpretersResults(
      ConvolutionModule("f32[70,13]", "f32[13,66]", "f32[70,66]", "window={}, dim_labels=bf_io->bf"));
}

TEST(ConvolutionGemmOnHost, HalfAndBfloat16SumInF32) {
  ExpectInterpretersResults(ConvolutionModule("f16[2,6,6,3]", "f16[3,3,3,4]", "f16[2,6,6,4]",
                                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ExpectInterpretersResults(ConvolutionModule("bf16[2,6,6,3]", "bf16[3,3,3,4]", "bf16[2,6,6,4]",
                                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  // preferred_element_type=f32 over bf16 operands.
  ExpectInterpretersResults(ConvolutionModule("bf16[1,5,5,8]", "bf16[3,3,8,4]", "f32[1,3,3,4]",
                                              "window={size=3x3}, dim_labels=b01f_01io->b01f"));
}

// The padded-tap cases (padded_convolution_cases.h), in one to three
// spatial dimensions, the implicit GEMM takes (f32, f16 and bf16; f64
// keeps the elemental kernels, which are codegen_padded_convolution_test.cc's
// on the cpu): its im2col tiles hold the padding's and the lhs-dilation
// holes' zeros, which multiply the weights.
TEST(ConvolutionGemmOnHost, PaddedTapsMultiplyThePaddingsZeros) {
  std::vector<testing::PaddedTapCase> cases = testing::PaddedTapCases();
  for (testing::PaddedTapCase& c : testing::PaddedTapCases3d()) cases.push_back(std::move(c));
  int taken = 0;
  for (const testing::PaddedTapCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Module> module = testing::ParsePaddedTapModule(c);
    ASSERT_NE(module, nullptr);
    const Computation& kernel = *module->entry();
    StatusOr<ConvolutionGemmPlan> plan = cuda::PlanConvolutionGemmKernel(kernel);
    if (std::string(c.type) == "f64") {
      EXPECT_FALSE(plan.ok()) << "f64 sums stay elemental";
      continue;
    }
    KILN_ASSERT_OK(plan.status());
    ++taken;
    std::vector<Literal> inputs = testing::PaddedTapArguments(c, *module);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want,
                              testing::ExecuteLeaves(*interpreter, *module, inputs));
    ASSERT_EQ(want.size(), 1u);
    Literal got;
    RunGemmOnHost(kernel, *plan, inputs, got);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    EXPECT_TRUE(testing::MatchesPaddedTapCase(c, *module, got, want[0]));
  }
  EXPECT_GE(taken, 15 + 7);  // 1-D and 2-D cases, and the seven 3-D ones
}

}  // namespace
}  // namespace kiln
