#include "backends/cpu/thunk_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::cpu {
namespace {

struct Entry {
  std::string label;
  int64_t runs = 0;
  double seconds = 0;
};

// Printed and freed at exit; thunks may be gone by then, so entries keep
// their own labels.
class ProfileTable {
 public:
  ~ProfileTable() {
    std::vector<Entry> entries;
    entries.reserve(entries_.size());
    for (const auto& [thunk, entry] : entries_) entries.push_back(entry);
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.seconds > b.seconds; });
    double total = 0;
    for (const Entry& entry : entries) total += entry.seconds;
    std::fprintf(stderr, "kiln cpu profile: %zu thunks, %.3f ms in all\n", entries.size(), total * 1e3);
    constexpr size_t kShown = 25;
    for (size_t i = 0; i < entries.size() && i < kShown; ++i) {
      const Entry& e = entries[i];
      std::fprintf(stderr, "  %5.1f%%  %10.3f ms  %8lld runs  %10.3f us/run  %s\n",
                   total > 0 ? 100 * e.seconds / total : 0.0, e.seconds * 1e3, static_cast<long long>(e.runs),
                   e.seconds / static_cast<double>(e.runs) * 1e6, e.label.c_str());
    }
  }

  void Add(const Thunk& thunk, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& entry = entries_[&thunk];
    if (entry.runs == 0) {
      entry.label = std::string(thunk.kind()) + " " + thunk.name() + " ->";
      for (int slot : thunk.outputs()) entry.label += " " + std::to_string(slot);
    }
    ++entry.runs;
    entry.seconds += seconds;
  }

 private:
  std::mutex mutex_;
  std::map<const Thunk*, Entry> entries_;
};

ProfileTable& Table() {
  static ProfileTable table;
  return table;
}

}  // namespace

bool ThunkProfilingEnabled() {
  static const bool enabled = std::getenv("KILN_CPU_PROFILE") != nullptr;
  return enabled;
}

Status RunProfiled(const ThunkSequence& sequence, ExecutionContext& context) {
  ProfileTable& table = Table();
  for (const auto& thunk : sequence.thunks) {
    KILN_RETURN_IF_ERROR(context.stop->Check());
    const auto start = std::chrono::steady_clock::now();
    Status status = thunk->Run(context);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    table.Add(*thunk, elapsed.count());
    KILN_RETURN_IF_ERROR(status);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
