// The command line shared by the machine measurements:
//   PROGRAM [--threads N[,N...]] [--repetitions R] [--array-mib M] [--json]
// and the statistics they report.
#pragma once

#include <string>
#include <vector>

namespace kiln::bench {

struct MachineOptions {
  // Thread counts to measure, in order; default 1 and every available core.
  std::vector<int> thread_counts;
  int repetitions = 0;  // 0 = the program's default
  int array_mib = 0;    // size of each array streamed; 0 = the program's default
  bool json = false;
};

// Returns an error message, or an empty string on success.
std::string ParseMachineOptions(int argc, char** argv, MachineOptions* options);

// Best (smallest) and median of a list of seconds.
struct TimeSummary {
  double best = 0;
  double median = 0;
};
TimeSummary Summarize(std::vector<double> seconds);

}  // namespace kiln::bench
