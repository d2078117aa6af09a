#include "core/device_kernel_code.h"

#include <cctype>
#include <cstring>

namespace kiln {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr size_t kSpirvHeaderWords = 5;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kExecutionModelGLCompute = 5;

std::string JoinNames(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

}  // namespace

StatusOr<std::vector<std::string>> SpirvComputeEntryPoints(std::string_view op,
                                                           std::span<const uint8_t> code) {
  if (code.size() % 4 != 0 || code.size() < kSpirvHeaderWords * 4) {
    return InvalidArgument("op '", op, "': the vulkan kernel is not a SPIR-V module: ", code.size(),
                           " bytes is not a whole number of 32-bit words after a 5-word header");
  }
  std::vector<uint32_t> words(code.size() / 4);
  std::memcpy(words.data(), code.data(), code.size());
  if (words[0] != kSpirvMagic) {
    return InvalidArgument("op '", op, "': the vulkan kernel is not a SPIR-V module: its first word is not ",
                           "SPIR-V's magic number 0x07230203 (compile GLSL with glslc or glslangValidator)");
  }
  std::vector<std::string> entries;
  size_t at = kSpirvHeaderWords;
  while (at < words.size()) {
    const uint32_t count = words[at] >> 16;
    const uint32_t opcode = words[at] & 0xffff;
    if (count == 0 || at + count > words.size()) {
      return InvalidArgument(
          "op '", op, "': the vulkan kernel is not a valid SPIR-V module: the instruction at ", "word ", at,
          " has word count ", count, " past the module's ", words.size(), " words");
    }
    // OpEntryPoint: execution model, function id, name (a NUL-terminated literal).
    if (opcode == kOpEntryPoint && count >= 4 && words[at + 1] == kExecutionModelGLCompute) {
      const char* name = reinterpret_cast<const char*>(&words[at + 3]);
      const size_t limit = (count - 3) * 4;
      entries.emplace_back(name, strnlen(name, limit));
    }
    at += count;
  }
  return entries;
}

StatusOr<std::vector<std::string>> PtxEntryPoints(std::string_view op, std::span<const uint8_t> code) {
  const std::string_view text(reinterpret_cast<const char*>(code.data()), code.size());
  if (text.find('\0') != std::string_view::npos) {
    return InvalidArgument("op '", op, "': the cuda kernel is not PTX text: it holds a NUL byte (give the ",
                           "PTX without its terminating NUL, and no cubin)");
  }
  for (std::string_view directive : {".version", ".target"}) {
    if (text.find(directive) == std::string_view::npos)
      return InvalidArgument("op '", op, "': the cuda kernel is not PTX: it has no ", directive,
                             " directive");
  }
  std::vector<std::string> entries;
  for (size_t at = text.find(".entry"); at != std::string_view::npos; at = text.find(".entry", at + 1)) {
    size_t start = at + 6;
    if (start < text.size() && IsIdentifierChar(text[start])) continue;  // e.g. `.entryfoo`
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
    size_t end = start;
    while (end < text.size() && IsIdentifierChar(text[end])) ++end;
    if (end > start) entries.emplace_back(text.substr(start, end - start));
  }
  return entries;
}

Status CheckDeviceKernelCode(std::string_view op, std::string_view backend, std::span<const uint8_t> code,
                             std::string_view entry) {
  StatusOr<std::vector<std::string>> entries =
      backend == "vulkan" ? SpirvComputeEntryPoints(op, code) : PtxEntryPoints(op, code);
  if (!entries.ok()) return entries.status();
  for (const std::string& name : *entries)
    if (name == entry) return OkStatus();
  return NotFound("op '", op, "': the ", backend, " kernel has no ",
                  backend == "vulkan" ? "GLCompute entry point" : ".entry kernel", " named '", entry,
                  "' (it has ", JoinNames(*entries), ")");
}

}  // namespace kiln
