// The op-traits table (core/opcode.h) and the questions passes ask of it.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/ir.h"
#include "core/opcode.h"

namespace kiln {
namespace {

std::vector<Opcode> AllOpcodes() {
  std::vector<Opcode> all;
  for (int i = 0; i < static_cast<int>(Opcode::kOpcodeCount); ++i) all.push_back(static_cast<Opcode>(i));
  return all;
}

TEST(OpTraitsTest, EveryRowIsConsistent) {
  std::set<std::string_view> names;
  for (Opcode opcode : AllOpcodes()) {
    const std::string name(OpcodeName(opcode));
    SCOPED_TRACE(name);
    EXPECT_TRUE(names.insert(OpcodeName(opcode)).second) << "HLO name listed twice";
    EXPECT_EQ(OpcodeFromName(name), opcode);
    if (OpcodeKind(opcode) != OpKind::kOther) {
      EXPECT_TRUE(IsElementwise(opcode)) << "unary/binary/ternary kind";
    }
    if (IsElementaryFunction(opcode)) {
      EXPECT_TRUE(IsElementwise(opcode));
      EXPECT_TRUE(IsDifferentiable(opcode));
    }
    if (IsElementwise(opcode)) {
      EXPECT_TRUE(IsLoopFusible(opcode));
    }
    if (HasTraits(opcode, kSideEffect) || HasTraits(opcode, kRandom) || HasTraits(opcode, kOpaque) ||
        HasTraits(opcode, kCollective) || HasTraits(opcode, kControlFlow) || HasTraits(opcode, kOrdering)) {
      EXPECT_FALSE(MayMerge(opcode));
      EXPECT_FALSE(MayFold(opcode));
      EXPECT_FALSE(IsLoopFusible(opcode));
    }
    if (HasTraits(opcode, kStateful)) {
      EXPECT_TRUE(HasTraits(opcode, kRandom));
    }
    // Ops that only produce integers, predicates or tokens have no gradient.
    if (HasTraits(opcode, kSideEffect) || HasTraits(opcode, kRandom)) {
      EXPECT_FALSE(IsDifferentiable(opcode));
    }
  }
}

TEST(OpTraitsTest, WhatPassesAsk) {
  EXPECT_TRUE(MayMerge(Opcode::kAdd));
  EXPECT_TRUE(MayFold(Opcode::kAdd));
  EXPECT_TRUE(IsLoopFusible(Opcode::kAdd));
  EXPECT_TRUE(IsDifferentiable(Opcode::kAdd));

  EXPECT_FALSE(MayMerge(Opcode::kParameter));
  EXPECT_FALSE(MayFold(Opcode::kParameter));
  // Folding a broadcast or an iota would only grow the module.
  EXPECT_TRUE(MayMerge(Opcode::kBroadcast));
  EXPECT_FALSE(MayFold(Opcode::kBroadcast));
  EXPECT_FALSE(MayFold(Opcode::kIota));
  // A replica id is the same within one execution, but unknown at compile time.
  EXPECT_TRUE(MayMerge(Opcode::kReplicaId));
  EXPECT_FALSE(MayFold(Opcode::kReplicaId));

  EXPECT_TRUE(HasTraits(Opcode::kOutfeed, kSideEffect));
  EXPECT_TRUE(HasTraits(Opcode::kRecvDone, kSideEffect));
  EXPECT_FALSE(HasTraits(Opcode::kCustomCall, kSideEffect)) << "decided by its attribute";
  EXPECT_TRUE(HasTraits(Opcode::kRng, kStateful | kRandom));
  EXPECT_FALSE(HasTraits(Opcode::kRngBitGenerator, kStateful)) << "its state is an operand";
  EXPECT_FALSE(MayMerge(Opcode::kRngBitGenerator));

  EXPECT_TRUE(IsLoopFusible(Opcode::kTranspose));
  EXPECT_FALSE(IsLoopFusible(Opcode::kDot));
  EXPECT_FALSE(IsElementwise(Opcode::kBitcastConvert)) << "elementwise only when the widths match";
  EXPECT_TRUE(IsElementwise(Opcode::kCompare));

  EXPECT_TRUE(IsDifferentiable(Opcode::kConvolution));
  EXPECT_TRUE(IsDifferentiable(Opcode::kWhile));
  EXPECT_TRUE(IsDifferentiable(Opcode::kFloor)) << "zero gradient, as in JAX";
  EXPECT_FALSE(IsDifferentiable(Opcode::kAnd));
  EXPECT_FALSE(IsDifferentiable(Opcode::kCompare));
  EXPECT_FALSE(IsDifferentiable(Opcode::kIota));
}

std::vector<std::string> LiveNames(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  std::vector<std::string> names;
  if (!module.ok()) return names;
  for (const Instruction* instruction : (*module)->entry()->LiveInstructions())
    names.push_back(instruction->name);
  return names;
}

TEST(OpTraitsTest, LiveInstructionsKeepSideEffectsTheRootIgnores) {
  // The unused outfeed and its operands run; the unused negate and the custom
  // call without side effects do not; the one with side effects does.
  EXPECT_EQ(LiveNames(R"(HloModule t
ENTRY main {
  x = f32[2] parameter(0)
  unused = f32[2] negate(x)
  doubled = f32[2] add(x, x)
  token = token[] after-all()
  out = token[] outfeed(doubled, token), outfeed_shape=f32[2]
  pure = f32[2] custom-call(x), custom_call_target="pure_target"
  effect = f32[2] custom-call(x), custom_call_target="effect_target", custom_call_has_side_effect=true
  ROOT r = f32[2] abs(x)
})"),
            (std::vector<std::string>{"x", "doubled", "token", "out", "effect", "r"}));
}

TEST(OpTraitsTest, DeadCodeEliminationKeepsWhatHasSideEffects) {
  auto module = ParseHloModule(R"(HloModule t
ENTRY main {
  x = f32[2] parameter(0)
  unused = f32[2] negate(x)
  token = token[] after-all()
  out = token[] outfeed(x, token), outfeed_shape=f32[2]
  ROOT r = f32[2] abs(x)
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  Computation& entry = *(*module)->entry();
  EXPECT_TRUE(entry.RemoveDeadInstructions());
  std::vector<std::string> names;
  for (const auto& instruction : entry.instructions()) names.push_back(instruction->name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "token", "out", "r"}));
  EXPECT_TRUE(HasSideEffect(*entry.instructions()[2]));
  EXPECT_FALSE(HasSideEffect(*entry.instructions()[3]));
}

}  // namespace
}  // namespace kiln
