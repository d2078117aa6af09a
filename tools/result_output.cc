#include "tools/result_output.h"

#include <filesystem>
#include <system_error>

#include "core/npy.h"

namespace kiln::tool {

Status WriteResults(const std::vector<Literal>& results, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return InvalidArgument("cannot create output directory '", directory, "': ", error.message());
  if (!std::filesystem::is_directory(directory, error)) {
    return InvalidArgument("output path '", directory, "' exists and is not a directory");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = (std::filesystem::path(directory) / (std::to_string(i) + ".npy")).string();
    KILN_RETURN_IF_ERROR(WriteNpyFile(results[i], path));
  }
  return OkStatus();
}

void PrintResults(const std::vector<Literal>& results, std::ostream& out) {
  for (size_t i = 0; i < results.size(); ++i) out << "result " << i << ": " << results[i].ToString() << "\n";
}

}  // namespace kiln::tool
