// The frame of every Kiln GPU kernel: `void name(ptr b0, ..., ptr bN-1, i64
// extent)`, one thread per parallel iteration (block * blockDim + thread),
// threads at or past `extent` doing nothing; marked a kernel for NVPTX.
#pragma once

#include <memory>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace kiln::cuda {

struct GpuEntry {
  llvm::Function* function = nullptr;
  llvm::BasicBlock* entry_block = nullptr;  // holds allocas
  llvm::BasicBlock* done = nullptr;
  llvm::Value* thread = nullptr;               // this thread's iteration, i64
  std::unique_ptr<llvm::IRBuilder<>> builder;  // inside the iteration's body
};

// Starts the entry; the builder is left where iteration `thread` runs.
// `extra_i64_params` more i64 parameters follow `extent` (an rng kernel's
// key).
GpuEntry BeginGpuEntry(llvm::Module& module, const std::string& name, int buffer_count,
                       int extra_i64_params = 0);
// Ends the iteration's body (from wherever the builder is) and returns.
void FinishGpuEntry(GpuEntry& entry);

// Marks `function` a kernel of `module` for NVPTX, of at most
// kThreadsPerBlock threads per block (BeginGpuEntry does it for its own).
void MarkGpuKernel(llvm::Module& module, llvm::Function& function);

}  // namespace kiln::cuda
