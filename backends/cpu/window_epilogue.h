// The op a folded reduce-window applies to its results as it stores them
// (core/passes/reduce_window_epilogue_folding.h: average pooling's divide
// by the window's size), with the interpreter's scalar op
// (core/interpreter/scalar_ops.h), so the fold keeps the bytes of the two
// instructions run one after the other.
#pragma once

#include <cstdint>

#include "core/element_type.h"
#include "core/opcode.h"
#include "core/status.h"

namespace kiln::cpu {

// Whether ApplyWindowEpilogue takes `op` on `type`: add, subtract,
// multiply or divide of a real float type.
bool IsWindowEpilogue(ElementType type, Opcode op);

// data[i] = op(data[i], *scalar) for i < n, in place; `scalar` points at
// one element of `type`. Floats are computed in AVX2 registers where the
// CPU has them (the same IEEE operations, one per element). Any thread;
// INTERNAL for what IsWindowEpilogue refuses.
Status ApplyWindowEpilogue(ElementType type, Opcode op, void* data, int64_t n, const void* scalar);

}  // namespace kiln::cpu
