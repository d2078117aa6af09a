// The LLVM CPU backend "cpu": one device (the host), buffers in 64-byte
// aligned host memory, programs lowered to thunks (generated kernels, Eigen
// dot and convolution, loops and branches, the interpreter for the rest) and
// run on one intra-op thread pool per backend instance.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/host_memory_pool.h"
#include "backends/cpu/program.h"
#include "backends/cpu/thread_pool.h"
#include "core/backend.h"
#include "core/interpreter/eval_context.h"

namespace kiln::cpu {

class CpuBackend : public Backend {
 public:
  CpuBackend();

  std::string_view name() const override { return "cpu"; }
  std::span<Device* const> devices() const override { return device_list_; }
  bool SupportsElementType(ElementType type) const override;
  std::vector<std::string> UnsupportedOps(const Module& module) const override;
  int64_t max_buffer_bytes() const override;
  // Compiling a module already compiled with the same options returns an
  // executable sharing the cached program.
  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module, const CompileOptions& options) override;
  StatusOr<std::unique_ptr<DeviceBuffer>> BufferFromLiteral(const Literal& literal, Device* device) override;
  Status TransferToInfeed(const Literal& literal) override;
  StatusOr<Literal> TransferFromOutfeed() override;

  // The thread pool, made by the first Compile with its num_threads.
  std::shared_ptr<const IntraOpThreadPool> thread_pool(int requested_threads);

 private:
  StatusOr<std::shared_ptr<const CompiledProgram>> Build(const Module& module, const CompileOptions& options);
  KernelCompiler* CompilerFor(const CompileOptions& options);

  std::unique_ptr<Device> device_;
  std::vector<Device*> device_list_;
  std::shared_ptr<interpreter::HostQueues> queues_;
  std::shared_ptr<HostMemoryPool> memory_;  // buffers, results and temporaries

  std::mutex mutex_;  // guards everything below
  std::shared_ptr<const IntraOpThreadPool> pool_;
  std::map<std::string, std::unique_ptr<KernelCompiler>> compilers_;  // by cache directory
  std::map<std::string, Status> compiler_errors_;
  std::unordered_map<std::string, std::shared_ptr<const CompiledProgram>> cache_;
  std::deque<std::string> cache_order_;  // oldest first, for eviction
};

StatusOr<std::unique_ptr<Backend>> CreateCpuBackend();

// "cpu:0 (AMD EPYC ..., 2 cores)": the host as the device description.
std::string HostDescription();

}  // namespace kiln::cpu
