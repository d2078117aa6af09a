// The GLSL of the vulkan sort and topk kernels: rows ordered by the bitonic
// network of core/lowering/bitonic_sort.h, then every output gathered
// through that order. One shader, dispatched once per pass of the network
// (push constants say which), with a memory barrier between dispatches:
//   mode 0  kSortTiles: a workgroup numbers the elements of its tiles in
//           shared memory and sorts each tile by the whole network up to it;
//   mode 1  kMergeAcrossTiles: one compare-exchange per invocation at
//           (block, stride), over the scratch buffer;
//   mode 2  kMergeWithinTiles: a workgroup finishes merge `block` within
//           its tiles (distances tile / 2 .. 1) in shared memory;
//   mode 3  the gather.
// The scratch holds each row's element numbers, `padded` per row. A pair is
// decided by one call of k_hi_first(row, lo, hi), which the emitter defines
// (whether element `hi` goes before element `lo`, lo < hi): when it does
// not, the smaller element number goes first, so equal keys keep their
// order; element numbers past the row's length (the padding) go after
// every real one and never reach k_hi_first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/shader_features.h"
#include "core/lowering/bitonic_sort.h"

namespace kiln::vulkan {

struct BitonicSortLayout {
  int64_t rows = 0;
  int64_t length = 0;          // elements per row
  int64_t padded = 1;          // BitonicPaddedLength(length)
  int64_t tile = 2;            // BitonicTile(padded, the device's tile)
  int64_t chunk = 2;           // element numbers a workgroup holds in shared memory (tiles of whole rows)
  int64_t workgroup_size = 1;  // chunk / 2: one compare-exchange per invocation per step
  int64_t outputs = 0;         // elements the gather writes (per output array)
};

// Push constants of every pass: its launch's parameters, mode, block and
// stride (BitonicSortLaunches), 32 bits each.
inline constexpr int kBitonicPushConstantBytes = 4 * kBitonicLaunchParameterCount;

// The largest tile this device sorts in one workgroup: two elements per
// invocation, at most 1024 invocations, the tile's element numbers (each
// `shared_bytes_per_element` of shared memory: the library sort keeps its
// key beside it, library_sort.h) within the device's shared memory; 128
// when the limits are unknown.
int64_t BitonicDeviceTile(const ShaderFeatures& features, int64_t shared_bytes_per_element = 4);

BitonicSortLayout PlanBitonicSort(int64_t rows, int64_t length, int64_t outputs,
                                  const ShaderFeatures& features, int64_t shared_bytes_per_element = 4);

// Declarations after the buffers (k_scratch among them) and before
// k_hi_first's definition: the push constants and the shared tile.
std::string BitonicSortGlobals(const BitonicSortLayout& layout);
// Functions after k_hi_first: the compare-exchange decision and
// k_sorted(row, e), the element number at place e of a sorted row.
std::string BitonicSortFunctions(const BitonicSortLayout& layout);
// main(); `gather` runs once per output element with `int k_o` its index.
std::string BitonicSortMain(const BitonicSortLayout& layout, const std::string& gather);

// The dispatches, in order: BitonicSortLaunches with workgroups of `chunk`
// element numbers in the tile passes, `workgroup_size` invocations in every
// dispatch and at most kGlslMaxWorkgroups workgroups (one dispatch of no
// workgroups when there is nothing to write).
std::vector<KernelLaunch> BitonicSortDispatches(const BitonicSortLayout& layout);

// An upper bound of the loop iterations one invocation runs in any one of
// the dispatches, each compare running `compare_loops` more.
int64_t BitonicSortLoopIterations(const BitonicSortLayout& layout,
                                  const std::vector<KernelLaunch>& dispatches, int64_t compare_loops);

}  // namespace kiln::vulkan
