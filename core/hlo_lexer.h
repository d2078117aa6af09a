// A cursor over HLO text for the parser. HLO's grammar is context
// sensitive (`3x3`, `1_2x0_0`, `b01f_01io->b01f` are single values only after
// certain attribute names), so instead of a fixed token stream the lexer
// offers small "read one X here" primitives the parser picks from.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace kiln {

struct TextPosition {
  int line = 1;
  int column = 1;
};

class HloLexer {
 public:
  explicit HloLexer(std::string_view text) : text_(text) {}

  // Skips whitespace, `/* ... */` and `// ...` comments (XLA prints
  // `/*index=5*/` inside long tuples).
  void SkipSpace();
  // The next significant character (after SkipSpace), '\0' at the end.
  char Peek();
  // The character `ahead` positions after the next significant one, without
  // skipping anything in between; '\0' past the end.
  char PeekRaw(size_t ahead) const;
  bool AtEnd();

  // Consumes `expected` (after SkipSpace) when it is next.
  bool TryConsume(char expected);
  bool TryConsume(std::string_view expected);
  // Consumes the keyword `word` only when it is a whole name (not a prefix).
  bool TryConsumeKeyword(std::string_view word);

  // A name: optional '%' then [A-Za-z_][A-Za-z0-9_.-]*; the '%' is dropped.
  // Empty when no name starts here (nothing is consumed then).
  std::string_view ReadName();
  // A numeric literal token: [+-]? then digits/'.'/exponent, or inf / nan
  // (with an optional payload "nan(0x...)"). Empty when none starts here.
  std::string_view ReadNumberToken();
  // Characters up to whitespace or one of `,{}()` (for `3x3`, `1_2x0_0`,
  // `b01f_01io->b01f`, `LT`). May be empty.
  std::string_view ReadWord();
  // A double-quoted string with C escapes, unescaped.
  StatusOr<std::string> ReadString();
  // Skips one attribute value of any form: a balanced `{...}`, `(...)` or
  // `[...]` group, a string, or a bare word, honouring strings inside groups.
  // Iterative, so deep nesting cannot overflow the stack.
  Status SkipValue();
  // The raw text of a balanced `{...}` group including the braces.
  StatusOr<std::string_view> ReadBalancedBraces();

  size_t offset() const { return pos_; }
  // Moves the cursor back to an offset taken earlier (for lookahead).
  void Rewind(size_t offset) { pos_ = offset; }
  // Line and column (1-based) of a byte offset.
  TextPosition PositionOf(size_t offset) const;
  TextPosition position() const { return PositionOf(pos_); }
  // Describes what is at the cursor for "expected X but got Y" messages.
  std::string DescribeNext();

  // INVALID_ARGUMENT "line L, column C: <message>".
  Status ErrorAt(size_t offset, const std::string& message) const;
  // "expected <what> but got <next>" at the cursor.
  Status Expected(const std::string& what);

 private:
  Status SkipString();

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace kiln
