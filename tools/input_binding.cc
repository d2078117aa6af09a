#include "tools/input_binding.h"

#include <optional>
#include <utility>

#include "core/npy.h"
#include "core/safetensors.h"

namespace kiln::tool {
namespace {

std::string ShapeList(const std::vector<Shape>& shapes) {
  std::string text = "(";
  for (size_t i = 0; i < shapes.size(); ++i) text += (i > 0 ? ", " : "") + shapes[i].ToString();
  return text + ")";
}

// "FILE.safetensors:NAME" names one tensor of a safetensors file: the file
// and the tensor, or nothing when `path` is a plain (.npy) path.
std::optional<std::pair<std::string, std::string>> SafetensorsInput(const std::string& path) {
  const std::string marker = ".safetensors:";
  const size_t at = path.rfind(marker);
  if (at == std::string::npos) return std::nullopt;
  return std::make_pair(path.substr(0, at + marker.size() - 1), path.substr(at + marker.size()));
}

// Reads tensor `name` of a safetensors file after `check` accepted the shape
// its header declares.
StatusOr<Literal> ReadSafetensorsInput(const std::string& file, const std::string& name,
                                       const NpyShapeCheck& check) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> opened, SafetensorsFile::Open(file));
  if (const SafetensorsTensor* tensor = opened->index().Find(name); tensor != nullptr) {
    if (Status accepted = check(tensor->shape); !accepted.ok())
      return Status(accepted.code(), file + ":" + name + " " + std::string(accepted.message()));
  }
  return opened->Read(name);
}

}  // namespace

StatusOr<std::vector<Literal>> ReadInputs(const std::vector<std::string>& paths,
                                          const std::vector<Shape>& parameter_leaves) {
  if (paths.size() != parameter_leaves.size()) {
    return InvalidArgument("expected ", parameter_leaves.size(), " input",
                           parameter_leaves.size() == 1 ? "" : "s", " for ENTRY parameters ",
                           ShapeList(parameter_leaves), " but got ", paths.size());
  }
  std::vector<Literal> inputs;
  inputs.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    const Shape& expected = parameter_leaves[i];
    // Checked against the header before any data is read, so a file (or a
    // device or pipe) declaring another array never costs more than its header.
    auto matches_parameter = [&](const Shape& declared) -> Status {
      if (declared.element_type() != expected.element_type()) {
        return InvalidArgument("has element type ", ElementTypeName(declared.element_type()), " (",
                               declared.ToString(), ") but ENTRY parameter ", i, " expects ",
                               expected.ToString());
      }
      if (declared.dimensions() != expected.dimensions()) {
        return InvalidArgument("has shape ", declared.ToString(), " but ENTRY parameter ", i, " expects ",
                               expected.ToString());
      }
      return OkStatus();
    };
    const std::optional<std::pair<std::string, std::string>> tensor = SafetensorsInput(paths[i]);
    KILN_ASSIGN_OR_RETURN(Literal literal,
                          tensor.has_value()
                              ? ReadSafetensorsInput(tensor->first, tensor->second, matches_parameter)
                              : ReadNpyFile(paths[i], expected.element_type(), matches_parameter));
    // The data stays row-major; the layout tells the backend how to place it.
    if (!expected.layout().minor_to_major.empty()) literal.set_layout(expected.layout());
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

}  // namespace kiln::tool
