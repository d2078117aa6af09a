#include "core/passes/contraction_upcast.h"

#include <algorithm>
#include <vector>

#include "core/ir_edit.h"

namespace kiln {
namespace {

bool IsLowFloat(ElementType type) { return type == ElementType::kF16 || type == ElementType::kBF16; }

// The longest s8 contraction an f32 one computes exactly: each partial sum
// is an integer of at most 1024 * 128 * 128 = 2^24 in magnitude.
constexpr int64_t kExactF32Depth = 1024;

// How many pieces along the input features an s8 x s8 -> s32 convolution
// (lax.conv_general_dilated with preferred_element_type=int32) is cut into so
// that every output of each piece sums at most kExactF32Depth products (the
// piece's kernel elements per output feature); 0 when it is not such a
// convolution or cannot be cut so (a window alone past kExactF32Depth, or
// grouped features too many for one piece).
int64_t Int8ConvolutionPieces(const Instruction& convolution) {
  if (convolution.opcode != Opcode::kConvolution || !convolution.shape.IsArray() ||
      convolution.shape.element_type() != ElementType::kS32 || convolution.operands.size() != 2) {
    return 0;
  }
  for (const Instruction* operand : convolution.operands) {
    if (!operand->shape.IsArray() || operand->shape.element_type() != ElementType::kS8) return 0;
  }
  const Shape& kernel = convolution.operand(1)->shape;
  const ConvolutionDimensionNumbers& dn = convolution.attrs.conv;
  const int64_t output_features = kernel.dimensions(dn.kernel_output_feature_dimension);
  const int64_t input_features = kernel.dimensions(dn.kernel_input_feature_dimension);
  if (output_features <= 0 || input_features <= 0) return 0;
  const int64_t depth = kernel.element_count() / output_features;
  if (depth <= kExactF32Depth) return 1;
  // Cutting the input features of a grouped convolution would cut its groups.
  if (convolution.attrs.feature_group_count != 1 || convolution.attrs.batch_group_count != 1) return 0;
  const int64_t window = depth / input_features;
  const int64_t features_per_piece = kExactF32Depth / window;
  if (features_per_piece == 0) return 0;
  return (input_features + features_per_piece - 1) / features_per_piece;
}

// `operand` restricted to [begin, end) along `dimension`.
Instruction* SliceAlong(Computation& computation, NameUniquer& names, Instruction* operand, int64_t dimension,
                        int64_t begin, int64_t end) {
  Attributes attrs;
  const int64_t rank = operand->shape.rank();
  attrs.slice_starts.assign(static_cast<size_t>(rank), 0);
  attrs.slice_strides.assign(static_cast<size_t>(rank), 1);
  for (int64_t d = 0; d < rank; ++d) attrs.slice_limits.push_back(operand->shape.dimensions(d));
  attrs.slice_starts[static_cast<size_t>(dimension)] = begin;
  attrs.slice_limits[static_cast<size_t>(dimension)] = end;
  std::vector<int64_t> dims = operand->shape.dimensions();
  dims[static_cast<size_t>(dimension)] = end - begin;
  return AddNamedInstruction(
      computation, names,
      MakeInstruction(Opcode::kSlice, Shape(operand->shape.element_type(), std::move(dims)), {operand},
                      attrs),
      operand->name + ".piece");
}

bool Upcastable(const Instruction& instruction) {
  if (Int8ConvolutionPieces(instruction) > 0) return true;
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

bool UpcastIn(Computation& computation, const ContractionUpcast::KeepsOperands& keeps_operands) {
  auto kept = [&](const Instruction& f32_result_form) {
    return keeps_operands != nullptr && keeps_operands(f32_result_form);
  };
  std::vector<Instruction*> targets;
  for (const auto& instruction : computation.instructions()) {
    if (!Upcastable(*instruction)) continue;
    // Already in its f32-result form: a kept one stays as it is.
    if (instruction->shape.element_type() == ElementType::kF32 && kept(*instruction)) continue;
    targets.push_back(instruction.get());
  }
  if (targets.empty()) return false;
  NameUniquer names(computation);
  const UserMap users = ComputeUsers(computation);
  UseReplacer replacer(computation);
  for (Instruction* contraction : targets) {
    replacer.Forward(*contraction);
    if (const int64_t pieces = Int8ConvolutionPieces(*contraction); pieces > 1) {
      // Each piece of the input features in f32 exactly, the pieces' s32
      // results added in s32 (wrapping as the s32 convolution's sums do).
      const ConvolutionDimensionNumbers& dn = contraction->attrs.conv;
      const int64_t features = contraction->operand(1)->shape.dimensions(dn.kernel_input_feature_dimension);
      const int64_t step = (features + pieces - 1) / pieces;
      Shape wide = contraction->shape;
      wide.set_element_type(ElementType::kF32);
      Instruction* sum = nullptr;
      for (int64_t begin = 0; begin < features; begin += step) {
        const int64_t end = std::min(features, begin + step);
        Instruction* input =
            SliceAlong(computation, names, contraction->operand(0), dn.input_feature_dimension, begin, end);
        Instruction* kernel = SliceAlong(computation, names, contraction->operand(1),
                                         dn.kernel_input_feature_dimension, begin, end);
        Instruction* piece =
            AddNamedInstruction(computation, names,
                                MakeInstruction(Opcode::kConvolution, wide,
                                                {ConvertTo(computation, names, input, ElementType::kF32),
                                                 ConvertTo(computation, names, kernel, ElementType::kF32)},
                                                contraction->attrs),
                                contraction->name + ".f32");
        Instruction* exact = AddNamedInstruction(
            computation, names, MakeInstruction(Opcode::kConvert, contraction->shape, {piece}),
            contraction->name);
        sum = sum == nullptr
                  ? exact
                  : AddNamedInstruction(computation, names,
                                        MakeInstruction(Opcode::kAdd, contraction->shape, {sum, exact}),
                                        contraction->name);
      }
      replacer.Replace(contraction, sum);
      continue;
    }
    Shape wide = contraction->shape;
    wide.set_element_type(ElementType::kF32);
    auto product = MakeInstruction(contraction->opcode, wide, contraction->operands, contraction->attrs);
    // (An f32 result reaching here was not kept; s8 operands never are.)
    const bool asked = contraction->shape.element_type() != ElementType::kF32 &&
                       IsLowFloat(contraction->operand(0)->shape.element_type());
    if (!asked || !kept(*product)) {
      product->operands = {ConvertTo(computation, names, contraction->operand(0), ElementType::kF32),
                           ConvertTo(computation, names, contraction->operand(1), ElementType::kF32)};
    }
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
  for (const auto& computation : module.computations())
    changed = UpcastIn(*computation, keeps_operands_) || changed;
  return changed;
}

}  // namespace kiln
