#include "core/opcode.h"

#include <array>

namespace kiln {
namespace {

struct OpcodeInfo {
  std::string_view name;
  OpKind kind;
  OpTrait traits;
};

constexpr std::array<OpcodeInfo, static_cast<size_t>(Opcode::kOpcodeCount)> kOpcodeInfo = {{
#define KILN_OPCODE_INFO(e, name, kind, traits) {name, OpKind::kind, traits},
    KILN_OPCODE_LIST(KILN_OPCODE_INFO)
#undef KILN_OPCODE_INFO
}};

// Traits that forbid merging two equal instances or computing one at compile
// time: each instance is an event of its own, or its value is not known until
// it runs where it runs.
constexpr OpTrait kKeepsIdentity =
    kSideEffect | kStateful | kRandom | kCollective | kOpaque | kOrdering | kControlFlow;

}  // namespace

std::string_view OpcodeName(Opcode opcode) { return kOpcodeInfo[static_cast<size_t>(opcode)].name; }

OpKind OpcodeKind(Opcode opcode) { return kOpcodeInfo[static_cast<size_t>(opcode)].kind; }

std::optional<Opcode> OpcodeFromName(std::string_view name) {
  for (size_t i = 0; i < kOpcodeInfo.size(); ++i) {
    if (kOpcodeInfo[i].name == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

OpTrait OpcodeTraits(Opcode opcode) { return kOpcodeInfo[static_cast<size_t>(opcode)].traits; }

bool HasTraits(Opcode opcode, OpTrait traits) { return (OpcodeTraits(opcode) & traits) == traits; }

bool IsElementaryFunction(Opcode opcode) { return HasTraits(opcode, kElementaryFunction); }

bool IsElementwise(Opcode opcode) { return HasTraits(opcode, kElementwise); }

bool MayMerge(Opcode opcode) {
  return opcode != Opcode::kParameter && (OpcodeTraits(opcode) & kKeepsIdentity) == 0;
}

bool MayFold(Opcode opcode) {
  return (OpcodeTraits(opcode) & (kKeepsIdentity | kPlacement | kNoFoldGain)) == 0;
}

bool IsLoopFusible(Opcode opcode) { return (OpcodeTraits(opcode) & (kElementwise | kLoopFusible)) != 0; }

bool IsDifferentiable(Opcode opcode) { return HasTraits(opcode, kDifferentiable); }

}  // namespace kiln
