// Pooling's windows in AVX-512 registers, for f32 and f64: one output
// position's window rows (the contiguous lanes the window does not touch,
// NHWC pooling's channels) folded into registers and stored once, instead
// of an accumulator row in memory updated row by row. The fold is the
// interpreter's, in its order: the initial value, then op(held, row) for
// each row, with the interpreter's operations in AVX-512 lanes
// (avx512_lanes.h: its NaN and signed-zero rule for max and min).
// A folded epilogue (window_thunk.h: average pooling's divide) is applied
// to the folded vector before it is stored, one IEEE operation as the
// interpreter's op on the stored result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "backends/cpu/avx512_lanes.h"
#include "core/opcode.h"

namespace kiln::cpu {

// The lanes of one register: a window's lanes fewer than this are left to
// the scalar path.
template <typename T>
constexpr int64_t kWindowFoldLanes = kAvx512LaneCount<T>;

// What the fold does to each result before it stores it: nothing, or
// op(result, scalar) for op add, subtract, multiply or divide.
template <typename T>
struct WindowFoldEpilogue {
  std::optional<Opcode> op;
  T scalar = T(0);
};

// For each of `positions` output positions p (1 or 2), out[p][c] =
// epilogue(fold(initial, rows[p * taps][c], ..., rows[p * taps + taps - 1][c]))
// for c < n: each position's `taps` window rows one after the other in
// `rows`, its results at out[p]; the rows and the results do not overlap. Two positions with as many taps
// fold side by side, twice the independent work per row step.
template <typename T>
using WindowFoldRows = void (*)(const T* const* rows, size_t taps, size_t positions, T initial, int64_t n,
                                T* const* out, const WindowFoldEpilogue<T>& epilogue);

template <typename T>
constexpr bool kHasWindowFoldVectors = std::is_same_v<T, float> || std::is_same_v<T, double>;

// The fold for `reducer` (kMaximum, kMinimum, kAdd or kMultiply), or null
// for any other reducer or where the CPU has no AVX-512F. With
// `stream_stores` it stores whole aligned vectors non-temporally: for a
// result far larger than the caches, which saves reading each line before
// it is written; the thread then calls FenceStreamedWindowStores before its
// results are handed on.
template <typename T>
WindowFoldRows<T> FindWindowFoldRows(Opcode reducer, bool stream_stores = false);

// Orders the streamed stores before the thread's later stores (sfence):
// x86 does not order them by a release store alone.
void FenceStreamedWindowStores();

// Copies `bytes` from `from` to `to` (not overlapping); with `stream` and
// AVX-512F, the 64-byte aligned lines of `to` are stored non-temporally
// (select-and-scatter's finished result rows: no read of the line before
// it is written, nothing evicted), then FenceStreamedWindowStores is due.
void StoreWindowResultRow(void* to, const void* from, size_t bytes, bool stream);

// Sets `count` elements of `element_bytes` (1, 2, 4 or 8) at `to` to the
// element at `value`, a 64-byte line at a time where the CPU has AVX-512F
// (select-and-scatter's ring rows, set to the initial value: the library's
// baseline build fills 16 bytes a store).
void FillWindowRow(void* to, const void* value, size_t element_bytes, size_t count);

extern template WindowFoldRows<float> FindWindowFoldRows<float>(Opcode, bool);
extern template WindowFoldRows<double> FindWindowFoldRows<double>(Opcode, bool);

}  // namespace kiln::cpu
