// libFuzzer entry point for the safetensors reader: any bytes must give the
// file's tensors or an error status, never a crash, hang or leak. Tensors that
// were read must survive a write/read round trip unchanged.
// Built and run by tests/fuzz/CMakeLists.txt; seeds in corpus/safetensors/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  kiln::StatusOr<std::vector<std::pair<std::string, kiln::Literal>>> tensors =
      kiln::ReadSafetensors(bytes, "fuzz.safetensors");
  if (!tensors.ok()) return 0;
  std::vector<std::pair<std::string, const kiln::Literal*>> named;
  for (const auto& [name, literal] : *tensors) named.emplace_back(name, &literal);
  kiln::StatusOr<std::vector<uint8_t>> written = kiln::WriteSafetensors(named, {});
  if (!written.ok()) std::abort();
  kiln::StatusOr<std::vector<std::pair<std::string, kiln::Literal>>> again =
      kiln::ReadSafetensors(*written, "again.safetensors");
  if (!again.ok() || again->size() != tensors->size()) std::abort();
  for (size_t i = 0; i < tensors->size(); ++i) {
    if ((*again)[i].first != (*tensors)[i].first || (*again)[i].second != (*tensors)[i].second) std::abort();
  }
  return 0;
}
