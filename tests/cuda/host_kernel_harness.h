// Runs the CUDA backend's kernels, as LLVM IR, on this host: no GPU runs
// in CI and the fake driver cannot execute PTX. A kernel module (the IR
// that goes to NVPTX codegen) is retargeted to the host and compiled with
// LLVM's JIT after its PTX special registers (thread, block, block size),
// its block barrier (bar.sync) and its warp shuffles (shfl.sync.bfly) are
// replaced by host functions; a block then runs on the calling thread as
// a cooperative fiber per GPU thread (host_block_fibers.h), parked at a
// barrier until every thread of the block arrived, and each warp's 32
// threads exchange shuffled words through an array of their own between
// two meetings of the warp. Math library calls (libdevice's __nv_*) are
// not provided: a module that calls one is refused by name.
//
// What only a GPU can check is the NVPTX lowering of that IR (ptxas
// accepts it: cuda.corpus_ptx), memory ordering beyond the barrier, races
// between a block's threads (a fiber runs alone from one meeting to the
// next) and real parallel timing.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace kiln::cuda_test {

// How the threads of a block run: taking turns as fibers (barriers and
// shuffles work; a barrier or shuffle that some threads never reach, as
// they returned or wait at another, makes RunBlock fail), or one after
// another (faster; a barrier or shuffle is then a test failure).
enum class BlockThreads { kTogether, kOneAfterAnother };

class HostKernels {
 public:
  // Compiles `module` (of `context`) for this host; each of `entries` (a
  // kernel's name) can then be run. INTERNAL naming what is wrong when the
  // module calls an NVVM intrinsic or a function this harness has no host
  // version of, is invalid, or does not compile.
  static StatusOr<std::unique_ptr<HostKernels>> Compile(std::unique_ptr<llvm::LLVMContext> context,
                                                        std::unique_ptr<llvm::Module> module,
                                                        const std::vector<std::string>& entries);
  // As Compile, from a file of IR text (what the cuda backend dumps).
  static StatusOr<std::unique_ptr<HostKernels>> CompileFile(const std::string& path,
                                                            const std::vector<std::string>& entries);
  ~HostKernels();

  // Runs block `block` of a grid of blocks of `threads` threads of kernel
  // `entry` on `arguments`: the kernel's parameters in order, each as a
  // 64-bit word (a pointer, or an integer truncated to its width).
  // INTERNAL when the block's threads cannot all finish (see BlockThreads).
  Status RunBlock(const std::string& entry, std::span<const uint64_t> arguments, int64_t block, int threads,
                  BlockThreads how) const;

 private:
  HostKernels() = default;

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  // Per entry: `void caller(ptr words)`, which calls it with words[i] as
  // parameter i.
  std::unordered_map<std::string, void (*)(const uint64_t*)> callers_;
};

}  // namespace kiln::cuda_test
