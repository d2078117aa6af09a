#include "backends/cpu/control_flow_thunks.h"

#include <cstring>

#include "backends/cpu/data_movement_thunks.h"
#include "backends/cpu/kernel_thunk.h"

namespace kiln::cpu {
namespace {

std::vector<int> Flatten(int first, const std::vector<std::vector<int>>& groups) {
  std::vector<int> all = {first};
  for (const auto& group : groups) all.insert(all.end(), group.begin(), group.end());
  return all;
}

std::vector<int> Join(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void CopyIfDistinct(void* to, const void* from, int64_t bytes) {
  if (to == from) return;
  // A loop's state is often scalars: copies of a fixed small size compile to
  // one load and store instead of a call into the C library.
  switch (bytes) {
    case 1: std::memcpy(to, from, 1); return;
    case 2: std::memcpy(to, from, 2); return;
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    default:
      if (bytes > 0) std::memcpy(to, from, static_cast<size_t>(bytes));
  }
}

}  // namespace

WhileThunk::WhileThunk(std::vector<int> init, std::vector<int> state_a, std::vector<int> state_b,
                       std::vector<int> results, std::vector<int64_t> leaf_bytes,
                       std::vector<bool> computed_in_place, NestedComputation condition,
                       NestedComputation body)
    : Thunk(std::move(init), Join(Join(state_a, state_b), results)),
      state_a_(std::move(state_a)),
      state_b_(std::move(state_b)),
      results_(std::move(results)),
      leaf_bytes_(std::move(leaf_bytes)),
      computed_in_place_(std::move(computed_in_place)),
      condition_(std::move(condition)),
      body_(std::move(body)) {}

Status WhileThunk::Run(ExecutionContext& context) const {
  void** slots = context.slots;
  const size_t leaves = results_.size();
  // The first iteration reads the initial state where it is: the next state
  // always goes to a buffer other than the current one, so it is never
  // written (no copy in, and no fresh pages touched by one thread).
  for (size_t i = 0; i < leaves; ++i) slots[results_[i]] = slots[inputs_[i]];
  // A body of a few scalar kernels costs nanoseconds, so the per-iteration
  // overhead around it is what the loop costs: with every step an inline
  // kernel, the passes call the kernels directly, and the back-edge checks
  // the stop condition only when it can fire.
  const bool direct_condition = KernelsRunInline(*condition_.sequence);
  const bool direct_body = KernelsRunInline(*body_.sequence);
  const bool may_stop = context.stop->can_stop();
  int64_t iterations = 0;
  for (;; ++iterations) {
    if (may_stop) {
      Status stopped = context.stop->Check();  // the back-edge
      if (!stopped.ok()) return StoppedInLoop(stopped, name(), iterations);
    }
    for (size_t i = 0; i < leaves; ++i) slots[condition_.parameter_leaves[i]] = slots[results_[i]];
    if (direct_condition) {
      RunKernelsInline(*condition_.sequence, slots);
    } else if (Status status = condition_.sequence->Run(context); !status.ok()) {
      return StoppedInLoop(status, name(), iterations);
    }
    if (!*static_cast<const bool*>(slots[condition_.result_leaves[0]])) return OkStatus();
    for (size_t i = 0; i < leaves; ++i) {
      slots[body_.parameter_leaves[i]] = slots[results_[i]];
      if (computed_in_place_[i]) slots[body_.result_leaves[i]] = OtherBuffer(slots, i);
    }
    if (direct_body) {
      RunKernelsInline(*body_.sequence, slots);
    } else if (Status status = body_.sequence->Run(context); !status.ok()) {
      return StoppedInLoop(status, name(), iterations);
    }
    for (size_t i = 0; i < leaves; ++i) {
      const void* produced = slots[body_.result_leaves[i]];
      void* current = slots[results_[i]];
      if (produced == current) continue;  // passed through unchanged
      void* next = OtherBuffer(slots, i);
      CopyIfDistinct(next, produced, leaf_bytes_[i]);  // nothing to copy when computed in place
      slots[results_[i]] = next;
    }
  }
}

ConditionalThunk::ConditionalThunk(int selector, ElementType selector_type,
                                   std::vector<std::vector<int>> branch_operands,
                                   std::vector<NestedComputation> branches, std::vector<int> outputs,
                                   std::vector<int64_t> leaf_bytes)
    : Thunk(Flatten(selector, branch_operands), std::move(outputs)),
      selector_type_(selector_type),
      branch_operands_(std::move(branch_operands)),
      branches_(std::move(branches)),
      leaf_bytes_(std::move(leaf_bytes)) {}

Status ConditionalThunk::Run(ExecutionContext& context) const {
  void** slots = context.slots;
  const int64_t count = static_cast<int64_t>(branches_.size());
  int64_t branch;
  if (selector_type_ == ElementType::kPred) {
    branch = *static_cast<const bool*>(slots[inputs_[0]]) ? 0 : 1;
  } else {
    branch = ReadIndex(slots[inputs_[0]], selector_type_);
    if (branch < 0 || branch >= count) branch = count - 1;
  }
  if (branch >= count) return Internal("cpu: conditional has no branch ", branch);
  const NestedComputation& chosen = branches_[static_cast<size_t>(branch)];
  const std::vector<int>& operands = branch_operands_[static_cast<size_t>(branch)];
  for (size_t i = 0; i < operands.size(); ++i) slots[chosen.parameter_leaves[i]] = slots[operands[i]];
  KILN_RETURN_IF_ERROR(chosen.sequence->Run(context));
  for (size_t i = 0; i < outputs_.size(); ++i) {
    CopyIfDistinct(slots[outputs_[i]], slots[chosen.result_leaves[i]], leaf_bytes_[i]);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
