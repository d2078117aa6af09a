// Bitcast-convert between element types of different widths: the narrow side
// has a last dimension of wide / narrow pieces, least significant first.
// Results must equal the interpreter's bit for bit.
#include <string>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

void Check(const std::string& from, const std::string& to, ElementType type, std::vector<int64_t> dims) {
  CompareWithInterpreter("HloModule m\nENTRY e {\n  a = " + from + " parameter(0)\n  ROOT r = " + to +
                             " bitcast-convert(a)\n}\n",
                         {MakeInput(Shape(type, std::move(dims)), 51)}, from + " -> " + to);
}

TEST(CodegenBitcast, SplitsWideElementsIntoPieces) {
  Check("f32[3]", "u8[3,4]", ElementType::kF32, {3});
  Check("f64[2,3]", "u16[2,3,4]", ElementType::kF64, {2, 3});
  Check("s64[5]", "f32[5,2]", ElementType::kS64, {5});
}

TEST(CodegenBitcast, JoinsPiecesIntoWideElements) {
  Check("u8[3,4]", "f32[3]", ElementType::kU8, {3, 4});
  Check("s16[5,2]", "s32[5]", ElementType::kS16, {5, 2});
  Check("f16[2,4]", "u64[2]", ElementType::kF16, {2, 4});
}

}  // namespace
}  // namespace kiln::cpu::testing
