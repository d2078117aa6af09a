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

class KernelThunk : public Thunk {
 public:
  // `fallback` computes the same computation with the same slots.
  KernelThunk(std::vector<int> inputs, std::vector<int> outputs, std::unique_ptr<LibraryThunk> fallback);
  void SetKernel(const KernelInfo& info);
  bool compiled() const { return function_ != nullptr; }

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return function_ != nullptr ? "kernel" : "library"; }

 private:
  std::vector<int> arguments_;  // inputs then outputs: the kernel's buffer order
  KernelFunction function_ = nullptr;
  int64_t extent_ = 1;
  int64_t grain_ = 1;
  std::unique_ptr<LibraryThunk> fallback_;
};

}  // namespace kiln::cpu
