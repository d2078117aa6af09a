// Cumulative reduce-windows (jnp.cumsum/cumprod/cummax/cummin, forward and
// reverse, along any dimension) run on the CPU backend as a "scan" thunk —
// not as a kernel or library thunk that walks every window — with the
// interpreter's results; windows that are not scans keep the old path.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/scan_thunk.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

// A reduce-window of `reducer` (add, multiply, maximum, minimum) over `type`
// with initial value `init`, on `shape`, windowed as `window`; the input goes
// through a negate first and the result through an abs after, so the scan
// sits between fusible neighbours.
std::string Program(const std::string& type, const std::string& shape, const std::string& reducer,
                    const std::string& init, const std::string& window) {
  return "HloModule m\nr {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + reducer + "(a, b)\n}\nENTRY e {\n  x = " + type +
         shape + " parameter(0)\n  n = " + type + shape + " negate(x)\n  i = " + type + "[] constant(" +
         init + ")\n  w = " + type + shape + " reduce-window(n, i), window={" + window +
         "}, to_apply=r\n  ROOT o = " + type + shape + " abs(w)\n}\n";
}

TEST(RuntimeScanTest, CumulativeReductionsRunAsScansWithTheInterpretersResults) {
  struct Case {
    std::string type, shape, reducer, init, window;
    double tolerance;
  };
  const Case cases[] = {
      // jnp.cumsum along the last axis, and along the first (an inner dimension of 300 lines).
      {"f32", "[37,300]", "add", "0", "size=1x300 pad=0_0x299_0", 1e-3},
      {"f32", "[37,300]", "add", "0", "size=37x1 pad=36_0x0_0", 1e-4},
      // reverse=True
      {"f32", "[5,64,9]", "add", "0", "size=1x64x1 pad=0_0x0_63x0_0", 1e-4},
      {"f64", "[3,50]", "multiply", "1", "size=1x50 pad=0_0x49_0", 1e-9},
      {"f32", "[4,33]", "maximum", "-inf", "size=1x33 pad=0_0x32_0", 0},
      {"f16", "[4,33]", "minimum", "inf", "size=1x33 pad=0_0x32_0", 0},
      {"s32", "[6,40]", "add", "0", "size=1x40 pad=0_0x39_0", 0},
      {"s32", "[6,40]", "maximum", "-2147483648", "size=1x40 pad=0_0x39_0", 0},
      {"s8", "[6,40]", "minimum", "127", "size=6x1 pad=5_0x0_0", 0},
  };
  for (const Case& c : cases) {
    const std::string text = Program(c.type, c.shape, c.reducer, c.init, c.window);
    SCOPED_TRACE(c.type + c.shape + " " + c.reducer + " " + c.window);
    EXPECT_EQ(testing::CountThunks(text, "scan"), 1);
    testing::ExpectMatchesInterpreter(text, c.tolerance);
  }
}

TEST(RuntimeScanTest, WindowsThatAreNotScansKeepTheirPath) {
  // A shorter window, an initial value that is not the identity, a
  // reducer that is not one binary op of its parameters.
  const std::string not_scans[] = {
      Program("f32", "[4,16]", "add", "0", "size=1x8 pad=0_0x7_0"),
      Program("f32", "[4,16]", "add", "1", "size=1x16 pad=0_0x15_0"),
      Program("f32", "[4,16]", "maximum", "0", "size=1x16 pad=0_0x15_0"),
      Program("f32", "[4,16]", "add", "0", "size=2x16 pad=1_0x15_0"),
  };
  for (const std::string& text : not_scans) {
    SCOPED_TRACE(text);
    EXPECT_EQ(testing::CountThunks(text, "scan"), 0);
    testing::ExpectMatchesInterpreter(text, 1e-4);
  }
}

TEST(RuntimeScanTest, ManyThreadsGiveTheSameScan) {
  // Lines split over tasks: 64 outer lines of 2000 inner columns.
  std::unique_ptr<Module> module =
      testing::ParseOrDie(Program("f32", "[64,3,2000]", "add", "0", "size=1x3x1 pad=0_0x2_0x0_0"));
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 1e-4);
}

// reduce-window(x, identity) of `reducer` on `shape`, the window spanning
// dimension `axis` whole, padded before it (forward) or after (reverse).
std::string ScanProgram(const std::string& type, const std::vector<int64_t>& shape,
                        const std::string& reducer, int64_t axis, bool reverse) {
  std::string dims, sizes, pads;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool scanned = static_cast<int64_t>(d) == axis;
    const std::string sep = d == 0 ? "" : "x";
    dims += (d == 0 ? "" : ",") + std::to_string(shape[d]);
    sizes += sep + (scanned ? std::to_string(shape[d]) : "1");
    const std::string edge = std::to_string(shape[d] - 1);
    pads += sep + (!scanned ? "0_0" : reverse ? "0_" + edge : edge + "_0");
  }
  const std::string init = reducer == "add"        ? "0"
                           : reducer == "multiply" ? "1"
                           : reducer == "maximum"  ? "-inf"
                                                   : "inf";
  return "HloModule m\nr {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + reducer + "(a, b)\n}\nENTRY e {\n  x = " + type +
         "[" + dims + "] parameter(0)\n  i = " + type + "[] constant(" + init + ")\n  ROOT w = " + type +
         "[" + dims + "] reduce-window(x, i), window={size=" + sizes + " pad=" + pads + "}, to_apply=r\n}\n";
}

// Values whose bytes tell orders apart. Maxima and minima: in half of the
// elements (blocks of 2500) values of one sign, the running maximum's side
// (<= 0 for maxima, >= 0 for minima) with zeros of both signs often, so the
// rule for equal zeros shows; in the other half NaNs of different signs and
// payloads and infinities of both signs. Sums and products get zeros and
// infinities (their NaNs are all the default NaN, as which of two NaN
// operands an add returns is the compiler's choice). `exact`: small
// integers for sums, powers of two for products, so that any order of the
// same terms rounds alike (a reverse scan's sums and products add from the
// far end, the window from the near one).
template <typename T>
void MarkScanInput(Literal& literal, const std::string& reducer, bool exact) {
  auto x = literal.data<T>();
  const bool extremum = reducer == "maximum" || reducer == "minimum";
  for (size_t i = 0; i < x.size(); ++i) {
    if (exact && reducer == "add") x[i] = std::round(x[i] * 1000);
    if (exact && reducer == "multiply") {  // rarely 0.5 or 2, so no product leaves the range
      x[i] = x[i] < -0.95 ? T(0.5) : x[i] > 0.95 ? T(2) : x[i] < 0 ? T(-1) : T(1);
    }
    if (!exact && reducer == "multiply") x[i] = 1 + x[i] / 64;  // factors near 1: no early underflow
    if (extremum && i % 5000 < 2500) {
      const T one_side = reducer == "maximum" ? -std::abs(x[i]) : std::abs(x[i]);
      x[i] = i % 7 == 2 ? (i % 2 == 0 ? T(0) : -T(0)) : one_side;
      continue;
    }
    if (extremum && i % 53 == 7) {
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      const Bits quiet = static_cast<Bits>(sizeof(T) == 4 ? 0x7fc00000ull : 0x7ff8000000000000ull);
      const Bits sign = Bits{1} << (8 * sizeof(T) - 1);
      const Bits bits = quiet | static_cast<Bits>(i) | (i % 3 == 0 ? sign : Bits{0});
      std::memcpy(&x[i], &bits, sizeof(bits));
    }
    if (i % 41 == 3) x[i] = i % 2 == 0 ? T(0) : -T(0);
    if ((extremum || !exact) && i % 197 == 11) x[i] = (i % 2 ? 1 : -1) * std::numeric_limits<T>::infinity();
  }
}

struct ScanShape {
  std::vector<int64_t> dims;
  int64_t axis;
};

// Shapes that reach every path of the f32/f64 scans: along the last axis,
// groups of 16 (8) lines with a remainder scanned one line at a time (37
// lines) or in partly idle lanes (45), short lines, lines of one partial
// block, long lines; along other axes, column blocks with a masked
// remainder, several outer blocks, and results of 4 MiB or more (stored
// non-temporally).
std::vector<ScanShape> FloatScanShapes(const std::string& type) {
  std::vector<ScanShape> shapes = {
      {{37, 300}, 1}, {{45, 17}, 1},  {{20, 3}, 1},      {{9, 700}, 1},     {{16, 1000}, 1},
      {{3, 5}, 1},    {{300, 37}, 0}, {{5, 70, 300}, 1}, {{40, 2, 129}, 0},
  };
  const int64_t streamed = type == "f32" ? 65600 : 32800;  // 4.2 MB results
  shapes.push_back({{streamed, 16}, 1});
  shapes.push_back({{16, streamed}, 0});
  return shapes;
}

// Every f32/f64 reducer on every shape, one scan thunk, the interpreter's
// bytes on 1, 2 and 4 threads. Reverse sums and products add from the far
// end, so their inputs are values any order of which rounds alike.
void ExpectFloatScansGiveTheInterpretersBytes(bool reverse) {
  for (const std::string type : {"f32", "f64"}) {
    for (const std::string reducer : {"add", "multiply", "maximum", "minimum"}) {
      for (const ScanShape& shape : FloatScanShapes(type)) {
        const std::string text = ScanProgram(type, shape.dims, reducer, shape.axis, reverse);
        SCOPED_TRACE(text);
        ASSERT_EQ(testing::CountThunks(text, "scan"), 1);
        std::unique_ptr<Module> module = testing::ParseOrDie(text);
        ASSERT_NE(module, nullptr);
        std::vector<Literal> arguments = testing::RandomArguments(*module);
        if (type == "f32") {
          MarkScanInput<float>(arguments[0], reducer, /*exact=*/reverse);
        } else {
          MarkScanInput<double>(arguments[0], reducer, /*exact=*/reverse);
        }
        testing::ExpectSameBytesOnThreads(*module, arguments);
      }
    }
  }
}

TEST(RuntimeScanTest, FloatScansGiveTheInterpretersBytesOnAnyThreads) {
  ExpectFloatScansGiveTheInterpretersBytes(/*reverse=*/false);
}

TEST(RuntimeScanTest, ReverseFloatScansGiveTheInterpretersBytesOnAnyThreads) {
  ExpectFloatScansGiveTheInterpretersBytes(/*reverse=*/true);
}

TEST(RuntimeScanTest, ScalarScansOfExtremaGiveTheInterpretersBytes) {
  // f16 and bf16 scan one line at a time: the interpreter's NaN and
  // signed-zero rule there too, forward and reverse.
  for (const std::string type : {"f16", "bf16"}) {
    for (const std::string reducer : {"maximum", "minimum"}) {
      for (bool reverse : {false, true}) {
        const std::string text = ScanProgram(type, {25, 40}, reducer, 1, reverse);
        SCOPED_TRACE(text);
        ASSERT_EQ(testing::CountThunks(text, "scan"), 1);
        std::unique_ptr<Module> module = testing::ParseOrDie(text);
        ASSERT_NE(module, nullptr);
        std::vector<Literal> arguments = testing::RandomArguments(*module);
        // As MarkScanInput: one sign and zeros in half of the elements, NaNs in the other.
        auto bits = arguments[0].raw();
        for (size_t i = 0; i + 1 < bits.size(); i += 2) {
          const size_t element = i / 2;
          const uint16_t quiet = type == "f16" ? 0x7e00 : 0x7fc0;
          uint16_t value;
          std::memcpy(&value, &bits[i], 2);
          if (element % 500 < 250) {
            value = reducer == "maximum" ? static_cast<uint16_t>(value | 0x8000)
                                         : static_cast<uint16_t>(value & 0x7fff);
            if (element % 7 == 2) value = element % 2 ? 0x8000 : 0;
          } else if (element % 37 == 5) {
            value = static_cast<uint16_t>(quiet | (element % 31) | (element % 2 ? 0x8000 : 0));
          }
          std::memcpy(&bits[i], &value, 2);
        }
        testing::ExpectSameBytesOnThreads(*module, arguments);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::cpu
