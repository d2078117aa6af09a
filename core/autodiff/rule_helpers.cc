#include "core/autodiff/rule_helpers.h"

#include <memory>
#include <unordered_map>

namespace kiln::autodiff {

bool HasToken(const Shape& shape) {
  if (shape.IsToken()) return true;
  for (const Shape& element : shape.tuple_shapes()) {
    if (HasToken(element)) return true;
  }
  return false;
}

std::vector<int64_t> AllDimensions(const Shape& shape) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < shape.rank(); ++d) all.push_back(d);
  return all;
}

Instruction* AddParameter(Computation& computation, const Shape& shape, int64_t number,
                          const std::string& name) {
  Attributes attrs;
  attrs.parameter_number = number;
  Instruction* parameter = computation.AddInstruction(MakeInstruction(Opcode::kParameter, shape, {}, attrs));
  parameter->name = name;
  return parameter;
}

Computation* NewComputation(Module& module, const std::string& name) {
  return module.AddComputation(std::make_unique<Computation>(name));
}

Instruction* CloneComputation(VjpEmitter& e, const Computation& source,
                              const std::vector<Instruction*>& arguments) {
  std::unordered_map<const Instruction*, Instruction*> copies;
  for (const Instruction* instruction : source.PostOrder()) {
    if (instruction->opcode == Opcode::kParameter) {
      copies[instruction] = arguments.at(static_cast<size_t>(instruction->attrs.parameter_number));
      continue;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands) operands.push_back(copies.at(operand));
    copies[instruction] = e.Clone(*instruction, std::move(operands));
  }
  return copies.at(source.root());
}

std::vector<Shape> StateElements(const Shape& state) {
  if (state.IsTuple()) return state.tuple_shapes();
  return {state};
}

Instruction* AsState(VjpEmitter& e, const Shape& state, std::vector<Instruction*> elements) {
  if (state.IsTuple()) return e.Tuple(std::move(elements));
  return elements[0];
}

Instruction* StateElement(VjpEmitter& e, const Shape& state, Instruction* value, int64_t i) {
  return state.IsTuple() ? e.GetTupleElement(value, i) : value;
}

Computation* PairChooser(Module& module, ElementType type, ComparisonDirection direction) {
  auto computation = std::make_unique<Computation>("select_pair");
  const Shape scalar = Shape::Scalar(type);
  std::vector<Instruction*> p;
  for (int64_t i = 0; i < 4; ++i) p.push_back(AddParameter(*computation, scalar, i, "p" + std::to_string(i)));
  Attributes compare;
  compare.comparison_direction = direction;
  Instruction* keep = computation->AddInstruction(
      MakeInstruction(Opcode::kCompare, Shape::Scalar(ElementType::kPred), {p[0], p[2]}, compare));
  keep->name = "keep";
  Instruction* value =
      computation->AddInstruction(MakeInstruction(Opcode::kSelect, scalar, {keep, p[0], p[2]}));
  value->name = "value";
  Instruction* derivative =
      computation->AddInstruction(MakeInstruction(Opcode::kSelect, scalar, {keep, p[1], p[3]}));
  derivative->name = "derivative";
  Instruction* root = computation->AddInstruction(
      MakeInstruction(Opcode::kTuple, Shape::Tuple({scalar, scalar}), {value, derivative}));
  root->name = "pair";
  computation->set_root(root);
  return module.AddComputation(std::move(computation));
}

Computation* WithIgnoredParameters(Module& module, const Computation& comparator,
                                   const std::vector<ElementType>& types, const std::string& suffix) {
  auto extended = std::make_unique<Computation>(comparator.name() + suffix);
  std::unordered_map<const Instruction*, Instruction*> copies;
  for (const Instruction* parameter : comparator.parameters()) {
    copies[parameter] =
        AddParameter(*extended, parameter->shape, parameter->attrs.parameter_number, parameter->name);
  }
  auto next = static_cast<int64_t>(comparator.parameters().size());
  for (size_t i = 0; i < types.size(); ++i) {
    AddParameter(*extended, Shape::Scalar(types[i]), next++, "ignored_lhs" + std::to_string(i));
    AddParameter(*extended, Shape::Scalar(types[i]), next++, "ignored_rhs" + std::to_string(i));
  }
  NameUniquer names(*extended);
  for (const Instruction* instruction : comparator.PostOrder()) {
    if (instruction->opcode == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands) operands.push_back(copies.at(operand));
    copies[instruction] =
        CloneInstructionInto(*instruction, *extended, std::move(operands), names.Make(instruction->name));
  }
  extended->set_root(copies.at(comparator.root()));
  return module.AddComputation(std::move(extended));
}

}  // namespace kiln::autodiff
