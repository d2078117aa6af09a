// libFuzzer entry for the HLO text parser: any input must yield a module or
// an error, never a crash, hang or leak; and whatever parses must print,
// parse back and print identically.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/hlo_parser.h"
#include "core/hlo_printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = kiln::ParseHloModule(text);
  if (!module.ok()) return 0;
  const std::string printed = kiln::PrintModule(**module);
  auto reparsed = kiln::ParseHloModule(printed);
  if (!reparsed.ok()) {
    std::fprintf(stderr, "printed module does not parse: %s\n%s\n", reparsed.status().ToString().c_str(),
                 printed.c_str());
    std::abort();
  }
  if (kiln::PrintModule(**reparsed) != printed) {
    std::fprintf(stderr, "printing is not stable:\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}
