// s8 x s8 -> s32 dots (JAX's jnp.matmul(a, b, preferred_element_type=int32),
// and the converts to s32 it may export instead) on the CPU backend: exact
// results against the interpreter over the whole s8 range and at its
// extremes, odd shapes, batch dimensions and transposed operands, on one and
// two threads; large ones run on oneDNN's int8 matmul, the rest on the dot
// thunk's integer loop or widened to f32 where that is exact, none on the
// elemental path. The same tests run again with oneDNN held to AVX2 (ctest's
// .onednn_avx2 variant), where its int8 kernels would saturate and the dot
// thunk must not use them. s8 convolutions run in f32, exactly (in pieces
// of at most 1024 products per output).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/onednn_matmul.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ParseOrDie;

enum class Fill { kWholeRange, kExtremes };

// s8 values of `shape`: pseudo-random over [-128, 127], or only -128 and 127
// (mostly -128, so that the products of a row add up to their largest
// magnitude, 16384 per term).
Literal Int8Values(const Shape& shape, Fill fill, uint64_t seed) {
  Literal literal(shape);
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 11;
  for (int8_t& value : literal.data<int8_t>()) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto bits = static_cast<uint32_t>(state >> 33);
    if (fill == Fill::kWholeRange) {
      value = static_cast<int8_t>(static_cast<int32_t>(bits % 256) - 128);
    } else {
      value = bits % 5 == 0 ? int8_t{127} : int8_t{-128};
    }
  }
  return literal;
}

// Runs the module on the interpreter and on CPU backends of one and two
// threads, with arguments of `fill`, and expects the same integers.
void ExpectExact(const std::string& text, Fill fill) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  uint64_t seed = 1;
  for (const Instruction* parameter : module->entry()->parameters()) {
    arguments.push_back(Int8Values(parameter->shape, fill, seed++));
  }
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(want[0].shape().element_type(), ElementType::kS32);
  for (int threads : {1, 2}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::RunWithThreads(*module, arguments, threads));
    ASSERT_TRUE(got.shape().Compatible(want[0].shape()));
    const auto got_values = got.data<int32_t>();
    const auto want_values = want[0].data<int32_t>();
    for (size_t i = 0; i < want_values.size(); ++i) {
      ASSERT_EQ(got_values[i], want_values[i]) << threads << " threads, element " << i;
    }
  }
}

void ExpectExactOnBothFills(const std::string& text) {
  ExpectExact(text, Fill::kWholeRange);
  ExpectExact(text, Fill::kExtremes);
}

enum class Route { kInt8OneDnn, kWidenedToF32, kIntegerLoop, kNoPlan };

// How the dot thunk PlanDot makes for the root of `text` runs it.
Route RootRoute(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return Route::kNoPlan;
  std::optional<DotPlan> plan = PlanDot(*module->entry()->root());
  if (!plan.has_value()) return Route::kNoPlan;
  EXPECT_EQ(plan->geometry.operand_type, ElementType::kS8);
  DotThunk thunk(0, 1, 2, plan->geometry);
  if (thunk.uses_onednn()) return Route::kInt8OneDnn;
  return thunk.widens_to_f32() ? Route::kWidenedToF32 : Route::kIntegerLoop;
}

// The route a large product of `depth` contracted terms takes in this build
// on this CPU.
Route LargeProductRoute(int64_t depth) {
  if (OneDnnMatmul::RunsInt8()) return Route::kInt8OneDnn;
  if (OneDnnMatmul::Available() && depth <= DotThunk::kExactF32Depth) return Route::kWidenedToF32;
  return Route::kIntegerLoop;
}

constexpr char kPlain[] = R"(HloModule m
ENTRY e {
  a = s8[97,130] parameter(0)
  b = s8[130,75] parameter(1)
  ROOT d = s32[97,75] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

constexpr char kTransposed[] = R"(HloModule m
ENTRY e {
  a = s8[130,97] parameter(0)
  b = s8[75,130] parameter(1)
  ROOT d = s32[97,75] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})";

constexpr char kBatched[] = R"(HloModule m
ENTRY e {
  a = s8[3,65,81] parameter(0)
  b = s8[3,81,70] parameter(1)
  ROOT d = s32[3,65,70] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})";

// Long enough rows (k = 1500) that the sums of extremes pass 2^24, where an
// f32 accumulation would round; large enough to be cut among two threads.
constexpr char kLong[] = R"(HloModule m
ENTRY e {
  a = s8[160,1500] parameter(0)
  b = s8[1500,96] parameter(1)
  ROOT d = s32[160,96] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// On oneDNN's int8 matmul where the CPU has VNNI (OneDnnMatmul::RunsInt8),
// else widened to f32 on its f32 matmul up to DotThunk::kExactF32Depth
// terms, else on the dot thunk's integer loop.
TEST(RuntimeInt8DotTest, LargeProductsAreExact) {
  for (const char* text : {kPlain, kTransposed, kBatched}) {
    ExpectExactOnBothFills(text);
    EXPECT_EQ(RootRoute(text), LargeProductRoute(130)) << text;
  }
  ExpectExactOnBothFills(kLong);
  EXPECT_EQ(RootRoute(kLong), LargeProductRoute(1500));
  // With 1024 terms of extremes, the widened f32 sums reach 2^24 exactly.
  const std::string deepest = R"(HloModule m
ENTRY e {
  a = s8[64,1024] parameter(0)
  b = s8[1024,48] parameter(1)
  ROOT d = s32[64,48] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  ExpectExactOnBothFills(deepest);
  EXPECT_EQ(RootRoute(deepest), LargeProductRoute(1024));
}

// Held to AVX2 (no VNNI), oneDNN's int8 kernels are not used (its f32
// matmul is, on widened operands).
TEST(RuntimeInt8DotTest, OneDnnHeldToAvx2RunsNoInt8) {
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (isa != nullptr && std::string(isa) == "AVX2") {
    EXPECT_FALSE(OneDnnMatmul::RunsInt8());
    EXPECT_NE(RootRoute(kPlain), Route::kInt8OneDnn);
  } else {
    EXPECT_EQ(RootRoute(kPlain) == Route::kInt8OneDnn, OneDnnMatmul::RunsInt8());
  }
}

// Below OneDnnMatmul::kMinimumProduct: the dot thunk's own integer loop, with
// the rhs as [K, N] and as [N, K], and a batch.
TEST(RuntimeInt8DotTest, SmallProductsAreExactOnTheIntegerLoop) {
  const std::string texts[] = {
      R"(HloModule m
ENTRY e {
  a = s8[7,33] parameter(0)
  b = s8[33,5] parameter(1)
  ROOT d = s32[7,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
      R"(HloModule m
ENTRY e {
  a = s8[33,7] parameter(0)
  b = s8[5,33] parameter(1)
  ROOT d = s32[7,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})",
      R"(HloModule m
ENTRY e {
  a = s8[4,9,17] parameter(0)
  b = s8[4,17,3] parameter(1)
  ROOT d = s32[4,9,3] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
  };
  for (const std::string& text : texts) {
    ExpectExactOnBothFills(text);
    EXPECT_EQ(RootRoute(text), Route::kIntegerLoop) << text;
  }
}

// The form with converts to s32 first: the pipeline runs the dot on the s8
// operands (Int8ContractionNarrowing), so it is one dot thunk and no kernel.
TEST(RuntimeInt8DotTest, WidenedOperandsRunOnTheInt8Dot) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = s8[97,130] parameter(0)
  b = s8[130,75] parameter(1)
  wa = s32[97,130] convert(a)
  wb = s32[130,75] convert(b)
  ROOT d = s32[97,75] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  ExpectExactOnBothFills(text);
  EXPECT_EQ(testing::CountThunks(text, "dot"), 1);
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 0);
  EXPECT_EQ(testing::CountThunks(text, "library"), 0);
}

// Dot layouts PlanDot does not read directly get a transpose first; a dot of
// other integer types (s16 here) still runs, on the elemental path.
TEST(RuntimeInt8DotTest, OtherLayoutsAndTypesStillRun) {
  ExpectExactOnBothFills(R"(HloModule m
ENTRY e {
  a = s8[9,3,70] parameter(0)
  b = s8[3,70,11] parameter(1)
  ROOT d = s32[3,9,11] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  const std::string s16 = R"(HloModule m
ENTRY e {
  a = s16[6,8] parameter(0)
  b = s16[8,4] parameter(1)
  ROOT d = s32[6,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  std::unique_ptr<Module> module = ParseOrDie(s16);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(PlanDot(*module->entry()->root()).has_value());
  testing::ExpectMatchesInterpreter(s16, 0);
}

// An s8 x s8 -> s32 convolution (lax.conv_general_dilated with
// preferred_element_type=int32) of 8 x 3x3 = 72 products per output runs on
// the f32 convolution thunk (ContractionUpcast), exactly.
TEST(RuntimeInt8DotTest, ShallowInt8ConvolutionIsExactOnTheConvolutionThunk) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = s8[2,8,13,11] parameter(0)
  w = s8[6,8,3,3] parameter(1)
  ROOT c = s32[2,6,13,11] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";
  ExpectExactOnBothFills(text);
  EXPECT_EQ(testing::CountThunks(text, "convolution"), 1);
}

// 160 input features x 3x3 = 1440 products per output: two convolutions of
// 80 features on the f32 convolution thunk, added in s32, exactly.
TEST(RuntimeInt8DotTest, DeepInt8ConvolutionIsExactInPieces) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = s8[2,160,9,7] parameter(0)
  w = s8[8,160,3,3] parameter(1)
  ROOT c = s32[2,8,9,7] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";
  ExpectExactOnBothFills(text);
  EXPECT_EQ(testing::CountThunks(text, "convolution"), 2);
}

}  // namespace
}  // namespace kiln::cpu
