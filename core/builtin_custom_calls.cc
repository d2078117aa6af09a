#include "core/builtin_custom_calls.h"

#include <cctype>
#include <charconv>

namespace kiln {
namespace {

struct RoutineNames {
  LapackRoutine routine;
  std::string_view real_name;     // after the s/d prefix
  std::string_view complex_name;  // after the c/z prefix
  std::string_view does;
};

// JAX's target names are "lapack_" + type letter + routine + "_ffi".
constexpr RoutineNames kRoutines[] = {
    {LapackRoutine::kPotrf, "potrf", "potrf", "Cholesky factor; info > 0 when not positive definite"},
    {LapackRoutine::kGetrf, "getrf", "getrf", "LU factor with row pivots (1-based); info > 0 when singular"},
    {LapackRoutine::kGeqrf, "geqrf", "geqrf", "QR factor as Householder reflectors and their scales"},
    {LapackRoutine::kOrgqr, "orgqr", "ungqr", "the Q of a QR factor from its Householder reflectors"},
    {LapackRoutine::kSyevd, "syevd", "heevd",
     "eigenvalues (ascending) and eigenvectors of a Hermitian matrix"},
    {LapackRoutine::kGesdd, "gesdd", "gesdd", "singular values (descending) and vectors"},
    {LapackRoutine::kGesvd, "gesvd", "gesvd", "singular values (descending) and vectors, by QR iteration"},
    {LapackRoutine::kTrsm, "trsm", "trsm", "solves a triangular system for many right-hand sides"},
    {LapackRoutine::kGeev, "geev", "geev", "eigenvalues and eigenvectors (complex) of a general matrix"},
    {LapackRoutine::kGees, "gees", "gees", "Schur form T and Schur vectors Z, A = Z T Z^H"},
    {LapackRoutine::kGehrd, "gehrd", "gehrd",
     "upper Hessenberg form as Householder reflectors and their scales"},
    {LapackRoutine::kSytrd, "sytrd", "hetrd", "tridiagonal form of a Hermitian matrix and its reflectors"},
};

struct TypeLetter {
  ElementType type;
  char letter;
};
constexpr TypeLetter kTypes[] = {
    {ElementType::kF32, 's'}, {ElementType::kF64, 'd'}, {ElementType::kC64, 'c'}, {ElementType::kC128, 'z'}};

std::vector<BuiltinCustomCall> MakeTable() {
  std::vector<BuiltinCustomCall> table;
  for (const RoutineNames& routine : kRoutines) {
    for (const TypeLetter& type : kTypes) {
      const bool complex = type.type == ElementType::kC64 || type.type == ElementType::kC128;
      std::string target = "lapack_";
      target += type.letter;
      target += complex ? routine.complex_name : routine.real_name;
      target += "_ffi";
      table.push_back({std::move(target), routine.routine, type.type, routine.does});
    }
  }
  return table;
}

void SkipSpaces(std::string_view text, size_t& pos) {
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
}

}  // namespace

const std::vector<BuiltinCustomCall>& BuiltinCustomCalls() {
  static const std::vector<BuiltinCustomCall>* table = new std::vector<BuiltinCustomCall>(MakeTable());
  return *table;
}

const BuiltinCustomCall* FindBuiltinCustomCall(std::string_view target) {
  for (const BuiltinCustomCall& call : BuiltinCustomCalls()) {
    if (call.target == target) return &call;
  }
  return nullptr;
}

StatusOr<std::map<std::string, int64_t>> ParseFfiIntegerAttributes(std::string_view text) {
  std::map<std::string, int64_t> attributes;
  size_t pos = 0;
  SkipSpaces(text, pos);
  // An absent backend_config means no attributes, as does "{}".
  if (pos == text.size()) return attributes;
  auto malformed = [&](std::string_view what) {
    return InvalidArgument("backend_config '", text, "': ", what, " at offset ", pos,
                           "; expected typed-FFI attributes like {uplo = 76 : ui8}");
  };
  if (text[pos] != '{') return malformed("no '{'");
  ++pos;
  SkipSpaces(text, pos);
  if (pos < text.size() && text[pos] == '}') return attributes;
  while (true) {
    SkipSpaces(text, pos);
    const size_t name_start = pos;
    while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_'))
      ++pos;
    if (pos == name_start) return malformed("no attribute name");
    std::string name(text.substr(name_start, pos - name_start));
    SkipSpaces(text, pos);
    if (pos >= text.size() || text[pos] != '=') return malformed("no '=' after the name");
    ++pos;
    SkipSpaces(text, pos);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
    if (error != std::errc()) return malformed("no integer value");
    pos = static_cast<size_t>(end - text.data());
    SkipSpaces(text, pos);
    if (pos >= text.size() || text[pos] != ':') return malformed("no ': type' after the value");
    ++pos;
    SkipSpaces(text, pos);
    const size_t type_start = pos;
    while (pos < text.size() && std::isalnum(static_cast<unsigned char>(text[pos]))) ++pos;
    const std::string_view type = text.substr(type_start, pos - type_start);
    if (type.size() < 2 || (type[0] != 'i' && type.substr(0, 2) != "ui")) return malformed("no integer type");
    if (!attributes.emplace(name, value).second) return malformed("attribute '" + name + "' given twice");
    SkipSpaces(text, pos);
    if (pos < text.size() && text[pos] == ',') {
      ++pos;
      continue;
    }
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      SkipSpaces(text, pos);
      if (pos != text.size()) return malformed("text after '}'");
      return attributes;
    }
    return malformed("no ',' or '}'");
  }
}

}  // namespace kiln
