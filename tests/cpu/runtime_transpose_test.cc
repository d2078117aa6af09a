// A transpose on its own runs on the CPU backend as a "transpose" thunk, a
// cache-blocked copy when it moves the minor dimension, with exactly the
// interpreter's results, for every element width, sizes that are not
// multiples of the tile, and dimensions of one.
#include <algorithm>
#include <initializer_list>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

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

// Distinct bit patterns for every element (no two neighbours alike, so a
// misplaced element shows), with each component's exponent kept off all
// ones: no float is a NaN or an infinity, so every path copies bits.
Literal DistinctPatterns(const Shape& shape, int component_bytes) {
  Literal literal(shape);
  std::span<uint8_t> bytes = literal.raw();
  uint64_t state = 0x2545F4914F6CDD1DULL;
  for (size_t i = 0; i < bytes.size(); ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    bytes[i] = static_cast<uint8_t>(state >> 24);
    if (i % static_cast<size_t>(component_bytes) == static_cast<size_t>(component_bytes) - 1)
      bytes[i] &= 0xbf;
  }
  return literal;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t d = 0; d < dims.size(); ++d) text += (d ? "," : "") + std::to_string(dims[d]);
  return text + "]";
}

// Runs `text` (one transpose) on CPU backends of each of `thread_counts`
// intra-op threads and on the interpreter, on DistinctPatterns arguments:
// one transpose thunk (unless the permutation is the identity, a copy),
// and the interpreter's result byte for byte.
void ExpectTransposeBytesMatch(const std::string& text, int component_bytes,
                               std::initializer_list<int> thread_counts = {2}, bool identity = false) {
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  if (!identity) {
    EXPECT_EQ(testing::CountThunks(text, "transpose"), 1);
  }
  std::vector<Literal> arguments;
  arguments.push_back(DistinctPatterns(module->entry()->parameters()[0]->shape, component_bytes));
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 1u);
  for (int threads : thread_counts) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::RunWithThreads(*module, arguments, threads));
    ASSERT_EQ(got.raw().size(), want[0].raw().size());
    EXPECT_EQ(testing::FirstByteDifference(got, want[0]), -1) << threads << " threads";
  }
}

struct ElementTypeName {
  const char* name;
  int component_bytes;
};
// Every element width the transpose thunk moves (1, 2, 4, 8 and 16 bytes).
constexpr ElementTypeName kEveryWidth[] = {{"s8", 1},  {"bf16", 2}, {"f32", 4},
                                           {"f64", 8}, {"c64", 4},  {"c128", 8}};

// Every permutation of `dims` for each element type: one transpose thunk
// whose result is the interpreter's, byte for byte.
void ExpectEveryPermutationMatches(const std::vector<int64_t>& dims) {
  std::vector<int64_t> permutation(dims.size());
  std::iota(permutation.begin(), permutation.end(), 0);
  do {
    std::vector<int64_t> out_dims;
    std::string order;
    for (int64_t d : permutation) {
      out_dims.push_back(dims[static_cast<size_t>(d)]);
      order += (order.empty() ? "" : ",") + std::to_string(d);
    }
    const bool identity = std::is_sorted(permutation.begin(), permutation.end());
    for (const ElementTypeName& type : kEveryWidth) {
      ExpectTransposeBytesMatch(Transpose(type.name, DimsText(dims), DimsText(out_dims), order),
                                type.component_bytes, {2}, identity);
    }
  } while (std::next_permutation(permutation.begin(), permutation.end()));
}

// Odd extents, some past 16 (the AVX-512 16 x 16 and 8 x 8 register tiles
// and their ragged edges) and some of one.
TEST(RuntimeTransposeTest, EveryPermutationOfTwoDimensions) { ExpectEveryPermutationMatches({37, 45}); }

TEST(RuntimeTransposeTest, EveryPermutationOfThreeDimensions) { ExpectEveryPermutationMatches({19, 7, 35}); }

TEST(RuntimeTransposeTest, EveryPermutationOfFourDimensions) {
  ExpectEveryPermutationMatches({3, 17, 5, 33});
}

// Outputs past 8 MiB store whole aligned 64-byte lines past the caches;
// the ragged last columns and a misaligned row length take plain stores.
TEST(RuntimeTransposeTest, LargeOutputsWithStreamingStores) {
  const std::string cases[] = {
      Transpose("f32", "[1104,2047]", "[2047,1104]", "1,0"),
      Transpose("f64", "[1032,1039]", "[1039,1032]", "1,0"),
      Transpose("f32", "[1103,2049]", "[2049,1103]", "1,0"),
  };
  ExpectTransposeThunksMatchTheInterpreter(cases);
}

// A tile is 64 input lines by one 64-byte line of elements (16 f32, 8 f64),
// moved as 16 x 16 or 8 x 8 register blocks: row counts just under, at and
// past a block and a tile, column counts around a block and two, so every
// partial block (masked loads and stores) and partial tile occurs, for
// every width (those without register blocks take the element path).
TEST(RuntimeTransposeTest, TileAndBlockEdgesOfEveryWidth) {
  for (const ElementTypeName& type : kEveryWidth) {
    for (int64_t rows : {7, 8, 9, 15, 16, 17, 63, 64, 65, 130}) {
      for (int64_t columns : {2, 7, 8, 9, 15, 16, 17, 33}) {
        const std::string in = DimsText({rows, columns}), out = DimsText({columns, rows});
        ExpectTransposeBytesMatch(Transpose(type.name, in, out, "1,0"), type.component_bytes);
      }
    }
  }
}

// 3-D and 4-D permutations large enough to split into many tasks, with
// ragged tiles, on 1, 2 and 4 threads: each thread prefetches the tile it
// does next, and a task's last tile prefetches nothing.
TEST(RuntimeTransposeTest, ThreeAndFourDimensionsOnEveryThreadCount) {
  const std::string shapes[][3] = {
      {"[70,33,61]", "[61,70,33]", "2,0,1"},
      {"[9,31,50,37]", "[9,50,37,31]", "0,2,3,1"},
      {"[5,37,23,41]", "[41,23,5,37]", "3,2,0,1"},
  };
  for (const ElementTypeName& type : kEveryWidth) {
    for (const auto& shape : shapes) {
      ExpectTransposeBytesMatch(Transpose(type.name, shape[0], shape[1], shape[2]), type.component_bytes,
                                {1, 2, 4});
    }
  }
}

// Past 8 MiB of output, tiles are 64 input lines by one 64-byte line, the
// next tile's input prefetched, and whole aligned 4- and 8-byte register
// blocks stream their stores: (2,0,1) permutes whose lines are all aligned
// and whose odd extents leave most of them misaligned (plain stores) and
// the last tiles ragged, in every width with register blocks, and NCHW ->
// NHWC of odd extents, on 1, 2 and 4 threads.
TEST(RuntimeTransposeTest, LargePermutesWithStreamingStores) {
  struct Case {
    ElementTypeName type;
    const char* in;
    const char* out;
    const char* permutation;
  };
  const Case cases[] = {
      {{"f32", 4}, "[256,64,128]", "[128,256,64]", "2,0,1"},
      {{"f32", 4}, "[130,129,131]", "[131,130,129]", "2,0,1"},
      {{"f64", 8}, "[64,130,129]", "[129,64,130]", "2,0,1"},
      {{"f32", 4}, "[8,67,61,67]", "[8,61,67,67]", "0,2,3,1"},
      {{"bf16", 2}, "[130,129,257]", "[257,130,129]", "2,0,1"},
      {{"s8", 1}, "[257,131,251]", "[251,257,131]", "2,0,1"},
  };
  for (const Case& c : cases) {
    ExpectTransposeBytesMatch(Transpose(c.type.name, c.in, c.out, c.permutation), c.type.component_bytes,
                              {1, 2, 4});
  }
}

}  // namespace
}  // namespace kiln::cpu
