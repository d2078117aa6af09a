// fft through Eigen's FFT module. Every transformed dimension is a set of
// lines: the last dimension's are contiguous and go straight from source to
// destination; the others are strided, and are gathered a few lines at a
// time (one cache line of elements per row) into a contiguous block,
// transformed there and scattered back.
#include "core/interpreter/fft.h"

#include <algorithm>
#include <complex>
#include <set>
#include <type_traits>

#include <unsupported/Eigen/FFT>

#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

// Elements a parallel task should cover at least, so scheduling stays cheap.
constexpr int64_t kElementsPerTask = 32 * 1024;
// Distinct lengths a thread keeps plans for before it drops them all.
constexpr size_t kMaxPlannedLengths = 64;

// The calling thread's FFT engine: Eigen's FFT object keeps a plan (twiddle
// factors and radix stages) per length and direction, and buffers, so one
// object is never shared between threads; each thread keeps its own between
// calls.
template <typename T>
Eigen::FFT<T>& Engine(int64_t length) {
  thread_local Eigen::FFT<T> engine(typename Eigen::FFT<T>::impl_type(), Eigen::FFT<T>::HalfSpectrum);
  thread_local std::set<int64_t> planned;
  if (planned.insert(length).second && planned.size() > kMaxPlannedLengths) {
    engine.impl().clear();
    planned = {length};
  }
  return engine;
}

// A thread's scratch buffer of at least `size` elements.
template <typename T>
T* Scratch(int slot, int64_t size) {
  thread_local std::vector<T> buffers[2];
  std::vector<T>& buffer = buffers[slot];
  if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(static_cast<size_t>(size));
  return buffer.data();
}

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

// One complex transform of length n from `source` to `destination`
// (distinct, contiguous).
template <typename T>
void ComplexLine(Eigen::FFT<T>& engine, const std::complex<T>* source, std::complex<T>* destination,
                 int64_t n, bool inverse) {
  if (n == 1) {  // the identity; Eigen's kissfft has no stage for it
    *destination = *source;
    return;
  }
  if (inverse) {
    engine.inv(destination, source, n);
  } else {
    engine.fwd(destination, source, n);
  }
}

// Complex transforms along one dimension of an array viewed as
// [outer, n, inner], from `source` to `destination` (the same array, or
// another of the same shape).
template <typename T>
void ComplexAxis(const std::complex<T>* source, std::complex<T>* destination, int64_t outer, int64_t n,
                 int64_t inner, bool inverse, const FftParallelFor& parallel_for) {
  using C = std::complex<T>;
  if (outer == 0 || n == 0 || inner == 0) return;
  if (inner == 1) {
    ForRanges(parallel_for, outer, n, [&](int64_t begin, int64_t end) {
      Eigen::FFT<T>& engine = Engine<T>(n);
      for (int64_t line = begin; line < end; ++line) {
        const C* from = source + line * n;
        C* to = destination + line * n;
        if (from == to) {  // the library transforms out of place
          C* copy = Scratch<C>(0, n);
          std::copy(from, from + n, copy);
          from = copy;
        }
        ComplexLine(engine, from, to, n, inverse);
      }
    });
    return;
  }
  // A block of `width` neighbouring lines: a row of the block is one cache line.
  const int64_t width = std::min<int64_t>(inner, std::max<int64_t>(1, 64 / static_cast<int64_t>(sizeof(C))));
  const int64_t blocks_per_outer = (inner + width - 1) / width;
  ForRanges(parallel_for, outer * blocks_per_outer, n * width, [&](int64_t begin, int64_t end) {
    Eigen::FFT<T>& engine = Engine<T>(n);
    C* gathered = Scratch<C>(0, n * width);
    C* transformed = Scratch<C>(1, n * width);
    for (int64_t block = begin; block < end; ++block) {
      const int64_t o = block / blocks_per_outer;
      const int64_t first = (block % blocks_per_outer) * width;
      const int64_t count = std::min(width, inner - first);
      const int64_t base = o * n * inner + first;
      for (int64_t k = 0; k < n; ++k) {
        const C* row = source + base + k * inner;
        for (int64_t w = 0; w < count; ++w) gathered[w * n + k] = row[w];
      }
      for (int64_t w = 0; w < count; ++w)
        ComplexLine(engine, gathered + w * n, transformed + w * n, n, inverse);
      for (int64_t k = 0; k < n; ++k) {
        C* row = destination + base + k * inner;
        for (int64_t w = 0; w < count; ++w) row[w] = transformed[w * n + k];
      }
    }
  });
}

// Real-input transforms along the last dimension: `lines` lines of n reals
// to their n/2+1 lowest frequencies.
template <typename T>
void RealForwardLines(const T* source, std::complex<T>* destination, int64_t lines, int64_t n,
                      const FftParallelFor& parallel_for) {
  const int64_t half = n / 2 + 1;
  if (n == 0) return;
  ForRanges(parallel_for, lines, n, [&](int64_t begin, int64_t end) {
    Eigen::FFT<T>& engine = Engine<T>(n);
    for (int64_t line = begin; line < end; ++line) {
      const T* from = source + line * n;
      std::complex<T>* to = destination + line * half;
      if (n == 1) {
        *to = std::complex<T>(*from, 0);
      } else {
        engine.fwd(to, from, n);  // HalfSpectrum: writes the n/2+1 bins only
      }
    }
  });
}

// Half-spectrum inverses along the last dimension: `lines` lines of n/2+1
// frequencies to n reals. The imaginary parts of the zero frequency (and of
// the n/2 one for even n) do not contribute, as in NumPy's irfft.
template <typename T>
void RealInverseLines(const std::complex<T>* source, T* destination, int64_t lines, int64_t n,
                      const FftParallelFor& parallel_for) {
  const int64_t half = n / 2 + 1;
  if (n == 0) return;
  ForRanges(parallel_for, lines, n, [&](int64_t begin, int64_t end) {
    Eigen::FFT<T>& engine = Engine<T>(n);
    for (int64_t line = begin; line < end; ++line) {
      const std::complex<T>* from = source + line * half;
      T* to = destination + line * n;
      if (n == 1) {
        *to = from->real();
      } else {
        engine.inv(to, from, n);  // reads the n/2+1 bins; scales by 1/n
      }
    }
  });
}

int64_t Product(const std::vector<int64_t>& values, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= values[i];
  return product;
}

template <typename T>
void RunTyped(const FftGeometry& g, const void* input, void* output, const FftParallelFor& parallel_for) {
  using C = std::complex<T>;
  const size_t rank = g.lengths.size();
  const int64_t last = g.lengths.back();
  // The complex side's dims per batch entry: lengths, with the last one
  // halved for the real transforms.
  std::vector<int64_t> complex_dims = g.lengths;
  const bool real = g.type == FftType::kRfft || g.type == FftType::kIrfft;
  if (real) complex_dims.back() = last / 2 + 1;
  const int64_t complex_elements = g.batch * Product(complex_dims, 0, rank);
  const int64_t real_elements = g.batch * Product(g.lengths, 0, rank);
  if ((real ? real_elements : complex_elements) == 0 || complex_elements == 0) return;
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
      const C* source = static_cast<const C*>(input);
      C* result = static_cast<C*>(output);
      complex_axis(source, result, rank - 1, inverse);
      for (size_t axis = rank - 1; axis-- > 0;) complex_axis(result, result, axis, inverse);
      return;
    }
    case FftType::kRfft: {
      C* result = static_cast<C*>(output);
      RealForwardLines(static_cast<const T*>(input), result, real_elements / last, last, parallel_for);
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
      RealInverseLines(source, static_cast<T*>(output), real_elements / last, last, parallel_for);
      return;
    }
  }
}

}  // namespace

StatusOr<FftGeometry> PlanFft(const Shape& operand, const Shape& result, const Attributes& attrs) {
  FftGeometry geometry;
  geometry.type = attrs.fft_type;
  geometry.lengths = attrs.fft_length;
  const auto rank = static_cast<int64_t>(geometry.lengths.size());
  if (!operand.IsArray() || !result.IsArray() || rank < 1 || rank > 3 || operand.rank() < rank ||
      result.rank() != operand.rank()) {
    return InvalidArgument("fft: operand ", operand.ToString(), " and result ", result.ToString(),
                           " do not fit fft_length of ", rank, " dimensions");
  }
  const Shape& real_side = geometry.type == FftType::kRfft ? operand : result;
  const Shape& complex_side = geometry.type == FftType::kRfft ? result : operand;
  const bool real = geometry.type == FftType::kRfft || geometry.type == FftType::kIrfft;
  const ElementType complex_type = complex_side.element_type();
  if (!IsComplex(complex_type) || (real && real_side.element_type() != ComplexComponentType(complex_type)) ||
      (!real && result.element_type() != complex_type)) {
    return InvalidArgument("fft: operand ", operand.ToString(), " and result ", result.ToString(),
                           " have the wrong element types for this fft_type");
  }
  geometry.double_precision = complex_type == ElementType::kC128;
  geometry.batch = 1;
  for (int64_t d = 0; d < operand.rank() - rank; ++d) {
    if (operand.dimensions(d) != result.dimensions(d)) {
      return InvalidArgument("fft: operand ", operand.ToString(), " and result ", result.ToString(),
                             " differ in batch dimension ", d);
    }
    geometry.batch *= operand.dimensions(d);
  }
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = operand.rank() - rank + i;
    const int64_t length = geometry.lengths[static_cast<size_t>(i)];
    const bool last = i == rank - 1;
    const int64_t complex_length = real && last ? length / 2 + 1 : length;
    const bool zero_sized = length == 0 && complex_side.dimensions(d) == 0;
    if (real_side.dimensions(d) != length || (complex_side.dimensions(d) != complex_length && !zero_sized)) {
      return InvalidArgument("fft: operand ", operand.ToString(), " and result ", result.ToString(),
                             " do not fit fft_length dimension ", i, " = ", length);
    }
    if (length > kMaxFftLength) {
      return Unimplemented("fft: transformed dimension of length ", length, " is longer than the ",
                           kMaxFftLength, " that the FFT library takes");
    }
  }
  return geometry;
}

void RunFft(const FftGeometry& geometry, const void* input, void* output,
            const FftParallelFor& parallel_for) {
  if (geometry.lengths.empty()) return;
  if (geometry.double_precision) {
    RunTyped<double>(geometry, input, output, parallel_for);
  } else {
    RunTyped<float>(geometry, input, output, parallel_for);
  }
}

StatusOr<Literal> EvaluateFft(const Instruction& instruction, Operands operands) {
  if (operands.size() != 1) return Internal("fft needs one operand");
  const Literal& operand = *operands[0];
  KILN_ASSIGN_OR_RETURN(FftGeometry geometry, PlanFft(operand.shape(), instruction.shape, instruction.attrs));
  Literal result(instruction.shape);
  RunFft(geometry, operand.raw().data(), result.raw().data());
  return result;
}

}  // namespace kiln::interpreter
