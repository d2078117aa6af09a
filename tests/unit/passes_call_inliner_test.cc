// Call inlining: the callee's body replaces the call and the callee goes away.
#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/pass.h"
#include "core/passes/call_inliner.h"
#include "core/verifier.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kNestedCalls[] = R"(HloModule t
inner {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
}
outer {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  c = f32[3] call(x), to_apply=inner
  ROOT s = f32[3] add(c, y)
}
ENTRY main {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  first = f32[3] call(p, q), to_apply=outer
  ROOT second = f32[3] call(first, p), to_apply=outer
})";

TEST(PassesCallInlinerTest, InlinesNestedCallsAndDropsTheCallees) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kNestedCalls));
  interpreter::InterpreterBackend backend;
  const std::vector<Literal> arguments = {Literal::FromVector<float>({1, 2, 3}),
                                          Literal::FromVector<float>({10, 20, 30})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal before, testing::Execute(backend, *module, arguments));
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<CallInliner>());
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pipeline.Run(*module));
  EXPECT_TRUE(changed);
  ASSERT_EQ(module->computations().size(), 1u);
  int negates = 0;
  for (const auto& instruction : module->entry()->instructions()) {
    EXPECT_NE(instruction->opcode, Opcode::kCall);
    negates += instruction->opcode == Opcode::kNegate;
  }
  EXPECT_EQ(negates, 2);
  KILN_ASSERT_OK_AND_ASSIGN(Literal after, testing::Execute(backend, *module, arguments));
  EXPECT_EQ(after, before);
  EXPECT_EQ(after, Literal::FromVector<float>({-8, -16, -24}));  // outer(outer(p, q), p) = 2p - q
}

TEST(PassesCallInlinerTest, NoCallsNoChange) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module,
                            ParseHloModule("HloModule t\nENTRY main {\n  ROOT x = f32[2] parameter(0)\n}\n"));
  CallInliner inliner;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, inliner.Run(*module));
  EXPECT_FALSE(changed);
}

// `once` is called from one place: its instructions move into the entry (the
// same objects, renamed where the entry uses the name). `twice` is called
// from two places, and `doubled` by a call and by a map: they are copied, and
// the map keeps its computation.
constexpr char kCalledOnceAndMore[] = R"(HloModule t
once {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  mapped = f32[3] subtract(p, q)
  ROOT n = f32[3] negate(mapped)
}
twice {
  a = f32[3] parameter(0)
  ROOT e = f32[3] exponential(a)
}
doubled {
  d = f32[] parameter(0)
  ROOT m = f32[] add(d, d)
}
doubled_vector {
  v = f32[3] parameter(0)
  ROOT w = f32[3] map(v), dimensions={0}, to_apply=doubled
}
ENTRY main {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  first = f32[3] call(p, q), to_apply=once
  second = f32[3] call(first), to_apply=twice
  third = f32[3] call(second), to_apply=twice
  mapped = f32[3] map(third), dimensions={0}, to_apply=doubled
  ROOT fourth = f32[3] call(mapped), to_apply=doubled_vector
})";

TEST(PassesCallInlinerTest, MovesACalleeCalledOnceAndCopiesTheOthers) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kCalledOnceAndMore));
  interpreter::InterpreterBackend backend;
  const std::vector<Literal> arguments = {Literal::FromVector<float>({1, 2, 3}),
                                          Literal::FromVector<float>({0.5f, 0.5f, 0.5f})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal before, testing::Execute(backend, *module, arguments));
  const Computation* once = module->FindComputation("once");
  const Computation* twice = module->FindComputation("twice");
  ASSERT_NE(once, nullptr);
  ASSERT_NE(twice, nullptr);
  const Instruction* subtract = once->instructions()[2].get();
  const Instruction* negate = once->root();
  const Instruction* exponential = twice->root();
  ASSERT_EQ(subtract->opcode, Opcode::kSubtract);

  CallInliner inliner;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, inliner.Run(*module));
  EXPECT_TRUE(changed);
  KILN_ASSERT_OK(VerifyModule(*module));  // names unique, operands bound
  EXPECT_EQ(module->FindComputation("once"), nullptr);
  EXPECT_EQ(module->FindComputation("twice"), nullptr);
  EXPECT_EQ(module->FindComputation("doubled_vector"), nullptr);
  ASSERT_NE(module->FindComputation("doubled"), nullptr);  // the maps still call it

  int moved = 0, exponentials = 0, maps = 0;
  for (const auto& instruction : module->entry()->instructions()) {
    EXPECT_NE(instruction->opcode, Opcode::kCall);
    moved += instruction.get() == subtract || instruction.get() == negate;
    EXPECT_NE(instruction.get(), exponential);  // twice's body was copied, twice
    exponentials += instruction->opcode == Opcode::kExp;
    maps += instruction->opcode == Opcode::kMap;
  }
  EXPECT_EQ(moved, 2);
  EXPECT_EQ(exponentials, 2);
  EXPECT_EQ(maps, 2);
  EXPECT_EQ(subtract->operand(0), module->entry()->parameter(0));  // bound to the call's operands
  EXPECT_EQ(subtract->operand(1), module->entry()->parameter(1));
  EXPECT_NE(subtract->name, "mapped");  // the entry's map has that name
  KILN_ASSERT_OK_AND_ASSIGN(Literal after, testing::Execute(backend, *module, arguments));
  EXPECT_EQ(after, before);
}

// A callee called once whose root is its parameter: the call is its operand.
TEST(PassesCallInlinerTest, MovingAnIdentityCalleeForwardsTheOperand) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(R"(HloModule t
identity {
  ROOT x = f32[2] parameter(0)
}
ENTRY main {
  p = f32[2] parameter(0)
  c = f32[2] call(p), to_apply=identity
  ROOT n = f32[2] negate(c)
})"));
  CallInliner inliner;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, inliner.Run(*module));
  EXPECT_TRUE(changed);
  KILN_ASSERT_OK(VerifyModule(*module));
  EXPECT_EQ(module->computations().size(), 1u);
  EXPECT_EQ(module->entry()->root()->operand(0), module->entry()->parameter(0));
}

TEST(PassesCallInlinerTest, RemoveUnreachableComputationsKeepsCallees) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kNestedCalls));
  EXPECT_FALSE(module->RemoveUnreachableComputations());
  EXPECT_EQ(module->computations().size(), 3u);
}

}  // namespace
}  // namespace kiln
