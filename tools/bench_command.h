// `kiln bench`: compile an HLO module once (timed), upload its inputs once and
// execute it repeatedly with the inputs resident on the device, reporting the
// compile time and per-execute times. Peers are compared by
// benchmarks/compare, which reads the --json form.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "tools/command_line.h"

namespace kiln::tool {

struct BenchReport {
  std::string module_path;
  std::string backend;
  int threads = 0;
  double compile_ms = 0;
  double upload_ms = 0;
  int64_t warmup = 0;
  // Seconds per timed execution, in the order they ran.
  std::vector<double> execute_seconds;
};

// Summary statistics of the timed executions, in microseconds.
struct ExecuteSummary {
  double best_us = 0;
  double median_us = 0;
  double mean_us = 0;
  double worst_us = 0;
};
ExecuteSummary Summarize(const std::vector<double>& execute_seconds);

// Human-readable lines, or one JSON object and a newline.
void PrintBenchReport(const BenchReport& report, bool json, std::ostream& out);

// Runs the benchmark and prints its report to `out`.
Status BenchModule(const BenchArguments& arguments, std::ostream& out);

}  // namespace kiln::tool
