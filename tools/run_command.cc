#include "tools/run_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "core/backend.h"
#include "core/hlo_parser.h"
#include "tools/backend_choice.h"
#include "tools/input_binding.h"
#include "tools/result_output.h"

namespace kiln::tool {
namespace {

StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return InvalidArgument(path, ": is a directory, not an HLO file");
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFound(path, ": cannot open file");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return DataLoss(path, ": error while reading the file");
  return text;
}

std::vector<Shape> ParameterLeaves(const Computation& entry) {
  std::vector<Shape> leaves;
  for (const Shape& parameter : entry.program_shape().parameters) {
    for (Shape& leaf : parameter.Leaves()) leaves.push_back(std::move(leaf));
  }
  return leaves;
}

}  // namespace

Status RunModule(const RunArguments& arguments, std::ostream& out) {
  // An unknown backend is reported before anything about the module or inputs.
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, OpenBackend(arguments.backend));
  KILN_ASSIGN_OR_RETURN(std::string text, ReadTextFile(arguments.module_path));
  StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text);
  if (!parsed.ok()) return parsed.status().WithContext(arguments.module_path);
  const Module& module = **parsed;
  if (module.entry() == nullptr)
    return InvalidArgument(arguments.module_path, ": module has no ENTRY computation");

  KILN_ASSIGN_OR_RETURN(std::vector<Literal> inputs,
                        ReadInputs(arguments.inputs, ParameterLeaves(*module.entry())));

  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend->Compile(module, CompileOptions{}));
  if (backend->devices().empty()) return FailedPrecondition("backend '", backend->name(), "' has no device");
  Device* device = backend->devices()[0];

  std::vector<std::unique_ptr<DeviceBuffer>> argument_buffers;
  std::vector<DeviceBuffer*> argument_pointers;
  for (const Literal& input : inputs) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer, backend->BufferFromLiteral(input, device));
    argument_pointers.push_back(buffer.get());
    argument_buffers.push_back(std::move(buffer));
  }
  ExecuteOptions options;
  options.rng_seed = arguments.rng_seed;
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> result_buffers,
                        executable->Execute(argument_pointers, options));
  std::vector<Literal> results;
  for (const auto& buffer : result_buffers) {
    if (buffer == nullptr) return Internal("backend '", backend->name(), "' returned a null result buffer");
    KILN_ASSIGN_OR_RETURN(Literal result, buffer->ToLiteral());
    results.push_back(std::move(result));
  }

  if (arguments.output_dir) return WriteResults(results, *arguments.output_dir);
  PrintResults(results, out);
  return OkStatus();
}

}  // namespace kiln::tool
