#include "backends/vulkan/library_gemm_tiles.h"

namespace kiln::vulkan {
namespace {

// Tile shapes, the first whose workgroup the device runs in whole
// subgroups winning: 64 x 64 outputs by 256 invocations, 4 x 4 each; for
// at most 16 output columns, 256 rows by 16 columns, so that few lanes
// compute columns past the matrix's; and 64 x 64 by 64 invocations, 8 x 8
// each, for a device that runs fewer than 256. A CPU device (lavapipe: a
// workgroup is one thread stepping through its invocations) gains from
// fewer invocations doing more each and fewer barriers: the
// [8,56,56,64] x [3,3,64,64] convolution took 3.20 s with the wide tiles,
// 2.09 s with 8 x 8 blocks, 1.30-1.89 s with 8 x 8 blocks and 16
// contraction steps a tile (kiln bench, median of 2, load 5-6).
constexpr GemmTiles kCpuTiles{64, 64, 16, 8, 8};
constexpr GemmTiles kWideTiles{64, 64, 8, 4, 4};
constexpr GemmTiles kNarrowTiles{256, 16, 8, 4, 4};
constexpr GemmTiles kSmallGroupTiles{64, 64, 8, 8, 8};

}  // namespace

std::optional<GemmTiles> ChooseGemmTiles(int64_t columns, const ShaderFeatures& features) {
  const int64_t invocations = features.WorkgroupInvocationsOrMinimum();
  const int64_t shared = features.SharedMemoryBytesOrMinimum();
  std::vector<GemmTiles> candidates;
  if (features.cpu_device) candidates.push_back(kCpuTiles);
  if (columns <= 16) candidates.push_back(kNarrowTiles);
  candidates.push_back(kWideTiles);
  candidates.push_back(kSmallGroupTiles);
  for (const GemmTiles& tiles : candidates) {
    const int64_t size = tiles.workgroup_size();
    const int64_t bytes = int64_t{tiles.bk} * (tiles.bm + 1 + tiles.bn + 1) * 4;
    if (size > invocations || bytes > shared) continue;
    if (features.subgroup_size > 0 && size % features.subgroup_size != 0) continue;
    return tiles;
  }
  return std::nullopt;
}

}  // namespace kiln::vulkan
