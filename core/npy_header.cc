#include "core/npy_header.h"

#include <limits>
#include <optional>

namespace kiln {
namespace {

// A cursor over the header text. Parsing is driven by the key, so nesting is
// never deeper than one tuple and hostile input cannot exhaust the stack.
class HeaderCursor {
 public:
  explicit HeaderCursor(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  // Consumes `c` (after spaces) when it is next.
  bool Consume(char c) {
    SkipSpace();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  Status Expect(char c, const char* what) {
    if (Consume(c)) return OkStatus();
    return Error("expected '", c, "' ", what);
  }

  StatusOr<std::string> ParseString(const char* what) {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') {
      if (quote == '[') return Error("structured dtypes (a list as ", what, ") are not supported");
      return Error("expected a quoted string as ", what);
    }
    ++pos_;
    std::string value;
    while (!AtEnd() && Peek() != quote) {
      if (Peek() == '\\') {
        ++pos_;
        if (AtEnd()) break;
      }
      value.push_back(text_[pos_++]);
    }
    if (AtEnd()) return Error("unterminated string in ", what);
    ++pos_;
    return value;
  }

  StatusOr<bool> ParseBool(const char* what) {
    if (ConsumeWord("True")) return true;
    if (ConsumeWord("False")) return false;
    return Error("expected True or False as ", what);
  }

  StatusOr<int64_t> ParseDimension() {
    SkipSpace();
    if (Peek() == '-') return Error("negative dimension in 'shape'");
    if (Peek() < '0' || Peek() > '9') return Error("expected an integer dimension in 'shape'");
    int64_t value = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      const int digit = Peek() - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return Error("dimension in 'shape' does not fit in 64 bits");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (Peek() == 'L' || Peek() == 'l') ++pos_;  // Python 2 long suffix in old files.
    return value;
  }

  // "()", "(3,)", "(2, 3)" or "(2, 3,)".
  StatusOr<std::vector<int64_t>> ParseShape() {
    if (!Consume('(')) return Error("expected a tuple such as (2, 3) as 'shape'");
    std::vector<int64_t> dims;
    if (Consume(')')) return dims;
    while (true) {
      KILN_ASSIGN_OR_RETURN(int64_t dim, ParseDimension());
      dims.push_back(dim);
      const bool comma = Consume(',');
      if (Consume(')')) {
        // "(3)" is an int in Python, not a tuple.
        if (dims.size() == 1 && !comma) return Error("expected a tuple such as (3,) as 'shape'");
        return dims;
      }
      if (!comma) return Error("expected ',' or ')' in 'shape'");
    }
  }

  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgument("malformed header at offset ", pos_, ": ", args...);
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<NpyHeader> ParseNpyHeader(std::string_view text) {
  HeaderCursor cursor(text);
  NpyHeader header;
  bool has_descr = false, has_fortran_order = false, has_shape = false;
  KILN_RETURN_IF_ERROR(cursor.Expect('{', "at the start of the header dict"));
  while (!cursor.Consume('}')) {
    KILN_ASSIGN_OR_RETURN(std::string key, cursor.ParseString("a header key"));
    KILN_RETURN_IF_ERROR(cursor.Expect(':', "after a header key"));
    bool* seen = nullptr;
    if (key == "descr") {
      seen = &has_descr;
      KILN_ASSIGN_OR_RETURN(header.descr, cursor.ParseString("'descr'"));
    } else if (key == "fortran_order") {
      seen = &has_fortran_order;
      KILN_ASSIGN_OR_RETURN(header.fortran_order, cursor.ParseBool("'fortran_order'"));
    } else if (key == "shape") {
      seen = &has_shape;
      KILN_ASSIGN_OR_RETURN(header.shape, cursor.ParseShape());
    } else {
      return cursor.Error("unexpected key '", key, "' (expected descr, fortran_order and shape)");
    }
    if (*seen) return cursor.Error("key '", key, "' appears twice");
    *seen = true;
    if (!cursor.Consume(',')) {
      KILN_RETURN_IF_ERROR(cursor.Expect('}', "or ',' after a header value"));
      break;
    }
  }
  cursor.SkipSpace();
  if (!cursor.AtEnd()) return cursor.Error("unexpected text after the header dict");
  if (!has_descr) return InvalidArgument("header has no 'descr' key");
  if (!has_fortran_order) return InvalidArgument("header has no 'fortran_order' key");
  if (!has_shape) return InvalidArgument("header has no 'shape' key");
  return header;
}

std::string FormatNpyHeader(const NpyHeader& header) {
  // A quote or backslash in descr is escaped, so the text always reads back
  // (the fuzzer found a descr holding a quote that did not).
  std::string text = "{'descr': '";
  for (const char c : header.descr) {
    if (c == '\'' || c == '\\') text += '\\';
    text += c;
  }
  text += "', 'fortran_order': ";
  text += header.fortran_order ? "True" : "False";
  text += ", 'shape': (";
  for (size_t i = 0; i < header.shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(header.shape[i]);
  }
  if (header.shape.size() == 1) text += ",";
  text += "), }";
  return text;
}

}  // namespace kiln
