#include "core/autodiff/vjp_emitter.h"

#include <utility>

#include "core/scalar_computation.h"
#include "core/shape_inference.h"

namespace kiln::autodiff {

bool Cotangent::IsZero() const {
  if (array != nullptr) return false;
  for (const Cotangent& element : elements) {
    if (!element.IsZero()) return false;
  }
  return true;
}

Instruction* VjpEmitter::Add(Opcode opcode, std::vector<Instruction*> operands, Attributes attrs,
                             const Shape* declared, std::vector<Computation*> called,
                             const std::string& name) {
  std::vector<Shape> operand_shapes;
  for (const Instruction* operand : operands) operand_shapes.push_back(operand->shape);
  std::vector<ProgramShape> signatures;
  for (const Computation* computation : called) signatures.push_back(computation->program_shape());
  StatusOr<Shape> shape = InferShape(opcode, operand_shapes, attrs, signatures, declared);
  Shape result;
  if (shape.ok()) {
    result = std::move(shape).value();
  } else {
    // A rule built an ill-typed instruction: a bug of the rule, reported
    // once; the instruction is still added (with a plausible shape) so the
    // rule can finish without checks at every step.
    if (status_.ok()) {
      status_ = Internal("automatic differentiation built an invalid '", OpcodeName(opcode),
                         "': ", shape.status().message());
    }
    result = declared != nullptr ? *declared
             : operands.empty()  ? Shape::Scalar(ElementType::kF32)
                                 : operands[0]->shape;
  }
  auto instruction = MakeInstruction(opcode, std::move(result), std::move(operands), std::move(attrs));
  instruction->called = std::move(called);
  return AddNamedInstruction(computation_, names_, std::move(instruction),
                             name.empty() ? std::string(OpcodeName(opcode)) : name);
}

Instruction* VjpEmitter::Compare(Instruction* x, Instruction* y, ComparisonDirection direction) {
  Attributes attrs;
  attrs.comparison_direction = direction;
  return Add(Opcode::kCompare, {x, y}, std::move(attrs));
}

Instruction* VjpEmitter::Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
  return Add(Opcode::kSelect, {pred, on_true, on_false});
}

Instruction* VjpEmitter::Constant(Literal value) {
  auto constant = MakeInstruction(Opcode::kConstant, value.shape(), {});
  constant->literal = std::move(value);
  return AddNamedInstruction(computation_, names_, std::move(constant), "constant");
}

Instruction* VjpEmitter::Full(double value, const Shape& like) {
  const ElementType type = like.element_type();
  StatusOr<Literal> scalar = Literal::Scalar<double>(value).Convert(type);
  if (!scalar.ok()) {
    if (status_.ok()) status_ = Internal("automatic differentiation: no constant of type ", like.ToString());
    scalar = Literal::Scalar<double>(value);
  }
  Instruction* added = Constant(std::move(scalar).value());
  if (like.rank() == 0) return added;
  return BroadcastInDim(added, like, {});
}

Instruction* VjpEmitter::ZerosOf(const Shape& shape) {
  if (!shape.IsTuple()) return Zeros(shape);
  std::vector<Instruction*> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(ZerosOf(element));
  return Tuple(std::move(elements));
}

Instruction* VjpEmitter::Convert(Instruction* x, ElementType to) {
  if (x->shape.element_type() == to) return x;
  const Shape declared(to, x->shape.dimensions());
  return Add(Opcode::kConvert, {x}, {}, &declared);
}

Instruction* VjpEmitter::BroadcastInDim(Instruction* x, const Shape& like, std::vector<int64_t> dimensions) {
  const Shape declared(x->shape.element_type(), like.dimensions());
  if (x->shape.dimensions() == declared.dimensions()) return x;
  Attributes attrs;
  attrs.dimensions = std::move(dimensions);
  return Add(Opcode::kBroadcast, {x}, std::move(attrs), &declared);
}

Instruction* VjpEmitter::Reshape(Instruction* x, std::vector<int64_t> dimensions) {
  if (x->shape.dimensions() == dimensions) return x;
  const Shape declared(x->shape.element_type(), std::move(dimensions));
  return Add(Opcode::kReshape, {x}, {}, &declared);
}

Instruction* VjpEmitter::Transpose(Instruction* x, std::vector<int64_t> permutation) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i)
    identity = identity && permutation[i] == static_cast<int64_t>(i);
  if (identity) return x;
  Attributes attrs;
  attrs.dimensions = std::move(permutation);
  return Add(Opcode::kTranspose, {x}, std::move(attrs));
}

Instruction* VjpEmitter::ReduceSum(Instruction* x, std::vector<int64_t> dimensions) {
  if (dimensions.empty()) return x;
  Attributes attrs;
  attrs.dimensions = std::move(dimensions);
  Instruction* zero = Full(0.0, Shape::Scalar(x->shape.element_type()));
  return Add(Opcode::kReduce, {x, zero}, std::move(attrs), nullptr, {Adder(x->shape.element_type())});
}

Instruction* VjpEmitter::SumToShape(Instruction* x, const Shape& target) {
  if (x->shape.dimensions() == target.dimensions()) return x;
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x->shape.rank(); ++d) all.push_back(d);
  return Reshape(ReduceSum(x, std::move(all)), target.dimensions());
}

Instruction* VjpEmitter::GetTupleElement(Instruction* tuple, int64_t index) {
  if (tuple->opcode == Opcode::kTuple) return tuple->operand(static_cast<size_t>(index));
  Attributes attrs;
  attrs.tuple_index = index;
  return Add(Opcode::kGetTupleElement, {tuple}, std::move(attrs));
}

Instruction* VjpEmitter::Tuple(std::vector<Instruction*> elements) {
  return Add(Opcode::kTuple, std::move(elements));
}

Instruction* VjpEmitter::AddParameter(const Shape& shape, const std::string& name) {
  Attributes attrs;
  attrs.parameter_number = static_cast<int64_t>(computation_.parameters().size());
  auto parameter = MakeInstruction(Opcode::kParameter,
                                   shape.IsTuple() ? shape : Shape(shape.element_type(), shape.dimensions()),
                                   {}, std::move(attrs));
  return AddNamedInstruction(computation_, names_, std::move(parameter), name);
}

Instruction* VjpEmitter::Clone(const Instruction& source, std::vector<Instruction*> operands) {
  return CloneInstructionInto(source, computation_, std::move(operands), names_.Make(source.name));
}

void VjpEmitter::Replace(Instruction* old, Instruction* replacement) {
  computation_.ReplaceAllUsesWith(old, replacement);
  replaced_[old] = replacement;
}

Instruction* VjpEmitter::Current(Instruction* value) const {
  for (auto found = replaced_.find(value); found != replaced_.end(); found = replaced_.find(value)) {
    value = found->second;
  }
  return value;
}

Computation* VjpEmitter::Adder(ElementType type) {
  auto found = adders_->find(static_cast<int>(type));
  if (found != adders_->end()) return found->second;
  Computation* added = AddScalarBinaryComputation(module_, Opcode::kAdd, type,
                                                  "vjp_add_" + std::string(ElementTypeName(type)));
  (*adders_)[static_cast<int>(type)] = added;
  return added;
}

}  // namespace kiln::autodiff
