#include "backends/cpu/fft_transform.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <map>
#include <numbers>
#include <type_traits>
#include <vector>

#include "backends/cpu/fft_lanes.h"
#include "backends/cpu/fft_plan.h"

namespace kiln::cpu {
namespace {

using fft::Conj;
using fft::Cx;
using fft::Lanes;
using fft::Plan;
using fft::Times;
using fft::TimesMinusI;
using interpreter::FftGeometry;
using interpreter::FftParallelFor;

// Elements a parallel task should cover at least, so scheduling stays cheap.
constexpr int64_t kElementsPerTask = 32 * 1024;

void ForRanges(const FftParallelFor& parallel_for, int64_t extent, int64_t work_per_item,
               const std::function<void(int64_t, int64_t)>& body) {
  if (extent <= 0) return;
  const int64_t grain = std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(1, work_per_item));
  if (parallel_for == nullptr || extent <= grain) {
    body(0, extent);
  } else {
    parallel_for(extent, grain, body);
  }
}

// Lane v of an element part: the scalar itself for one line.
template <typename E, typename T>
inline void SetLane(E& part, int v, T value) {
  if constexpr (std::is_same_v<E, T>) {
    part = value;
  } else {
    part[v] = value;
  }
}
template <typename T, typename E>
inline T GetLane(const E& part, int v) {
  if constexpr (std::is_same_v<E, T>) {
    return part;
  } else {
    return part[v];
  }
}

// `count` lines of one array: line v's element k is at
// base + v * line_stride + k * element_stride (in elements).
struct Lines {
  int64_t base;
  int64_t line_stride;
  int64_t element_stride;
  int count;
};

// A task's buffers for blocks of E: the line, the plan's work and, for the
// real inverse, the half spectrum as read.
template <typename E>
struct Block {
  std::vector<Cx<E>> storage;
  Cx<E>* data = nullptr;
  Cx<E>* work = nullptr;
  Cx<E>* extra = nullptr;

  void Reserve(int64_t data_size, int64_t work_size, int64_t extra_size) {
    const int64_t total = data_size + work_size + extra_size;
    if (static_cast<int64_t>(storage.size()) < total) storage.resize(static_cast<size_t>(total));
    data = storage.data();
    work = data + data_size;
    extra = work + work_size;
  }
};

template <typename T>
struct Blocks {
  Block<T> single;
  Block<typename Lanes<T>::Vector> vector;
};

// Copies `n` elements of the lines into `to` (conjugated for an inverse);
// the lanes past lines.count are zero.
template <typename E, typename T>
void Gather(const std::complex<T>* from, const Lines& lines, int64_t n, bool conjugate, Cx<E>* to) {
  const T sign = conjugate ? T(-1) : T(1);
  for (int64_t k = 0; k < n; ++k) {
    Cx<E> element{};
    const std::complex<T>* row = from + lines.base + k * lines.element_stride;
    for (int v = 0; v < lines.count; ++v) {
      const std::complex<T> value = row[v * lines.line_stride];
      SetLane(element.re, v, value.real());
      SetLane(element.im, v, sign * value.imag());
    }
    to[k] = element;
  }
}

// Writes `n` elements back into the lines, scaled (and conjugated for an
// inverse).
template <typename E, typename T>
void Scatter(const Cx<E>* from, int64_t n, bool conjugate, T scale, const Lines& lines, std::complex<T>* to) {
  const T imaginary_scale = conjugate ? -scale : scale;
  for (int64_t k = 0; k < n; ++k) {
    const Cx<E> element = from[k];
    std::complex<T>* row = to + lines.base + k * lines.element_stride;
    for (int v = 0; v < lines.count; ++v) {
      row[v * lines.line_stride] =
          std::complex<T>(GetLane<T>(element.re, v) * scale, GetLane<T>(element.im, v) * imaginary_scale);
    }
  }
}

// Runs `body` on a block of vectors when the lines fill most lanes, else
// line by line on scalar blocks.
template <typename T, typename Body>
void ForLanes(Blocks<T>& blocks, const Lines& lines, Body body) {
  constexpr int kLanes = Lanes<T>::kCount;
  if (2 * lines.count > kLanes) {
    body(blocks.vector, lines);
    return;
  }
  for (int v = 0; v < lines.count; ++v) {
    body(blocks.single,
         Lines{lines.base + v * lines.line_stride, lines.line_stride, lines.element_stride, 1});
  }
}

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
  std::vector<C> half_twiddles_;  // exp(-2 pi i k/n), k <= n/2, for even real lengths
};

// Complex transforms along one dimension of an array viewed as
// [outer, n, inner], from `source` to `destination` (the same array, or
// another of the same shape). The last dimension's lines are neighbouring
// rows; the others' neighbouring columns (one cache line per element).
template <typename T>
void TypedTransform<T>::ComplexAxis(const C* source, C* destination, int64_t outer, int64_t n, int64_t inner,
                                    bool inverse, const FftParallelFor& parallel_for) const {
  constexpr int kLanes = Lanes<T>::kCount;
  const Plan<T>& plan = PlanFor(n);
  const int64_t groups_per_outer = inner == 1 ? 1 : (inner + kLanes - 1) / kLanes;
  const int64_t groups = inner == 1 ? (outer + kLanes - 1) / kLanes : outer * groups_per_outer;
  const T scale = inverse ? T(1) / static_cast<T>(n) : T(1);
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
        block.Reserve(m, plan.work_size(), 0);
        for (int64_t k = 0; k < m; ++k) {
          Cx<E> element{};
          for (int v = 0; v < some.count; ++v) {
            const T* row = source + (some.base + v) * n;
            SetLane(element.re, v, even ? row[2 * k] : row[k]);
            if (even) SetLane(element.im, v, row[2 * k + 1]);
          }
          block.data[k] = element;
        }
        const Cx<E>* z = plan.Transform(block.data, block.work);
        for (int64_t k = 0; k < half; ++k) {
          Cx<E> value;
          if (even) {
            const Cx<E> a = z[k % m];
            const Cx<E> b = Conj(z[(m - k) % m]);
            const Cx<E> sum = a + b;
            const Cx<E> twisted = Times(TimesMinusI(a - b), half_twiddles_[static_cast<size_t>(k)]);
            value = {(sum.re + twisted.re) * T(0.5), (sum.im + twisted.im) * T(0.5)};
          } else {
            value = z[k];
          }
          for (int v = 0; v < some.count; ++v) {
            destination[(some.base + v) * half + k] = C(GetLane<T>(value.re, v), GetLane<T>(value.im, v));
          }
        }
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
        for (int v = 0; v < some.count; ++v) {
          T* row = destination + (some.base / half + v) * n;
          for (int64_t k = 0; k < m; ++k) {
            if (even) {
              row[2 * k] = GetLane<T>(result[k].re, v) * scale;
              row[2 * k + 1] = -GetLane<T>(result[k].im, v) * scale;
            } else {
              row[k] = GetLane<T>(result[k].re, v) * scale;
            }
          }
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

std::unique_ptr<FftTransform> FftTransform::Create(const FftGeometry& geometry) {
  if (geometry.double_precision) return std::make_unique<TypedTransform<double>>(geometry);
  return std::make_unique<TypedTransform<float>>(geometry);
}

}  // namespace kiln::cpu
