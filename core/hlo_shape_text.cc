#include "core/hlo_shape_text.h"

#include <charconv>
#include <limits>
#include <string>
#include <vector>

namespace kiln {
namespace {

bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }

StatusOr<int64_t> ParseDimension(HloLexer& lexer) {
  const size_t start = lexer.offset();
  if (lexer.TryConsume("<=")) {
    return Unimplemented(
        lexer.ErrorAt(start, "bounded dynamic dimensions ('<=N') are not supported").message());
  }
  if (lexer.TryConsume('?')) {
    return Unimplemented(
        lexer.ErrorAt(start, "unbounded dynamic dimensions ('?') are not supported").message());
  }
  lexer.SkipSpace();
  const size_t token_start = lexer.offset();
  const std::string_view token = lexer.ReadNumberToken();
  int64_t value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || error != std::errc() || end != token.data() + token.size() || value < 0) {
    lexer.Rewind(token_start);
    return lexer.Expected("a non-negative dimension size");
  }
  return value;
}

Status ParseLayout(HloLexer& lexer, Shape& shape) {
  const size_t start = lexer.offset();
  if (!lexer.TryConsume('{')) return lexer.Expected("'{'");
  Layout layout;
  if (lexer.Peek() != '}' && lexer.Peek() != ':') {
    while (true) {
      lexer.SkipSpace();
      const std::string_view token = lexer.ReadNumberToken();
      int64_t dim = 0;
      const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), dim);
      if (token.empty() || error != std::errc() || end != token.data() + token.size()) {
        return lexer.Expected("a dimension number in the layout");
      }
      layout.minor_to_major.push_back(dim);
      if (!lexer.TryConsume(',')) break;
    }
  }
  if (lexer.TryConsume(':')) {
    // Tiling, element size and memory space (T(8,128) E(32) S(1)) describe
    // device placement Kiln does not model; they are read and dropped.
    while (lexer.Peek() != '}' && !lexer.AtEnd()) KILN_RETURN_IF_ERROR(lexer.SkipValue());
  }
  if (!lexer.TryConsume('}')) return lexer.Expected("'}' closing the layout");
  shape.set_layout(std::move(layout));
  Status valid = ValidateLayout(shape);
  if (!valid.ok()) return lexer.ErrorAt(start, valid.message());
  return OkStatus();
}

StatusOr<Shape> ParseShapeAt(HloLexer& lexer, int depth) {
  if (depth > kMaxHloNesting) return lexer.Expected("a shape nested at most 64 deep");
  if (lexer.TryConsume('(')) {
    std::vector<Shape> elements;
    if (!lexer.TryConsume(')')) {
      while (true) {
        KILN_ASSIGN_OR_RETURN(Shape element, ParseShapeAt(lexer, depth + 1));
        elements.push_back(std::move(element));
        if (lexer.TryConsume(')')) break;
        if (!lexer.TryConsume(',')) return lexer.Expected("',' or ')' in the tuple shape");
      }
    }
    return Shape::Tuple(std::move(elements));
  }
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  const std::string_view name = lexer.ReadName();
  if (name.empty()) return lexer.Expected("a shape");
  const std::optional<ElementType> type = ElementTypeFromName(name);
  if (!type || *type == ElementType::kTuple || *type == ElementType::kInvalid) {
    return lexer.ErrorAt(start, "unknown element type '" + std::string(name) + "'");
  }
  if (!lexer.TryConsume('[')) return lexer.Expected("'[' after the element type");
  if (*type == ElementType::kToken) {
    if (!lexer.TryConsume(']')) return lexer.Expected("']' (a token has no dimensions)");
    return Shape::Token();
  }
  std::vector<int64_t> dims;
  if (!lexer.TryConsume(']')) {
    while (true) {
      if (dims.size() >= 256) return lexer.Expected("at most 256 dimensions");
      KILN_ASSIGN_OR_RETURN(int64_t dim, ParseDimension(lexer));
      dims.push_back(dim);
      if (lexer.TryConsume(']')) break;
      if (!lexer.TryConsume(',')) return lexer.Expected("',' or ']' in the dimensions");
    }
  }
  // Element counts must fit comfortably in int64 with room for byte sizes,
  // so no later size computation can overflow.
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (__builtin_mul_overflow(count, dim, &count) || count > std::numeric_limits<int64_t>::max() / 16) {
      return lexer.ErrorAt(start, "shape " + Shape(*type, dims).ToString() + " has too many elements");
    }
  }
  Shape shape(*type, std::move(dims));
  lexer.SkipSpace();
  const char after = lexer.PeekRaw(1);
  if (lexer.Peek() == '{' && (IsDigitChar(after) || after == '}' || after == ':')) {
    KILN_RETURN_IF_ERROR(ParseLayout(lexer, shape));
  }
  return shape;
}

}  // namespace

bool ShapeStartsHere(HloLexer& lexer) {
  if (lexer.Peek() == '(') return true;
  const size_t start = lexer.offset();
  const std::string_view name = lexer.ReadName();
  const bool is_shape = !name.empty() && lexer.PeekRaw(0) == '[' && ElementTypeFromName(name).has_value();
  lexer.Rewind(start);
  return is_shape;
}

StatusOr<Shape> ParseShapeText(HloLexer& lexer) { return ParseShapeAt(lexer, 0); }

// Appends instead of streaming: the printer prints a shape per instruction
// and operand, and a stream's set-up cost more than the text.
void AppendShapeText(std::string& text, const Shape& shape, bool print_layout) {
  if (shape.IsTuple()) {
    text += '(';
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      if (i) text += ", ";
      AppendShapeText(text, shape.tuple_shapes()[i], print_layout);
    }
    text += ')';
    return;
  }
  if (shape.IsToken()) {
    text += "token[]";
    return;
  }
  text += ElementTypeName(shape.element_type());
  text += '[';
  for (size_t i = 0; i < shape.dimensions().size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape.dimensions()[i]);
  }
  text += ']';
  if (print_layout && shape.rank() > 0) {
    const std::vector<int64_t>& minor_to_major = shape.layout().minor_to_major;
    text += '{';
    for (size_t i = 0; i < minor_to_major.size(); ++i) {
      if (i) text += ',';
      text += std::to_string(minor_to_major[i]);
    }
    text += '}';
  }
}

std::string PrintShapeText(const Shape& shape, bool print_layout) {
  std::string text;
  AppendShapeText(text, shape, print_layout);
  return text;
}

}  // namespace kiln
