// Reductions that keep the input's last dimension (bias gradients) are
// emitted as blocks of outputs accumulated side by side. Results must equal
// the interpreter's for every shape of kept and reduced dimensions, with
// fused producers, other element types and reducers, and rows longer than
// one block, split over several pieces.
#include <string>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

std::string Reduction(const std::string& input, const std::string& output, const std::string& dimensions,
                      const std::string& type, const std::string& reducer, const std::string& init,
                      bool square_first) {
  std::string text = "HloModule column\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
                     "[] parameter(1)\n  ROOT r = " + type + "[] " + reducer +
                     "(a, b)\n}\nENTRY main {\n  x = " + input + " parameter(0)\n  init = " + type +
                     "[] constant(" + init + ")\n";
  std::string operand = "x";
  if (square_first) {
    text += "  sq = " + input + " multiply(x, x)\n";
    operand = "sq";
  }
  text += "  ROOT out = " + output + " reduce(" + operand + ", init), dimensions={" + dimensions +
          "}, to_apply=combine\n}\n";
  return text;
}

TEST(CodegenColumnReduction, SumOverTheBatch) {
  CompareWithInterpreter(Reduction("f32[256,70]", "f32[70]", "0", "f32", "add", "0", false),
                         {MakeInput(Shape(ElementType::kF32, {256, 70}), 21)}, "sum f32[256,70] over 0",
                         1e-4);
}

TEST(CodegenColumnReduction, FusedSquareOverTwoLeadingDimensions) {
  CompareWithInterpreter(Reduction("f32[3,5,37]", "f32[37]", "0,1", "f32", "add", "0", true),
                         {MakeInput(Shape(ElementType::kF32, {3, 5, 37}), 22)}, "sum of squares f32[3,5,37]",
                         1e-4);
}

TEST(CodegenColumnReduction, MiddleDimensionKeepsRows) {
  CompareWithInterpreter(Reduction("f64[4,6,10]", "f64[4,10]", "1", "f64", "maximum", "-inf", false),
                         {MakeInput(Shape(ElementType::kF64, {4, 6, 10}), 23)}, "max f64[4,6,10] over 1");
}

TEST(CodegenColumnReduction, IntegersAndRowsLongerThanABlock) {
  CompareWithInterpreter(Reduction("s32[9,3000]", "s32[3000]", "0", "s32", "add", "7", false),
                         {MakeInput(Shape(ElementType::kS32, {9, 3000}), 24, -1000, 1000)},
                         "sum s32[9,3000]");
}

}  // namespace
}  // namespace kiln::cpu::testing
