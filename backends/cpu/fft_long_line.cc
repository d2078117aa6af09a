#include "backends/cpu/fft_long_line.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <type_traits>

#include "backends/cpu/fft_lines.h"

namespace kiln::cpu::fft::KILN_FFT_ISA {
namespace {

// Below this a line's transform is too short for the two extra passes over
// memory to pay.
constexpr int64_t kShortestLine = 4096;

// exp(-2 pi i m/n) in long double, rounded to T.
template <typename T>
std::complex<T> LongLineRoot(int64_t m, int64_t n) {
  const long double angle =
      -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(m) / static_cast<long double>(n);
  return {static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle))};
}

}  // namespace

template <typename T>
std::unique_ptr<LongLine<T>> LongLine<T>::Create(int64_t length) {
  if (length < kShortestLine) return nullptr;
  int64_t rows = 1;  // the largest divisor not above the square root
  for (int64_t d = 1; d * d <= length; ++d) {
    if (length % d == 0) rows = d;
  }
  if (rows < Lanes<T>::kCount) return nullptr;
  return std::make_unique<LongLine>(rows, length / rows);
}

template <typename T>
LongLine<T>::LongLine(int64_t rows, int64_t columns)
    : rows_(rows), columns_(columns), column_plan_(rows), row_plan_(columns) {
  const int64_t n = rows * columns;
  for (int64_t low = 0; low < (int64_t{1} << kLowBits); ++low)
    low_twiddles_.push_back(LongLineRoot<T>(low, n));
  for (int64_t high = 0; (high << kLowBits) < n; ++high) {
    high_twiddles_.push_back(LongLineRoot<T>(high << kLowBits, n));
  }
  for (int64_t k1 = 0; k1 < rows; ++k1) {
    for (int v = 0; v < Lanes<T>::kCount; ++v) {
      const std::complex<T> w = LongLineRoot<T>(k1 * v, n);
      lane_twiddles_re_.push_back(w.real());
      lane_twiddles_im_.push_back(w.imag());
    }
  }
}

template <typename T>
std::complex<T> LongLine<T>::Twiddle(int64_t m) const {
  const std::complex<T> high = high_twiddles_[static_cast<size_t>(m >> kLowBits)];
  const std::complex<T> low = low_twiddles_[static_cast<size_t>(m & ((int64_t{1} << kLowBits) - 1))];
  return {high.real() * low.real() - high.imag() * low.imag(),
          high.real() * low.imag() + high.imag() * low.real()};
}

template <typename T>
void LongLine<T>::Run(const std::complex<T>* source, std::complex<T>* destination, bool inverse, T scale,
                      const interpreter::FftParallelFor& parallel_for) const {
  using C = std::complex<T>;
  constexpr int kLanes = Lanes<T>::kCount;
  const int64_t n1 = rows_;
  const int64_t n2 = columns_;
  // x[j1 * n2 + j2]: the columns' transforms over j1, twisted, into the middle.
  std::vector<C> middle(static_cast<size_t>(n1 * n2));
  ForRanges(parallel_for, (n2 + kLanes - 1) / kLanes, n1 * kLanes, [&](int64_t begin, int64_t end) {
    Blocks<T> blocks;
    for (int64_t group = begin; group < end; ++group) {
      const int64_t first = group * kLanes;
      const Lines columns{first, 1, n2, static_cast<int>(std::min<int64_t>(kLanes, n2 - first))};
      ForLanes(blocks, columns, [&](auto& block, const Lines& some) {
        block.Reserve(n1, column_plan_.work_size(), 0);
        Gather(source, some, n1, inverse, block.data);
        auto* transformed = column_plan_.Transform(block.data, block.work);
        // Element k1 of column j2 times exp(-2 pi i k1 j2/n): for lanes,
        // exp(-2 pi i k1 first/n) times the lane's exp(-2 pi i k1 v/n).
        using E = std::remove_reference_t<decltype(transformed->re)>;
        for (int64_t k1 = 0; k1 < n1; ++k1) {
          Cx<E> value = Times(transformed[k1], Twiddle(k1 * some.base));
          if constexpr (!std::is_same_v<E, T>) {
            Cx<E> lanes;
            std::memcpy(&lanes.re, &lane_twiddles_re_[static_cast<size_t>(k1 * kLanes)], sizeof(E));
            std::memcpy(&lanes.im, &lane_twiddles_im_[static_cast<size_t>(k1 * kLanes)], sizeof(E));
            value = {value.re * lanes.re - value.im * lanes.im, value.re * lanes.im + value.im * lanes.re};
          }
          transformed[k1] = value;
        }
        Scatter(transformed, n1, /*conjugate=*/false, T(1), Lines{some.base, 1, n2, some.count},
                middle.data());
      });
    }
  });
  // The rows' transforms over j2; row k1's k2-th value is X[k1 + n1 * k2].
  ForRanges(parallel_for, (n1 + kLanes - 1) / kLanes, n2 * kLanes, [&](int64_t begin, int64_t end) {
    Blocks<T> blocks;
    for (int64_t group = begin; group < end; ++group) {
      const int64_t first = group * kLanes;
      const Lines rows{first * n2, n2, 1, static_cast<int>(std::min<int64_t>(kLanes, n1 - first))};
      ForLanes(blocks, rows, [&](auto& block, const Lines& some) {
        block.Reserve(n2, row_plan_.work_size(), 0);
        Gather(middle.data(), some, n2, /*conjugate=*/false, block.data);
        const Lines transposed{some.base / n2, 1, n1, some.count};
        Scatter(row_plan_.Transform(block.data, block.work), n2, inverse, scale, transposed, destination);
      });
    }
  });
}

template class LongLine<float>;
template class LongLine<double>;

}  // namespace kiln::cpu::fft::KILN_FFT_ISA
