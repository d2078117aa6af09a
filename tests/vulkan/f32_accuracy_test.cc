// Kiln's own f32 elementary functions on the vulkan backend (glsl_trig.h,
// glsl_f32_exp_log.h): their error in ulps of the correctly rounded
// result (std::sin and friends in double, rounded to f32), run on lavapipe.
// sin, cos and tan over every binade of f32, around multiples of pi/2
// (where the reduction cancels most) and at the tiny arguments where
// NVIDIA's builtins were wrong (sin(1e-6) = 9.363e-7, tan(1e-5) =
// 9.925e-6); atan2 over all quadrants; exp over its range, log over every
// binade and next to 1, pow up to results of 2^+-120. With GLSL's builtins
// lavapipe fails them too (sin(3.98e18) gave -1, not 2.48e-6; atan2 was
// 348 ulps off, exp 85, log 6e6 next to 1, pow 149); they guard Kiln's
// reductions and polynomials, which every device runs. And the kernels
// call none of GLSL's sin, cos, tan, atan, exp, log or (for power) pow.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/validation_checked_test.h"

namespace kiln::vulkan {
namespace {

// Arguments: zeros, subnormals and the tiny values NVIDIA's builtins got
// wrong; 1500 per binade from 2^-40 to 2^127, both signs (a fixed
// generator); and the nearest floats to k pi/2 and their neighbours.
std::vector<float> TrigSweepArguments() {
  std::vector<float> x = {0.0f,
                          -0.0f,
                          1e-45f,
                          1e-40f,
                          1e-30f,
                          -1e-30f,
                          1e-6f,
                          -1e-6f,
                          1e-5f,
                          2.44140625e-4f,
                          0.785398163f,
                          0.785398223f,
                          1e5f,
                          1e10f,
                          1e20f,
                          1e30f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max()};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int exponent = -40; exponent <= 127; ++exponent) {
    for (int i = 0; i < 1500; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const float mantissa = 1.0f + static_cast<float>(state >> 41) / 8388608.0f;
      const float value = std::ldexp(mantissa, exponent);
      x.push_back((state >> 40) & 1 ? -value : value);
    }
  }
  for (int k = 1; k <= 40000; ++k) {
    const float near = static_cast<float>(k * 1.57079632679489661923);
    x.push_back(near);
    x.push_back(std::nextafter(near, 0.0f));
    x.push_back(std::nextafter(near, 1e30f));
  }
  return x;
}

// |got - want| in units of the last place of want rounded to f32.
double UlpsOff(float got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) == std::isnan(want) ? 0 : INFINITY;
  const auto rounded = static_cast<float>(want);
  if (std::isinf(got) || std::isinf(rounded)) return got == rounded ? 0 : INFINITY;
  int exponent;
  std::frexp(static_cast<double>(rounded), &exponent);
  const double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct F32FunctionCheck {
  const char* name;
  double (*reference)(double);
  double allowed_ulps;
};

// Prints the worst of `got` (the function of `x`, element by element)
// against the reference rounded, and expects it within the allowance.
void ExpectWithinUlps(const F32FunctionCheck& check, std::span<const float> x, std::span<const float> got) {
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double off = UlpsOff(got[i], check.reference(static_cast<double>(x[i])));
    if (off > worst) {
      worst = off;
      worst_at = i;
    }
  }
  const double want = check.reference(static_cast<double>(x[worst_at]));
  std::printf("%s: at most %.3f ulps off (x = %.9g: %.9g, want %.9g) over %zu arguments\n", check.name, worst,
              static_cast<double>(x[worst_at]), static_cast<double>(got[worst_at]), want, x.size());
  EXPECT_LE(worst, check.allowed_ulps)
      << check.name << "(" << x[worst_at] << ") = " << got[worst_at] << ", want " << want;
}

class VulkanF32Accuracy : public ValidationCheckedTest<> {};

TEST_F(VulkanF32Accuracy, SineCosineAndTangentAreWithinAFewUlpsOfTheRoundedResult) {
  const std::vector<float> x = TrigSweepArguments();
  const std::string n = std::to_string(x.size());
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                            ParseHloModule("HloModule trig\nENTRY e {\n  x = f32[" + n +
                                           "] parameter(0)\n  s = f32[" + n + "] sine(x)\n  c = f32[" + n +
                                           "] cosine(x)\n  t = f32[" + n + "] tan(x)\n  ROOT r = (f32[" + n +
                                           "], f32[" + n + "], f32[" + n + "]) tuple(s, c, t)\n}\n"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> vulkan, CreateBackend("vulkan"));
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>(x, {static_cast<int64_t>(x.size())}));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                            testing::ExecuteLeaves(*vulkan, *module, arguments));
  ASSERT_EQ(results.size(), 3u);
  const F32FunctionCheck checks[] = {{"sin", [](double v) { return std::sin(v); }, 2},
                                     {"cos", [](double v) { return std::cos(v); }, 2},
                                     {"tan", [](double v) { return std::tan(v); }, 2}};
  for (size_t f = 0; f < std::size(checks); ++f) {
    const std::span<const float> got = results[f].data<float>();
    ExpectWithinUlps(checks[f], x, got);
    // Signed zeros: sin(-0) = tan(-0) = -0.
    if (f != 1) {
      EXPECT_TRUE(std::signbit(got[1])) << checks[f].name << "(-0)";
    }
  }
}

// atan2 against std::atan2 in double: quotients from 2^-60 to 2^60 of
// parts from 2^-100 to 2^100 in all four quadrants, and the parts' edges
// (zeros, infinities, equal magnitudes).
TEST_F(VulkanF32Accuracy, Atan2IsWithinAFewUlpsOfTheRoundedResult) {
  std::vector<float> y, x;
  uint64_t state = 0x2545f4914f6cdd1dull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  for (int i = 0; i < 200000; ++i) {
    const int x_exponent = static_cast<int>(next() % 201) - 100;
    const int quotient_exponent = static_cast<int>(next() % 121) - 60;
    const float x_value = std::ldexp(1.0f + static_cast<float>(next() % 8388608) / 8388608.0f, x_exponent);
    const float y_value = std::ldexp(1.0f + static_cast<float>(next() % 8388608) / 8388608.0f,
                                     std::clamp(x_exponent + quotient_exponent, -126, 127));
    x.push_back(next() % 2 ? -x_value : x_value);
    y.push_back(next() % 2 ? -y_value : y_value);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (const float a : {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, -3.0f, inf, -inf, 1e-30f, -1e30f}) {
    for (const float b : {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, -3.0f, inf, -inf, 1e-30f, -1e30f}) {
      y.push_back(a);
      x.push_back(b);
    }
  }
  const std::string n = std::to_string(x.size());
  KILN_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseHloModule("HloModule atan2\nENTRY e {\n  y = f32[" + n + "] parameter(0)\n  x = f32[" + n +
                     "] parameter(1)\n  ROOT a = f32[" + n + "] atan2(y, x)\n}\n"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> vulkan, CreateBackend("vulkan"));
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>(y, {static_cast<int64_t>(y.size())}));
  arguments.push_back(Literal::FromVector<float>(x, {static_cast<int64_t>(x.size())}));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                            testing::ExecuteLeaves(*vulkan, *module, arguments));
  ASSERT_EQ(results.size(), 1u);
  const std::span<const float> got = results[0].data<float>();
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::atan2(static_cast<double>(y[i]), static_cast<double>(x[i]));
    const double off = UlpsOff(got[i], want);
    if (off > worst) {
      worst = off;
      worst_at = i;
    }
    if (want == 0) {
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "atan2(" << y[i] << ", " << x[i] << ")";
    }
  }
  std::printf("atan2: at most %.3f ulps off (atan2(%.9g, %.9g) = %.9g, want %.9g) over %zu arguments\n",
              worst, static_cast<double>(y[worst_at]), static_cast<double>(x[worst_at]),
              static_cast<double>(got[worst_at]),
              std::atan2(static_cast<double>(y[worst_at]), static_cast<double>(x[worst_at])), x.size());
  EXPECT_LE(worst, 2.0) << "atan2(" << y[worst_at] << ", " << x[worst_at] << ") = " << got[worst_at];
}

// exp over its whole range (subnormal results included) and log over every
// binade (subnormal arguments included, and next to 1, where Vulkan lets
// GLSL's log be 2^-21 off absolutely), against double's; and sqrt over the
// same arguments as log: it is GLSL's (Vulkan bounds it as 1 / inversesqrt,
// not to the correctly rounded result; lavapipe's is), so this measures the
// device's.
TEST_F(VulkanF32Accuracy, ExpLogAndSqrtAreWithinAFewUlpsOfTheRoundedResult) {
  std::vector<float> exp_x = {0.0f,    -0.0f,   1e-30f, -1e-30f, 88.72283f,   88.7228394f, -87.3f,
                              -103.9f, -104.5f, 1.0f,   -1.0f,   0.34657359f, 0.34657362f};
  std::vector<float> log_x = {1.0f,
                              1.0000001f,
                              0.99999994f,
                              1e-45f,
                              1e-40f,
                              1.17549435e-38f,
                              std::numeric_limits<float>::max(),
                              2.0f,
                              0.5f,
                              1.41421354f,
                              1.41421366f,
                              0.70710677f};
  uint64_t state = 0x853c49e6748fea9bull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  for (int i = 0; i < 200000; ++i) {
    exp_x.push_back(-104.0f + 193.0f * static_cast<float>(next() % 16777216) / 16777216.0f);
    const int exponent = static_cast<int>(next() % 277) - 149;
    log_x.push_back(std::ldexp(1.0f + static_cast<float>(next() % 8388608) / 8388608.0f, exponent));
    log_x.push_back(1.0f + (static_cast<float>(next() % 16777216) / 16777216.0f - 0.5f) *
                               std::ldexp(1.0f, -static_cast<int>(next() % 24)));
  }
  log_x.resize(exp_x.size());
  const std::string n = std::to_string(exp_x.size());
  KILN_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseHloModule("HloModule exp_log\nENTRY e {\n  x = f32[" + n + "] parameter(0)\n  y = f32[" + n +
                     "] parameter(1)\n  ex = f32[" + n + "] exponential(x)\n  ly = f32[" + n +
                     "] log(y)\n  sy = f32[" + n + "] sqrt(y)\n  ROOT r = (f32[" + n + "], f32[" + n +
                     "], f32[" + n + "]) tuple(ex, ly, sy)\n}\n"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> vulkan, CreateBackend("vulkan"));
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>(exp_x, {static_cast<int64_t>(exp_x.size())}));
  arguments.push_back(Literal::FromVector<float>(log_x, {static_cast<int64_t>(log_x.size())}));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                            testing::ExecuteLeaves(*vulkan, *module, arguments));
  ASSERT_EQ(results.size(), 3u);
  const F32FunctionCheck checks[] = {{"exp", [](double v) { return std::exp(v); }, 2},
                                     {"log", [](double v) { return std::log(v); }, 2},
                                     {"sqrt", [](double v) { return std::sqrt(v); }, 1}};
  for (size_t f = 0; f < std::size(checks); ++f) {
    const std::vector<float>& x = f == 0 ? exp_x : log_x;
    const std::span<const float> got = results[f].data<float>();
    ExpectWithinUlps(checks[f], x, got);
  }
}

// pow(x, y) for x from 2^-20 to 2^20 and y such that the result stays in
// f32's normal range (|y log2 x| up to 120), against double's.
TEST_F(VulkanF32Accuracy, PowIsWithinAFewUlpsOfTheRoundedResult) {
  std::vector<float> x, y;
  uint64_t state = 0xda3e39cb94b95bdbull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  for (int i = 0; i < 200000; ++i) {
    const float base = std::ldexp(1.0f + static_cast<float>(next() % 8388608) / 8388608.0f,
                                  static_cast<int>(next() % 41) - 20);
    const double log2_base = std::log2(static_cast<double>(base));
    const double limit = log2_base == 0 ? 100.0 : std::min(100.0, 120.0 / std::fabs(log2_base));
    x.push_back(base);
    y.push_back(static_cast<float>((static_cast<double>(next() % 16777216) / 8388608.0 - 1.0) * limit));
  }
  const std::string n = std::to_string(x.size());
  KILN_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> module,
      ParseHloModule("HloModule pow\nENTRY e {\n  x = f32[" + n + "] parameter(0)\n  y = f32[" + n +
                     "] parameter(1)\n  ROOT p = f32[" + n + "] power(x, y)\n}\n"));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> vulkan, CreateBackend("vulkan"));
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>(x, {static_cast<int64_t>(x.size())}));
  arguments.push_back(Literal::FromVector<float>(y, {static_cast<int64_t>(y.size())}));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                            testing::ExecuteLeaves(*vulkan, *module, arguments));
  const std::span<const float> got = results[0].data<float>();
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double off = UlpsOff(got[i], std::pow(static_cast<double>(x[i]), static_cast<double>(y[i])));
    if (off > worst) {
      worst = off;
      worst_at = i;
    }
  }
  std::printf("pow: at most %.3f ulps off (pow(%.9g, %.9g) = %.9g, want %.9g) over %zu arguments\n", worst,
              static_cast<double>(x[worst_at]), static_cast<double>(y[worst_at]),
              static_cast<double>(got[worst_at]),
              std::pow(static_cast<double>(x[worst_at]), static_cast<double>(y[worst_at])), x.size());
  EXPECT_LE(worst, 2.0);
}

// The kernels of f32 and c64 sine, cosine, tangent, atan2, exp, log and
// power (and the functions over them) call Kiln's helpers, none of GLSL's
// builtins.
TEST(VulkanF32FunctionsGlsl, KernelsCallNoBuiltinTrigonometricExpLogOrPow) {
  const std::regex builtin("(^|[^A-Za-z0-9_])(sin|cos|tan|atan|exp|log)\\(");
  for (const char* op :
       {"sine(x)", "cosine(x)", "tan(x)", "exponential(x)", "exponential-minus-one(x)", "tanh(x)", "log(x)",
        "log-plus-one(x)", "logistic(x)", "atan2(x, x)", "power(x, x)"}) {
    for (const char* type : {"f32", "c64"}) {
      const std::string name = op;
      if (name == "atan2(x, x)" && std::string(type) == "c64") continue;
      SCOPED_TRACE(std::string(op) + " of " + type);
      KILN_ASSERT_OK_AND_ASSIGN(
          std::unique_ptr<Module> module,
          ParseHloModule(std::string("HloModule m\nENTRY e {\n  x = ") + type +
                         "[4] parameter(0)\n  ROOT y = " + type + "[4] " + op + "\n}\n"));
      KILN_ASSERT_OK_AND_ASSIGN(GlslKernel kernel,
                                EmitGlslKernel(*module->entry(), AllShaderFeatures(), "trig_kernel"));
      EXPECT_FALSE(std::regex_search(kernel.source, builtin)) << kernel.source;
      if (name == "power(x, x)") {
        EXPECT_FALSE(std::regex_search(kernel.source, std::regex("[^A-Za-z0-9_]pow\\("))) << kernel.source;
      }
      if (name == "sine(x)" || name == "cosine(x)" || name == "tan(x)") {
        EXPECT_NE(kernel.source.find("k_freduce"), std::string::npos) << kernel.source;
      }
      if (name == "atan2(x, x)" || (name == "log(x)" && std::string(type) == "c64")) {
        EXPECT_NE(kernel.source.find("k_fatanq"), std::string::npos) << kernel.source;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::vulkan
