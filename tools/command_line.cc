#include "tools/command_line.h"

#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "core/resource_limits.h"
#include "tools/compile_command.h"
#include "tools/grad_command.h"
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

// Parses a decimal unsigned 64-bit option value.
StatusOr<uint64_t> UnsignedValue(std::string_view option, const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != end) {
    return InvalidArgument("option ", option, " needs a non-negative integer, got '", text, "'");
  }
  return value;
}

// Parses a finite, non-negative number (a tolerance).
StatusOr<double> ToleranceValue(std::string_view option, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != end || !(value >= 0) || value > 1e300) {
    return InvalidArgument("option ", option, " needs a non-negative number, got '", text, "'");
  }
  return value;
}

// A directory option's value, which must not be empty.
StatusOr<std::optional<std::string>> DirectoryValue(std::span<const std::string> args, size_t* i,
                                                    std::string_view name) {
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> value, OptionValue(args, i, name));
  if (value && value->empty()) return InvalidArgument("option ", name, " needs a non-empty path");
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

// The flag of CompileOptions::allow_unsafe_nan_math, in run and bench.
constexpr std::string_view kAllowUnsafeNanMath = "--allow-unsafe-nan-math";

// The options of `kiln run` beyond the shared ones; returns false for an
// option it does not know.
StatusOr<bool> TakeRunOption(std::span<const std::string> args, size_t* i, RunArguments& run,
                             bool* seed_given) {
  const std::string& arg = args[*i];
  if (arg == "--random-inputs") {
    run.random_inputs = true;
    return true;
  }
  if (arg == kAllowUnsafeNanMath) {
    run.allow_unsafe_nan_math = true;
    return true;
  }
  if (arg == "--progress") {
    run.progress = true;
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> rng_seed, OptionValue(args, i, "--rng-seed"));
  if (rng_seed) {
    KILN_ASSIGN_OR_RETURN(run.rng_seed, UnsignedValue("--rng-seed", *rng_seed));
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> seed, OptionValue(args, i, "--seed"));
  if (seed) {
    KILN_ASSIGN_OR_RETURN(run.input_seed, UnsignedValue("--seed", *seed));
    *seed_given = true;
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> compare, OptionValue(args, i, "--compare-with"));
  if (compare) {
    if (compare->empty()) return InvalidArgument("option --compare-with needs a backend name");
    run.compare_backend = *compare;
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> expect, DirectoryValue(args, i, "--expect"));
  if (expect) {
    run.expect_dir = *expect;
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> rtol, OptionValue(args, i, "--rtol"));
  if (rtol) {
    KILN_ASSIGN_OR_RETURN(run.rtol, ToleranceValue("--rtol", *rtol));
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> atol, OptionValue(args, i, "--atol"));
  if (atol) {
    KILN_ASSIGN_OR_RETURN(run.atol, ToleranceValue("--atol", *atol));
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> timeout, OptionValue(args, i, "--timeout"));
  if (timeout) {
    const char* end = timeout->data() + timeout->size();
    const auto parsed = std::from_chars(timeout->data(), end, run.timeout_seconds);
    // Up to a year: longer is no limit in practice and would overflow the clock in nanoseconds.
    if (timeout->empty() || parsed.ec != std::errc() || parsed.ptr != end || !(run.timeout_seconds > 0) ||
        run.timeout_seconds > 3.2e7) {
      return InvalidArgument("option --timeout needs a positive number of seconds, got '", *timeout, "'");
    }
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> dump_hlo, DirectoryValue(args, i, "--dump-hlo"));
  if (dump_hlo) {
    run.dump_hlo_dir = *dump_hlo;
    return true;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> dump_ir, DirectoryValue(args, i, "--dump-ir"));
  if (dump_ir) {
    run.dump_ir_dir = *dump_ir;
    return true;
  }
  return false;
}

StatusOr<CommandLine> ParseRun(std::span<const std::string> args) {
  CommandLine command;
  command.kind = CommandKind::kRun;
  RunArguments& run = command.run;
  bool help = false;
  bool seed_given = false;
  KILN_ASSIGN_OR_RETURN(
      run.module_path,
      ParseModuleCommand(
          args, "run", &help, [&](std::span<const std::string> all, size_t* i) -> StatusOr<bool> {
            KILN_ASSIGN_OR_RETURN(bool shared,
                                  TakeSharedOption(all, i, &run.backend, &run.inputs, &run.output_dir));
            if (shared) return true;
            return TakeRunOption(all, i, run, &seed_given);
          }));
  if (help) return CommandLine{CommandKind::kHelp, RunHelpText(), {}, {}, {}, {}, {}};
  if (run.random_inputs && !run.inputs.empty()) {
    return InvalidArgument(
        "--random-inputs and --input cannot be combined: the random values replace the files");
  }
  if (seed_given && !run.random_inputs) {
    return InvalidArgument(
        "--seed sets the values of --random-inputs, which is not given (the rng ops' seed is "
        "--rng-seed)");
  }
  if ((run.rtol || run.atol) && run.compare_backend.empty() && !run.expect_dir) {
    return InvalidArgument(
        "--rtol and --atol set the tolerance of --compare-with and --expect, and neither is given");
  }
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
            if (all[*i] == kAllowUnsafeNanMath) {
              bench.allow_unsafe_nan_math = true;
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
  if (help) return CommandLine{CommandKind::kHelp, BenchHelpText(), {}, {}, {}, {}, {}};
  return command;
}

// `kiln compile`: the combination of --backend, --emit and --target is
// checked here, so that a wrong one is a usage error before anything is read.
StatusOr<CommandLine> ParseCompile(std::span<const std::string> args) {
  CommandLine command;
  command.kind = CommandKind::kCompile;
  CompileArguments& compile = command.compile;
  bool help = false;
  KILN_ASSIGN_OR_RETURN(
      compile.module_path,
      ParseModuleCommand(
          args, "compile", &help, [&](std::span<const std::string> all, size_t* i) -> StatusOr<bool> {
            const std::pair<const char*, std::string*> options[] = {{"--backend", &compile.backend},
                                                                    {"--emit", &compile.emit},
                                                                    {"--target", &compile.target},
                                                                    {"--output-dir", &compile.output_dir}};
            for (const auto& [name, value] : options) {
              KILN_ASSIGN_OR_RETURN(std::optional<std::string> given, OptionValue(all, i, name));
              if (!given) continue;
              if (given->empty()) return InvalidArgument("option ", name, " needs a non-empty value");
              *value = *given;
              return true;
            }
            return false;
          }));
  if (help) return CommandLine{CommandKind::kHelp, CompileHelpText(), {}, {}, {}, {}, {}};
  if (compile.emit.empty()) return InvalidArgument("'kiln compile' needs --emit, what to write (ptx)");
  if (compile.emit != "ptx")
    return InvalidArgument("option --emit accepts only 'ptx', got '", compile.emit, "'");
  if (compile.backend != "cuda") {
    return InvalidArgument("--emit ptx needs --backend cuda",
                           compile.backend.empty() ? "" : ", got '" + compile.backend + "'");
  }
  if (compile.target.empty()) {
    return InvalidArgument("--emit ptx needs --target, the GPU to compile for (e.g. sm_80)");
  }
  KILN_RETURN_IF_ERROR(CheckPtxTargetName(compile.target));
  return command;
}

// `kiln grad`: both --wrt and --output are required.
StatusOr<CommandLine> ParseGrad(std::span<const std::string> args) {
  CommandLine command;
  command.kind = CommandKind::kGrad;
  GradArguments& grad = command.grad;
  bool help = false;
  bool wrt_given = false;
  KILN_ASSIGN_OR_RETURN(
      grad.module_path,
      ParseModuleCommand(
          args, "grad", &help, [&](std::span<const std::string> all, size_t* i) -> StatusOr<bool> {
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> wrt, OptionValue(all, i, "--wrt"));
            if (wrt) {
              KILN_ASSIGN_OR_RETURN(std::vector<int64_t> numbers, ParseParameterList(*wrt));
              grad.wrt.insert(grad.wrt.end(), numbers.begin(), numbers.end());
              wrt_given = true;
              return true;
            }
            KILN_ASSIGN_OR_RETURN(std::optional<std::string> output, OptionValue(all, i, "--output"));
            if (output) {
              if (output->empty()) return InvalidArgument("option --output needs a non-empty path");
              grad.output_path = *output;
              return true;
            }
            return false;
          }));
  if (help) return CommandLine{CommandKind::kHelp, GradHelpText(), {}, {}, {}, {}, {}};
  if (!wrt_given)
    return InvalidArgument("'kiln grad' needs --wrt, the parameters to differentiate (e.g. 0,1)");
  if (grad.output_path.empty()) return InvalidArgument("'kiln grad' needs --output, the file to write");
  return command;
}

}  // namespace

StatusOr<CommandLine> ParseCommandLine(std::span<const std::string> args) {
  if (args.empty()) return InvalidArgument("no command given");
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help")
    return CommandLine{CommandKind::kHelp, UsageText(), {}, {}, {}, {}, {}};
  if (command == "--version" || command == "version") {
    if (args.size() > 1) return InvalidArgument("'kiln --version' takes no arguments");
    return CommandLine{CommandKind::kVersion, nullptr, {}, {}, {}, {}, {}};
  }
  if (command == "info") {
    CommandLine line{CommandKind::kInfo, nullptr, {}, {}, {}, {}, {}};
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "-h" || args[i] == "--help")
        return CommandLine{CommandKind::kHelp, InfoHelpText(), {}, {}, {}, {}, {}};
      if (args[i] == "--ops") {
        line.info.ops = true;
      } else if (args[i] == "--plugin" && i + 1 < args.size()) {
        line.info.plugins.push_back(args[++i]);
      } else if (args[i].rfind("--plugin=", 0) == 0) {
        line.info.plugins.push_back(args[i].substr(9));
      } else {
        return InvalidArgument("'kiln info' takes no arguments other than --ops and --plugin LIB, got '",
                               args[i], "'");
      }
    }
    if (!line.info.plugins.empty() && !line.info.ops) return InvalidArgument("--plugin goes with --ops");
    return line;
  }
  if (command == "run") return ParseRun(args.subspan(1));
  if (command == "bench") return ParseBench(args.subspan(1));
  if (command == "compile") return ParseCompile(args.subspan(1));
  if (command == "grad") return ParseGrad(args.subspan(1));
  return InvalidArgument("unknown command '", command, "'");
}

// The figures the usage text gives for the limits.
static_assert(kMaxModuleTextBytes == size_t{256} << 20 && kThreadsPerHardwareThread == 4 &&
                  kMinThreadLimit == 16,
              "update the limits in BenchHelpText and RunHelpText");

// The usage lines of each command, after "usage: " (its own help) or seven
// spaces (the overview, below the run command's).
#define KILN_RUN_USAGE                                                                             \
  "kiln run MODULE.hlo [--backend NAME] [--input FILE.npy]... [--output-dir DIR] [--rng-seed N]\n" \
  "                [--random-inputs [--seed N]] [--compare-with BACKEND] [--expect DIR]\n"         \
  "                [--rtol R] [--atol A] [--dump-hlo DIR] [--dump-ir DIR] [--progress]\n"          \
  "                [--timeout SECONDS] [--allow-unsafe-nan-math]\n"
#define KILN_BENCH_USAGE                                                                         \
  "kiln bench MODULE.hlo [--backend NAME] [--input FILE.npy]... [--iterations N] [--warmup N]\n" \
  "                  [--min-time SECONDS] [--threads N] [--json] [--output-dir DIR]\n"           \
  "                  [--allow-unsafe-nan-math]\n"
#define KILN_COMPILE_USAGE \
  "kiln compile MODULE.hlo --backend cuda --emit ptx --target sm_XX [--output-dir DIR]\n"
#define KILN_GRAD_USAGE "kiln grad MODULE.hlo --wrt I,J,... --output OUT.hlo\n"
#define KILN_LIMITS                                                                   \
  "Limits: a module has at most 256 MiB of HLO text; each --input must declare its\n" \
  "parameter's element type and shape in its header, which is checked before any\n"   \
  "data is read; --threads is at most 4 per hardware thread (never below 16).\n"
#define KILN_EXIT_STATUS                                                          \
  "Exit status: 0 on success, 1 on an error while running, 2 on a usage error,\n" \
  "3 when results differ from --compare-with or --expect.\n"

const char* UsageText() {
  return "usage: " KILN_RUN_USAGE "       " KILN_BENCH_USAGE "       " KILN_COMPILE_USAGE
         "       " KILN_GRAD_USAGE
         "       kiln info [--ops [--plugin LIB.so]...]\n"
         "       kiln --version\n"
         "       kiln --help\n"
         "\n"
         "commands:\n"
         "  run      compile an HLO text module and run its ENTRY computation once, with\n"
         "           .npy inputs or random ones; write, print or check the results.\n"
         "  bench    compile a module once and time repeated executions.\n"
         "  compile  compile a module ahead of time, without a device, and write what\n"
         "           the backend would load: PTX for NVIDIA GPUs (--emit ptx).\n"
         "  grad     write the module computing a module's results and the gradients of\n"
         "           the --wrt parameters (reverse mode).\n"
         "  info     list the backends, their devices and the element types they support.\n"
         "\n"
         "'kiln COMMAND --help' describes a command's options. Options may also be\n"
         "written --name=VALUE.\n" KILN_LIMITS KILN_EXIT_STATUS;
}

const char* RunHelpText() {
  return "usage: " KILN_RUN_USAGE
         "\n"
         "Compiles an HLO text module and runs its ENTRY computation once.\n"
         "\n"
         "inputs:\n"
         "  --input FILE.npy   binds the next ENTRY parameter (tuple parameters are\n"
         "                     flattened into their array leaves), in order;\n"
         "                     FILE.safetensors:NAME binds tensor NAME of a\n"
         "                     safetensors file.\n"
         "  --random-inputs    random values of every parameter's shape instead: floats\n"
         "                     uniform in [-1, 1) (complex: both parts), signed integers\n"
         "                     in [-8, 8), unsigned in [0, 16), pred 0 or 1.\n"
         "  --seed N           seed of --random-inputs (0): the same seed gives the same\n"
         "                     values on every machine.\n"
         "  --rng-seed N       seed of the module's rng ops (0).\n"
         "  --timeout SECONDS  stops an execution that runs longer (a while loop that\n"
         "                     does not end): exit status 1, DEADLINE_EXCEEDED naming the\n"
         "                     loop.\n"
         "\n"
         "results:\n"
         "  --output-dir DIR   writes result leaf i (tuples flattened) to DIR/i.npy;\n"
         "                     without it the results are printed.\n"
         "  --compare-with BACKEND\n"
         "                     runs the module on BACKEND too (the interpreter is the\n"
         "                     reference), with the same inputs, and compares every\n"
         "                     result leaf.\n"
         "  --expect DIR       compares result leaf i with DIR/i.npy (or DIR/outi.npy, as\n"
         "                     the conformance corpus names them).\n"
         "  --rtol R, --atol A tolerance of those comparisons: |actual - expected| <=\n"
         "                     A + R * |expected|, NaN matching NaN. By default it follows\n"
         "                     the float types the module computes in (a few roundings\n"
         "                     of f32, more for f16 and bf16), as the conformance tests\n"
         "                     do; sums over long dimensions of random inputs may need\n"
         "                     a larger A. Integers and pred must be equal. One line per\n"
         "                     leaf is printed, with the tolerance it was checked with;\n"
         "                     results that differ give exit status 3.\n"
         "\n"
         "compilation:\n"
         "  --backend NAME     the backend to run on: cpu when this build has it, else\n"
         "                     interpreter ('kiln info' lists them).\n"
         "  --dump-hlo DIR     writes the module as given and after the backend's passes\n"
         "                     (MODULE.before_passes.hlo, MODULE.after_passes.hlo).\n"
         "  --dump-ir DIR      writes the LLVM IR of each kernel module, as emitted and\n"
         "                     as optimised (MODULE.kernels.N.emitted.ll, .optimized.ll;\n"
         "                     cpu backend).\n"
         "  --progress         reports each phase (parse, compile, run) on stderr. On a\n"
         "                     terminal, phases longer than a second are reported anyway.\n"
         "  --allow-unsafe-nan-math\n"
         "                     compiles a module whose results depend on NaN or\n"
         "                     infinities (maximum, minimum, clamp, float compares,\n"
         "                     is-finite, top-k) even for a device whose driver may\n"
         "                     assume there are none (vulkan without float controls),\n"
         "                     which refuses it otherwise; such results may be wrong.\n"
         "\n"
         "Options may also be written --name=VALUE.\n" KILN_EXIT_STATUS;
}

const char* BenchHelpText() {
  return "usage: " KILN_BENCH_USAGE
         "\n"
         "Compiles a module (timing the compile), uploads the inputs once and executes\n"
         "repeatedly with them resident: --warmup untimed runs (2), then --iterations\n"
         "timed runs, or as many as fill --min-time (1 s). Prints compile milliseconds\n"
         "and the best, median and mean microseconds per execute (one JSON object with\n"
         "--json). --threads sets the intra-op threads (0 = one per core); --output-dir\n"
         "writes the last execution's results. Inputs bind as for 'kiln run'.\n"
         "--allow-unsafe-nan-math compiles as 'kiln run' does with it.\n"
         "\n"
         "\n"
         "Options may also be written --name=VALUE.\n" KILN_LIMITS
         "Exit status: 0 on success, 1 on an error while "
         "running, 2 on a usage error.\n";
}

const char* CompileHelpText() {
  return "usage: " KILN_COMPILE_USAGE
         "\n"
         "Compiles an HLO text module for a backend without running it (no device is\n"
         "needed) and writes the result. With --backend cuda --emit ptx: one PTX module\n"
         "holding every kernel the CUDA backend would launch, for the GPU --target\n"
         "names (sm_75, sm_80, sm_90...; arch-specific sm_90a is refused), written to\n"
         "DIR/MODULE.ptx (MODULE: the file's name without its extension; DIR:\n"
         "--output-dir, the current directory by default, created when missing).\n"
         "Prints the path and the number of kernels. A module using an op the backend\n"
         "cannot run is refused with UNIMPLEMENTED naming the op.\n"
         "\n"
         "Options may also be written --name=VALUE.\n"
         "Exit status: 0 on success, 1 on an error while compiling, 2 on a usage error.\n";
}

const char* GradHelpText() {
  return "usage: " KILN_GRAD_USAGE
         "\n"
         "Writes to OUT.hlo the reverse-mode gradient module of MODULE.hlo. Its ENTRY\n"
         "takes MODULE's parameters, then one cotangent per result leaf (tuples\n"
         "flattened, each of its leaf's shape), appended after them; when the result\n"
         "is one scalar (a loss) there is no cotangent parameter and the cotangent is 1.\n"
         "It returns a tuple of the original result leaves followed by the gradient of\n"
         "each --wrt parameter, in the order given (repeats allowed). Run it with\n"
         "'kiln run' on any backend (through a while loop: interpreter or cpu, whose\n"
         "runtime keeps the tape of loop states the backward loop reads back). Prints\n"
         "what the written module takes and returns.\n"
         "\n"
         "Only floating-point (f16, bf16, f32, f64) and complex (c64, c128) array\n"
         "parameters can be differentiated. Conditionals, while loops, convolutions,\n"
         "sorts, fft, batch-norm ops, elementwise maps (their body differentiated\n"
         "elementwise), reduces and reduce-windows with any reducer whose body is\n"
         "elementwise (products included, over one operand or several) are, and\n"
         "scatters: add, subtract, overwrite, multiply, maximum and minimum (over\n"
         "several operands, component by component) whatever the indices, any other\n"
         "differentiable combiner (over several operands, one mixing components too)\n"
         "only when no two updates land on one element (unique_indices=true, or\n"
         "constant indices with disjoint windows; else INVALID_ARGUMENT naming the\n"
         "scatter and its combiner).\n"
         "Other ops without a rule (a reducer whose body is not\n"
         "elementwise, a select-and-scatter whose scatter is not add): a module whose\n"
         "gradient goes through one is refused with UNIMPLEMENTED naming the op and\n"
         "the instruction; an op with no derivative (a custom call, random numbers) is\n"
         "INVALID_ARGUMENT.\n"
         "\n"
         "Options may also be written --name=VALUE.\n"
         "Exit status: 0 on success, 1 on an error, 2 on a usage error.\n";
}

const char* InfoHelpText() {
  return "usage: kiln info [--ops [--plugin LIB.so]...]\n"
         "\n"
         "Lists the backends of this build (the default one marked), their devices, the\n"
         "element types they support and their largest buffer. A backend that cannot run\n"
         "on this machine is listed as unavailable with the reason.\n"
         "\n"
         "With --ops, lists the built-in custom-call targets and the user-defined ops\n"
         "(signature, attributes, kernels, doc). User-defined ops live in the process\n"
         "that registers them: --plugin loads a shared library (linked with libkiln)\n"
         "that registers ops when loaded or in its `kiln_status_t* kiln_plugin_init(void)`,\n"
         "and lists them too.\n";
}

}  // namespace kiln::tool
