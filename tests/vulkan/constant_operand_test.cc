// Float ops with a constant operand on lavapipe, validation on, bit for bit
// against the interpreter (any NaN for a NaN). Lavapipe's backend folds
// x * 0 and 0 / x to 0, x / 0 to an undefined value and x + 0 to x whatever
// the SPIR-V's float controls say; the GLSL emitter spells those ops out
// where an operand is a compile-time constant that may be zero
// (constant_operands.h, BinaryOpWithConstantExpr). Each program computes in
// f32, f64, f16 and bf16 from an f32 input of infinities, NaN, signed zeros
// and finite values, and returns f32 (every value here converts exactly).
// Also zeros that helpers computed with the wrong sign: roundEven, fmod,
// f64 sine and tangent.
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_instance.h"
#include "core/hlo_parser.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/validation_checked_test.h"

namespace kiln::vulkan {
namespace {

struct ConstantOperandCase {
  const char* name;
  // The ENTRY's body from x (the input in type $T) and c (constant(`constant`)
  // of type $T broadcast to x's shape) to r of type $T; $T stands for the
  // type computed in.
  const char* body;
  const char* constant;
};

const ConstantOperandCase kConstantOperandCases[] = {
    {"TimesZero", "r = $T[12] multiply(x, c)", "0"},
    {"ZeroTimes", "r = $T[12] multiply(c, x)", "0"},
    {"TimesZeroPlusOne",
     "m = $T[12] multiply(x, c)\n  one = $T[] constant(1)\n  ones = $T[12] broadcast(one), dimensions={}\n"
     "  r = $T[12] add(m, ones)",
     "0"},
    {"DividedByZero", "r = $T[12] divide(x, c)", "0"},
    {"ZeroDividedBy", "r = $T[12] divide(c, x)", "0"},
    {"PlusZero", "r = $T[12] add(x, c)", "0"},
    {"ZeroPlus", "r = $T[12] add(c, x)", "0"},
    {"ZeroMinus", "r = $T[12] subtract(c, x)", "0"},
    {"MinusNegativeZero", "r = $T[12] subtract(x, c)", "-0"},
    {"TimesTwo", "r = $T[12] multiply(x, c)", "2"},
    // A zero read from a constant array at a fixed place.
    {"TimesSliceOfConstant",
     "k = $T[3] constant({1, 0, 2})\n  s = $T[1] slice(k), slice={[1:2]}\n  z = $T[] reshape(s)\n"
     "  b = $T[12] broadcast(z), dimensions={}\n  r = $T[12] multiply(x, b)",
     "1"},
    // roundEven's zero takes x's sign (-0.3 rounds to -0), as fmod's does
    // (-1 % 1 is -0).
    {"RoundNearestEven", "r = $T[12] round-nearest-even(x)", "0"},
    {"RemainderByOne", "r = $T[12] remainder(x, c)", "1"},
};

const char* const kComputeTypes[] = {"f32", "f64", "f16", "bf16"};

std::string ReplaceType(std::string text, const std::string& type) {
  for (size_t at = text.find("$T"); at != std::string::npos; at = text.find("$T", at + type.size())) {
    text.replace(at, 2, type);
  }
  return text;
}

std::string ConstantOperandModule(const ConstantOperandCase& c, const std::string& type) {
  return ReplaceType(
      "HloModule constant_operand\n\nENTRY e {\n  p = f32[12] parameter(0)\n  x = $T[12] convert(p)\n"
      "  k0 = $T[] constant(" +
          std::string(c.constant) + ")\n  c = $T[12] broadcast(k0), dimensions={}\n  " + c.body +
          "\n  ROOT o = f32[12] convert(r)\n}\n",
      type);
}

Literal ConstantOperandInput() {
  const float inf = INFINITY;
  return Literal::FromVector<float>(
      {inf, -inf, NAN, 0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -0.3f, 0.3f, -1e4f, 3.0f});
}

// Equal bits, or both NaN.
bool SameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

using VulkanConstantOperandTest = ValidationCheckedTest<::testing::TestWithParam<ConstantOperandCase>>;

TEST_P(VulkanConstantOperandTest, AgreesWithTheInterpreterBitForBit) {
  const ConstantOperandCase& c = GetParam();
  for (const char* type : kComputeTypes) {
    SCOPED_TRACE(std::string(c.name) + " in " + type);
    const std::string text = ConstantOperandModule(c, type);
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
    const std::vector<Literal> arguments = {ConstantOperandInput()};
    KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves,
                              RunOnInterpreterAndVulkan(**module, arguments));
    ASSERT_EQ(leaves.vulkan.size(), 1u);
    const auto want = leaves.interpreter[0].data<float>();
    const auto got = leaves.vulkan[0].data<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(SameFloat(got[i], want[i])) << "input " << arguments[0].data<float>()[i] << ": vulkan "
                                              << got[i] << ", interpreter " << want[i];
    }
  }
}

std::string ConstantOperandCaseName(const ::testing::TestParamInfo<ConstantOperandCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, VulkanConstantOperandTest, ::testing::ValuesIn(kConstantOperandCases),
                         ConstantOperandCaseName);

// Complex products and quotients with a constant: each real product, sum
// or quotient with a constant part goes through the real helpers (Inf x 0
// is NaN in both parts; a quotient by a constant zero is k_cdiv's). The
// interpreter divides as C does (__divdc3), k_cdiv by Smith's steps: their
// zeros may differ in sign with any operands, so zeros compare equal here.
TEST_F(VulkanConstantOperandTest, ComplexOpsWithConstantsAgreeWithTheInterpreter) {
  const char* const ops[] = {"multiply(x, c)", "divide(x, c)", "divide(c, x)"};
  const char* const constants[] = {"(0, 0)", "(2, 0)", "(0, -0.5)"};
  for (const char* op : ops) {
    for (const char* constant : constants) {
      SCOPED_TRACE(std::string(op) + " with c = " + constant);
      const std::string text = std::string(R"(HloModule complex_with_constant
ENTRY e {
  p = f32[12] parameter(0)
  q = f32[12] reverse(p), dimensions={0}
  x = c64[12] complex(p, q)
  k = c64[] constant()") + constant +
                               R"()
  c = c64[12] broadcast(k), dimensions={}
  m = c64[12] )" + op + R"(
  re = f32[12] real(m)
  im = f32[12] imag(m)
  ROOT t = (f32[12], f32[12]) tuple(re, im)
})";
      StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
      ASSERT_TRUE(module.ok()) << module.status().ToString();
      KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves,
                                RunOnInterpreterAndVulkan(**module, {ConstantOperandInput()}));
      ASSERT_EQ(leaves.vulkan.size(), 2u);
      for (size_t leaf = 0; leaf < 2; ++leaf) {
        const auto want = leaves.interpreter[leaf].data<float>();
        const auto got = leaves.vulkan[leaf].data<float>();
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_TRUE(SameFloat(got[i], want[i]) || (got[i] == 0 && want[i] == 0))
              << "part " << leaf << " element " << i << ": vulkan " << got[i] << ", interpreter " << want[i];
        }
      }
    }
  }
}

// f64 sine and tangent of a zero are that zero (the range reduction gave
// +0 for -0: -0 - (-0) * pi/2 is +0).
TEST_F(VulkanConstantOperandTest, F64SineAndTangentKeepTheSignOfZero) {
  constexpr const char* kText = R"(HloModule sine_of_zero
ENTRY e {
  x = f64[2] parameter(0)
  s = f64[2] sine(x)
  t = f64[2] tan(x)
  ROOT r = (f64[2], f64[2]) tuple(s, t)
})";
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kText);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves,
                            RunOnInterpreterAndVulkan(**module, {Literal::FromVector<double>({0.0, -0.0})}));
  ASSERT_EQ(leaves.vulkan.size(), 2u);
  for (size_t leaf = 0; leaf < 2; ++leaf) {
    const auto got = leaves.vulkan[leaf].data<double>();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(std::bit_cast<uint64_t>(got[0]), std::bit_cast<uint64_t>(0.0)) << (leaf == 0 ? "sin" : "tan");
    EXPECT_EQ(std::bit_cast<uint64_t>(got[1]), std::bit_cast<uint64_t>(-0.0)) << (leaf == 0 ? "sin" : "tan");
    EXPECT_EQ(leaves.interpreter[leaf].data<double>()[1], got[1]);
  }
}

}  // namespace
}  // namespace kiln::vulkan
