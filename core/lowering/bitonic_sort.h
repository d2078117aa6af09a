// The passes of a bitonic sorting network, shared by the GPU backends' sort
// and top-k kernels. A row is padded to a power of two (elements past its
// end compare after every real element); workgroups sort and merge tiles of
// `tile` elements in shared memory, and only the compare distances of a
// tile or more need a pass of their own over global memory, so a row of n
// elements costs one launch per such distance plus one per merge size
// instead of one thread working through the whole row.
//
// The network compares element i with i ^ stride, keeping the pair in
// ascending order when (i & block) == 0 and descending otherwise; the last
// merge (block == padded length) leaves the row ascending.
#pragma once

#include <cstdint>
#include <vector>

#include "core/compiler/kernel_description.h"

namespace kiln {

struct BitonicPass {
  enum class Kind {
    // Every tile sorted alone by the whole network up to block == tile
    // (every compare distance below the tile, in shared memory).
    kSortTiles,
    // One compare distance of at least a tile: one compare-exchange per pair
    // of elements, over global memory.
    kMergeAcrossTiles,
    // The distances tile / 2 .. 1 of merge size `block`, each tile in shared memory.
    kMergeWithinTiles,
  };
  Kind kind = Kind::kSortTiles;
  int64_t block = 0;   // size of the sequences this pass merges (kSortTiles: the tile)
  int64_t stride = 0;  // compare distance (kMergeAcrossTiles only; 0 otherwise)
};

// The smallest power of two >= length (1 for length <= 1).
int64_t BitonicPaddedLength(int64_t length);

// The passes that sort rows of `padded_length` elements (a power of two)
// with tiles of `tile` elements (a power of two >= 2); a row no longer
// than a tile is sorted by one kSortTiles pass with tile == padded length;
// a row of one element needs no pass.
std::vector<BitonicPass> BitonicSortPasses(int64_t padded_length, int64_t tile);

// The tile actually used for a row: min(tile, padded_length), at least 2.
int64_t BitonicTile(int64_t padded_length, int64_t tile);

// What a launch of a bitonic sort kernel does: the first of its
// parameters, {mode, block, stride} (BitonicPass's block and stride; 0
// where the mode has none). Every backend's sort and top-k kernel switches
// on these numbers.
enum class BitonicLaunchMode : int64_t {
  kSortTiles = 0,
  kMergeAcrossTiles = 1,
  kMergeWithinTiles = 2,
  kFinish = 3,  // the gather (sort) or the take of the first k (top-k)
};
inline constexpr int kBitonicLaunchParameterCount = 3;

// How a backend runs the network over `rows` rows of `length` elements,
// then the finish.
struct BitonicLaunchPlan {
  int64_t rows = 0;
  int64_t length = 0;
  int64_t finish_iterations = 0;  // output elements the finish writes
  int64_t tile = 2;               // the backend's tile (BitonicTile caps it by the row)
  // Element numbers the workgroup of a tile pass holds in shared memory,
  // one invocation per pair: whole tiles of one row or of several short
  // rows (a power of two >= the tile used; 0: that tile).
  int64_t tile_group_elements = 0;
  // Invocations per workgroup of the merges across tiles and the finish.
  int64_t group_size = 1;
  // The most workgroups of a launch; the invocations stride over the rest.
  int64_t max_workgroups = INT64_MAX;
};

// The launches of a bitonic sort kernel, parameters {mode, block, stride}:
// each pass of BitonicSortPasses over the padded rows (a tile pass a
// workgroup per tile_group_elements element numbers, a merge across tiles
// an invocation per pair of elements), then the finish, an invocation per
// iteration. Nothing to sort (no rows, rows of one element) is the finish
// alone, and so is no finish iteration, when that finish has no
// workgroups: nothing to launch.
std::vector<KernelLaunch> BitonicSortLaunches(const BitonicLaunchPlan& plan);

}  // namespace kiln
