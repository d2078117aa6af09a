#include "tools/grad_command.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "core/autodiff/vjp.h"
#include "core/hlo_printer.h"
#include "tools/module_loading.h"

namespace kiln::tool {
namespace {

// "(x: f32[3], cotangent: f32[3]) -> (f32[3], f32[3])"
std::string Signature(const Computation& entry) {
  std::ostringstream text;
  text << "(";
  for (size_t i = 0; i < entry.parameters().size(); ++i) {
    const Instruction& parameter = *entry.parameter(i);
    text << (i > 0 ? ", " : "") << parameter.name << ": " << parameter.shape.ToString();
  }
  text << ") -> " << entry.root()->shape.ToString();
  return text.str();
}

}  // namespace

StatusOr<std::vector<int64_t>> ParseParameterList(const std::string& text) {
  std::vector<int64_t> numbers;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t number = 0;
    const char* end = item.data() + item.size();
    const auto parsed = std::from_chars(item.data(), end, number);
    if (item.empty() || parsed.ec != std::errc() || parsed.ptr != end || number < 0) {
      return InvalidArgument("option --wrt needs parameter numbers separated by commas (e.g. 0,2), got '",
                             text, "'");
    }
    numbers.push_back(number);
    if (comma == std::string::npos) return numbers;
    start = comma + 1;
  }
}

Status GradModule(const GradArguments& arguments, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(arguments.module_path));
  StatusOr<std::unique_ptr<Module>> gradient = autodiff::BuildVjp(*module, arguments.wrt);
  if (!gradient.ok()) return gradient.status().WithContext(arguments.module_path);
  std::ofstream file(arguments.output_path, std::ios::binary | std::ios::trunc);
  if (!file) return InvalidArgument("cannot write the gradient module to '", arguments.output_path, "'");
  file << PrintModule(**gradient);
  file.close();
  if (!file) return DataLoss("writing '", arguments.output_path, "' failed");
  const size_t original_parameters = module->entry()->parameters().size();
  const size_t cotangents = (*gradient)->entry()->parameters().size() - original_parameters;
  out << "wrote " << arguments.output_path << ": ENTRY " << Signature(*(*gradient)->entry()) << "; "
      << original_parameters << " parameter(s) then " << cotangents
      << " cotangent(s); results: " << module->entry()->root()->shape.Leaves().size()
      << " original leaf(s) then " << arguments.wrt.size() << " gradient(s)\n";
  return OkStatus();
}

}  // namespace kiln::tool
