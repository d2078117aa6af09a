#include "backends/cpu/control_flow_thunks.h"

#include <cstdint>
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

// One loop run's table of `size` elements: on the stack up to `N` (what
// small loops need), on the heap beyond, so that a short loop run once per
// trip of an outer loop allocates nothing. Elements start uninitialised.
template <typename T, size_t N>
class RunTable {
 public:
  explicit RunTable(size_t size) {
    if (size > N) {
      heap_.resize(size);
      data_ = heap_.data();
    }
  }
  RunTable(const RunTable&) = delete;
  RunTable& operator=(const RunTable&) = delete;
  T& operator[](size_t i) { return data_[i]; }

 private:
  T inline_[N];
  std::vector<T> heap_;
  T* data_ = inline_;
};

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
      body_(std::move(body)) {
  state_alternates_ = true;
  for (size_t i = 0; i < results_.size(); ++i) {
    const bool passed_through = body_.result_leaves[i] == body_.parameter_leaves[i];
    if (!computed_in_place_[i] && !passed_through) state_alternates_ = false;
  }
}

Status WhileThunk::Run(ExecutionContext& context) const {
  if (state_alternates_ && KernelsRunInline(*condition_.sequence) && KernelsRunInline(*body_.sequence)) {
    return fused_loop_ != nullptr ? RunFused(context) : RunWithBoundKernels(context);
  }
  return RunSequences(context);
}

bool WhileThunk::RunsFused() const {
  return fused_loop_ != nullptr && state_alternates_ && KernelsRunInline(*condition_.sequence) &&
         KernelsRunInline(*body_.sequence);
}

size_t WhileThunk::KernelBuffersPerTrip() const {
  size_t buffers = 0;
  for (const ThunkSequence* sequence : {condition_.sequence, body_.sequence}) {
    for (const auto& thunk : sequence->thunks)
      buffers += static_cast<const KernelThunk&>(*thunk).arguments().size();
  }
  return buffers;
}

void WhileThunk::BindTripKinds(void** slots, void** state, void** tables, size_t stride, size_t reserved,
                               const bool** predicate) const {
  const size_t leaves = results_.size();
  for (size_t kind = 0; kind < kTripKinds; ++kind) {
    void** current = &state[kind * leaves];
    for (size_t i = 0; i < leaves; ++i) {
      if (kind == 0) {
        current[i] = slots[inputs_[i]];
      } else {
        void* previous = state[(kind - 1) * leaves + i];
        current[i] = computed_in_place_[i] ? OtherBuffer(slots, i, previous) : previous;
      }
      slots[condition_.parameter_leaves[i]] = current[i];
      slots[body_.parameter_leaves[i]] = current[i];
      if (computed_in_place_[i]) slots[body_.result_leaves[i]] = OtherBuffer(slots, i, current[i]);
    }
    predicate[kind] = static_cast<const bool*>(slots[condition_.result_leaves[0]]);
    void** bound = &tables[kind * stride + reserved];
    for (const ThunkSequence* sequence : {condition_.sequence, body_.sequence}) {
      for (const auto& thunk : sequence->thunks) {
        for (int slot : static_cast<const KernelThunk&>(*thunk).arguments()) *bound++ = slots[slot];
      }
    }
  }
}

Status WhileThunk::RunWithBoundKernels(ExecutionContext& context) const {
  void** slots = context.slots;
  const size_t leaves = results_.size();
  struct BoundKernel {
    KernelFunction function;
    int64_t extent;
    size_t first_buffer;  // into one trip kind's buffer pointers
  };
  const size_t kernel_count = condition_.sequence->thunks.size() + body_.sequence->thunks.size();
  RunTable<BoundKernel, 16> kernels(kernel_count);
  size_t next_kernel = 0;
  size_t buffers_per_trip = 0;
  for (const ThunkSequence* sequence : {condition_.sequence, body_.sequence}) {
    for (const auto& thunk : sequence->thunks) {
      const auto& kernel = static_cast<const KernelThunk&>(*thunk);
      kernels[next_kernel++] = {kernel.function(), kernel.extent(), buffers_per_trip};
      buffers_per_trip += kernel.arguments().size();
    }
  }
  const size_t condition_kernels = condition_.sequence->thunks.size();
  // Trip kinds: 0 the first trip, 1 every odd one, 2 every even one after
  // the first. Per kind: each leaf's current state, the predicate, and every
  // kernel's buffer pointers, found by binding the slots as that trip would.
  RunTable<void*, kTripKinds * 16> state(kTripKinds * leaves);
  RunTable<void*, kTripKinds * 64> buffers(kTripKinds * buffers_per_trip);
  const bool* predicate[kTripKinds];
  BindTripKinds(slots, &state[0], &buffers[0], buffers_per_trip, 0, predicate);
  const bool may_stop = context.stop->can_stop();
  size_t kind = 0;
  int64_t iterations = 0;
  for (;; ++iterations) {
    if (may_stop && iterations % kTripsPerStopCheck == 0) {
      Status stopped = context.stop->Check();  // the back-edge, every kTripsPerStopCheck trips
      if (!stopped.ok()) return StoppedInLoop(stopped, name(), iterations);
    }
    void* const* bound = &buffers[kind * buffers_per_trip];
    size_t k = 0;
    for (; k < condition_kernels; ++k)
      kernels[k].function(bound + kernels[k].first_buffer, 0, kernels[k].extent);
    if (!*predicate[kind]) break;
    for (; k < kernel_count; ++k) kernels[k].function(bound + kernels[k].first_buffer, 0, kernels[k].extent);
    kind = kind == 1 ? 2 : 1;
  }
  for (size_t i = 0; i < leaves; ++i) slots[results_[i]] = state[kind * leaves + i];
  return OkStatus();
}

Status WhileThunk::RunFused(ExecutionContext& context) const {
  void** slots = context.slots;
  const size_t leaves = results_.size();
  // Per trip kind: the predicate's address, then every kernel's buffers
  // (fused_loop.h's table).
  const size_t stride = 1 + KernelBuffersPerTrip();
  RunTable<void*, kTripKinds * 16> state(kTripKinds * leaves);
  RunTable<void*, kTripKinds * 64> tables(kTripKinds * stride);
  const bool* predicate[kTripKinds];
  BindTripKinds(slots, &state[0], &tables[0], stride, 1, predicate);
  for (size_t kind = 0; kind < kTripKinds; ++kind) tables[kind * stride] = const_cast<bool*>(predicate[kind]);
  const bool may_stop = context.stop->can_stop();
  const int64_t trips_per_call = may_stop ? kFusedTripsPerStopCheck : INT64_MAX;
  int64_t kind = 0;
  int64_t iterations = 0;
  for (;;) {
    if (may_stop) {
      Status stopped = context.stop->Check();  // the back-edge, every kFusedTripsPerStopCheck trips
      if (!stopped.ok()) return StoppedInLoop(stopped, name(), iterations);
    }
    int64_t trips = 0;
    const bool finished = fused_loop_(&tables[0], kind, trips_per_call, &trips) != 0;
    fused_calls_.fetch_add(1, std::memory_order_relaxed);
    iterations += trips;
    kind = FusedLoopKindAfter(kind, trips);
    if (finished) break;
  }
  for (size_t i = 0; i < leaves; ++i) slots[results_[i]] = state[static_cast<size_t>(kind) * leaves + i];
  return OkStatus();
}

Status WhileThunk::RunSequences(ExecutionContext& context) const {
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
