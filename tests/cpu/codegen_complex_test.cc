// Complex numbers (c64, c128) in kernels: arithmetic, the functions
// std::complex has, real/imag/complex, conversions, (in)equality, select and
// reductions. Results must equal the interpreter's (which uses std::complex)
// part by part within each part type's tolerance.
#include <string>
#include <vector>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

std::string Unary(const std::string& op, const std::string& type, const std::string& result_type) {
  return "HloModule m\nENTRY e {\n  a = " + type + "[7] parameter(0)\n  ROOT r = " + result_type + "[7] " +
         op + "(a)\n}\n";
}

std::string Binary(const std::string& op, const std::string& type) {
  return "HloModule m\nENTRY e {\n  a = " + type + "[9] parameter(0)\n  b = " + type +
         "[9] parameter(1)\n  ROOT r = " + type + "[9] " + op + "(a, b)\n}\n";
}

TEST(CodegenComplex, Arithmetic) {
  for (const char* type : {"c64", "c128"}) {
    const ElementType element = std::string(type) == "c64" ? ElementType::kC64 : ElementType::kC128;
    const std::vector<Literal> inputs = {MakeInput(Shape(element, {9}), 41),
                                         MakeInput(Shape(element, {9}), 42)};
    for (const char* op : {"add", "subtract", "multiply", "divide", "power"}) {
      CompareWithInterpreter(Binary(op, type), inputs, std::string(op) + " " + type, 1e-5);
    }
  }
}

TEST(CodegenComplex, Functions) {
  for (const char* type : {"c64", "c128"}) {
    const ElementType element = std::string(type) == "c64" ? ElementType::kC64 : ElementType::kC128;
    const std::vector<Literal> inputs = {MakeInput(Shape(element, {7}), 43, -2, 2)};
    for (const char* op : {"negate", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one",
                           "logistic", "sqrt", "rsqrt", "sine", "cosine", "tan", "tanh"}) {
      CompareWithInterpreter(Unary(op, type, type), inputs, std::string(op) + " " + type, 1e-5);
    }
    const std::string part = std::string(type) == "c64" ? "f32" : "f64";
    for (const char* op : {"abs", "real", "imag"}) {
      CompareWithInterpreter(Unary(op, type, part), inputs, std::string(op) + " " + type, 1e-6);
    }
  }
}

// Infinite times zero-free finite: the naive product is NaN in both parts;
// C's Annex G (libgcc) recovers the infinities, as std::complex does.
TEST(CodegenComplex, MultiplyRecoversInfinities) {
  Literal a(Shape(ElementType::kC64, {2})), b(Shape(ElementType::kC64, {2}));
  a.data<std::complex<float>>()[0] = {INFINITY, INFINITY};
  b.data<std::complex<float>>()[0] = {1.0f, 0.0f};
  a.data<std::complex<float>>()[1] = {2.0f, -3.0f};
  b.data<std::complex<float>>()[1] = {0.5f, 4.0f};
  CompareWithInterpreter(
      "HloModule m\nENTRY e {\n  a = c64[2] parameter(0)\n  b = c64[2] parameter(1)\n"
      "  ROOT r = c64[2] multiply(a, b)\n}\n",
      {a, b}, "multiply with infinities");
}

TEST(CodegenComplex, BuildConvertCompareSelectAndReduce) {
  CompareWithInterpreter(
      R"(HloModule m
add {
  x = c128[] parameter(0)
  y = c128[] parameter(1)
  ROOT s = c128[] add(x, y)
}
ENTRY e {
  re = f32[4,5] parameter(0)
  im = f32[4,5] parameter(1)
  z = c64[4,5] complex(re, im)
  w = c128[4,5] convert(z)
  t = c128[5,4] transpose(w), dimensions={1,0}
  zero = c128[] constant((0, 0))
  sums = c128[5] reduce(t, zero), dimensions={1}, to_apply=add
  flipped = c64[4,5] negate(z)
  same = pred[4,5] compare(z, flipped), direction=NE
  chosen = c64[4,5] select(same, z, flipped)
  back = f32[4,5] real(chosen)
  spread = c128[4,5] broadcast(sums), dimensions={1}
  shifted = c128[4,5] add(w, spread)
  ROOT out = (c128[4,5], f32[4,5], pred[4,5]) tuple(shifted, back, same)
})",
      {MakeInput(Shape(ElementType::kF32, {4, 5}), 44), MakeInput(Shape(ElementType::kF32, {4, 5}), 45)},
      "complex build, convert, compare, select, reduce", 1e-12);
}

// Array constants of complex numbers live in the kernel as pairs of parts.
TEST(CodegenComplex, ArrayConstants) {
  CompareWithInterpreter(R"(HloModule m
ENTRY e {
  a = c128[3] parameter(0)
  k = c128[3] constant({(1, -2), (0.5, 3), (-4, 0.25)})
  ROOT r = c128[3] multiply(a, k)
})",
                         {MakeInput(Shape(ElementType::kC128, {3}), 46)}, "c128 array constant");
}

}  // namespace
}  // namespace kiln::cpu::testing
