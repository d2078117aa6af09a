// Planning of row reductions inside one kernel (core/passes/fusion.h makes
// such kernels): whether the outputs read reductions of the kernel's rows,
// which the emitter then computes once per row, and which values both a row
// reduction and the outputs read, which it keeps in a per-row buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir.h"

namespace kiln::llvm_ir {

// Largest row kept on the stack by a row buffer.
constexpr int64_t kMaxRowBufferBytes = int64_t{32} * 1024;

// Whether the computation holds a row reduction whose result has `row_dims`.
bool HasRowReductionOf(const Computation& computation, const std::vector<int64_t>& row_dims);

// Floating-point elementwise values over whole rows (`row_dims` then
// `length`) that both a row reduction and the outputs read (softmax's
// exp(x - max)); only the outermost such values: what they are computed
// from is not read again.
std::vector<const Instruction*> SharedRowValues(const Computation& computation,
                                                const std::vector<int64_t>& row_dims, int64_t length);

}  // namespace kiln::llvm_ir
