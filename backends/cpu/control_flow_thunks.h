// while and conditional: nested thunk sequences whose parameters are bound
// by pointer (no copy in) to the caller's arrays. A loop keeps its state in
// two buffers per leaf and alternates between them, so the body reads one
// while its results land in the other (computed there directly, or copied
// when the body takes the leaf from elsewhere); a leaf the body passes
// through unchanged is not copied at all.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "backends/cpu/codegen/fused_loop.h"
#include "backends/cpu/thunk.h"
#include "core/element_type.h"

namespace kiln::cpu {

// A computation lowered to its own sequence: the slots its parameters' array
// leaves are bound to, and the slots holding its result's array leaves.
struct NestedComputation {
  const ThunkSequence* sequence = nullptr;
  std::vector<int> parameter_leaves;
  std::vector<int> result_leaves;
};

class WhileThunk : public Thunk {
 public:
  // `state_a`/`state_b`: the loop's two buffers per leaf (arena slots of the
  // caller); `results`: slots the caller reads the final state from, set by
  // this thunk to whichever buffer holds it. `computed_in_place[i]`: the
  // body's result leaf i is a bound slot the thunk points at the buffer that
  // does not hold the current state, so the body writes the next state there.
  WhileThunk(std::vector<int> init, std::vector<int> state_a, std::vector<int> state_b,
             std::vector<int> results, std::vector<int64_t> leaf_bytes, std::vector<bool> computed_in_place,
             NestedComputation condition, NestedComputation body);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "while"; }

  // How many trips a loop whose kernels are bound once per run (see
  // RunWithBoundKernels) makes between two checks of the stop condition.
  static constexpr int64_t kTripsPerStopCheck = 32;
  // The same for a loop compiled whole (RunFused), whose trips cost a few
  // nanoseconds: one check (a clock read with a deadline) per call of its
  // function.
  static constexpr int64_t kFusedTripsPerStopCheck = 256;

  const NestedComputation& condition() const { return condition_; }
  const NestedComputation& body() const { return body_; }
  // Every leaf computed in place or passed through: what a loop compiled
  // whole (fused_loop.h) and RunWithBoundKernels need of the state.
  bool state_alternates() const { return state_alternates_; }
  // The loop compiled whole, for a loop whose condition and body the
  // lowering found to be small kernels only; Run uses it while those
  // kernels run inline (compiled, one task each, thunks not profiled).
  void SetFusedLoop(FusedLoopFunction function) { fused_loop_ = function; }
  // Whether Run would run the loop through its compiled function.
  bool RunsFused() const;
  // Calls of the compiled function so far, over all runs (a run calls it
  // once per kFusedTripsPerStopCheck trips when it may be stopped, else
  // once): what shows that a loop ran as one function.
  int64_t fused_calls() const { return fused_calls_.load(std::memory_order_relaxed); }

 private:
  // Runs the loop through the thunk sequences, binding slots every trip.
  Status RunSequences(ExecutionContext& context) const;
  // Runs the loop when the condition and the body are each inline kernels
  // only and every leaf is passed through or computed in place. Then each
  // leaf's state is the initial value on the first trip and alternates
  // between its two buffers after it, so every kernel's buffer pointers and
  // the predicate's address take one of three sets of values (first, odd,
  // even trip): they are bound once per run and each trip calls the kernels
  // directly, with no slot, Status or vector work.
  Status RunWithBoundKernels(ExecutionContext& context) const;
  // Runs the loop through its compiled function, with the buffer tables
  // RunWithBoundKernels uses.
  Status RunFused(ExecutionContext& context) const;
  // For each trip kind (first, odd, even), binds the slots as that trip
  // would and records each leaf's state in `state` (kTripKinds x leaves),
  // the predicate's address, and the buffers of every kernel of the
  // condition and the body in run order in `tables` (kTripKinds x `stride`,
  // each kind's pointers after `reserved` left for the caller).
  void BindTripKinds(void** slots, void** state, void** tables, size_t stride, size_t reserved,
                     const bool** predicate) const;
  // Pointers per trip kind: every kernel's buffers.
  size_t KernelBuffersPerTrip() const;
  static constexpr size_t kTripKinds = 3;

  // The state buffer of leaf `i` that does not hold the current state (the
  // first when the current state is still the initial value).
  void* OtherBuffer(void* const* slots, size_t i) const { return OtherBuffer(slots, i, slots[results_[i]]); }
  void* OtherBuffer(void* const* slots, size_t i, const void* current) const {
    return current == slots[state_a_[i]] ? slots[state_b_[i]] : slots[state_a_[i]];
  }

  std::vector<int> state_a_, state_b_, results_;
  std::vector<int64_t> leaf_bytes_;
  std::vector<bool> computed_in_place_;
  NestedComputation condition_, body_;
  // Every leaf computed in place or passed through (body result = its
  // parameter): what RunWithBoundKernels needs of the state.
  bool state_alternates_ = false;
  FusedLoopFunction fused_loop_ = nullptr;
  mutable std::atomic<int64_t> fused_calls_{0};
};

class ConditionalThunk : public Thunk {
 public:
  // inputs: selector, then each branch's operand leaves in branch order.
  // Branch i binds `branch_operands[i]` and its result leaves are copied to
  // `outputs`. A pred selector picks branch 0 when true; an integer selector
  // out of range picks the last branch.
  ConditionalThunk(int selector, ElementType selector_type, std::vector<std::vector<int>> branch_operands,
                   std::vector<NestedComputation> branches, std::vector<int> outputs,
                   std::vector<int64_t> leaf_bytes);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "conditional"; }

 private:
  ElementType selector_type_;
  std::vector<std::vector<int>> branch_operands_;
  std::vector<NestedComputation> branches_;
  std::vector<int64_t> leaf_bytes_;
};

}  // namespace kiln::cpu
