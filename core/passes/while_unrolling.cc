#include "core/passes/while_unrolling.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "core/ir_edit.h"

namespace kiln {
namespace {

// The scalar integer constant `instruction` is, or nullopt. Values beyond
// 32 bits are not taken, so the trip arithmetic below cannot overflow.
std::optional<int64_t> SmallIntegerConstant(const Instruction* instruction) {
  if (instruction->opcode != Opcode::kConstant || !instruction->literal.has_value() ||
      !instruction->shape.IsScalar() || !IsIntegral(instruction->shape.element_type()))
    return std::nullopt;
  const int64_t value = instruction->literal->GetAsInt64(0);
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
    return std::nullopt;
  return value;
}

// Whether `instruction` is get-tuple-element(parameter 0 of its computation, index).
bool ReadsStateElement(const Instruction* instruction, int64_t index) {
  return instruction->opcode == Opcode::kGetTupleElement && instruction->attrs.tuple_index == index &&
         instruction->operand(0)->opcode == Opcode::kParameter &&
         instruction->operand(0)->attrs.parameter_number == 0;
}

// Whether `value` fits the integer type `type`.
bool FitsIntegerType(int64_t value, ElementType type) {
  const int64_t bits = 8 * ByteWidth(type);
  if (bits >= 64) return true;  // the values are at most 33 bits wide here
  if (IsUnsignedIntegral(type)) return value >= 0 && value < (int64_t{1} << bits);
  return value >= -(int64_t{1} << (bits - 1)) && value < (int64_t{1} << (bits - 1));
}

// Instructions of `computation` and of every computation it calls, each
// computation counted once per call site; whether any of them depends on
// the order it runs in (a side effect, rng's generator, a collective) goes
// to `ordered`: the loop runs them trip after trip, the calls of the
// unrolled trips only as their data requires.
int64_t InstructionsWithCallees(const Computation& computation, bool& ordered) {
  int64_t count = 0;
  for (const auto& instruction : computation.instructions()) {
    ++count;
    ordered = ordered || HasSideEffect(*instruction) || HasTraits(instruction->opcode, kStateful) ||
              HasTraits(instruction->opcode, kCollective);
    for (const Computation* callee : instruction->called) count += InstructionsWithCallees(*callee, ordered);
  }
  return count;
}

// The bytes of the largest array in `shape`'s leaves.
int64_t LargestArrayBytes(const Shape& shape) {
  int64_t largest = 0;
  for (const Shape& leaf : shape.Leaves()) {
    if (leaf.IsArray()) largest = std::max(largest, leaf.element_count() * ByteWidth(leaf.element_type()));
  }
  return largest;
}

}  // namespace

std::optional<int64_t> CountedWhileTrips(const Instruction& loop) {
  if (loop.opcode != Opcode::kWhile || loop.operands.size() != 1 || loop.called.size() != 2)
    return std::nullopt;
  const Computation& condition = *loop.called[0];
  const Computation& body = *loop.called[1];
  const Instruction* init = loop.operand(0);
  const Instruction* compare = condition.root();
  const Instruction* next = body.root();
  if (init->opcode != Opcode::kTuple || compare == nullptr || compare->opcode != Opcode::kCompare ||
      next == nullptr || next->opcode != Opcode::kTuple)
    return std::nullopt;
  // i < n, i <= n, or the same written n > i, n >= i.
  ComparisonDirection direction = compare->attrs.comparison_direction;
  const Instruction* counter = compare->operand(0);
  const Instruction* bound = compare->operand(1);
  if (counter->opcode != Opcode::kGetTupleElement) {
    std::swap(counter, bound);
    if (direction == ComparisonDirection::kGt) {
      direction = ComparisonDirection::kLt;
    } else if (direction == ComparisonDirection::kGe) {
      direction = ComparisonDirection::kLe;
    } else {
      return std::nullopt;
    }
  }
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kLe) return std::nullopt;
  const int64_t index = counter->attrs.tuple_index;
  if (!ReadsStateElement(counter, index) || index < 0 ||
      static_cast<size_t>(index) >= init->operands.size() ||
      static_cast<size_t>(index) >= next->operands.size())
    return std::nullopt;
  const std::optional<int64_t> limit = SmallIntegerConstant(bound);
  const std::optional<int64_t> start = SmallIntegerConstant(init->operand(static_cast<size_t>(index)));
  // The body's element `index`: get-tuple-element(state, index) + step.
  const Instruction* increment = next->operand(static_cast<size_t>(index));
  if (!limit || !start || increment->opcode != Opcode::kAdd) return std::nullopt;
  const Instruction* step_value = increment->operand(1);
  if (!ReadsStateElement(increment->operand(0), index)) {
    if (!ReadsStateElement(increment->operand(1), index)) return std::nullopt;
    step_value = increment->operand(0);
  }
  const std::optional<int64_t> step = SmallIntegerConstant(step_value);
  const ElementType type = counter->shape.element_type();
  if (!step || *step <= 0 || !IsIntegral(type) || bound->shape.element_type() != type ||
      increment->shape.element_type() != type)
    return std::nullopt;
  // Runs while start + trips * step < limit (<= limit): ceil((limit - start) / step).
  const int64_t span = *limit - *start + (direction == ComparisonDirection::kLe ? 1 : 0);
  const int64_t trips = span <= 0 ? 0 : (span + *step - 1) / *step;
  // The counter never wraps around before the condition fails.
  if (!FitsIntegerType(*start + trips * *step, type)) return std::nullopt;
  return trips;
}

StatusOr<bool> WhileUnrolling::Run(Module& module) {
  bool changed = false;
  for (const std::unique_ptr<Computation>& computation : module.computations()) {
    std::vector<std::pair<Instruction*, int64_t>> loops;
    for (const std::unique_ptr<Instruction>& instruction : computation->instructions()) {
      const std::optional<int64_t> trips = CountedWhileTrips(*instruction);
      if (!trips || *trips > options_.max_trips ||
          LargestArrayBytes(instruction->shape) < options_.min_state_bytes)
        continue;
      bool ordered = false;
      const int64_t body = InstructionsWithCallees(*instruction->called[1], ordered);
      InstructionsWithCallees(*instruction->called[0], ordered);
      if (ordered || *trips * body > options_.max_unrolled_instructions) continue;
      loops.emplace_back(instruction.get(), *trips);
    }
    if (loops.empty()) continue;
    NameUniquer names(*computation);
    for (const auto& [loop, trips] : loops) {
      Instruction* state = loop->operand(0);
      for (int64_t trip = 0; trip < trips; ++trip) {
        std::unique_ptr<Instruction> call = MakeInstruction(Opcode::kCall, loop->shape, {state});
        call->called = {loop->called[1]};
        state = AddNamedInstruction(*computation, names, std::move(call), loop->name + ".trip");
      }
      computation->ReplaceAllUsesWith(loop, state);
    }
    computation->SortTopologically();
    computation->RemoveDeadInstructions();
    changed = true;
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace kiln
