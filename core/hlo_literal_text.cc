#include "core/hlo_literal_text.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/hlo_shape_text.h"

namespace kiln {
namespace {

template <typename T>
constexpr bool kIsLowFloat = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

template <typename T>
struct BitsOf {
  using type =
      std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
};

template <typename T>
typename BitsOf<T>::type ToBits(T value) {
  if constexpr (kIsLowFloat<T>) {
    return Eigen::numext::bit_cast<uint16_t>(value);
  } else {
    return std::bit_cast<typename BitsOf<T>::type>(value);
  }
}

template <typename T>
T FromBits(typename BitsOf<T>::type bits) {
  if constexpr (kIsLowFloat<T>) {
    return Eigen::numext::bit_cast<T>(bits);
  } else {
    return std::bit_cast<T>(bits);
  }
}

// Mantissa (fraction) field width of a float type.
template <typename T>
int FractionBits() {
  if constexpr (std::is_same_v<T, half>) return 10;
  if constexpr (std::is_same_v<T, bfloat16>) return 7;
  if constexpr (std::is_same_v<T, float>) return 23;
  return 52;
}

// "nan", "-nan" or "nan(0x...)" when the payload is not the default quiet bit.
template <typename T>
std::string FormatNan(T value) {
  using Bits = typename BitsOf<T>::type;
  const Bits bits = ToBits(value);
  const int fraction_bits = FractionBits<T>();
  const Bits fraction = bits & static_cast<Bits>((Bits{1} << fraction_bits) - 1);
  const Bits quiet = static_cast<Bits>(Bits{1} << (fraction_bits - 1));
  const bool negative = (bits >> (sizeof(Bits) * 8 - 1)) != 0;
  std::string text = negative ? "-nan" : "nan";
  if (fraction != quiet) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<uint64_t>(fraction), 16);
    text += "(0x" + std::string(buffer, result.ptr) + ")";
  }
  return text;
}

template <typename T>
std::string FormatFloatValue(T value) {
  const double wide = static_cast<double>(static_cast<std::conditional_t<kIsLowFloat<T>, float, T>>(value));
  if (std::isnan(wide)) return FormatNan(value);
  if (std::isinf(wide)) return wide < 0 ? "-inf" : "inf";
  char buffer[64];
  if constexpr (kIsLowFloat<T>) {
    // Shortest decimal (by significant digits) that reads back to this value.
    const float as_float = static_cast<float>(value);
    for (int precision = 1; precision <= 9; ++precision) {
      const auto result =
          std::to_chars(buffer, buffer + sizeof(buffer), as_float, std::chars_format::general, precision);
      float parsed = 0;
      std::from_chars(buffer, result.ptr, parsed);
      if (ToBits(T(parsed)) == ToBits(value)) return std::string(buffer, result.ptr);
    }
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), as_float);
    return std::string(buffer, result.ptr);
  } else {
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    return std::string(buffer, result.ptr);
  }
}

template <typename T>
std::string FormatElement(T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return "(" + FormatFloatValue(value.real()) + ", " + FormatFloatValue(value.imag()) + ")";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    return FormatFloatValue(value);
  }
}

template <typename T>
void PrintArray(const Literal& literal, std::span<const T> values, size_t dim, size_t& next,
                std::string& out) {
  const auto& dims = literal.shape().dimensions();
  const bool innermost = dim + 1 == dims.size();
  out += innermost ? "{" : "{ ";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i) out += ", ";
    if (innermost) {
      out += FormatElement(values[next++]);
    } else {
      PrintArray(literal, values, dim + 1, next, out);
    }
  }
  out += innermost ? "}" : " }";
}

// Parses one floating-point element, exactly for its type.
template <typename T>
StatusOr<T> ParseFloatElement(HloLexer& lexer, std::string_view type_name) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  std::string_view token = lexer.ReadNumberToken();
  if (token.empty()) return lexer.Expected(std::string("a ") + std::string(type_name) + " value");
  const bool negative = token.front() == '-';
  if (token.front() == '-' || token.front() == '+') token.remove_prefix(1);
  using Wide = std::conditional_t<kIsLowFloat<T>, float, T>;
  if (token == "inf") {
    const Wide inf = std::numeric_limits<Wide>::infinity();
    return static_cast<T>(negative ? -inf : inf);
  }
  if (token.starts_with("nan")) {
    using Bits = typename BitsOf<T>::type;
    const int fraction_bits = FractionBits<T>();
    Bits fraction = static_cast<Bits>(Bits{1} << (fraction_bits - 1));
    if (token.size() > 3) {
      // "nan(0x...)": an explicit payload, non-zero and within the fraction.
      const std::string_view payload = token.substr(3);
      uint64_t value = 0;
      const bool hex = payload.starts_with("(0x") && payload.ends_with(")");
      const char* begin = payload.data() + 3;
      const char* end = payload.data() + payload.size() - 1;
      const auto parsed = hex ? std::from_chars(begin, end, value, 16)
                              : std::from_chars_result{begin, std::errc::invalid_argument};
      if (!hex || parsed.ec != std::errc() || parsed.ptr != end || value == 0 ||
          value >= (uint64_t{1} << fraction_bits)) {
        return lexer.ErrorAt(
            start, "invalid NaN payload '" + std::string(payload) + "' for " + std::string(type_name));
      }
      fraction = static_cast<Bits>(value);
    }
    const Bits exponent_all_ones =
        static_cast<Bits>(((Bits{1} << (sizeof(Bits) * 8 - 1 - fraction_bits)) - 1) << fraction_bits);
    Bits bits = static_cast<Bits>(exponent_all_ones | fraction);
    if (negative) bits = static_cast<Bits>(bits | (Bits{1} << (sizeof(Bits) * 8 - 1)));
    return FromBits<T>(bits);
  }
  Wide value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (end != token.data() + token.size() ||
      (error != std::errc() && error != std::errc::result_out_of_range)) {
    return lexer.ErrorAt(start, "invalid " + std::string(type_name) + " value '" + std::string(token) + "'");
  }
  if (error == std::errc::result_out_of_range) {
    // Too small for the type rounds to zero (as C's strtof does); too large
    // is an error rather than a silent infinity.
    double wide = 0;
    const auto [wide_end, wide_error] = std::from_chars(token.data(), token.data() + token.size(), wide);
    if (wide_error != std::errc() || wide_end != token.data() + token.size() || !(std::fabs(wide) < 1.0)) {
      return lexer.ErrorAt(
          start, "value '" + std::string(token) + "' is out of range for " + std::string(type_name));
    }
    value = static_cast<Wide>(wide);
  }
  return static_cast<T>(negative ? -value : value);
}

template <typename T>
StatusOr<T> ParseIntegerElement(HloLexer& lexer, std::string_view type_name) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  std::string_view token = lexer.ReadNumberToken();
  if (token.empty()) return lexer.Expected(std::string("an ") + std::string(type_name) + " value");
  if (token.front() == '+') token.remove_prefix(1);
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  Wide value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (end != token.data() + token.size() ||
      (error != std::errc() && error != std::errc::result_out_of_range)) {
    return lexer.ErrorAt(start, "invalid " + std::string(type_name) + " value '" + std::string(token) + "'");
  }
  if (error == std::errc::result_out_of_range ||
      value < static_cast<Wide>(std::numeric_limits<T>::lowest()) ||
      value > static_cast<Wide>(std::numeric_limits<T>::max())) {
    return lexer.ErrorAt(start,
                         "value '" + std::string(token) + "' is out of range for " + std::string(type_name));
  }
  return static_cast<T>(value);
}

template <typename T>
StatusOr<T> ParseElement(HloLexer& lexer, ElementType type) {
  const std::string_view type_name = ElementTypeName(type);
  if constexpr (std::is_same_v<T, bool>) {
    lexer.SkipSpace();
    const size_t start = lexer.offset();
    if (lexer.TryConsumeKeyword("true")) return true;
    if (lexer.TryConsumeKeyword("false")) return false;
    const std::string_view token = lexer.ReadNumberToken();
    if (token == "1") return true;
    if (token == "0") return false;
    lexer.Rewind(start);
    return lexer.Expected("a pred value (true, false, 1 or 0)");
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    using Part = typename T::value_type;
    if (!lexer.TryConsume('(')) return lexer.Expected("'(' starting a complex value (real, imag)");
    KILN_ASSIGN_OR_RETURN(Part real, ParseFloatElement<Part>(lexer, type_name));
    if (!lexer.TryConsume(',')) return lexer.Expected("',' between the real and imaginary parts");
    KILN_ASSIGN_OR_RETURN(Part imag, ParseFloatElement<Part>(lexer, type_name));
    if (!lexer.TryConsume(')')) return lexer.Expected("')' closing the complex value");
    return T(real, imag);
  } else if constexpr (std::is_integral_v<T>) {
    return ParseIntegerElement<T>(lexer, type_name);
  } else {
    return ParseFloatElement<T>(lexer, type_name);
  }
}

template <typename T>
Status ParseNested(HloLexer& lexer, const Shape& shape, size_t dim, std::vector<T>& values) {
  const int64_t expected = shape.dimensions(static_cast<int64_t>(dim));
  const bool innermost = dim + 1 == shape.dimensions().size();
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  if (!lexer.TryConsume('{'))
    return lexer.Expected("'{' starting dimension " + std::to_string(dim) + " of the constant");
  if (lexer.TryConsume("...")) {
    return Unimplemented(
        lexer.ErrorAt(start, "constant values are elided ('{...}'); print with large constants").message());
  }
  int64_t count = 0;
  if (!lexer.TryConsume('}')) {
    while (true) {
      if (count >= expected) {
        return lexer.ErrorAt(start, "dimension " + std::to_string(dim) + " of constant " + shape.ToString() +
                                        " has more than " + std::to_string(expected) + " elements");
      }
      if (innermost) {
        KILN_ASSIGN_OR_RETURN(T value, ParseElement<T>(lexer, shape.element_type()));
        values.push_back(value);
      } else {
        KILN_RETURN_IF_ERROR(ParseNested(lexer, shape, dim + 1, values));
      }
      ++count;
      if (lexer.TryConsume('}')) break;
      if (!lexer.TryConsume(',')) return lexer.Expected("',' or '}' in the constant");
    }
  }
  if (count != expected) {
    return lexer.ErrorAt(start, "dimension " + std::to_string(dim) + " of constant " + shape.ToString() +
                                    " has " + std::to_string(count) + " elements, expected " +
                                    std::to_string(expected));
  }
  return OkStatus();
}

StatusOr<Literal> ParseArrayLiteral(HloLexer& lexer, const Shape& shape) {
  if (shape.rank() > kMaxHloNesting) return lexer.Expected("a constant of rank at most 64");
  return DispatchElementType(shape.element_type(), [&](auto tag) -> StatusOr<Literal> {
    using T = decltype(tag);
    // Values are gathered first so a shape that claims more elements than
    // the text holds can never cause a large allocation.
    std::vector<T> values;
    if (shape.rank() == 0) {
      KILN_ASSIGN_OR_RETURN(T value, ParseElement<T>(lexer, shape.element_type()));
      values.push_back(value);
    } else {
      KILN_RETURN_IF_ERROR(ParseNested(lexer, shape, 0, values));
    }
    Literal literal(Shape(shape.element_type(), shape.dimensions()));
    auto out = literal.data<T>();
    for (size_t i = 0; i < values.size() && i < out.size(); ++i) out[i] = values[i];
    literal.set_layout(shape.layout());
    return literal;
  });
}

StatusOr<Literal> ParseLiteralAt(HloLexer& lexer, const Shape& shape, int depth) {
  if (depth > kMaxHloNesting) return lexer.Expected("a constant nested at most 64 deep");
  if (shape.IsArray()) return ParseArrayLiteral(lexer, shape);
  if (!shape.IsTuple()) return lexer.Expected("a constant of array or tuple shape, not " + shape.ToString());
  if (!lexer.TryConsume('(')) return lexer.Expected("'(' starting the tuple constant");
  std::vector<Literal> elements;
  const auto& element_shapes = shape.tuple_shapes();
  for (size_t i = 0; i < element_shapes.size(); ++i) {
    if (i > 0 && !lexer.TryConsume(',')) return lexer.Expected("',' between tuple constant elements");
    // XLA may write each element's shape before its value; it must agree.
    if (lexer.Peek() != '(' && ShapeStartsHere(lexer)) {
      KILN_ASSIGN_OR_RETURN(Shape written, ParseShapeText(lexer));
      if (!written.Compatible(element_shapes[i])) {
        return lexer.Expected("tuple element " + std::to_string(i) + " of shape " +
                              element_shapes[i].ToString());
      }
    }
    KILN_ASSIGN_OR_RETURN(Literal element, ParseLiteralAt(lexer, element_shapes[i], depth + 1));
    elements.push_back(std::move(element));
  }
  if (!lexer.TryConsume(')')) return lexer.Expected("')' closing the tuple constant");
  return Literal::Tuple(std::move(elements));
}

}  // namespace

StatusOr<Literal> ParseLiteralText(HloLexer& lexer, const Shape& shape) {
  return ParseLiteralAt(lexer, shape, 0);
}

std::string PrintLiteralText(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      if (i) out += ", ";
      out += PrintLiteralText(literal.tuple_elements()[i]);
    }
    return out + ")";
  }
  if (!shape.IsArray()) return "";
  return DispatchElementType(shape.element_type(), [&](auto tag) -> std::string {
    using T = decltype(tag);
    const auto values = literal.data<T>();
    if (shape.rank() == 0) return values.empty() ? std::string() : FormatElement(values[0]);
    if (static_cast<int64_t>(values.size()) < shape.element_count()) return "{...}";
    std::string out;
    size_t next = 0;
    PrintArray<T>(literal, values, 0, next, out);
    return out;
  });
}

std::string FormatFloatExactly(float value) { return FormatFloatValue(value); }
std::string FormatFloatExactly(double value) { return FormatFloatValue(value); }

}  // namespace kiln
