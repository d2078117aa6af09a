// A directory of compiled object files, keyed by a hash of everything that
// determines the machine code: the kernel module's IR text, the target
// triple, CPU, features, optimisation level and LLVM version. A hit skips
// both the optimisation pipeline and code generation.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <llvm/Support/MemoryBuffer.h>

namespace kiln::cpu::codegen {

// The cache key of a module.
std::string ObjectCacheKey(const std::string& ir_text, const std::string& triple, const std::string& cpu,
                           const std::string& features, int optimization_level);

class DiskObjectCache {
 public:
  explicit DiskObjectCache(std::string directory) : directory_(std::move(directory)) {}

  // The cached object of `key`, or null.
  std::unique_ptr<llvm::MemoryBuffer> Load(const std::string& key);

  // Writes `object` under `key`. A cache that cannot be written only makes
  // later compiles slower, so failures are ignored.
  void Store(const std::string& key, llvm::MemoryBufferRef object);

 private:
  std::string PathOf(const std::string& key) const;

  std::string directory_;
  std::mutex mutex_;  // serialises writers within this process
};

}  // namespace kiln::cpu::codegen
