#include "core/op_registry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "core/backend.h"
#include "core/builder.h"
#include "core/device_kernel_code.h"
#include "core/literal.h"

namespace kiln {
namespace {

// ---------------------------------------------------------------------------
// Text: a small scanner shared by attribute specs, values and dictionaries.

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool TryConsume(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  Status Expect(std::string_view token) {
    if (TryConsume(token)) return OkStatus();
    return Error("expected '", token, "'");
  }
  std::string Identifier() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  // A number token as written (sign, digits, '.', exponent, inf, nan).
  std::string NumberToken() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      bool exponent_sign =
          (c == '-' || c == '+') && pos_ > start && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E');
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || exponent_sign) {
        ++pos_;
      } else {
        break;
      }
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  StatusOr<std::string> QuotedString() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '"' && text_[pos_] != '\''))
      return Error("expected a string");
    const char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          case 'x': {
            if (pos_ + 2 > text_.size()) return Error("bad \\x escape");
            out += static_cast<char>(std::stoi(std::string(text_.substr(pos_, 2)), nullptr, 16));
            pos_ += 2;
            break;
          }
          default: out += e; break;
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }
  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgument(args..., " at offset ", pos_, " of '", text_, "'");
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::string Trim(std::string_view text) {
  size_t a = 0, b = text.size();
  while (a < b && std::isspace(static_cast<unsigned char>(text[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(text[b - 1]))) --b;
  return std::string(text.substr(a, b - a));
}

bool IsIdentifier(std::string_view name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string QuoteC(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string PrintDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string out = buffer;
  // Shortest form that reads back exactly.
  for (int precision = 1; precision < 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) {
      out = buffer;
      break;
    }
  }
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

bool LooksFloat(const std::string& token) {
  return token.find_first_of(".eE") != std::string::npos || token.find("inf") != std::string::npos ||
         token.find("nan") != std::string::npos;
}

StatusOr<AttrValue> NumberValue(const std::string& token, Scanner& scanner) {
  AttrValue value;
  if (token.empty()) return scanner.Error("expected a value");
  char* end = nullptr;
  if (LooksFloat(token)) {
    value.kind = AttrKind::kFloat;
    value.f = std::strtod(token.c_str(), &end);
  } else {
    value.kind = AttrKind::kInt;
    errno = 0;
    value.i = std::strtoll(token.c_str(), &end, 10);
    if (errno == ERANGE) return scanner.Error("integer '", token, "' out of range");
  }
  if (end == nullptr || *end != '\0') return scanner.Error("'", token, "' is not a number");
  // An optional MLIR-style type suffix (": i64", ": f32") as JAX prints it.
  if (scanner.TryConsume(":")) scanner.Identifier();
  return value;
}

template <typename T>
void AppendScalar(std::vector<uint8_t>& data, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  data.insert(data.end(), bytes, bytes + sizeof(T));
}

Status AppendTensorElement(ElementType type, double f, int64_t i, bool is_float, std::vector<uint8_t>& data) {
  switch (type) {
    case ElementType::kPred: AppendScalar<uint8_t>(data, (is_float ? f != 0 : i != 0) ? 1 : 0); break;
    case ElementType::kS8: AppendScalar<int8_t>(data, static_cast<int8_t>(is_float ? f : i)); break;
    case ElementType::kS16: AppendScalar<int16_t>(data, static_cast<int16_t>(is_float ? f : i)); break;
    case ElementType::kS32: AppendScalar<int32_t>(data, static_cast<int32_t>(is_float ? f : i)); break;
    case ElementType::kS64: AppendScalar<int64_t>(data, is_float ? static_cast<int64_t>(f) : i); break;
    case ElementType::kU8: AppendScalar<uint8_t>(data, static_cast<uint8_t>(is_float ? f : i)); break;
    case ElementType::kU16: AppendScalar<uint16_t>(data, static_cast<uint16_t>(is_float ? f : i)); break;
    case ElementType::kU32: AppendScalar<uint32_t>(data, static_cast<uint32_t>(is_float ? f : i)); break;
    case ElementType::kU64: AppendScalar<uint64_t>(data, static_cast<uint64_t>(is_float ? f : i)); break;
    case ElementType::kF32: AppendScalar<float>(data, static_cast<float>(is_float ? f : i)); break;
    case ElementType::kF64: AppendScalar<double>(data, is_float ? f : static_cast<double>(i)); break;
    default:
      return Unimplemented("tensor attributes of element type ", ElementTypeName(type), " are not supported");
  }
  return OkStatus();
}

std::string TensorElementText(ElementType type, const uint8_t* p) {
  auto get = [p](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (type) {
    case ElementType::kPred: return p[0] ? "1" : "0";
    case ElementType::kS8: return std::to_string(get(int8_t{}));
    case ElementType::kS16: return std::to_string(get(int16_t{}));
    case ElementType::kS32: return std::to_string(get(int32_t{}));
    case ElementType::kS64: return std::to_string(get(int64_t{}));
    case ElementType::kU8: return std::to_string(get(uint8_t{}));
    case ElementType::kU16: return std::to_string(get(uint16_t{}));
    case ElementType::kU32: return std::to_string(get(uint32_t{}));
    case ElementType::kU64: return std::to_string(get(uint64_t{}));
    case ElementType::kF32: return PrintDouble(get(float{}));
    case ElementType::kF64: return PrintDouble(get(double{}));
    default: return "?";
  }
}

StatusOr<AttrValue> ParseValue(Scanner& scanner);

StatusOr<AttrValue> ParseTensor(Scanner& scanner) {
  // tensor<s32[2], [5, 6]>  or TF's { dtype: DT_INT32 int_val: 5 } is not taken.
  AttrValue value;
  value.kind = AttrKind::kTensor;
  std::string type_name = scanner.Identifier();
  std::optional<ElementType> type = OpTypeFromName(type_name);
  if (!type) return scanner.Error("unknown element type '", type_name, "' in tensor");
  value.type = *type;
  KILN_RETURN_IF_ERROR(scanner.Expect("["));
  while (!scanner.TryConsume("]")) {
    std::string token = scanner.NumberToken();
    KILN_ASSIGN_OR_RETURN(AttrValue dim, NumberValue(token, scanner));
    if (dim.kind != AttrKind::kInt || dim.i < 0) return scanner.Error("bad tensor dimension");
    value.dims.push_back(dim.i);
    if (!scanner.TryConsume(",") && scanner.Peek() != ']') return scanner.Error("expected ',' or ']'");
  }
  KILN_RETURN_IF_ERROR(scanner.Expect(","));
  KILN_RETURN_IF_ERROR(scanner.Expect("["));
  int64_t count = 0;
  while (!scanner.TryConsume("]")) {
    std::string token = scanner.NumberToken();
    bool is_float = LooksFloat(token);
    KILN_ASSIGN_OR_RETURN(AttrValue element, NumberValue(token, scanner));
    KILN_RETURN_IF_ERROR(AppendTensorElement(value.type, element.f, element.i, is_float, value.data));
    ++count;
    if (!scanner.TryConsume(",") && scanner.Peek() != ']') return scanner.Error("expected ',' or ']'");
  }
  int64_t expected = 1;
  for (int64_t d : value.dims) expected *= d;
  if (count != expected) return scanner.Error("tensor of ", expected, " elements has ", count, " values");
  KILN_RETURN_IF_ERROR(scanner.Expect(">"));
  return value;
}

StatusOr<AttrValue> ParseValue(Scanner& scanner) {
  AttrValue value;
  char c = scanner.Peek();
  if (c == '"' || c == '\'') {
    value.kind = AttrKind::kString;
    KILN_ASSIGN_OR_RETURN(value.s, scanner.QuotedString());
    return value;
  }
  if (c == '[') {
    scanner.TryConsume("[");
    value.kind = AttrKind::kList;
    value.item_kind_known = false;
    while (!scanner.TryConsume("]")) {
      KILN_ASSIGN_OR_RETURN(AttrValue item, ParseValue(scanner));
      if (item.kind == AttrKind::kList) return scanner.Error("a list of lists is not an attribute value");
      if (!value.items.empty() && item.kind != value.item_kind) {
        // Ints and floats mix in a float list.
        if (item.kind == AttrKind::kFloat && value.item_kind == AttrKind::kInt) {
          for (AttrValue& earlier : value.items) {
            earlier.kind = AttrKind::kFloat;
            earlier.f = static_cast<double>(earlier.i);
          }
          value.item_kind = AttrKind::kFloat;
        } else if (item.kind == AttrKind::kInt && value.item_kind == AttrKind::kFloat) {
          item.kind = AttrKind::kFloat;
          item.f = static_cast<double>(item.i);
        } else {
          return scanner.Error("a list mixes ", AttrKindName(value.item_kind), " and ",
                               AttrKindName(item.kind));
        }
      } else if (value.items.empty()) {
        value.item_kind = item.kind;
        value.item_kind_known = true;
      }
      value.items.push_back(std::move(item));
      if (!scanner.TryConsume(",") && scanner.Peek() != ']') return scanner.Error("expected ',' or ']'");
    }
    return value;
  }
  if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
    return NumberValue(scanner.NumberToken(), scanner);
  }
  std::string word = scanner.Identifier();
  if (word == "true" || word == "false") {
    value.kind = AttrKind::kBool;
    value.i = word == "true";
    return value;
  }
  if (word == "inf" || word == "nan") {
    value.kind = AttrKind::kFloat;
    value.f = word == "inf" ? HUGE_VAL : NAN;
    return value;
  }
  if (word == "shape" && scanner.TryConsume("<")) {
    value.kind = AttrKind::kShape;
    while (!scanner.TryConsume(">")) {
      KILN_ASSIGN_OR_RETURN(AttrValue dim, NumberValue(scanner.NumberToken(), scanner));
      if (dim.kind != AttrKind::kInt || dim.i < 0) return scanner.Error("bad shape dimension");
      value.dims.push_back(dim.i);
      if (!scanner.TryConsume(",") && scanner.Peek() != '>') return scanner.Error("expected ',' or '>'");
    }
    return value;
  }
  if (word == "tensor" && scanner.TryConsume("<")) return ParseTensor(scanner);
  if (std::optional<ElementType> type = OpTypeFromName(word)) {
    value.kind = AttrKind::kType;
    value.type = *type;
    return value;
  }
  if (word.empty()) return scanner.Error("expected a value");
  return scanner.Error("'", word,
                       "' is not a value (int, float, bool, string, type, shape<...>, tensor<...>, [...])");
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : std::string(separator)) + part;
  return out;
}

std::string TypeSetText(const std::vector<ElementType>& types) {
  std::vector<std::string> names;
  for (ElementType type : types) names.emplace_back(ElementTypeName(type));
  return "{" + Join(names) + "}";
}

// ---------------------------------------------------------------------------
// The registry.

struct KernelEntry {
  std::string backend;
  ElementType type;
  OpKernelFunction function;
  std::shared_ptr<void> keep_alive;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const OpDef>, std::less<>> ops;
  std::map<std::string, std::vector<KernelEntry>, std::less<>> kernels;
  std::map<std::string, std::vector<std::shared_ptr<const OpDeviceKernel>>, std::less<>> device_kernels;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: safe at exit
  return *registry;
}

// The plain custom-call table entry that marks a registered op's name taken,
// so kiln_register_custom_call refuses it and CheckCustomCallTargetsRegistered
// accepts it; the host evaluator runs the op's kernel instead.
void RegisteredOpMarker(void*, const void**) {}

bool IsHostBackend(std::string_view backend) { return backend == "cpu" || backend == "interpreter"; }
bool IsDeviceBackend(std::string_view backend) { return backend == "vulkan" || backend == "cuda"; }

std::string_view TypeOrAny(ElementType type) {
  return type == ElementType::kInvalid ? "any type" : ElementTypeName(type);
}

}  // namespace

std::string_view AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "string";
    case AttrKind::kType: return "type";
    case AttrKind::kShape: return "shape";
    case AttrKind::kTensor: return "tensor";
    case AttrKind::kList: return "list";
  }
  return "?";
}

const AttrValue* FindAttr(const AttrList& attrs, std::string_view name) {
  for (const auto& [key, value] : attrs)
    if (key == name) return &value;
  return nullptr;
}

std::optional<ElementType> OpTypeFromName(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.rfind("dt_", 0) == 0) lower = lower.substr(3);
  static const std::map<std::string, ElementType, std::less<>> kNames = {
      {"bool", ElementType::kPred},      {"int8", ElementType::kS8},       {"int16", ElementType::kS16},
      {"int32", ElementType::kS32},      {"int64", ElementType::kS64},     {"uint8", ElementType::kU8},
      {"uint16", ElementType::kU16},     {"uint32", ElementType::kU32},    {"uint64", ElementType::kU64},
      {"half", ElementType::kF16},       {"float16", ElementType::kF16},   {"bfloat16", ElementType::kBF16},
      {"float", ElementType::kF32},      {"float32", ElementType::kF32},   {"double", ElementType::kF64},
      {"float64", ElementType::kF64},    {"complex64", ElementType::kC64}, {"complex128", ElementType::kC128},
      {"scomplex64", ElementType::kC64},
  };
  auto it = kNames.find(lower);
  if (it != kNames.end()) return it->second;
  std::optional<ElementType> type = ElementTypeFromName(lower);
  if (type && IsArrayType(*type)) return type;
  return std::nullopt;
}

std::string PrintAttrValue(const AttrValue& value) {
  switch (value.kind) {
    case AttrKind::kInt: return std::to_string(value.i);
    case AttrKind::kFloat: return PrintDouble(value.f);
    case AttrKind::kBool: return value.i ? "true" : "false";
    case AttrKind::kString: return QuoteC(value.s);
    case AttrKind::kType: return std::string(ElementTypeName(value.type));
    case AttrKind::kShape: {
      std::vector<std::string> dims;
      for (int64_t d : value.dims) dims.push_back(std::to_string(d));
      return "shape<" + Join(dims, ",") + ">";
    }
    case AttrKind::kTensor: {
      std::vector<std::string> dims, elements;
      for (int64_t d : value.dims) dims.push_back(std::to_string(d));
      const size_t width = static_cast<size_t>(ByteWidth(value.type));
      for (size_t offset = 0; width > 0 && offset + width <= value.data.size(); offset += width)
        elements.push_back(TensorElementText(value.type, value.data.data() + offset));
      return "tensor<" + std::string(ElementTypeName(value.type)) + "[" + Join(dims, ",") + "], [" +
             Join(elements) + "]>";
    }
    case AttrKind::kList: {
      std::vector<std::string> items;
      for (const AttrValue& item : value.items) items.push_back(PrintAttrValue(item));
      return "[" + Join(items) + "]";
    }
  }
  return "?";
}

std::string PrintAttrDict(const AttrList& attrs) {
  std::vector<std::string> entries;
  for (const auto& [name, value] : attrs) entries.push_back(name + " = " + PrintAttrValue(value));
  return "{" + Join(entries) + "}";
}

StatusOr<AttrValue> ParseAttrValueText(std::string_view text) {
  Scanner scanner(text);
  KILN_ASSIGN_OR_RETURN(AttrValue value, ParseValue(scanner));
  if (!scanner.AtEnd()) return scanner.Error("unexpected text after the value");
  return value;
}

StatusOr<AttrList> ParseAttrDict(std::string_view text) {
  AttrList attrs;
  Scanner scanner(text);
  if (scanner.AtEnd()) return attrs;  // no attributes at all
  KILN_RETURN_IF_ERROR(scanner.Expect("{"));
  while (!scanner.TryConsume("}")) {
    std::string name = scanner.Identifier();
    if (!IsIdentifier(name)) return scanner.Error("expected an attribute name");
    KILN_RETURN_IF_ERROR(scanner.Expect("="));
    KILN_ASSIGN_OR_RETURN(AttrValue value, ParseValue(scanner));
    if (FindAttr(attrs, name) != nullptr) return InvalidArgument("attribute '", name, "' is given twice");
    attrs.emplace_back(std::move(name), std::move(value));
    if (!scanner.TryConsume(",") && scanner.Peek() != '}') return scanner.Error("expected ',' or '}'");
  }
  if (!scanner.AtEnd()) return scanner.Error("unexpected text after the attributes");
  return attrs;
}

// ---------------------------------------------------------------------------
// Definitions.

const AttrDef* OpDef::FindAttrDef(std::string_view attr) const {
  for (const AttrDef& def : attrs)
    if (def.name == attr) return &def;
  return nullptr;
}

namespace {

std::vector<ElementType> NamedTypeSet(std::string_view name) {
  std::vector<ElementType> ints = {ElementType::kS8, ElementType::kS16, ElementType::kS32, ElementType::kS64,
                                   ElementType::kU8, ElementType::kU16, ElementType::kU32, ElementType::kU64};
  std::vector<ElementType> reals = ints;
  for (ElementType t : {ElementType::kF16, ElementType::kBF16, ElementType::kF32, ElementType::kF64})
    reals.push_back(t);
  if (name == "realnumbertype") return reals;
  if (name == "numbertype" || name == "numerictype") {
    reals.push_back(ElementType::kC64);
    reals.push_back(ElementType::kC128);
    return reals;
  }
  // Kiln has no quantized element types; its 8- and 32-bit integers hold them.
  if (name == "quantizedtype")
    return {ElementType::kS8, ElementType::kU8, ElementType::kS16, ElementType::kU16, ElementType::kS32};
  return {};
}

// Parses `{a, b}` after the '{': types or quoted strings.
Status ParseSet(Scanner& scanner, AttrDef& def) {
  if (scanner.Peek() == '\'' || scanner.Peek() == '"') {
    def.kind = AttrKind::kString;
    while (!scanner.TryConsume("}")) {
      KILN_ASSIGN_OR_RETURN(std::string s, scanner.QuotedString());
      def.allowed_strings.push_back(std::move(s));
      if (!scanner.TryConsume(",") && scanner.Peek() != '}') return scanner.Error("expected ',' or '}'");
    }
    return OkStatus();
  }
  def.kind = AttrKind::kType;
  while (!scanner.TryConsume("}")) {
    std::string name = scanner.Identifier();
    std::optional<ElementType> type = OpTypeFromName(name);
    if (!type) return scanner.Error("'", name, "' is not an element type");
    def.allowed_types.push_back(*type);
    if (!scanner.TryConsume(",") && scanner.Peek() != '}') return scanner.Error("expected ',' or '}'");
  }
  if (def.allowed_types.empty()) return scanner.Error("an empty type set");
  return OkStatus();
}

Status ParseScalarKind(Scanner& scanner, AttrDef& def) {
  if (scanner.TryConsume("{")) return ParseSet(scanner, def);
  std::string word = scanner.Identifier();
  static const std::map<std::string, AttrKind, std::less<>> kKinds = {
      {"int", AttrKind::kInt},       {"float", AttrKind::kFloat}, {"bool", AttrKind::kBool},
      {"string", AttrKind::kString}, {"type", AttrKind::kType},   {"shape", AttrKind::kShape},
      {"tensor", AttrKind::kTensor}};
  auto it = kKinds.find(word);
  if (it != kKinds.end()) {
    def.kind = it->second;
    return OkStatus();
  }
  std::vector<ElementType> set = NamedTypeSet(word);
  if (!set.empty()) {
    def.kind = AttrKind::kType;
    def.allowed_types = set;
    return OkStatus();
  }
  return scanner.Error("unknown attribute type '", word,
                       "' (string, int, float, bool, type, shape, tensor, list(...), {...}, numbertype, "
                       "realnumbertype, quantizedtype)");
}

// Converts `value` to the kind `def` declares, if it can (an int for a
// float; an empty list); else INVALID_ARGUMENT.
Status CoerceAttr(std::string_view op, const AttrDef& def, AttrValue& value) {
  auto coerce_scalar = [&](AttrKind want, AttrValue& v) -> bool {
    if (v.kind == want) return true;
    if (want == AttrKind::kFloat && v.kind == AttrKind::kInt) {
      v.kind = AttrKind::kFloat;
      v.f = static_cast<double>(v.i);
      return true;
    }
    return false;
  };
  if (def.kind == AttrKind::kList) {
    if (value.kind != AttrKind::kList) {
      return InvalidArgument(op, ": attribute '", def.name, "' must be list(", AttrKindName(def.item_kind),
                             "), got ", AttrKindName(value.kind), " ", PrintAttrValue(value));
    }
    for (AttrValue& item : value.items) {
      if (!coerce_scalar(def.item_kind, item)) {
        return InvalidArgument(op, ": attribute '", def.name, "' must be list(", AttrKindName(def.item_kind),
                               "), got an item of kind ", AttrKindName(item.kind), " (", PrintAttrValue(item),
                               ")");
      }
    }
    value.item_kind = def.item_kind;
    value.item_kind_known = true;
    return OkStatus();
  }
  if (!coerce_scalar(def.kind, value)) {
    return InvalidArgument(op, ": attribute '", def.name, "' must be ", AttrKindName(def.kind), ", got ",
                           AttrKindName(value.kind), " ", PrintAttrValue(value));
  }
  return OkStatus();
}

Status CheckAttrConstraints(std::string_view op, const AttrDef& def, const AttrValue& value) {
  auto check_type = [&](ElementType type) -> Status {
    if (!def.allowed_types.empty() &&
        std::find(def.allowed_types.begin(), def.allowed_types.end(), type) == def.allowed_types.end()) {
      return InvalidArgument(op, ": attribute '", def.name, "' is ", ElementTypeName(type), ", not one of ",
                             TypeSetText(def.allowed_types));
    }
    return OkStatus();
  };
  auto check_string = [&](const std::string& s) -> Status {
    if (!def.allowed_strings.empty() &&
        std::find(def.allowed_strings.begin(), def.allowed_strings.end(), s) == def.allowed_strings.end()) {
      std::vector<std::string> quoted;
      for (const std::string& allowed : def.allowed_strings) quoted.push_back(QuoteC(allowed));
      return InvalidArgument(op, ": attribute '", def.name, "' is ", QuoteC(s), ", not one of {",
                             Join(quoted), "}");
    }
    return OkStatus();
  };
  if (def.kind == AttrKind::kList) {
    if (def.minimum && static_cast<int64_t>(value.items.size()) < *def.minimum) {
      return InvalidArgument(op, ": attribute '", def.name, "' has ", value.items.size(),
                             " item(s), fewer than its minimum ", *def.minimum);
    }
    for (const AttrValue& item : value.items) {
      if (def.item_kind == AttrKind::kType) KILN_RETURN_IF_ERROR(check_type(item.type));
      if (def.item_kind == AttrKind::kString) KILN_RETURN_IF_ERROR(check_string(item.s));
    }
    return OkStatus();
  }
  if (def.kind == AttrKind::kInt && def.minimum && value.i < *def.minimum) {
    return InvalidArgument(op, ": attribute '", def.name, "' is ", value.i, ", less than its minimum ",
                           *def.minimum);
  }
  if (def.kind == AttrKind::kType) return check_type(value.type);
  if (def.kind == AttrKind::kString) return check_string(value.s);
  return OkStatus();
}

StatusOr<IoDef> ParseIo(std::string_view spec, const char* what) {
  IoDef io;
  io.spec = Trim(spec);
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    return InvalidArgument(what, " '", io.spec, "' needs the form 'name: type' (e.g. 'to_zero: int32')");
  }
  io.name = Trim(spec.substr(0, colon));
  if (!IsIdentifier(io.name)) return InvalidArgument(what, " name '", io.name, "' is not an identifier");
  std::string type = Trim(spec.substr(colon + 1));
  size_t star = type.find('*');
  if (star != std::string::npos) {
    io.number_attr = Trim(std::string_view(type).substr(0, star));
    type = Trim(std::string_view(type).substr(star + 1));
    if (!IsIdentifier(io.number_attr))
      return InvalidArgument(what, " '", io.spec, "': '", io.number_attr, "' is not an attribute name");
  }
  if (std::optional<ElementType> fixed = OpTypeFromName(type)) {
    io.type = fixed;
  } else if (IsIdentifier(type)) {
    io.type_attr = type;
  } else {
    return InvalidArgument(what, " '", io.spec, "': '", type,
                           "' is neither an element type nor an attribute name");
  }
  return io;
}

}  // namespace

Status OpDef::AddAttr(std::string_view spec) {
  AttrDef def;
  def.spec = Trim(spec);
  Scanner scanner(spec);
  def.name = scanner.Identifier();
  if (!IsIdentifier(def.name))
    return InvalidArgument(name, ": attribute spec '", def.spec, "' must start with a name");
  if (FindAttrDef(def.name) != nullptr)
    return AlreadyExists(name, ": attribute '", def.name, "' is defined twice");
  KILN_RETURN_IF_ERROR(scanner.Expect(":"));
  if (scanner.TryConsume("list(")) {
    AttrDef item;
    KILN_RETURN_IF_ERROR(ParseScalarKind(scanner, item));
    KILN_RETURN_IF_ERROR(scanner.Expect(")"));
    def.kind = AttrKind::kList;
    def.item_kind = item.kind;
    def.allowed_types = item.allowed_types;
    def.allowed_strings = item.allowed_strings;
  } else {
    KILN_RETURN_IF_ERROR(ParseScalarKind(scanner, def));
  }
  if (scanner.TryConsume(">=")) {
    if (def.kind != AttrKind::kInt && def.kind != AttrKind::kList) {
      return InvalidArgument(name, ": attribute '", def.name,
                             "': '>=' applies to int and list attributes only");
    }
    KILN_ASSIGN_OR_RETURN(AttrValue minimum, NumberValue(scanner.NumberToken(), scanner));
    if (minimum.kind != AttrKind::kInt) return scanner.Error("the minimum must be an integer");
    def.minimum = minimum.i;
  }
  if (scanner.TryConsume("=")) {
    KILN_ASSIGN_OR_RETURN(AttrValue value, ParseValue(scanner));
    Status coerced = CoerceAttr(name, def, value);
    if (!coerced.ok()) return InvalidArgument("default of ", coerced.message());
    Status allowed = CheckAttrConstraints(name, def, value);
    if (!allowed.ok()) return InvalidArgument("default of ", allowed.message());
    def.default_value = std::move(value);
  }
  if (!scanner.AtEnd()) return scanner.Error(name, ": unexpected text in attribute spec");
  attrs.push_back(std::move(def));
  return OkStatus();
}

Status OpDef::AddInput(std::string_view spec) {
  KILN_ASSIGN_OR_RETURN(IoDef io, ParseIo(spec, "input"));
  inputs.push_back(std::move(io));
  return OkStatus();
}

Status OpDef::AddOutput(std::string_view spec) {
  KILN_ASSIGN_OR_RETURN(IoDef io, ParseIo(spec, "output"));
  outputs.push_back(std::move(io));
  return OkStatus();
}

namespace {

Status CheckIoRefs(const OpDef& def, const IoDef& io, const char* what) {
  if (!io.number_attr.empty()) {
    const AttrDef* n = def.FindAttrDef(io.number_attr);
    if (n == nullptr || n->kind != AttrKind::kInt) {
      return InvalidArgument(def.name, ": ", what, " '", io.spec, "': '", io.number_attr,
                             "' must be an int attribute");
    }
  }
  if (!io.type_attr.empty()) {
    const AttrDef* t = def.FindAttrDef(io.type_attr);
    bool is_type = t != nullptr && t->kind == AttrKind::kType;
    bool is_type_list = t != nullptr && t->kind == AttrKind::kList && t->item_kind == AttrKind::kType;
    if (!is_type && !(is_type_list && io.number_attr.empty())) {
      return InvalidArgument(def.name, ": ", what, " '", io.spec, "': '", io.type_attr,
                             "' must be a type attribute",
                             io.number_attr.empty() ? " or a list(type) one" : "");
    }
  }
  return OkStatus();
}

bool IsTypeList(const OpDef& def, const IoDef& io) {
  if (io.type_attr.empty()) return false;
  const AttrDef* t = def.FindAttrDef(io.type_attr);
  return t != nullptr && t->kind == AttrKind::kList;
}

}  // namespace

Status RegisterOp(OpDef def) {
  if (!IsIdentifier(def.name)) {
    return InvalidArgument("op name '", def.name,
                           "' must start with a letter and hold letters, digits and '_'");
  }
  for (const IoDef& io : def.inputs) KILN_RETURN_IF_ERROR(CheckIoRefs(def, io, "input"));
  for (const IoDef& io : def.outputs) KILN_RETURN_IF_ERROR(CheckIoRefs(def, io, "output"));
  if (def.outputs.empty()) return InvalidArgument(def.name, ": an op needs at least one output");
  for (const IoDef& output : def.outputs) {
    // An output's count must come from an attribute or from its type.
    if (!output.number_attr.empty() || IsTypeList(def, output) || output.type) continue;
    (void)output;
  }
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.ops.count(def.name) != 0) return AlreadyExists("op '", def.name, "' is already registered");
  KILN_RETURN_IF_ERROR(RegisterCustomCallTarget(def.name, &RegisteredOpMarker)
                           .WithContext("registering op '" + def.name + "'"));
  std::string name = def.name;
  registry.ops.emplace(std::move(name), std::make_shared<const OpDef>(std::move(def)));
  return OkStatus();
}

std::shared_ptr<const OpDef> FindRegisteredOp(std::string_view name) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.ops.find(name);
  return it == registry.ops.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const OpDef>> RegisteredOps() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<std::shared_ptr<const OpDef>> out;
  for (const auto& [name, def] : registry.ops) out.push_back(def);
  return out;
}

Status RegisterOpKernel(std::string_view op, std::string_view backend, ElementType type,
                        OpKernelFunction kernel, std::shared_ptr<void> keep_alive) {
  if (!kernel) return InvalidArgument("op '", op, "': the kernel function is null");
  if (type != ElementType::kInvalid && !IsArrayType(type)) {
    return InvalidArgument("op '", op, "': a kernel's element type must be an array type, got ",
                           ElementTypeName(type));
  }
  std::vector<std::string> backends;
  if (backend == "host") {
    backends = {"cpu", "interpreter"};
  } else if (IsHostBackend(backend)) {
    backends = {std::string(backend)};
  } else if (IsDeviceBackend(backend)) {
    return InvalidArgument("op '", op,
                           "': host-function kernels run on cpu and interpreter only; register a ",
                           backend == "vulkan" ? "SPIR-V" : "PTX", " kernel for ", backend,
                           " with kiln_user_op_register_device_kernel");
  } else {
    return InvalidArgument("op '", op, "': unknown backend '", backend, "' (cpu, interpreter or host)");
  }
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.ops.find(op) == registry.ops.end()) {
    return NotFound("op '", op, "' is not registered; register the op before its kernels");
  }
  std::vector<KernelEntry>& entries = registry.kernels[std::string(op)];
  for (const std::string& b : backends) {
    for (const KernelEntry& entry : entries) {
      if (entry.backend == b && entry.type == type) {
        return AlreadyExists("op '", op, "' already has a ", b, " kernel for ", TypeOrAny(type));
      }
    }
  }
  for (const std::string& b : backends) entries.push_back({b, type, kernel, keep_alive});
  return OkStatus();
}

OpKernelFunction FindOpKernel(std::string_view op, std::string_view backend, ElementType type) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.kernels.find(op);
  if (it == registry.kernels.end()) return nullptr;
  const KernelEntry* any = nullptr;
  for (const KernelEntry& entry : it->second) {
    // "host": the host evaluator, which runs cpu and interpreter kernels alike.
    if (entry.backend != backend && !(backend == "host" && IsHostBackend(entry.backend))) continue;
    if (entry.type == type) return entry.function;
    if (entry.type == ElementType::kInvalid) any = &entry;
  }
  return any != nullptr ? any->function : nullptr;
}

Status RegisterOpDeviceKernel(std::string_view op, OpDeviceKernel kernel) {
  if (!IsDeviceBackend(kernel.backend)) {
    return InvalidArgument("op '", op, "': device kernels are for vulkan (SPIR-V) and cuda (PTX), not '",
                           kernel.backend, "'; register a host kernel with kiln_user_op_register_kernel");
  }
  if (kernel.type != ElementType::kInvalid && !IsArrayType(kernel.type)) {
    return InvalidArgument("op '", op, "': a kernel's element type must be an array type, got ",
                           ElementTypeName(kernel.type));
  }
  if (FindRegisteredOp(op) == nullptr)
    return NotFound("op '", op, "' is not registered; register the op before its kernels");
  KILN_RETURN_IF_ERROR(CheckDeviceKernelCode(op, kernel.backend, kernel.code, kernel.entry));
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<std::shared_ptr<const OpDeviceKernel>>& entries = registry.device_kernels[std::string(op)];
  for (const std::shared_ptr<const OpDeviceKernel>& entry : entries) {
    if (entry->backend == kernel.backend && entry->type == kernel.type) {
      return AlreadyExists("op '", op, "' already has a ", kernel.backend, " kernel for ",
                           TypeOrAny(kernel.type));
    }
  }
  entries.push_back(std::make_shared<const OpDeviceKernel>(std::move(kernel)));
  return OkStatus();
}

std::shared_ptr<const OpDeviceKernel> FindOpDeviceKernel(std::string_view op, std::string_view backend,
                                                         ElementType type) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.device_kernels.find(op);
  if (it == registry.device_kernels.end()) return nullptr;
  std::shared_ptr<const OpDeviceKernel> any;
  for (const std::shared_ptr<const OpDeviceKernel>& entry : it->second) {
    if (entry->backend != backend) continue;
    if (entry->type == type) return entry;
    if (entry->type == ElementType::kInvalid) any = entry;
  }
  return any;
}

std::string DescribeOpKernels(std::string_view op) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<std::string> parts;
  auto type_name = [](ElementType type) {
    return std::string(type == ElementType::kInvalid ? "any" : ElementTypeName(type));
  };
  if (auto it = registry.kernels.find(op); it != registry.kernels.end()) {
    for (const KernelEntry& entry : it->second) parts.push_back(entry.backend + ":" + type_name(entry.type));
  }
  if (auto it = registry.device_kernels.find(op); it != registry.device_kernels.end()) {
    for (const std::shared_ptr<const OpDeviceKernel>& entry : it->second)
      parts.push_back(entry->backend + ":" + type_name(entry->type) + " (" + entry->entry + ")");
  }
  return parts.empty() ? "none" : Join(parts);
}

ElementType KernelElementType(std::span<const Shape> operands, const Shape& result) {
  for (const Shape& operand : operands)
    if (operand.IsArray()) return operand.element_type();
  if (result.IsArray()) return result.element_type();
  if (result.IsTuple() && !result.tuple_shapes().empty()) return result.tuple_shapes(0).element_type();
  return ElementType::kInvalid;
}

// ---------------------------------------------------------------------------
// Resolving a call.

StatusOr<ResolvedOpCall> ResolveOpCall(const OpDef& def, std::span<const Shape> operands,
                                       const AttrList& given) {
  const std::string& op = def.name;
  std::map<std::string, AttrValue, std::less<>> values;
  for (const auto& [name, value] : given) {
    const AttrDef* attr = def.FindAttrDef(name);
    if (attr == nullptr) {
      std::vector<std::string> names;
      for (const AttrDef& a : def.attrs) names.push_back(a.name);
      return InvalidArgument(op, ": unknown attribute '", name,
                             "' (the op has: ", names.empty() ? std::string("none") : Join(names), ")");
    }
    AttrValue coerced = value;
    KILN_RETURN_IF_ERROR(CoerceAttr(op, *attr, coerced));
    values[name] = std::move(coerced);
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].IsArray()) {
      return InvalidArgument(op, ": operand ", i, " is ", operands[i].ToString(),
                             "; a registered op takes arrays");
    }
  }
  // How many operands each input takes.
  std::vector<int64_t> counts(def.inputs.size(), -1);
  int64_t known = 0;
  int unknown = -1;
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    const IoDef& input = def.inputs[i];
    if (!input.number_attr.empty()) {
      auto it = values.find(input.number_attr);
      if (it != values.end()) counts[i] = it->second.i;
    } else if (IsTypeList(def, input)) {
      auto it = values.find(input.type_attr);
      if (it != values.end()) counts[i] = static_cast<int64_t>(it->second.items.size());
    } else {
      counts[i] = 1;
    }
    if (counts[i] >= 0) {
      known += counts[i];
    } else if (unknown >= 0) {
      return InvalidArgument(op, ": inputs '", def.inputs[static_cast<size_t>(unknown)].name, "' and '",
                             input.name, "' are both lists of unknown length; give their length attributes");
    } else {
      unknown = static_cast<int>(i);
    }
  }
  const int64_t num_operands = static_cast<int64_t>(operands.size());
  if (unknown >= 0) {
    if (num_operands < known) {
      return InvalidArgument(op, ": ", num_operands, " operand(s) are too few for its inputs (", Join([&] {
                               std::vector<std::string> specs;
                               for (const IoDef& io : def.inputs) specs.push_back(io.spec);
                               return specs;
                             }()),
                             ")");
    }
    counts[static_cast<size_t>(unknown)] = num_operands - known;
    known = num_operands;
  }
  if (known != num_operands) {
    return InvalidArgument(op, ": takes ", known, " operand(s) for its inputs, got ", num_operands);
  }
  // Types and list lengths of the inputs; infers type and length attributes.
  size_t next = 0;
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    const IoDef& input = def.inputs[i];
    std::span<const Shape> mine = operands.subspan(next, static_cast<size_t>(counts[i]));
    next += mine.size();
    if (!input.number_attr.empty()) {
      AttrValue n;
      n.kind = AttrKind::kInt;
      n.i = counts[i];
      auto it = values.find(input.number_attr);
      if (it == values.end()) values[input.number_attr] = n;
      const AttrDef* n_def = def.FindAttrDef(input.number_attr);
      int64_t minimum = n_def->minimum.value_or(1);  // a list input has at least one tensor unless told
      if (counts[i] < minimum) {
        return InvalidArgument(op, ": input '", input.name, "' (", input.spec, ") has ", counts[i],
                               " tensor(s), fewer than its minimum ", minimum, " (attribute '",
                               input.number_attr, "')");
      }
    }
    if (IsTypeList(def, input)) {
      AttrValue list;
      list.kind = AttrKind::kList;
      list.item_kind = AttrKind::kType;
      for (const Shape& s : mine) {
        AttrValue t;
        t.kind = AttrKind::kType;
        t.type = s.element_type();
        list.items.push_back(t);
      }
      auto it = values.find(input.type_attr);
      if (it != values.end()) {
        for (size_t k = 0; k < mine.size(); ++k) {
          if (it->second.items[k].type != mine[k].element_type()) {
            return InvalidArgument(op, ": input '", input.name, "' tensor ", k, " is ",
                                   ElementTypeName(mine[k].element_type()), " but attribute '",
                                   input.type_attr, "' says ", ElementTypeName(it->second.items[k].type));
          }
        }
      } else {
        values[input.type_attr] = list;
      }
      continue;
    }
    for (size_t k = 0; k < mine.size(); ++k) {
      ElementType got = mine[k].element_type();
      std::string where =
          "input '" + input.name + "'" + (input.number_attr.empty() ? "" : " tensor " + std::to_string(k));
      if (input.type) {
        if (got != *input.type) {
          return InvalidArgument(op, ": ", where, " must be ", ElementTypeName(*input.type), " (", input.spec,
                                 "), got ", ElementTypeName(got));
        }
        continue;
      }
      auto it = values.find(input.type_attr);
      if (it == values.end()) {
        AttrValue t;
        t.kind = AttrKind::kType;
        t.type = got;
        values[input.type_attr] = t;
      } else if (it->second.type != got) {
        return InvalidArgument(op, ": ", where, " is ", ElementTypeName(got), " but type attribute '",
                               input.type_attr, "' is ", ElementTypeName(it->second.type),
                               " (from an earlier input or given)");
      }
    }
  }
  // Defaults, then every attribute present and within its constraints.
  ResolvedOpCall call;
  for (const AttrDef& attr : def.attrs) {
    auto it = values.find(attr.name);
    if (it == values.end()) {
      if (!attr.default_value) {
        return InvalidArgument(op, ": attribute '", attr.name, "' (", attr.spec,
                               ") is missing and has no default");
      }
      it = values.emplace(attr.name, *attr.default_value).first;
    }
    KILN_RETURN_IF_ERROR(CheckAttrConstraints(op, attr, it->second));
    call.attrs.emplace_back(attr.name, it->second);
  }
  // Output types and counts.
  for (const IoDef& output : def.outputs) {
    std::vector<ElementType> types;
    if (IsTypeList(def, output)) {
      for (const AttrValue& t : FindAttr(call.attrs, output.type_attr)->items) types.push_back(t.type);
    } else {
      ElementType type = output.type ? *output.type : FindAttr(call.attrs, output.type_attr)->type;
      int64_t n = output.number_attr.empty() ? 1 : FindAttr(call.attrs, output.number_attr)->i;
      types.assign(static_cast<size_t>(std::max<int64_t>(n, 0)), type);
    }
    for (ElementType type : types) {
      // Default: the dims of the operand in the same position, else operand 0's, else a scalar.
      size_t position = call.outputs.size();
      std::vector<int64_t> dims;
      if (position < operands.size()) {
        dims = operands[position].dimensions();
      } else if (!operands.empty()) {
        dims = operands[0].dimensions();
      }
      call.outputs.emplace_back(type, dims);
    }
  }
  if (def.shape_function) {
    std::vector<ElementType> types;
    for (const Shape& s : call.outputs) types.push_back(s.element_type());
    OpShapeContext context{op, operands, &call.attrs};
    Status status = def.shape_function(context, call.outputs);
    if (!status.ok()) return Status(status.code(), op + ": shape function: " + status.message());
    if (call.outputs.size() != types.size()) {
      return Internal(op, ": the shape function changed the number of outputs");
    }
    for (size_t i = 0; i < types.size(); ++i) {
      if (call.outputs[i].element_type() != types[i]) {
        return InvalidArgument(op, ": the shape function made output ", i, " ",
                               ElementTypeName(call.outputs[i].element_type()), ", the definition says ",
                               ElementTypeName(types[i]));
      }
      for (int64_t d : call.outputs[i].dimensions()) {
        if (d < 0)
          return InvalidArgument(op, ": the shape function gave output ", i, " a negative dimension");
      }
    }
  }
  const bool single =
      def.outputs.size() == 1 && def.outputs[0].number_attr.empty() && !IsTypeList(def, def.outputs[0]);
  call.result_shape = single ? call.outputs[0] : Shape::Tuple(call.outputs);
  return call;
}

StatusOr<Op> BuildRegisteredOpCall(Builder& builder, std::string_view name, std::span<const Op> operands,
                                   const AttrList& attrs) {
  std::shared_ptr<const OpDef> def = FindRegisteredOp(name);
  if (def == nullptr) return NotFound("op '", name, "' is not registered (kiln_op_register)");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < operands.size(); ++i) {
    StatusOr<Shape> shape = builder.GetShape(operands[i]);
    if (!shape.ok()) return shape.status();
    shapes.push_back(*shape);
  }
  KILN_ASSIGN_OR_RETURN(ResolvedOpCall call, ResolveOpCall(*def, shapes, attrs));
  return builder.CustomCall(def->name, operands, call.result_shape, PrintAttrDict(call.attrs));
}

std::vector<Shape> OperandShapes(const Instruction& call) {
  std::vector<Shape> shapes;
  for (const Instruction* operand : call.operands) shapes.push_back(operand->shape);
  return shapes;
}

Status CheckRegisteredOps(const Module& module, std::string_view backend) {
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    for (const std::unique_ptr<Instruction>& instruction : computation->instructions()) {
      if (instruction->opcode != Opcode::kCustomCall) continue;
      std::shared_ptr<const OpDef> def = FindRegisteredOp(instruction->attrs.custom_call_target);
      if (def == nullptr) continue;
      const std::string context = "instruction '" + instruction->name + "'";
      StatusOr<AttrList> attrs = ParseAttrDict(instruction->attrs.backend_config);
      if (!attrs.ok()) {
        return InvalidArgument(
            def->name, ": ", context,
            ": its backend_config is not an attribute dictionary: ", attrs.status().message());
      }
      std::vector<Shape> operands = OperandShapes(*instruction);
      StatusOr<ResolvedOpCall> call = ResolveOpCall(*def, operands, *attrs);
      if (!call.ok()) return call.status().WithContext(context);
      if (!call->result_shape.Compatible(instruction->shape)) {
        return InvalidArgument(def->name, ": ", context, " has shape ", instruction->shape.ToString(),
                               " but the op's definition gives ", call->result_shape.ToString());
      }
      ElementType type = KernelElementType(operands, instruction->shape);
      const bool has_kernel = IsDeviceBackend(backend)
                                  ? FindOpDeviceKernel(def->name, backend, type) != nullptr
                                  : FindOpKernel(def->name, backend, type) != nullptr;
      if (!has_kernel) {
        return Unimplemented("op '", def->name, "' has no ", backend, " kernel for element type ",
                             ElementTypeName(type), " (", context,
                             "; kernels: ", DescribeOpKernels(def->name), ")");
      }
    }
  }
  return OkStatus();
}

StatusOr<Literal> EvaluateRegisteredOp(const OpDef& def, const Instruction& instruction,
                                       std::span<const Literal* const> operands, std::string_view backend) {
  std::vector<Shape> shapes;
  for (const Literal* operand : operands) shapes.push_back(operand->shape());
  KILN_ASSIGN_OR_RETURN(AttrList attrs, ParseAttrDict(instruction.attrs.backend_config));
  KILN_ASSIGN_OR_RETURN(ResolvedOpCall call, ResolveOpCall(def, shapes, attrs));
  ElementType type = KernelElementType(shapes, instruction.shape);
  OpKernelFunction kernel = FindOpKernel(def.name, backend, type);
  if (!kernel) {
    return Unimplemented("op '", def.name, "' has no ", backend, " kernel for element type ",
                         ElementTypeName(type), " (kernels: ", DescribeOpKernels(def.name), ")");
  }
  std::vector<KernelBuffer> args;
  for (const Literal* operand : operands) {
    const auto raw = operand->raw();
    args.push_back({operand->shape().element_type(), operand->shape().dimensions(),
                    const_cast<uint8_t*>(raw.data()), raw.size()});
  }
  Literal result(instruction.shape);
  std::vector<KernelBuffer> results;
  if (instruction.shape.IsTuple()) {
    for (Literal& element : result.mutable_tuple_elements()) {
      auto raw = element.raw();
      results.push_back(
          {element.shape().element_type(), element.shape().dimensions(), raw.data(), raw.size()});
    }
  } else {
    auto raw = result.raw();
    results.push_back(
        {instruction.shape.element_type(), instruction.shape.dimensions(), raw.data(), raw.size()});
  }
  KernelFrame frame{def.name, backend, args, results, &call.attrs};
  Status status = kernel(frame);
  if (!status.ok()) {
    return Status(status.code(), "op '" + def.name + "' (" + instruction.name + ") kernel failed on " +
                                     std::string(backend) + ": " + status.message());
  }
  return result;
}

StatusOr<OpGradientComputation> BuildOpGradient(const OpDef& def, const Instruction& call) {
  const std::string context = "op '" + def.name + "' (instruction " + call.name + ")";
  if (!def.gradient) {
    return InvalidArgument(context,
                           " has no gradient registered; set one with kiln_user_op_def_set_grad_fn "
                           "before registering the op");
  }
  const std::vector<Shape> operands = OperandShapes(call);
  StatusOr<AttrList> given = ParseAttrDict(call.attrs.backend_config);
  if (!given.ok()) return given.status().WithContext(context);
  StatusOr<ResolvedOpCall> resolved = ResolveOpCall(def, operands, *given);
  if (!resolved.ok()) return resolved.status().WithContext(context);
  const std::vector<Shape> outputs =
      call.shape.IsTuple() ? call.shape.tuple_shapes() : std::vector{call.shape};
  StatusOr<OpGradientComputation> built =
      def.gradient(OpGradientContext{def.name, operands, outputs, &resolved->attrs});
  if (!built.ok()) {
    return Status(built.status().code(),
                  context + ": the gradient function failed: " + built.status().message());
  }
  const Computation* entry = built->module != nullptr ? built->module->entry() : nullptr;
  if (entry == nullptr || built->has_gradient.size() != operands.size()) {
    return Internal(context, ": the gradient function returned no computation for its operands");
  }
  std::vector<Shape> parameters = operands;
  for (int copy = 0; copy < 2; ++copy) parameters.insert(parameters.end(), outputs.begin(), outputs.end());
  const ProgramShape signature = entry->program_shape();
  bool parameters_match = signature.parameters.size() == parameters.size();
  for (size_t i = 0; parameters_match && i < parameters.size(); ++i)
    parameters_match = signature.parameters[i].Compatible(parameters[i]);
  if (!parameters_match)
    return Internal(context, ": the gradient computation's parameters do not match the call");
  std::vector<size_t> marked;
  for (size_t i = 0; i < operands.size(); ++i)
    if (built->has_gradient[i]) marked.push_back(i);
  if (!signature.result.IsTuple() || signature.result.tuple_shapes().size() != marked.size()) {
    return Internal(context, ": the gradient computation returns ", signature.result.ToString(),
                    ", not a tuple of ", marked.size(), " cotangent(s)");
  }
  for (size_t k = 0; k < marked.size(); ++k) {
    const Shape& got = signature.result.tuple_shapes(static_cast<int64_t>(k));
    const Shape& want = operands[marked[k]];
    if (!got.Compatible(want)) {
      return InvalidArgument(context, ": the gradient function gave operand ", marked[k],
                             " a cotangent of shape ", got.ToString(), ", not the operand's shape ",
                             want.ToString());
    }
  }
  return built;
}

std::string DescribeRegisteredOps() {
  std::ostringstream out;
  for (const std::shared_ptr<const OpDef>& def : RegisteredOps()) {
    std::vector<std::string> inputs, outputs;
    for (const IoDef& io : def->inputs) inputs.push_back(io.spec);
    for (const IoDef& io : def->outputs) outputs.push_back(io.spec);
    out << def->name << "(" << Join(inputs) << ") -> (" << Join(outputs) << ")\n";
    for (const AttrDef& attr : def->attrs) out << "    attr " << attr.spec << "\n";
    out << "    kernels: " << DescribeOpKernels(def->name) << "\n";
    if (def->gradient) out << "    gradient: yes\n";
    if (!def->doc.empty()) out << "    doc: " << def->doc << "\n";
  }
  return out.str();
}

}  // namespace kiln
