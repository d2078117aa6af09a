// The verifier: structural checks of a module, then shape inference re-run on
// every instruction so that an illegal module is refused whatever built it.
#include "core/verifier.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/pointer_map.h"
#include "core/shape_inference.h"
#include "core/work_count.h"

namespace kiln {
namespace {

std::string Where(const Computation& computation, const Instruction& instruction) {
  return "instruction " + instruction.name + " in computation " + computation.name();
}

// How many computations an opcode calls; -1 means "at least one" (conditional)
// and -2 "any number" (custom-call).
int ExpectedCalledCount(Opcode opcode) {
  switch (opcode) {
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kAllReduce:
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kSort: return 1;
    case Opcode::kSelectAndScatter:
    case Opcode::kWhile: return 2;
    case Opcode::kConditional: return -1;
    case Opcode::kCustomCall: return -2;
    default: return 0;
  }
}

Status CheckCalled(const Computation& computation, const Instruction& instruction,
                   const std::unordered_set<const Computation*>& in_module) {
  for (const Computation* callee : instruction.called) {
    if (callee == nullptr || !in_module.count(callee)) {
      return InvalidArgument(Where(computation, instruction),
                             " calls a computation that is not in the module");
    }
    if (callee == &computation) {
      return InvalidArgument(Where(computation, instruction), " calls its own computation");
    }
  }
  const int expected = ExpectedCalledCount(instruction.opcode);
  const auto count = static_cast<int>(instruction.called.size());
  if ((expected >= 0 && count != expected) || (expected == -1 && count < 1)) {
    return InvalidArgument(Where(computation, instruction), " (", OpcodeName(instruction.opcode), ") calls ",
                           count, " computations; expected ",
                           expected == -1 ? "at least 1" : std::to_string(expected));
  }
  return OkStatus();
}

Status CheckParameters(const Computation& computation) {
  size_t parameter_instructions = 0;
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode == Opcode::kParameter) ++parameter_instructions;
  }
  const auto& parameters = computation.parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr) {
      return InvalidArgument("computation ", computation.name(), " has no parameter ", i,
                             "; parameters must be numbered 0..n-1 without gaps");
    }
    if (parameters[i]->attrs.parameter_number != static_cast<int64_t>(i)) {
      return InvalidArgument("computation ", computation.name(), ": parameter slot ", i, " holds ",
                             parameters[i]->name, " numbered ", parameters[i]->attrs.parameter_number);
    }
  }
  if (parameter_instructions != parameters.size()) {
    return InvalidArgument("computation ", computation.name(), " has ", parameter_instructions,
                           " parameter instructions for ", parameters.size(),
                           " parameter numbers; a number is used twice");
  }
  return OkStatus();
}

// Whether the verifier re-infers every instruction's shape, or checks the
// structure only (see VerifyModuleStructure).
enum class Checks { kAll, kStructure };

// `operand_shapes` is scratch space kept across instructions, so that copying
// the operands' shapes reuses their storage instead of allocating.
Status CheckInstruction(const Computation& computation, const Instruction& instruction,
                        const PointerMap<size_t>& position, size_t index,
                        const std::unordered_set<const Computation*>& in_module, Checks checks,
                        std::vector<Shape>& operand_shapes) {
  const size_t operand_count = instruction.operands.size();
  if (operand_shapes.size() < operand_count) operand_shapes.resize(operand_count);
  for (size_t i = 0; i < operand_count; ++i) {
    const Instruction* operand = instruction.operands[i];
    const size_t* defined_at = position.Find(operand);  // null for a null operand
    if (defined_at == nullptr) {
      return InvalidArgument(Where(computation, instruction), " has an operand from another computation");
    }
    if (*defined_at >= index) {
      return InvalidArgument(Where(computation, instruction), " uses ", operand->name,
                             " before it is defined");
    }
    if (checks == Checks::kAll) operand_shapes[i] = operand->shape;
  }
  KILN_RETURN_IF_ERROR(CheckCalled(computation, instruction, in_module));
  if (instruction.opcode == Opcode::kConstant) {
    if (!instruction.literal.has_value()) {
      return InvalidArgument(Where(computation, instruction), " is a constant without a value");
    }
    if (!instruction.literal->shape().Compatible(instruction.shape)) {
      return InvalidArgument(Where(computation, instruction), " has shape ", instruction.shape.ToString(),
                             " but its value has shape ", instruction.literal->shape().ToString());
    }
  }
  if (checks == Checks::kStructure) return OkStatus();
  CountShapesVerified(1);
  Status layout = ValidateLayout(instruction.shape);
  if (!layout.ok()) return layout.WithContext(Where(computation, instruction));
  std::vector<ProgramShape> called;
  for (const Computation* callee : instruction.called) called.push_back(callee->program_shape());
  StatusOr<Shape> inferred =
      InferShape(instruction.opcode, std::span<const Shape>(operand_shapes.data(), operand_count),
                 instruction.attrs, called, &instruction.shape);
  if (!inferred.ok()) return inferred.status().WithContext(Where(computation, instruction));
  if (!inferred->Compatible(instruction.shape)) {
    return InvalidArgument(Where(computation, instruction), " has shape ", instruction.shape.ToString(),
                           " but shape inference gives ", inferred->ToString());
  }
  return OkStatus();
}

// A name two instructions share, if any. The names are sorted by their
// hashes, so the strings are compared only where hashes are equal: no hash
// set node per name (a set of names was 7% of a 200k-instruction compile,
// the verifier running after each pass that changed the module).
std::optional<std::string_view> DuplicateName(const std::vector<std::unique_ptr<Instruction>>& instructions) {
  std::vector<std::pair<size_t, std::string_view>> hashed;
  hashed.reserve(instructions.size());
  for (const auto& instruction : instructions) {
    hashed.emplace_back(std::hash<std::string_view>()(instruction->name), instruction->name);
  }
  std::sort(hashed.begin(), hashed.end());
  const auto twice = std::adjacent_find(hashed.begin(), hashed.end());
  if (twice == hashed.end()) return std::nullopt;
  return twice->second;
}

Status VerifyComputation(const Computation& computation,
                         const std::unordered_set<const Computation*>& in_module, Checks checks) {
  if (computation.root() == nullptr) {
    return InvalidArgument("computation ", computation.name(), " has no root instruction");
  }
  KILN_RETURN_IF_ERROR(CheckParameters(computation));
  const auto& instructions = computation.instructions();
  CountInstructionsWalked(instructions.size());
  PointerMap<size_t> position(instructions.size());
  for (size_t i = 0; i < instructions.size(); ++i) position.Insert(instructions[i].get(), i);
  // Passes name what they add through NameUniquer; a duplicate is left to
  // the full verification at the end of a pipeline (sorting every name costs
  // about a third of the structural checks).
  if (checks == Checks::kAll) {
    if (const std::optional<std::string_view> name = DuplicateName(instructions)) {
      return InvalidArgument("computation ", computation.name(), " has two instructions named ", *name);
    }
  }
  if (!position.Contains(computation.root())) {
    return InvalidArgument("computation ", computation.name(), ": root is not one of its instructions");
  }
  std::vector<Shape> operand_shapes;
  for (size_t i = 0; i < instructions.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        CheckInstruction(computation, *instructions[i], position, i, in_module, checks, operand_shapes));
  }
  return OkStatus();
}

// The computations of the module that `computation` calls, in call order.
std::vector<const Computation*> CalleesIn(const Computation& computation,
                                          const std::unordered_set<const Computation*>& in_module) {
  CountInstructionsWalked(computation.instructions().size());
  std::vector<const Computation*> callees;
  for (const auto& instruction : computation.instructions()) {
    for (const Computation* callee : instruction->called) {
      if (in_module.count(callee)) callees.push_back(callee);
    }
  }
  return callees;
}

// Computations may not call themselves, directly or through others.
Status CheckNoRecursion(const Module& module, const std::unordered_set<const Computation*>& in_module) {
  std::unordered_map<const Computation*, int> state;  // 1 = on the stack, 2 = done
  struct Frame {
    const Computation* computation;
    std::vector<const Computation*> callees;  // listed once, when the frame is pushed
    size_t next = 0;
  };
  std::vector<Frame> stack;
  for (const auto& start : module.computations()) {
    if (state[start.get()] != 0) continue;
    stack.push_back({start.get(), CalleesIn(*start, in_module)});
    state[start.get()] = 1;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next < frame.callees.size()) {
        const Computation* callee = frame.callees[frame.next++];
        if (state[callee] == 1) {
          return InvalidArgument("computation ", callee->name(), " calls itself (recursion is not allowed)");
        }
        if (state[callee] == 0) {
          state[callee] = 1;
          stack.push_back({callee, CalleesIn(*callee, in_module)});
        }
        continue;
      }
      state[frame.computation] = 2;
      stack.pop_back();
    }
  }
  return OkStatus();
}

Status CheckEntryLayout(const Module& module) {
  if (!module.entry_layout().has_value()) return OkStatus();
  const ProgramShape& layout = *module.entry_layout();
  const ProgramShape actual = module.entry()->program_shape();
  if (layout.parameters.size() != actual.parameters.size()) {
    return InvalidArgument("entry_computation_layout has ", layout.parameters.size(),
                           " parameters; the entry has ", actual.parameters.size());
  }
  for (size_t i = 0; i < layout.parameters.size(); ++i) {
    if (!layout.parameters[i].Compatible(actual.parameters[i])) {
      return InvalidArgument("entry_computation_layout parameter ", i, " is ",
                             layout.parameters[i].ToString(), " but the entry parameter is ",
                             actual.parameters[i].ToString());
    }
    KILN_RETURN_IF_ERROR(ValidateLayout(layout.parameters[i]));
  }
  if (!layout.result.Compatible(actual.result)) {
    return InvalidArgument("entry_computation_layout result is ", layout.result.ToString(),
                           " but the entry returns ", actual.result.ToString());
  }
  return ValidateLayout(layout.result);
}

Status Verify(const Module& module, Checks checks) {
  std::unordered_set<const Computation*> in_module;
  std::unordered_set<std::string_view> names;
  for (const auto& computation : module.computations()) {
    in_module.insert(computation.get());
    if (!names.insert(computation->name()).second) {
      return InvalidArgument("module ", module.name(), " has two computations named ", computation->name());
    }
  }
  if (module.entry() == nullptr)
    return InvalidArgument("module ", module.name(), " has no entry computation");
  if (!in_module.count(module.entry())) {
    return InvalidArgument("module ", module.name(), ": the entry computation is not part of the module");
  }
  KILN_RETURN_IF_ERROR(CheckNoRecursion(module, in_module));
  for (const auto& computation : module.computations()) {
    KILN_RETURN_IF_ERROR(VerifyComputation(*computation, in_module, checks));
  }
  return CheckEntryLayout(module);
}

}  // namespace

Status VerifyModule(const Module& module) { return Verify(module, Checks::kAll); }

Status VerifyModuleStructure(const Module& module) { return Verify(module, Checks::kStructure); }

}  // namespace kiln
