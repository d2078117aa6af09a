#include "backends/vulkan/parallel_compile.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace kiln::vulkan {
namespace {

// More threads than this gain little on a module's kernels and cost memory
// (each SPIRV-Tools optimiser and driver compile holds its own IR).
constexpr int kMaxCompileThreads = 8;

std::atomic<int> compile_threads_for_testing{0};

}  // namespace

Status RunCompileTasks(size_t count, int threads, const std::function<Status(size_t)>& task) {
  std::vector<Status> results(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) results[i] = task(i);
  };
  const size_t helpers = std::min(count, static_cast<size_t>(std::max(threads, 1))) - (count > 0 ? 1 : 0);
  std::vector<std::jthread> pool;
  pool.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) pool.emplace_back(work);
  work();
  pool.clear();  // joins
  for (Status& result : results) {
    if (!result.ok()) return std::move(result);
  }
  return OkStatus();
}

int CompileThreads() {
  if (const int fixed = compile_threads_for_testing.load(); fixed > 0) return fixed;
  const auto hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware, 1, kMaxCompileThreads);
}

void SetCompileThreadsForTesting(int threads) { compile_threads_for_testing.store(std::max(threads, 0)); }

}  // namespace kiln::vulkan
