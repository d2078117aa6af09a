// How hard LLVM works on a kernel. Most of a small model's compile time is
// LLVM optimising and selecting instructions for kernels that run a few dozen
// scalar iterations, where vector loops and careful register allocation gain
// nanoseconds. Such kernels take the quick tier: scalar cleanup passes only
// and LLVM's fast instruction selector and register allocator (about four
// times less compile time per kernel). Everything else is optimised fully.
#pragma once

#include <cstdint>

#include "core/ir.h"

namespace kiln::cpu::codegen {

enum class CompileTier : uint8_t { kQuick, kOptimized };

// Kernels that run at most this many scalar loop iterations compile quickly
// by default.
inline constexpr int64_t kQuickTierMaxIterations = 1024;

// The limit the CPU backend uses: KILN_CPU_QUICK_TIER_MAX_ITERATIONS when set
// (0 optimises every kernel fully, which the tests use to cover both tiers),
// else kQuickTierMaxIterations. A value that is not a non-negative integer
// is reported on stderr once and the default is used.
int64_t QuickTierMaxIterationsFromEnvironment();

// About how many scalar loop iterations one run of a kernel computing
// `computation`'s root performs: per instruction, its elements times the
// elements combined into each (a reduction's operand, a dot's contraction,
// a window or a convolution kernel). An upper bound is fine: it only decides
// the tier.
int64_t EstimatedIterations(const Computation& computation);

CompileTier ChooseCompileTier(const Computation& computation, int64_t quick_tier_max_iterations);

}  // namespace kiln::cpu::codegen
