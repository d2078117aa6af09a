// The vulkan backend on the padded-tap cases (padded_convolution_cases.h)
// on lavapipe with the validation layers on: the library convolution
// shader (shaders/convolution.comp) for the f32 and f16 cases sized for it,
// with this device's tiles and a GPU's, and the generated GLSL kernel
// (glsl_kernel_emitter.cc) for the others: both multiply the padding's
// zeros. Results against the cases' expectations and the interpreter.
// Three spatial dimensions too: their cases (here, as only this backend's
// library shader needed them) follow padded_convolution_cases.h's rules,
// sized for the library convolution.
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/padded_convolution_cases.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/library_shader_test.h"

namespace kiln::vulkan {
namespace {

using kiln::testing::PaddedTapCase;

// The library shader `c` is meant to take: the f32 and f16 "_large"
// cases, sized for it; nullopt for the generated kernel.
std::optional<LibraryShader> IntendedLibraryShader(const PaddedTapCase& c) {
  if (std::string(c.name).find("_large") == std::string::npos) return std::nullopt;
  return std::string(c.type) == "f16" ? LibraryShader::kConvolutionF16 : LibraryShader::kConvolutionF32;
}

void ExpectVulkanMatchesPaddedTapCase(const PaddedTapCase& c, const Module& module) {
  KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves,
                            RunOnInterpreterAndVulkan(module, kiln::testing::PaddedTapArguments(c, module)));
  ASSERT_EQ(leaves.vulkan.size(), 1u);
  ASSERT_EQ(leaves.interpreter.size(), 1u);
  // The expectations hold on the interpreter (the 3-D cases' only check of them).
  EXPECT_TRUE(kiln::testing::MatchesPaddedTapCase(c, module, leaves.interpreter[0], leaves.interpreter[0]));
  EXPECT_TRUE(kiln::testing::MatchesPaddedTapCase(c, module, leaves.vulkan[0], leaves.interpreter[0]));
}

using VulkanPaddedTapTest = LibraryShaderTest<PaddedTapCase>;

TEST_P(VulkanPaddedTapTest, LibraryAndGeneratedKernelsMultiplyThePaddingsZeros) {
  const PaddedTapCase& c = GetParam();
  std::unique_ptr<Module> module = kiln::testing::ParsePaddedTapModule(c);
  ASSERT_NE(module, nullptr);
  const std::optional<LibraryShader> library = IntendedLibraryShader(c);
  if (library.has_value()) {
    ForThisDeviceAndAGpu(*module, library, c.name, [&] { ExpectVulkanMatchesPaddedTapCase(c, *module); });
    return;
  }
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program,
                            CompileForVulkan(*module, device->shader_features(), 256, 2));
  ASSERT_EQ(program->shaders.size(), 1u);
  EXPECT_FALSE(program->shaders[0].library.has_value()) << c.name << " took a library shader";
  ExpectVulkanMatchesPaddedTapCase(c, *module);
}

std::string VulkanPaddedTapCaseName(const ::testing::TestParamInfo<PaddedTapCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, VulkanPaddedTapTest, ::testing::ValuesIn(kiln::testing::PaddedTapCases()),
                         VulkanPaddedTapCaseName);

// The pattern of a tap that meets an input only where the output's three
// coordinates, each below `extent`, are odd.
std::string OddCoordinatesMeetInputs(int extent) {
  std::string pattern;
  for (int z = 0; z < extent; ++z)
    for (int y = 0; y < extent; ++y)
      for (int x = 0; x < extent; ++x) pattern += z % 2 == 1 && y % 2 == 1 && x % 2 == 1 ? 'I' : 'N';
  return pattern;
}

// 3-D padded-tap cases, every one sized for the library convolution
// (at least 4096 outputs, 8 output features a group). Patterns run over
// (z, y, x) row-major.
std::vector<PaddedTapCase> PaddedTapCases3d() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::string all_padded(16, 'N');
  const std::string first_row_and_column =
      "NNNN"
      "NIII"
      "NIII"
      "NIII";
  const std::string last_row_or_column =
      "IIIN"
      "IIIN"
      "IIIN"
      "NNNN";
  const std::string inputs(16, 'I');
  return {
      // Tap (0,0,0) reads (z-1, y-1, x-1): padding where any of them is 0.
      {"f32_3d_ndhwc_inf_corner_tap_large",
       "f32",
       "[32,3,4,4,8]",
       "[3,3,3,8,16]",
       "[32,3,4,4,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f",
       {0, 0, 0, 3, 5},
       kInf,
       all_padded + first_row_and_column + first_row_and_column},
      {"f32_3d_ncdhw_nan_tap_large",
       "f32",
       "[32,8,3,4,4]",
       "[16,8,3,3,3]",
       "[32,16,3,4,4]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=bf012_oi012->bf012",
       {5, 3, 1, 1, 1},
       kNaN,
       std::string(48, 'N')},
      // Stride 2 over 5x5x5 padded 1: tap (2,2,2) reads (2z+1, 2y+1, 2x+1),
      // padding where any of them is 2.
      {"f16_3d_ndhwc_inf_corner_tap_strided_large",
       "f16",
       "[32,5,5,5,8]",
       "[3,3,3,8,16]",
       "[32,3,3,3,16]",
       "window={size=3x3x3 stride=2x2x2 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f",
       {2, 2, 2, 7, 9},
       kInf,
       "IIN"
       "IIN"
       "NNN"
       "IIN"
       "IIN"
       "NNN"
       "NNN"
       "NNN"
       "NNN"},
      // Two feature groups; tap (1,2,0) of output feature 9 (group 1) reads
      // (z, y+1, x-1): padding in the last row and the first column.
      {"f32_3d_grouped_inf_edge_tap_large",
       "f32",
       "[32,3,4,4,16]",
       "[3,3,3,8,16]",
       "[32,3,4,4,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f, feature_group_count=2",
       {1, 2, 0, 4, 9},
       kInf,
       "NIII"
       "NIII"
       "NIII"
       "NNNN"
       "NIII"
       "NIII"
       "NIII"
       "NNNN"
       "NIII"
       "NIII"
       "NIII"
       "NNNN"},
      // Window dilation 2 along depth, padded 2 each side: tap (2,0,0) reads
      // z+2, padding at z = 2 and 3.
      {"f32_3d_inf_tap_with_rhs_dilation_large",
       "f32",
       "[32,4,4,4,8]",
       "[3,1,1,8,16]",
       "[32,4,4,4,16]",
       "window={size=3x1x1 pad=2_2x0_0x0_0 rhs_dilate=2x1x1}, dim_labels=b012f_012io->b012f",
       {2, 0, 0, 1, 15},
       kInf,
       inputs + inputs + all_padded + all_padded},
      // Inputs dilated to x.x.x (holes at 1 and 3), padded 1: tap (0,0,0)
      // reads (z-1, y-1, x-1), an input only where all three are odd.
      {"f32_3d_inf_tap_meets_lhs_dilation_holes_large",
       "f32",
       "[32,3,3,3,8]",
       "[3,3,3,8,16]",
       "[32,5,5,5,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1 lhs_dilate=2x2x2}, dim_labels=b012f_012io->b012f",
       {0, 0, 0, 2, 6},
       kInf,
       OddCoordinatesMeetInputs(5)},
      {"f32_3d_negative_zero_inputs_large",
       "f32",
       "[32,3,4,4,8]",
       "[3,3,3,8,16]",
       "[32,3,4,4,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f",
       {},
       0,
       std::string(48, '0')},
  };
}

// The 3-D cases, every one through the library convolution.
using VulkanPaddedTap3dTest = LibraryShaderTest<PaddedTapCase>;

TEST_P(VulkanPaddedTap3dTest, LibraryConvolutionMultipliesThePaddingsZeros) {
  const PaddedTapCase& c = GetParam();
  std::unique_ptr<Module> module = kiln::testing::ParsePaddedTapModule(c);
  ASSERT_NE(module, nullptr);
  ForThisDeviceAndAGpu(*module, IntendedLibraryShader(c), c.name,
                       [&] { ExpectVulkanMatchesPaddedTapCase(c, *module); });
}

INSTANTIATE_TEST_SUITE_P(Cases, VulkanPaddedTap3dTest, ::testing::ValuesIn(PaddedTapCases3d()),
                         VulkanPaddedTapCaseName);

}  // namespace
}  // namespace kiln::vulkan
