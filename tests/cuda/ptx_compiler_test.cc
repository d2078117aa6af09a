// The CUDA backend's code generation, which needs no GPU: targets, what is
// refused by name, and the PTX the NVPTX target emits for kernels (ptxas
// checks the whole corpus's PTX in tests/cuda).
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/libdevice.h"
#include "backends/cuda/ptx_export.h"
#include "backends/cuda/sort_emitter.h"
#include "core/hlo_parser.h"
#include "core/lowering/bitonic_sort.h"
#include "tests/cuda/while_tiny_hlo.h"
#include "tests/unit/nested_loop_program.h"
#include "tests/unit/test_util.h"  // KILN_ASSERT_OK_AND_ASSIGN

namespace kiln {
namespace {

using cuda::ExportPtx;
using cuda::ParsePtxTarget;
using cuda::PtxExport;
using cuda::PtxTarget;

PtxTarget Sm80() { return *ParsePtxTarget("sm_80"); }

StatusOr<PtxExport> Export(const char* text, const PtxTarget& target = Sm80()) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  return ExportPtx(**module, target);
}

// Sets an environment variable for one scope.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(PtxTargetTest, AcceptsComputeCapabilitiesKilnEmitsFor) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxTarget sm80, ParsePtxTarget("sm_80"));
  EXPECT_EQ(sm80.sm, 80);
  EXPECT_EQ(sm80.ToString(), "sm_80");
  KILN_ASSERT_OK_AND_ASSIGN(PtxTarget bare, ParsePtxTarget("75"));
  EXPECT_EQ(bare.sm, 75);
  for (const char* bad : {"sm_90a", "sm_1x", "sm_100", "sm_30", "", "gfx90a"}) {
    const Status status = ParsePtxTarget(bad).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("sm_80"), std::string::npos) << status.message();
  }
}

TEST(PtxExportTest, FusedElementwiseKernelIsOneEntryForTheTarget) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule fused
ENTRY main {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  s = f32[1000] add(a, b)
  e = f32[1000] exponential(s)
  ROOT m = f32[1000] multiply(e, a)
})"));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  EXPECT_EQ(exported.kernels[0].parallel_extent, 1000);  // one thread per element
  EXPECT_EQ(exported.kernels[0].buffer_count, 3);
  // Launched as 4 blocks of 256 threads, the last skipping 24.
  const KernelGrid grid = cuda::CudaKernelGrid(exported.kernels[0]);
  EXPECT_EQ(grid.iterations, 1000);
  EXPECT_EQ(grid.workgroups[0], 4);
  EXPECT_EQ(grid.workgroup_size[0], cuda::kThreadsPerBlock);
  EXPECT_NE(exported.ptx.find(".target sm_80"), std::string::npos);
  EXPECT_NE(exported.ptx.find(".entry " + exported.kernels[0].name), std::string::npos) << exported.ptx;
  EXPECT_EQ(exported.ptx.find("call.uni"), std::string::npos) << "everything should be inlined:\n"
                                                              << exported.ptx;
}

TEST(PtxExportTest, RowReductionsTakeAWarpPerRow) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule row_sum
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[100,1000] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[100] reduce(a, z), dimensions={1}, to_apply=add
})"));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  EXPECT_EQ(exported.kernels[0].parallel_extent, 100 * cuda::kWarpSize);
  // log2(32) butterfly steps combine the lanes' partial sums.
  size_t shuffles = 0;
  for (size_t at = exported.ptx.find("shfl.sync.bfly"); at != std::string::npos;
       at = exported.ptx.find("shfl.sync.bfly", at + 1))
    ++shuffles;
  EXPECT_EQ(shuffles, 5u) << exported.ptx;
}

TEST(PtxExportTest, TargetSelectsTheArchitecture) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxTarget sm90, ParsePtxTarget("sm_90"));
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule negate
ENTRY main {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
})",
                                                       sm90));
  EXPECT_NE(exported.ptx.find(".target sm_90"), std::string::npos) << exported.ptx;
}

TEST(PtxExportTest, ReductionsDotsAndLoopsBecomeKernels) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule mixed
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
cond {
  state = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  state = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(state), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  m = f32[8,8] get-tuple-element(state), index=1
  d = f32[8,8] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[8,8]) tuple(next, d)
}
ENTRY main {
  a = f32[8,8] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8,8]) tuple(zero, a)
  loop = (s32[], f32[8,8]) while(init), condition=cond, body=body
  r = f32[8,8] get-tuple-element(loop), index=1
  z = f32[] constant(0)
  ROOT sum = f32[8] reduce(r, z), dimensions={1}, to_apply=add
})"));
  EXPECT_GE(exported.kernels.size(), 3u) << exported.ptx;  // condition, increment, dot, reduce
  for (const cuda::PtxKernel& kernel : exported.kernels)
    EXPECT_NE(exported.ptx.find(".entry " + kernel.name), std::string::npos) << kernel.name;
}

constexpr const char* kWhileTiny = cuda_test::kWhileTinyHlo;

// The text of entry `name` in `ptx`, up to the end of its function; empty
// when there is no such entry.
std::string EntryText(const std::string& ptx, const std::string& name) {
  const size_t begin = ptx.find(".entry " + name + "(");
  if (begin == std::string::npos) return "";
  const size_t end = ptx.find("\n}", begin);  // a function's closing brace starts its line
  return ptx.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// Whether some branch of `entry` jumps back to a label above it: a loop
// that runs on the device.
bool HasBackEdge(const std::string& entry) {
  std::map<std::string, size_t> labels;  // label -> where it is defined
  std::istringstream lines(entry);
  std::vector<std::pair<std::string, size_t>> branches;  // target, line
  size_t number = 0;
  for (std::string line; std::getline(lines, line); ++number) {
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const std::string text = line.substr(first);
    if (text.front() == '$' && text.back() == ':') labels[text.substr(0, text.size() - 1)] = number;
    const size_t bra = text.find("bra");
    if (bra != std::string::npos && text.find('$', bra) != std::string::npos) {
      std::string target = text.substr(text.find('$', bra));
      target = target.substr(0, target.find(';'));
      branches.emplace_back(target, number);
    }
  }
  for (const auto& [target, line] : branches) {
    const auto found = labels.find(target);
    if (found != labels.end() && found->second < line) return true;
  }
  return false;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// while_tiny's loop (whole_loop.h) is one more entry: it loops on the
// device (a branch back), with a barrier after each step (the condition's
// compare, the predicate's read, the body's two kernels, the state's three
// copies), and takes the status, the trip budget and the slots' pointers.
// The kernels it inlines keep their own entries, for the host's loop.
TEST(PtxExportTest, SmallLoopIsOneEntryThatLoopsOnTheDevice) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(kWhileTiny));
  ASSERT_FALSE(exported.kernels.empty()) << exported.ptx;
  const cuda::PtxKernel& loop = exported.kernels.back();
  EXPECT_EQ(loop.name, "kiln_loop_0") << exported.ptx;
  EXPECT_EQ(loop.parallel_extent, cuda::kThreadsPerBlock);
  size_t loops = 0;
  for (const cuda::PtxKernel& kernel : exported.kernels) {
    EXPECT_FALSE(EntryText(exported.ptx, kernel.name).empty()) << kernel.name;
    loops += kernel.name.rfind("kiln_loop_", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(loops, 1u);
  const std::string entry = EntryText(exported.ptx, loop.name);
  ASSERT_FALSE(entry.empty()) << exported.ptx;
  EXPECT_TRUE(HasBackEdge(entry)) << entry;
  EXPECT_GE(Occurrences(entry, "bar.sync"), 3u) << entry;
  EXPECT_EQ(Occurrences(entry, "call.uni"), 0u) << "the kernels should be inlined:\n" << entry;
  // Steps read what earlier steps of the block wrote: never through the
  // non-coherent read-only cache.
  EXPECT_EQ(Occurrences(entry, "ld.global.nc"), 0u) << entry;
  EXPECT_EQ(Occurrences(entry, ".param .u64 kiln_loop_0_param_"), static_cast<size_t>(loop.buffer_count) + 1)
      << entry;
  // The kernels' own entries have no loop back to the top.
  for (const cuda::PtxKernel& kernel : exported.kernels) {
    if (kernel.name == loop.name) continue;
    EXPECT_EQ(Occurrences(EntryText(exported.ptx, kernel.name), "bar.sync"), 0u) << kernel.name;
  }
}

// Loops past the limits (arrays over kWholeLoopMaxElements), and every loop
// with KILN_CUDA_WHOLE_LOOPS=0, get no loop entry.
TEST(PtxExportTest, LoopsPastTheLimitsOrTurnedOffHaveNoLoopEntry) {
  std::string large = kWhileTiny;
  for (size_t at = large.find("f32[4]"); at != std::string::npos; at = large.find("f32[4]", at))
    large.replace(at, 6, "f32[5000]");
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport over, Export(large.c_str()));
  for (const cuda::PtxKernel& kernel : over.kernels)
    EXPECT_EQ(kernel.name.rfind("kiln_loop_", 0), std::string::npos);
  EXPECT_EQ(over.ptx.find("bar.sync"), std::string::npos);
  {
    ScopedEnvironment off("KILN_CUDA_WHOLE_LOOPS", "0");
    KILN_ASSERT_OK_AND_ASSIGN(PtxExport turned_off, Export(kWhileTiny));
    for (const cuda::PtxKernel& kernel : turned_off.kernels)
      EXPECT_EQ(kernel.name.rfind("kiln_loop_", 0), std::string::npos);
  }
  {
    ScopedEnvironment bad("KILN_CUDA_WHOLE_LOOPS", "maybe");
    EXPECT_EQ(Export(kWhileTiny).status().code(), StatusCode::kInvalidArgument);
  }
}

// The names of the loop kernels (whole_loop.h) among `exported`'s entries.
std::vector<std::string> LoopEntries(const PtxExport& exported) {
  std::vector<std::string> loops;
  for (const cuda::PtxKernel& kernel : exported.kernels) {
    if (kernel.name.rfind("kiln_loop_", 0) == 0) loops.push_back(kernel.name);
  }
  return loops;
}

// Only loops of kernels and copies run whole: a loop whose body sorts (a
// kernel of its own entry and scratch) or holds another loop runs from the
// host, while the inner loop of the two, which is small, gets its entry;
// a loop whose condition is a constant has one too (its predicate is the
// constant's slot).
TEST(PtxExportTest, OnlyLoopsOfPlainKernelsAndCopiesRunWhole) {
  const std::string sorting_loop = R"(
HloModule sorting_loop
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[16] get-tuple-element(s), index=1
  y = f32[16] negate(x)
  sorted = f32[16] sort(y), dimensions={0}, to_apply=less
  ROOT t = (s32[], f32[16]) tuple(next, sorted)
}
ENTRY main {
  x = f32[16] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[16]) tuple(zero, x)
  loop = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(loop), index=1
})";
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport sorting, Export(sorting_loop.c_str()));
  EXPECT_TRUE(LoopEntries(sorting).empty()) << sorting.ptx;
  // The same loop without its sort runs whole.
  std::string plain_loop = sorting_loop;
  plain_loop.replace(plain_loop.find("tuple(next, sorted)"), 19, "tuple(next, y)");
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport plain, Export(plain_loop.c_str()));
  EXPECT_EQ(LoopEntries(plain).size(), 1u) << plain.ptx;

  KILN_ASSERT_OK_AND_ASSIGN(PtxExport nested, Export(kNestedEndlessLoop));
  const std::vector<std::string> loops = LoopEntries(nested);
  ASSERT_EQ(loops.size(), 1u) << nested.ptx;
  const std::string inner = EntryText(nested.ptx, loops[0]);
  EXPECT_TRUE(HasBackEdge(inner)) << inner;
  // The inner loop has no condition kernel: one barrier after reading the
  // constant predicate, one after the body's add, one after its copy.
  EXPECT_EQ(Occurrences(inner, "bar.sync"), 3u) << inner;
}

// An f32 key sorted with an s32 payload along `dimension` of `dims`.
std::string KeyPayloadSort(const std::string& dims, int dimension) {
  return R"(
HloModule sort
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[)" +
         dims + R"(] parameter(0)
  k = s32[)" +
         dims + R"(] parameter(1)
  ROOT s = (f32[)" +
         dims + "], s32[" + dims + "]) sort(x, k), dimensions={" + std::to_string(dimension) +
         "}, to_apply=less\n}";
}

TEST(PtxExportTest, SortIsAKernelWithScratch) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(KeyPayloadSort("3,16", 1).c_str()));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  EXPECT_EQ(exported.kernels[0].parallel_extent, 3 * 16);  // the gather: a thread per output element
  EXPECT_EQ(exported.kernels[0].buffer_count, 5);          // two operands, two outputs, scratch
  // Rows of 16 are one tile each: a tile pass, then the gather.
  ASSERT_EQ(exported.kernels[0].launches.size(), 2u);
  EXPECT_EQ(exported.kernels[0].launches[0].grid.workgroups[0], 3);
  EXPECT_EQ(exported.kernels[0].launches[0].grid.workgroup_size[0], 8);
}

// A long row is sorted by blocks in parallel (sort_emitter.h): one entry
// whose modes sort tiles in shared memory with a barrier between steps,
// merge across tiles a pair per thread, and gather. Every pass of the
// schedule gives each thread one pair (never a thread a whole row), and the
// entry has no call left (the comparator is inlined).
TEST(PtxExportTest, LongSortIsBitonicPassesOverSharedMemoryTiles) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(KeyPayloadSort("100000", 0).c_str()));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  const cuda::PtxKernel& kernel = exported.kernels[0];
  EXPECT_NE(exported.ptx.find(".entry " + kernel.name), std::string::npos) << exported.ptx;
  EXPECT_NE(exported.ptx.find(".shared"), std::string::npos) << "tiles in shared memory";
  EXPECT_NE(exported.ptx.find("bar.sync"), std::string::npos) << "a barrier between a tile's steps";
  EXPECT_EQ(exported.ptx.find("call.uni"), std::string::npos) << "the comparator should be inlined";
  const int64_t padded = 131072;  // 100000 padded to a power of two
  const std::vector<BitonicPass> passes = BitonicSortPasses(padded, cuda::kSortTile);
  ASSERT_EQ(kernel.launches.size(), passes.size() + 1);
  for (size_t i = 0; i < passes.size(); ++i) {
    const KernelLaunch& launch = kernel.launches[i];
    ASSERT_EQ(launch.parameters.size(), 3u);
    EXPECT_EQ(launch.parameters[1], passes[i].block);
    // One pair per thread: as many threads as the row has pairs.
    EXPECT_GE(launch.grid.invocations(), padded / 2) << "pass " << i;
    EXPECT_LE(launch.grid.workgroup_size[0], 1024);
  }
  EXPECT_EQ(kernel.launches.back().parameters[0], static_cast<int64_t>(BitonicLaunchMode::kFinish));
  EXPECT_GE(kernel.launches.back().grid.invocations(), 100000);
}

// A scatter-add (JAX's x.at[i].add(u)) is two launches of one entry
// (atomic_scatter_emitter.h): the copy, a thread per output element, then
// a thread per update element adding with atom/red.add.f32. A multiply
// has no atomic form and keeps the serial kernel: one thread, no launches.
std::string ScatterRows(const std::string& combine, const std::string& type = "f32") {
  return "HloModule scatter_rows\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + combine + "(a, b)\n}\nENTRY main {\n  x = " + type +
         "[1000,16] parameter(0)\n  i = s32[5000,1] parameter(1)\n  u = " + type +
         "[5000,16] parameter(2)\n  ROOT s = " + type +
         "[1000,16] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

TEST(PtxExportTest, ScatterAddIsAThreadPerUpdateWithAtomicAdds) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(ScatterRows("add").c_str()));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  const cuda::PtxKernel& kernel = exported.kernels[0];
  ASSERT_EQ(kernel.launches.size(), 2u);
  EXPECT_EQ(kernel.launches[0].parameters[0], 1000 * 16);
  EXPECT_EQ(kernel.launches[0].grid.workgroups[0], (1000 * 16 + 255) / 256);
  EXPECT_EQ(kernel.launches[1].parameters[0], 5000 * 16);
  EXPECT_EQ(kernel.launches[1].grid.workgroups[0], (5000 * 16 + 255) / 256);
  EXPECT_EQ(kernel.launches[1].grid.workgroup_size[0], cuda::kThreadsPerBlock);
  const bool atomic_add = exported.ptx.find("red.global.add.f32") != std::string::npos ||
                          exported.ptx.find("atom.global.add.f32") != std::string::npos;
  EXPECT_TRUE(atomic_add) << exported.ptx;

  KILN_ASSERT_OK_AND_ASSIGN(PtxExport product, Export(ScatterRows("multiply").c_str()));
  ASSERT_EQ(product.kernels.size(), 1u) << product.ptx;
  EXPECT_TRUE(product.kernels[0].launches.empty());
  EXPECT_EQ(product.kernels[0].parallel_extent, 1);
}

// Combiners with no atomic instruction (float minimum and maximum, f16
// sums, 8/16-bit integers, integer products) run the same two launches,
// each update thread swapping the 32- or 64-bit word that holds its
// element in a compare-and-swap loop (atomic_scatter_compare_swap.h).
TEST(PtxExportTest, ScattersWithoutAnAtomicInstructionSwapWords) {
  const struct {
    const char* type;
    const char* combine;
    const char* swap;
  } cases[] = {{"f32", "maximum", ".cas.b32"},  {"f64", "minimum", ".cas.b64"},
               {"f16", "add", ".cas.b32"},      {"bf16", "maximum", ".cas.b32"},
               {"u8", "add", ".cas.b32"},       {"s16", "minimum", ".cas.b32"},
               {"s64", "multiply", ".cas.b64"}, {"u32", "multiply", ".cas.b32"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.type) + " " + c.combine);
    KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(ScatterRows(c.combine, c.type).c_str()));
    ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
    ASSERT_EQ(exported.kernels[0].launches.size(), 2u);
    EXPECT_EQ(exported.kernels[0].launches[1].parameters[0], 5000 * 16);
    EXPECT_NE(exported.ptx.find(c.swap), std::string::npos) << exported.ptx;
  }
}

TEST(PtxExportTest, RngIsAKernelTakingAKey) {
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule random
ENTRY main {
  mu = f32[] constant(0)
  sigma = f32[] constant(1)
  ROOT r = f32[64] rng(mu, sigma), distribution=rng_normal
})"));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  EXPECT_TRUE(exported.kernels[0].takes_rng_key);
  EXPECT_EQ(exported.kernels[0].parallel_extent, 64);
}

// A float convolution is an implicit GEMM (convolution_gemm_emitter.h):
// tiles staged in shared memory between barriers, a block of 256 threads
// per 64 x 64 tile of the output; an integer one keeps the elemental
// kernel (a thread per output element, no shared memory).
TEST(PtxExportTest, FloatConvolutionIsAnImplicitGemmOverSharedTiles) {
  const auto convolution = [](const std::string& type) {
    return "HloModule conv\nENTRY main {\n  x = " + type + "[2,30,30,3] parameter(0)\n  w = " + type +
           "[3,3,3,70] parameter(1)\n  ROOT c = " + type +
           "[2,28,28,70] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n";
  };
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport gemm, Export(convolution("f32").c_str()));
  ASSERT_EQ(gemm.kernels.size(), 1u) << gemm.ptx;
  EXPECT_NE(gemm.ptx.find(".shared"), std::string::npos) << gemm.ptx;
  EXPECT_NE(gemm.ptx.find("bar.sync"), std::string::npos) << gemm.ptx;
  // M = 2 * 28 * 28 = 1568 (25 tiles of 64), N = 70 (2 tiles).
  EXPECT_EQ(gemm.kernels[0].parallel_extent, 25 * 2 * 256);
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport elemental, Export(convolution("s32").c_str()));
  ASSERT_EQ(elemental.kernels.size(), 1u) << elemental.ptx;
  EXPECT_EQ(elemental.ptx.find(".shared"), std::string::npos) << elemental.ptx;
  EXPECT_EQ(elemental.kernels[0].parallel_extent, 2 * 28 * 28 * 70);
}

TEST(PtxExportTest, HostOnlyOpsAreRefusedByName) {
  const Status size = Export(R"(
HloModule dynamic_size
ENTRY main {
  x = f32[16] parameter(0)
  ROOT d = s32[] get-dimension-size(x), dimensions={0}
})")
                          .status();
  EXPECT_EQ(size.code(), StatusCode::kUnimplemented);
  EXPECT_NE(size.message().find("get-dimension-size"), std::string::npos) << size.message();
  EXPECT_NE(size.message().find("cpu backend"), std::string::npos) << size.message();
}

TEST(PtxExportTest, ComplexArithmeticNeedsNoHostFunctions) {
  if (std::getenv("KILN_CUDA_LIBDEVICE") == nullptr) {
    GTEST_SKIP() << "KILN_CUDA_LIBDEVICE is not set: run through ctest (cuda.ptx_compiler)";
  }
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule complex
ENTRY main {
  x = c64[4,4] parameter(0)
  y = c64[4,4] parameter(1)
  e = c64[4,4] exponential(x)
  q = c64[4,4] divide(e, y)
  m = c64[4,4] multiply(q, x)
  ROOT d = c64[4,4] dot(m, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"));
  EXPECT_FALSE(exported.kernels.empty());
  // The C library's and libgcc's complex functions have GPU bodies of
  // Kiln's own (complex_runtime.h), inlined like everything else.
  for (const char* host_only : {"cexpf", "__mulsc3", "__divsc3", "hypotf"})
    EXPECT_EQ(exported.ptx.find(host_only), std::string::npos) << host_only << " left in:\n" << exported.ptx;
}

constexpr const char* kAtan2 = R"(
HloModule atan2
ENTRY main {
  y = f32[32] parameter(0)
  x = f32[32] parameter(1)
  ROOT a = f32[32] atan2(y, x)
})";

TEST(PtxExportTest, MathFromLibdeviceNeedsLibdevice) {
  ScopedEnvironment missing("KILN_CUDA_LIBDEVICE", "/nonexistent/libdevice.10.bc");
  const Status status = Export(kAtan2).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("__nv_atan2f"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("KILN_CUDA_LIBDEVICE"), std::string::npos) << status.message();
}

// The CUDA target hooks (cuda_target_hooks.h): float exp, log, tanh, erf
// and logistic are the shared polynomials, which need no library; the same
// functions of double values are libdevice's.
TEST(PtxExportTest, FloatExpNeedsNoLibraryAndDoubleExpIsLibdevices) {
  ScopedEnvironment missing("KILN_CUDA_LIBDEVICE", "/nonexistent/libdevice.10.bc");
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(R"(
HloModule float_math
ENTRY main {
  x = f32[64] parameter(0)
  e = f32[64] exponential(x)
  l = f32[64] log(x)
  t = f32[64] tanh(x)
  r = f32[64] erf(x)
  s = f32[64] logistic(x)
  el = f32[64] add(e, l)
  tr = f32[64] add(t, r)
  elt = f32[64] add(el, tr)
  ROOT sum = f32[64] add(elt, s)
})"));
  EXPECT_EQ(exported.ptx.find("__nv_"), std::string::npos) << exported.ptx;
  const Status status = Export(R"(
HloModule double_exp
ENTRY main {
  x = f64[64] parameter(0)
  ROOT e = f64[64] exponential(x)
})")
                            .status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("__nv_exp"), std::string::npos) << status.message();
}

TEST(PtxExportTest, MathFromLibdeviceIsLinkedAndInlinedWhenFound) {
  if (cuda::FindLibdevice().empty()) {
    GTEST_SKIP()
        << "libdevice.10.bc not found: set KILN_CUDA_LIBDEVICE (CI installs the nvidia-cuda-nvcc wheel "
           "and sets it for this test)";
  }
  KILN_ASSERT_OK_AND_ASSIGN(PtxExport exported, Export(kAtan2));
  EXPECT_EQ(exported.ptx.find("__nv_atan2f"), std::string::npos) << "libdevice should be inlined:\n"
                                                                 << exported.ptx;
  // Only what the kernel needs is linked: a whole libdevice is ~1 MB of PTX.
  EXPECT_LT(exported.ptx.size(), 100000u);
}

}  // namespace
}  // namespace kiln
