// The ORC LLJIT instance behind a KernelCompiler: host CPU and features,
// Kiln's optimisation pipeline, one JITDylib per compiled program so its code
// is freed with it, and the optional on-disk object cache. Kernels are
// emitted into several modules that are optimised and compiled on parallel
// threads (LLVM's time per kernel dominates compile time), then linked
// together.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/cpu/codegen/object_cache.h"
#include "core/status.h"

namespace kiln::cpu::codegen {

class Jit;

// Code of one added program; removed from the JIT when destroyed.
class JitModule {
 public:
  JitModule(std::shared_ptr<Jit> jit, llvm::orc::JITDylib* dylib) : jit_(std::move(jit)), dylib_(dylib) {}
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

  StatusOr<void*> Lookup(const std::string& name);

 private:
  std::shared_ptr<Jit> jit_;
  llvm::orc::JITDylib* dylib_;
};

// Fills a fresh module (made by Jit::NewModule) with IR. Called on a worker
// thread: it must only read shared state.
using ModuleEmitter = std::function<Status(llvm::Module& module)>;

class Jit : public std::enable_shared_from_this<Jit> {
 public:
  static StatusOr<std::shared_ptr<Jit>> Create(int optimization_level, const std::string& cache_dir);

  // Emits, verifies, optimises and compiles one module per emitter (unless
  // its object is cached), several at once on up to one thread per core,
  // and links them into one JITDylib. `cached_modules` counts the modules
  // whose object came from the cache.
  StatusOr<std::unique_ptr<JitModule>> AddModules(std::span<const ModuleEmitter> emitters,
                                                  int* cached_modules);

  // How many modules are worth compiling at once on this host.
  static int CompileThreads();

  llvm::orc::LLJIT& lljit() { return *jit_; }

 private:
  Jit() = default;

  // Emits and compiles one module to an object file (or loads it from the cache).
  StatusOr<std::unique_ptr<llvm::MemoryBuffer>> BuildObject(const ModuleEmitter& emitter, bool* cache_hit);

  // Target machines are not thread-safe but are costly to create: each
  // compile borrows an idle one (or makes one) and returns it.
  StatusOr<std::unique_ptr<llvm::TargetMachine>> BorrowTargetMachine();
  void ReturnTargetMachine(std::unique_ptr<llvm::TargetMachine> machine);

  int optimization_level_ = 3;
  std::string cpu_, features_, triple_;
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> machine_builder_;
  std::unique_ptr<DiskObjectCache> cache_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex machines_mutex_;
  std::vector<std::unique_ptr<llvm::TargetMachine>> idle_machines_;
};

}  // namespace kiln::cpu::codegen
