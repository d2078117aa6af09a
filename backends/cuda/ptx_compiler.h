// Compiles kernel computations to PTX with LLVM's NVPTX target: each
// computation is emitted by the shared elemental kernel emitter
// (backends/llvm/, one output element per parallel iteration) and wrapped in a
// GPU entry point that maps one thread to one iteration; math functions
// are linked from libdevice (libdevice.h) when they are used. Sort, topk,
// rng, rng-bit-generator and a scatter whose combiner has an atomic form
// (atomic_scatter_emitter.h) have kernels of their own, and a float
// convolution is an implicit GEMM (convolution_gemm_emitter.h) where
// PlanConvolutionGemm takes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/ptx_emittable.h"
#include "backends/cuda/whole_loop.h"
#include "core/compiler/kernel_description.h"
#include "core/status.h"

namespace kiln::cuda {

// The GPU to compile for: compute capability major*10+minor (sm_80 = 80).
struct PtxTarget {
  int sm = 80;
  // PTX ISA version times 10 (e.g. 78); 0 = the highest LLVM 19 emits for
  // `sm`. A driver older than that needs a lower one (Backend chooses).
  int ptx_version = 0;
  // Bytes of kernel parameters the device takes (KernelParameterBytes of
  // its driver and capability). A module with a kernel past the portable
  // 4 KiB is emitted as PTX ISA 8.1 at least, which ptxas asks for.
  int64_t kernel_parameter_bytes = kPortableKernelParameterBytes;
  std::string ToString() const { return "sm_" + std::to_string(sm); }
};

// "sm_80" (also "80", "sm_90a" is refused: arch-specific PTX does not run
// on later GPUs) -> PtxTarget; INVALID_ARGUMENT naming the accepted form.
StatusOr<PtxTarget> ParsePtxTarget(std::string_view text);

// The oldest and newest compute capability Kiln emits for.
inline constexpr int kMinSm = 50;
inline constexpr int kMaxSm = 90;

// Threads per block of every kernel Kiln launches (whole warps).
inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kWarpSize = 32;

struct PtxKernel {
  std::string name;             // the .entry name
  int64_t parallel_extent = 1;  // threads to launch (one per iteration)
  int buffer_count = 0;         // pointer parameters: inputs then outputs
  bool takes_rng_key = false;   // an i64 key follows the extent (rng_emitter.h)
  // When not empty, the kernel runs as these launches of its entry, in
  // order on the execution's stream, instead of one launch over
  // parallel_extent: each gets the buffers, then its parameters as i64
  // (a sort's passes, sort_emitter.h). The lowering hands them to the
  // kernel's description (KernelDescription::launches), which the
  // executable reads.
  std::vector<KernelLaunch> launches = {};
};

// The grid a kernel launches with: blocks of kThreadsPerBlock threads
// along x, one thread per iteration of its parallel extent.
KernelGrid CudaKernelGrid(const PtxKernel& kernel);

struct PtxModule {
  std::string ptx;
  std::vector<PtxKernel> kernels;  // request order
  // Per loop request: its kernel's .entry name, or "" when it was not
  // emitted (whole_loop_emitter.h); the loop then runs from the host.
  std::vector<std::string> loops;
};

// OK when `computation` can become a GPU kernel: the CPU emitter's rules
// (backends/llvm/emittable.h) minus what needs host code (complex functions from
// the C library). UNIMPLEMENTED names the op otherwise.
Status CheckPtxEmittable(const Computation& computation);

// Every request's kernel in one PTX module, and a kernel per loop of
// `loops` (whole_loop.h) that can run whole. `dump_ir_dir`, when not empty,
// receives the emitted and optimised LLVM IR (STEM.ptx.emitted.ll and
// STEM.ptx.optimized.ll).
StatusOr<PtxModule> CompileToPtx(std::span<const KernelDescription> requests, const PtxTarget& target,
                                 const std::string& dump_ir_dir = "", const std::string& dump_stem = "",
                                 std::span<const WholeLoopKernel> loops = {});

}  // namespace kiln::cuda
