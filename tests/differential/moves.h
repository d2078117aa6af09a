// The moves a graph is built from: each adds one or a few ops to the graph
// in `context`, taking operands from its pool and recording the results.
// A move returns false when it added nothing (e.g. no suitable operand).
#pragma once

#include "tests/differential/graph_context.h"

namespace kiln::differential {

using Move = bool (*)(GraphContext&);

// Elementwise (family_elementwise.cc).
bool EmitUnary(GraphContext& context);
bool EmitBinary(GraphContext& context);
// A random shape- and type-preserving elementwise op applied to `value`.
Value ApplyElementwise(GraphContext& context, const Value& value);

// Compare, select, clamp, is-finite, convert (family_compare_convert.cc).
bool EmitCompareSelect(GraphContext& context);
bool EmitClamp(GraphContext& context);
bool EmitIsFinite(GraphContext& context);
bool EmitConvert(GraphContext& context);
// A pred value of `dims` from comparing exact values (for select and friends).
Op MakePredicate(GraphContext& context, const std::vector<int64_t>& dims);

// Shape ops (family_shape.cc).
bool EmitBroadcast(GraphContext& context);
bool EmitReshape(GraphContext& context);
bool EmitTranspose(GraphContext& context);
bool EmitSlice(GraphContext& context);
bool EmitConcatenate(GraphContext& context);
bool EmitPad(GraphContext& context);
bool EmitReverse(GraphContext& context);
bool EmitIota(GraphContext& context);

// Indexing (family_indexing.cc).
bool EmitDynamicSlice(GraphContext& context);
bool EmitDynamicUpdateSlice(GraphContext& context);
bool EmitGather(GraphContext& context);
bool EmitScatter(GraphContext& context);

// Reductions and contractions (family_reduce.cc, family_contraction.cc).
bool EmitReduce(GraphContext& context);
bool EmitArgMaxReduce(GraphContext& context);
bool EmitReduceWindow(GraphContext& context);
bool EmitDot(GraphContext& context);
bool EmitDotGeneral(GraphContext& context);
bool EmitConvolution(GraphContext& context);

// Complex numbers (family_complex.cc); the graph's main type is c64 or c128.
bool EmitComplexUnary(GraphContext& context);
bool EmitComplexBinary(GraphContext& context);
bool EmitComplexParts(GraphContext& context);
bool EmitComplexSelect(GraphContext& context);
bool EmitComplexSum(GraphContext& context);

// Sort and control flow (family_control.cc).
bool EmitSort(GraphContext& context);
bool EmitWhile(GraphContext& context);
bool EmitConditional(GraphContext& context);

}  // namespace kiln::differential
