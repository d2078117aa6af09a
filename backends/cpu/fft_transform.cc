#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <map>
#include <numbers>
#include <type_traits>
#include <vector>

#include "backends/cpu/fft_builds.h"
#include "backends/cpu/fft_lanes.h"
#include "backends/cpu/fft_lines.h"
#include "backends/cpu/fft_long_line.h"
#include "backends/cpu/fft_plan.h"

namespace kiln::cpu::fft::KILN_FFT_ISA {
namespace {

using interpreter::FftGeometry;
using interpreter::FftParallelFor;

// The plans of one precision: one per complex length, and for RFFT/IRFFT
// the last dimension's (half the length with its twiddles when even).
template <typename T>
class TypedTransform final : public FftTransform {
 public:
  explicit TypedTransform(const FftGeometry& geometry) : geometry_(geometry) {
    const bool real = geometry.type == FftType::kRfft || geometry.type == FftType::kIrfft;
    for (int64_t length : geometry.lengths) {
      if (length < 1) return;  // an empty transform: Run has nothing to do
    }
    for (size_t axis = 0; axis < geometry.lengths.size(); ++axis) {
      const bool last = axis + 1 == geometry.lengths.size();
      if (last && real) continue;
      AddPlan(geometry.lengths[axis]);
    }
    if (!real) {
      // Too few lines of the last dimension to fill the lanes: one line at
      // a time as a matrix (fft_long_line.h), where its length allows.
      int64_t lines = geometry.batch;
      for (size_t axis = 0; axis + 1 < geometry.lengths.size(); ++axis) lines *= geometry.lengths[axis];
      if (2 * lines <= Lanes<T>::kCount) long_line_ = LongLine<T>::Create(geometry.lengths.back());
    }
    if (real) {
      const int64_t n = geometry.lengths.back();
      if (n % 2 == 0) {
        AddPlan(n / 2);
        for (int64_t k = 0; k <= n / 2; ++k) {
          const long double angle = -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(k) /
                                    static_cast<long double>(n);
          half_twiddles_.emplace_back(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
        }
      } else {
        AddPlan(n);
      }
    }
  }

  void Run(const void* input, void* output, const FftParallelFor& parallel_for) const override;

 private:
  using C = std::complex<T>;

  void AddPlan(int64_t length) {
    if (plans_.count(length) == 0) plans_.emplace(length, std::make_unique<Plan<T>>(length));
  }
  const Plan<T>& PlanFor(int64_t length) const { return *plans_.at(length); }

  void ComplexAxis(const C* source, C* destination, int64_t outer, int64_t n, int64_t inner, bool inverse,
                   const FftParallelFor& parallel_for) const;
  void RealForward(const T* source, C* destination, int64_t lines, const FftParallelFor& parallel_for) const;
  void RealInverse(const C* source, T* destination, int64_t lines, const FftParallelFor& parallel_for) const;

  FftGeometry geometry_;
  std::map<int64_t, std::unique_ptr<Plan<T>>> plans_;
  std::vector<C> half_twiddles_;            // exp(-2 pi i k/n), k <= n/2, for even real lengths
  std::unique_ptr<LongLine<T>> long_line_;  // for a few long lines of the last dimension
};

// Complex transforms along one dimension of an array viewed as
// [outer, n, inner], from `source` to `destination` (the same array, or
// another of the same shape). The last dimension's lines are neighbouring
// rows; the others' neighbouring columns (one cache line per element).
template <typename T>
void TypedTransform<T>::ComplexAxis(const C* source, C* destination, int64_t outer, int64_t n, int64_t inner,
                                    bool inverse, const FftParallelFor& parallel_for) const {
  constexpr int kLanes = Lanes<T>::kCount;
  const T scale = inverse ? T(1) / static_cast<T>(n) : T(1);
  if (inner == 1 && long_line_ != nullptr && long_line_->length() == n && 2 * outer <= kLanes) {
    for (int64_t line = 0; line < outer; ++line) {
      long_line_->Run(source + line * n, destination + line * n, inverse, scale, parallel_for);
    }
    return;
  }
  const Plan<T>& plan = PlanFor(n);
  const int64_t groups_per_outer = inner == 1 ? 1 : (inner + kLanes - 1) / kLanes;
  const int64_t groups = inner == 1 ? (outer + kLanes - 1) / kLanes : outer * groups_per_outer;
  ForRanges(parallel_for, groups, n * kLanes, [&](int64_t begin, int64_t end) {
    Blocks<T> blocks;
    for (int64_t group = begin; group < end; ++group) {
      Lines lines;
      if (inner == 1) {
        lines = {group * kLanes * n, n, 1,
                 static_cast<int>(std::min<int64_t>(kLanes, outer - group * kLanes))};
      } else {
        const int64_t first = (group % groups_per_outer) * kLanes;
        lines = {(group / groups_per_outer) * n * inner + first, 1, inner,
                 static_cast<int>(std::min<int64_t>(kLanes, inner - first))};
      }
      ForLanes(blocks, lines, [&](auto& block, const Lines& some) {
        block.Reserve(n, plan.work_size(), 0);
        Gather(source, some, n, inverse, block.data);
        Scatter(plan.Transform(block.data, block.work), n, inverse, scale, some, destination);
      });
    }
  });
}

// Real-input transforms along the last dimension: `lines` rows of n reals
// to their n/2+1 lowest frequencies. Even n: z[k] = x[2k] + i x[2k+1] is
// transformed with n/2 points and X[k] = (Z[k] + conj Z[n/2-k]) / 2 -
// i/2 (Z[k] - conj Z[n/2-k]) exp(-2 pi i k/n).
template <typename T>
void TypedTransform<T>::RealForward(const T* source, C* destination, int64_t lines,
                                    const FftParallelFor& parallel_for) const {
  constexpr int kLanes = Lanes<T>::kCount;
  const int64_t n = geometry_.lengths.back();
  const int64_t half = n / 2 + 1;
  const bool even = n % 2 == 0;
  const Plan<T>& plan = PlanFor(even ? n / 2 : n);
  const int64_t m = plan.length();
  ForRanges(parallel_for, (lines + kLanes - 1) / kLanes, n * kLanes, [&](int64_t begin, int64_t end) {
    Blocks<T> blocks;
    for (int64_t group = begin; group < end; ++group) {
      const Lines rows{group * kLanes, 1, 0,
                       static_cast<int>(std::min<int64_t>(kLanes, lines - group * kLanes))};
      ForLanes(blocks, rows, [&](auto& block, const Lines& some) {
        using E = std::remove_reference_t<decltype(block.data->re)>;
        block.Reserve(m, plan.work_size(), half);
        if (even) {
          // Each row's reals as m complex numbers x[2k] + i x[2k+1].
          const Lines pairs{some.base * m, m, 1, some.count};
          Gather(reinterpret_cast<const C*>(source), pairs, m, /*conjugate=*/false, block.data);
        } else {
          for (int64_t k = 0; k < m; ++k) {
            Cx<E> element{};
            for (int v = 0; v < some.count; ++v) SetLane(element.re, v, source[(some.base + v) * n + k]);
            block.data[k] = element;
          }
        }
        const Cx<E>* z = plan.Transform(block.data, block.work);
        if (even) {
          // X[k] from a = Z[k mod m] and b = conj Z[(m - k) mod m]; the
          // ends (k = 0 and m) apart, so the loop indexes without a modulo.
          Cx<E>* spectrum = block.extra;
          const auto combine = [&](Cx<E> a, Cx<E> b, int64_t k) -> Cx<E> {
            const Cx<E> sum = a + b;
            const Cx<E> twisted = Times(TimesMinusI(a - b), half_twiddles_[static_cast<size_t>(k)]);
            return {(sum.re + twisted.re) * T(0.5), (sum.im + twisted.im) * T(0.5)};
          };
          spectrum[0] = combine(z[0], Conj(z[0]), 0);
          for (int64_t k = 1; k < m; ++k) spectrum[k] = combine(z[k], Conj(z[m - k]), k);
          spectrum[m] = combine(z[0], Conj(z[0]), m);
          z = spectrum;
        }
        const Lines spectra{some.base * half, half, 1, some.count};
        Scatter(z, half, /*conjugate=*/false, T(1), spectra, destination);
      });
    }
  });
}

// Half-spectrum inverses along the last dimension: `lines` rows of n/2+1
// frequencies to n reals; the imaginary parts of the zero frequency (and
// of n/2 for even n) do not count, as in NumPy's irfft. Even n: the n/2
// point line Z[k] = (X[k] + conj X[n/2-k]) + i exp(2 pi i k/n) (X[k] -
// conj X[n/2-k]) transforms back to x[2k] + i x[2k+1]; odd n: the spectrum
// is completed with conjugates.
template <typename T>
void TypedTransform<T>::RealInverse(const C* source, T* destination, int64_t lines,
                                    const FftParallelFor& parallel_for) const {
  constexpr int kLanes = Lanes<T>::kCount;
  const int64_t n = geometry_.lengths.back();
  const int64_t half = n / 2 + 1;
  const bool even = n % 2 == 0;
  const Plan<T>& plan = PlanFor(even ? n / 2 : n);
  const int64_t m = plan.length();
  const T scale = T(1) / static_cast<T>(n);
  ForRanges(parallel_for, (lines + kLanes - 1) / kLanes, n * kLanes, [&](int64_t begin, int64_t end) {
    Blocks<T> blocks;
    for (int64_t group = begin; group < end; ++group) {
      const Lines rows{group * kLanes * half, half, 1,
                       static_cast<int>(std::min<int64_t>(kLanes, lines - group * kLanes))};
      ForLanes(blocks, rows, [&](auto& block, const Lines& some) {
        using E = std::remove_reference_t<decltype(block.data->re)>;
        block.Reserve(m, plan.work_size(), half);
        Cx<E>* spectrum = block.extra;
        Gather(source, some, half, /*conjugate=*/false, spectrum);
        spectrum[0].im = E{};
        if (even) spectrum[half - 1].im = E{};
        // The line to transform forward, conjugated (an inverse transform).
        for (int64_t k = 0; k < m; ++k) {
          if (even) {
            const Cx<E> a = spectrum[k];
            const Cx<E> b = Conj(spectrum[m - k]);
            block.data[k] =
                Conj(a + b) + TimesMinusI(Times(Conj(a - b), half_twiddles_[static_cast<size_t>(k)]));
          } else {
            block.data[k] = k < half ? Conj(spectrum[k]) : spectrum[n - k];
          }
        }
        const Cx<E>* result = plan.Transform(block.data, block.work);
        if (even) {
          // x[2k] + i x[2k+1] is the conjugate of the forward transform.
          const Lines pairs{(some.base / half) * m, m, 1, some.count};
          Scatter(result, m, /*conjugate=*/true, scale, pairs, reinterpret_cast<C*>(destination));
          return;
        }
        for (int v = 0; v < some.count; ++v) {
          T* row = destination + (some.base / half + v) * n;
          for (int64_t k = 0; k < m; ++k) row[k] = GetLane<T>(result[k].re, v) * scale;
        }
      });
    }
  });
}

int64_t Product(const std::vector<int64_t>& values, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= values[i];
  return product;
}

template <typename T>
void TypedTransform<T>::Run(const void* input, void* output, const FftParallelFor& parallel_for) const {
  const FftGeometry& g = geometry_;
  const size_t rank = g.lengths.size();
  const int64_t last = g.lengths.back();
  const bool real = g.type == FftType::kRfft || g.type == FftType::kIrfft;
  // The complex side's dims per batch entry: lengths, with the last one
  // halved for the real transforms.
  std::vector<int64_t> complex_dims = g.lengths;
  if (real) complex_dims.back() = last / 2 + 1;
  const int64_t complex_elements = g.batch * Product(complex_dims, 0, rank);
  const int64_t real_elements = g.batch * Product(g.lengths, 0, rank);
  if (real_elements == 0 || complex_elements == 0) return;
  // Dimension `axis` of the complex side as [outer, n, inner].
  auto complex_axis = [&](const C* source, C* destination, size_t axis, bool inverse) {
    const int64_t outer = g.batch * Product(complex_dims, 0, axis);
    const int64_t inner = Product(complex_dims, axis + 1, rank);
    ComplexAxis(source, destination, outer, complex_dims[axis], inner, inverse, parallel_for);
  };
  switch (g.type) {
    case FftType::kFft:
    case FftType::kIfft: {
      const bool inverse = g.type == FftType::kIfft;
      C* result = static_cast<C*>(output);
      complex_axis(static_cast<const C*>(input), result, rank - 1, inverse);
      for (size_t axis = rank - 1; axis-- > 0;) complex_axis(result, result, axis, inverse);
      return;
    }
    case FftType::kRfft: {
      C* result = static_cast<C*>(output);
      RealForward(static_cast<const T*>(input), result, real_elements / last, parallel_for);
      for (size_t axis = rank - 1; axis-- > 0;) complex_axis(result, result, axis, /*inverse=*/false);
      return;
    }
    case FftType::kIrfft: {
      const C* source = static_cast<const C*>(input);
      std::vector<C> staged;
      if (rank > 1) {
        // The leading dimensions' inverses first (NumPy's irfftn order), into
        // a copy: the operand stays as it was.
        staged.resize(static_cast<size_t>(complex_elements));
        for (size_t axis = 0; axis + 1 < rank; ++axis) {
          complex_axis(axis == 0 ? source : staged.data(), staged.data(), axis, /*inverse=*/true);
        }
        source = staged.data();
      }
      RealInverse(source, static_cast<T*>(output), real_elements / last, parallel_for);
      return;
    }
  }
}

}  // namespace

std::unique_ptr<FftTransform> CreateTransform(const FftGeometry& geometry) {
  if (geometry.double_precision) return std::make_unique<TypedTransform<double>>(geometry);
  return std::make_unique<TypedTransform<float>>(geometry);
}

}  // namespace kiln::cpu::fft::KILN_FFT_ISA
