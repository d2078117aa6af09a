// Compile tiers: how much work a kernel is estimated to do, which tier that
// picks, and that quick-tier and optimised kernels compute the same results,
// also when one Compile call mixes them.
#include "backends/cpu/codegen/compile_tier.h"
#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

using codegen::ChooseCompileTier;
using codegen::CompileTier;
using codegen::EstimatedIterations;

int64_t IterationsOf(const std::string& hlo) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? EstimatedIterations(*(*module)->entry()) : -1;
}

TEST(CompileTier, ElementwiseCountsEachInstructionsElements) {
  // Two instructions of 32 elements; parameters and constants run no loop.
  EXPECT_EQ(IterationsOf(R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  k = f32[] constant(2)
  b = f32[4,8] broadcast(k), dimensions={}
  ROOT m = f32[4,8] multiply(a, b)
})"),
            64);
}

TEST(CompileTier, ReductionWalksItsOperand) {
  EXPECT_EQ(IterationsOf(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[64,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(a, z), dimensions={1}, to_apply=add
})"),
            64 * 64);
}

TEST(CompileTier, DotMultipliesResultsByTheContraction) {
  EXPECT_EQ(IterationsOf(R"(HloModule m
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,8] parameter(1)
  ROOT d = f32[4,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"),
            4 * 8 * 6);
}

TEST(CompileTier, ConvolutionMultipliesResultsByWindowAndInputFeatures) {
  // 1x4x6x6 results, each of a 3x3 window over 2 input features.
  EXPECT_EQ(IterationsOf(R"(HloModule m
ENTRY e {
  x = f32[1,2,8,8] parameter(0)
  w = f32[4,2,3,3] parameter(1)
  ROOT c = f32[1,4,6,6] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01
})"),
            1 * 4 * 6 * 6 * 3 * 3 * 2);
}

TEST(CompileTier, ReduceWindowMultipliesResultsByTheWindow) {
  EXPECT_EQ(IterationsOf(R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY e {
  a = f32[8,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,4] reduce-window(a, z), window={size=2x2 stride=2x2}, to_apply=max
})"),
            4 * 4 * 2 * 2);
}

TEST(CompileTier, HugeShapesSaturateInsteadOfOverflowing) {
  const int64_t iterations = IterationsOf(R"(HloModule m
ENTRY e {
  a = f32[4000000,4000000] parameter(0)
  b = f32[4000000,4000000] parameter(1)
  ROOT d = f32[4000000,4000000] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_GE(iterations, int64_t{1} << 62);
}

TEST(CompileTier, LimitSeparatesTheTiers) {
  auto module =
      ParseHloModule("HloModule m\nENTRY e {\n  a = f32[32] parameter(0)\n  ROOT n = f32[32] negate(a)\n}\n");
  ASSERT_TRUE(module.ok());
  EXPECT_EQ(ChooseCompileTier(*(*module)->entry(), 32), CompileTier::kQuick);
  EXPECT_EQ(ChooseCompileTier(*(*module)->entry(), 31), CompileTier::kOptimized);
  EXPECT_EQ(ChooseCompileTier(*(*module)->entry(), 0), CompileTier::kOptimized);
}

// A chain of `count` negates of f32[`elements`].
std::string TierNegateChain(int count, int elements) {
  const std::string shape = "f32[" + std::to_string(elements) + "]";
  std::string text = "HloModule m\nENTRY e {\n  x0 = " + shape + " parameter(0)\n";
  for (int i = 1; i <= count; ++i) {
    text += std::string(i == count ? "  ROOT x" : "  x") + std::to_string(i) + " = " + shape + " negate(x" +
            std::to_string(i - 1) + ")\n";
  }
  return text + "}\n";
}

TEST(CompileTier, LargeKernelsOverFewElementsTakeTheQuickTier) {
  const int64_t limit = codegen::kQuickTierMaxIterations;
  const int reference = static_cast<int>(codegen::kQuickTierReferenceInstructions);
  const int elements = static_cast<int>(limit / reference);  // 16 by default
  auto tier = [&](int count, int chain_elements, int64_t chosen_limit) {
    auto module = ParseHloModule(TierNegateChain(count, chain_elements));
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    return module.ok() ? ChooseCompileTier(*(*module)->entry(), chosen_limit) : CompileTier::kOptimized;
  };
  // At the reference size the total decides; past it, the iterations per
  // instruction: 65 or 4000 instructions over 16 elements stay quick.
  EXPECT_EQ(tier(reference, elements, limit), CompileTier::kQuick);
  EXPECT_EQ(tier(reference + 1, elements, limit), CompileTier::kQuick);
  EXPECT_EQ(tier(4000, elements, limit), CompileTier::kQuick);
  // One more element per instruction, and they are optimised.
  EXPECT_EQ(tier(reference, elements + 1, limit), CompileTier::kOptimized);
  EXPECT_EQ(tier(4000, elements + 1, limit), CompileTier::kOptimized);
  // A limit of 0 still optimises everything.
  EXPECT_EQ(tier(4000, elements, 0), CompileTier::kOptimized);
}

TEST(CompileTier, NegativeLimitIsRefused) {
  KernelCompilerOptions options;
  options.quick_tier_max_iterations = -1;
  auto compiler = KernelCompiler::Create(options);
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compiler.status().message().find("quick_tier_max_iterations"), std::string::npos);
}

// One small and one large softmax-like kernel in one Compile call, under
// limits that put both, one, or neither in the quick tier: every combination
// must agree with the interpreter.
TEST(CompileTier, MixedTiersInOneCompileAgreeWithTheInterpreter) {
  auto make = [](int64_t rows, int64_t columns) {
    const std::string shape = "f32[" + std::to_string(rows) + "," + std::to_string(columns) + "]";
    const std::string row = "f32[" + std::to_string(rows) + "]";
    return "HloModule m\nmax {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT m = f32[] "
           "maximum(x, y)\n}\nENTRY e {\n  a = " +
           shape + " parameter(0)\n  z = f32[] constant(-inf)\n  r = " + row +
           " reduce(a, z), dimensions={1}, to_apply=max\n  b = " + shape +
           " broadcast(r), dimensions={0}\n  s = " + shape + " subtract(a, b)\n  ROOT x = " + shape +
           " exponential(s)\n}\n";
  };
  auto small = ParseHloModule(make(3, 5));
  auto large = ParseHloModule(make(40, 300));
  ASSERT_TRUE(small.ok() && large.ok());
  const Literal small_input = MakeInput(Shape(ElementType::kF32, {3, 5}), 11);
  const Literal large_input = MakeInput(Shape(ElementType::kF32, {40, 300}), 12);
  auto expected_small = RunInterpreter(**small, {small_input});
  auto expected_large = RunInterpreter(**large, {large_input});
  ASSERT_TRUE(expected_small.ok() && expected_large.ok());
  for (int64_t limit : {int64_t{0}, codegen::kQuickTierMaxIterations, int64_t{1} << 40}) {
    KernelCompilerOptions options;
    options.quick_tier_max_iterations = limit;
    auto compiler = KernelCompiler::Create(options);
    ASSERT_TRUE(compiler.ok()) << compiler.status().ToString();
    const KernelDescription requests[] = {DescribeKernel(*(*small)->entry(), "small"),
                                          DescribeKernel(*(*large)->entry(), "large")};
    auto compiled = (*compiler)->Compile(requests);
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    const std::string what = "limit " + std::to_string(limit);
    ExpectNear((*expected_small)[0], RunCompiled(**compiled, **small, {small_input}, 2, 0)[0],
               what + " small");
    ExpectNear((*expected_large)[0], RunCompiled(**compiled, **large, {large_input}, 2, 1)[0],
               what + " large");
  }
}

}  // namespace
}  // namespace kiln::cpu::testing
