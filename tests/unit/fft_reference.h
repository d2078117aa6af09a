// The fft tests' reference: a naive discrete Fourier transform computed in
// double precision (fft_reference.cc), and a check that runs one fft case
// (type, precision, batch dimensions, fft_length) on a backend and compares
// its values with it. Used by the interpreter's tests
// (tests/unit/fft_test.cc) and the cpu backend's
// (tests/cpu/runtime_fft_test.cc).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln::fft_reference {

using ET = ElementType;

using Complex = std::complex<double>;

// A deterministic pseudo-random value in [-1, 1].
inline double NextValue(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<double>((state >> 33) % 20001) / 10000.0 - 1.0;
}

// The naive DFT of `data` (row-major, dims `dims`) along dimension `axis`,
// exp(-+2 pi i jk/n) with jk reduced mod n, scaled by 1/n when inverse
// (fft_reference.cc: compiled optimised even in the sanitizer build).
std::vector<Complex> NaiveDftAxis(const std::vector<Complex>& data, const std::vector<int64_t>& dims,
                                  size_t axis, bool inverse);

// The four transforms, for tests that run each.
inline constexpr FftType kEveryFftType[] = {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft};

struct FftCase {
  FftType type;
  bool f64;
  std::vector<int64_t> batch;
  std::vector<int64_t> lengths;
};

inline std::string CaseName(const FftCase& c) {
  static const char* kNames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  std::string name = std::string(kNames[static_cast<int>(c.type)]) + (c.f64 ? " f64 " : " f32 ") + "batch {";
  for (int64_t b : c.batch) name += std::to_string(b) + " ";
  name += "} fft_length {";
  for (int64_t l : c.lengths) name += std::to_string(l) + " ";
  return name + "}";
}

// Computes one case's result from its operand; `result_shape` is the
// shape the result must have.
using FftRun = std::function<StatusOr<Literal>(const Literal& operand, const Shape& result_shape)>;

// One of several ways to compute a case, and its name for the failures.
struct NamedFftRun {
  std::string name;
  FftRun run;
};

// Runs the case through each of `runs` and compares each result with the
// naive DFT (computed once).
inline void CheckAgainstNaiveDft(const FftCase& c, const std::vector<NamedFftRun>& runs) {
  SCOPED_TRACE(CaseName(c));
  const size_t rank = c.lengths.size();
  const bool real_in = c.type == FftType::kRfft;
  const bool real_out = c.type == FftType::kIrfft;
  const bool inverse = c.type == FftType::kIfft || c.type == FftType::kIrfft;
  std::vector<int64_t> full = c.batch;  // the full (complex) spectrum's dims
  full.insert(full.end(), c.lengths.begin(), c.lengths.end());
  std::vector<int64_t> half = full;  // the half spectrum's
  half.back() = c.lengths.back() / 2 + 1;
  const std::vector<int64_t>& in_dims = c.type == FftType::kIrfft ? half : full;
  const std::vector<int64_t>& out_dims = c.type == FftType::kRfft ? half : full;
  const ET complex_type = c.f64 ? ET::kC128 : ET::kC64;
  const ET real_type = c.f64 ? ET::kF64 : ET::kF32;
  const Shape in_shape(real_in ? real_type : complex_type, in_dims);

  // The input, as complex doubles and as the operand literal.
  uint64_t state = 12345 + rank * 7 + static_cast<uint64_t>(c.lengths.back());
  Literal operand(in_shape);
  std::vector<Complex> input(static_cast<size_t>(operand.element_count()));
  for (size_t i = 0; i < input.size(); ++i) {
    const double re = NextValue(state);
    const double im = real_in ? 0.0 : NextValue(state);
    if (c.f64) {
      if (real_in)
        operand.data<double>()[i] = re;
      else
        operand.data<complex128>()[i] = complex128(re, im);
    } else {
      if (real_in)
        operand.data<float>()[i] = static_cast<float>(re);
      else
        operand.data<complex64>()[i] = complex64(static_cast<float>(re), static_cast<float>(im));
    }
    // The reference sees the values the operand holds.
    input[i] = c.f64 ? Complex(re, im) : Complex(static_cast<float>(re), static_cast<float>(im));
  }

  // The reference: for IRFFT the leading dimensions' inverses first, then
  // the last dimension's spectrum completed with conjugates (its real part
  // is NumPy's irfft); else the full transform, cut to the half spectrum
  // for RFFT.
  const size_t first = c.batch.size();
  std::vector<Complex> expected;
  if (c.type == FftType::kIrfft) {
    std::vector<Complex> staged = input;
    for (size_t axis = first; axis + 1 < full.size(); ++axis) staged = NaiveDftAxis(staged, half, axis, true);
    const int64_t n = c.lengths.back();
    const int64_t h = half.back();
    const int64_t lines = static_cast<int64_t>(staged.size()) / h;
    std::vector<Complex> completed(static_cast<size_t>(lines * n));
    for (int64_t line = 0; line < lines; ++line) {
      for (int64_t k = 0; k < n; ++k) {
        completed[static_cast<size_t>(line * n + k)] =
            k < h ? staged[static_cast<size_t>(line * h + k)]
                  : std::conj(staged[static_cast<size_t>(line * h + n - k)]);
      }
    }
    expected = NaiveDftAxis(completed, full, full.size() - 1, true);
    for (Complex& value : expected) value = value.real();
  } else {
    expected = input;
    for (size_t axis = first; axis < full.size(); ++axis)
      expected = NaiveDftAxis(expected, full, axis, inverse);
    if (c.type == FftType::kRfft) {
      const int64_t n = c.lengths.back();
      const int64_t h = half.back();
      const int64_t lines = static_cast<int64_t>(expected.size()) / n;
      std::vector<Complex> cut(static_cast<size_t>(lines * h));
      for (int64_t line = 0; line < lines; ++line) {
        for (int64_t k = 0; k < h; ++k)
          cut[static_cast<size_t>(line * h + k)] = expected[static_cast<size_t>(line * n + k)];
      }
      expected = std::move(cut);
    }
  }

  const Shape out_shape(real_out ? real_type : complex_type, out_dims);
  double scale = 1.0;
  for (const Complex& value : expected) scale = std::max(scale, std::abs(value));
  // Rounding of the library's float arithmetic grows slowly with the length.
  const double tolerance = (c.f64 ? 1e-13 : 4e-6) * scale;
  for (const NamedFftRun& named : runs) {
    SCOPED_TRACE(named.name);
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, named.run(operand, out_shape));
    ASSERT_EQ(result.element_count(), static_cast<int64_t>(expected.size()));
    double worst = 0;
    int64_t worst_at = -1;
    for (size_t i = 0; i < expected.size(); ++i) {
      Complex got;
      if (real_out) {
        got = c.f64 ? result.data<double>()[i] : static_cast<double>(result.data<float>()[i]);
      } else if (c.f64) {
        got = result.data<complex128>()[i];
      } else {
        const complex64 value = result.data<complex64>()[i];
        got = Complex(value.real(), value.imag());
      }
      const double error = std::abs(got - expected[i]);
      if (!(error <= worst)) {
        worst = error;
        worst_at = static_cast<int64_t>(i);
      }
    }
    EXPECT_LE(worst, tolerance) << "worst error at element " << worst_at << " of " << expected.size()
                                << " (largest magnitude " << scale << ")";
  }
}

// Runs the case on `backend`, as a module of one fft built through the
// Builder, and compares it with the naive DFT.
inline void CheckAgainstNaiveDft(const FftCase& c, Backend& backend) {
  const FftRun run = [&](const Literal& operand, const Shape& result_shape) -> StatusOr<Literal> {
    Builder builder("fft");
    Op x = builder.Parameter(0, operand.shape(), "x");
    Op f = builder.Fft(x, c.type, c.lengths);
    KILN_RETURN_IF_ERROR(builder.first_error());
    KILN_ASSIGN_OR_RETURN(Shape shape, builder.GetShape(f));
    EXPECT_EQ(shape.dimensions(), result_shape.dimensions());
    EXPECT_EQ(shape.element_type(), result_shape.element_type());
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, builder.Build());
    return testing::Execute(backend, *module, std::span<const Literal>(&operand, 1));
  };
  CheckAgainstNaiveDft(c, {{std::string(backend.name()), run}});
}

}  // namespace kiln::fft_reference
