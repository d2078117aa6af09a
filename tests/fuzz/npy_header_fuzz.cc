// libFuzzer entry for the dict in a .npy header on its own (the npy fuzzer
// reaches it only behind the magic and length fields): any text must give a
// header or an error, never a crash, hang or leak; a header that was read
// must format to text that reads back to the same header.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/npy_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::StatusOr<kiln::NpyHeader> header = kiln::ParseNpyHeader(text);
  if (!header.ok()) return 0;
  const std::string formatted = kiln::FormatNpyHeader(*header);
  kiln::StatusOr<kiln::NpyHeader> again = kiln::ParseNpyHeader(formatted);
  if (!again.ok() || again->descr != header->descr || again->fortran_order != header->fortran_order ||
      again->shape != header->shape) {
    std::fprintf(stderr, "formatted header does not read back the same: %s\n", formatted.c_str());
    std::abort();
  }
  return 0;
}
