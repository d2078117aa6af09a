// Average pooling's divide runs inside its reduce-window
// (core/passes/reduce_window_epilogue_folding.h, backends/cpu/window_thunk.h):
// one "reduce-window-epilogue" thunk, no kernel, with the interpreter's
// results exactly (the windowed sum in the window's order, then the op in
// the element type), on 1, 2 and 4 threads; what the thunk cannot take
// keeps its kernel.
#include <memory>
#include <string>

#include "backends/cpu/window_thunk.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

// op(reduce-window(x, init) of `reducer`, broadcast(constant(`scalar`))).
std::string PooledEpilogueProgram(const std::string& type, const std::string& in_shape,
                                  const std::string& out_shape, const std::string& reducer,
                                  const std::string& init, const std::string& window, const std::string& op,
                                  const std::string& scalar) {
  return "HloModule m\nr {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + reducer + "(a, b)\n}\nENTRY e {\n  x = " + type +
         in_shape + " parameter(0)\n  i = " + type + "[] constant(" + init + ")\n  w = " + type + out_shape +
         " reduce-window(x, i), window={" + window + "}, to_apply=r\n  n = " + type + "[] constant(" +
         scalar + ")\n  d = " + type + out_shape + " broadcast(n), dimensions={}\n  ROOT o = " + type +
         out_shape + " " + op + "(w, d)\n}\n";
}

void ExpectFoldedAndExact(const std::string& text) {
  SCOPED_TRACE(text);
  EXPECT_EQ(testing::CountThunks(text, "reduce-window-epilogue"), 1);
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 0);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectSameBytesOnThreads(*module, testing::RandomArguments(*module));
}

TEST(RuntimeWindowEpilogueTest, AveragePoolingDividesInsideItsReduceWindow) {
  struct Case {
    std::string type, in, out, init, window, op, scalar;
  };
  const Case cases[] = {
      // JAX's avg_pool 3x3 stride 2, NHWC, SAME and VALID; more channels
      // than one lane chunk; odd channel counts (a vector loop's tail).
      {"f32", "[2,9,10,5]", "[2,5,5,5]", "0", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0", "divide",
       "9"},
      {"f32", "[2,9,10,64]", "[2,4,4,64]", "0", "size=1x3x3x1 stride=1x2x2x1", "divide", "9"},
      {"f32", "[1,6,6,600]", "[1,3,3,600]", "0", "size=1x2x2x1 stride=1x2x2x1", "divide", "4"},
      // NCHW (one lane), a multiply by 1/9, other ops, f64 and half floats.
      {"f32", "[2,3,9,9]", "[2,3,4,4]", "0", "size=1x1x3x3 stride=1x1x2x2", "multiply", "0.111111111"},
      {"f32", "[4,20]", "[4,10]", "1.5", "size=1x4 stride=1x2 pad=0_0x1_1", "subtract", "0.75"},
      {"f64", "[3,7,8,4]", "[3,7,8,4]", "0", "size=1x3x3x1 pad=0_0x1_1x1_1x0_0", "divide", "9"},
      {"f64", "[2,5,6,3]", "[2,4,5,3]", "0", "size=1x2x2x1", "add", "-2.5"},
      {"bf16", "[2,8,8,3]", "[2,4,4,3]", "0", "size=1x2x2x1 stride=1x2x2x1", "divide", "4"},
      {"f16", "[2,8,8,3]", "[2,3,3,3]", "0", "size=1x3x3x1 stride=1x2x2x1", "divide", "9"},
  };
  for (const Case& c : cases) {
    ExpectFoldedAndExact(PooledEpilogueProgram(c.type, c.in, c.out, "add", c.init, c.window, c.op, c.scalar));
  }
}

TEST(RuntimeWindowEpilogueTest, DividingByZeroGivesTheInterpretersInfinitiesAndNaNs) {
  // 0/0 is NaN, x/0 an infinity of x's sign: the same as the unfolded divide.
  ExpectFoldedAndExact(PooledEpilogueProgram("f32", "[2,9,10,5]", "[2,5,5,5]", "add", "0",
                                             "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0", "divide",
                                             "0"));
}

TEST(RuntimeWindowEpilogueTest, MaxPoolingScaledFoldsToo) {
  ExpectFoldedAndExact(PooledEpilogueProgram("f32", "[2,9,10,5]", "[2,5,5,5]", "maximum", "-inf",
                                             "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0", "multiply",
                                             "2"));
}

TEST(RuntimeWindowEpilogueTest, IntegerPoolingKeepsItsDivideKernel) {
  // XLA's integer divide (x/0 = -1) is not the thunk's: the kernel keeps it.
  const std::string text = PooledEpilogueProgram("s32", "[3,11,6]", "[3,5,6]", "add", "0",
                                                 "size=1x3x1 stride=1x2x1", "divide", "3");
  SCOPED_TRACE(text);
  EXPECT_EQ(testing::CountThunks(text, "reduce-window-epilogue"), 0);
  EXPECT_EQ(testing::CountThunks(text, "reduce-window"), 1);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectSameBytesOnThreads(*module, testing::RandomArguments(*module));
}

TEST(RuntimeWindowEpilogueTest, OtherFusionsOfThreeOperandsAreNotFolds) {
  // Kernels shaped like the fold (op(x, broadcast(s)) over three operands)
  // whose op's first operand is not a reduce-window: a parameter (no
  // operands to look at) or a binary op of two parameters.
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
fused {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  p2 = f32[] parameter(2)
  m = f32[8] multiply(p0, p1)
  b = f32[8] broadcast(p2), dimensions={}
  d = f32[8] divide(p0, b)
  ROOT t = (f32[8], f32[8]) tuple(d, m)
}
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[] parameter(2)
  ROOT f = (f32[8], f32[8]) fusion(x, y, s), kind=kLoop, calls=fused
}
)");
  ASSERT_NE(module, nullptr);
  Instruction* fusion = module->entry()->root();
  Computation& fused = *fusion->called[0];
  for (const char* root : {"d", "m"}) {
    for (const auto& instruction : fused.instructions()) {
      if (instruction->name == root) fused.set_root(instruction.get());
    }
    fusion->shape = fused.root()->shape;
    EXPECT_FALSE(PlanFoldedReduceWindow(*fusion).has_value()) << root;
  }
}

}  // namespace
}  // namespace kiln::cpu
