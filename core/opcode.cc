#include "core/opcode.h"

#include <array>

namespace kiln {
namespace {

struct OpcodeInfo {
  std::string_view name;
  OpKind kind;
};

constexpr std::array<OpcodeInfo, static_cast<size_t>(Opcode::kOpcodeCount)> kOpcodeInfo = {{
#define KILN_OPCODE_INFO(e, name, kind) {name, OpKind::kind},
    KILN_OPCODE_LIST(KILN_OPCODE_INFO)
#undef KILN_OPCODE_INFO
}};

}  // namespace

std::string_view OpcodeName(Opcode opcode) { return kOpcodeInfo[static_cast<size_t>(opcode)].name; }

OpKind OpcodeKind(Opcode opcode) { return kOpcodeInfo[static_cast<size_t>(opcode)].kind; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (size_t i = 0; i < kOpcodeInfo.size(); ++i) {
    if (kOpcodeInfo[i].name == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

bool IsElementaryFunction(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kTanh: return true;
    default: return false;
  }
}

bool IsElementwise(Opcode opcode) {
  if (OpcodeKind(opcode) != OpKind::kOther) return true;
  switch (opcode) {
    case Opcode::kCompare:
    case Opcode::kConvert:
    case Opcode::kComplex:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kReducePrecision: return true;
    default: return false;
  }
}

}  // namespace kiln
