// Parsing the `kiln` command line into what to do. Usage errors are reported
// as INVALID_ARGUMENT statuses; main turns them into the usage text and exit
// code 2.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace kiln::tool {

struct RunArguments {
  std::string module_path;
  std::string backend;  // empty = the default backend
  std::vector<std::string> inputs;
  std::optional<std::string> output_dir;
  uint64_t rng_seed = 0;
  // Seconds the execution may take before it is stopped; 0 = no limit.
  double timeout_seconds = 0;
};

struct BenchArguments {
  std::string module_path;
  std::string backend;  // empty = the default backend
  std::vector<std::string> inputs;
  // Timed executions; 0 = as many as fit in `min_time_seconds`.
  int64_t iterations = 0;
  int64_t warmup = 2;
  double min_time_seconds = 1.0;
  // Intra-op threads for the compiled module; 0 = the backend's default.
  int threads = 0;
  bool json = false;
  // Where the last execution's results are written, as for `kiln run`.
  std::optional<std::string> output_dir;
};

enum class CommandKind { kHelp, kVersion, kInfo, kRun, kBench };

struct CommandLine {
  CommandKind kind = CommandKind::kHelp;
  RunArguments run;
  BenchArguments bench;
};

// `args` excludes the program name.
StatusOr<CommandLine> ParseCommandLine(std::span<const std::string> args);

// The text `kiln --help` prints.
const char* UsageText();

}  // namespace kiln::tool
