// The vulkan backend on the padded-tap cases (padded_convolution_cases.h)
// on lavapipe with the validation layers on: the library convolution
// shader (shaders/convolution.comp) for the f32 and f16 cases sized for it,
// with this device's tiles and a GPU's, and the generated GLSL kernel
// (glsl_kernel_emitter.cc) for the others: both multiply the padding's
// zeros. Results against the cases' expectations and the interpreter.
// The 3-D cases (PaddedTapCases3d) all take the library convolution.
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

// The 3-D cases, every one through the library convolution.
using VulkanPaddedTap3dTest = LibraryShaderTest<PaddedTapCase>;

TEST_P(VulkanPaddedTap3dTest, LibraryConvolutionMultipliesThePaddingsZeros) {
  const PaddedTapCase& c = GetParam();
  std::unique_ptr<Module> module = kiln::testing::ParsePaddedTapModule(c);
  ASSERT_NE(module, nullptr);
  ForThisDeviceAndAGpu(*module, IntendedLibraryShader(c), c.name,
                       [&] { ExpectVulkanMatchesPaddedTapCase(c, *module); });
}

INSTANTIATE_TEST_SUITE_P(Cases, VulkanPaddedTap3dTest, ::testing::ValuesIn(kiln::testing::PaddedTapCases3d()),
                         VulkanPaddedTapCaseName);

}  // namespace
}  // namespace kiln::vulkan
