// A transpose on its own runs on the CPU backend as a "transpose" thunk, a
// cache-blocked copy when it moves the minor dimension, with exactly the
// interpreter's results, for every element width, sizes that are not
// multiples of the tile, and dimensions of one.
#include <span>
#include <string>

#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

std::string Transpose(const std::string& type, const std::string& in, const std::string& out,
                      const std::string& permutation) {
  return "HloModule m\nENTRY e {\n  x = " + type + in + " parameter(0)\n  ROOT t = " + type + out +
         " transpose(x), dimensions={" + permutation + "}\n}\n";
}

// Each case runs as one transpose thunk whose result equals the interpreter's exactly.
void ExpectTransposeThunksMatchTheInterpreter(std::span<const std::string> cases) {
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(testing::CountThunks(text, "transpose"), 1);
    testing::ExpectMatchesInterpreter(text, 0.0);
  }
}

TEST(RuntimeTransposeTest, LargeTransposesAreBlockedCopiesWithTheInterpretersValues) {
  const std::string cases[] = {
      Transpose("f32", "[300,517]", "[517,300]", "1,0"),
      Transpose("f16", "[300,517]", "[517,300]", "1,0"),
      Transpose("u8", "[300,517]", "[517,300]", "1,0"),
      Transpose("f64", "[257,255]", "[255,257]", "1,0"),
      Transpose("c128", "[257,255]", "[255,257]", "1,0"),
      Transpose("f32", "[40,50,60]", "[60,40,50]", "2,0,1"),
      Transpose("s32", "[40,50,60]", "[40,60,50]", "0,2,1"),
      Transpose("f32", "[6,7,40,50]", "[50,7,40,6]", "3,1,2,0"),
  };
  ExpectTransposeThunksMatchTheInterpreter(cases);
}

TEST(RuntimeTransposeTest, SmallUnitAndMinorKeepingTransposes) {
  const std::string cases[] = {
      Transpose("f32", "[30,51]", "[51,30]", "1,0"),
      Transpose("f32", "[300,517,2]", "[517,300,2]", "1,0,2"),
      Transpose("f32", "[1,300,1,7]", "[7,1,300,1]", "3,2,1,0"),
  };
  ExpectTransposeThunksMatchTheInterpreter(cases);
}

// NCHW -> NHWC merges H and W into one [C, H*W] -> [H*W, C] transpose per
// image; 4-byte elements then go through 8 x 8 register transposes, so rows
// and columns off multiples of 8 (and of the 32-element tile) check the
// ragged edges, and the other widths the element-by-element tiles.
TEST(RuntimeTransposeTest, MergedDimensionsAndRegisterTilesWithTheInterpretersValues) {
  const std::string cases[] = {
      Transpose("f32", "[2,64,56,56]", "[2,56,56,64]", "0,2,3,1"),
      Transpose("f32", "[3,13,7,9]", "[3,7,9,13]", "0,2,3,1"),
      Transpose("s32", "[2,37,5,41]", "[2,5,41,37]", "0,2,3,1"),
      Transpose("f32", "[1,8,1,8]", "[1,1,8,8]", "0,2,3,1"),
      Transpose("f32", "[5,3,1,70,9]", "[5,70,9,1,3]", "0,3,4,2,1"),
      Transpose("u8", "[2,37,5,41]", "[2,5,41,37]", "0,2,3,1"),
      Transpose("f16", "[2,37,5,41]", "[2,5,41,37]", "0,2,3,1"),
      Transpose("f64", "[2,37,5,41]", "[2,5,41,37]", "0,2,3,1"),
      Transpose("c128", "[2,17,5,21]", "[2,5,21,17]", "0,2,3,1"),
  };
  ExpectTransposeThunksMatchTheInterpreter(cases);
}

TEST(RuntimeTransposeTest, ThreadCountsAgreeOnMergedRaggedTiles) {
  std::unique_ptr<Module> module =
      testing::ParseOrDie(Transpose("f32", "[6,70,9,45]", "[6,9,45,70]", "0,2,3,1"));
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 0.0);
}

TEST(RuntimeTransposeTest, ThreadCountsAgree) {
  std::unique_ptr<Module> module = testing::ParseOrDie(Transpose("f32", "[1000,333]", "[333,1000]", "1,0"));
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 0.0);
}

}  // namespace
}  // namespace kiln::cpu
