// bf16 x bf16 -> f32 dots (JAX's preferred_element_type=f32), bf16 -> bf16
// ones and f16 x f16 -> f32 on the CPU backend: which path each takes
// (oneDNN's matmul on the CPU's bf16 instructions where the host has them,
// else the f32 path on widened operands), and their values against the
// interpreter, within the bound below, for odd shapes, K = 1, batch
// dimensions, transposed operands, large and subnormal magnitudes, NaN and
// infinities, on one and two threads. ctest runs them again with oneDNN held
// to AVX512_CORE_VNNI (the .onednn_no_bf16 variant), where the f32 path runs
// them on any host.
//
// The bound. Each product of two bf16 (or f16) values is exact in f32, so
// the interpreter and the backend both add the same K exact terms p_k in
// f32, in different orders (vdpbf16ps adds pairs). Any order of K - 1
// additions, each rounded to nearest (unit roundoff u = 2^-24), is within
// gamma_K * S of the exact sum, with S = sum |p_k| and
// gamma_K = K u / (1 - K u) (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., section 4.2), so the two differ by at most
// 2 gamma_K S. S is the interpreter's dot of the operands' magnitudes, itself
// within a factor (1 - gamma_K) of the exact one. vdpbf16ps also flushes
// subnormal inputs, products and partial sums to zero; each of the at most
// 4 K flushes per element (two inputs, a product, a sum per term) moves the
// sum by less than 2^-126 * max(1, largest operand magnitude). A bf16 result
// is then rounded once more on both sides: one bf16 unit (2^-7 relative) more.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/onednn_matmul.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ParseOrDie;

// Whether the host's CPU has AVX512-BF16 (CPUID leaf 7, subleaf 1, EAX bit 5).
bool HostHasAvx512Bf16() { return __builtin_cpu_supports("avx512bf16") != 0; }

// Whether oneDNN may use them here: no ONEDNN_MAX_CPU_ISA below them.
bool OneDnnMayUseBf16Instructions() {
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap == nullptr) return true;
  const std::string isa = cap;
  return isa == "ALL" || isa.find("BF16") != std::string::npos || isa.find("AMX") != std::string::npos;
}

// Whether large bf16 dots should run on oneDNN's bf16 matmul in this test run.
bool ExpectBf16OnOneDnn() {
  return OneDnnMatmul::Available() && HostHasAvx512Bf16() && OneDnnMayUseBf16Instructions();
}

enum class LowPrecisionRoute { kOneDnnLowPrecision, kWidenedToF32, kOther };

// How the dot thunk PlanDot makes for the root of `text` runs it.
LowPrecisionRoute LowPrecisionRootRoute(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return LowPrecisionRoute::kOther;
  std::optional<DotPlan> plan = PlanDot(*module->entry()->root());
  if (!plan.has_value()) return LowPrecisionRoute::kOther;
  DotThunk thunk(0, 1, 2, plan->geometry);
  if (thunk.uses_onednn()) return LowPrecisionRoute::kOneDnnLowPrecision;
  return thunk.widens_to_f32() ? LowPrecisionRoute::kWidenedToF32 : LowPrecisionRoute::kOther;
}

LowPrecisionRoute ExpectedBf16Route() {
  return ExpectBf16OnOneDnn() ? LowPrecisionRoute::kOneDnnLowPrecision : LowPrecisionRoute::kWidenedToF32;
}

double DotElementAsDouble(const Literal& literal, size_t i) {
  double value = 0;
  DispatchElementType(literal.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half>)
      value = static_cast<double>(static_cast<float>(literal.data<T>()[i]));
  });
  return value;
}

// `literal` (floating point) with each element mapped by `fn` (float to float).
template <typename Fn>
Literal MapFloatElements(const Literal& literal, Fn fn) {
  Literal mapped = literal;
  DispatchElementType(mapped.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half>) {
      for (T& value : mapped.data<T>()) value = static_cast<T>(fn(static_cast<float>(value)));
    }
  });
  return mapped;
}

// Unit roundoff of a result type: its rounding of the f32 sum.
double ResultRoundoff(ElementType type) {
  switch (type) {
    case ElementType::kBF16: return std::ldexp(1.0, -8);
    case ElementType::kF16: return std::ldexp(1.0, -11);
    default: return 0;  // the f32 sum is the result
  }
}

// Runs `text` (one dot of depth `depth`, one array result) on the
// interpreter and on CPU backends of one and two threads with `arguments`,
// and expects NaN where the interpreter has NaN, its infinities, and every
// finite element within the bound of the file comment. `rounded_through` is
// a type the interpreter rounds the dot's result to on the way (a bf16 dot
// converted to f32, which the backend reads unrounded).
void ExpectWithinSummationBound(const std::string& text, int64_t depth, const std::vector<Literal>& arguments,
                                ElementType rounded_through = ElementType::kF32, int optimization_level = 2) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 1u);
  std::vector<Literal> magnitudes;
  double largest = 1;
  for (const Literal& argument : arguments) {
    magnitudes.push_back(MapFloatElements(argument, [](float x) { return std::fabs(x); }));
    for (size_t i = 0; i < static_cast<size_t>(argument.element_count()); ++i) {
      if (std::isfinite(DotElementAsDouble(argument, i)))
        largest = std::max(largest, std::fabs(DotElementAsDouble(argument, i)));
    }
  }
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> sums, testing::RunOn(reference, *module, magnitudes));
  const double u = std::ldexp(1.0, -24);
  const double gamma = static_cast<double>(depth) * u / (1 - static_cast<double>(depth) * u);
  const double result_roundoff =
      std::max(ResultRoundoff(want[0].shape().element_type()), ResultRoundoff(rounded_through));
  const double flushes = 4.0 * static_cast<double>(depth) * std::ldexp(1.0, -126) * largest;
  for (int threads : {1, 2}) {
    CpuBackend cpu;
    CompileOptions options;
    options.num_threads = threads;
    options.optimization_level = optimization_level;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                              testing::RunExecutable(cpu, *executable, arguments));
    ASSERT_EQ(results.size(), 1u);
    const Literal& got = results[0];
    ASSERT_TRUE(got.shape().Compatible(want[0].shape()));
    for (size_t i = 0; i < static_cast<size_t>(want[0].element_count()); ++i) {
      const double w = DotElementAsDouble(want[0], i), g = DotElementAsDouble(got, i);
      if (std::isnan(w)) {
        ASSERT_TRUE(std::isnan(g)) << threads << " threads, element " << i << ": " << g << ", not NaN";
      } else if (std::isinf(w)) {
        ASSERT_EQ(g, w) << threads << " threads, element " << i;
      } else {
        const double sum = DotElementAsDouble(sums[0], i) * (1 + result_roundoff) / (1 - gamma);
        const double bound =
            2 * gamma * sum + flushes + 2 * result_roundoff * std::max(std::fabs(w), std::fabs(g));
        ASSERT_LE(std::fabs(g - w), bound)
            << threads << " threads, element " << i << ": " << g << " vs " << w;
      }
    }
  }
}

void ExpectWithinSummationBound(const std::string& text, int64_t depth,
                                ElementType rounded_through = ElementType::kF32) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  ExpectWithinSummationBound(text, depth, testing::RandomArguments(*module), rounded_through);
}

// M, N and K not multiples of 16, K odd.
constexpr char kBf16OddShape[] = R"(HloModule m
ENTRY e {
  a = bf16[97,129] parameter(0)
  b = bf16[129,75] parameter(1)
  ROOT d = f32[97,75] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

constexpr char kBf16Transposed[] = R"(HloModule m
ENTRY e {
  a = bf16[129,97] parameter(0)
  b = bf16[75,129] parameter(1)
  ROOT d = f32[97,75] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})";

constexpr char kBf16Batched[] = R"(HloModule m
ENTRY e {
  a = bf16[3,65,81] parameter(0)
  b = bf16[3,81,70] parameter(1)
  ROOT d = f32[3,65,70] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})";

// One term per element: both sides compute the same exact product.
constexpr char kBf16DepthOne[] = R"(HloModule m
ENTRY e {
  a = bf16[512,1] parameter(0)
  b = bf16[1,520] parameter(1)
  ROOT d = f32[512,520] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// Large enough that two threads cut it into pieces.
constexpr char kBf16Large[] = R"(HloModule m
ENTRY e {
  a = bf16[256,383] parameter(0)
  b = bf16[383,250] parameter(1)
  ROOT d = f32[256,250] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(RuntimeLowPrecisionDotTest, Bf16DotsMatchTheInterpreterWithinTheBound) {
  const struct {
    const char* text;
    int64_t depth;
  } cases[] = {{kBf16OddShape, 129},
               {kBf16Transposed, 129},
               {kBf16Batched, 81},
               {kBf16DepthOne, 1},
               {kBf16Large, 383}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    ExpectWithinSummationBound(c.text, c.depth);
    EXPECT_EQ(LowPrecisionRootRoute(c.text), ExpectedBf16Route());
  }
}

// Says loudly when this host cannot test the bf16 path at all.
TEST(RuntimeLowPrecisionDotTest, HostWithBf16InstructionsRunsBf16DotsOnThem) {
  if (!HostHasAvx512Bf16())
    GTEST_SKIP() << "this host's CPU has no AVX512-BF16: bf16 dots take the f32 path here, and oneDNN's bf16 "
                    "path is NOT tested on it";
  if (!OneDnnMatmul::Available()) GTEST_SKIP() << "this build has no oneDNN: bf16 dots take the f32 path";
  if (!OneDnnMayUseBf16Instructions()) GTEST_SKIP() << "ONEDNN_MAX_CPU_ISA holds oneDNN below AVX512-BF16";
  EXPECT_EQ(LowPrecisionRootRoute(kBf16OddShape), LowPrecisionRoute::kOneDnnLowPrecision);
  // The pipeline leaves the operands in bf16 (no convert kernels).
  EXPECT_EQ(testing::CountThunks(kBf16OddShape, "dot"), 1);
  EXPECT_EQ(testing::CountThunks(kBf16OddShape, "kernel"), 0);
}

// Where oneDNN has no bf16 instructions (or no oneDNN), the pipeline widens
// the operands in kernels of its own and the dot thunk runs f32.
TEST(RuntimeLowPrecisionDotTest, WithoutBf16InstructionsTheOperandsWidenInKernels) {
  const int64_t kernels = ExpectBf16OnOneDnn() ? 0 : 2;
  EXPECT_EQ(testing::CountThunks(kBf16OddShape, "kernel"), kernels);
  EXPECT_EQ(testing::CountThunks(kBf16OddShape, "dot"), 1);
}

// Products below OneDnnMatmul::kMinimumProduct widen to f32 (Eigen).
TEST(RuntimeLowPrecisionDotTest, SmallBf16DotsWiden) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = bf16[7,33] parameter(0)
  b = bf16[33,5] parameter(1)
  ROOT d = f32[7,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  ExpectWithinSummationBound(text, 33);
  EXPECT_EQ(LowPrecisionRootRoute(text), LowPrecisionRoute::kWidenedToF32);
}

// Without the optimising pipeline nothing widens the operands before the
// dot thunk: it runs them on oneDNN's bf16 matmul where it can, else widens
// them itself (f16 and small bf16 products here), never on the elemental
// path.
TEST(RuntimeLowPrecisionDotTest, UnoptimisedProgramsRunOnTheDotThunk) {
  const std::string small = R"(HloModule m
ENTRY e {
  a = bf16[7,33] parameter(0)
  b = bf16[33,5] parameter(1)
  ROOT d = f32[7,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  const std::string half = R"(HloModule m
ENTRY e {
  a = f16[3,65,81] parameter(0)
  b = f16[3,81,70] parameter(1)
  ROOT d = f32[3,65,70] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})";
  const struct {
    const std::string text;
    int64_t depth;
  } cases[] = {{small, 33}, {half, 81}, {kBf16Transposed, 129}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::unique_ptr<Module> module = ParseOrDie(c.text);
    ASSERT_NE(module, nullptr);
    ExpectWithinSummationBound(c.text, c.depth, testing::RandomArguments(*module), ElementType::kF32,
                               /*optimization_level=*/0);
    EXPECT_NE(LowPrecisionRootRoute(c.text), LowPrecisionRoute::kOther);
  }
}

// NaN and infinities where the interpreter has them, with some in the last
// (odd) term of the contraction, which a pair-wise kernel pads.
TEST(RuntimeLowPrecisionDotTest, NanAndInfinitiesPropagate) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = bf16[97,33] parameter(0)
  b = bf16[33,96] parameter(1)
  ROOT d = f32[97,96] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments = testing::RandomArguments(*module);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto a = arguments[0].data<bfloat16>();
  auto b = arguments[1].data<bfloat16>();
  a[3 * 33 + 5] = bfloat16(nan);
  a[10 * 33 + 32] = bfloat16(nan);  // the last term
  a[20 * 33 + 0] = bfloat16(inf);
  a[30 * 33 + 32] = bfloat16(-inf);
  a[40 * 33 + 7] = bfloat16(0.0f);
  b[7 * 96 + 50] = bfloat16(inf);    // times the zero above: NaN at (40, 50)
  b[32 * 96 + 60] = bfloat16(-inf);  // the last term
  b[0 * 96 + 70] = bfloat16(nan);
  ExpectWithinSummationBound(text, 33, arguments);
  EXPECT_EQ(LowPrecisionRootRoute(text), ExpectedBf16Route());
}

// Magnitudes far from 1: large (2^50, products 2^100) and tiny (2^-60 times
// 2^-70: products below f32's smallest normal, which vdpbf16ps flushes to
// zero).
TEST(RuntimeLowPrecisionDotTest, LargeAndSubnormalMagnitudes) {
  std::unique_ptr<Module> module = ParseOrDie(kBf16OddShape);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = testing::RandomArguments(*module);
  ExpectWithinSummationBound(kBf16OddShape, 129,
                             {MapFloatElements(arguments[0], [](float x) { return std::ldexp(x, 50); }),
                              MapFloatElements(arguments[1], [](float x) { return std::ldexp(x, 50); })});
  ExpectWithinSummationBound(kBf16OddShape, 129,
                             {MapFloatElements(arguments[0], [](float x) { return std::ldexp(x, -60); }),
                              MapFloatElements(arguments[1], [](float x) { return std::ldexp(x, -70); })});
}

// JAX's form of bf16_gemm: f32 operands converted to bf16, then the dot.
TEST(RuntimeLowPrecisionDotTest, ConvertedF32Operands) {
  ExpectWithinSummationBound(R"(HloModule m
ENTRY e {
  x = f32[97,129] parameter(0)
  y = f32[129,75] parameter(1)
  a = bf16[97,129] convert(x)
  b = bf16[129,75] convert(y)
  ROOT d = f32[97,75] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                             129);
}

// A bf16 result is the f32 product rounded once (a dot to f32 and a
// convert); a convert of it back to f32 reads the f32 product.
TEST(RuntimeLowPrecisionDotTest, Bf16Results) {
  ExpectWithinSummationBound(R"(HloModule m
ENTRY e {
  a = bf16[97,129] parameter(0)
  b = bf16[129,75] parameter(1)
  ROOT d = bf16[97,75] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                             129);
  ExpectWithinSummationBound(R"(HloModule m
ENTRY e {
  a = bf16[97,129] parameter(0)
  b = bf16[129,75] parameter(1)
  d = bf16[97,75] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT w = f32[97,75] convert(d)
})",
                             129, ElementType::kBF16);
}

// f16 x f16 -> f32 runs on oneDNN only where its implementation uses the
// CPU's f16 instructions (oneDNN 2.6.3 has no f16 matmul on the CPU),
// else widened.
TEST(RuntimeLowPrecisionDotTest, HalfDots) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = f16[97,129] parameter(0)
  b = f16[129,75] parameter(1)
  ROOT d = f32[97,75] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  ExpectWithinSummationBound(text, 129);
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const bool native = RunsLowPrecisionDotAsIs(*module->entry()->root());
  EXPECT_EQ(LowPrecisionRootRoute(text),
            native ? LowPrecisionRoute::kOneDnnLowPrecision : LowPrecisionRoute::kWidenedToF32);
  EXPECT_EQ(testing::CountThunks(text, "kernel"), native ? 0 : 2);
}

}  // namespace
}  // namespace kiln::cpu
