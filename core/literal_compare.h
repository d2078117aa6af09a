// Comparing a result literal with an expected one within a tolerance: what
// the conformance harness and `kiln run --compare-with / --expect` share.
// Floating and complex elements agree when |actual - expected| <= atol +
// rtol * |expected| (NaN matches NaN, an infinity only itself); integers and
// PRED must be equal.
#pragma once

#include <cstdint>
#include <string>

#include "core/element_type.h"
#include "core/ir.h"
#include "core/literal.h"

namespace kiln {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// The default tolerance of results of `type`: a few ulps of sums of products
// for f32/f64, a couple of roundings for f16/bf16; {0, 0} (exact) for
// integers and PRED.
Tolerance ToleranceFor(ElementType type);

// The loosest float tolerance among the types `module` computes in: a program
// that rounds through bf16 can only be as exact as bf16, whatever its output
// type.
Tolerance ModuleTolerance(const Module& module);

// The tolerance a leaf of `type` is checked with: exact for integers and PRED,
// else the larger of ToleranceFor(type) and `module_tolerance`.
Tolerance LeafTolerance(ElementType type, const Tolerance& module_tolerance);

struct LeafDifference {
  // Elements outside the tolerance (every element when the shapes differ).
  int64_t mismatches = 0;
  // The first of them, e.g. "element 3 is 1.5 but expected 1.25"; empty when
  // the leaves agree.
  std::string first_mismatch;
  // Largest |actual - expected| over elements that are both finite (0 for
  // integers and PRED, whose mismatches are counted instead).
  double max_abs_difference = 0;

  bool agree() const { return first_mismatch.empty(); }
};

// Compares two array literals. `tolerance` applies to floating and complex
// elements only (use LeafTolerance); a shape or element type difference is a
// mismatch of every element.
LeafDifference CompareLeaf(const Literal& actual, const Literal& expected, const Tolerance& tolerance);

}  // namespace kiln
