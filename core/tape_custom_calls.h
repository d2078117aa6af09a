// The two custom-call targets that reverse-mode differentiation of while
// loops (core/autodiff) writes into a gradient module: a per-execution
// stack ("tape") of the values a backward loop reads back.
//
//   n1 = s32[] custom-call(s32[] n, a, b, ...), custom_call_target="kiln_tape_push",
//        backend_config="3"
//   t  = (s32[], A, B, ...) custom-call(s32[] n1), custom_call_target="kiln_tape_pop",
//        backend_config="3"
//
// A push appends one entry (the bytes of its array operands after the
// first) to tape 3 and returns n + 1; a pop removes the newest entry and
// returns (n - 1, the arrays of that entry). The scalar n is no data: it
// orders the pushes and pops of a loop through data dependencies, so no
// pass reorders or drops one without the other. A tape lives for one
// execution; it grows by doubling, so holding N entries of B bytes takes
// less than 2 * N * B bytes. The interpreter runs both; the cpu, cuda and
// vulkan backends lower each to a tape step and a counter kernel
// (core/lowering/step_lowering.h) and run the steps with StepTapes
// (core/lowering/step_tapes.h).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

inline constexpr std::string_view kTapePushTarget = "kiln_tape_push";
inline constexpr std::string_view kTapePopTarget = "kiln_tape_pop";

// Whether `target` is kiln_tape_push or kiln_tape_pop.
bool IsTapeCustomCall(std::string_view target);

// The tape number of a tape custom call (its backend_config, a decimal
// number); INVALID_ARGUMENT naming the instruction when it is not one.
StatusOr<int64_t> TapeNumber(const Instruction& instruction);

// OK when a tape custom call has the operands and result shapes above;
// INVALID_ARGUMENT naming the instruction and `backend` otherwise.
Status CheckTapeCustomCall(const Instruction& instruction, std::string_view backend);

}  // namespace kiln
