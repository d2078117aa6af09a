#include "tests/cuda/fake_driver/ptx_text.h"

#include <cctype>
#include <cstddef>

namespace kiln::cuda::fake {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$';
}

// Position just after the directive `name` (e.g. ".entry") standing as a
// token of its own at or after `from`; npos when there is none.
size_t FindDirective(std::string_view text, std::string_view name, size_t from) {
  for (size_t at = text.find(name, from); at != std::string_view::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    const bool starts_token = at == 0 || IsSpace(text[at - 1]);
    const bool ends_token = end == text.size() || IsSpace(text[end]);
    if (starts_token && ends_token) return end;
  }
  return std::string_view::npos;
}

size_t SkipSpaces(std::string_view text, size_t at) {
  while (at < text.size() && IsSpace(text[at])) ++at;
  return at;
}

// Reads decimal digits at `*at`; -1 when there are none.
int ReadNumber(std::string_view text, size_t* at) {
  int value = -1;
  while (*at < text.size() && std::isdigit(static_cast<unsigned char>(text[*at])) != 0) {
    value = (value < 0 ? 0 : value * 10) + (text[*at] - '0');
    ++*at;
  }
  return value;
}

// One `.param .u64 NAME` (or `.param .align 8 .b8 NAME[16]`) of an
// entry's parameter list.
PtxParameter ParseParameter(std::string_view declaration) {
  PtxParameter parameter;
  int bits = 0;
  int count = 1;
  size_t at = 0;
  while ((at = SkipSpaces(declaration, at)) < declaration.size()) {
    size_t end = at;
    while (end < declaration.size() && !IsSpace(declaration[end])) ++end;
    const std::string_view token = declaration.substr(at, end - at);
    at = end;
    if (token.size() >= 3 && token[0] == '.' &&
        std::string_view("bsuf").find(token[1]) != std::string_view::npos) {
      size_t digits = 2;
      const int width = ReadNumber(token, &digits);
      if (width > 0 && digits == token.size()) bits = width;
    } else if (const size_t open = token.find('['); open != std::string_view::npos) {
      size_t digits = open + 1;
      const int elements = ReadNumber(token, &digits);
      if (elements > 0) count = elements;
      parameter.name = token.substr(0, open);
    } else if (token != ".param" && token[0] != '.') {
      parameter.name = token;
    }
  }
  parameter.bytes = bits / 8 * count;
  return parameter;
}

// True when `body` loads parameter `name` into a register
// (`ld.param.u64 %rd5, [name];`) that it converts to a global address
// (`cvta.to.global.u64 %rd1, %rd5;`).
bool UsedAsGlobalPointer(std::string_view body, const std::string& name) {
  const std::string operand = "[" + name + "]";
  for (size_t at = body.find(operand); at != std::string_view::npos; at = body.find(operand, at + 1)) {
    const size_t line_start = body.rfind('\n', at) == std::string_view::npos ? 0 : body.rfind('\n', at) + 1;
    const std::string_view load = body.substr(line_start, at - line_start);
    const size_t register_start = load.find('%');
    const size_t register_end = load.find(',', register_start);
    if (load.find("ld.param.u64") == std::string_view::npos || register_end == std::string_view::npos)
      continue;
    const std::string use =
        ", " + std::string(load.substr(register_start, register_end - register_start)) + ";";
    for (size_t found = body.find(use); found != std::string_view::npos; found = body.find(use, found + 1)) {
      const size_t use_line =
          body.rfind('\n', found) == std::string_view::npos ? 0 : body.rfind('\n', found) + 1;
      if (body.substr(use_line, found - use_line).find("cvta.to.global.u64") != std::string_view::npos)
        return true;
    }
  }
  return false;
}

}  // namespace

std::vector<PtxEntry> FindEntries(std::string_view ptx) {
  std::vector<PtxEntry> entries;
  for (size_t at = FindDirective(ptx, ".entry", 0); at != std::string_view::npos;
       at = FindDirective(ptx, ".entry", at)) {
    size_t name_end = at = SkipSpaces(ptx, at);
    while (name_end < ptx.size() && IsIdentifierChar(ptx[name_end])) ++name_end;
    if (name_end == at) continue;
    PtxEntry entry{std::string(ptx.substr(at, name_end - at)), {}};
    at = SkipSpaces(ptx, name_end);
    if (at < ptx.size() && ptx[at] == '(') {
      const size_t close = ptx.find(')', at);
      std::string_view list = ptx.substr(at + 1, close == std::string_view::npos ? 0 : close - at - 1);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        const std::string_view declaration = list.substr(0, comma);
        if (declaration.find(".param") != std::string_view::npos)
          entry.parameters.push_back(ParseParameter(declaration));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
    }
    // The body runs to the next entry point (or the end of the module).
    const size_t next = FindDirective(ptx, ".entry", at);
    const std::string_view body =
        ptx.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at);
    for (PtxParameter& parameter : entry.parameters) {
      parameter.pointer =
          parameter.bytes == 8 && !parameter.name.empty() && UsedAsGlobalPointer(body, parameter.name);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

int PtxVersion(std::string_view ptx) {
  size_t at = FindDirective(ptx, ".version", 0);
  if (at == std::string_view::npos) return 0;
  at = SkipSpaces(ptx, at);
  const int major = ReadNumber(ptx, &at);
  if (major < 0 || at >= ptx.size() || ptx[at] != '.') return 0;
  ++at;
  const int minor = ReadNumber(ptx, &at);
  return minor < 0 ? 0 : major * 10 + minor;
}

int PtxTargetSm(std::string_view ptx) {
  size_t at = FindDirective(ptx, ".target", 0);
  if (at == std::string_view::npos) return 0;
  at = SkipSpaces(ptx, at);
  if (ptx.substr(at, 3) != "sm_") return 0;
  at += 3;
  const int sm = ReadNumber(ptx, &at);
  return sm < 0 ? 0 : sm;
}

}  // namespace kiln::cuda::fake
