// Moving lines in and out of the blocks Kiln's FFT transforms (see
// fft_lanes.h): which elements of an array a group of lines is, copying
// them into a block (lane v holding line v) and back, and spreading groups
// over the intra-op threads. Rows are copied a square tile of vectors at
// a time, transposed in registers; columns (neighbouring lines) a vector at
// a time, split into real and imaginary parts by two shuffles. Shared by
// fft_transform.cc and fft_long_line.cc, and like fft_lanes.h part of each
// build of the kernels (its own namespace, its own vector width).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "backends/cpu/fft_lanes.h"
#include "core/interpreter/fft.h"

namespace kiln::cpu::fft::KILN_FFT_ISA {

// Elements a parallel task should cover at least, so scheduling stays cheap.
inline constexpr int64_t kElementsPerTask = 32 * 1024;

inline void ForRanges(const interpreter::FftParallelFor& parallel_for, int64_t extent, int64_t work_per_item,
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

// Copies the first elements of full vectors of lines that are rows
// (element_stride 1) into `to`, a square tile at a time: kWidth lines'
// kWidth / 2 complex elements, transposed in registers so that the real
// and imaginary parts land in the lanes. Returns how many elements it
// copied (a multiple of kWidth / 2); the caller copies the rest.
template <typename E, typename T>
int64_t GatherRowTiles(const std::complex<T>* from, const Lines& lines, int64_t n, bool conjugate,
                       Cx<E>* to) {
  constexpr int kWidth = sizeof(E) / sizeof(T);
  constexpr int kPerTile = kWidth / 2;
  const T sign = conjugate ? T(-1) : T(1);
  int64_t k = 0;
  for (; k + kPerTile <= n; k += kPerTile) {
    E rows[kWidth];
    for (int v = 0; v < kWidth; ++v)
      std::memcpy(&rows[v], from + lines.base + v * lines.line_stride + k, sizeof(E));
    TransposeSquare<kWidth>(rows);
    for (int j = 0; j < kPerTile; ++j) to[k + j] = Cx<E>{rows[2 * j], sign * rows[2 * j + 1]};
  }
  return k;
}

// Writes the first elements of a block back into full vectors of lines
// that are rows, a square tile at a time (GatherRowTiles' inverse), scaled;
// returns how many it wrote.
template <typename E, typename T>
int64_t ScatterRowTiles(const Cx<E>* from, int64_t n, T scale, T imaginary_scale, const Lines& lines,
                        std::complex<T>* to) {
  constexpr int kWidth = sizeof(E) / sizeof(T);
  constexpr int kPerTile = kWidth / 2;
  int64_t k = 0;
  for (; k + kPerTile <= n; k += kPerTile) {
    E rows[kWidth];
    for (int j = 0; j < kPerTile; ++j) {
      rows[2 * j] = from[k + j].re * scale;
      rows[2 * j + 1] = from[k + j].im * imaginary_scale;
    }
    TransposeSquare<kWidth>(rows);
    for (int v = 0; v < kWidth; ++v) {
      std::memcpy(reinterpret_cast<T*>(to + lines.base + v * lines.line_stride + k), &rows[v], sizeof(E));
    }
  }
  return k;
}

// Copies `n` elements of the lines into `to` (conjugated for an inverse);
// the lanes past lines.count are zero.
template <typename E, typename T>
void Gather(const std::complex<T>* from, const Lines& lines, int64_t n, bool conjugate, Cx<E>* to) {
  const T sign = conjugate ? T(-1) : T(1);
  constexpr int kWidth = sizeof(E) / sizeof(T);
  if constexpr (kWidth > 1) {
    if (lines.count == kWidth && lines.line_stride == 1) {
      // A full vector of neighbouring lines: each element is kWidth adjacent
      // complex numbers, split into real and imaginary parts in registers.
      using Order = std::make_index_sequence<kWidth>;
      for (int64_t k = 0; k < n; ++k) {
        const std::complex<T>* row = from + lines.base + k * lines.element_stride;
        E low, high;
        std::memcpy(&low, row, sizeof(E));
        std::memcpy(&high, row + kWidth / 2, sizeof(E));
        to[k] = Cx<E>{EvenLanes(low, high, Order{}), sign * OddLanes(low, high, Order{})};
      }
      return;
    }
  }
  int64_t k = 0;
  if constexpr (kWidth > 1) {
    if (lines.count == kWidth && lines.element_stride == 1) k = GatherRowTiles(from, lines, n, conjugate, to);
  }
  for (; k < n; ++k) {
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
  constexpr int kWidth = sizeof(E) / sizeof(T);
  if constexpr (kWidth > 1) {
    if (lines.count == kWidth && lines.line_stride == 1) {
      using Order = std::make_index_sequence<kWidth>;
      for (int64_t k = 0; k < n; ++k) {
        const E re = from[k].re * scale;
        const E im = from[k].im * imaginary_scale;
        const E low = InterleaveLowHalves(re, im, Order{});
        const E high = InterleaveHighHalves(re, im, Order{});
        T* row = reinterpret_cast<T*>(to + lines.base + k * lines.element_stride);
        std::memcpy(row, &low, sizeof(E));
        std::memcpy(row + kWidth, &high, sizeof(E));
      }
      return;
    }
  }
  int64_t k = 0;
  if constexpr (kWidth > 1) {
    if (lines.count == kWidth && lines.element_stride == 1) {
      k = ScatterRowTiles(from, n, scale, imaginary_scale, lines, to);
    }
  }
  for (; k < n; ++k) {
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

}  // namespace kiln::cpu::fft::KILN_FFT_ISA
