// Random op graphs for differential testing: from a seed and an op family,
// a verified module (5 to 40 instructions in its entry), valid arguments for
// it, and for each result leaf how it may be compared across backends.
//
// Float values are tracked as "exact" while they are small integers computed
// by operations that cannot round (add, mul, max, shape ops, ...); only exact
// values feed discontinuous operations (compare, floor, sort keys, convert to
// integer), so rounding differences between backends can never flip a branch.
// Exact results are compared for equality, the others within a tolerance
// scaled by a bound on the value's magnitude.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/element_type.h"
#include "core/ir.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::differential {

enum class OpFamily {
  kElementwise,    // unary and binary arithmetic, logic, shifts
  kCompareSelect,  // compare, select, clamp, is-finite
  kConvert,        // convert between every pair of element types
  kShape,          // broadcast, reshape, transpose, slice, concatenate, pad, reverse, iota
  kDynamicSlice,   // dynamic-slice, dynamic-update-slice
  kReduce,         // reduce (sum/max/min/logic) and variadic arg-max reduce
  kReduceWindow,   // reduce-window with strides, padding and dilation
  kDot,            // dot and dot_general with batch dimensions
  kConvolution,    // small convolutions, grouped and dilated
  kGatherScatter,  // gather and scatter (add/max/min)
  kSort,           // single and multi-operand sort
  kWhile,          // while loops with a counter
  kConditional,    // predicated and indexed conditionals
  kMixed,          // all of the above in one graph
  kComplex,        // c64/c128 arithmetic, functions, parts, select, sums, shape ops
};

std::vector<OpFamily> AllOpFamilies();
std::string_view OpFamilyName(OpFamily family);

// How one result leaf may be compared: exactly, or within a tolerance.
struct LeafCheck {
  bool exact = true;
  // Upper bound on |value| for inexact float leaves: errors are allowed
  // relative to it, since cancellation can make a value much smaller than
  // the values it was computed from.
  double magnitude = 1.0;
};

struct GeneratedGraph {
  std::unique_ptr<Module> module;
  std::vector<Literal> arguments;                    // one per entry parameter
  std::vector<LeafCheck> checks;                     // one per leaf of the (tuple) result
  ElementType element_type = ElementType::kInvalid;  // the graph's main type
};

// The 13 real element types graphs are generated for; the complex family
// uses FamilyElementTypes (c64 and c128).
std::vector<ElementType> GeneratedElementTypes();
std::vector<ElementType> FamilyElementTypes(OpFamily family);

// Deterministic: equal (family, seed) give equal modules and arguments. The
// element type is drawn from the seed.
StatusOr<GeneratedGraph> GenerateGraph(OpFamily family, uint64_t seed);
// As above with a chosen element type.
StatusOr<GeneratedGraph> GenerateGraph(OpFamily family, uint64_t seed, ElementType element_type);

}  // namespace kiln::differential
