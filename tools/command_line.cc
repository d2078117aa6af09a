#include "tools/command_line.h"

#include <charconv>
#include <string_view>
#include <vector>

#include "core/resource_limits.h"
#include "tools/module_loading.h"

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

// Parses a decimal integer option value in [minimum, maximum].
StatusOr<int64_t> IntegerValue(std::string_view option, const std::string& text, int64_t minimum,
                               int64_t maximum, std::string_view what) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != end || value < minimum || value > maximum) {
    return InvalidArgument("option ", option, " needs ", what, ", got '", text, "'");
  }
  return value;
}

// Splits arguments into options (handled by `take_option`, which returns
// false for an option it does not know) and positional arguments; exactly one
// positional argument, the module file, is expected.
template <typename TakeOption>
StatusOr<std::string> ParseModuleCommand(std::span<const std::string> args, std::string_view command_name,
                                         bool* help, TakeOption take_option) {
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
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return std::string();
    }
    KILN_ASSIGN_OR_RETURN(bool taken, take_option(args, &i));
    if (!taken) return InvalidArgument("unknown option '", arg, "' for 'kiln ", command_name, "'");
  }
  if (positional.empty()) return InvalidArgument("'kiln ", command_name, "' needs a MODULE.hlo file");
  if (positional.size() > 1) {
    return InvalidArgument("'kiln ", command_name, "' takes one module file, got '", positional[0], "' and '",
                           positional[1], "' (inputs are given with --input)");
  }
  return positional[0];
}

// The options `kiln run` and `kiln bench` share.
StatusOr<bool> TakeSharedOption(std::span<const std::string> args, size_t* i, std::string* backend,
                                std::vector<std::string>* inputs, std::optional<std::string>* output_dir) {
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> backend_name, OptionValue(args, i, "--backend"));
  if (backend_name) {
    if (backend_name->empty()) return InvalidArgument("option --backend needs a non-empty name");
    *backend = *backend_name;
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> input, OptionValue(args, i, "--input"));
  if (input) {
    inputs->push_back(*input);
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> directory, OptionValue(args, i, "--output-dir"));
  if (directory) {
    if (directory->empty()) return InvalidArgument("option --output-dir needs a non-empty path");
    *output_dir = *directory;
    return true;
  }
  return false;
}

StatusOr<CommandLine> ParseRun(std::span<const std::string> args) {
  CommandLine command;
  command.kind = CommandKind::kRun;
  RunArguments& run = command.run;
  bool help = false;
  KILN_ASSIGN_OR_RETURN(
      run.module_path,
      ParseModuleCommand(
          args, "run", &help, [&](std::span<const std::string> all, size_t* i) -> StatusOr<bool> {
            KILN_ASSIGN_OR_RETURN(bool shared,
                                  TakeSharedOption(all, i, &run.backend, &run.inputs, &run.output_dir));
            if (shared) return true;
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> seed, OptionValue(all, i, "--rng-seed"));
            if (seed) {
              const char* end = seed->data() + seed->size();
              const auto parsed = std::from_chars(seed->data(), end, run.rng_seed);
              if (seed->empty() || parsed.ec != std::errc() || parsed.ptr != end) {
                return InvalidArgument("option --rng-seed needs a non-negative integer, got '", *seed, "'");
              }
              return true;
            }
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> timeout, OptionValue(all, i, "--timeout"));
            if (timeout) {
              const char* end = timeout->data() + timeout->size();
              const auto parsed = std::from_chars(timeout->data(), end, run.timeout_seconds);
              // Up to a year: longer is no limit in practice and would overflow the clock in nanoseconds.
              if (timeout->empty() || parsed.ec != std::errc() || parsed.ptr != end ||
                  !(run.timeout_seconds > 0) || run.timeout_seconds > 3.2e7) {
                return InvalidArgument("option --timeout needs a positive number of seconds, got '", *timeout,
                                       "'");
              }
              return true;
            }
            return false;
          }));
  if (help) return CommandLine{CommandKind::kHelp, {}, {}};
  return command;
}

StatusOr<CommandLine> ParseBench(std::span<const std::string> args) {
  CommandLine command;
  command.kind = CommandKind::kBench;
  BenchArguments& bench = command.bench;
  constexpr int64_t kMaxCount = int64_t{1} << 40;
  bool help = false;
  KILN_ASSIGN_OR_RETURN(
      bench.module_path,
      ParseModuleCommand(
          args, "bench", &help, [&](std::span<const std::string> all, size_t* i) -> StatusOr<bool> {
            KILN_ASSIGN_OR_RETURN(bool shared,
                                  TakeSharedOption(all, i, &bench.backend, &bench.inputs, &bench.output_dir));
            if (shared) return true;
            if (all[*i] == "--json") {
              bench.json = true;
              return true;
            }
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> iterations, OptionValue(all, i, "--iterations"));
            if (iterations) {
              KILN_ASSIGN_OR_RETURN(bench.iterations, IntegerValue("--iterations", *iterations, 1, kMaxCount,
                                                                   "a positive integer"));
              return true;
            }
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> warmup, OptionValue(all, i, "--warmup"));
            if (warmup) {
              KILN_ASSIGN_OR_RETURN(
                  bench.warmup, IntegerValue("--warmup", *warmup, 0, kMaxCount, "a non-negative integer"));
              return true;
            }
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> threads, OptionValue(all, i, "--threads"));
            if (threads) {
              KILN_ASSIGN_OR_RETURN(int64_t count, IntegerValue("--threads", *threads, 0, INT32_MAX,
                                                                "a thread count (0 = default)"));
              KILN_RETURN_IF_ERROR(CheckThreadCount("option --threads", "the thread count", count));
              bench.threads = static_cast<int>(count);
              return true;
            }
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> min_time, OptionValue(all, i, "--min-time"));
            if (min_time) {
              double seconds = 0;
              const char* end = min_time->data() + min_time->size();
              const auto parsed = std::from_chars(min_time->data(), end, seconds);
              if (min_time->empty() || parsed.ec != std::errc() || parsed.ptr != end || !(seconds >= 0) ||
                  seconds > 1e6) {
                return InvalidArgument("option --min-time needs a number of seconds, got '", *min_time, "'");
              }
              bench.min_time_seconds = seconds;
              return true;
            }
            return false;
          }));
  if (help) return CommandLine{CommandKind::kHelp, {}, {}};
  return command;
}

}  // namespace

StatusOr<CommandLine> ParseCommandLine(std::span<const std::string> args) {
  if (args.empty()) return InvalidArgument("no command given");
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help")
    return CommandLine{CommandKind::kHelp, {}, {}};
  if (command == "--version" || command == "version") {
    if (args.size() > 1) return InvalidArgument("'kiln --version' takes no arguments");
    return CommandLine{CommandKind::kVersion, {}, {}};
  }
  if (command == "info") {
    if (args.size() > 1) {
      if (args[1] == "-h" || args[1] == "--help") return CommandLine{CommandKind::kHelp, {}, {}};
      return InvalidArgument("'kiln info' takes no arguments, got '", args[1], "'");
    }
    return CommandLine{CommandKind::kInfo, {}, {}};
  }
  if (command == "run") return ParseRun(args.subspan(1));
  if (command == "bench") return ParseBench(args.subspan(1));
  return InvalidArgument("unknown command '", command, "'");
}

// The figures the usage text gives for the limits.
static_assert(kMaxModuleTextBytes == size_t{256} << 20 && kThreadsPerHardwareThread == 4 &&
                  kMinThreadLimit == 16,
              "update the limits in UsageText");

const char* UsageText() {
  return "usage: kiln run MODULE.hlo [--backend NAME] [--input FILE.npy]... [--output-dir DIR] [--rng-seed "
         "N]\n"
         "                [--timeout SECONDS]\n"
         "       kiln bench MODULE.hlo [--backend NAME] [--input FILE.npy]... [--iterations N] [--warmup N]\n"
         "                  [--min-time SECONDS] [--threads N] [--json] [--output-dir DIR]\n"
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
         "           --timeout stops an execution that runs longer (a while loop that\n"
         "           does not end): exit status 1, DEADLINE_EXCEEDED naming the loop.\n"
         "  bench    compile a module (timing the compile), upload the inputs once and\n"
         "           execute repeatedly with them resident: --warmup untimed runs (2),\n"
         "           then --iterations timed runs, or as many as fill --min-time (1 s).\n"
         "           Prints compile milliseconds and the best, median and mean\n"
         "           microseconds per execute (one JSON object with --json). --threads\n"
         "           sets the intra-op threads (0 = one per core); --output-dir writes\n"
         "           the last execution's results.\n"
         "  info     list the backends, their devices and the element types they support.\n"
         "\n"
         "Options may also be written --name=VALUE.\n"
         "Limits: a module has at most 256 MiB of HLO text; each --input must declare its\n"
         "parameter's element type and shape in its header, which is checked before any\n"
         "data is read; --threads is at most 4 per hardware thread (never below 16).\n"
         "Exit status: 0 on success, 1 on an error while running, 2 on a usage error.\n";
}

}  // namespace kiln::tool
