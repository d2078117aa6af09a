// The GLSL of the vulkan sort and topk kernels on a CPU device (lavapipe)
// for rows short enough: each invocation sorts whole rows, one after
// another, by a stable bottom-up merge sort of their element numbers, then
// every output is gathered through that order. On a device whose
// invocations are a few SIMD lanes of a few cores, the merge sort's
// n log n compares beat the bitonic network's n log^2 n / 4 split over
// passes (glsl_bitonic_sort.h), which GPUs keep. One shader, two
// dispatches (push constant `mode`): 4 sorts the rows, 3 gathers.
// The scratch holds two regions of rows * length element numbers, each
// merge pass reading one and writing the other. A pair is decided by one
// call of k_hi_first(row, lo, hi) as in glsl_bitonic_sort.h (the left
// run's element numbers are all below the right run's, so equal keys
// keep their order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/shader_features.h"

namespace kiln::vulkan {

struct SerialSortLayout {
  int64_t rows = 0;
  int64_t length = 0;          // elements per row
  int64_t outputs = 0;         // elements the gather writes (per output array)
  int64_t workgroup_size = 1;  // the device's subgroup: one SIMD batch of rows per workgroup
};

// Push constants of both dispatches: the mode (32 bits).
inline constexpr int kSerialSortPushConstantBytes = 4;

// Whether `rows` rows of `length` elements are sorted by this file's
// shader on this device: a CPU device, rows no longer than the measured
// crossover with lavapipe, within 32-bit indexing and the device's loop
// limit (with a comparator of no loops). GlslKernelScratchBytes and the
// emitter both ask it.
bool SortsRowsSerially(const ShaderFeatures& features, int64_t rows, int64_t length);

SerialSortLayout PlanSerialSort(int64_t rows, int64_t length, int64_t outputs,
                                const ShaderFeatures& features);

// Two regions of rows * length element numbers (at least 4 bytes).
int64_t SerialSortScratchBytes(int64_t rows, int64_t length);

// Declarations after the buffers: the push constants.
std::string SerialSortGlobals();
// Functions after k_hi_first: k_sort_row(row) and k_sorted(row, e), the
// element number at place e of a sorted row.
std::string SerialSortFunctions(const SerialSortLayout& layout);
// main(); `gather` runs once per output element with `int k_o` its index.
std::string SerialSortMain(const SerialSortLayout& layout, const std::string& gather);

// The sort's dispatch and the gather's (one of no workgroups when there is
// nothing to write).
std::vector<KernelLaunch> SerialSortDispatches(const SerialSortLayout& layout);

// An upper bound of the loop iterations one invocation runs in either
// dispatch, each compare running `compare_loops` more.
int64_t SerialSortLoopIterations(const SerialSortLayout& layout, const std::vector<KernelLaunch>& dispatches,
                                 int64_t compare_loops);

}  // namespace kiln::vulkan
