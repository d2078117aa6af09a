// while and conditional: nested thunk sequences whose parameters are bound
// by pointer (no copy in) to the caller's arrays. A loop keeps its state in
// two buffers per leaf and alternates between them, so the body reads one
// while its results land in the other (computed there directly, or copied
// when the body takes the leaf from elsewhere); a leaf the body passes
// through unchanged is not copied at all.
#pragma once

#include <cstdint>
#include <vector>

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
