// Pooling reduce-windows and select-and-scatter run on the CPU backend as
// "reduce-window" and "select-and-scatter" thunks (backends/cpu/window_thunk.h)
// with the interpreter's results bit for bit: every reducer, padding, strides,
// dilations, NaNs, ties, and 1, 2 and 4 threads; windows the thunks do not take
// keep their old path. A pad before a select-and-scatter and a slice after
// it (JAX's max-pool gradient) run inside its thunk with the bytes of the
// three instructions run one after the other.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "backends/cpu/window_thunk.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

std::string Reducer(const std::string& name, const std::string& type, const std::string& op) {
  return name + " {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + op + "(a, b)\n}\n";
}

// reduce-window(x, init) of `reducer` over `type`; `init` a constant.
std::string ReduceWindowProgram(const std::string& type, const std::string& in_shape,
                                const std::string& out_shape, const std::string& reducer,
                                const std::string& init, const std::string& window) {
  return "HloModule m\n" + Reducer("r", type, reducer) + "ENTRY e {\n  x = " + type + in_shape +
         " parameter(0)\n  i = " + type + "[] constant(" + init + ")\n  ROOT w = " + type + out_shape +
         " reduce-window(x, i), window={" + window + "}, to_apply=r\n}\n";
}

// select-and-scatter(x, s, 0) with `select` = compare(a, b) of `direction`
// and `scatter` = `scatter_op`.
std::string SelectAndScatterProgram(const std::string& type, const std::string& in_shape,
                                    const std::string& source_shape, const std::string& direction,
                                    const std::string& scatter_op, const std::string& window,
                                    const std::string& compare_type = "") {
  return "HloModule m\nselect {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=" + direction + compare_type + "\n}\n" +
         Reducer("scatter", type, scatter_op) + "ENTRY e {\n  x = " + type + in_shape +
         " parameter(0)\n  s = " + type + source_shape + " parameter(1)\n  i = " + type +
         "[] constant(0)\n  ROOT o = " + type + in_shape + " select-and-scatter(x, s, i), window={" + window +
         "}, select=select, scatter=scatter\n}\n";
}

void ExpectThunkAndSameBytes(const std::string& text, const std::string& kind, int64_t count) {
  SCOPED_TRACE(text);
  EXPECT_EQ(testing::CountThunks(text, kind), count);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectSameBytesOnThreads(*module, testing::RandomArguments(*module));
}

TEST(RuntimeWindowTest, PoolingRunsAsReduceWindowThunksWithTheInterpretersBytes) {
  struct Case {
    std::string type, in, out, reducer, init, window;
  };
  const Case cases[] = {
      // JAX's max-pool 3x3 stride 2, NHWC: SAME (padding 0_1 or 1_1) and VALID.
      {"f32", "[2,9,10,5]", "[2,5,5,5]", "maximum", "-inf",
       "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0"},
      {"f32", "[2,9,10,5]", "[2,4,4,5]", "maximum", "-inf", "size=1x3x3x1 stride=1x2x2x1"},
      // Average pooling's sum (same operation order: bit-exact), with a
      // channel count above one lane chunk.
      {"f32", "[1,6,6,600]", "[1,3,3,600]", "add", "0", "size=1x2x2x1 stride=1x2x2x1"},
      {"f64", "[3,7,8,4]", "[3,7,8,4]", "minimum", "inf", "size=1x3x3x1 pad=0_0x1_1x1_1x0_0"},
      {"f64", "[2,5,6,3]", "[2,4,5,3]", "multiply", "1", "size=1x2x2x1"},
      // NCHW: the window on the last dimensions (one lane).
      {"f32", "[2,3,9,9]", "[2,3,4,4]", "maximum", "-inf", "size=1x1x3x3 stride=1x1x2x2"},
      // An initial value that is not the identity; integers; half floats.
      {"f32", "[4,20]", "[4,10]", "add", "1.5", "size=1x4 stride=1x2 pad=0_0x1_1"},
      {"s32", "[3,11,6]", "[3,5,6]", "add", "0", "size=1x3x1 stride=1x2x1"},
      {"s8", "[3,11,6]", "[3,11,6]", "maximum", "-128", "size=1x3x1 pad=0_0x1_1x0_0"},
      {"u16", "[3,11,6]", "[3,9,6]", "minimum", "65535", "size=1x3x1"},
      {"f16", "[2,8,8,3]", "[2,4,4,3]", "add", "0", "size=1x2x2x1 stride=1x2x2x1"},
      {"bf16", "[2,8,8,3]", "[2,3,3,3]", "maximum", "-inf", "size=1x3x3x1 stride=1x2x2x1"},
      // Window dilation, base dilation, a window wider than the input, 1-D.
      {"f32", "[2,9,9,2]", "[2,5,5,2]", "maximum", "-inf", "size=1x3x3x1 rhs_dilate=1x2x2x1"},
      {"f32", "[2,5,5,2]", "[2,10,10,2]", "add", "0", "size=1x2x2x1 pad=0_0x1_1x1_1x0_0 lhs_dilate=1x2x2x1"},
      {"f32", "[3,4]", "[3,1]", "maximum", "-inf", "size=1x6 stride=1x4 pad=0_0x2_2"},
      {"f32", "[50]", "[24]", "add", "0", "size=4 stride=2"},
  };
  for (const Case& c : cases) {
    ExpectThunkAndSameBytes(ReduceWindowProgram(c.type, c.in, c.out, c.reducer, c.init, c.window),
                            "reduce-window", 1);
  }
}

TEST(RuntimeWindowTest, MaxPoolingOfNaNsGivesTheInterpretersNaNs) {
  // NaNs of different signs and payloads: which one a window returns is
  // visible in the bytes.
  for (const std::string reducer : {"maximum", "minimum"}) {
    std::unique_ptr<Module> module = testing::ParseOrDie(
        ReduceWindowProgram("f32", "[2,9,10,4]", "[2,5,5,4]", reducer, reducer == "maximum" ? "-inf" : "inf",
                            "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0"));
    ASSERT_NE(module, nullptr);
    std::vector<Literal> arguments = testing::RandomArguments(*module);
    auto x = arguments[0].data<float>();
    for (size_t i = 0; i < x.size(); i += 7) {
      const uint32_t bits = (i % 3 == 0 ? 0xffc00000u : 0x7fc00000u) | static_cast<uint32_t>(i);
      std::memcpy(&x[i], &bits, sizeof(bits));
    }
    x[5] = std::numeric_limits<float>::infinity();
    SCOPED_TRACE(reducer);
    testing::ExpectSameBytesOnThreads(*module, arguments);
  }
}

TEST(RuntimeWindowTest, MaxPoolGradientRunsAsASelectAndScatterThunkWithTheInterpretersBytes) {
  struct Case {
    std::string type, in, source, direction, scatter, window;
  };
  const Case cases[] = {
      // JAX's max-pool gradient: GE and add, overlapping 3x3 windows, stride 2.
      {"f32", "[3,9,9,5]", "[3,4,4,5]", "GE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      // Padding in the window, the other comparisons, integers with many ties.
      {"f32", "[2,9,10,3]", "[2,5,5,3]", "GT", "add", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0"},
      {"f64", "[2,7,7,2]", "[2,7,7,2]", "LE", "add", "size=1x3x3x1 pad=0_0x1_1x1_1x0_0"},
      {"s32", "[2,8,8,3]", "[2,3,3,3]", "LT", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"s32", "[2,8,8,3]", "[2,3,3,3]", "GE", "maximum", "size=1x3x3x1 stride=1x2x2x1"},
      {"f32", "[2,8,8,3]", "[2,4,4,3]", "EQ", "multiply", "size=1x2x2x1 stride=1x2x2x1"},
      // More lanes than one selection chunk; NCHW (one lane); window dilation;
      // strides that skip elements; 1-D.
      {"f32", "[1,5,5,300]", "[1,2,2,300]", "GE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"f32", "[2,3,9,9]", "[2,3,4,4]", "GE", "add", "size=1x1x3x3 stride=1x1x2x2"},
      {"f32", "[2,9,9,2]", "[2,5,5,2]", "GE", "add", "size=1x3x3x1 rhs_dilate=1x2x2x1"},
      {"f32", "[2,9,9,2]", "[2,3,3,2]", "GE", "add", "size=1x2x2x1 stride=1x3x3x1"},
      {"bf16", "[40]", "[19]", "GE", "add", "size=4 stride=2"},
      // Windows of more than 16 elements scatter lane by lane, not row by
      // row; a window over three axes; padding on the high side only.
      {"f32", "[2,11,12,3]", "[2,7,8,3]", "GE", "add", "size=1x5x5x1"},
      {"f32", "[2,6,7,8,3]", "[2,3,3,4,3]", "GT", "add", "size=1x2x3x2x1 stride=1x2x2x2x1"},
      {"f32", "[2,9,9,17]", "[2,5,5,17]", "GE", "add", "size=1x2x2x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0"},
      {"f64", "[2,11,12,3]", "[2,7,8,3]", "GE", "add", "size=1x5x5x1"},
      // f32 with add runs sixteen lanes to a vector where the CPU has
      // AVX-512: every comparison, and lanes that are not a multiple of 16.
      {"f32", "[2,8,8,20]", "[2,4,4,20]", "EQ", "add", "size=1x2x2x1 stride=1x2x2x1"},
      {"f32", "[2,8,8,20]", "[2,3,3,20]", "NE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"f32", "[2,8,8,33]", "[2,3,3,33]", "LT", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"f32", "[2,8,8,33]", "[2,3,3,33]", "LE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      // The same for f64 (eight lanes) and 32- and 64-bit integers, signed
      // and unsigned, with lanes that are not a multiple of the vector.
      {"f64", "[2,8,8,21]", "[2,3,3,21]", "GT", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"f64", "[2,8,8,21]", "[2,3,3,21]", "NE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"s32", "[2,8,8,21]", "[2,3,3,21]", "GE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"u32", "[2,8,8,21]", "[2,3,3,21]", "LE", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"s64", "[2,8,8,21]", "[2,3,3,21]", "GT", "add", "size=1x3x3x1 stride=1x2x2x1"},
      {"u64", "[2,8,8,21]", "[2,3,3,21]", "EQ", "add", "size=1x3x3x1 stride=1x2x2x1"},
      // NCHW: sixteen batch entries at a time as lanes (21 entries: a partial
      // group), vector and scalar blocks.
      {"f32", "[3,7,9,9]", "[3,7,4,4]", "GE", "add", "size=1x1x3x3 stride=1x1x2x2"},
      {"f64", "[3,7,9,9]", "[3,7,4,4]", "GE", "add", "size=1x1x3x3 stride=1x1x2x2"},
      {"s32", "[3,7,9,9]", "[3,7,4,4]", "GE", "maximum", "size=1x1x3x3 stride=1x1x2x2"},
      {"bf16", "[3,7,9,9]", "[3,7,4,4]", "GT", "add", "size=1x1x3x3 stride=1x1x2x2"},
  };
  for (const Case& c : cases) {
    ExpectThunkAndSameBytes(SelectAndScatterProgram(c.type, c.in, c.source, c.direction, c.scatter, c.window),
                            "select-and-scatter", 1);
  }
}

TEST(RuntimeWindowTest, SelectAndScatterOfNaNsAndTiesGivesTheInterpretersBytes) {
  std::unique_ptr<Module> module = testing::ParseOrDie(SelectAndScatterProgram(
      "f32", "[2,9,10,4]", "[2,5,5,4]", "GE", "add", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0"));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments = testing::RandomArguments(*module);
  auto x = arguments[0].data<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (i % 5 == 0) x[i] = std::nanf("");
    if (i % 5 == 1) x[i] = 0.25f;  // ties: the first in window order wins
  }
  testing::ExpectSameBytesOnThreads(*module, arguments);
}

// JAX's max-pool gradient as it exports it: pad the operand with `pad`,
// select-and-scatter (GE unless told, add unless told), slice. Shapes and
// attributes as HLO text pieces.
struct PaddedGradient {
  std::string type, in, pad, padded, source, window, slice, out;
  std::string direction = "GE", scatter = "add", pad_value = "-inf";
  bool broadcast_source = false;  // s = broadcast(c), c a scalar parameter (the gradient of a sum)
};

std::string PaddedGradientProgram(const PaddedGradient& c) {
  return "HloModule m\nselect {\n  a = " + c.type + "[] parameter(0)\n  b = " + c.type +
         "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=" + c.direction + "\n}\n" +
         Reducer("scatter", c.type, c.scatter) + "ENTRY e {\n  x = " + c.type + c.in + " parameter(0)\n" +
         (c.broadcast_source ? "  c = " + c.type + "[] parameter(1)\n  s = " + c.type + c.source +
                                   " broadcast(c), dimensions={}"
                             : "  s = " + c.type + c.source + " parameter(1)") +
         "\n  v = " + c.type + "[] constant(" + c.pad_value + ")\n  p = " + c.type + c.padded +
         " pad(x, v), padding=" + c.pad + "\n  i = " + c.type + "[] constant(0)\n  g = " + c.type + c.padded +
         " select-and-scatter(p, s, i), window={" + c.window +
         "}, select=select, scatter=scatter\n  ROOT o = " + c.type + c.out + " slice(g), slice={" + c.slice +
         "}\n}\n";
}

// The folded program (one padded-select-and-scatter thunk, no kernel for the
// pad or the slice) gives the unfolded program's bytes: the interpreter runs
// the pad, the select-and-scatter and the slice one after the other.
void ExpectFoldedWithTheUnfoldedBytes(const PaddedGradient& c,
                                      const std::vector<Literal>* arguments = nullptr) {
  const std::string text = PaddedGradientProgram(c);
  SCOPED_TRACE(text);
  EXPECT_EQ(testing::CountThunks(text, "padded-select-and-scatter"), 1);
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 0);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectSameBytesOnThreads(*module,
                                    arguments != nullptr ? *arguments : testing::RandomArguments(*module));
}

TEST(RuntimeWindowTest, MaxPoolGradientsPadAndSliceFoldIntoTheSelectAndScatter) {
  const PaddedGradient cases[] = {
      // JAX's SAME max-pool 3x3 stride 2, NHWC.
      {"f32", "[2,16,16,8]", "0_0x1_1x1_1x0_0", "[2,18,18,8]", "[2,8,8,8]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:17], [1:17], [0:8]", "[2,16,16,8]"},
      // Odd extents, padding on one side, a slice that keeps some padding and
      // drops some real positions.
      {"f32", "[3,9,10,5]", "0_0x1_1x0_1x0_0", "[3,11,11,5]", "[3,5,5,5]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:3], [1:10], [0:10], [0:5]", "[3,9,10,5]"},
      {"f32", "[3,9,10,5]", "0_0x1_1x0_1x0_0", "[3,11,11,5]", "[3,5,5,5]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:3], [0:11], [2:9], [0:5]", "[3,11,7,5]"},
      // NCHW (one lane), 1-D, more lanes than one selection chunk.
      {"f32", "[2,3,9,9]", "0_0x0_0x1_1x1_1", "[2,3,11,11]", "[2,3,5,5]", "size=1x1x3x3 stride=1x1x2x2",
       "[0:2], [0:3], [1:10], [1:10]", "[2,3,9,9]"},
      {"f32", "[40]", "2_1", "[43]", "[20]", "size=4 stride=2", "[2:42]", "[40]"},
      {"f32", "[1,7,7,300]", "0_0x1_1x1_1x0_0", "[1,9,9,300]", "[1,4,4,300]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:1], [1:8], [1:8], [0:300]", "[1,7,7,300]"},
      // Padding in the window as well as in the pad; a window of 25 elements
      // (scattered lane by lane).
      {"f32", "[2,8,8,3]", "0_0x1_0x1_0x0_0", "[2,9,9,3]", "[2,4,4,3]",
       "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0", "[0:2], [1:9], [1:9], [0:3]", "[2,8,8,3]"},
      {"f32", "[2,9,9,3]", "0_0x2_2x2_2x0_0", "[2,13,13,3]", "[2,5,5,3]", "size=1x5x5x1 stride=1x2x2x1",
       "[0:2], [2:11], [2:11], [0:3]", "[2,9,9,3]"},
      // Other types, comparisons and scatters (the scalar lane loop).
      {"f64", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,5,5,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]"},
      {"s32", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,5,5,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]", "GE", "add", "-2147483648"},
      {"bf16", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,5,5,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]"},
      {"f32", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,5,5,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]", "GT", "maximum", "0"},
      {"f32", "[2,9,9,20]", "0_0x1_1x1_1x0_0", "[2,11,11,20]", "[2,5,5,20]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:20]", "[2,9,9,20]", "LT", "add", "inf"},
  };
  for (const PaddedGradient& c : cases) ExpectFoldedWithTheUnfoldedBytes(c);
}

TEST(RuntimeWindowTest, FoldedPaddingIsSelectedWhereTheUnfoldedProgramSelectsIt) {
  // -inf everywhere but in a few places: under GE a window whose first
  // element is padding keeps it over real -infs, and the slice drops that
  // gradient; NaNs, signed zeros and ties decide as in the unfolded program.
  PaddedGradient c{"f32",
                   "[2,10,9,4]",
                   "0_0x1_1x1_1x0_0",
                   "[2,12,11,4]",
                   "[2,5,5,4]",
                   "size=1x3x3x1 stride=1x2x2x1",
                   "[0:2], [1:11], [1:10], [0:4]",
                   "[2,10,9,4]"};
  std::unique_ptr<Module> module = testing::ParseOrDie(PaddedGradientProgram(c));
  ASSERT_NE(module, nullptr);
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<Literal> arguments = testing::RandomArguments(*module, static_cast<uint64_t>(pattern) + 3);
    auto x = arguments[0].data<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      switch ((i + static_cast<size_t>(pattern)) % 6) {
        case 0: x[i] = -std::numeric_limits<float>::infinity(); break;
        case 1: x[i] = pattern == 0 ? -std::numeric_limits<float>::infinity() : std::nanf(""); break;
        case 2: x[i] = 0.0f; break;
        case 3: x[i] = -0.0f; break;
        case 4: x[i] = pattern == 2 ? 0.5f : x[i]; break;
        default: break;
      }
    }
    SCOPED_TRACE(pattern);
    ExpectFoldedWithTheUnfoldedBytes(c, &arguments);
  }
}

TEST(RuntimeWindowTest, ScattersThroughTheRingOfResultRowsGiveTheUnfoldedBytes) {
  // The scatters go to a ring of result rows as wide as one window row's
  // span, each row written out once no later window reaches it: spans of
  // 1, 2, 3 and 5 rows (window dilation), rows no window reaches (stride
  // 2 over windows of 1, stride 3 over windows of 2), rows the slice drops on both sides, three window
  // axes (rows of planes), more lanes than one selection chunk (rows copied
  // a chunk at a time) and results past 4 MiB written past the caches, in
  // rows that start anywhere in a cache line (5 lanes).
  const PaddedGradient cases[] = {
      {"f32", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,6,5,4]", "size=1x1x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]"},
      {"f32", "[2,11,10,4]", "0_0x1_0x1_1x0_0", "[2,12,12,4]", "[2,4,4,4]", "size=1x2x2x1 stride=1x3x3x1",
       "[0:2], [1:12], [1:11], [0:4]", "[2,11,10,4]"},
      {"f32", "[2,11,11,4]", "0_0x2_2x2_2x0_0", "[2,15,15,4]", "[2,7,7,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [3:12], [1:14], [0:4]", "[2,9,13,4]"},
      {"f32", "[2,12,12,3]", "0_0x1_1x1_1x0_0", "[2,14,14,3]", "[2,5,5,3]",
       "size=1x3x3x1 stride=1x2x2x1 rhs_dilate=1x2x2x1", "[0:2], [1:13], [1:13], [0:3]", "[2,12,12,3]"},
      {"f32", "[2,6,7,8,3]", "0_0x1_1x1_1x1_1x0_0", "[2,8,9,10,3]", "[2,3,4,4,3]",
       "size=1x3x3x3x1 stride=1x2x2x2x1", "[0:2], [1:7], [1:8], [1:9], [0:3]", "[2,6,7,8,3]"},
      {"f32", "[1,7,7,300]", "0_0x1_1x1_1x0_0", "[1,9,9,300]", "[1,4,4,300]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:1], [1:8], [1:8], [0:300]", "[1,7,7,300]", "GT"},
      {"f32", "[4,230,230,5]", "0_0x1_1x1_1x0_0", "[4,232,232,5]", "[4,115,115,5]",
       "size=1x3x3x1 stride=1x2x2x1", "[0:4], [1:231], [1:231], [0:5]", "[4,230,230,5]"},
      {"f64", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,5,5,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]", "GE", "maximum"},
  };
  for (const PaddedGradient& c : cases) ExpectFoldedWithTheUnfoldedBytes(c);
}

TEST(RuntimeWindowTest, ABroadcastSourceIsReadAsItsOneValue) {
  // JAX's gradient of a max-pool's sum scatters a broadcast of one value:
  // it folds into the thunk (no kernel writes it out), which reads the
  // value for every source position: the vector and scalar blocks, more
  // lanes than one selection chunk, NCHW (batch entries as lanes), bf16.
  PaddedGradient cases[] = {
      {"f32", "[2,16,16,8]", "0_0x1_1x1_1x0_0", "[2,18,18,8]", "[2,8,8,8]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:17], [1:17], [0:8]", "[2,16,16,8]"},
      {"f64", "[2,9,9,4]", "0_0x1_1x1_1x0_0", "[2,11,11,4]", "[2,5,5,4]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:10], [1:10], [0:4]", "[2,9,9,4]", "GE", "maximum"},
      {"f32", "[1,7,7,300]", "0_0x1_1x1_1x0_0", "[1,9,9,300]", "[1,4,4,300]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:1], [1:8], [1:8], [0:300]", "[1,7,7,300]"},
      {"f32", "[2,3,9,9]", "0_0x0_0x1_1x1_1", "[2,3,11,11]", "[2,3,5,5]", "size=1x1x3x3 stride=1x1x2x2",
       "[0:2], [0:3], [1:10], [1:10]", "[2,3,9,9]"},
      {"bf16", "[2,9,9,20]", "0_0x1_1x1_1x0_0", "[2,11,11,20]", "[2,9,9,20]", "size=1x3x3x1",
       "[0:2], [1:10], [1:10], [0:20]", "[2,9,9,20]"},
  };
  for (PaddedGradient& c : cases) {
    c.broadcast_source = true;
    ExpectFoldedWithTheUnfoldedBytes(c);
  }
}

TEST(RuntimeWindowTest, PadsAndSlicesTheThunkCannotTakeStayUnfolded) {
  PaddedGradient interior{"f32",
                          "[2,5,5,3]",
                          "0_0x1_1_1x1_1_1x0_0",
                          "[2,11,11,3]",
                          "[2,5,5,3]",
                          "size=1x3x3x1 stride=1x2x2x1",
                          "[0:2], [1:10], [1:10], [0:3]",
                          "[2,9,9,3]"};
  PaddedGradient strided{"f32",
                         "[2,9,9,3]",
                         "0_0x1_1x1_1x0_0",
                         "[2,11,11,3]",
                         "[2,5,5,3]",
                         "size=1x3x3x1 stride=1x2x2x1",
                         "[0:2], [1:10:2], [1:10], [0:3]",
                         "[2,5,9,3]"};
  PaddedGradient channels{"f32",
                          "[2,9,9,3]",
                          "0_0x1_1x1_1x1_0",
                          "[2,11,11,4]",
                          "[2,5,5,4]",
                          "size=1x3x3x1 stride=1x2x2x1",
                          "[0:2], [1:10], [1:10], [0:4]",
                          "[2,9,9,4]"};
  for (const PaddedGradient& c : {interior, strided, channels}) {
    const std::string text = PaddedGradientProgram(c);
    SCOPED_TRACE(text);
    EXPECT_EQ(testing::CountThunks(text, "padded-select-and-scatter"), 0);
    EXPECT_EQ(testing::CountThunks(text, "select-and-scatter"), 1);
    std::unique_ptr<Module> module = testing::ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    testing::ExpectSameBytesOnThreads(*module, testing::RandomArguments(*module));
  }
}

TEST(RuntimeWindowTest, SelectAndScatterOfF64NaNsAndTiesGivesTheInterpretersBytes) {
  const std::pair<std::string, std::string> windows[] = {
      {"size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0", "[2,5,5,4]"},
      {"size=1x3x1x1 stride=1x2x1x1", "[2,4,10,4]"}};
  for (const auto& [window, source] : windows) {
    std::unique_ptr<Module> module =
        testing::ParseOrDie(SelectAndScatterProgram("f64", "[2,9,10,4]", source, "GE", "add", window));
    ASSERT_NE(module, nullptr);
    std::vector<Literal> arguments = testing::RandomArguments(*module);
    auto x = arguments[0].data<double>();
    for (size_t i = 0; i < x.size(); ++i) {
      if (i % 5 == 0) x[i] = std::nan("");
      if (i % 5 == 1) x[i] = 0.25;  // ties: the first in window order wins
      if (i % 5 == 2) x[i] = i % 2 == 0 ? 0.0 : -0.0;
    }
    SCOPED_TRACE(window);
    testing::ExpectSameBytesOnThreads(*module, arguments);
  }
}

// bf16 arguments of a max-pool gradient (operand, source): operand values
// with -inf, NaNs, ties and signed zeros; source values of many magnitudes
// (each add rounds, so the order of the adds shows in the bytes), a few of
// them infinite (inf + -inf makes a NaN that later adds carry).
void FillBf16Gradient(std::vector<Literal>& arguments, uint64_t seed) {
  std::mt19937_64 random(seed);
  auto x = arguments[0].data<bfloat16>();
  for (bfloat16& value : x) {
    switch (random() % 8) {
      case 0: value = bfloat16(-std::numeric_limits<float>::infinity()); break;
      case 1: value = bfloat16(std::nanf("")); break;
      case 2: value = bfloat16(0.5f); break;
      case 3: value = bfloat16(random() % 2 ? 0.0f : -0.0f); break;
      default: value = bfloat16(static_cast<float>(static_cast<int>(random() % 2001) - 1000) / 64.0f); break;
    }
  }
  auto s = arguments[1].data<bfloat16>();
  for (bfloat16& value : s) {
    const auto mantissa = 1.0f + static_cast<float>(random() % 128) / 128.0f;
    const int exponent = static_cast<int>(random() % 25) - 12;
    const float sign = random() % 2 ? 1.0f : -1.0f;
    value = bfloat16(sign * std::ldexp(mantissa, exponent));
    if (random() % 97 == 0) value = bfloat16(sign * std::numeric_limits<float>::infinity());
  }
}

TEST(RuntimeWindowTest, Bf16MaxPoolGradientsRoundEveryAddAsTheInterpreter) {
  // bf16 selects and adds sixteen lanes to a vector (as f32, each sum
  // rounded to bf16 at once): windows that overlap (stride 1: up to nine
  // adds into one element; stride 2), lanes that are not a multiple of 16
  // and more than one selection chunk, NCHW (batch entries as lanes), every
  // comparison, and JAX's folded -inf pad and slice; bit for bit.
  struct Case {
    std::string in, source, direction, window;
  };
  const Case cases[] = {
      {"[2,9,9,20]", "[2,7,7,20]", "GE", "size=1x3x3x1"},
      {"[2,9,9,20]", "[2,4,4,20]", "GE", "size=1x3x3x1 stride=1x2x2x1"},
      {"[1,6,6,130]", "[1,4,4,130]", "GT", "size=1x3x3x1"},
      {"[3,7,9,9]", "[3,7,7,7]", "GE", "size=1x1x3x3"},
      {"[2,8,8,17]", "[2,6,6,17]", "LE", "size=1x3x3x1"},
      {"[2,8,8,17]", "[2,6,6,17]", "LT", "size=1x3x3x1"},
      {"[2,8,8,17]", "[2,7,7,17]", "EQ", "size=1x2x2x1"},
      {"[2,8,8,17]", "[2,7,7,17]", "NE", "size=1x2x2x1"},
      {"[2,11,12,3]", "[2,7,8,3]", "GE", "size=1x5x5x1"},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    const std::string text = SelectAndScatterProgram("bf16", c.in, c.source, c.direction, "add", c.window);
    SCOPED_TRACE(text);
    EXPECT_EQ(testing::CountThunks(text, "select-and-scatter"), 1);
    std::unique_ptr<Module> module = testing::ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    std::vector<Literal> arguments = testing::RandomArguments(*module);
    FillBf16Gradient(arguments, seed++);
    testing::ExpectSameBytesOnThreads(*module, arguments);
  }
  const PaddedGradient folded[] = {
      {"bf16", "[2,9,9,20]", "0_0x1_1x1_1x0_0", "[2,11,11,20]", "[2,9,9,20]", "size=1x3x3x1",
       "[0:2], [1:10], [1:10], [0:20]", "[2,9,9,20]"},
      {"bf16", "[2,16,16,24]", "0_0x1_1x1_1x0_0", "[2,18,18,24]", "[2,8,8,24]", "size=1x3x3x1 stride=1x2x2x1",
       "[0:2], [1:17], [1:17], [0:24]", "[2,16,16,24]"},
  };
  for (const PaddedGradient& c : folded) {
    std::unique_ptr<Module> module = testing::ParseOrDie(PaddedGradientProgram(c));
    ASSERT_NE(module, nullptr);
    std::vector<Literal> arguments = testing::RandomArguments(*module);
    FillBf16Gradient(arguments, seed++);
    ExpectFoldedWithTheUnfoldedBytes(c, &arguments);
  }
}

TEST(RuntimeWindowTest, WindowsTheThunksDoNotTakeKeepTheirPath) {
  // A reducer that is not one binary op of its parameters, a total-order
  // select, a variadic (two-array) reduce-window.
  const std::string not_plain =
      "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  s = f32[] add(a, b)\n  ROOT c "
      "= "
      "f32[] multiply(s, b)\n}\nENTRY e {\n  x = f32[4,9] parameter(0)\n  i = f32[] constant(0)\n  ROOT w = "
      "f32[4,4] reduce-window(x, i), window={size=1x3 stride=1x2}, to_apply=r\n}\n";
  ExpectThunkAndSameBytes(not_plain, "reduce-window", 0);
  ExpectThunkAndSameBytes(SelectAndScatterProgram("f32", "[2,8,8,3]", "[2,3,3,3]", "GE", "add",
                                                  "size=1x3x3x1 stride=1x2x2x1", ", type=TOTALORDER"),
                          "select-and-scatter", 0);
  const std::string variadic =
      "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = "
      "s32[] "
      "parameter(3)\n  m = f32[] maximum(a, c)\n  n = s32[] add(b, d)\n  ROOT t = (f32[], s32[]) tuple(m, "
      "n)\n}\n"
      "ENTRY e {\n  x = f32[4,9] parameter(0)\n  y = s32[4,9] parameter(1)\n  i = f32[] constant(-inf)\n  j "
      "= "
      "s32[] constant(0)\n  w = (f32[4,4], s32[4,4]) reduce-window(x, y, i, j), window={size=1x3 "
      "stride=1x2}, "
      "to_apply=r\n  ROOT g = f32[4,4] get-tuple-element(w), index=0\n}\n";
  ExpectThunkAndSameBytes(variadic, "reduce-window", 0);
}

}  // namespace
}  // namespace kiln::cpu
