// Small helpers that several derivative rules (the *_rules.cc files) share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/autodiff/vjp_emitter.h"
#include "core/ir.h"

namespace kiln::autodiff {

// The cotangent `value` (no tuple leaves).
inline Cotangent Of(Instruction* value) { return Cotangent{value, {}}; }

// The extent of `size` elements spread `dilation` apart (0 stays 0).
inline int64_t Dilated(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

// 0, 1, ..., rank - 1 of `shape`.
std::vector<int64_t> AllDimensions(const Shape& shape);

// The elementwise opcode a reduce's (or reduce-window's) reducer applies to
// its two scalar parameters when it is add, maximum or minimum; nullopt for
// any other reducer (the rules that use it refuse those by name).
std::optional<Opcode> SimpleReducer(const Instruction& reduce);

}  // namespace kiln::autodiff
