// The ORC LLJIT instance behind a KernelCompiler: host CPU and features, the
// O0..O3 PassBuilder pipeline (loop and SLP vectorisation from O2), one
// JITDylib per compiled module so its code is freed with it, and the
// optional on-disk object cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/object_cache.h"
#include "core/status.h"

namespace kiln::cpu::codegen {

class Jit;

// Code of one added module; removed from the JIT when destroyed.
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

class Jit : public std::enable_shared_from_this<Jit> {
 public:
  static StatusOr<std::shared_ptr<Jit>> Create(int optimization_level, const std::string& cache_dir);

  // A module whose data layout and triple suit this JIT.
  std::unique_ptr<llvm::Module> NewModule(const std::string& name, llvm::LLVMContext& context) const;

  // Optimises (unless cached), compiles and links `module`. `cache_hit` says
  // whether the object came from the cache.
  StatusOr<std::unique_ptr<JitModule>> Add(std::unique_ptr<llvm::Module> module,
                                           std::unique_ptr<llvm::LLVMContext> context, bool* cache_hit);

  llvm::orc::LLJIT& lljit() { return *jit_; }

 private:
  Jit() = default;

  int optimization_level_ = 3;
  std::string cpu_, features_, triple_;
  std::unique_ptr<DiskObjectCache> cache_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace kiln::cpu::codegen
