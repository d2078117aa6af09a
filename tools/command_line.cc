#include "tools/command_line.h"

#include <charconv>
#include <string_view>

namespace kiln::tool {
namespace {

// Reads the value of `--name VALUE` or `--name=VALUE` at args[*i]; returns
// nullopt when args[*i] is not that option.
StatusOr<std::optional<std::string>> OptionValue(std::span<const std::string> args, size_t* i,
                                                 std::string_view name) {
  const std::string_view arg = args[*i];
  if (arg == name) {
    if (*i + 1 >= args.size()) return InvalidArgument("option ", name, " needs a value");
    ++*i;
    return std::optional<std::string>(args[*i]);
  }
  if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
    return std::optional<std::string>(std::string(arg.substr(name.size() + 1)));
  }
  return std::optional<std::string>();
}

StatusOr<CommandLine> ParseRun(std::span<const std::string> args) {
  CommandLine command;
  command.kind = CommandKind::kRun;
  RunArguments& run = command.run;
  std::vector<std::string> positional;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg.empty() || arg[0] != '-' || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") return CommandLine{CommandKind::kHelp, {}};
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> backend, OptionValue(args, &i, "--backend"));
    if (backend) {
      if (backend->empty()) return InvalidArgument("option --backend needs a non-empty name");
      run.backend = *backend;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> input, OptionValue(args, &i, "--input"));
    if (input) {
      run.inputs.push_back(*input);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> output_dir, OptionValue(args, &i, "--output-dir"));
    if (output_dir) {
      if (output_dir->empty()) return InvalidArgument("option --output-dir needs a non-empty path");
      run.output_dir = *output_dir;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::string> seed, OptionValue(args, &i, "--rng-seed"));
    if (seed) {
      const char* end = seed->data() + seed->size();
      const auto parsed = std::from_chars(seed->data(), end, run.rng_seed);
      if (seed->empty() || parsed.ec != std::errc() || parsed.ptr != end) {
        return InvalidArgument("option --rng-seed needs a non-negative integer, got '", *seed, "'");
      }
      continue;
    }
    return InvalidArgument("unknown option '", arg, "' for 'kiln run'");
  }
  if (positional.empty()) return InvalidArgument("'kiln run' needs a MODULE.hlo file");
  if (positional.size() > 1) {
    return InvalidArgument("'kiln run' takes one module file, got '", positional[0], "' and '", positional[1],
                           "' (inputs are given with --input)");
  }
  run.module_path = positional[0];
  return command;
}

}  // namespace

StatusOr<CommandLine> ParseCommandLine(std::span<const std::string> args) {
  if (args.empty()) return InvalidArgument("no command given");
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help") return CommandLine{CommandKind::kHelp, {}};
  if (command == "--version" || command == "version") {
    if (args.size() > 1) return InvalidArgument("'kiln --version' takes no arguments");
    return CommandLine{CommandKind::kVersion, {}};
  }
  if (command == "info") {
    if (args.size() > 1) {
      if (args[1] == "-h" || args[1] == "--help") return CommandLine{CommandKind::kHelp, {}};
      return InvalidArgument("'kiln info' takes no arguments, got '", args[1], "'");
    }
    return CommandLine{CommandKind::kInfo, {}};
  }
  if (command == "run") return ParseRun(args.subspan(1));
  return InvalidArgument("unknown command '", command, "'");
}

const char* UsageText() {
  return "usage: kiln run MODULE.hlo [--backend NAME] [--input FILE.npy]... [--output-dir DIR] [--rng-seed "
         "N]\n"
         "       kiln info\n"
         "       kiln --version\n"
         "       kiln --help\n"
         "\n"
         "commands:\n"
         "  run      compile an HLO text module and run its ENTRY computation once.\n"
         "           Each --input binds the next ENTRY parameter (tuple parameters are\n"
         "           flattened into their array leaves), in order. Each result leaf is\n"
         "           written to DIR/0.npy, DIR/1.npy, ... with --output-dir, or printed.\n"
         "           The default backend is cpu when this build has it, else interpreter.\n"
         "  info     list the backends, their devices and the element types they support.\n"
         "\n"
         "Options may also be written --name=VALUE.\n"
         "Exit status: 0 on success, 1 on an error while running, 2 on a usage error.\n";
}

}  // namespace kiln::tool
