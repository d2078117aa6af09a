// The f32 and f64 scans in AVX-512 lanes (avx512_lanes.h), one line of the
// scan per lane, so each lane performs exactly the scalar scan's operations
// in its order (y = op(y, x) from the initial value) and the bytes are the
// scalar path's. Along the last dimension (inner == 1) sixteen (eight)
// lines are loaded as a 16 x 16 (8 x 8) block, transposed in registers,
// scanned one vector operation per step and transposed back; along any
// other dimension a running vector per 16 (8) adjacent columns streams down
// the rows.
#pragma once

#include <cstdint>

#include "backends/cpu/avx512_lanes.h"
#include "backends/cpu/scan_thunk.h"

namespace kiln::cpu {

// Columns one block of running vectors covers (eight vectors: eight
// independent chains hide an operation's latency) in a scan with inner > 1.
template <typename T>
constexpr int64_t kScanColumnsPerBlock = 8 * kAvx512LaneCount<T>;

// Scans lines [first_line, last_line) of a scan along the last dimension
// (inner == 1), lanes-many at a time; a last group of fewer than half as
// many lines is left to the caller (a lane per line would be mostly idle).
// Returns the number of lines scanned, from first_line on. With `stream`,
// whole 64-byte aligned vectors are stored non-temporally (call
// FenceStreamedStores before the task ends). Needs HasAvx512Lanes().
template <typename T>
int64_t ScanLinesInLanes(const ScanGeometry& geometry, T initial, const T* input, T* output,
                         int64_t first_line, int64_t last_line, bool stream);

// Scans columns [first_column, last_column) of outer block `outer` of a scan
// with inner > 1. Needs HasAvx512Lanes().
template <typename T>
void ScanColumnsInLanes(const ScanGeometry& geometry, T initial, const T* input, T* output, int64_t outer,
                        int64_t first_column, int64_t last_column, bool stream);

}  // namespace kiln::cpu
