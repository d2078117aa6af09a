// Dots the runtime's matrix multiply does not take, emitted elementally:
// f16 and bf16 (accumulated in float), integers (wrapping 64-bit) with a
// wider result type, batch dimensions and contracting dimensions anywhere.
// Results must equal the interpreter's.
#include <string>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

TEST(CodegenDot, HalfPrecisionMatrixProduct) {
  CompareWithInterpreter(
      R"(HloModule m
ENTRY e {
  a = f16[5,7] parameter(0)
  b = f16[7,3] parameter(1)
  ROOT d = f16[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
      {MakeInput(Shape(ElementType::kF16, {5, 7}), 31), MakeInput(Shape(ElementType::kF16, {7, 3}), 32)},
      "f16 dot", 1e-2);
}

TEST(CodegenDot, BfloatBatchedWithLeadingContraction) {
  CompareWithInterpreter(R"(HloModule m
ENTRY e {
  a = bf16[2,6,4] parameter(0)
  b = bf16[2,6,5] parameter(1)
  ROOT d = bf16[2,4,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
})",
                         {MakeInput(Shape(ElementType::kBF16, {2, 6, 4}), 33),
                          MakeInput(Shape(ElementType::kBF16, {2, 6, 5}), 34)},
                         "bf16 batched dot", 5e-2);
}

TEST(CodegenDot, IntegersIntoAWiderResult) {
  CompareWithInterpreter(
      R"(HloModule m
ENTRY e {
  a = s8[4,9] parameter(0)
  b = s8[9,3] parameter(1)
  ROOT d = s32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
      {MakeInput(Shape(ElementType::kS8, {4, 9}), 35), MakeInput(Shape(ElementType::kS8, {9, 3}), 36)},
      "s8 dot into s32");
}

TEST(CodegenDot, TwoContractingDimensionsAndUnsignedResult) {
  CompareWithInterpreter(R"(HloModule m
ENTRY e {
  a = u16[3,4,2] parameter(0)
  b = u16[2,5,4] parameter(1)
  ROOT d = u16[3,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}
})",
                         {MakeInput(Shape(ElementType::kU16, {3, 4, 2}), 37, 0, 60000),
                          MakeInput(Shape(ElementType::kU16, {2, 5, 4}), 38, 0, 60000)},
                         "u16 dot over two dimensions");
}

TEST(CodegenDot, FusedIntoAnElementwiseConsumer) {
  CompareWithInterpreter(
      R"(HloModule m
ENTRY e {
  a = f16[6,8] parameter(0)
  b = f16[8,6] parameter(1)
  d = f16[6,6] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f16[6,6] tanh(d)
})",
      {MakeInput(Shape(ElementType::kF16, {6, 8}), 39), MakeInput(Shape(ElementType::kF16, {8, 6}), 40)},
      "tanh of an f16 dot", 1e-2);
}

}  // namespace
}  // namespace kiln::cpu::testing
