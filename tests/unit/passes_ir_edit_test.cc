// IR editing primitives the passes build on: users, replace-all-uses,
// removal, topological re-sorting, unique names and cloning.
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/ir_edit.h"
#include "core/verifier.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kText[] = R"(HloModule edit
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  m = f32[4] multiply(a, a)
  ROOT s = f32[4] subtract(m, a)
}
)";

Instruction* Named(const Computation& computation, const std::string& name) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->name == name) return instruction.get();
  }
  return nullptr;
}

TEST(PassesIrEditTest, UsersListsEachUserOnce) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  Computation& entry = *module->entry();
  Instruction* a = Named(entry, "a");
  const std::vector<Instruction*> users = entry.Users(a);
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users[0]->name, "m");
  EXPECT_EQ(users[1]->name, "s");
  const UserMap map = ComputeUsers(entry);
  EXPECT_EQ(map.at(a), users);
  EXPECT_TRUE(map.at(entry.root()).empty());
}

TEST(PassesIrEditTest, ReplaceAllUsesRewiresOperandsAndRoot) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  Computation& entry = *module->entry();
  Instruction* a = Named(entry, "a");
  Instruction* x = Named(entry, "x");
  entry.ReplaceAllUsesWith(a, x);
  EXPECT_EQ(Named(entry, "m")->operand(0), x);
  EXPECT_EQ(Named(entry, "s")->operand(1), x);
  EXPECT_TRUE(entry.Users(a).empty());
  Instruction* m = Named(entry, "m");
  entry.ReplaceAllUsesWith(entry.root(), m);
  EXPECT_EQ(entry.root(), m);
}

TEST(PassesIrEditTest, RemoveInstructionRefusesUsedRootAndParameters) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  Computation& entry = *module->entry();
  EXPECT_FALSE(entry.RemoveInstruction(Named(entry, "a")).ok());
  EXPECT_FALSE(entry.RemoveInstruction(entry.root()).ok());
  EXPECT_FALSE(entry.RemoveInstruction(Named(entry, "x")).ok());
  entry.set_root(Named(entry, "m"));
  KILN_ASSERT_OK(entry.RemoveInstruction(Named(entry, "s")));
  EXPECT_EQ(Named(entry, "s"), nullptr);
  KILN_ASSERT_OK(VerifyModule(*module));
}

TEST(PassesIrEditTest, SortTopologicallyMovesAppendedOperandsFirst) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  Computation& entry = *module->entry();
  NameUniquer names(entry);
  Instruction* x = Named(entry, "x");
  Instruction* negated =
      AddNamedInstruction(entry, names, MakeInstruction(Opcode::kNegate, x->shape, {x}), "a");
  EXPECT_EQ(negated->name, "a.1");
  entry.ReplaceAllUsesWith(Named(entry, "a"), negated);
  EXPECT_FALSE(VerifyModule(*module).ok());  // users of a.1 come before it
  entry.SortTopologically();
  KILN_ASSERT_OK(VerifyModule(*module));
  // The valid prefix keeps its order.
  EXPECT_EQ(entry.instructions()[0]->name, "x");
  EXPECT_EQ(entry.instructions()[1]->name, "y");
}

TEST(PassesIrEditTest, CloneInstructionIntoAnotherComputation) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  auto computation = std::make_unique<Computation>("copy");
  Instruction* p0 =
      computation->AddInstruction(MakeInstruction(Opcode::kParameter, Shape(ElementType::kF32, {4}), {}));
  p0->name = "p0";
  const Instruction* m = Named(*module->entry(), "m");
  Instruction* clone = CloneInstructionInto(*m, *computation, {p0, p0}, "m_copy");
  computation->set_root(clone);
  EXPECT_EQ(clone->opcode, Opcode::kMultiply);
  EXPECT_EQ(clone->operand(1), p0);
  EXPECT_EQ(m->operand(0)->name, "a");  // the source is untouched
  module->AddComputation(std::move(computation));
  KILN_ASSERT_OK(VerifyModule(*module));
}

TEST(PassesIrEditTest, NameUniquerAvoidsExistingNames) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  NameUniquer names(*module->entry());
  EXPECT_EQ(names.Make("fresh"), "fresh");
  EXPECT_EQ(names.Make("fresh"), "fresh.1");
  EXPECT_EQ(names.Make("x"), "x.1");
}

TEST(PassesIrEditTest, UseReplacerForwardsOperandsAndAppliesOnce) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  Computation& entry = *module->entry();
  Instruction* x = Named(entry, "x");
  Instruction* a = Named(entry, "a");
  Instruction* m = Named(entry, "m");
  UseReplacer replacer(entry);
  replacer.Replace(a, x);
  EXPECT_EQ(m->operand(0), a);  // nothing changes until forwarded
  replacer.Forward(*m);
  EXPECT_EQ(m->operand(0), x);
  EXPECT_EQ(m->operand(1), x);
  replacer.Replace(entry.root(), m);
  EXPECT_EQ(Named(entry, "s")->operand(1), a);
  EXPECT_TRUE(replacer.Apply());
  EXPECT_EQ(Named(entry, "s")->operand(1), x);
  EXPECT_EQ(entry.root(), m);
  EXPECT_TRUE(entry.Users(a).empty());
  EXPECT_FALSE(UseReplacer(entry).Apply());  // no replacement, no change
}

TEST(PassesIrEditTest, UseReplacerFollowsChainsButNeverMakesAnInstructionItsOwnOperand) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kText));
  Computation& entry = *module->entry();
  NameUniquer names(entry);
  Instruction* a = Named(entry, "a");
  Instruction* y = Named(entry, "y");
  // a -> n = negate(a) -> y: n reads a (its own replacement would be itself).
  Instruction* n = AddNamedInstruction(entry, names, MakeInstruction(Opcode::kNegate, a->shape, {a}), "n");
  UseReplacer replacer(entry);
  replacer.Replace(a, n);
  replacer.Replace(n, y);
  EXPECT_EQ(replacer.Resolve(a), y);
  EXPECT_EQ(replacer.Resolve(a, n), a);
  replacer.Apply();
  EXPECT_EQ(n->operand(0), a);
  EXPECT_EQ(Named(entry, "m")->operand(0), y);
}

TEST(PassesIrEditTest, ModuleFindsComputationsByTheirCurrentNames) {
  Module module("m");
  Computation* first = module.AddComputation(std::make_unique<Computation>("f"));
  Computation* second = module.AddComputation(std::make_unique<Computation>("f"));
  Computation* third = module.AddComputation(std::make_unique<Computation>("f"));
  EXPECT_EQ(second->name(), "f.1");
  EXPECT_EQ(third->name(), "f.2");
  EXPECT_EQ(module.FindComputation("f.1"), second);
  second->set_name("g");
  EXPECT_EQ(module.FindComputation("f.1"), nullptr);
  EXPECT_EQ(module.FindComputation("g"), second);
  EXPECT_EQ(module.FindComputation("f"), first);
  EXPECT_EQ(module.AddComputation(std::make_unique<Computation>("f"))->name(), "f.3");
  EXPECT_EQ(module.AddComputation(std::make_unique<Computation>("f.1"))->name(), "f.1");
}

}  // namespace
}  // namespace kiln
