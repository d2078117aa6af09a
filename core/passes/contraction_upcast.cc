#include "core/passes/contraction_upcast.h"

#include <vector>

#include "core/ir_edit.h"

namespace kiln {
namespace {

bool IsLowFloat(ElementType type) { return type == ElementType::kF16 || type == ElementType::kBF16; }

// The longest s8 contraction an f32 one computes exactly: each partial sum
// is an integer of at most 1024 * 128 * 128 = 2^24 in magnitude.
constexpr int64_t kExactF32Depth = 1024;

// An s8 x s8 -> s32 convolution (lax.conv_general_dilated with
// preferred_element_type=int32) whose every output sums at most
// kExactF32Depth products: the kernel's elements per output feature.
bool ExactInF32(const Instruction& convolution) {
  if (convolution.opcode != Opcode::kConvolution || !convolution.shape.IsArray() ||
      convolution.shape.element_type() != ElementType::kS32 || convolution.operands.size() != 2) {
    return false;
  }
  for (const Instruction* operand : convolution.operands) {
    if (!operand->shape.IsArray() || operand->shape.element_type() != ElementType::kS8) return false;
  }
  const Shape& kernel = convolution.operand(1)->shape;
  const int64_t output_features = kernel.dimensions(convolution.attrs.conv.kernel_output_feature_dimension);
  return output_features > 0 && kernel.element_count() / output_features <= kExactF32Depth;
}

bool Upcastable(const Instruction& instruction) {
  if (ExactInF32(instruction)) return true;
  if (instruction.opcode != Opcode::kDot && instruction.opcode != Opcode::kConvolution) return false;
  // A low-precision result, or an f32 one (preferred_element_type=f32).
  if (!instruction.shape.IsArray()) return false;
  const ElementType result = instruction.shape.element_type();
  if (!IsLowFloat(result) && result != ElementType::kF32) return false;
  if (instruction.operands.size() != 2) return false;
  for (const Instruction* operand : instruction.operands) {
    if (!operand->shape.IsArray() || !IsLowFloat(operand->shape.element_type())) return false;
  }
  return true;
}

Instruction* ConvertTo(Computation& computation, NameUniquer& names, Instruction* operand, ElementType type) {
  Shape shape = operand->shape;
  shape.set_element_type(type);
  return AddNamedInstruction(computation, names, MakeInstruction(Opcode::kConvert, shape, {operand}),
                             operand->name + ".f32");
}

bool UpcastIn(Computation& computation) {
  std::vector<Instruction*> targets;
  for (const auto& instruction : computation.instructions()) {
    if (Upcastable(*instruction)) targets.push_back(instruction.get());
  }
  if (targets.empty()) return false;
  NameUniquer names(computation);
  const UserMap users = ComputeUsers(computation);
  UseReplacer replacer(computation);
  for (Instruction* contraction : targets) {
    replacer.Forward(*contraction);
    Instruction* lhs = ConvertTo(computation, names, contraction->operand(0), ElementType::kF32);
    Instruction* rhs = ConvertTo(computation, names, contraction->operand(1), ElementType::kF32);
    Shape wide = contraction->shape;
    wide.set_element_type(ElementType::kF32);
    auto product = MakeInstruction(contraction->opcode, wide, {lhs, rhs}, contraction->attrs);
    Instruction* computed =
        AddNamedInstruction(computation, names, std::move(product), contraction->name + ".f32");
    if (contraction->shape.element_type() == ElementType::kF32) {
      replacer.Replace(contraction, computed);  // already the result: nothing to round
      continue;
    }
    Instruction* narrowed = AddNamedInstruction(
        computation, names, MakeInstruction(Opcode::kConvert, contraction->shape, {computed}),
        contraction->name);
    replacer.Replace(contraction, narrowed);
    // A convert of the result back to f32 reads the f32 result itself: the
    // rounding to f16/bf16 and back is dropped, as XLA's CPU pipeline drops
    // it (SimplifyFPConversions, excess precision allowed by default), so
    // `dot(bf16, bf16).astype(f32)` gives JAX's values.
    auto found = users.find(contraction);
    if (found == users.end()) continue;
    for (Instruction* user : found->second) {
      if (user->opcode == Opcode::kConvert && user->shape.IsArray() &&
          user->shape.element_type() == ElementType::kF32) {
        replacer.Replace(user, computed);
      }
    }
  }
  replacer.Apply();
  computation.SortTopologically();
  computation.RemoveDeadInstructions();
  return true;
}

}  // namespace

StatusOr<bool> ContractionUpcast::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) changed = UpcastIn(*computation) || changed;
  return changed;
}

}  // namespace kiln
