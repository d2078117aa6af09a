#include "core/lowering/bitonic_sort.h"

namespace kiln {

int64_t BitonicPaddedLength(int64_t length) {
  int64_t padded = 1;
  while (padded < length) padded *= 2;
  return padded;
}

int64_t BitonicTile(int64_t padded_length, int64_t tile) {
  const int64_t used = padded_length < tile ? padded_length : tile;
  return used < 2 ? 2 : used;
}

std::vector<BitonicPass> BitonicSortPasses(int64_t padded_length, int64_t tile) {
  std::vector<BitonicPass> passes;
  if (padded_length < 2) return passes;  // nothing to order
  tile = BitonicTile(padded_length, tile);
  passes.push_back({BitonicPass::Kind::kSortTiles, tile, 0});
  for (int64_t block = 2 * tile; block <= padded_length; block *= 2) {
    for (int64_t stride = block / 2; stride >= tile; stride /= 2)
      passes.push_back({BitonicPass::Kind::kMergeAcrossTiles, block, stride});
    passes.push_back({BitonicPass::Kind::kMergeWithinTiles, block, 0});
  }
  return passes;
}

}  // namespace kiln
