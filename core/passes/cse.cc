#include "core/passes/cse.h"

#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir_edit.h"
#include "core/pointer_map.h"

namespace kiln {
namespace {

size_t Combine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

size_t HashOf(const Instruction& instruction) {
  size_t hash = std::hash<int>()(static_cast<int>(instruction.opcode));
  for (const Instruction* operand : instruction.operands)
    hash = Combine(hash, std::hash<const void*>()(operand));
  for (const Computation* callee : instruction.called) hash = Combine(hash, std::hash<const void*>()(callee));
  hash = Combine(hash, std::hash<int>()(static_cast<int>(instruction.shape.element_type())));
  for (int64_t d : instruction.shape.dimensions()) hash = Combine(hash, std::hash<int64_t>()(d));
  if (instruction.literal) {
    std::span<const uint8_t> raw = instruction.literal->raw();
    hash = Combine(hash, std::hash<std::string_view>()(
                             std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size())));
  }
  return hash;
}

bool Equivalent(const Instruction& a, const Instruction& b) {
  if (a.opcode != b.opcode || a.operands != b.operands || a.called != b.called || a.shape != b.shape ||
      !(a.attrs == b.attrs)) {
    return false;
  }
  if (a.literal.has_value() != b.literal.has_value()) return false;
  return !a.literal || (*a.literal == *b.literal && a.literal->shape() == b.literal->shape());
}

}  // namespace

StatusOr<bool> CommonSubexpressionElimination::Run(Module& module) {
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation& computation = *owned;
    const size_t size = computation.instructions().size();
    // The instructions kept so far, by hash: the latest with each hash, and
    // from each the one kept before it with the same hash (a chain through a
    // flat map instead of a vector allocated per hash).
    std::unordered_map<size_t, Instruction*> latest_with_hash;
    latest_with_hash.reserve(size);
    PointerMap<Instruction*> earlier_with_same_hash(size);
    std::vector<Instruction*> order;
    order.reserve(size);
    for (const auto& instruction : computation.instructions()) order.push_back(instruction.get());
    UseReplacer replacer(computation);
    // Operands come first, so merged operands make their users equal in the same sweep.
    for (Instruction* instruction : order) {
      replacer.Forward(*instruction);
      if (!MayMerge(instruction->opcode)) continue;
      const auto [latest, first_with_hash] = latest_with_hash.try_emplace(HashOf(*instruction), instruction);
      if (first_with_hash) continue;
      Instruction* match = nullptr;
      for (Instruction* candidate = latest->second; candidate != nullptr && match == nullptr;) {
        if (Equivalent(*candidate, *instruction)) match = candidate;
        Instruction* const* earlier = earlier_with_same_hash.Find(candidate);
        candidate = earlier != nullptr ? *earlier : nullptr;
      }
      if (match == nullptr) {
        earlier_with_same_hash.Insert(instruction, latest->second);
        latest->second = instruction;
        continue;
      }
      replacer.Replace(instruction, match);
    }
    if (replacer.Apply()) {
      computation.RemoveDeadInstructions();
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln
