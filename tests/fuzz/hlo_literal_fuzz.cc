// libFuzzer entry for shapes and constants in HLO text, on their own: the
// input is a shape followed by a constant of that shape, as in
// `f32[2]{0} {1, nan(0x1)}` or `(s8[], pred[0]) (1, {})`. Any input must
// yield a value or an error, never a crash, hang or leak; and whatever parses
// must print, parse back to the same shape and bits, and print identically.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/hlo_lexer.h"
#include "core/hlo_literal_text.h"
#include "core/hlo_shape_text.h"

namespace {

struct ParsedConstant {
  kiln::Shape shape;
  kiln::Literal literal;
};

kiln::StatusOr<ParsedConstant> ParseConstant(std::string_view text) {
  kiln::HloLexer lexer(text);
  KILN_ASSIGN_OR_RETURN(kiln::Shape shape, kiln::ParseShapeText(lexer));
  KILN_ASSIGN_OR_RETURN(kiln::Literal literal, kiln::ParseLiteralText(lexer, shape));
  return ParsedConstant{std::move(shape), std::move(literal)};
}

std::string PrintConstant(const ParsedConstant& constant) {
  return kiln::PrintShapeText(constant.shape, /*print_layout=*/true) + " " +
         kiln::PrintLiteralText(constant.literal);
}

[[noreturn]] void Fail(const char* what, const std::string& printed) {
  std::fprintf(stderr, "%s:\n%s\n", what, printed.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kiln::StatusOr<ParsedConstant> constant = ParseConstant(text);
  if (!constant.ok()) return 0;
  const std::string printed = PrintConstant(*constant);
  kiln::StatusOr<ParsedConstant> reparsed = ParseConstant(printed);
  if (!reparsed.ok())
    Fail(("printed constant does not parse: " + reparsed.status().ToString()).c_str(), printed);
  if (reparsed->shape != constant->shape) Fail("the shape changed in a round trip", printed);
  if (reparsed->literal != constant->literal) Fail("the values changed in a round trip", printed);
  if (PrintConstant(*reparsed) != printed) Fail("printing is not stable", printed);
  return 0;
}
