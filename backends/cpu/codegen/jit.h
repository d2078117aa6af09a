// The ORC LLJIT instance behind a KernelCompiler: host CPU and features,
// Kiln's optimisation pipeline, one JITDylib per compiled program so its code
// is freed with it, and the optional on-disk object cache. Kernels are
// emitted into several modules that are optimised and compiled on parallel
// threads (LLVM's time per kernel dominates compile time), then linked
// together.
#pragma once

#include <array>
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

#include "backends/cpu/codegen/compile_tier.h"
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

// Fills a fresh module with IR. Called on a worker thread: it must only read
// shared state.
using ModuleEmitter = std::function<Status(llvm::Module& module)>;

// One module to build: its IR and how hard LLVM works on it.
struct ModuleJob {
  ModuleEmitter emit;
  CompileTier tier = CompileTier::kOptimized;
  // A while loop compiled whole (fused_loop.h): optimised with the pipeline
  // that unrolls its kernels' short loops.
  bool fused_loop = false;
  // When set, the IR is written to dump_directory/dump_stem.emitted.ll and
  // .optimized.ll, and the object is compiled even when it is cached.
  std::string dump_directory;
  std::string dump_stem;
};

class Jit : public std::enable_shared_from_this<Jit> {
 public:
  static StatusOr<std::shared_ptr<Jit>> Create(int optimization_level, const std::string& cache_dir);

  // Emits, verifies, optimises and compiles one module per job (unless its
  // object is cached), several at once on up to one thread per core, and
  // links them into one JITDylib. `cached_modules` counts the modules whose
  // object came from the cache.
  StatusOr<std::unique_ptr<JitModule>> AddModules(std::span<const ModuleJob> jobs, int* cached_modules);

  // How many modules are worth compiling at once on this host.
  static int CompileThreads();

  llvm::orc::LLJIT& lljit() { return *jit_; }

 private:
  Jit() = default;

  // Emits and compiles one module to an object file (or loads it from the cache).
  StatusOr<std::unique_ptr<llvm::MemoryBuffer>> BuildObject(const ModuleJob& job, bool* cache_hit);

  // The optimisation level a tier's modules are built at.
  int LevelFor(CompileTier tier) const;

  // Target machines are not thread-safe but are costly to create: each
  // compile borrows an idle one of its level (or makes one) and returns it.
  StatusOr<std::unique_ptr<llvm::TargetMachine>> BorrowTargetMachine(int level);
  void ReturnTargetMachine(int level, std::unique_ptr<llvm::TargetMachine> machine);

  int optimization_level_ = 3;
  std::string cpu_, features_, triple_;
  // The host has AVX-512: kernels are vectorised 16 floats wide (jit.cc).
  bool prefer_512_bit_vectors_ = false;
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> machine_builder_;
  std::unique_ptr<DiskObjectCache> cache_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex machines_mutex_;
  // Idle target machines by optimisation level (0..3).
  std::array<std::vector<std::unique_ptr<llvm::TargetMachine>>, 4> idle_machines_;
};

}  // namespace kiln::cpu::codegen
