#include "core/resource_limits.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <thread>

namespace kiln {

int HardwareThreads() {
  const unsigned threads = std::thread::hardware_concurrency();
  return threads == 0 ? 1 : static_cast<int>(std::min<unsigned>(threads, 1u << 20));
}

int MaxThreads() { return std::max(kMinThreadLimit, kThreadsPerHardwareThread * HardwareThreads()); }

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::numeric_limits<int64_t>::max();
  int64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<int64_t>(pages), static_cast<int64_t>(page_size), &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

int64_t MaxFileArrayBytes() { return PhysicalMemoryBytes() / 2; }

Status CheckThreadCount(std::string_view function, std::string_view what, int64_t count) {
  if (count < 0)
    return InvalidArgument(function, ": ", what, " must be >= 0 (0 = one per core), got ", count);
  const int limit = MaxThreads();
  if (count > limit) {
    return InvalidArgument(function, ": ", what, " is ", count, " but at most ", limit,
                           " threads are allowed on this machine (", kThreadsPerHardwareThread,
                           " per hardware thread, it has ", HardwareThreads(), ", and never fewer than ",
                           kMinThreadLimit, "); 0 means one per core");
  }
  return OkStatus();
}

Status CheckCompileOptions(std::string_view function, const CompileOptions& options) {
  if (options.optimization_level < 0 || options.optimization_level > kMaxOptimizationLevel) {
    return InvalidArgument(function, ": optimization_level must be 0..", kMaxOptimizationLevel, ", got ",
                           options.optimization_level);
  }
  return CheckThreadCount(function, "num_threads", options.num_threads);
}

}  // namespace kiln
