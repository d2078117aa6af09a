// Complex elementwise functions on the Vulkan backend (lavapipe) against the
// interpreter, over values that stress them: parts that are zero of either
// sign, tiny, huge, negative, infinite and NaN. Where the interpreter itself
// cancels (exp(z) - 1 and log(z + 1) for tiny z, which it computes as
// written) the oracle is the same function of long double parts, formed so
// that it does not cancel.
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

template <typename R>
constexpr const char* ComplexTypeName() {
  return sizeof(R) == 4 ? "c64" : "c128";
}

// Relative accuracy asked of each part, against the result's magnitude: for
// c64 the differential tests' f32 tolerance (lavapipe's f32 atan, exp and
// log err by some 1e-5 relative), for c128 Kiln's own double functions'.
template <typename R>
constexpr double PartTolerance() {
  return sizeof(R) == 4 ? 1e-4 : 1e-12;
}

// Runs `op` on `values` (and on `others` as a second operand, when given)
// on both backends; returns {vulkan, interpreter}.
template <typename R>
std::vector<std::vector<std::complex<R>>> RunOnVulkanAndInterpreter(
    const std::string& op, const std::vector<std::complex<R>>& values,
    const std::vector<std::complex<R>>& others = {}) {
  const std::string shape = std::string(ComplexTypeName<R>()) + "[" + std::to_string(values.size()) + "]";
  const bool binary = !others.empty();
  const std::string text = "HloModule m\nENTRY e {\n  x = " + shape + " parameter(0)\n" +
                           (binary ? "  y = " + shape + " parameter(1)\n" : "") + "  ROOT r = " + shape +
                           " " + op + (binary ? "(x, y)" : "(x)") + "\n}\n";
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector(values));
  if (binary) arguments.push_back(Literal::FromVector(others));
  std::vector<std::vector<std::complex<R>>> results;
  for (const char* name : {"vulkan", "interpreter"}) {
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(name);
    EXPECT_TRUE(backend.ok()) << name << ": " << backend.status().ToString();
    if (!backend.ok()) return {};
    StatusOr<std::vector<Literal>> leaves = testing::ExecuteLeaves(**backend, **module, arguments);
    EXPECT_TRUE(leaves.ok()) << op << " on " << name << ": " << leaves.status().ToString();
    if (!leaves.ok() || leaves->size() != 1) return {};
    auto data = (*leaves)[0].template data<std::complex<R>>();
    results.emplace_back(data.begin(), data.end());
  }
  return results;
}

// One part: NaN where expected is NaN, infinities and exact zeros' signs
// equal when `signed_zeros`, else within the tolerance of |expected|.
template <typename R>
::testing::AssertionResult PartAgrees(R got, R want, double magnitude, bool signed_zeros) {
  if (std::isnan(want)) {
    if (std::isnan(got)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", expected NaN";
  }
  if (std::isinf(want) || !std::isfinite(magnitude)) {
    if (got == want && (!signed_zeros || std::signbit(got) == std::signbit(want)))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", expected " << want << " (exactly)";
  }
  if (signed_zeros && want == R(0) && (got != R(0) || std::signbit(got) != std::signbit(want)))
    return ::testing::AssertionFailure() << "got " << got << ", expected " << want << " (signed zero)";
  const double error = std::fabs(static_cast<double>(got) - static_cast<double>(want));
  const double allowed =
      PartTolerance<R>() * magnitude + 4 * static_cast<double>(std::numeric_limits<R>::min());
  if (error <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << got << ", expected " << want << " (error " << error << " > " << allowed << ")";
}

template <typename R>
void ExpectAgrees(const std::string& op, std::complex<R> z, std::complex<R> got, std::complex<R> want,
                  bool signed_zeros) {
  const double magnitude = std::hypot(static_cast<double>(want.real()), static_cast<double>(want.imag()));
  std::ostringstream where;
  where.precision(std::numeric_limits<R>::max_digits10);
  where << op << " of " << ComplexTypeName<R>() << " (" << z.real() << ", " << z.imag() << ")";
  EXPECT_TRUE(PartAgrees(got.real(), want.real(), magnitude, signed_zeros)) << "real part of " << where.str();
  EXPECT_TRUE(PartAgrees(got.imag(), want.imag(), magnitude, signed_zeros))
      << "imaginary part of " << where.str();
}

// Every pair of the given real and imaginary parts.
template <typename R>
std::vector<std::complex<R>> ComplexGrid(const std::vector<R>& reals, const std::vector<R>& imags) {
  std::vector<std::complex<R>> values;
  for (R a : reals)
    for (R b : imags) values.emplace_back(a, b);
  return values;
}

template <typename R>
R TinyPart() {
  return sizeof(R) == 4 ? R(1e-30) : R(1e-300);
}
template <typename R>
R HugePart() {
  return std::numeric_limits<R>::max() / R(4);
}

constexpr double kPartInf = std::numeric_limits<double>::infinity();
constexpr double kPartNaN = std::numeric_limits<double>::quiet_NaN();

// exp(z) - 1 of long double parts without cancellation near 0.
template <typename R>
std::complex<R> AccurateExpm1(std::complex<R> z) {
  const long double a = z.real(), b = z.imag();
  const long double h = std::sin(b / 2);
  return {static_cast<R>(std::expm1(a) * std::cos(b) - 2 * h * h), static_cast<R>(std::exp(a) * std::sin(b))};
}

template <typename R>
void CheckExpm1() {
  // Imaginary parts stay moderate: f32 sin/cos on the device reduce large
  // arguments less exactly than the C library (as for exponential).
  const std::vector<R> reals = {
      R(0),  -R(0), TinyPart<R>(), R(1e-6),       R(-3e-4),       R(0.3),      R(-0.7),      R(2.5),
      R(-4), R(60), R(-100),       HugePart<R>(), -HugePart<R>(), R(kPartInf), R(-kPartInf), R(kPartNaN)};
  const std::vector<R> imags = {R(0),    -R(0),       TinyPart<R>(), -TinyPart<R>(), R(1e-6),
                                R(2e-4), R(0.3),      R(-0.7),       R(2.5),         R(-4),
                                R(100),  R(kPartInf), R(-kPartInf),  R(kPartNaN)};
  const std::vector<std::complex<R>> values = ComplexGrid(reals, imags);
  const auto results = RunOnVulkanAndInterpreter<R>("exponential-minus-one", values);
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < values.size(); ++i) {
    const std::complex<R> z = values[i];
    const bool finite = std::isfinite(z.real()) && std::isfinite(z.imag());
    // The interpreter computes exp(z) - 1, which loses the digits of tiny z.
    const bool small = finite && std::abs(z.real()) < R(1e-2) && std::abs(z.imag()) < R(1e-2);
    ExpectAgrees<R>("exponential-minus-one", z, results[0][i], small ? AccurateExpm1(z) : results[1][i],
                    /*signed_zeros=*/z.imag() == R(0));
  }
}

TEST(VulkanComplexFunctions, Expm1MatchesTheInterpreterAndStaysAccurateNearZeroC64) { CheckExpm1<float>(); }
TEST(VulkanComplexFunctions, Expm1MatchesTheInterpreterAndStaysAccurateNearZeroC128) { CheckExpm1<double>(); }

template <typename R>
void CheckSqrt() {
  const R min_normal = std::numeric_limits<R>::min();
  const R max = std::numeric_limits<R>::max();
  const std::vector<R> parts = {R(0),        -R(0),        TinyPart<R>(), -TinyPart<R>(), min_normal * R(3),
                                R(1e-6),     R(0.25),      R(-0.25),      R(2),           R(-4),
                                R(1e6),      R(-7e20),     max,           -max,           HugePart<R>(),
                                R(kPartInf), R(-kPartInf), R(kPartNaN)};
  const std::vector<std::complex<R>> values = ComplexGrid(parts, parts);
  const auto results = RunOnVulkanAndInterpreter<R>("sqrt", values);
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < values.size(); ++i) {
    // The interpreter is C's csqrt: every zero's sign is the standard's.
    ExpectAgrees<R>("sqrt", values[i], results[0][i], results[1][i], /*signed_zeros=*/true);
  }
}

TEST(VulkanComplexFunctions, SqrtIsCsqrtWithItsBranchCutSignedZerosAndInfinitiesC64) { CheckSqrt<float>(); }
TEST(VulkanComplexFunctions, SqrtIsCsqrtWithItsBranchCutSignedZerosAndInfinitiesC128) { CheckSqrt<double>(); }

// The cut along the negative real axis, stated without the interpreter:
// sqrt(-a +- 0i) = +0 +- sqrt(a) i.
template <typename R>
void CheckSqrtCut() {
  const std::vector<std::complex<R>> values = {{R(-4), R(0)}, {R(-4), -R(0)}, {R(-9), R(0)}, {R(-9), -R(0)}};
  const auto results = RunOnVulkanAndInterpreter<R>("sqrt", values);
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < values.size(); ++i) {
    const std::complex<R> got = results[0][i];
    const R root = std::sqrt(-values[i].real());
    EXPECT_EQ(got.real(), R(0));
    EXPECT_FALSE(std::signbit(got.real())) << i;
    EXPECT_EQ(got.imag(), std::signbit(values[i].imag()) ? -root : root) << i;
  }
}

TEST(VulkanComplexFunctions, SqrtTakesTheImaginarySignOnTheNegativeRealAxisC64) { CheckSqrtCut<float>(); }
TEST(VulkanComplexFunctions, SqrtTakesTheImaginarySignOnTheNegativeRealAxisC128) { CheckSqrtCut<double>(); }

// log(1 + z) of long double parts without cancellation near 0.
template <typename R>
std::complex<R> AccurateLog1p(std::complex<R> z) {
  const long double a = z.real(), b = z.imag();
  return {static_cast<R>(std::log1p(a * (a + 2) + b * b) / 2), static_cast<R>(std::atan2(b, 1 + a))};
}

// rsqrt, log-plus-one, logistic and tan over moderate values (and, for
// log-plus-one, tiny ones against the accurate oracle).
template <typename R>
void CheckModerateFunctions() {
  const std::vector<R> parts = {R(0), -R(0), R(1e-5), R(0.3), R(-0.7), R(1.5), R(-2.5), R(4)};
  const std::vector<std::complex<R>> values = ComplexGrid(parts, parts);
  for (const char* op : {"rsqrt", "log-plus-one", "logistic", "tan"}) {
    const auto results = RunOnVulkanAndInterpreter<R>(op, values);
    ASSERT_EQ(results.size(), 2u) << op;
    const bool log1p = std::string(op) == "log-plus-one";
    for (size_t i = 0; i < values.size(); ++i) {
      const std::complex<R> z = values[i];
      // rsqrt(0) is 1 / 0: infinite and NaN parts, compared as such. On
      // the real axis the interpreter's z + 1 turns -0i into +0i: there
      // the oracle keeps the sign (log1p(conj z) = conj log1p(z)).
      const bool small = std::abs(z.real()) < R(1e-2) && std::abs(z.imag()) < R(1e-2);
      const bool accurate = log1p && (small || z.imag() == R(0));
      ExpectAgrees<R>(op, z, results[0][i], accurate ? AccurateLog1p(z) : results[1][i], false);
    }
  }
  const std::vector<std::complex<R>> tiny =
      ComplexGrid<R>({TinyPart<R>(), R(-3e-7)}, {-TinyPart<R>(), R(2e-8)});
  const auto results = RunOnVulkanAndInterpreter<R>("log-plus-one", tiny);
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < tiny.size(); ++i)
    ExpectAgrees<R>("log-plus-one", tiny[i], results[0][i], AccurateLog1p(tiny[i]), false);
}

TEST(VulkanComplexFunctions, RsqrtLog1pLogisticAndTanMatchTheInterpreterC64) {
  CheckModerateFunctions<float>();
}
TEST(VulkanComplexFunctions, RsqrtLog1pLogisticAndTanMatchTheInterpreterC128) {
  CheckModerateFunctions<double>();
}

// power against the interpreter (C's cpow with 0^0 = 1): bases and
// exponents with zero, negative, fractional and complex parts.
template <typename R>
void CheckPower() {
  const std::vector<std::complex<R>> bases =
      ComplexGrid<R>({R(0), -R(0), R(0.5), R(-1.5), R(3)}, {R(0), -R(0), R(0.25), R(-2)});
  const std::vector<std::complex<R>> exponents =
      ComplexGrid<R>({R(0), R(1), R(-2), R(0.5), R(2.5)}, {R(0), R(1.5), R(-0.75)});
  std::vector<std::complex<R>> x, y;
  for (std::complex<R> base : bases) {
    for (std::complex<R> exponent : exponents) {
      x.push_back(base);
      y.push_back(exponent);
    }
  }
  const auto results = RunOnVulkanAndInterpreter<R>("power", x, y);
  ASSERT_EQ(results.size(), 2u);
  for (size_t i = 0; i < x.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "exponent (" << y[i].real() << ", " << y[i].imag() << ")");
    ExpectAgrees<R>("power", x[i], results[0][i], results[1][i], false);
  }
}

TEST(VulkanComplexFunctions, PowerMatchesTheInterpreterC64) { CheckPower<float>(); }
TEST(VulkanComplexFunctions, PowerMatchesTheInterpreterC128) { CheckPower<double>(); }

}  // namespace
}  // namespace kiln::vulkan
