// Runs one code-generated kernel over its parallel extent on the intra-op
// thread pool. Until the kernel is compiled (or if compiling it failed) it
// runs the same computation through the library path instead.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/library_thunk.h"

namespace kiln::cpu {

// The CPU's grid for a compiled kernel: its parallel extent in row blocks
// of at least 64 KiB touched (by the kernel's bytes per iteration), one
// block per thread-pool task; one block when the kernel cannot say.
KernelGrid CpuKernelGrid(const KernelInfo& info);

class KernelThunk : public Thunk {
 public:
  // `fallback` computes the same computation with the same slots.
  KernelThunk(std::vector<int> inputs, std::vector<int> outputs, std::unique_ptr<LibraryThunk> fallback);
  // Runs `function` over grid.iterations, in tasks of
  // grid.workgroup_size[0] iterations on the pool.
  void SetKernel(KernelFunction function, const KernelGrid& grid);
  bool compiled() const { return function_ != nullptr; }
  // Whether Run would call the compiled kernel once on the calling thread
  // whatever the pool: compiled, and the whole extent is one task. Such a
  // kernel may be run by RunInline instead, which is what loops with small
  // bodies do: no virtual call, Status or pool check per step.
  bool RunsInline() const { return function_ != nullptr && extent_ <= grain_; }
  void RunInline(void* const* slots) const;
  // What RunInline calls: function()(buffers, 0, extent()) with buffers[i]
  // the memory of slot arguments()[i] (inputs then outputs). A loop that
  // binds its kernels' buffers once per run calls them through these.
  KernelFunction function() const { return function_; }
  int64_t extent() const { return extent_; }
  const std::vector<int>& arguments() const { return arguments_; }
  // The computation the kernel computes (its parameters are the inputs, its
  // result's leaves the outputs): a loop compiled whole emits it again.
  const Computation* computation() const { return fallback_->computation(); }

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return function_ != nullptr ? "kernel" : "library"; }

 private:
  static constexpr size_t kMaxInlineArguments = 64;
  // The kernel's buffer pointers: in `inline_buffers` (kMaxInlineArguments
  // long) when they fit, else in `heap_buffers`.
  void** BindArguments(void* const* slots, void** inline_buffers, std::vector<void*>& heap_buffers) const;

  std::vector<int> arguments_;  // inputs then outputs: the kernel's buffer order
  KernelFunction function_ = nullptr;
  int64_t extent_ = 1;
  int64_t grain_ = 1;
  std::unique_ptr<LibraryThunk> fallback_;
};

// Whether every thunk of `sequence` is a KernelThunk that RunsInline (and
// thunk profiling is off, so that profiles still see each thunk); then
// RunKernelsInline(sequence, slots) does what sequence.Run does, minus the
// stop checks between thunks.
bool KernelsRunInline(const ThunkSequence& sequence);
void RunKernelsInline(const ThunkSequence& sequence, void* const* slots);

}  // namespace kiln::cpu
