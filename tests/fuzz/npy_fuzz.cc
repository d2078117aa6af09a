// libFuzzer entry point for the .npy reader: any bytes must give a literal or
// an error status, never a crash, hang or leak. A literal that was read must
// survive a write/read round trip unchanged.
// Built and run by tests/fuzz/CMakeLists.txt; the seeds in corpus/npy/ start
// with the mode byte read below.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>

#include "core/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks whether a bf16 array is expected, so V2 data is reached too.
  const std::optional<kiln::ElementType> expected =
      (data[0] & 1) != 0 ? std::optional(kiln::ElementType::kBF16) : std::nullopt;
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  kiln::StatusOr<kiln::Literal> literal = kiln::ReadNpy(bytes, "fuzz.npy", expected);
  if (!literal.ok()) return 0;
  kiln::StatusOr<kiln::Literal> again = kiln::ReadNpy(kiln::WriteNpy(*literal), "again.npy", expected);
  if (!again.ok() || *again != *literal) std::abort();
  return 0;
}
