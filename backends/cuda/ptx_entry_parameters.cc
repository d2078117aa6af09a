#include "backends/cuda/ptx_entry_parameters.h"

#include <cctype>
#include <charconv>

namespace kiln::cuda {
namespace {

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// `text` without its // and /* */ comments.
std::string WithoutComments(std::string_view text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    if (text.substr(at, 2) == "//") {
      at = text.find('\n', at);
      if (at == std::string_view::npos) break;
    } else if (text.substr(at, 2) == "/*") {
      at = text.find("*/", at + 2);
      if (at == std::string_view::npos) break;
      at += 2;
      out += ' ';
    } else {
      out += text[at++];
    }
  }
  return out;
}

// Bytes of a PTX fundamental type (`.u64` -> 8); 0 when it is not one.
int64_t TypeBytes(std::string_view type) {
  if (type.size() < 3 || type[0] != '.') return 0;
  const char kind = type[1];
  if (kind != 'u' && kind != 's' && kind != 'b' && kind != 'f') return 0;
  int bits = 0;
  const auto [end, error] = std::from_chars(type.data() + 2, type.data() + type.size(), bits);
  if (error != std::errc() || end != type.data() + type.size()) return 0;
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return 0;
  if (kind == 'f' && bits == 8) return 0;
  return bits / 8;
}

std::vector<std::string_view> Tokens(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    const size_t start = at;
    while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    if (at > start) tokens.push_back(text.substr(start, at - start));
  }
  return tokens;
}

// One declaration: `.param [.align N] .TYPE [.ptr .space .align N] name[[K]]`.
StatusOr<PtxEntryParameter> ReadParameter(std::string_view declaration) {
  const std::vector<std::string_view> tokens = Tokens(declaration);
  if (tokens.size() < 3 || tokens[0] != ".param")
    return InvalidArgument("'", declaration, "' is not a `.param .TYPE NAME` declaration");
  PtxEntryParameter parameter;
  for (size_t k = 1; k + 1 < tokens.size(); ++k) {
    if (tokens[k] == ".align") {
      ++k;  // its value
    } else if (const int64_t bytes = TypeBytes(tokens[k]); bytes > 0 && parameter.bytes == 0) {
      parameter.bytes = bytes;
    }
  }
  if (parameter.bytes == 0) return InvalidArgument("'", declaration, "' has no PTX type (.u64, .f32, ...)");
  std::string_view name = tokens.back();
  if (const size_t open = name.find('['); open != std::string_view::npos) {
    int64_t length = 0;
    const auto [end, error] = std::from_chars(name.data() + open + 1, name.data() + name.size(), length);
    if (error != std::errc() || end == name.data() + name.size() || *end != ']' || length <= 0)
      return InvalidArgument("'", declaration, "' has a malformed array length");
    parameter.bytes *= length;
    name = name.substr(0, open);
  }
  parameter.name = std::string(name);
  return parameter;
}

}  // namespace

StatusOr<std::vector<PtxEntryParameter>> ReadPtxEntryParameters(std::string_view ptx,
                                                                std::string_view entry) {
  const std::string text = WithoutComments(ptx);
  for (size_t at = text.find(".entry"); at != std::string::npos; at = text.find(".entry", at + 1)) {
    size_t start = at + 6;
    if (start < text.size() && IsIdentifierChar(text[start])) continue;
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
    size_t end = start;
    while (end < text.size() && IsIdentifierChar(text[end])) ++end;
    if (std::string_view(text).substr(start, end - start) != entry) continue;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    std::vector<PtxEntryParameter> parameters;
    if (end >= text.size() || text[end] != '(') return parameters;  // a kernel without parameters
    const size_t close = text.find(')', end);
    if (close == std::string::npos)
      return InvalidArgument("the parameter list of .entry ", entry, " has no closing parenthesis");
    const std::string_view list = std::string_view(text).substr(end + 1, close - end - 1);
    if (Tokens(list).empty()) return parameters;
    for (size_t from = 0;;) {
      const size_t comma = list.find(',', from);
      StatusOr<PtxEntryParameter> parameter = ReadParameter(
          list.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
      if (!parameter.ok())
        return InvalidArgument("parameter ", parameters.size(), " of .entry ", entry, ": ",
                               parameter.status().message());
      parameters.push_back(*std::move(parameter));
      if (comma == std::string_view::npos) break;
      from = comma + 1;
    }
    return parameters;
  }
  return InvalidArgument("the PTX has no .entry ", entry);
}

}  // namespace kiln::cuda
