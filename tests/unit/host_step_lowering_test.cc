// The rules a backend whose runtime runs on the host adds to the shared step
// lowering (core/lowering/step_lowering.h), as the cpu backend uses them:
// its own library calls claimed before any other rule (tuples and host ops
// included), the library path for what is no kernel, passed-through loop
// results left uncopied, and LowerToSteps leaving every slot unplaced with
// the sequence that made it. The cpu's runtime tests run the same lowering
// end to end.
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "core/array_leaves.h"
#include "core/lowering/step_lowering.h"
#include "core/single_instruction.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// Every computation is a kernel unless it holds a sort; nothing claimed.
StepLoweringRules HostTestRules() {
  StepLoweringRules rules;
  rules.backend = "hosttest";
  rules.check_kernel = [](const Computation& kernel) {
    for (const auto& instruction : kernel.instructions()) {
      if (instruction->opcode == Opcode::kSort) return Unimplemented("no sort kernel");
    }
    return OkStatus();
  };
  return rules;
}

int CountHostSteps(const StepProgram& program, ProgramStep::Kind kind) {
  int count = 0;
  for (const StepSequence& sequence : program.sequences) {
    for (const ProgramStep& step : sequence.steps) count += step.kind == kind;
  }
  return count;
}

constexpr char kSortAndFeeds[] = R"(HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[8] parameter(0)
  b = s32[8] parameter(1)
  s = (f32[8], s32[8]) sort(a, b), dimensions={0}, to_apply=lt
  t = token[] after-all()
  in = (f32[8], token[]) infeed(t)
  d = f32[8] get-tuple-element(in), index=0
  k = f32[8] get-tuple-element(s), index=0
  u = f32[8] add(d, k)
  ROOT o = token[] outfeed(u, t)
})";

TEST(HostStepLoweringTest, ClaimedInstructionsAreLibraryCallsOverEveryLeaf) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(kSortAndFeeds);
  ASSERT_NE(module, nullptr);
  StepLoweringRules rules = HostTestRules();
  rules.host_library_call = [](const Instruction& instruction) {
    return instruction.opcode == Opcode::kSort || instruction.opcode == Opcode::kInfeed ||
           instruction.opcode == Opcode::kOutfeed;
  };
  StepProgram program;
  KILN_ASSERT_OK(LowerToSteps(std::move(module), rules, program));
  // Claimed before the infeed and outfeed steps and the tuple refusal.
  EXPECT_EQ(CountHostSteps(program, ProgramStep::Kind::kInfeed), 0);
  EXPECT_EQ(CountHostSteps(program, ProgramStep::Kind::kOutfeed), 0);
  ASSERT_EQ(program.library_calls.size(), 3u);
  EXPECT_EQ(CountHostSteps(program, ProgramStep::Kind::kLibraryCall), 3);
  EXPECT_EQ(CountHostSteps(program, ProgramStep::Kind::kLaunch), 1);  // the add
  for (const ProgramStep& step : program.sequences[0].steps) {
    if (step.kind != ProgramStep::Kind::kLibraryCall) continue;
    const Instruction& call = *program.library_calls[static_cast<size_t>(step.call)];
    // Each operand's array leaves, then the result's: a token has none.
    int64_t leaves = ArrayLeafCount(call.shape);
    for (const Instruction* operand : call.operands) leaves += ArrayLeafCount(operand->shape);
    EXPECT_EQ(static_cast<int64_t>(step.buffers.size()), leaves) << call.name;
    if (call.opcode == Opcode::kSort) {
      EXPECT_EQ(step.buffers.size(), 4u);
    }
  }
}

TEST(HostStepLoweringTest, WhatIsNoKernelIsALibraryCallOnlyWhenTheRulesSaySo) {
  const std::string text = R"(HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[8] parameter(0)
  s = f32[8] sort(a), dimensions={0}, to_apply=lt
  h = f32[8] custom-call(s), custom_call_target="my_host_op"
  ROOT n = f32[8] negate(h)
})";
  StepProgram refused;
  const Status status = LowerToSteps(testing::ParseHloOrFail(text), HostTestRules(), refused);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
  EXPECT_NE(status.message().find("no sort kernel"), std::string::npos) << status.ToString();

  StepLoweringRules rules = HostTestRules();
  rules.library_call_when_not_a_kernel = true;
  StepProgram program;
  KILN_ASSERT_OK(LowerToSteps(testing::ParseHloOrFail(text), rules, program));
  ASSERT_EQ(program.library_calls.size(), 2u);  // the sort (no kernel) and the host op
  EXPECT_EQ(program.library_calls[0]->opcode, Opcode::kSort);
  EXPECT_EQ(program.library_calls[1]->opcode, Opcode::kCustomCall);
  EXPECT_EQ(CountHostSteps(program, ProgramStep::Kind::kLaunch), 1);  // the negate
}

// A library call made because its instruction is no kernel carries the
// computation the lowering built to ask (a backend running it through an
// interpreter takes that one, none of its own); one claimed before any
// kernel check (here the host op) has none.
TEST(HostStepLoweringTest, ALibraryCallKeepsTheComputationItWasCheckedAs) {
  StepLoweringRules rules = HostTestRules();
  rules.library_call_when_not_a_kernel = true;
  StepProgram program;
  const int64_t built_before = SingleInstructionComputationsBuilt();
  KILN_ASSERT_OK(LowerToSteps(testing::ParseHloOrFail(R"(HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[8] parameter(0)
  s = f32[8] sort(a), dimensions={0}, to_apply=lt
  ROOT h = f32[8] custom-call(s), custom_call_target="my_host_op"
})"),
                              rules, program));
  EXPECT_EQ(SingleInstructionComputationsBuilt() - built_before, 1) << "the sort's, once";
  ASSERT_EQ(program.library_calls.size(), 2u);
  ASSERT_EQ(program.library_call_computations.size(), 2u);
  const Computation* sort = program.library_call_computations[0];
  ASSERT_NE(sort, nullptr);
  ASSERT_NE(sort->root(), nullptr);
  EXPECT_EQ(sort->root()->opcode, Opcode::kSort);
  EXPECT_EQ(sort->parameters().size(), 1u);
  bool in_module = false;
  for (const auto& computation : program.module->computations()) in_module |= computation.get() == sort;
  EXPECT_TRUE(in_module) << "the program's module owns it";
  EXPECT_EQ(program.library_call_computations[1], nullptr);
}

// Infeed, outfeed and the tape calls are steps of their own on every
// backend; of them only the tape calls count as host ops (so that no fusion
// takes them in). After-all, rng and annotations are no host ops; what
// keeps state or asks where it runs is.
TEST(HostStepLoweringTest, FeedsAndTapeCallsAreStepsOfTheirOwn) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  t = token[] after-all()
  in = (f32[2], token[]) infeed(t)
  d = f32[2] get-tuple-element(in), index=0
  o = token[] outfeed(d, t)
  n = s32[] constant(0)
  pushed = s32[] custom-call(n, x), custom_call_target="kiln_tape_push", backend_config="0"
  popped = (s32[], f32[2]) custom-call(pushed), custom_call_target="kiln_tape_pop", backend_config="0"
  sharded = f32[2] custom-call(x), custom_call_target="Sharding"
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[2] rng(lo, hi), distribution=rng_uniform
  id = u32[] replica-id()
  ROOT sum = f32[2] add(sharded, r)
})");
  ASSERT_NE(module, nullptr);
  std::map<std::string, std::pair<bool, bool>> found;  // name: (steps of its own, host op)
  for (const auto& instruction : module->entry()->instructions())
    found[instruction->name] = {LowersToFeedOrTapeSteps(*instruction), NeedsHostOnDevice(*instruction)};
  const std::map<std::string, std::pair<bool, bool>> want = {
      {"in", {true, false}},    {"o", {true, false}},  {"pushed", {true, true}},
      {"popped", {true, true}}, {"t", {false, false}}, {"sharded", {false, false}},
      {"r", {false, false}},    {"id", {false, true}}, {"sum", {false, false}},
      {"x", {false, false}},    {"d", {false, false}}, {"n", {false, false}},
      {"lo", {false, false}},   {"hi", {false, false}}};
  EXPECT_EQ(found, want);
}

constexpr char kPassThroughLoop[] = R"(HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[4]) tuple(j, v)
}
ENTRY e {
  v = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, v)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT out = f32[4] get-tuple-element(loop), index=1
})";

TEST(HostStepLoweringTest, PassedThroughLoopStateIsCopiedUnlessTheBackendKeepsIt) {
  StepProgram copied;
  KILN_ASSERT_OK(LowerToSteps(testing::ParseHloOrFail(kPassThroughLoop), HostTestRules(), copied));
  EXPECT_EQ(CountHostSteps(copied, ProgramStep::Kind::kCopy), 1);

  StepLoweringRules rules = HostTestRules();
  rules.copy_bound_results = false;
  StepProgram kept;
  KILN_ASSERT_OK(LowerToSteps(testing::ParseHloOrFail(kPassThroughLoop), rules, kept));
  EXPECT_EQ(CountHostSteps(kept, ProgramStep::Kind::kCopy), 0);
  ASSERT_EQ(kept.sequences.size(), 3u);  // entry, condition, body
  const StepSequence& body = kept.sequences[2];
  ASSERT_EQ(body.results.size(), 2u);
  ASSERT_EQ(body.parameters.size(), 2u);
  EXPECT_EQ(body.results[1], body.parameters[1]);  // the array stays where it is
  EXPECT_NE(body.results[0], body.parameters[0]);  // the counter is computed
}

TEST(HostStepLoweringTest, StepsLeaveSlotsUnplacedAndNameTheirSequence) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(kPassThroughLoop);
  ASSERT_NE(module, nullptr);
  const Literal* zero = &*module->entry()->root()->operand(0)->operand(0)->operand(0)->literal;
  StepProgram program;
  KILN_ASSERT_OK(LowerToSteps(std::move(module), HostTestRules(), program));
  EXPECT_EQ(program.scratch_bytes, 0);
  for (const StepSlot& slot : program.slots) {
    EXPECT_NE(slot.kind, StepSlotKind::kResult);
    EXPECT_EQ(slot.offset, 0);
  }
  // Each sequence's bound parameters and the temporaries its steps write
  // belong to it; the loop's state to the entry.
  for (size_t s = 0; s < program.sequences.size(); ++s) {
    for (int slot : program.sequences[s].parameters)
      EXPECT_EQ(program.slots[static_cast<size_t>(slot)].sequence, static_cast<int>(s));
    for (const ProgramStep& step : program.sequences[s].steps) {
      if (step.kind == ProgramStep::Kind::kWhile) {
        for (int slot : step.targets) EXPECT_EQ(program.slots[static_cast<size_t>(slot)].sequence, 0);
      }
      if (step.kind != ProgramStep::Kind::kLaunch) continue;
      EXPECT_EQ(program.slots[static_cast<size_t>(step.buffers.back())].sequence, static_cast<int>(s));
    }
  }
  // An array constant is its instruction's literal, not a copy of it.
  ASSERT_EQ(program.constants.size(), 3u);
  EXPECT_EQ(program.constants[0], zero);
  EXPECT_TRUE(program.constant_storage.empty());
}

TEST(HostStepLoweringTest, TupleConstantLeavesAreKeptByTheProgram) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  c = (f32[2], s32[]) constant(({1, 2}, 7))
  ROOT x = f32[2] get-tuple-element(c), index=0
})");
  ASSERT_NE(module, nullptr);
  StepProgram program;
  KILN_ASSERT_OK(LowerToSteps(std::move(module), HostTestRules(), program));
  ASSERT_EQ(program.constants.size(), 2u);
  ASSERT_EQ(program.constant_storage.size(), 2u);
  EXPECT_EQ(program.constants[0], &program.constant_storage[0]);
  EXPECT_EQ(program.constants[1]->shape().element_type(), ElementType::kS32);
}

}  // namespace
}  // namespace kiln
