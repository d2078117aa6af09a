#include "core/lowering/whole_loop_plan.h"

#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/literal.h"

namespace kiln {
namespace {

// The loop kernel's pointers: one per distinct slot, in the order the
// steps first name them.
class WholeLoopPointers {
 public:
  explicit WholeLoopPointers(std::vector<int>& slots) : slots_(slots) {}
  int Of(int slot) {
    const auto [found, inserted] = index_.try_emplace(slot, static_cast<int>(slots_.size()));
    if (inserted) slots_.push_back(slot);
    return found->second;
  }

 private:
  std::vector<int>& slots_;
  std::unordered_map<int, int> index_;
};

bool ArrayFitsWholeLoop(const KernelArray& array) {
  if (!array.shape.IsArray()) return false;
  const int64_t elements = array.shape.element_count();
  return elements >= 1 && elements <= kWholeLoopMaxElements && array.bytes > 0;
}

// Counts of what one trip runs (every branch of a conditional), against
// the limits.
struct WholeLoopBudget {
  size_t kernels = 0;
  size_t copies = 0;
  bool Within() const { return kernels <= kWholeLoopMaxKernels && copies <= kWholeLoopMaxCopies; }
};

// Conditionals inside conditionals inside the loop, at most.
constexpr int kWholeLoopMaxConditionalDepth = 4;

// What planning one loop kernel keeps track of.
class LoopStepPlanner {
 public:
  LoopStepPlanner(const StepProgram& program, const WholeLoopKernelRule& rule, bool conditionals,
                  std::vector<int>& slots)
      : program_(program), rule_(rule), conditionals_(conditionals), pointers_(slots) {}

  // The pointer of `slot`, seen through the branch parameters bound so far:
  // the host binds a branch's parameters to its operands as it runs it, a
  // loop kernel reads the operands' slots themselves.
  int Pointer(int slot) { return pointers_.Of(Resolve(slot)); }

  bool AppendCopy(int source, int target, int64_t bytes, std::vector<WholeLoopStep>& steps) {
    if (bytes == 0) return true;  // the host's runner skips it too
    if (bytes < 0 || bytes > kWholeLoopMaxElements * 16) return false;
    const int from = Pointer(source);
    const int to = Pointer(target);
    if (from == to) return true;
    ++budget_.copies;
    WholeLoopStep copy;
    copy.buffers = {from, to};
    copy.bytes = bytes;
    steps.push_back(std::move(copy));
    return true;
  }

  // Appends `sequence`'s steps to `steps`; false when one is neither a
  // small kernel the backend can inline, a copy, nor (where the backend
  // takes them) a conditional of such steps.
  bool AppendSteps(const StepSequence& sequence, std::vector<WholeLoopStep>& steps, int depth) {
    for (const ProgramStep& step : sequence.steps) {
      switch (step.kind) {
        case ProgramStep::Kind::kCopy:
          if (step.sources.size() != step.targets.size() || step.bytes.size() != step.sources.size())
            return false;
          for (size_t i = 0; i < step.sources.size(); ++i) {
            if (!AppendCopy(step.sources[i], step.targets[i], step.bytes[i], steps)) return false;
          }
          break;
        case ProgramStep::Kind::kLaunch:
          if (!AppendLaunch(step, steps)) return false;
          break;
        case ProgramStep::Kind::kConditional:
          if (!AppendConditional(step, steps, depth)) return false;
          break;
        default: return false;
      }
    }
    return budget_.Within();
  }

  const WholeLoopBudget& budget() const { return budget_; }

 private:
  int Resolve(int slot) const {
    const auto found = bound_.find(slot);
    return found == bound_.end() ? slot : found->second;
  }

  bool AppendLaunch(const ProgramStep& step, std::vector<WholeLoopStep>& steps) {
    if (step.kernel < 0 || static_cast<size_t>(step.kernel) >= program_.kernels.size()) return false;
    const KernelDescription& kernel = program_.kernels[static_cast<size_t>(step.kernel)];
    if (kernel.computation == nullptr || kernel.scratch_bytes != 0 || !rule_(step.kernel)) return false;
    if (step.buffers.size() != kernel.arguments.size() + kernel.results.size()) return false;
    for (const KernelArray& array : kernel.arguments) {
      if (!ArrayFitsWholeLoop(array)) return false;
    }
    for (const KernelArray& array : kernel.results) {
      if (!ArrayFitsWholeLoop(array)) return false;
    }
    ++budget_.kernels;
    WholeLoopStep launch;
    launch.kernel = step.kernel;
    for (int slot : step.buffers) launch.buffers.push_back(Pointer(slot));
    steps.push_back(std::move(launch));
    return true;
  }

  bool AppendConditional(const ProgramStep& step, std::vector<WholeLoopStep>& steps, int depth) {
    if (!conditionals_ || depth >= kWholeLoopMaxConditionalDepth || step.nested.empty() ||
        step.branch_operands.size() != step.nested.size() || step.bytes.size() != step.targets.size())
      return false;
    if (step.selector_type != ElementType::kPred && step.selector_type != ElementType::kS32) return false;
    if (step.selector_type == ElementType::kPred && step.nested.size() != 2) return false;
    const int selector = Resolve(step.selector);
    if (program_.slots[static_cast<size_t>(selector)].bytes < ByteWidth(step.selector_type)) return false;
    WholeLoopStep conditional;
    conditional.selector = pointers_.Of(selector);
    conditional.selector_type = step.selector_type;
    for (size_t b = 0; b < step.nested.size(); ++b) {
      const StepSequence& branch = program_.sequences[static_cast<size_t>(step.nested[b])];
      if (branch.parameters.size() != step.branch_operands[b].size() ||
          branch.results.size() != step.targets.size())
        return false;
      // The branch's parameters read their operands' slots for as long as
      // its steps are planned.
      std::vector<std::pair<int, int>> bindings;
      for (size_t i = 0; i < branch.parameters.size(); ++i)
        bindings.emplace_back(branch.parameters[i], Resolve(step.branch_operands[b][i]));
      for (const auto& [parameter, operand] : bindings) bound_[parameter] = operand;
      std::vector<WholeLoopStep> branch_steps;
      bool planned = AppendSteps(branch, branch_steps, depth + 1);
      for (size_t i = 0; planned && i < step.targets.size(); ++i)
        planned = AppendCopy(branch.results[i], step.targets[i], step.bytes[i], branch_steps);
      for (const auto& binding : bindings) bound_.erase(binding.first);
      if (!planned) return false;
      conditional.branches.push_back(std::move(branch_steps));
    }
    steps.push_back(std::move(conditional));
    return true;
  }

  const StepProgram& program_;
  const WholeLoopKernelRule& rule_;
  const bool conditionals_;
  WholeLoopPointers pointers_;
  WholeLoopBudget budget_;
  std::unordered_map<int, int> bound_;  // branch parameter slot -> its operand's slot
};

// The loop kernel request for `step` (a kWhile), or false when it cannot
// run whole.
bool PlanWholeLoop(const StepProgram& program, const ProgramStep& step, const WholeLoopKernelRule& rule,
                   bool conditionals, WholeLoop& loop, WholeLoopKernel& kernel) {
  if (step.nested.size() != 2) return false;
  const StepSequence& condition = program.sequences[static_cast<size_t>(step.nested[0])];
  const StepSequence& body = program.sequences[static_cast<size_t>(step.nested[1])];
  if (condition.results.size() != 1 || body.results.size() != step.targets.size() ||
      step.bytes.size() != step.targets.size())
    return false;
  LoopStepPlanner planner(program, rule, conditionals, loop.slots);
  if (!planner.AppendSteps(condition, kernel.condition, 0)) return false;
  const int predicate = condition.results[0];
  if (program.slots[static_cast<size_t>(predicate)].bytes < 1) return false;
  kernel.predicate = planner.Pointer(predicate);
  if (!planner.AppendSteps(body, kernel.body, 0)) return false;
  // The host's loop copies the body's results over the state after each
  // trip (they are never the body's own bound slots): so does the kernel.
  for (size_t i = 0; i < step.targets.size(); ++i) {
    if (!planner.AppendCopy(body.results[i], step.targets[i], step.bytes[i], kernel.body)) return false;
  }
  // A loop of copies alone launches nothing as it runs now; it stays so.
  if (planner.budget().kernels == 0 || !planner.budget().Within() ||
      loop.slots.size() > kWholeLoopMaxPointers)
    return false;
  kernel.pointers = static_cast<int>(loop.slots.size());
  loop.step = &step;
  return true;
}

}  // namespace

StatusOr<bool> WholeLoopsEnabled(const char* variable, std::string_view backend) {
  const char* setting = std::getenv(variable);
  const std::string choice = setting != nullptr ? setting : "";
  if (choice.empty() || choice == "1" || choice == "on") return true;
  if (choice == "0" || choice == "off") return false;
  return InvalidArgument(backend, ": ", variable, "='", choice,
                         "' is not one of 1 or on (small while loops run as one kernel, the default), 0 or "
                         "off (every loop runs step by step from the host)");
}

WholeLoopPlan PlanWholeLoops(const StepProgram& program, const WholeLoopKernelRule& rule, bool conditionals) {
  WholeLoopPlan plan;
  for (const StepSequence& sequence : program.sequences) {
    for (const ProgramStep& step : sequence.steps) {
      if (step.kind != ProgramStep::Kind::kWhile) continue;
      WholeLoop loop;
      WholeLoopKernel kernel;
      if (!PlanWholeLoop(program, step, rule, conditionals, loop, kernel)) continue;
      kernel.name = "kiln_loop_" + std::to_string(plan.kernels.size());
      plan.loops.push_back(std::move(loop));
      plan.kernels.push_back(std::move(kernel));
    }
  }
  return plan;
}

StatusOr<StepLoopTrips> LoopTripsReported(const int64_t (&reported)[2], int64_t max_trips,
                                          std::string_view backend, std::string_view entry,
                                          std::string_view loop_name) {
  const int64_t trips = reported[0];
  const int64_t finished = reported[1];
  const bool valid =
      trips >= 0 && trips <= max_trips && (finished == 1 || (finished == 0 && trips == max_trips));
  if (!valid) {
    return Internal(backend, ": loop kernel ", entry, " of while '", loop_name, "' reported ", trips,
                    " trips, finished ", finished, ", for a budget of ", max_trips,
                    trips == -1 ? " (it wrote nothing: did it run?)" : "");
  }
  return StepLoopTrips{trips, finished == 1};
}

StatusOr<std::vector<WholeLoop>> AdoptWholeLoops(WholeLoopPlan plan, const std::vector<std::string>& entries,
                                                 StepProgram& program, int64_t alignment,
                                                 std::string_view backend) {
  if (entries.size() != plan.loops.size())
    return Internal(backend, ": ", entries.size(), " loop kernels compiled for ", plan.loops.size(),
                    " loops");
  if (alignment < 1) return Internal(backend, ": loop status alignment ", alignment);
  std::vector<WholeLoop> kept;
  for (size_t i = 0; i < plan.loops.size(); ++i) {
    if (entries[i].empty()) continue;
    plan.loops[i].entry = entries[i];
    kept.push_back(std::move(plan.loops[i]));
  }
  if (kept.empty()) return kept;
  // One status for all: an execution runs one loop kernel at a time. It
  // lies past every temporary, so no step of the program writes it.
  StepSlot status;
  status.kind = StepSlotKind::kTemporary;
  status.bytes = 2 * sizeof(int64_t);
  status.offset = (program.scratch_bytes + alignment - 1) / alignment * alignment;
  program.scratch_bytes = status.offset + status.bytes;
  program.slots.push_back(status);
  const int status_slot = static_cast<int>(program.slots.size() - 1);
  program.constant_storage.push_back(Literal::FromVector<int64_t>({-1, 0}));
  program.constants.push_back(&program.constant_storage.back());
  StepSlot unreported;
  unreported.kind = StepSlotKind::kConstant;
  unreported.bytes = status.bytes;
  unreported.index = static_cast<int64_t>(program.constants.size() - 1);
  program.slots.push_back(unreported);
  const int unreported_slot = static_cast<int>(program.slots.size() - 1);
  for (WholeLoop& loop : kept) {
    loop.status_slot = status_slot;
    loop.unreported_slot = unreported_slot;
  }
  return kept;
}

}  // namespace kiln
