// The CPU backend's code generator: turns computations into native kernels
// with LLVM (ORC LLJIT, for the host CPU). The runtime (backends/cpu/)
// decides what becomes a kernel; this part only emits and JIT-compiles.
//
// A kernel computes the root of one computation elementally from its
// parameters: a fused loop (elementwise ops, broadcasts, reshapes,
// transposes, slices, converts, ...) or a reduction with its fused
// producers. The root may be a tuple of arrays (multi-output fusion,
// variadic reduce); its leaves are the kernel's outputs. A root that is a
// scatter or select-and-scatter makes a serial kernel (parallel extent 1)
// that fills its outputs and then applies the updates in order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/codegen/compile_tier.h"
#include "backends/cpu/codegen/fused_loop.h"
#include "core/compiler/kernel_description.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cpu {

// The native kernel ABI. `buffers` holds the computation's parameters in
// parameter-number order, then its output leaves in order; all arrays dense
// row-major. Output buffers must not alias parameter buffers (the kernel
// tells LLVM they do not, so that loops vectorise without runtime checks).
// The kernel computes iterations [begin, end) of its parallel
// extent (KernelInfo::parallel_extent); disjoint ranges may run on different
// threads at once, so a kernel writes only the outputs of its own range.
using KernelFunction = void (*)(void* const* buffers, int64_t begin, int64_t end);

// What compiling one KernelDescription gave: the function, and what the
// runtime needs to choose its grid (CpuKernelGrid, kernel_thunk.h).
struct KernelInfo {
  KernelFunction function = nullptr;
  // Number of independent iterations the kernel can be split into (>= 1).
  int64_t parallel_extent = 1;
  // Rough bytes touched per iteration, so the runtime can choose a grain.
  int64_t bytes_per_iteration = 0;
};

struct KernelCompilerOptions {
  int optimization_level = 3;  // LLVM pipeline level, 0..3
  std::string cache_dir;       // object files cached here when non-empty
  // Kernels that run at most this many scalar loop iterations get LLVM's
  // quick tier (codegen/compile_tier.h); 0 optimises all fully. >= 0. The
  // default honours KILN_CPU_QUICK_TIER_MAX_ITERATIONS.
  int64_t quick_tier_max_iterations = codegen::QuickTierMaxIterationsFromEnvironment();
};

// Where Compile writes each kernel module's LLVM IR (CompileOptions::
// dump_ir_dir): `directory`/`stem`.N.emitted.ll as emitted and
// .N.optimized.ll as optimised, for module N of the call. Nothing when
// `directory` is empty; a dumping module never comes from the object cache.
struct KernelDump {
  std::string directory;
  std::string stem;
};

// How many modules a Compile call compiles at once (one thread each): the
// requests of each compile tier are split into at most this many modules.
int KernelCompileThreads();

// Keeps the JIT-compiled code of one Compile call alive.
class CompiledKernels {
 public:
  virtual ~CompiledKernels() = default;
  virtual const std::vector<KernelInfo>& kernels() const = 0;       // request order
  virtual const std::vector<FusedLoopFunction>& loops() const = 0;  // loop request order
};

class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  static StatusOr<std::unique_ptr<KernelCompiler>> Create(const KernelCompilerOptions& options);

  // OK when every instruction of `computation` (and of the computations it
  // calls, e.g. reducers) can be emitted; UNIMPLEMENTED naming the op and
  // element type otherwise.
  virtual Status CheckEmittable(const Computation& computation) const = 0;
  // What fusion asks of `instruction` alone is llvm_ir::CpuEmittableTable()
  // (backends/llvm/emittable.h): a table, no computation built.

  // Compiles all described kernels (per compile tier, split into up to
  // KernelCompileThreads() modules, built in parallel) into one native
  // program; their names must be unique within the call. Only the
  // computation and name of each description are read: the grid is the
  // runtime's to choose from the KernelInfo. Thread-safe.
  // `loops` are while loops compiled whole (fused_loop.h) over kernels of
  // `requests`: the loops and the kernels they call go into one module of
  // their own (the kernels keep their symbols, for their thunks), linked
  // with the others; the loops' names must be unique too.
  virtual StatusOr<std::shared_ptr<CompiledKernels>> Compile(std::span<const KernelDescription> requests,
                                                             std::span<const FusedLoopRequest> loops,
                                                             const KernelDump& dump) = 0;
  StatusOr<std::shared_ptr<CompiledKernels>> Compile(std::span<const KernelDescription> requests,
                                                     const KernelDump& dump) {
    return Compile(requests, {}, dump);
  }
  StatusOr<std::shared_ptr<CompiledKernels>> Compile(std::span<const KernelDescription> requests) {
    return Compile(requests, {}, KernelDump{});
  }

  // Compile calls whose object code came from the object cache (options.cache_dir,
  // or the KILN_CACHE_DIR environment variable when that is empty).
  virtual int64_t cache_hits() const = 0;
};

}  // namespace kiln::cpu
