// Cumulative reduce-windows (jnp.cumsum/cumprod/cummax/cummin, forward and
// reverse, along any dimension) run on the CPU backend as a "scan" thunk —
// not as a kernel or library thunk that walks every window — with the
// interpreter's results; windows that are not scans keep the old path.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/scan_thunk.h"
#include "backends/cpu/scan_vectors.h"
#include "core/interpreter/scalar_ops.h"
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

// The arguments of a scan of `reducer` over `type` (f32 or f64): random,
// then marked as MarkScanInput says, exact for reverse scans (whose sums
// and products add from the far end).
std::vector<Literal> MarkedScanArguments(const Module& module, const std::string& type,
                                         const std::string& reducer, bool reverse) {
  std::vector<Literal> arguments = testing::RandomArguments(module);
  if (type == "f32") {
    MarkScanInput<float>(arguments[0], reducer, /*exact=*/reverse);
  } else {
    MarkScanInput<double>(arguments[0], reducer, /*exact=*/reverse);
  }
  return arguments;
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

// f32 (f64) lines of 1024, 2048 and 4096 are a multiple of 4 KiB apart,
// which the vector scan may stagger (scan_vectors.cc), and the neighbours
// 1008 and 1040 are not: for every reducer, lines of 1008, 1024 and 1040
// in two whole groups of lanes-many lines (one call's work on one thread,
// two calls' on more) and a line more (the caller's); for maximum and
// minimum (their NaN and signed-zero rule) f32 lines of 2048 and 4096 in
// one group too.
std::vector<ScanShape> PowerOfTwoScanShapes(const std::string& type, const std::string& reducer) {
  const int64_t lanes = type == "f32" ? kAvx512LaneCount<float> : kAvx512LaneCount<double>;
  std::vector<ScanShape> shapes;
  for (int64_t length : {1008, 1024, 1040}) shapes.push_back({{2 * lanes + 1, length}, 1});
  if (type == "f32" && (reducer == "maximum" || reducer == "minimum")) {
    for (int64_t length : {2048, 4096}) shapes.push_back({{lanes, length}, 1});
  }
  return shapes;
}

// The scan that is `scan` (a reduce-window spanning dimension `axis` whole,
// reverse or not) of `input`, computed in one pass per line with the
// interpreter's scalar operations instead of the interpreter's walk over
// every window (a line's length squared). Forward, element k's window
// folded from the initial value is the fold of element k-1's window and
// then element k: the interpreter's own operations in its order, so its
// bytes for every reducer. Reverse, the window of k folds k, k+1, ... to
// the line's end; the pass runs from the end as op(element k, fold of
// k+1...). For maximum and minimum that is the same fold: both keep the
// window's first NaN and, among equal values, its last (the initial value,
// an infinity, equals no value with other bytes); for sums and products it
// is the same value where any order of the terms rounds alike, as
// MarkScanInput makes them. OnePassScanGivesTheInterpretersBytes checks
// this against the interpreter.
template <typename T>
Literal OnePassScan(const Instruction& scan, int64_t axis, bool reverse, const Literal& input) {
  const std::vector<int64_t>& dims = input.shape().dimensions();
  const int64_t length = dims[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) outer *= dims[d];
    if (static_cast<int64_t>(d) > axis) inner *= dims[d];
  }
  const T initial = scan.operand(1)->literal->data<T>()[0];
  const auto x = input.data<T>();
  Literal result = input;
  const auto out = result.data<T>();
  const Status status = interpreter::WithBinaryOp<T>(scan.called[0]->root()->opcode, [&](auto op) {
    for (int64_t line = 0; line < outer * inner; ++line) {
      const int64_t first = line / inner * length * inner + line % inner;
      T held = initial;
      for (int64_t step = 0; step < length; ++step) {
        const auto k = static_cast<size_t>(first + (reverse ? length - 1 - step : step) * inner);
        held = reverse ? op(x[k], held) : op(held, x[k]);
        out[k] = held;
      }
    }
  });
  EXPECT_TRUE(status.ok()) << status.message();
  return result;
}

Literal OnePassScanOf(const Module& module, const std::string& type, int64_t axis, bool reverse,
                      const Literal& input) {
  const Instruction& scan = *module.entry()->root();
  return type == "f32" ? OnePassScan<float>(scan, axis, reverse, input)
                       : OnePassScan<double>(scan, axis, reverse, input);
}

// The one-pass reference against the interpreter: every f32/f64 reducer,
// forward and reverse, along the last axis, a middle one and the first, on
// marked elements that hold NaNs of different payloads, zeros of both signs
// and infinities (each shape has 5400 elements, so it spans both halves of
// MarkScanInput's pattern, and some lines cross from one to the other).
TEST(RuntimeScanTest, OnePassScanGivesTheInterpretersBytes) {
  const ScanShape shapes[] = {{{45, 120}, 1}, {{3, 20, 90}, 1}, {{60, 90}, 0}};
  for (const std::string type : {"f32", "f64"}) {
    for (const std::string reducer : {"add", "multiply", "maximum", "minimum"}) {
      for (const bool reverse : {false, true}) {
        for (const ScanShape& shape : shapes) {
          const std::string text = ScanProgram(type, shape.dims, reducer, shape.axis, reverse);
          SCOPED_TRACE(text);
          std::unique_ptr<Module> module = testing::ParseOrDie(text);
          ASSERT_NE(module, nullptr);
          const std::vector<Literal> arguments = MarkedScanArguments(*module, type, reducer, reverse);
          interpreter::InterpreterBackend reference;
          KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
          const Literal got = OnePassScanOf(*module, type, shape.axis, reverse, arguments[0]);
          const int64_t at = testing::FirstByteDifference(got, want[0]);
          EXPECT_EQ(at, -1) << "element " << at;
        }
      }
    }
  }
}

// The backend's result of `module` on `arguments` on 1, 2 and 4 threads
// has the bytes of `want`.
void ExpectScanGivesBytesOnThreads(const Module& module, const std::vector<Literal>& arguments,
                                   const Literal& want) {
  for (const int threads : {1, 2, 4}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::RunWithThreads(module, arguments, threads));
    EXPECT_EQ(testing::FirstByteDifference(got, want), -1) << threads << " threads";
  }
}

// Every f32/f64 reducer on every shape, one scan thunk, the interpreter's
// bytes (OnePassScan's) on 1, 2 and 4 threads. Reverse sums and products
// add from the far end, so their inputs are values any order of which
// rounds alike.
void ExpectFloatScansGiveTheInterpretersBytes(bool reverse) {
  for (const std::string type : {"f32", "f64"}) {
    for (const std::string reducer : {"add", "multiply", "maximum", "minimum"}) {
      for (const ScanShape& shape : FloatScanShapes(type)) {
        const std::string text = ScanProgram(type, shape.dims, reducer, shape.axis, reverse);
        SCOPED_TRACE(text);
        ASSERT_EQ(testing::CountThunks(text, "scan"), 1);
        std::unique_ptr<Module> module = testing::ParseOrDie(text);
        ASSERT_NE(module, nullptr);
        const std::vector<Literal> arguments = MarkedScanArguments(*module, type, reducer, reverse);
        ExpectScanGivesBytesOnThreads(*module, arguments,
                                      OnePassScanOf(*module, type, shape.axis, reverse, arguments[0]));
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

// The vector scan of lines [first, last) of `module`'s scan (its root) on
// `input` (the argument's bytes), with the result `ahead` bytes after the
// input modulo 4 KiB (0 to 4095) in one arena: `lines_per_call` lines a
// call (the thread pool's ranges: whole groups of lanes), as the scan thunk
// calls it. The lines it left (a short last group) stay zero.
template <typename T>
std::vector<T> ScanInLanesAt(const Module& module, const Literal& input, int64_t ahead,
                             int64_t lines_per_call) {
  const std::optional<ScanGeometry> geometry = PlanScan(*module.entry()->root());
  EXPECT_TRUE(geometry.has_value());
  if (!geometry) return {};
  T initial;
  std::memcpy(&initial, &geometry->initial_bits, sizeof(T));
  const int64_t elements = geometry->outer * geometry->length;
  constexpr int64_t kPage = 4096;
  const int64_t span = (elements * static_cast<int64_t>(sizeof(T)) + kPage - 1) / kPage * kPage;
  std::vector<std::byte> arena(static_cast<size_t>(2 * span + 4 * kPage));
  const auto base = reinterpret_cast<uintptr_t>(arena.data());
  auto* in = reinterpret_cast<T*>((base + kPage - 1) / kPage * kPage);
  auto* out =
      reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(in) + static_cast<uintptr_t>(span + kPage + ahead));
  std::memcpy(in, input.raw().data(), static_cast<size_t>(elements) * sizeof(T));
  std::fill(out, out + elements, T(0));
  for (int64_t first = 0; first < geometry->outer; first += lines_per_call) {
    const int64_t last = std::min(geometry->outer, first + lines_per_call);
    const int64_t scanned = ScanLinesInLanes<T>(*geometry, initial, in, out, first, last, /*stream=*/false);
    const int64_t short_group = (last - first) % kAvx512LaneCount<T>;  // left to the caller if under half
    EXPECT_EQ(scanned, last - first - (2 * short_group < kAvx512LaneCount<T> ? short_group : 0));
  }
  return std::vector<T>(out, out + elements);
}

// Lines a multiple of 4 KiB apart share their low 12 address bits, so the
// vector scan staggers its lanes (scan_vectors.cc) where the result sits a
// block or two ahead of the input modulo 4 KiB, as malloc places two
// buffers one after the other: each f32/f64 reducer, forward and reverse,
// with the result at each such distance and at others, split into calls
// as the thread pool splits the lines on 1, 2 and 4 threads, gives the
// interpreter's bytes (the lines it scans; a last short group is the
// caller's). The whole backend gives them too, wherever it puts the result.
// The interpreter's bytes are OnePassScan's.
TEST(RuntimeScanTest, LinesOfPowerOfTwoLengthsGiveTheInterpretersBytesWhereverTheResultSits) {
  if (!HasAvx512Lanes()) GTEST_SKIP() << "this CPU has no AVX-512F: the scans run a line at a time";
  for (const std::string type : {"f32", "f64"}) {
    const int64_t lanes = type == "f32" ? kAvx512LaneCount<float> : kAvx512LaneCount<double>;
    for (const std::string reducer : {"add", "multiply", "maximum", "minimum"}) {
      for (const bool reverse : {false, true}) {
        for (const ScanShape& shape : PowerOfTwoScanShapes(type, reducer)) {
          const std::string text = ScanProgram(type, shape.dims, reducer, shape.axis, reverse);
          SCOPED_TRACE(text);
          std::unique_ptr<Module> module = testing::ParseOrDie(text);
          ASSERT_NE(module, nullptr);
          const std::vector<Literal> arguments = MarkedScanArguments(*module, type, reducer, reverse);
          const Literal want = OnePassScanOf(*module, type, shape.axis, reverse, arguments[0]);
          const int64_t lines = shape.dims[0], length = shape.dims[1];
          const int64_t width = type == "f32" ? 4 : 8;
          for (const int64_t ahead : {0, 64, 128, 1024, 4096 - 128, 4096 - 64}) {
            for (const int64_t threads : {1, 2, 4}) {
              const int64_t tasks = (lines + lanes - 1) / lanes;
              const int64_t lines_per_call = (tasks + threads - 1) / threads * lanes;
              SCOPED_TRACE("result " + std::to_string(ahead) + " bytes ahead, " + std::to_string(threads) +
                           " threads");
              std::vector<std::byte> got(static_cast<size_t>(lines * length * width));
              if (type == "f32") {
                const std::vector<float> values =
                    ScanInLanesAt<float>(*module, arguments[0], ahead, lines_per_call);
                std::memcpy(got.data(), values.data(), got.size());
              } else {
                const std::vector<double> values =
                    ScanInLanesAt<double>(*module, arguments[0], ahead, lines_per_call);
                std::memcpy(got.data(), values.data(), got.size());
              }
              const int64_t checked = lines / lanes * lanes * length * width;  // whole groups
              EXPECT_EQ(std::memcmp(got.data(), want.raw().data(), static_cast<size_t>(checked)), 0);
            }
          }
          ExpectScanGivesBytesOnThreads(*module, arguments, want);
        }
      }
    }
  }
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
