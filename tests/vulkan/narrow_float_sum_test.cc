// f16 and bf16 sums on the vulkan backend (lavapipe, validation on) add
// their elements in f32 and round once, so the result is the exact sum
// rounded to the type, within one ulp of it. The oracle is that f64 sum
// rounded once, not the interpreter: it adds in order in the element type,
// so it stops growing where the sum passes the type's spacing (4096 f16
// ones give 2048 there), and XLA leaves a reduction's order open. Rounding
// each lane's partial sum to f16 gave 2 for rows of alternating +2.5/-2.5
// whose sum is 2.5. Rows take a subgroup per output element (the lanes'
// f32 sums meet by shuffles); columns one invocation's loop.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/validation_checked_test.h"

namespace kiln::vulkan {
namespace {

// The sum over dimension `dimension` of an array of `dims` in `type`, from
// the initial value `initial`.
std::string NarrowSumModule(const std::string& type, const std::vector<int64_t>& dims, int64_t dimension,
                            const std::string& initial) {
  const std::string shape = type + "[" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "]";
  const std::string result = type + "[" + std::to_string(dims[1 - dimension]) + "]";
  return "HloModule narrow_sum\nadd {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT s = " + type + "[] add(a, b)\n}\nENTRY e {\n  x = " + shape +
         " parameter(0)\n  z = " + type + "[] constant(" + initial + ")\n  ROOT r = " + result +
         " reduce(x, z), dimensions={" + std::to_string(dimension) + "}, to_apply=add\n}\n";
}

// `value` rounded once to `type` (f16 or bf16).
double RoundedTo(ElementType type, double value) {
  StatusOr<Literal> rounded = Literal::FromVector<double>({value}).Convert(type);
  EXPECT_TRUE(rounded.ok()) << rounded.status().ToString();
  return rounded.ok() ? rounded->GetAsDouble(0) : std::nan("");
}

// The spacing of `type`'s values at `value` (a normal value of the type).
double UlpAt(ElementType type, double value) {
  const int mantissa_bits = type == ElementType::kF16 ? 10 : 7;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, 0.5 <= |m| < 1
  return std::ldexp(1.0, exponent - 1 - mantissa_bits);
}

class VulkanNarrowFloatSumTest : public ValidationCheckedTest<> {
 protected:
  // Sums `values` (of `dims`, given as doubles that `type` holds exactly)
  // over `dimension` on vulkan from +0 and expects each result within one
  // ulp of the exact sum rounded once.
  static void ExpectSumsRoundedOnce(ElementType type, const std::vector<int64_t>& dims, int64_t dimension,
                                    const std::vector<double>& values) {
    const std::string type_name(ElementTypeName(type));
    SCOPED_TRACE(type_name + "[" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "] over " +
                 std::to_string(dimension));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module,
                              ParseHloModule(NarrowSumModule(type_name, dims, dimension, "0")));
    KILN_ASSERT_OK_AND_ASSIGN(Literal argument, Literal::FromVector<double>(values, dims).Convert(type));
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(argument.GetAsDouble(static_cast<int64_t>(i)), values[i]) << "element " << i;
    KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves,
                              RunOnInterpreterAndVulkan(*module, {argument}));
    ASSERT_EQ(leaves.vulkan.size(), 1u);
    const Literal& got = leaves.vulkan[0];
    const int64_t kept = dims[1 - static_cast<size_t>(dimension)];
    ASSERT_EQ(got.element_count(), kept);
    for (int64_t k = 0; k < kept; ++k) {
      double exact = 0;  // every partial sum here is exact in f64
      for (int64_t i = 0; i < dims[static_cast<size_t>(dimension)]; ++i)
        exact += values[static_cast<size_t>(dimension == 1 ? k * dims[1] + i : i * dims[1] + k)];
      const double want = RoundedTo(type, exact);
      EXPECT_LE(std::fabs(got.GetAsDouble(k) - want), UlpAt(type, want))
          << "result " << k << ": vulkan " << got.GetAsDouble(k) << ", exact sum " << exact << " rounded "
          << want << " (the interpreter, in order in " << type_name << ": "
          << leaves.interpreter[0].GetAsDouble(k) << ")";
    }
  }
};

constexpr ElementType kNarrowFloatTypes[] = {ElementType::kF16, ElementType::kBF16};

// The finding: rows of 999 alternating +2.5/-2.5 sum to 2.5 (the lanes'
// partial sums, near +1250 and -1247.5, are exact in f32).
TEST_F(VulkanNarrowFloatSumTest, AlternatingRowsSumExactly) {
  for (const ElementType type : kNarrowFloatTypes) {
    for (const int64_t dimension : {1, 0}) {
      const std::vector<int64_t> dims =
          dimension == 1 ? std::vector<int64_t>{4, 999} : std::vector<int64_t>{999, 4};
      std::vector<double> values(4 * 999);
      for (size_t i = 0; i < values.size(); ++i) {
        const size_t along = dimension == 1 ? i % 999 : i / 4;
        values[i] = along % 2 == 0 ? 2.5 : -2.5;
      }
      ExpectSumsRoundedOnce(type, dims, dimension, values);
    }
  }
}

// 4096 ones: past 2048 (f16) or 256 (bf16) a one is half the spacing, so
// a sum rounded at every step stops there.
TEST_F(VulkanNarrowFloatSumTest, OnesPastTheTypesSpacingAllCount) {
  for (const ElementType type : kNarrowFloatTypes) {
    ExpectSumsRoundedOnce(type, {3, 4096}, 1, std::vector<double>(3 * 4096, 1.0));
    ExpectSumsRoundedOnce(type, {4096, 3}, 0, std::vector<double>(3 * 4096, 1.0));
  }
}

// Long sums of mixed signs and a positive drift, multiples of 1/16 that
// both types hold (f32 adds them exactly: every sum stays below 2^20).
TEST_F(VulkanNarrowFloatSumTest, LongSumsAreRoundedOnce) {
  for (const ElementType type : kNarrowFloatTypes) {
    for (const int64_t dimension : {1, 0}) {
      const std::vector<int64_t> dims =
          dimension == 1 ? std::vector<int64_t>{6, 5000} : std::vector<int64_t>{3000, 5};
      std::vector<double> values(static_cast<size_t>(dims[0] * dims[1]));
      uint32_t state = 12345;
      for (double& value : values) {
        state = state * 1664525u + 1013904223u;
        value = (static_cast<double>((state >> 16) % 256) - 100.0) / 16.0;
      }
      ExpectSumsRoundedOnce(type, dims, dimension, values);
    }
  }
}

}  // namespace
}  // namespace kiln::vulkan
