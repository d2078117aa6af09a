// Files in a cache directory that outlive the process: each holds one
// payload under a key (any bytes). A file names a hash of its key and holds
// the key itself, the payload's length and a checksum, so that a file that
// is truncated, corrupt or another key's (a hash collision, a file from
// another program) reads as a miss, never as wrong data. Writes go to a
// temporary file renamed into place, so that readers in other processes
// never see half a file. The directory's cache files are kept under a size
// bound by removing the least recently used. Nothing here fails a compile:
// a cache that cannot be read or written only makes compiles slower, and
// says why on stderr when KILN_VULKAN_CACHE_LOG=1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::vulkan {

// The bound when KILN_VULKAN_CACHE_MAX_BYTES does not set one.
inline constexpr uint64_t kDefaultDiskCacheBytes = uint64_t{256} << 20;

class DiskCache {
 public:
  // Files go into `directory` (created on the first store); `max_bytes`
  // bounds the bytes of all cache files there.
  DiskCache(std::filesystem::path directory, uint64_t max_bytes);

  // The payload stored under `key`, or nothing (missing, unreadable, corrupt
  // or another key's: each but the first with a debug message). A hit marks
  // the file as recently used. Thread-safe.
  std::optional<std::vector<std::byte>> Load(std::string_view key);

  // Stores `payload` under `key`, replacing what was there, then removes the
  // least recently used files while the directory holds more than the bound.
  // Thread-safe; processes may store at once.
  void Store(std::string_view key, std::span<const std::byte> payload);

  // The file a key is stored in (tests corrupt it).
  std::filesystem::path PathOf(std::string_view key) const;
  const std::filesystem::path& directory() const { return directory_; }

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;   // no file
    uint64_t ignored = 0;  // a file that was unreadable, corrupt or another key's
    uint64_t stores = 0;
    uint64_t evicted = 0;  // files removed to stay under the bound
  };
  Stats stats() const;

 private:
  // Scans the directory; removes the least recently used files down to
  // three quarters of the bound when it holds more than the bound.
  void Evict();

  std::filesystem::path directory_;
  uint64_t max_bytes_;
  mutable std::mutex mutex_;
  Stats stats_;
  std::optional<uint64_t> estimated_bytes_;  // of the directory's cache files, once scanned
};

// The cache bound: KILN_VULKAN_CACHE_MAX_BYTES when it is a positive number,
// else kDefaultDiskCacheBytes.
uint64_t DiskCacheBoundFromEnvironment();

// Prints "kiln vulkan cache: MESSAGE" on stderr when KILN_VULKAN_CACHE_LOG=1.
void CacheDebugMessage(const std::string& message);

// A 64-bit FNV-1a hash, as 16 hex digits (file names and checksums; the
// files hold their whole key, so a collision is a miss, not a wrong hit).
uint64_t Fnv1a64(std::span<const std::byte> bytes, uint64_t seed = 0xcbf29ce484222325ull);
std::string Hex64(uint64_t value);

}  // namespace kiln::vulkan
