#include "core/interpreter/called_computation.h"

#include <cstring>

namespace kiln::interpreter {
namespace {

bool IsCommutative(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor: return true;
    default: return false;
  }
}

bool IsScalarParameter(const Instruction* instruction, int64_t number) {
  return instruction->opcode == Opcode::kParameter && instruction->attrs.parameter_number == number &&
         instruction->shape.IsScalar();
}

}  // namespace

std::optional<Opcode> SimpleBinaryComputation(const Computation& computation) {
  const Instruction* root = computation.root();
  if (root == nullptr || computation.parameters().size() != 2) return std::nullopt;
  if (OpcodeKind(root->opcode) != OpKind::kBinary || root->operands.size() != 2) return std::nullopt;
  if (!root->shape.IsScalar()) return std::nullopt;
  const Instruction* lhs = root->operands[0];
  const Instruction* rhs = root->operands[1];
  if (lhs->shape.element_type() != root->shape.element_type()) return std::nullopt;
  if (IsScalarParameter(lhs, 0) && IsScalarParameter(rhs, 1)) return root->opcode;
  if (IsCommutative(root->opcode) && IsScalarParameter(lhs, 1) && IsScalarParameter(rhs, 0))
    return root->opcode;
  return std::nullopt;
}

const Instruction* SimpleComparator(const Computation& computation) {
  const Instruction* root = computation.root();
  if (root == nullptr || root->opcode != Opcode::kCompare) return nullptr;
  const auto direction = root->attrs.comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) return nullptr;
  if (!IsScalarParameter(root->operands[0], 0) || !IsScalarParameter(root->operands[1], 1)) return nullptr;
  return root;
}

ScalarCall::ScalarCall(ComputationRunner& runner, const Computation& computation,
                       const std::vector<ElementType>& types)
    : runner_(runner), computation_(computation) {
  arguments_.reserve(types.size());
  for (ElementType type : types) arguments_.emplace_back(Shape::Scalar(type));
  for (const Literal& argument : arguments_) pointers_.push_back(&argument);
}

void ScalarCall::Set(size_t argument, const Literal& source, int64_t linear) {
  CopyElement(source, linear, arguments_[argument], 0);
}

StatusOr<Literal> ScalarCall::Call() { return runner_.Run(computation_, pointers_); }

const Literal& ScalarCall::Leaf(const Literal& result, size_t i) {
  return result.shape().IsTuple() ? result.tuple_elements()[i] : result;
}

void CopyElement(const Literal& source, int64_t from, Literal& destination, int64_t to) {
  const int bytes = ByteWidth(source.shape().element_type());
  std::memcpy(destination.raw().data() + to * bytes, source.raw().data() + from * bytes,
              static_cast<size_t>(bytes));
}

}  // namespace kiln::interpreter
