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

// A kernel of more instructions than this compiles quickly too when its
// instructions run no more iterations each, on average, than those of a
// kernel of this many instructions at the limit (1024 / 64 = 16 by default).
// What full optimisation saves per run and what it costs to compile both
// grow with the instructions; how many iterations each runs sets their
// ratio. With the total alone, a kernel of 64 instructions over f32[16]
// took the quick tier and one of 65 the optimising one, at the same gain
// for the cost: the 256-instruction kernels of a fused tree over f32[16]
// (benchmarks/compile_time `wide`) took about 15 ms of LLVM each optimised
// against 3.5 ms quickly, to save about a microsecond per run.
inline constexpr int64_t kQuickTierReferenceInstructions = 64;

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

// kQuick when the kernel runs at most `quick_tier_max_iterations` loop
// iterations, or when its instructions (parameters and constants aside)
// average at most quick_tier_max_iterations / kQuickTierReferenceInstructions
// each; so a limit of 0 optimises every kernel.
CompileTier ChooseCompileTier(const Computation& computation, int64_t quick_tier_max_iterations);

}  // namespace kiln::cpu::codegen
