#include "core/lowering/bitonic_sort.h"

#include <algorithm>

namespace kiln {
namespace {

KernelLaunch BitonicModeLaunch(BitonicLaunchMode mode, int64_t block, int64_t stride, KernelGrid grid) {
  return KernelLaunch{grid, {static_cast<int64_t>(mode), block, stride}};
}

}  // namespace

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

std::vector<KernelLaunch> BitonicSortLaunches(const BitonicLaunchPlan& plan) {
  std::vector<KernelLaunch> launches;
  const int64_t padded = BitonicPaddedLength(plan.length);
  if (plan.rows > 0 && plan.finish_iterations > 0) {
    const int64_t tile = BitonicTile(padded, plan.tile);
    const int64_t group_elements = std::max(tile, plan.tile_group_elements);
    const int64_t pairs = plan.rows * (padded / 2);
    const KernelGrid tiles = LinearGrid(pairs, group_elements / 2, plan.max_workgroups);
    const KernelGrid across = LinearGrid(pairs, plan.group_size, plan.max_workgroups);
    for (const BitonicPass& pass : BitonicSortPasses(padded, tile)) {
      switch (pass.kind) {
        case BitonicPass::Kind::kSortTiles:
          launches.push_back(BitonicModeLaunch(BitonicLaunchMode::kSortTiles, pass.block, 0, tiles));
          break;
        case BitonicPass::Kind::kMergeAcrossTiles:
          launches.push_back(
              BitonicModeLaunch(BitonicLaunchMode::kMergeAcrossTiles, pass.block, pass.stride, across));
          break;
        case BitonicPass::Kind::kMergeWithinTiles:
          launches.push_back(BitonicModeLaunch(BitonicLaunchMode::kMergeWithinTiles, pass.block, 0, tiles));
          break;
      }
    }
  }
  launches.push_back(
      BitonicModeLaunch(BitonicLaunchMode::kFinish, 0, 0,
                        LinearGrid(plan.finish_iterations, plan.group_size, plan.max_workgroups)));
  return launches;
}

}  // namespace kiln
