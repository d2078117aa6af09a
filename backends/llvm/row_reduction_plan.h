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

// Whether the computation is a row reduction that streams memory: it holds
// a row reduction and otherwise only moves data and does the cheapest
// arithmetic (adds, products, comparisons, conversions), none of the
// transcendental functions or divisions that make softmax or a norm
// compute-bound. The CPU backend vectorises such kernels 8 floats wide on
// AVX-512 hosts (kStreamingRowReductionVectorBits).
bool IsStreamingRowReduction(const Computation& computation);

// The vector width, in bits, a streaming row reduction's kernel asks of the
// CPU's loop vectoriser (the function attribute "prefer-vector-width"): on
// the AMD EPYC (Zen 4) host of benchmarks/RESULTS.md, rows read 64 bytes a
// load streamed 20-25% slower than rows read 32 bytes a load (sum over the
// last axis of f32[256,256,256] and of f32[4096,4096] on one thread), while
// elementwise kernels and softmax ran faster 16 floats wide.
inline constexpr const char* kStreamingRowReductionVectorBits = "256";

}  // namespace kiln::llvm_ir
