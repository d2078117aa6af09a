// The LLVM CPU backend "cpu": one device (the host), buffers in 64-byte
// aligned host memory, programs lowered to thunks (generated kernels, Eigen
// dot and convolution, loops and branches, the interpreter for the rest) and
// run on one intra-op thread pool per backend instance.
#pragma once

#include <deque>
#include <functional>
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
#include "core/runtime/host_devices.h"

namespace kiln::cpu {

class CpuBackend : public Backend {
 public:
  // `num_devices` host devices (see HostDevices), all sharing one thread pool
  // and memory pool.
  explicit CpuBackend(int num_devices = 1);

  std::string_view name() const override { return "cpu"; }
  std::span<Device* const> devices() const override { return devices_->list(); }
  bool SupportsElementType(ElementType type) const override;
  std::vector<std::string> UnsupportedOps(const Module& module) const override;
  int64_t max_buffer_bytes() const override;
  // Compiling a module already compiled with the same options returns an
  // executable sharing the cached program.
  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module, const CompileOptions& options) override;
  // The same, on the module itself: the passes rewrite it and the program
  // keeps it, with no copy made.
  StatusOr<std::unique_ptr<Executable>> CompileModule(std::unique_ptr<Module> module,
                                                      const CompileOptions& options) override;
  StatusOr<std::unique_ptr<DeviceBuffer>> BufferFromLiteral(const Literal& literal, Device* device) override;
  // Reads `data` in place when it is aligned to its element type (a complex
  // type to its parts) and not PRED (whose bytes the kernels take as 0 or 1
  // only); copies it otherwise.
  StatusOr<std::unique_ptr<DeviceBuffer>> BufferAliasingHost(const Shape& shape, const void* data,
                                                             std::function<void()> release,
                                                             Device* device) override;
  Status TransferToInfeed(const Literal& literal) override;
  StatusOr<Literal> TransferFromOutfeed() override;

  // The thread pool, made by the first Compile with its num_threads.
  std::shared_ptr<const IntraOpThreadPool> thread_pool(int requested_threads);

 private:
  // Checks `module` and finds or builds its program; `take` gives the module
  // to rewrite (a copy, or the module itself), called only when a program
  // is built.
  StatusOr<std::unique_ptr<Executable>> CompileChecked(const Module& module,
                                                       const std::function<std::unique_ptr<Module>()>& take,
                                                       const CompileOptions& options);
  // Optimises and lowers `module`, which the program keeps.
  StatusOr<std::shared_ptr<const CompiledProgram>> Build(std::unique_ptr<Module> module,
                                                         const CompileOptions& options);

  std::shared_ptr<const HostDevices> devices_;
  std::shared_ptr<interpreter::HostQueues> queues_;
  std::shared_ptr<HostMemoryPool> memory_;  // buffers, results and temporaries

  std::mutex mutex_;  // guards pool_
  std::shared_ptr<const IntraOpThreadPool> pool_;
};

// What every CpuBackend of the process shares: the code generators (one JIT
// per object-cache directory) and the in-memory cache of compiled programs.
// A compiled program depends only on the module and the options, never on the
// backend instance, so a second client compiling the same module, or the same
// client after another was destroyed, gets it without invoking LLVM again.
class ProgramCache {
 public:
  // The process's one cache; never destroyed, so that programs still held by
  // executables at exit stay valid.
  static ProgramCache& Get();

  std::shared_ptr<const CompiledProgram> Find(const std::string& key);
  // Keeps `program` under `key` unless another thread stored one first;
  // returns the program stored.
  std::shared_ptr<const CompiledProgram> Insert(const std::string& key,
                                                std::shared_ptr<const CompiledProgram> program);
  // The code generator for `options`' cache directory, or null when LLVM
  // cannot generate code here (every op then takes the library path).
  KernelCompiler* CompilerFor(const std::string& cache_directory, int optimization_level);

 private:
  std::mutex mutex_;                                                  // guards everything below
  std::map<std::string, std::unique_ptr<KernelCompiler>> compilers_;  // by directory and level
  std::map<std::string, Status> compiler_errors_;
  std::unordered_map<std::string, std::shared_ptr<const CompiledProgram>> programs_;
  std::deque<std::string> order_;  // oldest first, for eviction
};

StatusOr<std::unique_ptr<Backend>> CreateCpuBackend(const BackendOptions& options = {});

// "cpu:0 (AMD EPYC ..., 2 cores)": the host as the device description; with
// several devices, "cpu:1 (AMD EPYC ..., 2 cores shared by 4 devices)".
std::string HostDescription(int index = 0, int count = 1);

}  // namespace kiln::cpu
