#include "core/lowering/sort_key_comparator.h"

#include <cstring>
#include <initializer_list>
#include <limits>

namespace kiln {
namespace {

// One side of the comparator's compare: the parameter it reads and whether
// jnp's canonicalisation (NaN -> a NaN constant, +-0 -> a zero constant)
// came first.
struct KeyOperand {
  int64_t parameter = -1;
  bool canonical = false;
  uint64_t nan_bits = 0;
  uint64_t zero_bits = 0;
};

// The bits of a scalar float constant.
std::optional<uint64_t> ConstantBits(const Instruction* instruction) {
  if (instruction->opcode != Opcode::kConstant || !instruction->literal.has_value() ||
      !instruction->shape.IsArray() || instruction->shape.rank() != 0 ||
      !FloatBitLayoutOf(instruction->shape.element_type()).has_value()) {
    return std::nullopt;
  }
  const auto bytes = instruction->literal->data<uint8_t>();
  const auto width = static_cast<size_t>(ByteWidth(instruction->shape.element_type()));
  if (bytes.size() != width) return std::nullopt;
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), width);
  return bits;
}

bool PartialCompare(const Instruction* instruction, ComparisonDirection direction) {
  return instruction->opcode == Opcode::kCompare && instruction->operands.size() == 2 &&
         instruction->attrs.comparison_direction == direction &&
         (instruction->attrs.comparison_type == ComparisonType::kDefault ||
          instruction->attrs.comparison_type == ComparisonType::kFloat);
}

// `instruction` as a parameter, or as
//   select(compare(p, p) NE, NaN, select(compare(p, 0) EQ, 0, p))
// (what jnp.sort and jnp.argsort put before a TOTALORDER compare).
std::optional<KeyOperand> ResolveKeyOperand(const Instruction* instruction) {
  if (instruction->opcode == Opcode::kParameter) return KeyOperand{instruction->attrs.parameter_number};
  if (instruction->opcode != Opcode::kSelect || instruction->operands.size() != 3) return std::nullopt;
  const Instruction* is_nan = instruction->operand(0);
  const Instruction* inner = instruction->operand(2);
  if (!PartialCompare(is_nan, ComparisonDirection::kNe) || is_nan->operand(0) != is_nan->operand(1)) {
    return std::nullopt;
  }
  const Instruction* parameter = is_nan->operand(0);
  if (parameter->opcode != Opcode::kParameter) return std::nullopt;
  const std::optional<FloatBitLayout> layout = FloatBitLayoutOf(parameter->shape.element_type());
  const std::optional<uint64_t> nan = ConstantBits(instruction->operand(1));
  if (!layout.has_value() || !nan.has_value() || (*nan & ~layout->sign) <= layout->exponent)
    return std::nullopt;
  if (inner->opcode != Opcode::kSelect || inner->operands.size() != 3 || inner->operand(2) != parameter) {
    return std::nullopt;
  }
  const Instruction* is_zero = inner->operand(0);
  if (!PartialCompare(is_zero, ComparisonDirection::kEq)) return std::nullopt;
  const Instruction* zero_operand =
      is_zero->operand(0) == parameter ? is_zero->operand(1) : is_zero->operand(0);
  if (is_zero->operand(0) != parameter && is_zero->operand(1) != parameter) return std::nullopt;
  const std::optional<uint64_t> compared_zero = ConstantBits(zero_operand);
  const std::optional<uint64_t> zero = ConstantBits(inner->operand(1));
  if (!compared_zero.has_value() || !zero.has_value() || (*compared_zero & ~layout->sign) != 0 ||
      (*zero & ~layout->sign) != 0) {
    return std::nullopt;
  }
  for (const Instruction* constant :
       std::initializer_list<const Instruction*>{instruction->operand(1), inner->operand(1), zero_operand}) {
    if (constant->shape.element_type() != parameter->shape.element_type()) return std::nullopt;
  }
  return KeyOperand{parameter->attrs.parameter_number, true, *nan, *zero};
}

}  // namespace

std::optional<FloatBitLayout> FloatBitLayoutOf(ElementType type) {
  switch (type) {
    case ElementType::kF16: return FloatBitLayout{0x8000, 0x7C00};
    case ElementType::kBF16: return FloatBitLayout{0x8000, 0x7F80};
    case ElementType::kF32: return FloatBitLayout{0x80000000u, 0x7F800000u};
    case ElementType::kF64: return FloatBitLayout{0x8000000000000000ull, 0x7FF0000000000000ull};
    default: return std::nullopt;
  }
}

std::optional<SortKeyPlan> MatchSortKeyComparator(const Instruction& sort) {
  if (sort.called.size() != 1 || sort.operands.empty()) return std::nullopt;
  const Computation& comparator = *sort.called[0];
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode != Opcode::kCompare || root->operands.size() != 2 ||
      comparator.parameters().size() != 2 * sort.operands.size()) {
    return std::nullopt;
  }
  const ComparisonDirection direction = root->attrs.comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) return std::nullopt;
  const std::optional<KeyOperand> lhs = ResolveKeyOperand(root->operand(0));
  const std::optional<KeyOperand> rhs = ResolveKeyOperand(root->operand(1));
  if (!lhs.has_value() || !rhs.has_value() || lhs->parameter < 0 || rhs->parameter < 0 ||
      lhs->parameter / 2 != rhs->parameter / 2 || lhs->parameter == rhs->parameter ||
      lhs->canonical != rhs->canonical || lhs->nan_bits != rhs->nan_bits ||
      lhs->zero_bits != rhs->zero_bits) {
    return std::nullopt;
  }
  SortKeyPlan plan;
  plan.operand = static_cast<int>(lhs->parameter / 2);
  if (static_cast<size_t>(plan.operand) >= sort.operands.size()) return std::nullopt;
  const Shape& shape = sort.operand(static_cast<size_t>(plan.operand))->shape;
  plan.type = shape.element_type();
  if (root->operand(0)->shape.element_type() != plan.type ||
      comparator.parameters()[static_cast<size_t>(lhs->parameter)]->shape.element_type() != plan.type) {
    return std::nullopt;
  }
  // compare(rhs element, lhs element) LT is a descending sort.
  plan.descending = (direction == ComparisonDirection::kGt) != (lhs->parameter % 2 == 1);
  const ComparisonType type = root->attrs.comparison_type;
  if (FloatBitLayoutOf(plan.type).has_value()) {
    if (lhs->canonical) {
      if (type != ComparisonType::kTotalOrder) return std::nullopt;
      plan.order = SortKeyPlan::Order::kCanonicalTotalOrder;
      plan.nan_bits = lhs->nan_bits;
      plan.zero_bits = lhs->zero_bits;
    } else if (type == ComparisonType::kTotalOrder) {
      plan.order = SortKeyPlan::Order::kTotalOrder;
    } else if (type == ComparisonType::kDefault || type == ComparisonType::kFloat) {
      plan.order = SortKeyPlan::Order::kFloat;
    } else {
      return std::nullopt;
    }
  } else if (IsIntegral(plan.type) && !lhs->canonical) {
    const bool fits = type == ComparisonType::kDefault ||
                      (type == ComparisonType::kSigned && IsSignedIntegral(plan.type)) ||
                      (type == ComparisonType::kUnsigned && IsUnsignedIntegral(plan.type));
    if (!fits) return std::nullopt;
    plan.order = SortKeyPlan::Order::kInteger;
  } else {
    return std::nullopt;
  }
  // Positions are kept as 32-bit indices.
  const int64_t rank = shape.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) return std::nullopt;
  if (rank > 0 && shape.dimensions(dimension) >= int64_t{std::numeric_limits<uint32_t>::max()}) {
    return std::nullopt;
  }
  return plan;
}

}  // namespace kiln
