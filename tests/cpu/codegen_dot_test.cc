// Dots the runtime's matrix multiply does not take, emitted elementally:
// f16 and bf16 (accumulated in float), integers (wrapping 64-bit) with a
// wider result type, batch dimensions and contracting dimensions anywhere.
// Results must equal the interpreter's.
#include <string>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

TEST(CodegenDot, HalfPrecisionMatrixProduct) {
  CompareTwoInputEntry(R"(  a = f16[5,7] parameter(0)
  b = f16[7,3] parameter(1)
  ROOT d = f16[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)",
                       "f16 dot", Shape(ElementType::kF16, {5, 7}), Shape(ElementType::kF16, {7, 3}), 31,
                       1e-2);
}

TEST(CodegenDot, BfloatBatchedWithLeadingContraction) {
  CompareTwoInputEntry(R"(  a = bf16[2,6,4] parameter(0)
  b = bf16[2,6,5] parameter(1)
  ROOT d = bf16[2,4,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
)",
                       "bf16 batched dot", Shape(ElementType::kBF16, {2, 6, 4}),
                       Shape(ElementType::kBF16, {2, 6, 5}), 33, 5e-2);
}

TEST(CodegenDot, IntegersIntoAWiderResult) {
  CompareTwoInputEntry(R"(  a = s8[4,9] parameter(0)
  b = s8[9,3] parameter(1)
  ROOT d = s32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)",
                       "s8 dot into s32", Shape(ElementType::kS8, {4, 9}), Shape(ElementType::kS8, {9, 3}),
                       35);
}

TEST(CodegenDot, TwoContractingDimensionsAndUnsignedResult) {
  CompareTwoInputEntry(R"(  a = u16[3,4,2] parameter(0)
  b = u16[2,5,4] parameter(1)
  ROOT d = u16[3,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={2,0}
)",
                       "u16 dot over two dimensions", Shape(ElementType::kU16, {3, 4, 2}),
                       Shape(ElementType::kU16, {2, 5, 4}), 37, 0, 0, 60000);
}

TEST(CodegenDot, FusedIntoAnElementwiseConsumer) {
  CompareTwoInputEntry(R"(  a = f16[6,8] parameter(0)
  b = f16[8,6] parameter(1)
  d = f16[6,6] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f16[6,6] tanh(d)
)",
                       "tanh of an f16 dot", Shape(ElementType::kF16, {6, 8}),
                       Shape(ElementType::kF16, {8, 6}), 39, 1e-2);
}

}  // namespace
}  // namespace kiln::cpu::testing
