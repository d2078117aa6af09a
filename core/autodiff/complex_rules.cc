// Derivative rules of the ops that make, take apart or transform complex
// numbers. Cotangents of complex values follow JAX's convention: a real loss
// L of z = x + iy has the cotangent dL/dx - i dL/dy, so the cotangent of a
// holomorphic op is the result's times f'(z), without a conjugate (the
// elementwise rules serve complex operands unchanged), and the conjugates
// appear where JAX's rules have them: abs, and the transposes of RFFT and
// IRFFT.
#include <vector>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

Instruction* RealPart(VjpEmitter& e, Instruction* z) { return e.Unary(Opcode::kReal, z); }
Instruction* ImagPart(VjpEmitter& e, Instruction* z) { return e.Unary(Opcode::kImag, z); }
Instruction* MakeComplex(VjpEmitter& e, Instruction* re, Instruction* im) {
  return e.Binary(Opcode::kComplex, re, im);
}
Instruction* Conjugate(VjpEmitter& e, Instruction* z) {
  return MakeComplex(e, RealPart(e, z), e.Unary(Opcode::kNegate, ImagPart(e, z)));
}

Instruction* Fft(VjpEmitter& e, Instruction* operand, FftType type, const std::vector<int64_t>& lengths) {
  Attributes attrs;
  attrs.fft_type = type;
  attrs.fft_length = lengths;
  return e.Add(Opcode::kFft, {operand}, std::move(attrs));
}

int64_t Product(const std::vector<int64_t>& lengths) {
  int64_t product = 1;
  for (int64_t length : lengths) product *= length;
  return product;
}

// The weights of a half spectrum's entries along its last dimension (of
// `like`'s shape and element type): 1 for the DC entry and, when the full
// length `n` is even, for the Nyquist entry; 2 for the others, which stand
// for themselves and their mirror images.
Instruction* HalfSpectrumWeights(VjpEmitter& e, int64_t n, const Shape& like) {
  const int64_t entries = like.dimensions().back();
  std::vector<double> weights(static_cast<size_t>(entries), 2.0);
  weights.front() = 1.0;
  if (n % 2 == 0) weights.back() = 1.0;
  StatusOr<Literal> literal = Literal::FromVector(weights, {entries}).Convert(like.element_type());
  Instruction* row = e.Constant(literal.ok() ? std::move(literal).value() : Literal::FromVector(weights));
  return e.BroadcastInDim(row, like, {like.rank() - 1});
}

}  // namespace

// real and imag of a real operand are the operand and zero.
KILN_VJP_RULE(RealRule) {
  if (!IsComplex(x.operand(0)->shape.element_type())) return std::vector<Cotangent>{ct};
  Instruction* zero = e.Zeros(ct.array->shape);
  return std::vector<Cotangent>{Of(MakeComplex(e, ct.array, zero))};
}

KILN_VJP_RULE(ImagRule) {
  if (!IsComplex(x.operand(0)->shape.element_type())) return std::vector<Cotangent>(1);
  Instruction* zero = e.Zeros(ct.array->shape);
  return std::vector<Cotangent>{Of(MakeComplex(e, zero, e.Unary(Opcode::kNegate, ct.array)))};
}

KILN_VJP_RULE(ComplexRule) {
  return std::vector<Cotangent>{
      Of(e.SumToShape(RealPart(e, ct.array), x.operand(0)->shape)),
      Of(e.SumToShape(e.Unary(Opcode::kNegate, ImagPart(e, ct.array)), x.operand(1)->shape))};
}

KILN_VJP_RULE(ComplexAbsRule) {
  // |z| has the cotangent g * conj(z) / |z|, and 0 at z == 0 (JAX's rule
  // divides by |z| with its zeros replaced by ones).
  Instruction* z = x.operand(0);
  Instruction* magnitude = &x;
  Instruction* zero = e.Zeros(magnitude->shape);
  Instruction* is_zero = e.Compare(magnitude, zero, ComparisonDirection::kEq);
  Instruction* divisor = e.Select(is_zero, e.Full(1.0, magnitude->shape), magnitude);
  Instruction* scale = e.Binary(Opcode::kDivide, ct.array, divisor);
  return std::vector<Cotangent>{
      Of(e.Binary(Opcode::kMultiply, Conjugate(e, z), MakeComplex(e, scale, e.Zeros(scale->shape))))};
}

KILN_VJP_RULE(FftRule) {
  // JAX's transposes: the DFT matrix is symmetric, so FFT and IFFT are their
  // own transposes; RFFT's is N * IRFFT(conj(g) / w) and IRFFT's is
  // conj(w * RFFT(g) / N), with w the half spectrum's weights.
  const std::vector<int64_t>& lengths = x.attrs.fft_length;
  const auto n = static_cast<double>(Product(lengths));
  Instruction* g = ct.array;
  switch (x.attrs.fft_type) {
    case FftType::kFft:
    case FftType::kIfft: return std::vector<Cotangent>{Of(Fft(e, g, x.attrs.fft_type, lengths))};
    case FftType::kRfft: {
      Instruction* weighted =
          e.Binary(Opcode::kDivide, Conjugate(e, g), HalfSpectrumWeights(e, lengths.back(), g->shape));
      Instruction* real = Fft(e, weighted, FftType::kIrfft, lengths);
      return std::vector<Cotangent>{Of(e.Binary(Opcode::kMultiply, real, e.Full(n, real->shape)))};
    }
    case FftType::kIrfft: {
      Instruction* spectrum = Fft(e, g, FftType::kRfft, lengths);
      Instruction* weights = HalfSpectrumWeights(e, lengths.back(), spectrum->shape);
      Instruction* scaled = e.Binary(Opcode::kMultiply, spectrum,
                                     e.Binary(Opcode::kDivide, weights, e.Full(n, spectrum->shape)));
      return std::vector<Cotangent>{Of(Conjugate(e, scaled))};
    }
  }
  return Internal("kiln grad: fft instruction ", x.name, " has an unknown transform type");
}

}  // namespace kiln::autodiff
