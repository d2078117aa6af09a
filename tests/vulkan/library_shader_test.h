// What the runtime tests of the library shaders (library_shaders.h: the
// transpose, the convolution, the tiled dot) share: each program is
// compiled and run with this device's shader features and with a GPU's,
// since a CPU device such as lavapipe takes other tiles, and the features
// override is reset after each test. Also their deterministic operands.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_instance.h"
#include "backends/vulkan/vulkan_program.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/validation_checked_test.h"

namespace kiln::vulkan {

// A parameterized test of a library shader; the shader features override
// that ForThisDeviceAndAGpu sets goes after each test, which fails on any
// validation message it raised (the ctest environment turns the layers on).
template <typename Case>
class LibraryShaderTest : public ValidationCheckedTest<::testing::TestWithParam<Case>> {
 protected:
  void TearDown() override {
    SetShaderFeaturesOverrideForTesting(nullptr);
    ValidationCheckedTest<::testing::TestWithParam<Case>>::TearDown();
  }
};

// With this device's shader features and then with a GPU's: compiles
// `module` to one kernel, expects it to be the library shader `library`
// (std::nullopt: any library shader), makes the backend compile with those
// features, and calls `run` to run and check `module` there. `what` names
// the program in messages.
inline void ForThisDeviceAndAGpu(const Module& module, std::optional<LibraryShader> library,
                                 const std::string& what, const std::function<void()>& run) {
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  for (const bool as_gpu : {false, true}) {
    SCOPED_TRACE(as_gpu ? "tiles of a GPU" : "tiles of this device");
    ShaderFeatures features = device->shader_features();
    if (as_gpu) features.cpu_device = false;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program,
                              CompileForVulkan(module, features, 256, 2));
    ASSERT_EQ(program->shaders.size(), 1u) << what;
    if (library.has_value()) {
      EXPECT_EQ(program->shaders[0].library, library) << what;
    } else {
      EXPECT_TRUE(program->shaders[0].library.has_value()) << what;
    }
    SetShaderFeaturesOverrideForTesting(as_gpu ? [](ShaderFeatures& edited) { edited.cpu_device = false; }
                                               : std::function<void(ShaderFeatures&)>());
    run();
  }
}

// `count` deterministic values in [-1, 1), a sequence per `seed`.
inline std::vector<float> SignedUnitValues(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (float& value : values) {
    state = state * 1664525u + 1013904223u;
    value = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return values;
}

}  // namespace kiln::vulkan
