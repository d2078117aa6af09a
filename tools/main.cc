// Entry point of the `kiln` command: dispatches to a command and maps the
// outcome to an exit status (0 ok, 1 runtime error, 2 usage error, 3 results
// that differ from --compare-with or --expect).
#include <iostream>
#include <string>
#include <vector>

#include "tools/bench_command.h"
#include "tools/command_line.h"
#include "tools/compile_command.h"
#include "tools/grad_command.h"
#include "tools/info_command.h"
#include "tools/run_command.h"

namespace {

constexpr int kExitRuntimeError = 1;
constexpr int kExitUsageError = 2;
constexpr int kExitResultsDiffer = 3;

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln::tool;
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  kiln::StatusOr<CommandLine> command = ParseCommandLine(args);
  if (!command.ok()) {
    std::cerr << "kiln: " << command.status().message() << "\n" << UsageText();
    return kExitUsageError;
  }
  switch (command->kind) {
    case CommandKind::kHelp: std::cout << command->help_text; return 0;
    case CommandKind::kVersion: std::cout << "kiln " << KILN_VERSION_STRING << "\n"; return 0;
    case CommandKind::kInfo: {
      if (!command->info.ops) {
        PrintInfo(std::cout);
        return 0;
      }
      kiln::Status status = PrintOps(std::cout, command->info.plugins);
      if (status.ok()) return 0;
      std::cerr << "kiln: " << status.message() << "\n";
      return 1;
    }
    case CommandKind::kRun:
    case CommandKind::kBench:
    case CommandKind::kCompile:
    case CommandKind::kGrad: break;
  }
  RunOutcome outcome = RunOutcome::kDone;
  kiln::Status status;
  if (command->kind == CommandKind::kCompile) {
    status = CompileModule(command->compile, std::cout);
  } else if (command->kind == CommandKind::kGrad) {
    status = GradModule(command->grad, std::cout);
  } else if (command->kind == CommandKind::kBench) {
    status = BenchModule(command->bench, std::cout);
  } else {
    kiln::StatusOr<RunOutcome> run = RunModule(command->run, std::cout, std::cerr);
    status = run.status();
    if (run.ok()) outcome = *run;
  }
  if (!status.ok()) {
    std::cerr << "kiln: error: " << kiln::StatusCodeName(status.code()) << ": " << status.message() << "\n";
    return kExitRuntimeError;
  }
  if (outcome == RunOutcome::kResultsDiffer) {
    std::cerr << "kiln: results differ from the reference (see the DIFFERS lines)\n";
    return kExitResultsDiffer;
  }
  return 0;
}
