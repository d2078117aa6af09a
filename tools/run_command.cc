#include "tools/run_command.h"

#include <chrono>
#include <memory>

#include "core/backend.h"
#include "tools/backend_choice.h"
#include "tools/device_inputs.h"
#include "tools/module_loading.h"
#include "tools/progress.h"
#include "tools/random_inputs.h"
#include "tools/result_check.h"
#include "tools/result_output.h"

namespace kiln::tool {
namespace {

// Compiles `module` on `backend`, runs it once on `inputs` and returns the
// result leaves on the host.
StatusOr<std::vector<Literal>> CompileAndRun(Backend& backend, const Module& module,
                                             const std::vector<Literal>& inputs,
                                             const CompileOptions& compile, const ExecuteOptions& execute,
                                             Progress& progress) {
  const std::string on = " on " + std::string(backend.name());
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable,
                        progress.Run("compiling" + on, [&] { return backend.Compile(module, compile); }));
  return progress.Run("running" + on, [&]() -> StatusOr<std::vector<Literal>> {
    KILN_ASSIGN_OR_RETURN(DeviceInputs arguments_on_device, UploadInputs(backend, inputs));
    KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> result_buffers,
                          executable->Execute(arguments_on_device.pointers, execute));
    return DownloadResults(backend, result_buffers);
  });
}

}  // namespace

StatusOr<RunOutcome> RunModule(const RunArguments& arguments, std::ostream& out, std::ostream& progress_out) {
  Progress progress(Progress::ModeFor(arguments.progress), progress_out);
  // Unknown backends are reported before anything about the module or inputs.
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, OpenBackend(arguments.backend));
  std::unique_ptr<Backend> reference;
  if (!arguments.compare_backend.empty()) {
    KILN_ASSIGN_OR_RETURN(reference, OpenBackend(arguments.compare_backend));
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, progress.Run("parsing " + arguments.module_path, [&] {
    return LoadModule(arguments.module_path);
  }));
  std::vector<Literal> inputs;
  if (arguments.random_inputs) {
    inputs = RandomInputs(EntryParameterLeaves(*module), arguments.input_seed);
  } else {
    KILN_ASSIGN_OR_RETURN(inputs, LoadInputs(*module, arguments.inputs));
  }

  CompileOptions compile;
  compile.dump_hlo_dir = arguments.dump_hlo_dir;
  compile.dump_ir_dir = arguments.dump_ir_dir;
  compile.allow_unsafe_nan_math = arguments.allow_unsafe_nan_math;
  ExecuteOptions execute;
  execute.rng_seed = arguments.rng_seed;
  if (arguments.timeout_seconds > 0) {
    const auto timeout = std::chrono::duration_cast<StopCondition::Clock::duration>(
        std::chrono::duration<double>(arguments.timeout_seconds));
    execute.stop = StopCondition(nullptr, StopCondition::Clock::now() + timeout);
  }
  StatusOr<std::vector<Literal>> ran = CompileAndRun(*backend, *module, inputs, compile, execute, progress);
  if (ran.status().code() == StatusCode::kDeadlineExceeded) {
    return Status(StatusCode::kDeadlineExceeded,
                  internal::StrCat(ran.status().message(), " (--timeout ", arguments.timeout_seconds, ")"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> results, std::move(ran));

  if (arguments.output_dir) {
    KILN_RETURN_IF_ERROR(WriteResults(results, *arguments.output_dir));
  } else {
    PrintResults(results, out);
  }

  bool agree = true;
  const ToleranceChoice tolerance{arguments.rtol, arguments.atol};
  if (reference != nullptr) {
    // The dumps describe the backend under test only.
    KILN_ASSIGN_OR_RETURN(std::vector<Literal> expected,
                          CompileAndRun(*reference, *module, inputs, CompileOptions{}, execute, progress));
    agree = CheckResults(results, expected, std::string(reference->name()), *module, tolerance, out) && agree;
  }
  if (arguments.expect_dir) {
    KILN_ASSIGN_OR_RETURN(std::vector<Literal> expected, ReadExpectedResults(*arguments.expect_dir, results));
    agree = CheckResults(results, expected, *arguments.expect_dir, *module, tolerance, out) && agree;
  }
  return agree ? RunOutcome::kDone : RunOutcome::kResultsDiffer;
}

}  // namespace kiln::tool
