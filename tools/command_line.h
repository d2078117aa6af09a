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
};

enum class CommandKind { kHelp, kVersion, kInfo, kRun };

struct CommandLine {
  CommandKind kind = CommandKind::kHelp;
  RunArguments run;
};

// `args` excludes the program name.
StatusOr<CommandLine> ParseCommandLine(std::span<const std::string> args);

// The text `kiln --help` prints.
const char* UsageText();

}  // namespace kiln::tool
