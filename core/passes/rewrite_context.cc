#include "core/passes/rewrite_context.h"

#include <cmath>
#include <cstring>

namespace kiln {

Instruction* RewriteContext::Add(std::unique_ptr<Instruction> instruction, const std::string& base) {
  return AddNamedInstruction(computation_, names_, std::move(instruction), base);
}

Instruction* RewriteContext::Constant(Literal value, const std::string& base) {
  auto instruction = MakeInstruction(Opcode::kConstant, value.shape(), {});
  instruction->literal = std::move(value);
  return Add(std::move(instruction), base);
}

Instruction* RewriteContext::Broadcast(Instruction* operand, const Shape& shape,
                                       std::vector<int64_t> dimensions) {
  Attributes attrs;
  attrs.dimensions = std::move(dimensions);
  Shape result(shape.element_type(), shape.dimensions());
  return Add(MakeInstruction(Opcode::kBroadcast, std::move(result), {operand}, std::move(attrs)),
             "broadcast");
}

Instruction* RewriteContext::Splat(const Literal& scalar, const Shape& shape) {
  Instruction* constant = Constant(scalar);
  if (shape.rank() == 0) return constant;
  return Broadcast(constant, shape, {});
}

Instruction* RewriteContext::Reshape(Instruction* operand, const Shape& shape) {
  Shape result(shape.element_type(), shape.dimensions());
  return Add(MakeInstruction(Opcode::kReshape, std::move(result), {operand}), "reshape");
}

Instruction* RewriteContext::Transpose(Instruction* operand, const Shape& shape,
                                       std::vector<int64_t> permutation) {
  Attributes attrs;
  attrs.dimensions = std::move(permutation);
  Shape result(shape.element_type(), shape.dimensions());
  return Add(MakeInstruction(Opcode::kTranspose, std::move(result), {operand}, std::move(attrs)),
             "transpose");
}

std::optional<Literal> UniformValue(const Instruction& instruction) {
  if (instruction.opcode == Opcode::kBroadcast) return UniformValue(*instruction.operand(0));
  if (instruction.opcode != Opcode::kConstant || !instruction.literal) return std::nullopt;
  const Literal& literal = *instruction.literal;
  const Shape& shape = literal.shape();
  if (!shape.IsArray() || literal.element_count() < 1) return std::nullopt;
  const auto width = static_cast<size_t>(ByteWidth(shape.element_type()));
  std::span<const uint8_t> bytes = literal.raw();
  if (width == 0 || bytes.size() < width) return std::nullopt;
  for (size_t offset = width; offset + width <= bytes.size(); offset += width) {
    if (std::memcmp(bytes.data(), bytes.data() + offset, width) != 0) return std::nullopt;
  }
  auto scalar = Literal::FromBytes(Shape::Scalar(shape.element_type()), bytes.first(width));
  if (!scalar.ok()) return std::nullopt;
  return std::move(scalar).value();
}

bool IsIntegerValue(const Literal& scalar, int64_t value) {
  const ElementType type = scalar.shape().element_type();
  if (!scalar.shape().IsScalar() || !IsIntegral(type)) return false;
  return scalar.GetAsInt64(0) == value;
}

bool IsFloatOne(const Literal& scalar) {
  return scalar.shape().IsScalar() && IsFloating(scalar.shape().element_type()) &&
         scalar.GetAsDouble(0) == 1.0;
}

bool IsPositiveZero(const Literal& scalar) {
  if (!scalar.shape().IsScalar() || !IsFloating(scalar.shape().element_type())) return false;
  const double value = scalar.GetAsDouble(0);
  return value == 0.0 && !std::signbit(value);
}

bool IsNegativeZero(const Literal& scalar) {
  if (!scalar.shape().IsScalar() || !IsFloating(scalar.shape().element_type())) return false;
  const double value = scalar.GetAsDouble(0);
  return value == 0.0 && std::signbit(value);
}

std::optional<bool> PredValue(const Literal& scalar) {
  if (!scalar.shape().IsScalar() || scalar.shape().element_type() != ElementType::kPred) return std::nullopt;
  return scalar.data<bool>()[0];
}

bool IsIdentityPermutation(std::span<const int64_t> permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace kiln
