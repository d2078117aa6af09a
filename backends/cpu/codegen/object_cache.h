// A directory of compiled object files, keyed by a hash of everything that
// determines the machine code: the kernel module's IR text, the target
// triple, CPU, features, optimisation level and LLVM version. A hit skips
// both the optimisation pipeline and code generation.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/Support/MemoryBuffer.h>

namespace kiln::cpu::codegen {

// The cache key of a module; also used as its module identifier, which is
// how LLVM's compile layer names it to ObjectCache::notifyObjectCompiled.
std::string ObjectCacheKey(const std::string& ir_text, const std::string& triple, const std::string& cpu,
                           const std::string& features, int optimization_level);

class DiskObjectCache : public llvm::ObjectCache {
 public:
  explicit DiskObjectCache(std::string directory) : directory_(std::move(directory)) {}

  // The cached object of `key`, or null.
  std::unique_ptr<llvm::MemoryBuffer> Load(const std::string& key);

  // Called by the JIT after compiling a module whose identifier is its key.
  void notifyObjectCompiled(const llvm::Module* module, llvm::MemoryBufferRef object) override;
  // Lookups happen in Load, before optimisation; the JIT's own query misses.
  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module*) override { return nullptr; }

 private:
  std::string PathOf(const std::string& key) const;

  std::string directory_;
  std::mutex mutex_;  // serialises writers within this process
};

}  // namespace kiln::cpu::codegen
