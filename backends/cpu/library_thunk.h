// The generic path: ops with no native lowering (custom-call, batch norm,
// what the code generator cannot emit, ...) run through the reference
// interpreter's kernels on literals copied in and out of slots.
// Correct for every op the interpreter runs; slow, and meant to shrink.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/interpreter/eval_context.h"
#include "core/interpreter/evaluator.h"

namespace kiln::cpu {

// The interpreter state of one execution: made on first use, so programs
// without library thunks pay nothing for it.
class LibraryRuntime {
 public:
  // `stop` outlives the runtime.
  LibraryRuntime(const interpreter::ModulePlan* plan, interpreter::HostQueues* queues, uint64_t rng_seed,
                 const StopCondition* stop)
      : plan_(plan), queues_(queues), rng_seed_(rng_seed), stop_(stop) {}
  interpreter::Evaluator& evaluator();

 private:
  const interpreter::ModulePlan* plan_;
  interpreter::HostQueues* queues_;
  uint64_t rng_seed_;
  const StopCondition* stop_;
  std::optional<interpreter::Evaluator> evaluator_;
};

// One parameter of a computation: its shape (maybe a tuple) and the slots of
// its array leaves in order.
struct ParameterBinding {
  Shape shape;
  std::vector<int> leaf_slots;
};

// Runs `computation` with the interpreter and writes its result's array
// leaves to `outputs`.
class LibraryThunk : public Thunk {
 public:
  LibraryThunk(const Computation* computation, std::vector<ParameterBinding> parameters,
               std::vector<int> outputs, std::vector<int64_t> output_bytes);
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "library"; }
  // What it computes: the computation whose parameters `parameters` bind.
  const Computation* computation() const { return computation_; }

 private:
  const Computation* computation_;
  std::vector<ParameterBinding> parameters_;
  std::vector<int64_t> output_bytes_;
};

// All slots of the bindings, in order.
std::vector<int> BindingSlots(const std::vector<ParameterBinding>& parameters);

}  // namespace kiln::cpu
