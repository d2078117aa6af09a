// The fusion pass and the whole pipeline on typical model pieces: how many
// kernels (fusions) an MLP layer, a softmax and a layer norm become, what is
// never fused, and that fused modules compute what the originals did.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/autodiff/vjp.h"
#include "core/hlo_parser.h"
#include "core/passes/fusion.h"
#include "core/passes/pipeline.h"
#include "core/verifier.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

std::vector<const Instruction*> Fusions(const Computation& computation, FusionKind kind) {
  std::vector<const Instruction*> result;
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode == Opcode::kFusion && instruction->attrs.fusion_kind == kind) {
      result.push_back(instruction.get());
    }
  }
  return result;
}

int Count(const Computation& computation, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : computation.instructions()) count += instruction->opcode == opcode;
  return count;
}

// Optimises a copy of `module` and checks the interpreter gives the same results.
std::unique_ptr<Module> OptimiseAndCompare(const Module& module, const std::vector<Literal>& arguments,
                                           const PipelineOptions& options = {}) {
  std::unique_ptr<Module> optimised = module.Clone();
  Status status = RunOptimizationPipeline(*optimised, options);
  EXPECT_TRUE(status.ok()) << status.ToString();
  testing::ExpectSameResults(module, *optimised, arguments);
  return optimised;
}

Literal Ramp(std::vector<int64_t> dims, float scale) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(scale * static_cast<float>((i * 7) % 11) - 1.0f);
  return Literal::FromVector<float>(values, std::move(dims));
}

constexpr char kMlpLayer[] = R"(HloModule mlp
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  d = f32[4,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[4,16] broadcast(b), dimensions={1}
  a = f32[4,16] add(d, bb)
  z = f32[] constant(0)
  zb = f32[4,16] broadcast(z), dimensions={}
  ROOT r = f32[4,16] maximum(a, zb)
})";

TEST(FusionPassTest, MlpLayerIsADotAndOneLoopFusion) {
  auto module = testing::ParseHloOrFail(kMlpLayer);
  auto optimised =
      OptimiseAndCompare(*module, {Ramp({4, 8}, 0.25f), Ramp({8, 16}, 0.125f), Ramp({16}, 0.5f)});
  const Computation& entry = *optimised->entry();
  EXPECT_EQ(Count(entry, Opcode::kDot), 1);  // never fused
  const auto loops = Fusions(entry, FusionKind::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(entry.root(), loops[0]);
  // bias broadcast, add, relu and its zero all inside the one kernel
  EXPECT_EQ(Count(*loops[0]->called[0], Opcode::kBroadcast), 2);
  EXPECT_EQ(Count(entry, Opcode::kBroadcast), 0);
}

constexpr char kSoftmax[] = R"(HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,10] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[4,10] broadcast(m), dimensions={0}
  s = f32[4,10] subtract(x, mb)
  e = f32[4,10] exponential(s)
  zero = f32[] constant(0)
  sum = f32[4] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[4,10] broadcast(sum), dimensions={0}
  ROOT out = f32[4,10] divide(e, sb)
})";

// Max, sum of exp(x - max) and the division are row reductions read through
// row broadcasts: one kernel that computes both reductions per row.
TEST(FusionPassTest, SoftmaxIsOneKernel) {
  auto module = testing::ParseHloOrFail(kSoftmax);
  auto optimised = OptimiseAndCompare(*module, {Ramp({4, 10}, 0.5f)});
  const Computation& entry = *optimised->entry();
  EXPECT_TRUE(Fusions(entry, FusionKind::kInput).empty());
  const auto loops = Fusions(entry, FusionKind::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(entry.root(), loops[0]);
  // Nothing but the parameter and the fusion is left to run outside kernels.
  EXPECT_EQ(static_cast<int>(entry.instructions().size()), 1 + 1);
  EXPECT_EQ(Count(*loops[0]->called[0], Opcode::kReduce), 2);
}

// A backend that evaluates every output element on its own keeps row
// reductions as kernels of their own: each reduces its rows once, and the
// elementwise kernels read the results.
TEST(FusionPassTest, SoftmaxWithoutFusedRowReductionsReducesEachRowOnce) {
  auto module = testing::ParseHloOrFail(kSoftmax);
  PipelineOptions options;
  options.fuse_row_reductions = false;
  auto optimised = OptimiseAndCompare(*module, {Ramp({4, 10}, 0.5f)}, options);
  const Computation& entry = *optimised->entry();
  const auto reductions = Fusions(entry, FusionKind::kInput);
  ASSERT_EQ(reductions.size(), 2u);  // the max, and the sum of exponentials
  for (const Instruction* fusion : reductions) {
    EXPECT_EQ(fusion->called[0]->root()->opcode, Opcode::kReduce);
    EXPECT_EQ(Count(*fusion->called[0], Opcode::kReduce), 1);
  }
  const auto loops = Fusions(entry, FusionKind::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(entry.root(), loops[0]);
  EXPECT_EQ(Count(*loops[0]->called[0], Opcode::kReduce), 0);
}

constexpr char kLayerNorm[] = R"(HloModule layer_norm
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  gamma = f32[16] parameter(1)
  beta = f32[16] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(16)
  nb = f32[8] broadcast(n), dimensions={}
  sum = f32[8] reduce(x, zero), dimensions={1}, to_apply=add
  mean = f32[8] divide(sum, nb)
  meanb = f32[8,16] broadcast(mean), dimensions={0}
  c = f32[8,16] subtract(x, meanb)
  sq = f32[8,16] multiply(c, c)
  sqsum = f32[8] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[8] divide(sqsum, nb)
  eps = f32[] constant(1e-5)
  epsb = f32[8] broadcast(eps), dimensions={}
  ve = f32[8] add(var, epsb)
  inv = f32[8] rsqrt(ve)
  invb = f32[8,16] broadcast(inv), dimensions={0}
  normed = f32[8,16] multiply(c, invb)
  gb = f32[8,16] broadcast(gamma), dimensions={1}
  scaled = f32[8,16] multiply(normed, gb)
  bb = f32[8,16] broadcast(beta), dimensions={1}
  ROOT out = f32[8,16] add(scaled, bb)
})";

// Mean and variance reach the output through row values (divide, add,
// rsqrt on f32[8]) and row broadcasts; gamma and beta are broadcast along
// the row, off that path. One kernel.
TEST(FusionPassTest, LayerNormIsOneKernel) {
  auto module = testing::ParseHloOrFail(kLayerNorm);
  auto optimised = OptimiseAndCompare(*module, {Ramp({8, 16}, 0.3f), Ramp({16}, 0.1f), Ramp({16}, 0.2f)});
  const Computation& entry = *optimised->entry();
  EXPECT_TRUE(Fusions(entry, FusionKind::kInput).empty());
  const auto loops = Fusions(entry, FusionKind::kLoop);
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(Count(*loops[0]->called[0], Opcode::kReduce), 2);
  EXPECT_EQ(static_cast<int>(entry.instructions().size()), 3 + 1);
}

// A consumer that reads the row sums in another order (here transposed) would
// need each sum at every element, so the reduction keeps its own kernel.
TEST(FusionPassTest, RowReductionReadThroughTransposeStaysApart) {
  auto module = testing::ParseHloOrFail(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6,6] parameter(0)
  zero = f32[] constant(0)
  sum = f32[6] reduce(x, zero), dimensions={1}, to_apply=add
  rows = f32[6,6] broadcast(sum), dimensions={0}
  flipped = f32[6,6] transpose(rows), dimensions={1,0}
  ROOT out = f32[6,6] multiply(x, flipped)
})");
  auto optimised = OptimiseAndCompare(*module, {Ramp({6, 6}, 0.25f)});
  const Computation& entry = *optimised->entry();
  ASSERT_EQ(Fusions(entry, FusionKind::kInput).size(), 1u);
  for (const Instruction* loop : Fusions(entry, FusionKind::kLoop)) {
    EXPECT_EQ(Count(*loop->called[0], Opcode::kReduce), 0);
  }
}

// A reduction over the leading dimension is not a row reduction.
TEST(FusionPassTest, ColumnReductionStaysApart) {
  auto module = testing::ParseHloOrFail(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[5,7] parameter(0)
  zero = f32[] constant(0)
  sum = f32[7] reduce(x, zero), dimensions={0}, to_apply=add
  cols = f32[5,7] broadcast(sum), dimensions={1}
  ROOT out = f32[5,7] divide(x, cols)
})");
  auto optimised = OptimiseAndCompare(*module, {Ramp({5, 7}, 0.5f)});
  EXPECT_EQ(Fusions(*optimised->entry(), FusionKind::kInput).size(), 1u);
}

TEST(FusionPassTest, PredicateRefusalKeepsAnOpOutOfFusions) {
  auto module = testing::ParseHloOrFail(kMlpLayer);
  PipelineOptions options;
  options.can_fuse = [](const Instruction& instruction) {
    return IsFusibleByDefault(instruction) && instruction.opcode != Opcode::kMaximum;
  };
  auto optimised =
      OptimiseAndCompare(*module, {Ramp({4, 8}, 0.25f), Ramp({8, 16}, 0.125f), Ramp({16}, 0.5f)}, options);
  const Computation& entry = *optimised->entry();
  EXPECT_EQ(entry.root()->opcode, Opcode::kMaximum);
  for (const auto& computation : optimised->computations()) {
    if (computation.get() == optimised->entry()) continue;
    EXPECT_EQ(Count(*computation, Opcode::kMaximum), 0) << computation->name();
  }
}

TEST(FusionPassTest, DisabledFusionLeavesNoFusions) {
  auto module = testing::ParseHloOrFail(kSoftmax);
  PipelineOptions options;
  options.enable_fusion = false;
  auto optimised = OptimiseAndCompare(*module, {Ramp({4, 10}, 0.5f)}, options);
  EXPECT_EQ(Count(*optimised->entry(), Opcode::kFusion), 0);
}

TEST(FusionPassTest, SharedBroadcastIsDuplicatedIntoEachUser) {
  auto module = testing::ParseHloOrFail(R"(HloModule t
ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,8] parameter(1)
  b = f32[8] parameter(2)
  bb = f32[4,8] broadcast(b), dimensions={1}
  a = f32[4,8] add(x, bb)
  d = f32[4,8] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT m = f32[4,8] multiply(d, bb)
})");
  auto optimised = OptimiseAndCompare(*module, {Ramp({4, 8}, 0.25f), Ramp({8, 8}, 0.5f), Ramp({8}, 1.0f)});
  const Computation& entry = *optimised->entry();
  EXPECT_EQ(Count(entry, Opcode::kBroadcast), 0);
  const auto loops = Fusions(entry, FusionKind::kLoop);
  ASSERT_EQ(loops.size(), 2u);
  for (const Instruction* fusion : loops) EXPECT_EQ(Count(*fusion->called[0], Opcode::kBroadcast), 1);
}

TEST(FusionPassTest, ProducerUsedOutsideAFusionIsComputedOnce) {
  // t = tanh(x) feeds a dot and a fusion: tanh is not cheap, and one of its
  // users is not fused, so it is its own kernel rather than recomputed.
  auto module = testing::ParseHloOrFail(R"(HloModule t
ENTRY main {
  x = f32[4,4] parameter(0)
  t = f32[4,4] tanh(x)
  d = f32[4,4] dot(t, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT s = f32[4,4] add(d, t)
})");
  auto optimised = OptimiseAndCompare(*module, {Ramp({4, 4}, 0.25f)});
  int tanh_count = 0;
  for (const auto& computation : optimised->computations()) tanh_count += Count(*computation, Opcode::kTanh);
  EXPECT_EQ(tanh_count, 1);
  EXPECT_EQ(Fusions(*optimised->entry(), FusionKind::kLoop).size(), 2u);
}

TEST(FusionPassTest, ReducersAndWhileBodiesAreHandledRightly) {
  auto module = testing::ParseHloOrFail(R"(HloModule t
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  e = f32[4] exponential(v)
  h = f32[] constant(0.5)
  hb = f32[4] broadcast(h), dimensions={}
  w = f32[4] multiply(e, hb)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  v = f32[4] get-tuple-element(loop), index=1
  z = f32[] constant(0)
  ROOT r = f32[] reduce(v, z), dimensions={0}, to_apply=add
})");
  auto optimised = OptimiseAndCompare(*module, {Literal::FromVector<float>({0.1f, 0.2f, -0.3f, 0.4f})});
  const Computation* body = optimised->FindComputation("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(Fusions(*body, FusionKind::kLoop).size(), 2u);  // the counter increment and exp * 0.5
  EXPECT_EQ(Fusions(*optimised->entry(), FusionKind::kInput).size(), 1u);
  const Computation* add = optimised->FindComputation("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(Count(*add, Opcode::kFusion), 0);  // reducers stay scalar computations
}

TEST(FusionPassTest, FusingTwiceChangesNothing) {
  auto module = testing::ParseHloOrFail(kSoftmax);
  KILN_ASSERT_OK(RunOptimizationPipeline(*module));
  const std::string once = module->ToString();
  InstructionFusion fusion;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, fusion.Run(*module));
  EXPECT_FALSE(changed);
  EXPECT_EQ(module->ToString(), once);
  KILN_ASSERT_OK(VerifyModule(*module));
}

TEST(FusionPassTest, FusedModulePrintsAndParsesBack) {
  auto module = testing::ParseHloOrFail(kLayerNorm);
  KILN_ASSERT_OK(RunOptimizationPipeline(*module));
  const std::string printed = module->ToString();
  KILN_ASSERT_OK_AND_ASSIGN(auto reparsed, ParseHloModule(printed));
  EXPECT_EQ(reparsed->ToString(), printed);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(FusionPassTest, AFusionReadsAtMostMaxFusionInputsValues) {
  // A tree of maximum over 100 arrays: one fusion would read all 100.
  constexpr int kLeaves = 100;
  std::string text = "HloModule tree\nENTRY main {\n";
  std::vector<std::string> level;
  for (int i = 0; i < kLeaves; ++i) {
    level.push_back("p" + std::to_string(i));
    text += "  " + level.back() + " = f32[4] parameter(" + std::to_string(i) + ")\n";
  }
  for (int node = 0; level.size() > 1; ++node) {
    std::vector<std::string> joined;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      joined.push_back("m" + std::to_string(node) + "_" + std::to_string(j / 2));
      text += "  " + joined.back() + " = f32[4] maximum(" + level[j] + ", " + level[j + 1] + ")\n";
    }
    if (level.size() % 2 == 1) joined.push_back(level.back());
    level = std::move(joined);
  }
  text += "  ROOT r = f32[4] negate(" + level[0] + ")\n}\n";
  auto module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  for (int i = 0; i < kLeaves; ++i) arguments.push_back(Ramp({4}, 0.01f * static_cast<float>(i + 1)));
  auto optimised = OptimiseAndCompare(*module, arguments);
  const auto loops = Fusions(*optimised->entry(), FusionKind::kLoop);
  ASSERT_GE(loops.size(), 2u);
  for (const Instruction* fusion : loops) {
    EXPECT_LE(static_cast<int64_t>(fusion->operands.size()), FusionOptions().max_fusion_inputs);
  }
}

// `leaves` parameters, each scaled by a broadcast constant of its own, then
// joined by a tree of maximum: one kernel of all of it would bind every
// parameter, and the broadcast constants are copied in when they fit.
std::string ScaledMaximumTree(int leaves) {
  std::string text = "HloModule scaled_tree\nENTRY main {\n";
  std::vector<std::string> level;
  for (int i = 0; i < leaves; ++i) {
    const std::string n = std::to_string(i);
    text += "  p" + n + " = f32[4] parameter(" + n + ")\n";
    text += "  c" + n + " = f32[] constant(" + std::to_string(i + 2) + ")\n";
    text += "  b" + n + " = f32[4] broadcast(c" + n + "), dimensions={}\n";
    text += "  s" + n + " = f32[4] multiply(p" + n + ", b" + n + ")\n";
    level.push_back("s" + n);
  }
  for (int node = 0; level.size() > 1; ++node) {
    std::vector<std::string> joined;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      joined.push_back("m" + std::to_string(node) + "_" + std::to_string(j / 2));
      text += "  " + joined.back() + " = f32[4] maximum(" + level[j] + ", " + level[j + 1] + ")\n";
    }
    if (level.size() % 2 == 1) joined.push_back(level.back());
    level = std::move(joined);
  }
  return text + "  ROOT r = f32[4] negate(" + level[0] + ")\n}\n";
}

// Parameters plus result arrays: the buffers a kernel of `fusion` binds.
int64_t KernelBuffers(const Instruction& fusion) {
  const size_t results = fusion.shape.IsTuple() ? fusion.shape.tuple_shapes().size() : 1;
  return static_cast<int64_t>(fusion.operands.size() + results);
}

TEST(FusionPassTest, NoFusionBindsMoreThanMaxKernelBuffers) {
  constexpr int kLeaves = 100;
  auto module = testing::ParseHloOrFail(ScaledMaximumTree(kLeaves));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments;
  for (int i = 0; i < kLeaves; ++i) arguments.push_back(Ramp({4}, 0.01f * static_cast<float>(i + 1)));
  auto widest = [](const Module& fused) {
    int64_t most = 0;
    for (const auto& instruction : fused.entry()->instructions()) {
      if (instruction->opcode == Opcode::kFusion) most = std::max(most, KernelBuffers(*instruction));
    }
    return most;
  };
  // Without the bound some kernel binds more than 32 (the soft input bound
  // is 64): the bound below is what keeps them apart.
  std::unique_ptr<Module> unbounded = module->Clone();
  ASSERT_TRUE(InstructionFusion().Run(*unbounded).ok());
  ASSERT_GT(widest(*unbounded), 32);
  // Small groups too: a group that stops at its size bound leaves the
  // broadcast constants it would have copied in as parameters.
  for (const int64_t max_fusion_size : {int64_t{6}, int64_t{256}}) {
    for (const int64_t limit : {3, 4, 5, 8, 31, 32}) {
      SCOPED_TRACE("max_kernel_buffers " + std::to_string(limit) + ", max_fusion_size " +
                   std::to_string(max_fusion_size));
      FusionOptions options;
      options.max_kernel_buffers = limit;
      options.max_fusion_size = max_fusion_size;
      std::unique_ptr<Module> fused = module->Clone();
      ASSERT_TRUE(InstructionFusion(options).Run(*fused).ok());
      ASSERT_TRUE(VerifyModule(*fused).ok());
      int fusions = 0;
      for (const auto& instruction : fused->entry()->instructions()) {
        if (instruction->opcode != Opcode::kFusion) continue;
        ++fusions;
        EXPECT_LE(KernelBuffers(*instruction), limit) << instruction->name;
      }
      EXPECT_GT(fusions, 1);
      testing::ExpectSameResults(*module, *fused, arguments);
    }
  }
}

// The CPU lowering runs windows and select-and-scatter as thunks of their
// own (scan_thunk.h, window_thunk.h) and its fusion rule does not repeat
// that: the generic rule keeps them out of fusions whatever a backend accepts.
TEST(FusionPassTest, WindowsAndSelectAndScatterAreNeverFused) {
  auto module = testing::ParseHloOrFail(R"(HloModule windows
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}
ENTRY main {
  a = f32[8] parameter(0)
  e = f32[8] exponential(a)
  zero = f32[] constant(0)
  cumulative = f32[8] reduce-window(e, zero), window={size=8 pad=7_0}, to_apply=add
  pooled = f32[4] reduce-window(e, zero), window={size=2 stride=2}, to_apply=add
  n = f32[4] negate(pooled)
  scattered = f32[8] select-and-scatter(e, n, zero), window={size=2 stride=2}, select=ge, scatter=add
  ROOT r = f32[8] add(cumulative, scattered)
})");
  ASSERT_NE(module, nullptr);
  FusionOptions options;
  options.can_fuse = [](const Instruction&) { return true; };
  std::unique_ptr<Module> fused = module->Clone();
  ASSERT_TRUE(InstructionFusion(options).Run(*fused).ok());
  EXPECT_EQ(Count(*fused->entry(), Opcode::kReduceWindow), 2);
  EXPECT_EQ(Count(*fused->entry(), Opcode::kSelectAndScatter), 1);
  EXPECT_GE(Count(*fused->entry(), Opcode::kFusion), 1);  // the elementwise ops around them fuse
}

TEST(FusionPassTest, AnInstructionOverMaxKernelBuffersIsNeverAFusionRoot) {
  auto module = testing::ParseHloOrFail(R"(HloModule wide_concatenate
ENTRY main {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  d = f32[2] parameter(3)
  ROOT r = f32[8] concatenate(a, b, c, d), dimensions={0}
})");
  ASSERT_NE(module, nullptr);
  FusionOptions options;
  options.max_kernel_buffers = 4;  // the concatenate alone binds five
  std::unique_ptr<Module> fused = module->Clone();
  ASSERT_TRUE(InstructionFusion(options).Run(*fused).ok());
  EXPECT_EQ(Count(*fused->entry(), Opcode::kFusion), 0);
  options.max_kernel_buffers = 5;
  ASSERT_TRUE(InstructionFusion(options).Run(*fused).ok());
  EXPECT_EQ(Count(*fused->entry(), Opcode::kFusion), 1);
}

// The most indices at which a kernel of `fused` evaluates one of its values
// per output element, found by listing paths: a value's index is the chain
// of index-changing ops (with operand slots) between it and the root;
// elementwise ops pass their index on unchanged, a rank-0 value is read at
// the empty index, and constants, iota and broadcasts of scalars cost no
// code. Independent of the pass's own count (a set of hashed classes).
size_t MostEmissions(const Computation& fused) {
  using Path = std::vector<std::pair<const Instruction*, size_t>>;
  std::map<const Instruction*, std::set<Path>> paths;
  paths[fused.root()].insert(Path{});
  const auto& instructions = fused.instructions();
  size_t most = 0;
  for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
    const Instruction* node = it->get();
    const std::set<Path>& mine = paths[node];
    const bool no_code = node->opcode == Opcode::kConstant || node->opcode == Opcode::kIota ||
                         node->opcode == Opcode::kParameter ||
                         (node->opcode == Opcode::kBroadcast && node->operand(0)->shape.rank() == 0);
    if (!no_code) most = std::max(most, mine.size());
    for (size_t slot = 0; slot < node->operands.size(); ++slot) {
      const Instruction* operand = node->operands[slot];
      std::set<Path>& theirs = paths[operand];
      if (operand->shape.IsArray() && operand->shape.rank() == 0) {
        theirs.insert(Path{});
        continue;
      }
      for (const Path& path : mine) {
        Path extended = path;
        if (!IsElementwise(node->opcode)) extended.emplace_back(node, slot);
        theirs.insert(std::move(extended));
      }
    }
  }
  return most;
}

size_t MostEmissionsInAnyFusion(const Module& module) {
  size_t most = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode == Opcode::kFusion)
        most = std::max(most, MostEmissions(*instruction->called[0]));
    }
  }
  return most;
}

// v(k+1) = v(k) shifted left + v(k) shifted right: each rung reads the one
// below at two indices, so one kernel for all ten rungs would evaluate the
// lowest at 1024 indices per element.
std::string ShiftLadder(int rungs) {
  std::string text =
      "HloModule ladder\nENTRY main {\n  x = f32[64] parameter(0)\n  zero = f32[] constant(0)\n";
  text += "  v0 = f32[64] exponential(x)\n";
  for (int k = 0; k < rungs; ++k) {
    const std::string v = "v" + std::to_string(k), n = std::to_string(k);
    text += "  l" + n + " = f32[63] slice(" + v + "), slice={[1:64]}\n";
    text += "  r" + n + " = f32[63] slice(" + v + "), slice={[0:63]}\n";
    text += "  lp" + n + " = f32[64] pad(l" + n + ", zero), padding=0_1\n";
    text += "  rp" + n + " = f32[64] pad(r" + n + ", zero), padding=1_0\n";
    text += "  " + std::string(k + 1 == rungs ? "ROOT " : "") + "v" + std::to_string(k + 1) +
            " = f32[64] add(lp" + n + ", rp" + n + ")\n";
  }
  return text + "}\n";
}

TEST(FusionPassTest, ALadderOfShiftsIsNotEvaluatedExponentiallyOften) {
  auto module = testing::ParseHloOrFail(ShiftLadder(10));
  ASSERT_NE(module, nullptr);
  auto optimised = OptimiseAndCompare(*module, {Ramp({64}, 0.03125f)});
  const size_t bound = static_cast<size_t>(FusionOptions().max_emissions_per_value);
  EXPECT_LE(MostEmissionsInAnyFusion(*optimised), bound);
  EXPECT_GE(Fusions(*optimised->entry(), FusionKind::kLoop).size(), 2u);
  // Without the bound the whole ladder is one kernel that evaluates v0 (and
  // x's exponential) 1024 times per element: what the bound prevents.
  FusionOptions unbounded;
  unbounded.max_emissions_per_value = int64_t{1} << 20;
  auto whole = module->Clone();
  KILN_ASSERT_OK(InstructionFusion(unbounded).Run(*whole).status());
  EXPECT_EQ(Fusions(*whole->entry(), FusionKind::kLoop).size(), 1u);
  EXPECT_EQ(MostEmissionsInAnyFusion(*whole), 1024u);
}

// The reverse-mode gradient of a cumulative product (a reduce-window whose
// reducer is a product) differentiates a tree of maps over pads and slices:
// a ladder like the one above. Over 512 elements one kernel took 13.9 s of
// LLVM time on the cpu backend; its kernels now stay within the bound.
TEST(FusionPassTest, CumulativeProductGradientKernelsStayWithinTheEmissionBound) {
  auto module = testing::ParseHloOrFail(R"(HloModule cumprod
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}
ENTRY main {
  x = f32[2,128] parameter(0)
  one = f32[] constant(1)
  ROOT c = f32[2,128] reduce-window(x, one), window={size=1x128 pad=0_0x127_0}, to_apply=mul
})");
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  std::vector<float> x(256), cotangent(256);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.9f + 0.2f * static_cast<float>((i * 37) % 101) / 101.0f;
    cotangent[i] = static_cast<float>((i * 13) % 7) - 3.0f;
  }
  auto optimised = OptimiseAndCompare(
      *vjp, {Literal::FromVector<float>(x, {2, 128}), Literal::FromVector<float>(cotangent, {2, 128})});
  EXPECT_LE(MostEmissionsInAnyFusion(*optimised),
            static_cast<size_t>(FusionOptions().max_emissions_per_value));
}

TEST(FusionPassTest, ProducerSharedByTwoFusionsIsNeverLeftUnfused) {
  // p has five users, all in the fusion of `s`, so it joins that fusion
  // only; u1 is also recomputed in the fusion of `l`, which must then read p
  // from its own kernel: no op may be left outside fusions.
  auto module = testing::ParseHloOrFail(R"(HloModule t
ENTRY main {
  x = f32[4] parameter(0)
  p = f32[4] negate(x)
  u1 = f32[4] exponential(p)
  u2 = f32[4] sine(p)
  u3 = f32[4] cosine(p)
  u4 = f32[4] tanh(p)
  u5 = f32[4] abs(p)
  a1 = f32[4] add(u1, u2)
  a2 = f32[4] add(a1, u3)
  a3 = f32[4] add(a2, u4)
  s = f32[4] add(a3, u5)
  l = f32[4] log(u1)
  ROOT r = (f32[4], f32[4]) tuple(s, l)
})");
  auto optimised = OptimiseAndCompare(*module, {Literal::FromVector<float>({0.1f, 0.7f, -2.0f, 3.0f})});
  for (const auto& instruction : optimised->entry()->instructions()) {
    const Opcode op = instruction->opcode;
    EXPECT_TRUE(op == Opcode::kParameter || op == Opcode::kFusion || op == Opcode::kTuple)
        << instruction->ToString();
  }
}

}  // namespace
}  // namespace kiln
