#include "tools/run_command.h"

#include <chrono>
#include <memory>

#include "core/backend.h"
#include "tools/backend_choice.h"
#include "tools/device_inputs.h"
#include "tools/module_loading.h"
#include "tools/result_output.h"

namespace kiln::tool {

Status RunModule(const RunArguments& arguments, std::ostream& out) {
  // An unknown backend is reported before anything about the module or inputs.
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, OpenBackend(arguments.backend));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(arguments.module_path));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> inputs, LoadInputs(*module, arguments.inputs));

  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend->Compile(*module, CompileOptions{}));
  KILN_ASSIGN_OR_RETURN(DeviceInputs arguments_on_device, UploadInputs(*backend, inputs));
  ExecuteOptions options;
  options.rng_seed = arguments.rng_seed;
  if (arguments.timeout_seconds > 0) {
    const auto timeout = std::chrono::duration_cast<StopCondition::Clock::duration>(
        std::chrono::duration<double>(arguments.timeout_seconds));
    options.stop = StopCondition(nullptr, StopCondition::Clock::now() + timeout);
  }
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> executed =
      executable->Execute(arguments_on_device.pointers, options);
  if (executed.status().code() == StatusCode::kDeadlineExceeded) {
    return Status(StatusCode::kDeadlineExceeded, internal::StrCat(executed.status().message(), " (--timeout ",
                                                                  arguments.timeout_seconds, ")"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> result_buffers, std::move(executed));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> results, DownloadResults(*backend, result_buffers));

  if (arguments.output_dir) return WriteResults(results, *arguments.output_dir);
  PrintResults(results, out);
  return OkStatus();
}

}  // namespace kiln::tool
