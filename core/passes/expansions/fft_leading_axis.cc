#include "core/passes/expansions/fft_leading_axis.h"

#include <complex>
#include <numbers>
#include <vector>

#include <unsupported/Eigen/FFT>

#include "core/literal.h"

namespace kiln::fft_expansion {
namespace {

using Complex = std::complex<double>;

// exp(sign * 2 pi i m / n), the exponent reduced to [0, n) first so the
// angle passed to sin and cos is never large.
Complex RootOfUnity(int64_t m, int64_t n, int sign) {
  const int64_t reduced = ((m % n) + n) % n;
  return std::polar(1.0,
                    sign * 2.0 * std::numbers::pi * static_cast<double>(reduced) / static_cast<double>(n));
}

// A constant of `complex_type` with row-major `values`.
Op ComplexConstant(Builder& builder, ElementType complex_type, std::vector<int64_t> dims,
                   const std::vector<Complex>& values) {
  Literal literal(Shape(complex_type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) {
    if (complex_type == ElementType::kC64) {
      literal.data<complex64>()[i] =
          complex64(static_cast<float>(values[i].real()), static_cast<float>(values[i].imag()));
    } else {
      literal.data<complex128>()[i] = values[i];
    }
  }
  return builder.ConstantLiteral(literal);
}

bool IsPrime(int64_t n) {
  if (n < 2) return false;
  for (int64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

// The largest factor of n in [2, kLargestRadix] (n itself excluded), or 0.
int64_t LargestSmallFactor(int64_t n) {
  for (int64_t r = std::min(kLargestRadix, n - 1); r >= 2; --r) {
    if (n % r == 0) return r;
  }
  return 0;
}

// The smallest prime factor of n >= 2.
int64_t SmallestPrimeFactor(int64_t n) {
  for (int64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return d;
  }
  return n;
}

// F[k, j] = scale * exp(sign * 2 pi i jk / n), as a constant [n, n].
Op DftMatrix(Builder& builder, ElementType complex_type, int64_t n, int sign, double scale) {
  std::vector<Complex> values(static_cast<size_t>(n * n));
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < n; ++j)
      values[static_cast<size_t>(k * n + j)] = scale * RootOfUnity(j * k, n, sign);
  }
  return ComplexConstant(builder, complex_type, {n, n}, values);
}

// matrix [m, n] applied to `x` along its axis `axis` (of length n): the
// result has that axis (now of length m) leading, the others after it in
// order.
Op ApplyAlongAxis(Builder& builder, Op matrix, Op x, int64_t axis) {
  DotDimensionNumbers numbers;
  numbers.lhs_contracting_dimensions = {1};
  numbers.rhs_contracting_dimensions = {axis};
  return builder.DotGeneral(matrix, x, numbers);
}

Op Dense(Builder& builder, Op x, ElementType complex_type, int64_t n, int sign, double scale) {
  return ApplyAlongAxis(builder, DftMatrix(builder, complex_type, n, sign, scale), x, 0);
}

// One decimation-in-time stage, n = n1 * n2. With j = j1 + n1 * j2 and
// k = k2 + n2 * k1:
//   X[k] = sum_j1 W_n1^(j1 k1) W_n^(j1 k2) sum_j2 x[j] W_n2^(j2 k2),
// so x viewed as [n2, n1 * inner] gets its n2-point transforms, the
// twiddles W_n^(j1 k2) on [k2, j1], and the n1-point DFT along j1, whose
// dot puts k1 first: [k1, k2, inner] is X in natural order.
Op CooleyTukeyStage(Builder& builder, Op x, ElementType complex_type, int64_t n1, int64_t n2, int64_t inner,
                    int sign, double scale) {
  const int64_t n = n1 * n2;
  const int64_t strided[] = {n2, n1 * inner};
  Op y = LeadingAxisDft(builder, builder.Reshape(x, strided), complex_type, n2, n1 * inner, sign, 1.0);
  const int64_t split[] = {n2, n1, inner};
  y = builder.Reshape(y, split);
  std::vector<Complex> twiddles(static_cast<size_t>(n));
  for (int64_t k2 = 0; k2 < n2; ++k2) {
    for (int64_t j1 = 0; j1 < n1; ++j1)
      twiddles[static_cast<size_t>(k2 * n1 + j1)] = RootOfUnity(j1 * k2, n, sign);
  }
  const int64_t twiddle_dims[] = {0, 1};
  y = builder.Mul(y, builder.BroadcastInDim(ComplexConstant(builder, complex_type, {n2, n1}, twiddles), split,
                                            twiddle_dims));
  Op z = ApplyAlongAxis(builder, DftMatrix(builder, complex_type, n1, sign, scale), y, 1);
  const int64_t natural[] = {n, inner};
  return builder.Reshape(z, natural);
}

// Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2, so with the chirp
// c[m] = exp(sign pi i m^2 / n) the transform is c[k] times the
// convolution of x[j] c[j] with conj(c), done circularly over a power of
// two m >= 2n - 1 by forward and inverse transforms. The chirp's own
// spectrum (scaled by scale / m for the inverse) is computed here, in
// double precision through Eigen's FFT.
Op Bluestein(Builder& builder, Op x, ElementType complex_type, int64_t n, int64_t inner, int sign,
             double scale) {
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  std::vector<Complex> chirp(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const int64_t square = (j * j) % (2 * n);  // exp(sign pi i j^2 / n) has period 2n in j^2
    chirp[static_cast<size_t>(j)] =
        std::polar(1.0, sign * std::numbers::pi * static_cast<double>(square) / static_cast<double>(n));
  }
  std::vector<Complex> kernel(static_cast<size_t>(m), Complex(0, 0));
  for (int64_t j = 0; j < n; ++j) {
    kernel[static_cast<size_t>(j)] = std::conj(chirp[static_cast<size_t>(j)]);
    if (j > 0) kernel[static_cast<size_t>(m - j)] = std::conj(chirp[static_cast<size_t>(j)]);
  }
  std::vector<Complex> spectrum(static_cast<size_t>(m));
  Eigen::FFT<double> engine;
  engine.fwd(spectrum.data(), kernel.data(), static_cast<int>(m));
  for (Complex& value : spectrum) value *= scale / static_cast<double>(m);

  const int64_t chirp_dims[] = {0};
  const int64_t line[] = {n, inner};
  Op chirp_constant = ComplexConstant(builder, complex_type, {n}, chirp);
  Op a = builder.Mul(x, builder.BroadcastInDim(chirp_constant, line, chirp_dims));
  const PaddingDimension padding[] = {{0, m - n, 0}, {0, 0, 0}};
  a = builder.Pad(a, builder.ConstantLiteral(Literal(Shape::Scalar(complex_type))), padding);
  Op transformed = LeadingAxisDft(builder, a, complex_type, m, inner, -1, 1.0);
  const int64_t padded[] = {m, inner};
  Op product = builder.Mul(
      transformed,
      builder.BroadcastInDim(ComplexConstant(builder, complex_type, {m}, spectrum), padded, chirp_dims));
  Op convolved = LeadingAxisDft(builder, product, complex_type, m, inner, +1, 1.0);
  const int64_t starts[] = {0, 0};
  const int64_t strides[] = {1, 1};
  Op head = builder.Slice(convolved, starts, line, strides);
  return builder.Mul(head, builder.BroadcastInDim(chirp_constant, line, chirp_dims));
}

}  // namespace

Op LeadingAxisDft(Builder& builder, Op x, ElementType complex_type, int64_t n, int64_t inner, int sign,
                  double scale) {
  if (n == 1) {
    if (scale == 1.0) return x;
    return builder.Mul(x, ComplexConstant(builder, complex_type, {}, {Complex(scale, 0)}));
  }
  if (n <= kLargestDenseLength || (n <= kLargestDensePrime && IsPrime(n)))
    return Dense(builder, x, complex_type, n, sign, scale);
  int64_t radix = LargestSmallFactor(n);
  if (radix == 0) {
    const int64_t smallest = SmallestPrimeFactor(n);
    if (smallest == n || smallest > kLargestDensePrime)
      return Bluestein(builder, x, complex_type, n, inner, sign, scale);
    radix = smallest;  // a prime above kLargestRadix: one dense stage of it
  }
  return CooleyTukeyStage(builder, x, complex_type, radix, n / radix, inner, sign, scale);
}

}  // namespace kiln::fft_expansion
