#include "backends/cuda/cufft_transform.h"

#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "core/ir_edit.h"
#include "core/literal.h"

namespace kiln::cuda {
namespace {

constexpr int64_t kCufftIntMax = std::numeric_limits<int>::max();

bool IsInverse(FftType type) { return type == FftType::kIfft || type == FftType::kIrfft; }

// The cuFFT type of an fft of `type` whose operand holds `element`.
StatusOr<cufftType> CufftTypeOf(FftType type, ElementType element) {
  const bool f32 = element == ElementType::kF32 || element == ElementType::kC64;
  const bool f64 = element == ElementType::kF64 || element == ElementType::kC128;
  if (!f32 && !f64)
    return Unimplemented("cuFFT transforms f32, f64, c64 and c128, not ", ElementTypeName(element));
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft: return f32 ? CUFFT_C2C : CUFFT_Z2Z;
    case FftType::kRfft: return f32 ? CUFFT_R2C : CUFFT_D2Z;
    case FftType::kIrfft: return f32 ? CUFFT_C2R : CUFFT_Z2D;
  }
  return Internal("an fft of an unknown type");
}

// `value` as a cuFFT int, or UNIMPLEMENTED naming `what`.
StatusOr<int> CufftInt(int64_t value, const char* what) {
  if (value <= 0 || value > kCufftIntMax)
    return Unimplemented("its ", what, " ", value, " is not a positive int");
  return static_cast<int>(value);
}

// The instruction made at the end of `computation`, named after `base`.
Instruction* Add(Computation& computation, NameUniquer& names, Opcode opcode, Shape shape,
                 std::vector<Instruction*> operands, const std::string& base, Attributes attrs = {}) {
  return AddNamedInstruction(computation, names,
                             MakeInstruction(opcode, std::move(shape), std::move(operands), std::move(attrs)),
                             base);
}

// `value` * (1/N) elementwise, in the real type of `value`'s elements.
Instruction* ScaleByInverseCount(Computation& computation, NameUniquer& names, Instruction* value,
                                 int64_t count, const std::string& base) {
  const Shape& shape = value->shape;
  const ElementType real =
      IsComplex(shape.element_type()) ? ComplexComponentType(shape.element_type()) : shape.element_type();
  std::unique_ptr<Instruction> constant = MakeInstruction(Opcode::kConstant, Shape::Scalar(real), {});
  const double scale = 1.0 / static_cast<double>(count);
  constant->literal = real == ElementType::kF32 ? Literal::Scalar<float>(static_cast<float>(scale))
                                                : Literal::Scalar<double>(scale);
  Instruction* factor = AddNamedInstruction(computation, names, std::move(constant), base + ".scale");
  Shape real_shape = shape;
  real_shape.set_element_type(real);
  Instruction* factors = Add(computation, names, Opcode::kBroadcast, real_shape, {factor}, base + ".scales");
  if (!IsComplex(shape.element_type()))
    return Add(computation, names, Opcode::kMultiply, shape, {value, factors}, base + ".scaled");
  Instruction* re = Add(computation, names, Opcode::kReal, real_shape, {value}, base + ".re");
  Instruction* im = Add(computation, names, Opcode::kImag, real_shape, {value}, base + ".im");
  Instruction* scaled_re =
      Add(computation, names, Opcode::kMultiply, real_shape, {re, factors}, base + ".re_scaled");
  Instruction* scaled_im =
      Add(computation, names, Opcode::kMultiply, real_shape, {im, factors}, base + ".im_scaled");
  return Add(computation, names, Opcode::kComplex, shape, {scaled_re, scaled_im}, base + ".scaled");
}

}  // namespace

std::string CufftTransform::ToString() const {
  std::string text = "cufftMakePlanMany(rank " + std::to_string(rank) + ", n {";
  for (int i = 0; i < rank; ++i) text += (i > 0 ? "," : "") + std::to_string(n[static_cast<size_t>(i)]);
  text += "}, idist " + std::to_string(idist) + ", odist " + std::to_string(odist) + ", type 0x";
  constexpr char kHex[] = "0123456789abcdef";
  text += kHex[(type >> 4) & 15];
  text += kHex[type & 15];
  text += ", batch " + std::to_string(batch) + ")";
  if (type == CUFFT_C2C || type == CUFFT_Z2Z) text += direction == CUFFT_INVERSE ? " inverse" : " forward";
  return text;
}

bool IsCufftCall(const Instruction& instruction) {
  return instruction.opcode == Opcode::kCustomCall &&
         instruction.attrs.custom_call_target == kCufftCallTarget;
}

StatusOr<CufftTransform> PlanCufftTransform(const Instruction& fft) {
  if (fft.opcode != Opcode::kFft && !IsCufftCall(fft)) return Unimplemented("'", fft.name, "' is not an fft");
  if (fft.operands.size() != 1)
    return Unimplemented("'", fft.name, "' has ", fft.operands.size(), " operands");
  const Shape& input = fft.operand(0)->shape;
  const Shape& output = fft.shape;
  if (!input.IsArray() || !output.IsArray() || !input.HasDefaultLayout() || !output.HasDefaultLayout())
    return Unimplemented("cuFFT takes dense row-major arrays");
  const FftType fft_type = fft.attrs.fft_type;
  const std::vector<int64_t>& lengths = fft.attrs.fft_length;
  const auto rank = static_cast<int64_t>(lengths.size());
  if (rank < 1 || rank > 3 || input.rank() < rank || output.rank() != input.rank())
    return Unimplemented("cuFFT transforms 1 to 3 trailing dimensions");
  CufftTransform transform;
  KILN_ASSIGN_OR_RETURN(transform.type, CufftTypeOf(fft_type, input.element_type()));
  transform.direction = fft_type == FftType::kIfft ? CUFFT_INVERSE : CUFFT_FORWARD;
  transform.rank = static_cast<int>(rank);
  const int64_t first = input.rank() - rank;
  int64_t input_count = 1, output_count = 1, batch = 1;
  for (int64_t i = 0; i < first; ++i) batch *= input.dimensions(i);
  for (int64_t i = 0; i < rank; ++i) {
    const auto at = static_cast<size_t>(i);
    KILN_ASSIGN_OR_RETURN(transform.n[at], CufftInt(lengths[at], "fft length"));
    KILN_ASSIGN_OR_RETURN(transform.inembed[at], CufftInt(input.dimensions(first + i), "dimension"));
    KILN_ASSIGN_OR_RETURN(transform.onembed[at], CufftInt(output.dimensions(first + i), "dimension"));
    input_count *= transform.inembed[at];
    output_count *= transform.onembed[at];
  }
  KILN_ASSIGN_OR_RETURN(transform.idist, CufftInt(input_count, "transform's input size"));
  KILN_ASSIGN_OR_RETURN(transform.odist, CufftInt(output_count, "transform's output size"));
  KILN_ASSIGN_OR_RETURN(transform.batch, CufftInt(batch, "batch"));
  transform.overwrites_input = fft_type == FftType::kIrfft;
  transform.input_bytes = input.byte_size();
  return transform;
}

StatusOr<bool> CufftCalls::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> ffts;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode == Opcode::kFft && PlanCufftTransform(*instruction).ok())
        ffts.push_back(instruction.get());
    }
    if (ffts.empty()) continue;
    NameUniquer names(*computation);
    for (Instruction* fft : ffts) {
      Attributes attrs;
      attrs.custom_call_target = std::string(kCufftCallTarget);
      attrs.fft_type = fft->attrs.fft_type;
      attrs.fft_length = fft->attrs.fft_length;
      const std::string base = fft->name;
      Instruction* call = Add(*computation, names, Opcode::kCustomCall, fft->shape, fft->operands,
                              base + ".cufft", std::move(attrs));
      Instruction* replacement = call;
      if (IsInverse(fft->attrs.fft_type)) {
        int64_t count = 1;
        for (int64_t length : fft->attrs.fft_length) count *= length;
        replacement = ScaleByInverseCount(*computation, names, call, count, base);
      }
      computation->ReplaceAllUsesWith(fft, replacement);
      KILN_RETURN_IF_ERROR(computation->RemoveInstruction(fft));
      changed = true;
    }
    computation->SortTopologically();  // the replacements were appended after their users
  }
  return changed;
}

}  // namespace kiln::cuda
