// The fusion pass and gathers (FusionOptions::fuse_gathers): off, a gather
// stays a kernel of its own; on, it joins its consumers' kernel (when they
// are all in it) and its index producers join it, never duplicated. The
// fused modules compute what the originals did (interpreter).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/passes/fusion.h"
#include "core/passes/pipeline.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// jnp.take_along_axis over rows, as JAX exports it: the indices are
// normalised, bounds-checked and gathered.
constexpr char kTakeAlongRowsModule[] = R"(HloModule take_along
and_rows {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT r = pred[] and(a, b)
}
ENTRY e {
  x = f32[6,10] parameter(0)
  i = s32[6,4] parameter(1)
  zero = s32[] constant(0)
  zeros = s32[6,4] broadcast(zero), dimensions={}
  negative = pred[6,4] compare(i, zeros), direction=LT
  width = s32[] constant(10)
  widths = s32[6,4] broadcast(width), dimensions={}
  wrapped = s32[6,4] add(i, widths)
  normalised = s32[6,4] select(negative, wrapped, i)
  starts = s32[6,4,1] reshape(normalised)
  zeros3 = s32[6,4,1] broadcast(zero), dimensions={}
  above = pred[6,4,1] compare(starts, zeros3), direction=GE
  last = s32[] constant(9)
  lasts = s32[6,4,1] broadcast(last), dimensions={}
  below = pred[6,4,1] compare(starts, lasts), direction=LE
  inside3 = pred[6,4,1] and(above, below)
  yes = pred[] constant(true)
  inside = pred[6,4] reduce(inside3, yes), dimensions={2}, to_apply=and_rows
  g = f32[6,4] gather(x, starts), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
  nan = f32[] constant(nan)
  nans = f32[6,4] broadcast(nan), dimensions={}
  ROOT r = f32[6,4] select(inside, g, nans)
})";

// Rows of a table gathered (clamped) and summed over the rows.
constexpr char kEmbeddingSumModule[] = R"(HloModule embedding_sum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  table = f32[9,5] parameter(0)
  i = s32[7] parameter(1)
  zero = s32[] constant(0)
  zeros = s32[7] broadcast(zero), dimensions={}
  negative = pred[7] compare(i, zeros), direction=LT
  size = s32[] constant(9)
  sizes = s32[7] broadcast(size), dimensions={}
  wrapped = s32[7] add(i, sizes)
  normalised = s32[7] select(negative, wrapped, i)
  starts = s32[7,1] reshape(normalised)
  g = f32[7,5] gather(table, starts), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
  origin = f32[] constant(0)
  ROOT s = f32[5] reduce(g, origin), dimensions={0}, to_apply=add
})";

// A gather read by two kernels.
constexpr char kGatherReadTwiceModule[] = R"(HloModule read_twice
ENTRY e {
  x = f32[9,5] parameter(0)
  i = s32[7] parameter(1)
  one = s32[] constant(1)
  ones = s32[7] broadcast(one), dimensions={}
  shifted = s32[7] add(i, ones)
  starts = s32[7,1] reshape(shifted)
  g = f32[7,5] gather(x, starts), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
  e = f32[7,5] exponential(g)
  n = f32[7,5] negate(g)
  ROOT t = (f32[7,5], f32[7,5]) tuple(e, n)
})";

Literal GatherTestValues(std::vector<int64_t> dims) {
  std::vector<float> values;
  for (int64_t k = 0; k < dims[0] * dims[1]; ++k) values.push_back(0.25f * static_cast<float>(k % 37) - 3.0f);
  return Literal::FromVector<float>(values, std::move(dims));
}

// Indices in [-extent, extent), and past either end when `past_ends` (the
// interpreter's NaN for those would not compare equal to itself).
Literal GatherTestIndices(std::vector<int64_t> dims, int64_t extent, bool past_ends) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  const int64_t span = past_ends ? 3 * extent : 2 * extent;
  std::vector<int32_t> values;
  for (int64_t k = 0; k < count; ++k) values.push_back(static_cast<int32_t>((k * 7) % span - span / 2));
  return Literal::FromVector<int32_t>(values, std::move(dims));
}

// Runs the optimisation pipeline (every op emittable) with or without
// fused gathers, and checks the interpreter gives the original's results.
std::unique_ptr<Module> OptimiseWithGathers(const char* text, bool fuse_gathers,
                                            const std::vector<Literal>& arguments) {
  auto module = testing::ParseHloOrFail(text);
  if (module == nullptr) return nullptr;
  std::unique_ptr<Module> optimised = module->Clone();
  PipelineOptions options;
  options.can_fuse = [](const Instruction&) { return true; };
  options.fuse_gathers = fuse_gathers;
  const Status status = RunOptimizationPipeline(*optimised, options);
  EXPECT_TRUE(status.ok()) << status.ToString();
  testing::ExpectSameResults(*module, *optimised, arguments);
  return optimised;
}

int GatherTestOpcodeCount(const Computation& computation, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : computation.instructions()) count += instruction->opcode == opcode;
  return count;
}

// The fusions of `entry` whose computation holds a gather.
std::vector<const Instruction*> FusionsWithGathers(const Computation& entry) {
  std::vector<const Instruction*> found;
  for (const auto& instruction : entry.instructions()) {
    if (instruction->opcode == Opcode::kFusion &&
        GatherTestOpcodeCount(*instruction->called[0], Opcode::kGather) > 0)
      found.push_back(instruction.get());
  }
  return found;
}

TEST(FusionGatherTest, AGatherStaysAKernelOfItsOwnUnlessTheBackendAsks) {
  const std::vector<Literal> arguments = {GatherTestValues({6, 10}),
                                          GatherTestIndices({6, 4}, 10, /*past_ends=*/false)};
  auto unfused = OptimiseWithGathers(kTakeAlongRowsModule, /*fuse_gathers=*/false, arguments);
  ASSERT_NE(unfused, nullptr);
  EXPECT_EQ(GatherTestOpcodeCount(*unfused->entry(), Opcode::kGather), 1);
  EXPECT_TRUE(FusionsWithGathers(*unfused->entry()).empty());
  EXPECT_EQ(GatherTestOpcodeCount(*unfused->entry(), Opcode::kFusion), 2);  // the indices, the bounds check

  auto fused = OptimiseWithGathers(kTakeAlongRowsModule, /*fuse_gathers=*/true, arguments);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(GatherTestOpcodeCount(*fused->entry(), Opcode::kGather), 0);
  EXPECT_EQ(GatherTestOpcodeCount(*fused->entry(), Opcode::kFusion), 1);
  ASSERT_EQ(fused->entry()->root()->opcode, Opcode::kFusion);
  const Computation& kernel = *fused->entry()->root()->called[0];
  EXPECT_EQ(GatherTestOpcodeCount(kernel, Opcode::kGather), 1);
  EXPECT_EQ(GatherTestOpcodeCount(kernel, Opcode::kReduce), 1);  // the bounds check's reduce-and
  EXPECT_EQ(GatherTestOpcodeCount(kernel, Opcode::kSelect), 2);  // the normalisation and the NaN fill
}

TEST(FusionGatherTest, AGatherJoinsTheReductionThatSumsIt) {
  const std::vector<Literal> arguments = {GatherTestValues({9, 5}),
                                          GatherTestIndices({7}, 9, /*past_ends=*/true)};
  auto fused = OptimiseWithGathers(kEmbeddingSumModule, /*fuse_gathers=*/true, arguments);
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(GatherTestOpcodeCount(*fused->entry(), Opcode::kFusion), 1);
  const Instruction* root = fused->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kFusion);
  EXPECT_EQ(root->attrs.fusion_kind, FusionKind::kInput);
  EXPECT_EQ(GatherTestOpcodeCount(*root->called[0], Opcode::kGather), 1);
}

TEST(FusionGatherTest, AGatherWithTwoReadersIsComputedOnceInAKernelOfItsOwn) {
  const std::vector<Literal> arguments = {GatherTestValues({9, 5}),
                                          GatherTestIndices({7}, 9, /*past_ends=*/true)};
  auto fused = OptimiseWithGathers(kGatherReadTwiceModule, /*fuse_gathers=*/true, arguments);
  ASSERT_NE(fused, nullptr);
  const std::vector<const Instruction*> gathering = FusionsWithGathers(*fused->entry());
  ASSERT_EQ(gathering.size(), 1u);
  const Computation& kernel = *gathering[0]->called[0];
  EXPECT_EQ(kernel.root()->opcode, Opcode::kGather);
  EXPECT_EQ(GatherTestOpcodeCount(kernel, Opcode::kAdd), 1);  // its index producers joined it
  EXPECT_EQ(GatherTestOpcodeCount(*fused->entry(), Opcode::kGather), 0);
}

}  // namespace
}  // namespace kiln
