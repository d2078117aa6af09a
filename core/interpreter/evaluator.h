// The evaluator: runs a computation of a module on argument literals,
// instruction by instruction, recursing into called computations.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/interpreter/eval_context.h"
#include "core/interpreter/tape.h"
#include "core/stop_condition.h"

namespace kiln::interpreter {

// Precomputed evaluation order of one computation: instructions reachable
// from the root (operands first), where each operand's value lives, and when
// an intermediate value can be dropped.
struct ComputationPlan {
  std::vector<const Instruction*> order;
  std::vector<std::vector<size_t>> operand_slots;
  std::vector<std::vector<size_t>> release_after;
  size_t root_slot = 0;
};

// Plans of a module's computations: all of them at once (Build: the
// interpreter backend runs every computation), or each on its first Find
// (OnFirstUse: the cpu backend runs few computations through the
// interpreter, often none, and planning every computation of a large module
// was a twentieth of its compile). One ModulePlan serves concurrent
// executions either way: a plan made on first use is made under a lock and
// never moves.
class ModulePlan {
 public:
  static ModulePlan Build(const Module& module);
  // `module` outlives the plan and does not change while it lives.
  static ModulePlan OnFirstUse(const Module& module);
  // The plan of one of the module's computations; null for any other.
  const ComputationPlan* Find(const Computation* computation) const;
  // How many computations have a plan so far.
  size_t planned() const;

 private:
  const Module* module_ = nullptr;  // set when plans are made on first use
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  mutable std::unordered_map<const Computation*, ComputationPlan> plans_;
};

// Evaluates computations for one execution. Not shared between threads.
// `stop` is checked before every instruction and at every while back-edge,
// so per-element calls of reducers and comparators are covered too.
class Evaluator : public ComputationRunner {
 public:
  Evaluator(const ModulePlan& plan, HostQueues* queues, uint64_t rng_seed, StopCondition stop = {});
  StatusOr<Literal> Run(const Computation& computation, Operands arguments) override;
  // What the tapes of gradient loops (core/tape_custom_calls.h) held.
  const TapeStatistics& tape_statistics() const { return tapes_.statistics(); }
  // The execution's `rng` stream: the cpu backend's rng thunk takes its
  // draws from it, so its ops and those run here share one counter.
  RngStream& rng_stream() { return rng_; }

 private:
  StatusOr<Literal> EvaluateInstruction(const Instruction& instruction, Operands operands,
                                        Operands arguments);
  StatusOr<Literal> EvaluateWhile(const Instruction& instruction, Operands operands);
  StatusOr<Literal> EvaluateConditional(const Instruction& instruction, Operands operands);

  const ModulePlan& plan_;
  StopCondition stop_;
  RngStream rng_;
  EvalContext context_;
  Tapes tapes_;
};

}  // namespace kiln::interpreter
