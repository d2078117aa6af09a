// The launches of the CUDA backend's sort and topk (sort_emitter.h), and of
// its atomic scatter (atomic_scatter_emitter.h), on the
// fake driver: the passes of the bitonic schedule (core/lowering/bitonic_sort.h)
// and then the gather or take, with the grids and (mode, block, stride)
// arguments each pass needs, one after another on the stream with no wait
// on the host between them. The fake runs no kernel, so the values are
// checked on a GPU only (the conformance corpus); what the kernels' IR and
// PTX hold is checked by cuda.ptx_compiler and cuda.corpus_ptx.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/atomic_scatter_emitter.h"
#include "backends/cuda/sort_emitter.h"
#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/literal.h"
#include "core/lowering/bitonic_sort.h"

namespace kiln {
namespace {

// One launch as the fake driver logged it.
struct LoggedLaunch {
  std::string entry;
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  std::vector<uint64_t> parameters;
};

class SortLaunches : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("KILN_CUDA_DRIVER");
    ASSERT_NE(path, nullptr) << "KILN_CUDA_DRIVER is not set: run this test through ctest";
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
    ASSERT_FALSE(backend_->devices().empty());
    // The same path gives the library the backend loaded.
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    launch_count_ = reinterpret_cast<int (*)()>(dlsym(library, "kiln_fake_cuda_launch_count"));
    launch_at_ = reinterpret_cast<int (*)(int, char*, size_t, unsigned*, unsigned*, uint64_t*, size_t)>(
        dlsym(library, "kiln_fake_cuda_launch_at"));
    synchronizations_ = reinterpret_cast<int (*)()>(dlsym(library, "kiln_fake_cuda_synchronizations"));
    ASSERT_TRUE(launch_count_ && launch_at_ && synchronizations_) << path << " is not the fake driver";
  }

  // Compiles `text` and runs it once on zero-filled arguments; the
  // launches it made, and the host waits during the execution in `waits`.
  std::vector<LoggedLaunch> Run(const std::string& text, int* waits) {
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    if (!module.ok()) return {};
    StatusOr<std::unique_ptr<Executable>> executable = backend_->Compile(**module, CompileOptions{});
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    if (!executable.ok()) return {};
    std::vector<std::unique_ptr<DeviceBuffer>> buffers;
    std::vector<DeviceBuffer*> arguments;
    for (const Shape& shape : (*executable)->parameter_leaves()) {
      StatusOr<std::unique_ptr<DeviceBuffer>> buffer =
          backend_->BufferFromLiteral(Literal(shape), backend_->devices()[0]);
      EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
      if (!buffer.ok()) return {};
      arguments.push_back(buffer->get());
      buffers.push_back(std::move(buffer).value());
    }
    const int first = launch_count_();
    const int synchronized = synchronizations_();
    StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results =
        (*executable)->Execute(arguments, ExecuteOptions{});
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    *waits = synchronizations_() - synchronized;
    std::vector<LoggedLaunch> launches;
    for (int i = first; i < launch_count_(); ++i) {
      LoggedLaunch launch;
      char entry[256] = {};
      launch.parameters.assign(16, 0);
      const int count = launch_at_(i, entry, sizeof entry, launch.grid, launch.block,
                                   launch.parameters.data(), launch.parameters.size());
      EXPECT_GE(count, 0) << "launch " << i << " is not in the fake's log";
      launch.entry = entry;
      launch.parameters.resize(static_cast<size_t>(std::max(count, 0)));
      launches.push_back(std::move(launch));
    }
    return launches;
  }

  std::unique_ptr<Backend> backend_;
  int (*launch_count_)() = nullptr;
  int (*launch_at_)(int, char*, size_t, unsigned*, unsigned*, uint64_t*, size_t) = nullptr;
  int (*synchronizations_)() = nullptr;
};

// What a sort of `rows` rows of `length` elements must launch, pointer
// parameters first (`buffers` of them): the schedule's passes over the
// padded rows, each tile a block of tile / 2 threads and each pass across
// tiles a thread per pair, then the finish with a thread per output element
// (`outputs` per row).
void ExpectSortLaunches(const std::vector<LoggedLaunch>& launches, int64_t rows, int64_t length,
                        size_t buffers, int64_t outputs) {
  const int64_t padded = BitonicPaddedLength(length);
  const int64_t tile = BitonicTile(padded, cuda::kSortTile);
  const std::vector<BitonicPass> passes =
      length > 1 ? BitonicSortPasses(padded, cuda::kSortTile) : std::vector<BitonicPass>{};
  ASSERT_EQ(launches.size(), passes.size() + 1);
  for (size_t i = 0; i < launches.size(); ++i) {
    const LoggedLaunch& launch = launches[i];
    SCOPED_TRACE("launch " + std::to_string(i) + " of " + launch.entry);
    EXPECT_EQ(launch.entry, launches[0].entry) << "every pass is a mode of one entry";
    ASSERT_EQ(launch.parameters.size(), buffers + 3);
    EXPECT_EQ(launch.grid[1], 1u);
    EXPECT_EQ(launch.block[1], 1u);
    const uint64_t mode = launch.parameters[buffers];
    const uint64_t block = launch.parameters[buffers + 1];
    const uint64_t stride = launch.parameters[buffers + 2];
    const uint64_t threads = uint64_t{launch.grid[0]} * launch.block[0];
    if (i == passes.size()) {
      EXPECT_EQ(mode, static_cast<uint64_t>(BitonicLaunchMode::kFinish));
      EXPECT_GE(threads, static_cast<uint64_t>(rows * outputs));
      EXPECT_LT(threads, static_cast<uint64_t>(rows * outputs) + launch.block[0] + (rows * outputs == 0));
      continue;
    }
    const BitonicPass& pass = passes[i];
    EXPECT_EQ(block, static_cast<uint64_t>(pass.block));
    switch (pass.kind) {
      case BitonicPass::Kind::kSortTiles:
      case BitonicPass::Kind::kMergeWithinTiles:
        EXPECT_EQ(mode, static_cast<uint64_t>(pass.kind == BitonicPass::Kind::kSortTiles
                                                  ? BitonicLaunchMode::kSortTiles
                                                  : BitonicLaunchMode::kMergeWithinTiles));
        EXPECT_EQ(launch.block[0], static_cast<unsigned>(tile / 2)) << "a thread per pair of a tile";
        EXPECT_EQ(launch.grid[0], static_cast<unsigned>(rows * padded / tile)) << "a block per tile";
        break;
      case BitonicPass::Kind::kMergeAcrossTiles:
        EXPECT_EQ(mode, static_cast<uint64_t>(BitonicLaunchMode::kMergeAcrossTiles));
        EXPECT_EQ(stride, static_cast<uint64_t>(pass.stride));
        EXPECT_GE(threads, static_cast<uint64_t>(rows * padded / 2)) << "a thread per pair";
        EXPECT_LT(threads, static_cast<uint64_t>(rows * padded / 2) + launch.block[0]);
        break;
    }
  }
}

std::string SortModule(const std::string& shape, int dimension) {
  return "HloModule sort\nless {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n  ROOT lt = pred[] compare(a, b), "
         "direction=LT\n}\n"
         "ENTRY main {\n  x = f32" +
         shape + " parameter(0)\n  k = s32" + shape + " parameter(1)\n  ROOT s = (f32" + shape + ", s32" +
         shape + ") sort(x, k), dimensions={" + std::to_string(dimension) + "}, to_apply=less\n}\n";
}

// JAX's sort_f32 benchmark: one row of 2^20 f32 under JAX's comparator
// (NaNs and -0 canonicalised, a total order).
TEST_F(SortLaunches, AMillionElementRowIsTheSchedulesPassesThenTheGather) {
  const char* kJaxSort = R"(HloModule sort_f32
compare {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  zero = f32[] constant(0)
  a_plus = f32[] add(a, zero)
  b_plus = f32[] add(b, zero)
  nan = f32[] constant(nan)
  a_nan = pred[] compare(a_plus, a_plus), direction=NE
  b_nan = pred[] compare(b_plus, b_plus), direction=NE
  a_canonical = f32[] select(a_nan, nan, a_plus)
  b_canonical = f32[] select(b_nan, nan, b_plus)
  ROOT lt = pred[] compare(a_canonical, b_canonical), direction=LT, type=TOTALORDER
}
ENTRY main {
  x = f32[1048576] parameter(0)
  ROOT s = f32[1048576] sort(x), dimensions={0}, to_apply=compare
})";
  int waits = -1;
  const std::vector<LoggedLaunch> launches = Run(kJaxSort, &waits);
  // 2^20 elements in tiles of 2^11: 1 + 45 + 9 passes, then the gather.
  ExpectSortLaunches(launches, 1, int64_t{1} << 20, /*buffers=*/3, int64_t{1} << 20);
  EXPECT_EQ(waits, 1) << "the host waits once, after the last launch";
}

TEST_F(SortLaunches, ShortRowsAreOneTilePassEach) {
  int waits = -1;
  // Five rows of 300 (padded to 512), along the last dimension and the first.
  ExpectSortLaunches(Run(SortModule("[5,300]", 1), &waits), 5, 300, /*buffers=*/5, 300);
  EXPECT_EQ(waits, 1);
  ExpectSortLaunches(Run(SortModule("[300,5]", 0), &waits), 5, 300, /*buffers=*/5, 300);
  EXPECT_EQ(waits, 1);
}

TEST_F(SortLaunches, SeveralLongRowsMergeAcrossTiles) {
  int waits = -1;
  // Three rows of 5000 (padded to 8192: four tiles each).
  ExpectSortLaunches(Run(SortModule("[3,5000]", 1), &waits), 3, 5000, /*buffers=*/5, 5000);
  EXPECT_EQ(waits, 1);
}

TEST_F(SortLaunches, RowsOfOneElementAreOnlyTheGather) {
  int waits = -1;
  ExpectSortLaunches(Run(SortModule("[7,1]", 1), &waits), 7, 1, /*buffers=*/5, 1);
  EXPECT_EQ(waits, 1);
}

TEST_F(SortLaunches, TopKSortsEachRowInOneTileThenTakesK) {
  constexpr char kTopK[] = R"(HloModule topk
ENTRY main {
  x = f32[64,1024] parameter(0)
  ROOT t = (f32[64,16], s32[64,16]) topk(x), k=16, largest=true
})";
  int waits = -1;
  const std::vector<LoggedLaunch> launches = Run(kTopK, &waits);
  // operand, values, indices, scratch; a row of 1024 is one tile.
  ExpectSortLaunches(launches, 64, 1024, /*buffers=*/4, 16);
  EXPECT_EQ(launches.size(), 2u);
  EXPECT_EQ(waits, 1);
}

// A scatter-add is the atomic scatter's two launches of one entry
// (atomic_scatter_emitter.h): a thread per output element copies the
// operand, then a thread per update element adds it, each launch given its
// extent and mode after the buffers; a multiply keeps the serial kernel,
// one launch of one block. The fake's log is the same as for the sorts.
class ScatterLaunches : public SortLaunches {
 protected:
  void ExpectCopyThenThreadPerUpdate(const char* combiner);
};

std::string ScatterModule(const char* combiner) {
  return std::string(
             "HloModule scatter\ncombine {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
             "  ROOT c = f32[] ") +
         combiner +
         "(a, b)\n}\nENTRY main {\n  x = f32[1000,16] parameter(0)\n  i = s32[5000,1] parameter(1)\n"
         "  u = f32[5000,16] parameter(2)\n  ROOT s = f32[1000,16] scatter(x, i, u), update_window_dims={1}, "
         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
         "to_apply=combine\n}\n";
}

void ScatterLaunches::ExpectCopyThenThreadPerUpdate(const char* combiner) {
  int waits = -1;
  const std::vector<LoggedLaunch> launches = Run(ScatterModule(combiner), &waits);
  ASSERT_EQ(launches.size(), 2u);
  const size_t buffers = 4;  // operand, indices, updates, output
  const int64_t counts[2] = {1000 * 16, 5000 * 16};
  for (size_t i = 0; i < launches.size(); ++i) {
    const LoggedLaunch& launch = launches[i];
    SCOPED_TRACE("launch " + std::to_string(i) + " of " + launch.entry);
    EXPECT_EQ(launch.entry, launches[0].entry) << "both launches are modes of one entry";
    ASSERT_EQ(launch.parameters.size(), buffers + 2);
    EXPECT_EQ(launch.parameters[buffers], static_cast<uint64_t>(counts[i]));
    EXPECT_EQ(launch.parameters[buffers + 1],
              static_cast<uint64_t>(i == 0 ? cuda::kAtomicScatterCopyMode : cuda::kAtomicScatterUpdateMode));
    EXPECT_EQ(launch.block[0], static_cast<unsigned>(cuda::kThreadsPerBlock));
    const uint64_t threads = uint64_t{launch.grid[0]} * launch.block[0];
    EXPECT_GE(threads, static_cast<uint64_t>(counts[i]));
    EXPECT_LT(threads, static_cast<uint64_t>(counts[i]) + launch.block[0]);
  }
  EXPECT_EQ(waits, 1);
}

// A maximum (a compare-and-swap loop, atomic_scatter_compare_swap.h)
// launches the same way as an add (atom.add).
TEST_F(ScatterLaunches, AddAndMaximumAreACopyThenAThreadPerUpdate) {
  for (const char* combiner : {"add", "maximum"}) {
    SCOPED_TRACE(combiner);
    ExpectCopyThenThreadPerUpdate(combiner);
  }
}

TEST_F(ScatterLaunches, MultiplyIsTheSerialKernel) {
  int waits = -1;
  const std::vector<LoggedLaunch> launches = Run(ScatterModule("multiply"), &waits);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].grid[0], 1u);
  EXPECT_EQ(waits, 1);
}

}  // namespace
}  // namespace kiln
