#include "core/dump_file.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace kiln {

std::string DumpFileStem(std::string_view name) {
  if (name.empty()) return "module";
  std::string stem(name);
  for (char& c : stem) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
    if (!safe) c = '_';
  }
  return stem;
}

Status WriteDumpFile(const std::string& directory, const std::string& file_name, std::string_view text) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error || !std::filesystem::is_directory(directory, error)) {
    return InvalidArgument("cannot create the dump directory '", directory, "'",
                           error ? ": " + error.message() : std::string());
  }
  const std::string path = (std::filesystem::path(directory) / file_name).string();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return InvalidArgument("cannot create the dump file '", path, "'");
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  file.close();
  if (!file) return DataLoss("error while writing the dump file '", path, "'");
  return OkStatus();
}

}  // namespace kiln
