#include "benchmarks/machine/machine_options.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "benchmarks/machine/worker_team.h"

namespace kiln::bench {
namespace {

bool ParsePositive(std::string_view text, int* value) {
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), *value);
  return !text.empty() && parsed.ec == std::errc() && parsed.ptr == text.data() + text.size() &&
         *value >= 1 && *value <= 4096;
}

}  // namespace

std::string ParseMachineOptions(int argc, char** argv, MachineOptions* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") {
      options->json = true;
      continue;
    }
    if ((arg == "--threads" || arg == "--repetitions" || arg == "--array-mib") && i + 1 < argc) {
      std::string_view value = argv[++i];
      if (arg == "--repetitions") {
        if (!ParsePositive(value, &options->repetitions)) return "--repetitions needs a positive count";
        continue;
      }
      if (arg == "--array-mib") {
        if (!ParsePositive(value, &options->array_mib)) return "--array-mib needs a size in MiB (1..4096)";
        continue;
      }
      options->thread_counts.clear();
      while (!value.empty()) {
        const size_t comma = value.find(',');
        int count = 0;
        if (!ParsePositive(value.substr(0, comma), &count)) return "--threads needs counts like 1,2";
        options->thread_counts.push_back(count);
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
      }
      if (options->thread_counts.empty()) return "--threads needs counts like 1,2";
      continue;
    }
    return "unknown or incomplete argument '" + std::string(arg) +
           "'; usage: [--threads N[,N...]] [--repetitions R] [--array-mib M] [--json]";
  }
  if (options->thread_counts.empty()) {
    options->thread_counts.push_back(1);
    if (AvailableCores() > 1) options->thread_counts.push_back(AvailableCores());
  }
  return "";
}

TimeSummary Summarize(std::vector<double> seconds) {
  if (seconds.empty()) return {};
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

}  // namespace kiln::bench
