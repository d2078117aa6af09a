#include "backends/cpu/codegen/object_cache.h"

#include <array>
#include <atomic>
#include <cstdio>

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::cpu::codegen {

std::string ObjectCacheKey(const std::string& ir_text, const std::string& triple, const std::string& cpu,
                           const std::string& features, int optimization_level) {
  llvm::SHA256 hash;
  // Each part is length-prefixed so that no two different inputs concatenate
  // to the same byte stream.
  auto add = [&](const std::string& part) {
    const std::string length = std::to_string(part.size()) + ":";
    hash.update(length);
    hash.update(part);
  };
  add(ir_text);
  add(triple);
  add(cpu);
  add(features);
  add(std::to_string(optimization_level));
  add(LLVM_VERSION_STRING);
  const std::array<uint8_t, 32> digest = hash.final();
  std::string key = "kiln-";
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 16; ++i) {
    key += kHex[digest[i] >> 4];
    key += kHex[digest[i] & 15];
  }
  return key;
}

std::string DiskObjectCache::PathOf(const std::string& key) const { return directory_ + "/" + key + ".o"; }

std::unique_ptr<llvm::MemoryBuffer> DiskObjectCache::Load(const std::string& key) {
  auto buffer = llvm::MemoryBuffer::getFile(PathOf(key), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) return nullptr;
  return std::move(*buffer);
}

void DiskObjectCache::Store(const std::string& key, llvm::MemoryBufferRef object) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (llvm::sys::fs::create_directories(directory_)) return;
  // Write a unique temporary file, then rename, so that concurrent processes
  // never read a half-written object.
  static std::atomic<uint64_t> counter{0};
  const std::string temporary = PathOf(key) + ".tmp" + std::to_string(llvm::sys::Process::getProcessId()) +
                                "." + std::to_string(counter.fetch_add(1));
  {
    std::error_code error;
    llvm::raw_fd_ostream out(temporary, error, llvm::sys::fs::OF_None);
    if (error) return;
    out << object.getBuffer();
    out.close();
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return;
    }
  }
  if (llvm::sys::fs::rename(temporary, PathOf(key))) llvm::sys::fs::remove(temporary);
}

}  // namespace kiln::cpu::codegen
