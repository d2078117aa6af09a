#include "core/hlo_lexer.h"

#include <vector>

namespace kiln {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsNameStart(char c) { return IsAlpha(c) || c == '_'; }
bool IsNameChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_' || c == '.' || c == '-'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

void HloLexer::SkipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      const size_t end = text_.find("*/", pos_ + 2);
      // An unterminated comment swallows the rest; the parser then reports
      // "end of input" where it expected something.
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      const size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    } else {
      return;
    }
  }
}

char HloLexer::Peek() {
  SkipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

char HloLexer::PeekRaw(size_t ahead) const {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

bool HloLexer::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

bool HloLexer::TryConsume(char expected) {
  if (Peek() != expected || AtEnd()) return false;
  ++pos_;
  return true;
}

bool HloLexer::TryConsume(std::string_view expected) {
  SkipSpace();
  if (text_.substr(pos_, expected.size()) != expected) return false;
  pos_ += expected.size();
  return true;
}

bool HloLexer::TryConsumeKeyword(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  if (pos_ + word.size() < text_.size() && IsNameChar(text_[pos_ + word.size()])) return false;
  pos_ += word.size();
  return true;
}

std::string_view HloLexer::ReadName() {
  SkipSpace();
  size_t start = pos_;
  if (start < text_.size() && text_[start] == '%') ++start;
  if (start >= text_.size() || !IsNameStart(text_[start])) return {};
  size_t end = start;
  while (end < text_.size() && IsNameChar(text_[end])) ++end;
  pos_ = end;
  return text_.substr(start, end - start);
}

std::string_view HloLexer::ReadNumberToken() {
  SkipSpace();
  size_t end = pos_;
  if (end < text_.size() && (text_[end] == '-' || text_[end] == '+')) ++end;
  if (end < text_.size() && IsAlpha(text_[end])) {
    size_t word_end = end;
    while (word_end < text_.size() && IsAlpha(text_[word_end])) ++word_end;
    const std::string_view word = text_.substr(end, word_end - end);
    if (word != "inf" && word != "nan") return {};
    end = word_end;
    if (word == "nan" && end < text_.size() && text_[end] == '(') {
      const size_t close = text_.find(')', end);
      if (close == std::string_view::npos || close - end > 24) return {};
      end = close + 1;
    }
  } else {
    const size_t digits_start = end;
    while (end < text_.size() && (IsDigit(text_[end]) || text_[end] == '.')) ++end;
    if (end == digits_start) return {};
    if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
      size_t exponent = end + 1;
      if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) ++exponent;
      if (exponent < text_.size() && IsDigit(text_[exponent])) {
        end = exponent;
        while (end < text_.size() && IsDigit(text_[end])) ++end;
      }
    }
  }
  const std::string_view token = text_.substr(pos_, end - pos_);
  pos_ = end;
  return token;
}

std::string_view HloLexer::ReadWord() {
  SkipSpace();
  const size_t start = pos_;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (IsSpace(c) || c == ',' || c == '{' || c == '}' || c == '(' || c == ')') break;
    ++pos_;
  }
  return text_.substr(start, pos_ - start);
}

StatusOr<std::string> HloLexer::ReadString() {
  if (Peek() != '"') return Expected("a string");
  const size_t start = pos_;
  ++pos_;
  std::string value;
  while (pos_ < text_.size()) {
    const char c = text_[pos_++];
    if (c == '"') return value;
    if (c != '\\') {
      value.push_back(c);
      continue;
    }
    if (pos_ >= text_.size()) break;
    const char escape = text_[pos_++];
    switch (escape) {
      case 'n': value.push_back('\n'); break;
      case 't': value.push_back('\t'); break;
      case 'r': value.push_back('\r'); break;
      case '0': value.push_back('\0'); break;
      case '\\': value.push_back('\\'); break;
      case '"': value.push_back('"'); break;
      case '\'': value.push_back('\''); break;
      case 'x': {
        int byte = 0, digits = 0;
        while (digits < 2 && pos_ < text_.size() && IsHexDigit(text_[pos_])) {
          byte = byte * 16 + HexValue(text_[pos_++]);
          ++digits;
        }
        if (digits == 0) return ErrorAt(pos_ - 2, "invalid \\x escape in string");
        value.push_back(static_cast<char>(byte));
        break;
      }
      default: return ErrorAt(pos_ - 2, std::string("unknown escape '\\") + escape + "' in string");
    }
  }
  return ErrorAt(start, "unterminated string");
}

Status HloLexer::SkipString() {
  const size_t start = pos_;
  ++pos_;  // opening quote
  while (pos_ < text_.size()) {
    const char c = text_[pos_++];
    if (c == '"') return OkStatus();
    if (c == '\\') ++pos_;
  }
  return ErrorAt(start, "unterminated string");
}

Status HloLexer::SkipValue() {
  SkipSpace();
  const size_t start = pos_;
  std::vector<char> closers;  // explicit stack: no recursion on deep input
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '"') {
      KILN_RETURN_IF_ERROR(SkipString());
      if (closers.empty()) return OkStatus();
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      closers.push_back(c == '{' ? '}' : c == '(' ? ')' : ']');
      ++pos_;
      continue;
    }
    if (c == '}' || c == ')' || c == ']') {
      if (closers.empty()) break;  // closes an enclosing group: the value ended
      if (c != closers.back()) return ErrorAt(pos_, std::string("unbalanced '") + c + "' in attribute value");
      closers.pop_back();
      ++pos_;
      if (closers.empty()) {
        // `[2,2]<=[4]` style values continue after a group.
        if (pos_ < text_.size() && !IsSpace(text_[pos_]) && text_[pos_] != ',' && text_[pos_] != '}' &&
            text_[pos_] != ')') {
          continue;
        }
        return OkStatus();
      }
      continue;
    }
    if (closers.empty() && (IsSpace(c) || c == ',')) break;
    ++pos_;
  }
  if (!closers.empty()) return ErrorAt(start, "unterminated attribute value");
  if (pos_ == start) return Expected("an attribute value");
  return OkStatus();
}

StatusOr<std::string_view> HloLexer::ReadBalancedBraces() {
  if (Peek() != '{') return Expected("'{'");
  const size_t start = pos_;
  KILN_RETURN_IF_ERROR(SkipValue());
  return text_.substr(start, pos_ - start);
}

TextPosition HloLexer::PositionOf(size_t offset) const {
  TextPosition position;
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

std::string HloLexer::DescribeNext() {
  SkipSpace();
  if (pos_ >= text_.size()) return "end of input";
  size_t end = pos_;
  if (IsNameChar(text_[end]) || text_[end] == '%') {
    ++end;
    while (end < text_.size() && IsNameChar(text_[end]) && end - pos_ < 40) ++end;
  } else {
    ++end;
  }
  std::string shown;
  for (char c : text_.substr(pos_, end - pos_)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[byte >> 4];
      shown += kHex[byte & 15];
    } else {
      shown.push_back(c);
    }
  }
  return "'" + shown + "'";
}

Status HloLexer::ErrorAt(size_t offset, const std::string& message) const {
  const TextPosition where = PositionOf(offset);
  return InvalidArgument("line ", where.line, ", column ", where.column, ": ", message);
}

Status HloLexer::Expected(const std::string& what) {
  SkipSpace();
  return ErrorAt(pos_, "expected " + what + " but got " + DescribeNext());
}

}  // namespace kiln
