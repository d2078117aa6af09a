// Small helpers that several derivative rules (the *_rules.cc files) share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/autodiff/vjp_emitter.h"
#include "core/ir.h"
#include "core/reducer.h"  // SimpleReducer: the rules refuse other reducers by name

namespace kiln::autodiff {

// The cotangent `value` (no tuple leaves).
inline Cotangent Of(Instruction* value) { return Cotangent{value, {}}; }

// The extent of `size` elements spread `dilation` apart (0 stays 0).
inline int64_t Dilated(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

// 0, 1, ..., rank - 1 of `shape`.
std::vector<int64_t> AllDimensions(const Shape& shape);

// Whether `shape` is a token or a tuple holding one at any depth (tokens
// order side effects and have no derivative).
bool HasToken(const Shape& shape);

// Copies the instructions `source`'s root needs into the emitter's
// computation, `source`'s parameters reading `arguments`; returns the copied
// root (a loop body or branch computed inside a derived one).
Instruction* CloneComputation(VjpEmitter& e, const Computation& source,
                              const std::vector<Instruction*>& arguments);

// A while loop's state's top-level elements (the state itself when it is
// an array), a state value rebuilt from them, and element `i` of one.
std::vector<Shape> StateElements(const Shape& state);
Instruction* AsState(VjpEmitter& e, const Shape& state, std::vector<Instruction*> elements);
Instruction* StateElement(VjpEmitter& e, const Shape& state, Instruction* value, int64_t i);

// A new, empty computation of `module` (a derived loop body, branch or map
// body), named after `name` (made unique).
Computation* NewComputation(Module& module, const std::string& name);

// Adds parameter `number` of `shape`, called `name`, to a computation being
// built by hand (comparators, reducers).
Instruction* AddParameter(Computation& computation, const Shape& shape, int64_t number,
                          const std::string& name);

// The reducer of (value, derivative) pairs that keeps the pair whose value
// `direction` prefers, the accumulated one on ties (so the earlier element,
// as select-and-scatter picks it): a reduce-window over (operand, its
// cotangent or tangent) with it picks what max (GE) or min (LE) pooling
// picked. Added to `module`.
Computation* PairChooser(Module& module, ElementType type, ComparisonDirection direction);

// A copy of sort comparator `comparator` (added to `module`, named after it
// with `suffix`) that takes two more scalar parameters of each of `types`
// and ignores them, for operands sorted alongside (an iota, tangents).
Computation* WithIgnoredParameters(Module& module, const Computation& comparator,
                                   const std::vector<ElementType>& types, const std::string& suffix);

}  // namespace kiln::autodiff
