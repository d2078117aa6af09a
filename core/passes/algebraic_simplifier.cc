#include "core/passes/algebraic_simplifier.h"

#include <cmath>
#include <limits>
#include <vector>

#include "core/interpreter/called_computation.h"

namespace kiln {
namespace {

using Rule = SimplificationRule;

Instruction* SameShapeOr(Instruction* candidate, const Instruction& instruction) {
  return candidate->shape.Compatible(instruction.shape) ? candidate : nullptr;
}

// The operand of a binary op that is the other one's identity, if any.
template <typename IsIdentity>
Instruction* DropIdentityOperand(Instruction& instruction, IsIdentity is_identity, bool commutative) {
  if (instruction.operands.size() != 2) return nullptr;
  if (auto value = UniformValue(*instruction.operand(1)); value && is_identity(*value)) {
    return SameShapeOr(instruction.operand(0), instruction);
  }
  if (!commutative) return nullptr;
  if (auto value = UniformValue(*instruction.operand(0)); value && is_identity(*value)) {
    return SameShapeOr(instruction.operand(1), instruction);
  }
  return nullptr;
}

Instruction* ZeroOf(const Instruction& instruction, RewriteContext& context) {
  auto zero = Literal::Scalar<int64_t>(0).Convert(instruction.shape.element_type());
  if (!zero.ok()) return nullptr;
  return context.Splat(*zero, instruction.shape);
}

// x + 0 -> x (integers), x + (-0.0) -> x (floats: +0.0 would turn -0.0 into +0.0).
Instruction* AddZero(Instruction& instruction, RewriteContext&) {
  return DropIdentityOperand(
      instruction, [](const Literal& v) { return IsIntegerValue(v, 0) || IsNegativeZero(v); }, true);
}

// x - 0 -> x (integers and +0.0 for floats, which is exact: -0.0 - 0.0 = -0.0).
Instruction* SubtractZero(Instruction& instruction, RewriteContext&) {
  return DropIdentityOperand(
      instruction, [](const Literal& v) { return IsIntegerValue(v, 0) || IsPositiveZero(v); }, false);
}

// x - x -> 0 for integers (floats: inf - inf and NaN are not 0).
Instruction* SubtractSelfInteger(Instruction& instruction, RewriteContext& context) {
  if (!IsIntegral(instruction.shape.element_type()) || instruction.operand(0) != instruction.operand(1)) {
    return nullptr;
  }
  return ZeroOf(instruction, context);
}

bool IsOne(const Literal& v) { return IsIntegerValue(v, 1) || IsFloatOne(v); }

Instruction* MultiplyOne(Instruction& instruction, RewriteContext&) {
  return DropIdentityOperand(instruction, IsOne, true);
}

// max(x, -inf) -> x and min(x, +inf) -> x for floats (NaN still propagates: x is NaN).
Instruction* MaximumMinusInfinity(Instruction& instruction, RewriteContext&) {
  return DropIdentityOperand(
      instruction,
      [](const Literal& v) {
        return IsFloating(v.shape().element_type()) &&
               v.GetAsDouble(0) == -std::numeric_limits<double>::infinity();
      },
      true);
}

Instruction* MinimumInfinity(Instruction& instruction, RewriteContext&) {
  return DropIdentityOperand(
      instruction,
      [](const Literal& v) {
        return IsFloating(v.shape().element_type()) &&
               v.GetAsDouble(0) == std::numeric_limits<double>::infinity();
      },
      true);
}

Instruction* DivideOne(Instruction& instruction, RewriteContext&) {
  return DropIdentityOperand(instruction, IsOne, false);
}

// x * 0 -> 0 for integers only.
Instruction* MultiplyZeroInteger(Instruction& instruction, RewriteContext& context) {
  if (!IsIntegral(instruction.shape.element_type())) return nullptr;
  for (const Instruction* operand : instruction.operands) {
    if (auto value = UniformValue(*operand); value && IsIntegerValue(*value, 0))
      return ZeroOf(instruction, context);
  }
  return nullptr;
}

// f(f(x)) -> x for involutions (negate, not).
Instruction* Involution(Instruction& instruction, RewriteContext&) {
  Instruction* inner = instruction.operand(0);
  if (inner->opcode != instruction.opcode) return nullptr;
  return SameShapeOr(inner->operand(0), instruction);
}

Instruction* SelectConstantPredicate(Instruction& instruction, RewriteContext&) {
  auto value = UniformValue(*instruction.operand(0));
  if (!value) return nullptr;
  const std::optional<bool> pred = PredValue(*value);
  if (!pred) return nullptr;
  return SameShapeOr(instruction.operand(*pred ? 1 : 2), instruction);
}

// An array constant of one repeated value -> broadcast of a scalar constant,
// which fuses into consumers and folds with them.
Instruction* UniformConstantToBroadcast(Instruction& instruction, RewriteContext& context) {
  if (!instruction.shape.IsArray() || instruction.shape.rank() == 0 ||
      instruction.shape.element_count() < 2) {
    return nullptr;
  }
  auto value = UniformValue(instruction);
  if (!value) return nullptr;
  return context.Splat(*value, instruction.shape);
}

Instruction* BroadcastOfBroadcast(Instruction& instruction, RewriteContext& context) {
  Instruction* inner = instruction.operand(0);
  if (inner->opcode != Opcode::kBroadcast) return nullptr;
  std::vector<int64_t> dimensions;
  for (int64_t d : inner->attrs.dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(instruction.attrs.dimensions.size())) return nullptr;
    dimensions.push_back(instruction.attrs.dimensions[static_cast<size_t>(d)]);
  }
  return context.Broadcast(inner->operand(0), instruction.shape, std::move(dimensions));
}

Instruction* BroadcastIdentity(Instruction& instruction, RewriteContext&) {
  const Instruction* operand = instruction.operand(0);
  if (operand->shape.dimensions() != instruction.shape.dimensions() ||
      !IsIdentityPermutation(instruction.attrs.dimensions)) {
    return nullptr;
  }
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* ConcatenateSingle(Instruction& instruction, RewriteContext&) {
  if (instruction.operands.size() != 1) return nullptr;
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* SliceFullRange(Instruction& instruction, RewriteContext&) {
  const Attributes& a = instruction.attrs;
  const Shape& shape = instruction.operand(0)->shape;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const auto i = static_cast<size_t>(d);
    if (i >= a.slice_starts.size() || a.slice_starts[i] != 0 || a.slice_limits[i] != shape.dimensions(d) ||
        a.slice_strides[i] != 1) {
      return nullptr;
    }
  }
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* PadNothing(Instruction& instruction, RewriteContext&) {
  for (const PaddingDimension& p : instruction.attrs.padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return nullptr;
  }
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* ReverseNothing(Instruction& instruction, RewriteContext&) {
  if (!instruction.attrs.dimensions.empty()) return nullptr;
  return SameShapeOr(instruction.operand(0), instruction);
}

// Whether `init` is an exact identity of the reducer `op`, so that
// op(init, x) == x bit for bit.
bool IsReducerIdentity(Opcode op, const Literal& init) {
  const ElementType type = init.shape().element_type();
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (type == ElementType::kPred) return !*PredValue(init);
      return IsIntegerValue(init, 0) || (op == Opcode::kAdd && IsNegativeZero(init));
    case Opcode::kMultiply: return IsOne(init);
    case Opcode::kAnd:
      if (type == ElementType::kPred) return *PredValue(init);
      return IsIntegerValue(init, -1) && IsSignedIntegral(type);
    case Opcode::kMaximum:
      return IsFloating(type) && init.GetAsDouble(0) == -std::numeric_limits<double>::infinity();
    case Opcode::kMinimum:
      return IsFloating(type) && init.GetAsDouble(0) == std::numeric_limits<double>::infinity();
    default: return false;
  }
}

// reduce over no dimensions computes op(init, x) per element: x itself when
// init is the reducer's identity.
Instruction* ReduceNoDimensions(Instruction& instruction, RewriteContext&) {
  if (!instruction.attrs.dimensions.empty() || instruction.operands.size() != 2 ||
      instruction.called.size() != 1) {
    return nullptr;
  }
  const std::optional<Opcode> op = interpreter::SimpleBinaryComputation(*instruction.called[0]);
  const Instruction* init = instruction.operand(1);
  if (!op || init->opcode != Opcode::kConstant || !init->literal || !init->shape.IsScalar()) return nullptr;
  if (!IsReducerIdentity(*op, *init->literal)) return nullptr;
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* ConvertSameType(Instruction& instruction, RewriteContext&) {
  if (instruction.operand(0)->shape.element_type() != instruction.shape.element_type()) return nullptr;
  return SameShapeOr(instruction.operand(0), instruction);
}

// copy only changes the layout, and layouts are normalised for the backends.
Instruction* CopyElimination(Instruction& instruction, RewriteContext&) {
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* TransposeIdentity(Instruction& instruction, RewriteContext&) {
  if (!IsIdentityPermutation(instruction.attrs.dimensions)) return nullptr;
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* TransposeOfTranspose(Instruction& instruction, RewriteContext& context) {
  Instruction* inner = instruction.operand(0);
  if (inner->opcode != Opcode::kTranspose) return nullptr;
  const std::vector<int64_t>& outer = instruction.attrs.dimensions;
  const std::vector<int64_t>& first = inner->attrs.dimensions;
  std::vector<int64_t> combined;
  for (int64_t d : outer) {
    if (d < 0 || d >= static_cast<int64_t>(first.size())) return nullptr;
    combined.push_back(first[static_cast<size_t>(d)]);
  }
  if (IsIdentityPermutation(combined)) return SameShapeOr(inner->operand(0), instruction);
  return context.Transpose(inner->operand(0), instruction.shape, std::move(combined));
}

Instruction* ReshapeIdentity(Instruction& instruction, RewriteContext&) {
  if (instruction.operand(0)->shape.dimensions() != instruction.shape.dimensions()) return nullptr;
  return SameShapeOr(instruction.operand(0), instruction);
}

Instruction* ReshapeOfReshape(Instruction& instruction, RewriteContext& context) {
  Instruction* inner = instruction.operand(0);
  if (inner->opcode != Opcode::kReshape) return nullptr;
  Instruction* source = inner->operand(0);
  if (source->shape.dimensions() == instruction.shape.dimensions()) return SameShapeOr(source, instruction);
  return context.Reshape(source, instruction.shape);
}

Instruction* TupleElementOfTuple(Instruction& instruction, RewriteContext&) {
  const Instruction* tuple = instruction.operand(0);
  const int64_t index = instruction.attrs.tuple_index;
  if (tuple->opcode != Opcode::kTuple || index < 0 || index >= static_cast<int64_t>(tuple->operands.size())) {
    return nullptr;
  }
  return SameShapeOr(tuple->operand(static_cast<size_t>(index)), instruction);
}

constexpr Rule kRules[] = {
    {"add-zero", Opcode::kAdd, AddZero},
    {"subtract-zero", Opcode::kSubtract, SubtractZero},
    {"subtract-self-integer", Opcode::kSubtract, SubtractSelfInteger},
    {"multiply-one", Opcode::kMultiply, MultiplyOne},
    {"multiply-zero-integer", Opcode::kMultiply, MultiplyZeroInteger},
    {"divide-one", Opcode::kDivide, DivideOne},
    {"maximum-minus-infinity", Opcode::kMaximum, MaximumMinusInfinity},
    {"minimum-infinity", Opcode::kMinimum, MinimumInfinity},
    {"negate-negate", Opcode::kNegate, Involution},
    {"not-not", Opcode::kNot, Involution},
    {"select-constant-predicate", Opcode::kSelect, SelectConstantPredicate},
    {"uniform-constant-to-broadcast", Opcode::kConstant, UniformConstantToBroadcast},
    {"broadcast-of-broadcast", Opcode::kBroadcast, BroadcastOfBroadcast},
    {"broadcast-identity", Opcode::kBroadcast, BroadcastIdentity},
    {"concatenate-single", Opcode::kConcatenate, ConcatenateSingle},
    {"slice-full-range", Opcode::kSlice, SliceFullRange},
    {"pad-nothing", Opcode::kPad, PadNothing},
    {"reverse-nothing", Opcode::kReverse, ReverseNothing},
    {"reduce-no-dimensions", Opcode::kReduce, ReduceNoDimensions},
    {"convert-same-type", Opcode::kConvert, ConvertSameType},
    {"copy-elimination", Opcode::kCopy, CopyElimination},
    {"transpose-identity", Opcode::kTranspose, TransposeIdentity},
    {"transpose-of-transpose", Opcode::kTranspose, TransposeOfTranspose},
    {"reshape-identity", Opcode::kReshape, ReshapeIdentity},
    {"reshape-of-reshape", Opcode::kReshape, ReshapeOfReshape},
    {"get-tuple-element-of-tuple", Opcode::kGetTupleElement, TupleElementOfTuple},
};

}  // namespace

std::span<const SimplificationRule> AlgebraicSimplificationRules() { return kRules; }

StatusOr<bool> AlgebraicSimplifier::Run(Module& module) {
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation& computation = *owned;
    RewriteContext context(module, computation);
    UseReplacer replacer(computation);
    // A snapshot: instructions the rules add are visited on the next run.
    std::vector<Instruction*> order;
    for (const auto& instruction : computation.instructions()) order.push_back(instruction.get());
    for (Instruction* instruction : order) {
      replacer.Forward(*instruction);
      for (const Rule& rule : kRules) {
        if (rule.opcode != instruction->opcode) continue;
        Instruction* replacement = rule.rewrite(*instruction, context);
        if (replacement == nullptr || replacement == instruction) continue;
        replacer.Replace(instruction, replacement);
        break;
      }
    }
    if (replacer.Apply()) {
      computation.SortTopologically();
      computation.RemoveDeadInstructions();
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln
