// The fft op (FFT, IFFT, RFFT, IRFFT over the 1 to 3 trailing dimensions
// fft_length names) as ordinary HLO, for the device backends: each
// transformed dimension in turn is moved to the front and transformed by
// LeadingAxisDft (fft_leading_axis.h). IFFT and IRFFT divide by the
// lengths, as XLA and NumPy do, through the DFT matrices' scale.
//
// The real transforms go through a complex transform of half the length
// when it is even: RFFT packs the even and odd samples as the real and
// imaginary parts of n/2 complex numbers and separates their spectra
// afterwards; IRFFT combines the half spectrum into that packed spectrum
// and unpacks the inverse. An odd length uses the full complex transform
// (RFFT keeps the first n/2+1 bins; IRFFT completes the spectrum with
// conjugates first). IRFFT ignores the imaginary parts of the zero
// frequency and, for an even length, of the n/2 one, as NumPy's irfft does
// (those of an exactly Hermitian spectrum are zero).
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "core/builder.h"
#include "core/literal.h"
#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/fft_leading_axis.h"

namespace kiln {
namespace {

using Complex = std::complex<double>;
using fft_expansion::LeadingAxisDft;

// What every helper below needs: the builder and the element types.
struct Context {
  Builder& builder;
  ElementType complex_type;
  ElementType real_type;
};

Op ComplexScalar(const Context& c, Complex value) {
  Literal literal(Shape::Scalar(c.complex_type));
  if (c.complex_type == ElementType::kC64) {
    literal.data<complex64>()[0] =
        complex64(static_cast<float>(value.real()), static_cast<float>(value.imag()));
  } else {
    literal.data<complex128>()[0] = value;
  }
  return c.builder.ConstantLiteral(literal);
}

// values[k] broadcast along the last dimension of an array of `dims`.
Op AlongLastDimension(const Context& c, const std::vector<Complex>& values,
                      const std::vector<int64_t>& dims) {
  Literal literal(Shape(c.complex_type, {static_cast<int64_t>(values.size())}));
  for (size_t k = 0; k < values.size(); ++k) {
    if (c.complex_type == ElementType::kC64) {
      literal.data<complex64>()[k] =
          complex64(static_cast<float>(values[k].real()), static_cast<float>(values[k].imag()));
    } else {
      literal.data<complex128>()[k] = values[k];
    }
  }
  const int64_t last[] = {static_cast<int64_t>(dims.size()) - 1};
  return c.builder.BroadcastInDim(c.builder.ConstantLiteral(literal), dims, last);
}

Op Conj(const Context& c, Op x) {
  return c.builder.Complex(c.builder.Real(x), c.builder.Neg(c.builder.Imag(x)));
}

// x[..., start:limit] along the last of `dims`.
Op SliceLast(const Context& c, Op x, const std::vector<int64_t>& dims, int64_t start, int64_t limit) {
  std::vector<int64_t> starts(dims.size(), 0), limits = dims, strides(dims.size(), 1);
  starts.back() = start;
  limits.back() = limit;
  return c.builder.Slice(x, starts, limits, strides);
}

Op ConcatLast(const Context& c, std::vector<Op> parts, size_t rank) {
  return c.builder.ConcatInDim(parts, static_cast<int64_t>(rank) - 1);
}

Op RevLast(const Context& c, Op x, size_t rank) {
  const int64_t last[] = {static_cast<int64_t>(rank) - 1};
  return c.builder.Rev(x, last);
}

std::vector<int64_t> WithLast(std::vector<int64_t> dims, int64_t last) {
  dims.back() = last;
  return dims;
}

// The complex transform of `x` (dims `dims`) along dimension `axis`.
Op TransformAxis(const Context& c, Op x, const std::vector<int64_t>& dims, size_t axis, int sign,
                 double scale) {
  const int64_t n = dims[axis];
  if (n == 1 && scale == 1.0) return x;
  std::vector<int64_t> permutation = {static_cast<int64_t>(axis)};
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d != axis) permutation.push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> moved_dims, inverse(dims.size());
  int64_t inner = 1;
  for (size_t i = 0; i < permutation.size(); ++i) {
    moved_dims.push_back(dims[static_cast<size_t>(permutation[i])]);
    inverse[static_cast<size_t>(permutation[i])] = static_cast<int64_t>(i);
    if (i > 0) inner *= moved_dims.back();
  }
  Op moved = axis == 0 ? x : c.builder.Transpose(x, permutation);
  const int64_t lines[] = {n, inner};
  Op transformed =
      LeadingAxisDft(c.builder, c.builder.Reshape(moved, lines), c.complex_type, n, inner, sign, scale);
  transformed = c.builder.Reshape(transformed, moved_dims);
  return axis == 0 ? transformed : c.builder.Transpose(transformed, inverse);
}

// RFFT along the last dimension: real x [..., n] to [..., n/2+1].
Op RealForward(const Context& c, Op x, const std::vector<int64_t>& dims) {
  Builder& b = c.builder;
  const size_t rank = dims.size();
  const int64_t n = dims.back();
  if (n % 2 == 1) {
    Op z = b.Complex(x, b.ConstantLiteral(Literal(Shape::Scalar(c.real_type))));
    return SliceLast(c, TransformAxis(c, z, dims, rank - 1, -1, 1.0), dims, 0, n / 2 + 1);
  }
  // z[j] = x[2j] + i x[2j+1]; Z = its m-point transform; with
  // Zr[k] = conj(Z[(m - k) mod m]), the even samples' spectrum is
  // (Z + Zr) / 2, the odd samples' (Z - Zr) / 2i, and
  // X[k] = even[k] + W_n^k odd[k] for k in [0, m].
  const int64_t m = n / 2;
  std::vector<int64_t> pair_dims = WithLast(dims, m);
  pair_dims.push_back(2);
  Op pairs = b.Reshape(x, pair_dims);
  const std::vector<int64_t> packed_dims = WithLast(dims, m);
  auto component = [&](int64_t which) {
    std::vector<int64_t> starts(pair_dims.size(), 0), limits = pair_dims, strides(pair_dims.size(), 1);
    starts.back() = which;
    limits.back() = which + 1;
    return b.Reshape(b.Slice(pairs, starts, limits, strides), packed_dims);
  };
  Op z = b.Complex(component(0), component(1));
  Op spectrum = TransformAxis(c, z, packed_dims, rank - 1, -1, 1.0);
  Op first = SliceLast(c, spectrum, packed_dims, 0, 1);
  Op ahead = ConcatLast(c, {spectrum, first}, rank);
  Op mirrored =
      m > 1 ? ConcatLast(c, {first, RevLast(c, SliceLast(c, spectrum, packed_dims, 1, m), rank), first}, rank)
            : ConcatLast(c, {first, first}, rank);
  mirrored = Conj(c, mirrored);
  std::vector<Complex> twiddles(static_cast<size_t>(m + 1));
  for (int64_t k = 0; k <= m; ++k) {
    twiddles[static_cast<size_t>(k)] =
        Complex(0, -0.5) *
        std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n));
  }
  Op even = b.Mul(b.Add(ahead, mirrored), ComplexScalar(c, Complex(0.5, 0)));
  Op odd = b.Mul(b.Sub(ahead, mirrored), AlongLastDimension(c, twiddles, WithLast(dims, m + 1)));
  return b.Add(even, odd);
}

// IRFFT along the last dimension: the half spectrum x [..., n/2+1] to n reals.
Op RealInverse(const Context& c, Op x, const std::vector<int64_t>& half_dims, int64_t n) {
  Builder& b = c.builder;
  const size_t rank = half_dims.size();
  const int64_t h = half_dims.back();
  if (n == 1) return b.Real(x);
  // The imaginary parts that do not contribute, dropped.
  Literal keep(Shape(c.real_type, {h}));
  for (int64_t k = 0; k < h; ++k) {
    const bool kept = k != 0 && !(n % 2 == 0 && k == h - 1);
    if (c.real_type == ElementType::kF32) {
      keep.data<float>()[static_cast<size_t>(k)] = kept ? 1.0f : 0.0f;
    } else {
      keep.data<double>()[static_cast<size_t>(k)] = kept ? 1.0 : 0.0;
    }
  }
  const int64_t last[] = {static_cast<int64_t>(rank) - 1};
  Op kept =
      b.Complex(b.Real(x), b.Mul(b.Imag(x), b.BroadcastInDim(b.ConstantLiteral(keep), half_dims, last)));
  const std::vector<int64_t> full_dims = WithLast(half_dims, n);
  if (n % 2 == 1) {
    Op conjugates = Conj(c, RevLast(c, SliceLast(c, kept, half_dims, 1, h), rank));
    Op full = ConcatLast(c, {kept, conjugates}, rank);
    return b.Real(TransformAxis(c, full, full_dims, rank - 1, +1, 1.0 / static_cast<double>(n)));
  }
  // The packed spectrum Z[k] = even[k] + i odd[k] for k in [0, m), with
  // even = (X[k] + conj(X[m-k])) / 2 and odd = (X[k] - conj(X[m-k])) / (2 W_n^k);
  // its inverse holds the even samples in its real parts, the odd ones in
  // its imaginary parts.
  const int64_t m = n / 2;
  const std::vector<int64_t> packed_dims = WithLast(half_dims, m);
  Op ahead = SliceLast(c, kept, half_dims, 0, m);
  Op mirrored = Conj(c, RevLast(c, SliceLast(c, kept, half_dims, 1, m + 1), rank));
  std::vector<Complex> twiddles(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) {
    twiddles[static_cast<size_t>(k)] =
        Complex(0, 0.5) *
        std::polar(1.0, 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n));
  }
  Op even = b.Mul(b.Add(ahead, mirrored), ComplexScalar(c, Complex(0.5, 0)));
  Op odd = b.Mul(b.Sub(ahead, mirrored), AlongLastDimension(c, twiddles, packed_dims));
  Op packed = TransformAxis(c, b.Add(even, odd), packed_dims, rank - 1, +1, 1.0 / static_cast<double>(m));
  std::vector<int64_t> column_dims = packed_dims;
  column_dims.push_back(1);
  Op interleaved = b.ConcatInDim(
      std::vector<Op>{b.Reshape(b.Real(packed), column_dims), b.Reshape(b.Imag(packed), column_dims)},
      static_cast<int64_t>(rank));
  return b.Reshape(interleaved, full_dims);
}

}  // namespace

bool IsFft(const Instruction& instruction) { return instruction.opcode == Opcode::kFft; }

StatusOr<std::unique_ptr<Module>> ExpandFft(const Instruction& instruction) {
  if (instruction.operands.size() != 1)
    return InvalidArgument("fft expansion: ", instruction.name, " needs one operand");
  const Shape& operand = instruction.operand(0)->shape;
  const Shape& result = instruction.shape;
  if (!operand.IsArray() || !result.IsArray()) {
    return InvalidArgument("fft expansion: ", instruction.name, " is not an array-to-array fft");
  }
  if (!operand.HasDefaultLayout() || !result.HasDefaultLayout()) {
    return Unimplemented("fft expansion: ", instruction.name, " has a non-row-major layout (",
                         operand.ToString(true), " -> ", result.ToString(true), ")");
  }
  const FftType type = instruction.attrs.fft_type;
  const std::vector<int64_t>& lengths = instruction.attrs.fft_length;
  const size_t rank = static_cast<size_t>(operand.rank());
  if (lengths.empty() || lengths.size() > 3 || lengths.size() > rank || result.rank() != operand.rank()) {
    return InvalidArgument("fft expansion: ", instruction.name, " has fft_length of ", lengths.size(),
                           " dimensions for operand ", operand.ToString());
  }
  const bool real_in = type == FftType::kRfft;
  const ElementType complex_type = real_in ? result.element_type() : operand.element_type();
  if (complex_type != ElementType::kC64 && complex_type != ElementType::kC128) {
    return InvalidArgument("fft expansion: ", instruction.name, " has no c64/c128 side (", operand.ToString(),
                           " -> ", result.ToString(), ")");
  }
  Builder builder("fft_expansion");
  const Context c{builder, complex_type, ComplexComponentType(complex_type)};
  Op x = builder.Parameter(0, operand, "operand");
  if (operand.element_count() == 0 || result.element_count() == 0) {
    builder.Broadcast(builder.ConstantLiteral(Literal(Shape::Scalar(result.element_type()))),
                      result.dimensions());
    return builder.Build();
  }
  const size_t first = rank - lengths.size();  // the first transformed dimension
  const std::vector<int64_t>& dims = operand.dimensions();
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft: {
      const int sign = type == FftType::kFft ? -1 : +1;
      for (size_t axis = rank; axis-- > first;) {
        const double scale = type == FftType::kFft ? 1.0 : 1.0 / static_cast<double>(dims[axis]);
        x = TransformAxis(c, x, dims, axis, sign, scale);
      }
      break;
    }
    case FftType::kRfft: {
      x = RealForward(c, x, dims);
      for (size_t axis = rank - 1; axis-- > first;)
        x = TransformAxis(c, x, result.dimensions(), axis, -1, 1.0);
      break;
    }
    case FftType::kIrfft: {
      for (size_t axis = first; axis + 1 < rank; ++axis) {
        x = TransformAxis(c, x, dims, axis, +1, 1.0 / static_cast<double>(dims[axis]));
      }
      x = RealInverse(c, x, dims, lengths.back());
      break;
    }
  }
  return builder.Build(x);
}

}  // namespace kiln
