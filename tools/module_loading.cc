#include "tools/module_loading.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/hlo_parser.h"
#include "tools/input_binding.h"

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

StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text);
  if (!parsed.ok()) return parsed.status().WithContext(path);
  if ((*parsed)->entry() == nullptr) return InvalidArgument(path, ": module has no ENTRY computation");
  return parsed;
}

std::vector<Shape> EntryParameterLeaves(const Module& module) { return ParameterLeaves(*module.entry()); }

StatusOr<std::vector<Literal>> LoadInputs(const Module& module, const std::vector<std::string>& paths) {
  return ReadInputs(paths, EntryParameterLeaves(module));
}

}  // namespace kiln::tool
