// Subnormal floats on the vulkan backend. What `kiln info` says of a
// device's float controls: the flags read from a faked
// VkPhysicalDeviceFloatControlsProperties and the denormal part of its
// description. And f32 and f64 ops whose operands or results are
// subnormal, on the device the tests run on (lavapipe, validation on),
// against the interpreter: a device that keeps subnormals in a multiply must keep them
// in every op (lavapipe's exp, log and pow builtins did not: log(1e-40)
// gave -88.02, exp(-100) 0); one that flushes them may give, per element,
// the interpreter's result or the one of the operands and result flushed to
// zero, as a device without shaderDenormPreserveFloat32 may.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_physical_device.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/validation_checked_test.h"

namespace kiln::vulkan {
namespace {

TEST(VulkanFloatControlsTest, EachFlagComesFromItsOwnProperty) {
  VkBool32 VkPhysicalDeviceFloatControlsProperties::* const denormal[] = {
      &VkPhysicalDeviceFloatControlsProperties::shaderDenormPreserveFloat16,
      &VkPhysicalDeviceFloatControlsProperties::shaderDenormPreserveFloat32,
      &VkPhysicalDeviceFloatControlsProperties::shaderDenormPreserveFloat64};
  VkBool32 VkPhysicalDeviceFloatControlsProperties::* const nan[] = {
      &VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat16,
      &VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat32,
      &VkPhysicalDeviceFloatControlsProperties::shaderSignedZeroInfNanPreserveFloat64};
  for (int width = 0; width < 3; ++width) {
    for (const bool denormals : {true, false}) {
      SCOPED_TRACE(std::string(denormals ? "denormals" : "nan") + " of width " + std::to_string(16 << width));
      VkPhysicalDeviceFloatControlsProperties properties{};
      properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
      properties.denormBehaviorIndependence = VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL;
      // Flushing is offered everywhere: it must not read as preserving.
      properties.shaderDenormFlushToZeroFloat16 = properties.shaderDenormFlushToZeroFloat32 =
          properties.shaderDenormFlushToZeroFloat64 = VK_TRUE;
      properties.*(denormals ? denormal : nan)[width] = VK_TRUE;
      DeviceFeatures features;
      ReadFloatControls(properties, features);
      const bool preserved_denormals[] = {features.preserves_denormals_f16, features.preserves_denormals_f32,
                                          features.preserves_denormals_f64};
      const bool preserved_nan[] = {features.preserves_nan_f16, features.preserves_nan_f32,
                                    features.preserves_nan_f64};
      for (int other = 0; other < 3; ++other) {
        EXPECT_EQ(preserved_denormals[other], denormals && other == width)
            << "denormals of " << (16 << other);
        EXPECT_EQ(preserved_nan[other], !denormals && other == width) << "nan of " << (16 << other);
      }
    }
  }
}

// A kernel declares DenormPreserve for the widths it uses, f32 alone in
// most: only a width whose denormal mode may differ from the others'.
TEST(VulkanFloatControlsTest, DenormalsArePreservedWhereTheWidthMayBeChosenAlone) {
  VkPhysicalDeviceFloatControlsProperties properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  properties.shaderDenormPreserveFloat16 = properties.shaderDenormPreserveFloat32 =
      properties.shaderDenormPreserveFloat64 = VK_TRUE;
  const struct {
    VkShaderFloatControlsIndependence independence;
    bool f16, f32, f64;
  } cases[] = {{VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL, true, true, true},
               {VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY, false, true, false},
               {VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE, false, false, false}};
  for (const auto& c : cases) {
    SCOPED_TRACE("denormBehaviorIndependence " + std::to_string(c.independence));
    properties.denormBehaviorIndependence = c.independence;
    DeviceFeatures features;
    ReadFloatControls(properties, features);
    EXPECT_EQ(features.preserves_denormals_f16, c.f16);
    EXPECT_EQ(features.preserves_denormals_f32, c.f32);
    EXPECT_EQ(features.preserves_denormals_f64, c.f64);
  }
}

TEST(VulkanFloatControlsTest, TheDescriptionSaysWhetherDenormalsAreKept) {
  DeviceFeatures features;
  EXPECT_EQ(DenormalBehaviour(features), "f32 denormals: may flush");
  features.f64 = true;
  features.preserves_denormals_f32 = true;
  EXPECT_EQ(DenormalBehaviour(features), "f32 denormals: preserved, f64 denormals: may flush");
  features.preserves_denormals_f64 = true;
  features.preserves_denormals_f32 = false;
  EXPECT_EQ(DenormalBehaviour(features), "f32 denormals: may flush, f64 denormals: preserved");
}

TEST(VulkanFloatControlsTest, KilnInfoDescribesTheDevicesDenormals) {
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend("vulkan"));
  ASSERT_FALSE(backend->devices().empty());
  const std::string& description = backend->devices()[0]->description();
  const std::string denormals = DenormalBehaviour(device->features());
  EXPECT_NE(description.find(", " + denormals + ")"), std::string::npos) << description;
  std::printf("%s\n", description.c_str());
}

// Results with subnormal operands (x: log, cbrt, pow, sqrt, multiply,
// log1p, erf, atan2, complex log, sign) or subnormal results (y: exp and, with the angles as
// imaginary parts, complex exp; w: pow of 2), in $T (f32 or f64) and $C
// (c64 or c128).
constexpr char kSubnormalOps[] = R"(HloModule subnormal_ops
ENTRY e {
  x = $T[10] parameter(0)
  y = $T[10] parameter(1)
  w = $T[10] parameter(2)
  half = $T[] constant(0.5)
  halves = $T[10] broadcast(half), dimensions={}
  minus_quarter = $T[] constant(-0.25)
  minus_quarters = $T[10] broadcast(minus_quarter), dimensions={}
  two = $T[] constant(2)
  twos = $T[10] broadcast(two), dimensions={}
  one_and_half = $T[] constant(1.5)
  one_and_halves = $T[10] broadcast(one_and_half), dimensions={}
  multiplied = $T[10] multiply(x, one_and_halves)
  logs = $T[10] log(x)
  cube_roots = $T[10] cbrt(x)
  square_roots = $T[10] sqrt(x)
  powers = $T[10] power(x, halves)
  inverse_powers = $T[10] power(x, minus_quarters)
  exps = $T[10] exponential(y)
  squares = $T[10] power(w, twos)
  log1ps = $T[10] log-plus-one(x)
  erfs = $T[10] erf(x)
  atans = $T[10] atan2(x, one_and_halves)
  angles = $T[10] constant({0, 1, -2, 0.5, 3, 1, 0, -1, 2, 0.25})
  z = $C[10] complex(y, angles)
  complex_exps = $C[10] exponential(z)
  complex_exps_real = $T[10] real(complex_exps)
  complex_exps_imag = $T[10] imag(complex_exps)
  diagonal = $C[10] complex(x, x)
  complex_logs = $C[10] log(diagonal)
  complex_logs_real = $T[10] real(complex_logs)
  complex_logs_imag = $T[10] imag(complex_logs)
  signs = $T[10] sign(x)
  ROOT results = ($T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10], $T[10]) tuple(multiplied, logs, cube_roots, square_roots, powers, inverse_powers, exps, squares, log1ps, erfs, atans, complex_exps_real, complex_exps_imag, complex_logs_real, complex_logs_imag, signs)
}
)";
// Each result of kSubnormalOps, in order, and how many subnormal units of
// T it may be off beyond the relative tolerance: three for functions a
// device approximates, none for log1p, which is x itself for a subnormal x
// (log1p(1.4e-45) gave 0 on lavapipe: x / (2 + x) was rounded first).
struct SubnormalOpCheck {
  const char* name;
  double units;
};
constexpr SubnormalOpCheck kSubnormalOpChecks[] = {{"multiply", 3},
                                                   {"log", 3},
                                                   {"cbrt", 3},
                                                   {"sqrt", 3},
                                                   {"pow(x, 0.5)", 3},
                                                   {"pow(x, -0.25)", 3},
                                                   {"exp", 3},
                                                   {"pow(w, 2)", 3},
                                                   {"log1p", 0},
                                                   {"erf", 3},
                                                   {"atan2(x, 1.5)", 3},
                                                   {"real(exp(y + i angle))", 3},
                                                   {"imag(exp(y + i angle))", 3},
                                                   {"real(log(x + i x))", 3},
                                                   {"imag(log(x + i x))", 3},
                                                   {"sign", 0}};

template <typename T>
T FlushedSubnormal(T value) {
  return std::fabs(value) < std::numeric_limits<T>::min() ? std::copysign(T(0), value) : value;
}

template <typename T>
Literal SubnormalOperand(std::vector<T> values, bool flushed) {
  if (flushed)
    for (T& value : values) value = FlushedSubnormal(value);
  return Literal::FromVector<T>(values, {static_cast<int64_t>(values.size())});
}

// Equal within `relative` of the expected value and `units` subnormal
// units of T, or both NaN, or the same infinity.
template <typename T>
bool SameSubnormalResult(double got, double want, double relative, double units) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= relative * std::fabs(want) + units * std::numeric_limits<T>::denorm_min();
}

class VulkanSubnormalTest : public ValidationCheckedTest<> {
 protected:
  // Runs kSubnormalOps in `type` (its complex type `complex_type`) on x,
  // y and w; `preserved`: the device was asked to keep T's subnormals
  // (DenormPreserve).
  template <typename T>
  static void ExpectKeptWhereTheDeviceKeepsThem(const std::string& type, const std::string& complex_type,
                                                const std::vector<T>& x, const std::vector<T>& y,
                                                const std::vector<T>& w, double relative, bool preserved) {
    SCOPED_TRACE(type);
    std::string text = kSubnormalOps;
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"$T", type}, {"$C", complex_type}}) {
      for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
        text.replace(at, 2, value);
    }
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
    KILN_ASSERT_OK_AND_ASSIGN(
        InterpreterAndVulkanLeaves kept,
        RunOnInterpreterAndVulkan(
            *module, {SubnormalOperand(x, false), SubnormalOperand(y, false), SubnormalOperand(w, false)}));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
    std::vector<Literal> flushed_operands;
    for (const std::vector<T>* operand : {&x, &y, &w})
      flushed_operands.push_back(SubnormalOperand(*operand, true));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> flushed,
                              testing::ExecuteLeaves(*interpreter, *module, flushed_operands));
    ASSERT_EQ(kept.vulkan.size(), std::size(kSubnormalOpChecks));
    // x[0] * 1.5 tells whether the device keeps subnormals in arithmetic.
    const bool keeps = preserved || kept.vulkan[0].GetAsDouble(0) == kept.interpreter[0].GetAsDouble(0);
    std::printf("the device %s %s subnormals in a multiply\n", keeps ? "keeps" : "flushes", type.c_str());
    for (size_t op = 0; op < kept.vulkan.size(); ++op) {
      for (int64_t i = 0; i < kept.vulkan[op].element_count(); ++i) {
        const double got = kept.vulkan[op].GetAsDouble(i);
        const double want = kept.interpreter[op].GetAsDouble(i);
        const double want_flushed = FlushedSubnormal(static_cast<T>(flushed[op].GetAsDouble(i)));
        const SubnormalOpCheck& check = kSubnormalOpChecks[op];
        EXPECT_TRUE(SameSubnormalResult<T>(got, want, relative, check.units) ||
                    (!keeps && SameSubnormalResult<T>(got, want_flushed, relative, check.units)))
            << check.name << " element " << i << ": vulkan " << got << ", interpreter " << want
            << (keeps ? "" : ", flushed " + std::to_string(want_flushed));
      }
    }
  }
};

TEST_F(VulkanSubnormalTest, F32OpsKeepSubnormalsWhereTheDeviceDoes) {
  using Limits = std::numeric_limits<float>;
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  std::printf("%s: %s\n", device->info().name.c_str(), DenormalBehaviour(device->features()).c_str());
  ExpectKeptWhereTheDeviceKeepsThem<float>(
      "f32", "c64",
      {1e-40f, -1e-40f, 1e-39f, Limits::denorm_min(), 1e-38f, Limits::min(), 3e-39f, 2.0f, 0.0f, 1e-30f},
      {-100.0f, -90.0f, -87.5f, -103.0f, -104.0f, -87.0f, -50.0f, 1.0f, -88.0f, -95.0f},
      {1e-20f, -1e-20f, 3e-22f, 1e-19f, 2e-23f, 1e-22f, 1.0f, 0.5f, 3e-20f, 1e-21f}, 1e-5,
      device->features().preserves_denormals_f32);
}

// f64 functions are Kiln's own (frexp, ldexp and polynomials), not builtins.
TEST_F(VulkanSubnormalTest, F64OpsKeepSubnormalsWhereTheDeviceDoes) {
  using Limits = std::numeric_limits<double>;
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  ASSERT_TRUE(device->features().f64) << "lavapipe has shaderFloat64";
  ExpectKeptWhereTheDeviceKeepsThem<double>(
      "f64", "c128",
      {1e-310, -1e-310, 1e-309, Limits::denorm_min(), 1e-308, Limits::min(), 3e-309, 2.0, 0.0, 1e-300},
      {-710.0, -720.0, -708.5, -744.0, -746.0, -708.0, -300.0, 1.0, -709.0, -730.0},
      {1e-155, -1e-155, 3e-160, 1e-154, 2e-161, 1e-160, 1.0, 0.5, 3e-155, 1e-157}, 1e-12,
      device->features().preserves_denormals_f64);
}

}  // namespace
}  // namespace kiln::vulkan
