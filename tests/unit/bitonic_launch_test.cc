// The launches of a bitonic sort kernel (BitonicSortLaunches,
// core/lowering/bitonic_sort.h), the one list both GPU backends read: CUDA
// passes each launch's parameters as i64 kernel arguments, Vulkan as 32-bit
// push constants. Planned as each backend plans them: CUDA with a block per
// tile and 256 threads over global memory, Vulkan with workgroups of
// several short rows and at most 65535 workgroups.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/lowering/bitonic_sort.h"

namespace kiln {
namespace {

constexpr int64_t kMode = static_cast<int64_t>(BitonicLaunchMode::kSortTiles);
constexpr int64_t kAcross = static_cast<int64_t>(BitonicLaunchMode::kMergeAcrossTiles);
constexpr int64_t kWithin = static_cast<int64_t>(BitonicLaunchMode::kMergeWithinTiles);
constexpr int64_t kFinish = static_cast<int64_t>(BitonicLaunchMode::kFinish);

// As the CUDA backend plans a kernel (sort_emitter.cc): tiles of 2048, a
// block of tile / 2 threads per tile, 256 threads a block elsewhere.
BitonicLaunchPlan CudaLikePlan(int64_t rows, int64_t length, int64_t finish) {
  BitonicLaunchPlan plan;
  plan.rows = rows;
  plan.length = length;
  plan.finish_iterations = finish;
  plan.tile = 2048;
  plan.group_size = 256;
  return plan;
}

// {workgroups, workgroup size} of a launch along x.
std::vector<int64_t> GridOf(const KernelLaunch& launch) {
  EXPECT_EQ(launch.grid.workgroups[1], 1);
  EXPECT_EQ(launch.grid.workgroups[2], 1);
  return {launch.grid.workgroups[0], launch.grid.workgroup_size[0]};
}

TEST(BitonicLaunchTest, AMillionElementRowIsOneLaunchPerPassThenTheFinish) {
  const std::vector<KernelLaunch> launches = BitonicSortLaunches(CudaLikePlan(1, int64_t{1} << 20, 1 << 20));
  // One tile sort, 45 merges across tiles, 9 within them, the finish.
  ASSERT_EQ(launches.size(), 1u + 45 + 9 + 1);
  EXPECT_EQ(launches[0].parameters, (std::vector<int64_t>{kMode, 2048, 0}));
  EXPECT_EQ(GridOf(launches[0]), (std::vector<int64_t>{512, 1024})) << "a block of 1024 per tile";
  // The first merge (4096): its one distance across tiles, then within.
  EXPECT_EQ(launches[1].parameters, (std::vector<int64_t>{kAcross, 4096, 2048}));
  EXPECT_EQ(GridOf(launches[1]), (std::vector<int64_t>{2048, 256})) << "a thread per pair";
  EXPECT_EQ(launches[2].parameters, (std::vector<int64_t>{kWithin, 4096, 0}));
  EXPECT_EQ(GridOf(launches[2]), (std::vector<int64_t>{512, 1024}));
  // The last merge (2^20): distances 2^19 .. 2^11 across, then within.
  const size_t last_within = launches.size() - 2;
  EXPECT_EQ(launches[last_within - 9].parameters, (std::vector<int64_t>{kAcross, 1 << 20, 1 << 19}));
  EXPECT_EQ(launches[last_within - 1].parameters, (std::vector<int64_t>{kAcross, 1 << 20, 2048}));
  EXPECT_EQ(launches[last_within].parameters, (std::vector<int64_t>{kWithin, 1 << 20, 0}));
  EXPECT_EQ(launches.back().parameters, (std::vector<int64_t>{kFinish, 0, 0}));
  EXPECT_EQ(GridOf(launches.back()), (std::vector<int64_t>{4096, 256}));
  EXPECT_EQ(launches.back().grid.iterations, 1 << 20);
}

TEST(BitonicLaunchTest, LaunchesFollowTheScheduleForEveryLength) {
  for (int64_t rows : {1, 3}) {
    for (int64_t length : {2, 3, 300, 2048, 2049, 5000, 70000}) {
      SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(length));
      const std::vector<KernelLaunch> launches =
          BitonicSortLaunches(CudaLikePlan(rows, length, rows * length));
      const int64_t padded = BitonicPaddedLength(length);
      const int64_t tile = BitonicTile(padded, 2048);
      const std::vector<BitonicPass> passes = BitonicSortPasses(padded, 2048);
      ASSERT_EQ(launches.size(), passes.size() + 1);
      for (size_t i = 0; i < passes.size(); ++i) {
        const BitonicPass& pass = passes[i];
        const bool across = pass.kind == BitonicPass::Kind::kMergeAcrossTiles;
        const int64_t mode = pass.kind == BitonicPass::Kind::kSortTiles ? kMode : across ? kAcross : kWithin;
        ASSERT_EQ(launches[i].parameters.size(), static_cast<size_t>(kBitonicLaunchParameterCount));
        EXPECT_EQ(launches[i].parameters, (std::vector<int64_t>{mode, pass.block, pass.stride}));
        if (across) {
          EXPECT_EQ(GridOf(launches[i]), (std::vector<int64_t>{(rows * padded / 2 + 255) / 256, 256}));
        } else {
          EXPECT_EQ(GridOf(launches[i]), (std::vector<int64_t>{rows * padded / tile, tile / 2}));
        }
      }
      EXPECT_EQ(launches.back().parameters, (std::vector<int64_t>{kFinish, 0, 0}));
      EXPECT_EQ(GridOf(launches.back()), (std::vector<int64_t>{(rows * length + 255) / 256, 256}));
    }
  }
}

// As the Vulkan backend plans a kernel on a device whose tile is 1024
// (glsl_bitonic_sort.cc): short rows share a workgroup's chunk of shared
// memory, every launch has chunk / 2 invocations a workgroup, at most
// 65535 workgroups.
TEST(BitonicLaunchTest, WorkgroupsOfSeveralShortRowsAndACap) {
  BitonicLaunchPlan plan;
  plan.rows = 64;
  plan.length = 100;  // padded to 128: a tile each, eight rows a workgroup
  plan.finish_iterations = 64 * 100;
  plan.tile = 1024;
  plan.tile_group_elements = 1024;
  plan.group_size = 512;
  plan.max_workgroups = 65535;
  std::vector<KernelLaunch> launches = BitonicSortLaunches(plan);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].parameters, (std::vector<int64_t>{kMode, 128, 0}));
  EXPECT_EQ(GridOf(launches[0]), (std::vector<int64_t>{8, 512}));
  EXPECT_EQ(launches[1].parameters, (std::vector<int64_t>{kFinish, 0, 0}));
  EXPECT_EQ(GridOf(launches[1]), (std::vector<int64_t>{13, 512}));  // 6400 outputs
  // A cap: the invocations stride over what the workgroups do not cover.
  plan.rows = 1;
  plan.length = int64_t{1} << 24;
  plan.finish_iterations = plan.length;
  plan.max_workgroups = 100;
  launches = BitonicSortLaunches(plan);
  for (const KernelLaunch& launch : launches) EXPECT_EQ(GridOf(launch), (std::vector<int64_t>{100, 512}));
  EXPECT_EQ(launches[1].parameters, (std::vector<int64_t>{kAcross, 2048, 1024}));
  EXPECT_EQ(launches[1].grid.iterations, int64_t{1} << 23) << "a pair per iteration";
}

TEST(BitonicLaunchTest, NothingToSortIsTheFinishAlone) {
  // Rows of one element: only the finish (a copy through element number k).
  std::vector<KernelLaunch> launches = BitonicSortLaunches(CudaLikePlan(7, 1, 7));
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].parameters, (std::vector<int64_t>{kFinish, 0, 0}));
  EXPECT_EQ(GridOf(launches[0]), (std::vector<int64_t>{1, 256}));
  // No rows, or nothing to write (top-k with k = 0): a finish of no
  // workgroups, which no backend launches.
  for (const BitonicLaunchPlan& plan : {CudaLikePlan(0, 1000, 0), CudaLikePlan(4, 1000, 0)}) {
    launches = BitonicSortLaunches(plan);
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].parameters, (std::vector<int64_t>{kFinish, 0, 0}));
    EXPECT_EQ(launches[0].grid.workgroups[0], 0);
  }
}

}  // namespace
}  // namespace kiln
