#include "backends/vulkan/disk_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

namespace kiln::vulkan {
namespace {

namespace fs = std::filesystem;

// A file: magic, key bytes, payload bytes, checksum of key and payload (all
// little-endian u64 after the magic), then the key and the payload.
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'V', 'K', 'C', '1'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 3 * sizeof(uint64_t);
constexpr std::string_view kSuffix = ".kvc";

std::span<const std::byte> Bytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

uint64_t Checksum(std::string_view key, std::span<const std::byte> payload) {
  return Fnv1a64(payload, Fnv1a64(Bytes(key)));
}

void PutU64(std::vector<std::byte>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}

uint64_t GetU64(const std::byte* at) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(at[i]) << (8 * i);
  return value;
}

std::optional<std::vector<std::byte>> ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  in.seekg(0);
  std::vector<std::byte> bytes(static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) return std::nullopt;
  return bytes;
}

bool IsCacheFile(const fs::directory_entry& entry) {
  std::error_code error;
  return entry.is_regular_file(error) && entry.path().extension() == kSuffix;
}

}  // namespace

uint64_t Fnv1a64(std::span<const std::byte> bytes, uint64_t seed) {
  uint64_t hash = seed;
  for (std::byte b : bytes) {
    hash ^= static_cast<uint64_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string Hex64(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) text[static_cast<size_t>(i)] = kDigits[value & 15];
  return text;
}

void CacheDebugMessage(const std::string& message) {
  static const bool enabled = [] {
    const char* value = std::getenv("KILN_VULKAN_CACHE_LOG");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  if (enabled) std::fprintf(stderr, "kiln vulkan cache: %s\n", message.c_str());
}

uint64_t DiskCacheBoundFromEnvironment() {
  const char* value = std::getenv("KILN_VULKAN_CACHE_MAX_BYTES");
  if (value == nullptr || *value == '\0') return kDefaultDiskCacheBytes;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(value, &end, 10);
  if (*end != '\0' || bytes == 0) {
    CacheDebugMessage("KILN_VULKAN_CACHE_MAX_BYTES=" + std::string(value) +
                      " is not a positive number of bytes; using the default");
    return kDefaultDiskCacheBytes;
  }
  return bytes;
}

DiskCache::DiskCache(fs::path directory, uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

fs::path DiskCache::PathOf(std::string_view key) const {
  // Two differently seeded hashes: 128 bits of name.
  const std::string name = Hex64(Fnv1a64(Bytes(key))) + Hex64(Fnv1a64(Bytes(key), 0x84222325cbf29ce4ull));
  return directory_ / (name + std::string(kSuffix));
}

std::optional<std::vector<std::byte>> DiskCache::Load(std::string_view key) {
  const fs::path path = PathOf(key);
  auto count = [this](uint64_t Stats::* counter) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++(stats_.*counter);
  };
  std::error_code error;
  if (!fs::exists(path, error)) {
    count(&Stats::misses);
    return std::nullopt;
  }
  auto ignore = [&](const std::string& why) -> std::optional<std::vector<std::byte>> {
    CacheDebugMessage("ignoring " + path.string() + ": " + why);
    count(&Stats::ignored);
    return std::nullopt;
  };
  std::optional<std::vector<std::byte>> file = ReadWholeFile(path);
  if (!file) return ignore("it cannot be read");
  if (file->size() < kHeaderBytes || std::memcmp(file->data(), kMagic, sizeof(kMagic)) != 0)
    return ignore("it is not a Kiln cache file");
  const uint64_t key_bytes = GetU64(file->data() + 8);
  const uint64_t payload_bytes = GetU64(file->data() + 16);
  const uint64_t checksum = GetU64(file->data() + 24);
  if (key_bytes > file->size() || payload_bytes > file->size() ||
      kHeaderBytes + key_bytes + payload_bytes != file->size())
    return ignore("its lengths do not match its size (truncated?)");
  const std::string_view stored_key(reinterpret_cast<const char*>(file->data() + kHeaderBytes), key_bytes);
  const std::span<const std::byte> payload(file->data() + kHeaderBytes + key_bytes, payload_bytes);
  if (Checksum(stored_key, payload) != checksum) return ignore("its checksum does not match (corrupt)");
  if (stored_key != key) return ignore("it holds another key (another device, driver or Kiln version?)");
  fs::last_write_time(path, fs::file_time_type::clock::now(), error);  // recently used
  count(&Stats::hits);
  return std::vector<std::byte>(payload.begin(), payload.end());
}

void DiskCache::Store(std::string_view key, std::span<const std::byte> payload) {
  const fs::path path = PathOf(key);
  std::vector<std::byte> file;
  file.reserve(kHeaderBytes + key.size() + payload.size());
  for (char c : kMagic) file.push_back(static_cast<std::byte>(c));
  PutU64(file, key.size());
  PutU64(file, payload.size());
  PutU64(file, Checksum(key, payload));
  const std::span<const std::byte> key_bytes = Bytes(key);
  file.insert(file.end(), key_bytes.begin(), key_bytes.end());
  file.insert(file.end(), payload.begin(), payload.end());
  if (file.size() > max_bytes_ / 2) {
    CacheDebugMessage("not storing " + path.string() + ": " + std::to_string(file.size()) +
                      " bytes exceed half the bound of " + std::to_string(max_bytes_));
    return;
  }

  const std::lock_guard<std::mutex> lock(mutex_);
  std::error_code error;
  fs::create_directories(directory_, error);
  if (error) {
    CacheDebugMessage("cannot create " + directory_.string() + ": " + error.message());
    return;
  }
  // A name no other writer uses (process id, counter), renamed into place.
  static std::atomic<uint64_t> counter{0};
  fs::path temporary = path;
  temporary += ".tmp" + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
    out.close();
    if (!out) {
      CacheDebugMessage("cannot write " + temporary.string());
      fs::remove(temporary, error);
      return;
    }
  }
  fs::rename(temporary, path, error);
  if (error) {
    CacheDebugMessage("cannot rename " + temporary.string() + " to " + path.string() + ": " +
                      error.message());
    fs::remove(temporary, error);
    return;
  }
  ++stats_.stores;
  // The directory is scanned on the first store and when the running total
  // (which counts a replaced file twice, erring towards a scan) passes the
  // bound; other processes' stores are seen at those scans.
  if (estimated_bytes_ && *estimated_bytes_ + file.size() <= max_bytes_) {
    *estimated_bytes_ += file.size();
    return;
  }
  Evict();
}

void DiskCache::Evict() {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (fs::directory_iterator it(directory_, error), end; !error && it != end; it.increment(error)) {
    if (!IsCacheFile(*it)) continue;
    std::error_code entry_error;
    const uint64_t bytes = it->file_size(entry_error);
    const fs::file_time_type used = it->last_write_time(entry_error);
    if (entry_error) continue;  // another process removed it
    entries.push_back({it->path(), bytes, used});
    total += bytes;
  }
  estimated_bytes_ = total;
  if (total <= max_bytes_) return;
  // Down to three quarters, so that the next stores do not each scan again.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= max_bytes_ / 4 * 3) break;
    if (fs::remove(entry.path, error)) ++stats_.evicted;
    total -= entry.bytes;
  }
  estimated_bytes_ = total;
}

DiskCache::Stats DiskCache::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kiln::vulkan
