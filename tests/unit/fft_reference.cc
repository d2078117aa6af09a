// The fft tests' naive DFT (fft_reference.h). Its own library, compiled
// optimised even in the sanitizer build, where the tests' code is otherwise
// -O0 (tests/CMakeLists.txt): it is O(n^2) per line, and on the cpu tests'
// lines of 4096 to 6000 points it was most of their time under ASan.
#include "tests/unit/fft_reference.h"

namespace kiln::fft_reference {

// Each line is gathered into contiguous real and imaginary parts, its
// products written out in real arithmetic and jk mod n stepped by k: the
// sums of complex<double> products of the same roots in the same order, in
// a loop without a division or a library call (complex multiplication's
// NaN recovery).
std::vector<Complex> NaiveDftAxis(const std::vector<Complex>& data, const std::vector<int64_t>& dims,
                                  size_t axis, bool inverse) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[axis];
  const auto length = static_cast<size_t>(n);
  std::vector<Complex> result(data.size());
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<double> root_re(length), root_im(length);  // exp(-+2 pi i m/n)
  for (size_t m = 0; m < length; ++m) {
    const Complex root = std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(m) / n);
    root_re[m] = root.real();
    root_im[m] = root.imag();
  }
  std::vector<double> line_re(length), line_im(length);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const auto at = [&](size_t j) {
        return static_cast<size_t>((o * n + static_cast<int64_t>(j)) * inner + i);
      };
      for (size_t j = 0; j < length; ++j) {
        line_re[j] = data[at(j)].real();
        line_im[j] = data[at(j)].imag();
      }
      const double* x_re = line_re.data();
      const double* x_im = line_im.data();
      const double* w_re = root_re.data();
      const double* w_im = root_im.data();
      for (size_t k = 0; k < length; ++k) {
        double sum_re = 0, sum_im = 0;
        size_t m = 0;  // j * k mod n
        for (size_t j = 0; j < length; ++j) {
          sum_re += x_re[j] * w_re[m] - x_im[j] * w_im[m];
          sum_im += x_re[j] * w_im[m] + x_im[j] * w_re[m];
          m += k;
          if (m >= length) m -= length;
        }
        const Complex sum(sum_re, sum_im);
        result[at(k)] = inverse ? sum / static_cast<double>(n) : sum;
      }
    }
  }
  return result;
}

}  // namespace kiln::fft_reference
