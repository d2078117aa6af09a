// Convolutions that run the library convolution shader
// (library_convolution.h) on lavapipe with the validation layers on,
// against the interpreter: NHWC and NCHW and stranger dimension numbers,
// window strides, padding (negative too), window and base dilation, window reversal, feature groups,
// one, two and three spatial dimensions (NDHWC, NCDHW), f32 and f16. Sums run in another order than the
// interpreter's, so values agree within a tolerance that grows with the
// contraction's length K.
#include <cmath>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/library_shader_test.h"

namespace kiln::vulkan {
namespace {

struct ConvolutionCase {
  const char* name;
  std::string lhs, rhs, out, attributes;
  int64_t depth;  // K: input features a group x window elements
};

void PrintTo(const ConvolutionCase& c, std::ostream* out) {
  *out << c.name << ": " << c.lhs << " x " << c.rhs << " -> " << c.out << ", " << c.attributes;
}

// Deterministic values in [-1, 1), f32 or f16 as `shape` says.
Literal SignedValues(const Shape& shape, uint32_t seed) {
  const std::vector<float> values = SignedUnitValues(shape.element_count(), seed);
  if (shape.element_type() == ElementType::kF32) return Literal::FromVector(values, shape.dimensions());
  std::vector<half> halves;
  for (float value : values) halves.push_back(half(value));
  return Literal::FromVector(halves, shape.dimensions());
}

// Runs `module` on the vulkan backend and the interpreter and compares.
void ExpectAgreement(const ConvolutionCase& c, const Module& module) {
  std::vector<Literal> arguments;
  arguments.push_back(SignedValues(module.entry()->parameters()[0]->shape, 1));
  arguments.push_back(SignedValues(module.entry()->parameters()[1]->shape, 2));
  KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves, RunOnInterpreterAndVulkan(module, arguments));
  const std::vector<Literal>& want = leaves.interpreter;
  const std::vector<Literal>& got = leaves.vulkan;
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  // Each of K products is below 1 in magnitude: a sum in another order
  // differs by some K ulps of 1 at most; f16 results round once more.
  const bool f16 = want[0].shape().element_type() == ElementType::kF16;
  const double absolute = 4e-7 * static_cast<double>(c.depth) + (f16 ? 1e-3 : 0.0);
  const double relative = f16 ? 2e-3 : 1e-5;
  int64_t wrong = 0;
  for (int64_t i = 0; i < want[0].element_count(); ++i) {
    const double expected = want[0].GetAsDouble(i), actual = got[0].GetAsDouble(i);
    if (std::fabs(actual - expected) <= absolute + relative * std::fabs(expected)) continue;
    if (wrong++ < 5) ADD_FAILURE() << c.name << ": element " << i << " is " << actual << ", not " << expected;
  }
  EXPECT_EQ(wrong, 0) << c.name << ": " << wrong << " of " << want[0].element_count() << " elements differ";
}

using VulkanLibraryConvolutionTest = LibraryShaderTest<ConvolutionCase>;

TEST_P(VulkanLibraryConvolutionTest, AgreesWithTheInterpreter) {
  const ConvolutionCase& c = GetParam();
  const std::string text = "HloModule convolution\nENTRY main {\n  a = " + c.lhs +
                           " parameter(0)\n  b = " + c.rhs + " parameter(1)\n  ROOT c = " + c.out +
                           " convolution(a, b), " + c.attributes + "\n}\n";
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));

  ForThisDeviceAndAGpu(*module, std::nullopt, text, [&] { ExpectAgreement(c, *module); });
}

std::vector<ConvolutionCase> ConvolutionCases() {
  return {
      {"nhwc_same", "f32[2,17,19,6]", "f32[3,3,6,20]", "f32[2,17,19,20]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 54},
      {"nchw_strided_dilated_grouped", "f32[3,12,23,21]", "f32[24,6,3,3]", "f32[3,24,11,10]",
       "window={size=3x3 stride=2x2 pad=2_1x2_1 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01, "
       "feature_group_count=2",
       54},
      {"nhwc_grouped", "f32[2,20,20,8]", "f32[3,3,4,16]", "f32[2,20,20,16]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2", 36},
      {"one_dimensional", "f32[4,300,3]", "f32[5,3,16]", "f32[4,300,16]",
       "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f", 15},
      {"negative_padding", "f32[1,40,40,4]", "f32[2,2,4,16]", "f32[1,37,37,16]",
       "window={size=2x2 pad=-1_-1x-1_-1}, dim_labels=b01f_01io->b01f", 16},
      {"feature_major_output", "f32[20,21,2,6]", "f32[12,3,3,6]", "f32[12,20,21,2]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=01bf_o01i->f01b", 54},
      {"long_contraction", "f32[1,16,16,96]", "f32[3,3,96,40]", "f32[1,14,14,40]",
       "window={size=3x3}, dim_labels=b01f_01io->b01f", 864},
      {"f16", "f16[2,17,19,6]", "f16[3,3,6,20]", "f16[2,17,19,20]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 54},
      // Three spatial dimensions, odd extents throughout.
      {"ndhwc_same", "f32[2,7,9,11,5]", "f32[3,3,3,5,12]", "f32[2,7,9,11,12]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f", 135},
      {"ndhwc_strided_dilated_grouped", "f32[2,9,12,10,8]", "f32[3,2,3,4,16]", "f32[2,5,12,5,16]",
       "window={size=3x2x3 stride=2x1x2 pad=2_2x1_2x1_1 rhs_dilate=2x3x1}, dim_labels=b012f_012io->b012f, "
       "feature_group_count=2",
       72},
      {"ncdhw_strided_padded", "f32[2,6,11,10,13]", "f32[10,6,3,3,3]", "f32[2,10,5,10,7]",
       "window={size=3x3x3 stride=2x1x2 pad=0_1x2_0x1_1}, dim_labels=bf012_oi012->bf012", 162},
      {"ndhwc_negative_padding", "f32[1,10,12,14,4]", "f32[2,2,2,4,8]", "f32[1,8,10,11,8]",
       "window={size=2x2x2 pad=-1_0x0_-1x-1_-1}, dim_labels=b012f_012io->b012f", 32},
      // A window of one along depth: slot 0 still moves with the output.
      {"ndhwc_flat_window", "f32[2,6,10,10,6]", "f32[1,3,3,6,8]", "f32[2,6,8,8,8]",
       "window={size=1x3x3}, dim_labels=b012f_012io->b012f", 54},
      {"spatial_major_3d", "f32[6,7,8,2,5]", "f32[12,3,3,3,5]", "f32[12,6,7,8,2]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=012bf_o012i->f012b", 135},
      {"long_contraction_3d", "f32[1,10,10,10,32]", "f32[3,3,3,32,16]", "f32[1,8,8,8,16]",
       "window={size=3x3x3}, dim_labels=b012f_012io->b012f", 864},
      // Base (lhs) dilation, as transposed convolutions have.
      {"nhwc_lhs_dilated_strided", "f32[2,9,11,6]", "f32[3,3,6,12]", "f32[2,18,16,12]",
       "window={size=3x3 stride=1x2 pad=1_2x2_1 lhs_dilate=2x3}, dim_labels=b01f_01io->b01f", 54},
      {"ndhwc_lhs_dilated_grouped", "f32[1,5,6,7,8]", "f32[3,3,3,4,16]", "f32[1,11,11,12,16]",
       "window={size=3x3x3 pad=2_2x1_1x2_1 lhs_dilate=2x2x2 rhs_dilate=1x1x2}, "
       "dim_labels=b012f_012io->b012f, "
       "feature_group_count=2",
       108},
      {"f16_3d", "f16[2,7,9,11,5]", "f16[3,3,3,5,12]", "f16[2,7,9,11,12]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f", 135},
      // Window reversal, as JAX's input gradients have (with base dilation
      // where the forward convolution was strided), in some slots or all.
      {"nhwc_reversed_input_gradient", "f32[2,9,11,6]", "f32[3,3,6,12]", "f32[2,19,23,12]",
       "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f", 54},
      {"nhwc_reversed_width_only", "f32[2,17,19,6]", "f32[3,3,6,20]", "f32[2,17,19,20]",
       "window={size=3x3 pad=1_1x1_1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f", 54},
      {"one_dimensional_reversed", "f32[4,300,3]", "f32[5,3,16]", "f32[4,300,16]",
       "window={size=5 pad=2_2 rhs_reversal=1}, dim_labels=b0f_0io->b0f", 15},
      {"ndhwc_reversed_input_gradient", "f32[1,5,6,7,8]", "f32[3,3,3,8,16]", "f32[1,11,13,15,16]",
       "window={size=3x3x3 pad=2_2x2_2x2_2 lhs_dilate=2x2x2 rhs_reversal=1x1x1}, "
       "dim_labels=b012f_012io->b012f",
       216},
      {"ndhwc_reversed_strided_dilated_grouped", "f32[2,9,12,10,8]", "f32[3,2,3,4,16]", "f32[2,5,12,5,16]",
       "window={size=3x2x3 stride=2x1x2 pad=2_2x1_2x1_1 rhs_dilate=2x3x1 rhs_reversal=1x1x0}, "
       "dim_labels=b012f_012io->b012f, feature_group_count=2",
       72},
      {"f16_ncdhw_reversed_depth", "f16[2,6,11,10,13]", "f16[10,6,3,3,3]", "f16[2,10,5,10,7]",
       "window={size=3x3x3 stride=2x1x2 pad=0_1x2_0x1_1 rhs_reversal=1x0x0}, dim_labels=bf012_oi012->bf012",
       162},
  };
}

std::string ConvolutionCaseName(const ::testing::TestParamInfo<ConvolutionCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, VulkanLibraryConvolutionTest, ::testing::ValuesIn(ConvolutionCases()),
                         ConvolutionCaseName);

}  // namespace
}  // namespace kiln::vulkan
