// Unrolls `while` loops that run a small number of trips known at compile
// time: the loop becomes that many `call`s of its body, one after the
// other, which the call inliner then inlines, so later passes see the trips
// as straight-line code and fusion can put them in one kernel with what
// comes before and after. JAX's Threefry (jax.random) is such a loop: five
// trips over the counter arrays, four rounds each; unrolled, the whole
// generator and the transform of its bits fuse into a pass or two over the
// output instead of a loop writing and reading the state arrays each trip.
//
// A loop is counted when its state is a tuple whose element k starts at an
// integer constant (the loop's operand is a tuple instruction), the body's
// root is a tuple whose element k is `get-tuple-element(state, k) + step`
// for a positive constant step, and the condition's root compares
// `get-tuple-element(state, k)` with an integer constant: `i < n`, `i <= n`
// (or `n > i`, `n >= i`). A loop with anything whose result depends on the
// order it runs in (side effects, rng's generator, collectives) is left
// alone. Runs before the call inliner (pipeline.h).
#pragma once

#include <cstdint>
#include <optional>

#include "core/pass.h"

namespace kiln {

// The number of trips of a counted loop (above), or nullopt.
std::optional<int64_t> CountedWhileTrips(const Instruction& loop);

struct WhileUnrollingOptions {
  // Loops of more trips stay loops.
  int64_t max_trips = 8;
  // Nor is a loop unrolled whose trips would copy more instructions of its
  // body and the computations it calls than this.
  int64_t max_unrolled_instructions = 1024;
  // Nor a loop whose state arrays are all smaller than this many bytes: a
  // backend that runs small loops whole (the CPU's fused loops) gains
  // little from their trips inlined, and compiles them again per trip.
  int64_t min_state_bytes = 0;
};

class WhileUnrolling : public Pass {
 public:
  explicit WhileUnrolling(WhileUnrollingOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "while-unrolling"; }
  StatusOr<bool> Run(Module& module) override;

 private:
  WhileUnrollingOptions options_;
};

}  // namespace kiln
