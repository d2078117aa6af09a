// Cumulative reduce-windows (jnp.cumsum/cumprod/cummax/cummin, forward and
// reverse, along any dimension) run on the CPU backend as a "scan" thunk —
// not as a kernel or library thunk that walks every window — with the
// interpreter's results; windows that are not scans keep the old path.
#include <string>

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

}  // namespace
}  // namespace kiln::cpu
