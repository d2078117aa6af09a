#include "tools/module_loading.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

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
  // Read in chunks, so that a device such as /dev/zero or a pipe that never
  // ends is refused after its first chunk or at the size limit, not when
  // memory runs out. HLO text never holds a NUL byte.
  std::string text;
  std::vector<char> chunk(size_t{1} << 16);
  while (file) {
    file.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<size_t>(file.gcount());
    const auto nul = std::find(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got), '\0');
    if (nul != chunk.begin() + static_cast<std::ptrdiff_t>(got)) {
      return InvalidArgument(path, ": byte ", text.size() + static_cast<size_t>(nul - chunk.begin()),
                             " is NUL, so this is not HLO text");
    }
    if (text.size() + got > kMaxModuleTextBytes) {
      return InvalidArgument(path, ": is longer than ", kMaxModuleTextBytes,
                             " bytes, the most HLO text the kiln command reads");
    }
    text.append(chunk.data(), got);
  }
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
