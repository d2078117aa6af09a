// The verifier: a built module passes; each kind of hand-broken module is
// refused with a message naming what is wrong.
#include "core/verifier.h"

#include <string>

#include <gtest/gtest.h>

#include "core/builder.h"

namespace kiln {
namespace {

using ET = ElementType;

Shape F32Shape(std::vector<int64_t> dims) { return Shape(ET::kF32, std::move(dims)); }

// entry: sum_all(x: f32[2,3]) = reduce(x + x, 0) over both dims with `add`.
std::unique_ptr<Module> BuildSample() {
  Builder add("add");
  add.Add(add.Parameter(0, F32Shape({}), "a"), add.Parameter(1, F32Shape({}), "b"));
  auto add_module = add.Build();
  EXPECT_TRUE(add_module.ok());
  Builder builder("sample");
  Op x = builder.Parameter(0, F32Shape({2, 3}), "x");
  Op doubled = builder.Add(x, x);
  builder.Reduce(doubled, builder.ConstantR0<float>(0.0f), **add_module, std::vector<int64_t>{0, 1});
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return std::move(module).value();
}

Instruction* Find(const Module& module, Opcode opcode) {
  for (const auto& instruction : module.entry()->instructions()) {
    if (instruction->opcode == opcode) return instruction.get();
  }
  return nullptr;
}

void ExpectRefused(const Module& module, const std::string& text) {
  const Status status = VerifyModule(module);
  ASSERT_FALSE(status.ok()) << "module was accepted";
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(text), std::string::npos)
      << "'" << text << "' not in: " << status.message();
}

TEST(VerifierTest, BuiltModulePasses) {
  auto module = BuildSample();
  const Status status = VerifyModule(*module);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(VerifyModule(*module->Clone()).ok());
}

TEST(VerifierTest, WrongShapeNamesTheInstruction) {
  auto module = BuildSample();
  Instruction* add = Find(*module, Opcode::kAdd);
  ASSERT_NE(add, nullptr);
  add->shape = F32Shape({3, 2});
  ExpectRefused(*module, "instruction " + add->name);
  ExpectRefused(*module, "shape inference gives f32[2,3]");
}

TEST(VerifierTest, InvalidOperandsAreRefused) {
  auto module = BuildSample();
  Instruction* add = Find(*module, Opcode::kAdd);
  ASSERT_NE(add, nullptr);
  add->operands.pop_back();
  ExpectRefused(*module, "add: takes 2 operands");
}

TEST(VerifierTest, MissingEntryAndRoot) {
  Module empty("empty");
  ExpectRefused(empty, "no entry computation");
  auto module = BuildSample();
  module->entry()->set_root(nullptr);
  ExpectRefused(*module, "has no root");
}

TEST(VerifierTest, OperandFromAnotherComputation) {
  auto module = BuildSample();
  auto other = BuildSample();
  Instruction* add = Find(*module, Opcode::kAdd);
  add->operands[0] = Find(*other, Opcode::kParameter);
  ExpectRefused(*module, "operand from another computation");
}

TEST(VerifierTest, OperandUsedBeforeDefinition) {
  Module module("order");
  auto computation = std::make_unique<Computation>("entry");
  auto parameter = std::make_unique<Instruction>();
  parameter->opcode = Opcode::kParameter;
  parameter->name = "p";
  parameter->shape = F32Shape({2});
  auto negate = std::make_unique<Instruction>();
  negate->opcode = Opcode::kNegate;
  negate->name = "n";
  negate->shape = F32Shape({2});
  negate->operands = {parameter.get()};
  Instruction* root = computation->AddInstruction(std::move(negate));
  computation->AddInstruction(std::move(parameter));
  computation->set_root(root);
  module.set_entry(module.AddComputation(std::move(computation)));
  ExpectRefused(module, "before it is defined");
}

TEST(VerifierTest, ParameterGap) {
  Module module("gap");
  auto computation = std::make_unique<Computation>("entry");
  auto parameter = std::make_unique<Instruction>();
  parameter->opcode = Opcode::kParameter;
  parameter->name = "p1";
  parameter->shape = F32Shape({});
  parameter->attrs.parameter_number = 1;
  computation->set_root(computation->AddInstruction(std::move(parameter)));
  module.set_entry(module.AddComputation(std::move(computation)));
  ExpectRefused(module, "no parameter 0");
}

TEST(VerifierTest, ConstantMustMatchItsLiteral) {
  auto module = BuildSample();
  Instruction* constant = Find(*module, Opcode::kConstant);
  ASSERT_NE(constant, nullptr);
  constant->literal = Literal::Scalar<int32_t>(0);
  ExpectRefused(*module, "its value has shape s32[]");
  constant->literal.reset();
  ExpectRefused(*module, "without a value");
}

TEST(VerifierTest, CalledComputationsAreChecked) {
  auto module = BuildSample();
  Instruction* reduce = Find(*module, Opcode::kReduce);
  ASSERT_NE(reduce, nullptr);
  Computation* to_apply = reduce->called[0];
  reduce->called.clear();
  ExpectRefused(*module, "calls 0 computations; expected 1");
  auto stranger = BuildSample();
  reduce->called = {stranger->entry()};
  ExpectRefused(*module, "not in the module");
  reduce->called = {to_apply};
  EXPECT_TRUE(VerifyModule(*module).ok());
  // A reducer whose signature no longer fits is refused by shape inference.
  to_apply->root()->shape = F32Shape({1});
  ExpectRefused(*module, "instruction");
}

TEST(VerifierTest, LayoutsAndNames) {
  auto module = BuildSample();
  Instruction* add = Find(*module, Opcode::kAdd);
  add->shape.mutable_layout().minor_to_major = {0, 0};
  ExpectRefused(*module, "permutation");
  add->shape.set_layout(DefaultLayout(2));
  EXPECT_TRUE(VerifyModule(*module).ok());
  add->name = Find(*module, Opcode::kParameter)->name;
  ExpectRefused(*module, "two instructions named");
}

TEST(VerifierTest, RecursionIsRefused) {
  auto module = BuildSample();
  Instruction* reduce = Find(*module, Opcode::kReduce);
  Computation* to_apply = reduce->called[0];
  // Make the reducer call the entry: entry -> add -> entry.
  auto call = std::make_unique<Instruction>();
  call->opcode = Opcode::kCall;
  call->name = "loop";
  call->shape = F32Shape({});
  call->called = {module->entry()};
  to_apply->AddInstruction(std::move(call));
  ExpectRefused(*module, "calls itself");
}

}  // namespace
}  // namespace kiln
