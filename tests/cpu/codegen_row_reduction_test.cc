// Kernels whose outputs read row reductions through row broadcasts (what
// row fusion makes): the reductions are computed once per row before the
// loop over the row, and values read both by a reduction and by the outputs
// (softmax's exp(x - max)) are kept in a row buffer. Results must equal the
// interpreter's, with and without the buffer, split over several pieces.
#include <cmath>
#include <string>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

TEST(CodegenRowReduction, SoftmaxWithRowBuffer) {
  CompareWithInterpreter(Softmax("f32", 37, 300), {MakeInput(Shape(ElementType::kF32, {37, 300}), 11, -6, 6)},
                         "softmax f32[37,300]", 1e-6);
}

TEST(CodegenRowReduction, SoftmaxF64WithRowBuffer) {
  CompareWithInterpreter(Softmax("f64", 9, 130), {MakeInput(Shape(ElementType::kF64, {9, 130}), 12, -6, 6)},
                         "softmax f64[9,130]", 1e-12);
}

// 9000 f32 is past the row buffer's size: exp(x - max) is computed twice.
TEST(CodegenRowReduction, SoftmaxRowTooLongForABuffer) {
  CompareWithInterpreter(Softmax("f32", 3, 9000), {MakeInput(Shape(ElementType::kF32, {3, 9000}), 13, -6, 6)},
                         "softmax f32[3,9000]", 1e-6);
}

// Sets element `i` (row-major) of an f32 or f64 literal.
void SetFloat(Literal& literal, int64_t i, double value) {
  if (literal.shape().element_type() == ElementType::kF32) {
    literal.data<float>()[static_cast<size_t>(i)] = static_cast<float>(value);
  } else {
    literal.data<double>()[static_cast<size_t>(i)] = value;
  }
}

// Max and min reductions propagate NaN from any lane of the vector loop,
// whichever accumulator it lands in (the zeros' sign is left open, as in XLA).
TEST(CodegenRowReduction, MaxAndMinReductionsPropagateNan) {
  for (const char* op : {"maximum", "minimum"}) {
    for (const ElementType type : {ElementType::kF32, ElementType::kF64}) {
      const std::string name = type == ElementType::kF32 ? "f32" : "f64";
      const std::string hlo =
          "HloModule m\nr {\n  a = " + name + "[] parameter(0)\n  b = " + name +
          "[] parameter(1)\n  ROOT m = " + name + "[] " + op + "(a, b)\n}\nENTRY e {\n  x = " + name +
          "[6,300] parameter(0)\n  init = " + name + "[] constant(0)\n  ROOT out = " + name +
          "[6] reduce(x, init), dimensions={1}, to_apply=r\n}\n";
      Literal input = MakeInput(Shape(type, {6, 300}), 16);
      // Row 0: NaN first; rows 1-4: NaN inside the vector loop at positions
      // that fall in different accumulators; row 5: none, zeros of both signs.
      const int64_t nan_columns[] = {0, 37, 130, 191, 298};
      for (int64_t row = 0; row < 5; ++row) SetFloat(input, row * 300 + nan_columns[row], std::nan(""));
      SetFloat(input, 5 * 300 + 3, -0.0);
      SetFloat(input, 5 * 300 + 4, 0.0);
      CompareWithInterpreter(hlo, {input}, std::string(op) + " reduction " + name);
    }
  }
}

TEST(CodegenRowReduction, LayerNormReadsReductionsThroughRowValues) {
  const std::string hlo = R"(HloModule layer_norm
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,16,70] parameter(0)
  gamma = f32[70] parameter(1)
  zero = f32[] constant(0)
  n = f32[] constant(70)
  nb = f32[2,16] broadcast(n), dimensions={}
  sum = f32[2,16] reduce(x, zero), dimensions={2}, to_apply=add
  mean = f32[2,16] divide(sum, nb)
  meanb = f32[2,16,70] broadcast(mean), dimensions={0,1}
  c = f32[2,16,70] subtract(x, meanb)
  sq = f32[2,16,70] multiply(c, c)
  sqsum = f32[2,16] reduce(sq, zero), dimensions={2}, to_apply=add
  var = f32[2,16] divide(sqsum, nb)
  inv = f32[2,16] rsqrt(var)
  invb = f32[2,16,70] broadcast(inv), dimensions={0,1}
  normed = f32[2,16,70] multiply(c, invb)
  gb = f32[2,16,70] broadcast(gamma), dimensions={2}
  ROOT out = f32[2,16,70] multiply(normed, gb)
})";
  CompareWithInterpreter(hlo,
                         {MakeInput(Shape(ElementType::kF32, {2, 16, 70}), 14, -3, 3),
                          MakeInput(Shape(ElementType::kF32, {70}), 15)},
                         "layer norm f32[2,16,70]", 1e-5);
}

}  // namespace
}  // namespace kiln::cpu::testing
