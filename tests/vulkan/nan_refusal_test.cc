// Programs whose results depend on NaN and infinities are refused on a
// device that cannot keep them (no shaderSignedZeroInfNanPreserve for the
// width they compute in), naming the instruction and the device, unless
// the compile option allow_unsafe_nan_math (or KILN_VULKAN_ALLOW_NAN_UNSAFE=1)
// accepts them. lavapipe has float controls,
// so the backend tests play a device without them through the features
// hook (SetShaderFeaturesOverrideForTesting).
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/nan_sensitive_ops.h"
#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_device.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

ShaderFeatures WithoutNanPreserve(bool f32, bool f64) {
  ShaderFeatures features = AllShaderFeatures();
  features.preserves_nan_f16 = features.preserves_nan_f32 = !f32;
  features.preserves_nan_f64 = !f64;
  return features;
}

std::unique_ptr<Module> ParseRefusalModule(const char* text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

constexpr const char* kIsFinite = R"(HloModule finite
ENTRY e {
  x = f32[8] parameter(0)
  ROOT f = pred[8] is-finite(x)
})";

constexpr const char* kReduceMax = R"(HloModule rowmax
max {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT m = f64[] maximum(a, b)
}
ENTRY e {
  x = f64[4,8] parameter(0)
  lowest = f64[] constant(-inf)
  ROOT r = f64[4] reduce(x, lowest), dimensions={1}, to_apply=max
})";

constexpr const char* kIntegerCompare = R"(HloModule ints
ENTRY e {
  x = s32[8] parameter(0)
  y = s32[8] parameter(1)
  ROOT c = pred[8] compare(x, y), direction=LT
})";

constexpr const char* kHalfCompare = R"(HloModule halves
ENTRY e {
  x = f16[8] parameter(0)
  ROOT c = pred[8] compare(x, x), direction=NE
})";

TEST(NanSensitiveOps, RefusedNamingInstructionWidthAndDevice) {
  std::unique_ptr<Module> module = ParseRefusalModule(kIsFinite);
  ASSERT_NE(module, nullptr);
  const Status refused = CheckNanPreservation(*module, WithoutNanPreserve(true, false), "Some GPU", false);
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented);
  for (const char* part :
       {"is-finite", "(f in e)", "Some GPU", "32-bit", "shaderSignedZeroInfNanPreserveFloat32",
        "allow_unsafe_nan_math", "kiln_compile_options_t.allow_unsafe_nan_math = 1",
        "--allow-unsafe-nan-math", "KILN_VULKAN_ALLOW_NAN_UNSAFE=1"})
    EXPECT_NE(refused.message().find(part), std::string::npos) << part << " in " << refused.ToString();
  EXPECT_TRUE(CheckNanPreservation(*module, WithoutNanPreserve(true, false), "Some GPU", true).ok());
  EXPECT_TRUE(CheckNanPreservation(*module, WithoutNanPreserve(false, true), "Some GPU", false).ok());
  EXPECT_EQ(NanSensitiveOps(*module, WithoutNanPreserve(true, false)), std::vector<std::string>{"is-finite"});
}

TEST(NanSensitiveOps, AReducersMaximumCountsInItsWidth) {
  std::unique_ptr<Module> module = ParseRefusalModule(kReduceMax);
  ASSERT_NE(module, nullptr);
  const Status refused = CheckNanPreservation(*module, WithoutNanPreserve(false, true), "Some GPU", false);
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.message().find("maximum f64[] (m in max)"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find("shaderSignedZeroInfNanPreserveFloat64"), std::string::npos);
  // The f64 reducer does not need 32-bit float controls.
  EXPECT_TRUE(CheckNanPreservation(*module, WithoutNanPreserve(true, false), "Some GPU", false).ok());
}

TEST(NanSensitiveOps, HalfFloatsComputeInThirtyTwoBitsAndIntegersNeedNothing) {
  std::unique_ptr<Module> halves = ParseRefusalModule(kHalfCompare);
  std::unique_ptr<Module> ints = ParseRefusalModule(kIntegerCompare);
  ASSERT_NE(halves, nullptr);
  ASSERT_NE(ints, nullptr);
  EXPECT_EQ(CheckNanPreservation(*halves, WithoutNanPreserve(true, false), "Some GPU", false).code(),
            StatusCode::kUnimplemented);
  EXPECT_TRUE(CheckNanPreservation(*ints, WithoutNanPreserve(true, true), "Some GPU", false).ok());
}

// The backend, on lavapipe told it has no 32-bit float controls.
class VulkanWithoutFloatControls : public ::testing::Test {
 protected:
  void SetUp() override {
    SetShaderFeaturesOverrideForTesting(
        [](ShaderFeatures& features) { features.preserves_nan_f16 = features.preserves_nan_f32 = false; });
    StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
    ASSERT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                             << vulkan.status().ToString();
    vulkan_ = std::move(vulkan).value();
  }
  void TearDown() override {
    SetShaderFeaturesOverrideForTesting(nullptr);
    ::unsetenv("KILN_VULKAN_ALLOW_NAN_UNSAFE");
  }

  std::unique_ptr<Backend> vulkan_;
};

TEST_F(VulkanWithoutFloatControls, CompileRefusesAndUnsupportedOpsLists) {
  std::unique_ptr<Module> module = ParseRefusalModule(kIsFinite);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(vulkan_->UnsupportedOps(*module), std::vector<std::string>{"is-finite"});
  StatusOr<std::unique_ptr<Executable>> executable = vulkan_->Compile(*module, CompileOptions{});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executable.status().message().find("is-finite"), std::string::npos)
      << executable.status().ToString();
  // The message names the device (llvmpipe under ctest).
  StatusOr<std::shared_ptr<Device>> device = Device::Default();
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_NE(executable.status().message().find((*device)->info().name), std::string::npos)
      << executable.status().ToString();
}

TEST_F(VulkanWithoutFloatControls, ProgramsWithoutNanTestsStillRun) {
  std::unique_ptr<Module> module = ParseRefusalModule(R"(HloModule plain
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] multiply(x, x)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(vulkan_->UnsupportedOps(*module).empty());
  const Literal x = Literal::FromVector<float>({1, -2, 3, 0.5f});
  KILN_ASSERT_OK_AND_ASSIGN(Literal got,
                            testing::Execute(*vulkan_, *module, std::span<const Literal>(&x, 1)));
  EXPECT_EQ(got, Literal::FromVector<float>({1, 4, 9, 0.25f}));
}

TEST_F(VulkanWithoutFloatControls, CompileOptionOptsInAndRuns) {
  std::unique_ptr<Module> module = ParseRefusalModule(kIsFinite);
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.allow_unsafe_nan_math = true;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, vulkan_->Compile(*module, options));
  const Literal x = Literal::FromVector<float>({1, -2, 3, 0.5f, 4, 5, 6, 7});
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> argument,
                            vulkan_->BufferFromLiteral(x, vulkan_->devices()[0]));
  DeviceBuffer* arguments[] = {argument.get()};
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                            executable->Execute(arguments, ExecuteOptions{}));
  ASSERT_EQ(results.size(), 1u);
  KILN_ASSERT_OK_AND_ASSIGN(Literal got, results[0]->ToLiteral());
  EXPECT_EQ(got, Literal::FromVector<bool>(std::vector<bool>(8, true)));
  // The option belongs to that compile only: the next one without it refuses.
  EXPECT_EQ(vulkan_->Compile(*module, CompileOptions{}).status().code(), StatusCode::kUnimplemented);
}

TEST_F(VulkanWithoutFloatControls, EnvironmentOptInCompilesAndRuns) {
  ::setenv("KILN_VULKAN_ALLOW_NAN_UNSAFE", "1", 1);
  std::unique_ptr<Module> module = ParseRefusalModule(kIsFinite);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(vulkan_->UnsupportedOps(*module).empty());
  const Literal x = Literal::FromVector<float>({1, -2, 3, 0.5f, 4, 5, 6, 7});
  KILN_ASSERT_OK_AND_ASSIGN(Literal got,
                            testing::Execute(*vulkan_, *module, std::span<const Literal>(&x, 1)));
  EXPECT_EQ(got, Literal::FromVector<bool>(std::vector<bool>(8, true)));
}

}  // namespace
}  // namespace kiln::vulkan
