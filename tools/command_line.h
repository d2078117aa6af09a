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
  // Random values for every parameter instead of --input files, from a
  // generator seeded with `input_seed`.
  bool random_inputs = false;
  uint64_t input_seed = 0;
  // A second backend to run the module on and compare with (empty = none).
  std::string compare_backend;
  // A directory of expected results (0.npy, 1.npy, ... or out0.npy, ...).
  std::optional<std::string> expect_dir;
  // Tolerances of the comparisons; unset = by element type.
  std::optional<double> rtol;
  std::optional<double> atol;
  // Debugging dumps of the compile (CompileOptions::dump_hlo_dir, dump_ir_dir).
  std::string dump_hlo_dir;
  std::string dump_ir_dir;
  // Report every phase on stderr (otherwise only long ones, on a terminal).
  bool progress = false;
  // CompileOptions::allow_unsafe_nan_math (--allow-unsafe-nan-math).
  bool allow_unsafe_nan_math = false;
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
  // CompileOptions::allow_unsafe_nan_math (--allow-unsafe-nan-math).
  bool allow_unsafe_nan_math = false;
};

// `kiln compile`: ahead-of-time output for a backend, written to a file.
struct CompileArguments {
  std::string module_path;
  std::string backend;  // required: the backend whose output is emitted
  std::string emit;     // what to write: "ptx" (--backend cuda)
  std::string target;   // the GPU for --emit ptx, e.g. "sm_80"
  std::string output_dir = ".";
};

// `kiln grad`: the reverse-mode gradient module of a module, written as HLO text.
struct GradArguments {
  std::string module_path;
  std::vector<int64_t> wrt;  // ENTRY parameter numbers, in the order given
  std::string output_path;
};

// `kiln info`: with --ops, the ops (built-in custom calls and user-defined
// ops, those of each --plugin library included) instead of the backends.
struct InfoArguments {
  bool ops = false;
  std::vector<std::string> plugins;  // shared libraries that register ops
};

enum class CommandKind { kHelp, kVersion, kInfo, kRun, kBench, kCompile, kGrad };

struct CommandLine {
  CommandKind kind = CommandKind::kHelp;
  // For kHelp: the text to print (the overview, or one command's help).
  const char* help_text = nullptr;
  RunArguments run;
  BenchArguments bench;
  CompileArguments compile;
  GradArguments grad;
  InfoArguments info;
};

// `args` excludes the program name.
StatusOr<CommandLine> ParseCommandLine(std::span<const std::string> args);

// The text `kiln --help` prints, and what a usage error prints after the message.
const char* UsageText();

// What `kiln run --help`, `kiln bench --help`, `kiln compile --help` and
// `kiln info --help` print.
const char* RunHelpText();
const char* BenchHelpText();
const char* CompileHelpText();
const char* GradHelpText();
const char* InfoHelpText();

}  // namespace kiln::tool
