#include "core/lowering/step_lowering.h"

#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/array_leaves.h"
#include "core/compiler/buffer_assignment.h"
#include "core/identity_custom_calls.h"
#include "core/lowering/kernel_key.h"
#include "core/passes/device_op_expansion.h"
#include "core/passes/identity_custom_call_removal.h"
#include "core/passes/pipeline.h"
#include "core/single_instruction.h"
#include "core/tape_custom_calls.h"

namespace kiln {
namespace {

using Leaves = std::vector<int>;

Status RefuseOp(const std::string& backend, const Instruction& instruction, const std::string& why) {
  return Unimplemented(backend, ": ", OpcodeName(instruction.opcode), " '", instruction.name, "' (",
                       instruction.shape.ToString(), ") cannot run on the ", backend, " backend yet: ", why,
                       "; run the module on the cpu backend");
}

// Instructions the lowering turns into slot renames, nested sequences or
// loops and branches whatever the backend: never a backend's library call.
bool OnlyStructures(const Instruction& instruction) {
  switch (instruction.opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kAllReduce:
    case Opcode::kGetTupleElement:
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAfterAll:
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional: return true;
    default: return false;
  }
}

// A bitcast-convert between element types of one width, pred and complex
// types aside (pred's bytes must be 0 or 1): a dense array's bytes read as
// the other type.
bool ReinterpretsItsOperand(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kBitcastConvert || instruction.operands.size() != 1 ||
      !instruction.shape.IsArray() || !instruction.operand(0)->shape.IsArray())
    return false;
  const ElementType from = instruction.operand(0)->shape.element_type(),
                    to = instruction.shape.element_type();
  return ByteWidth(from) == ByteWidth(to) && from != ElementType::kPred && to != ElementType::kPred &&
         !IsComplex(from) && !IsComplex(to);
}

class Lowerer {
 public:
  Lowerer(StepProgram& program, const StepLoweringRules& rules) : program_(program), rules_(rules) {}

  Status LowerEntry();

 private:
  using Values = std::unordered_map<const Instruction*, Leaves>;

  int NewSlot(StepSlotKind kind, int64_t bytes) {
    StepSlot slot;
    slot.kind = kind;
    slot.bytes = bytes;  // a temporary's offset is placed after lowering (PlaceTemporaries)
    slot.sequence = current_sequence_;
    program_.slots.push_back(slot);
    return static_cast<int>(program_.slots.size() - 1);
  }
  Leaves NewLeaves(const Shape& shape, StepSlotKind kind) {
    Leaves leaves;
    for (const Shape& leaf : ArrayLeaves(shape)) leaves.push_back(NewSlot(kind, DenseBytes(leaf)));
    return leaves;
  }
  bool IsBound(int slot) const {
    return program_.slots[static_cast<size_t>(slot)].kind == StepSlotKind::kBound;
  }

  StatusOr<Leaves> LowerInto(const Computation& computation, int sequence,
                             const std::vector<Leaves>& parameters);
  // A new sequence for `computation` with bound parameters; its results are
  // never its own bound slots (copied to temporaries when they would be).
  StatusOr<int> LowerNested(const Computation& computation);
  Status LowerInstruction(const Instruction& instruction, int sequence, Values& values,
                          const std::vector<Leaves>& parameters);
  Status LowerWhile(const Instruction& instruction, int sequence, Values& values);
  Status LowerConditional(const Instruction& instruction, int sequence, Values& values);
  Status LowerKernel(const Instruction& instruction, const Computation& computation, int sequence,
                     Values& values);
  // `single`: the instruction alone as a computation, when one was built
  // (StepProgram::library_call_computations).
  Status LowerLibraryCall(const Instruction& instruction, int sequence, Values& values,
                          const Computation* single = nullptr);
  Status LowerTapeCall(const Instruction& instruction, int sequence, Values& values);
  // A launch of the kernel that adds `delta` to the s32[] tape counter in
  // `counter`; its output slot.
  StatusOr<int> LowerCounterStep(const Instruction& instruction, int32_t delta, int sequence, Values& values);
  Computation* SingleInstructionComputation(const Instruction& instruction);
  ProgramStep& Append(int sequence, ProgramStep step) {
    auto& steps = program_.sequences[static_cast<size_t>(sequence)].steps;
    steps.push_back(std::move(step));
    return steps.back();
  }
  int NewSequence() {
    program_.sequences.emplace_back();
    return static_cast<int>(program_.sequences.size() - 1);
  }

  // Makes `sequence` the one new slots belong to while it lives.
  class InSequence {
   public:
    InSequence(Lowerer& lowerer, int sequence) : lowerer_(lowerer), outer_(lowerer.current_sequence_) {
      lowerer_.current_sequence_ = sequence;
    }
    ~InSequence() { lowerer_.current_sequence_ = outer_; }
    InSequence(const InSequence&) = delete;
    InSequence& operator=(const InSequence&) = delete;

   private:
    Lowerer& lowerer_;
    int outer_;
  };

  StepProgram& program_;
  const StepLoweringRules& rules_;
  int current_sequence_ = 0;
  std::unordered_map<std::string, int> request_of_key_;
  std::unordered_map<int32_t, Computation*> counter_steps_;  // by delta
};

Status Lowerer::LowerEntry() {
  const int sequence = NewSequence();
  // The program shape lists the parameters by number, as arguments come.
  std::vector<Leaves> parameters;
  int64_t leaf = 0;
  for (const Shape& shape : program_.module->entry()->program_shape().parameters) {
    Leaves leaves = NewLeaves(shape, StepSlotKind::kParameter);
    for (int slot : leaves) program_.slots[static_cast<size_t>(slot)].index = leaf++;
    parameters.push_back(std::move(leaves));
  }
  KILN_ASSIGN_OR_RETURN(Leaves results, LowerInto(*program_.module->entry(), sequence, parameters));
  program_.sequences[static_cast<size_t>(sequence)].results = std::move(results);
  return OkStatus();
}

StatusOr<int> Lowerer::LowerNested(const Computation& computation) {
  const int sequence = NewSequence();
  const InSequence in_nested(*this, sequence);
  // parameters() is indexed by parameter number.
  std::vector<Leaves> parameters;
  std::vector<int> bound;
  for (const Instruction* parameter : computation.parameters()) {
    parameters.push_back(NewLeaves(parameter->shape, StepSlotKind::kBound));
    bound.insert(bound.end(), parameters.back().begin(), parameters.back().end());
  }
  KILN_ASSIGN_OR_RETURN(Leaves results, LowerInto(computation, sequence, parameters));
  // A result that is one of the sequence's own parameters would alias the
  // loop state or branch operand it is copied over: give it its own copy,
  // unless the backend's loops and branches handle that themselves.
  ProgramStep copy;
  copy.kind = ProgramStep::Kind::kCopy;
  copy.name = computation.name() + ".results";
  for (int& result : results) {
    if (!rules_.copy_bound_results || !IsBound(result)) continue;
    const int64_t bytes = program_.slots[static_cast<size_t>(result)].bytes;
    const int target = NewSlot(StepSlotKind::kTemporary, bytes);
    copy.sources.push_back(result);
    copy.targets.push_back(target);
    copy.bytes.push_back(bytes);
    result = target;
  }
  if (!copy.sources.empty()) Append(sequence, std::move(copy));
  StepSequence& lowered = program_.sequences[static_cast<size_t>(sequence)];
  lowered.parameters = std::move(bound);
  lowered.results = std::move(results);
  return sequence;
}

StatusOr<Leaves> Lowerer::LowerInto(const Computation& computation, int sequence,
                                    const std::vector<Leaves>& parameters) {
  if (computation.root() == nullptr)
    return InvalidArgument(rules_.backend, ": computation '", computation.name(), "' has no root");
  const InSequence in_sequence(*this, sequence);
  Values values;
  for (const Instruction* instruction : computation.LiveInstructions()) {
    Status status = LowerInstruction(*instruction, sequence, values, parameters);
    if (!status.ok()) return status.WithContext(std::string("lowering '") + instruction->name + "'");
  }
  return values.at(computation.root());
}

Status Lowerer::LowerInstruction(const Instruction& instruction, int sequence, Values& values,
                                 const std::vector<Leaves>& parameters) {
  auto operand_leaves = [&](size_t i) -> const Leaves& { return values.at(instruction.operand(i)); };
  if (rules_.bitcasts_rename_their_operand && ReinterpretsItsOperand(instruction)) {
    values[&instruction] = operand_leaves(0);
    return OkStatus();
  }
  if (rules_.host_library_call && !OnlyStructures(instruction) && rules_.host_library_call(instruction))
    return LowerLibraryCall(instruction, sequence, values);
  switch (instruction.opcode) {
    case Opcode::kParameter: {
      const auto number = static_cast<size_t>(instruction.attrs.parameter_number);
      if (number >= parameters.size())
        return Internal(rules_.backend, ": parameter ", number, " is not bound");
      values[&instruction] = parameters[number];
      return OkStatus();
    }
    case Opcode::kConstant: {
      if (!instruction.literal.has_value())
        return InvalidArgument(rules_.backend, ": constant '", instruction.name, "' has no value");
      // An array constant is its instruction's own literal (never copied: it
      // may be a model's weights); a tuple constant's leaves are kept here.
      std::vector<const Literal*> leaves;
      if (instruction.literal->shape().IsArray()) {
        leaves.push_back(&*instruction.literal);
      } else {
        for (Literal& leaf : instruction.literal->Leaves()) {
          if (leaf.shape().IsArray())
            leaves.push_back(&program_.constant_storage.emplace_back(std::move(leaf)));
        }
      }
      Leaves slots;
      for (const Literal* leaf : leaves) {
        const int slot = NewSlot(StepSlotKind::kConstant, static_cast<int64_t>(leaf->raw().size()));
        program_.slots[static_cast<size_t>(slot)].index = static_cast<int64_t>(program_.constants.size());
        program_.constants.push_back(leaf);
        slots.push_back(slot);
      }
      values[&instruction] = std::move(slots);
      return OkStatus();
    }
    case Opcode::kTuple:
    case Opcode::kAllReduce: {  // one replica: all-reduce returns its operands
      Leaves leaves;
      for (size_t i = 0; i < instruction.operands.size(); ++i)
        leaves.insert(leaves.end(), operand_leaves(i).begin(), operand_leaves(i).end());
      values[&instruction] = std::move(leaves);
      return OkStatus();
    }
    case Opcode::kGetTupleElement: {
      const Shape& tuple = instruction.operand(0)->shape;
      const int64_t index = instruction.attrs.tuple_index;
      if (!tuple.IsTuple() || index < 0 || index >= static_cast<int64_t>(tuple.tuple_shapes().size()))
        return InvalidArgument(rules_.backend, ": get-tuple-element index ", index, " out of range for ",
                               tuple.ToString());
      int64_t begin = 0;
      for (int64_t i = 0; i < index; ++i) begin += ArrayLeafCount(tuple.tuple_shapes(i));
      const int64_t count = ArrayLeafCount(tuple.tuple_shapes(index));
      const Leaves& all = operand_leaves(0);
      values[&instruction] = Leaves(all.begin() + begin, all.begin() + begin + count);
      return OkStatus();
    }
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
      // Dense row-major arrays: these only rename their operand.
      values[&instruction] = operand_leaves(0);
      return OkStatus();
    case Opcode::kAfterAll: values[&instruction] = {}; return OkStatus();
    case Opcode::kCall: {
      if (instruction.called.size() != 1)
        return InvalidArgument(rules_.backend, ": call needs one computation");
      std::vector<Leaves> arguments;
      for (size_t i = 0; i < instruction.operands.size(); ++i) arguments.push_back(operand_leaves(i));
      KILN_ASSIGN_OR_RETURN(values[&instruction], LowerInto(*instruction.called[0], sequence, arguments));
      return OkStatus();
    }
    case Opcode::kFusion: {
      if (instruction.called.size() != 1)
        return InvalidArgument(rules_.backend, ": fusion needs one computation");
      if (AllArrays(instruction) && rules_.check_kernel(*instruction.called[0]).ok())
        return LowerKernel(instruction, *instruction.called[0], sequence, values);
      // Not one kernel: lower the fused instructions one by one.
      std::vector<Leaves> arguments;
      for (size_t i = 0; i < instruction.operands.size(); ++i) arguments.push_back(operand_leaves(i));
      KILN_ASSIGN_OR_RETURN(values[&instruction], LowerInto(*instruction.called[0], sequence, arguments));
      return OkStatus();
    }
    case Opcode::kWhile: return LowerWhile(instruction, sequence, values);
    case Opcode::kConditional: return LowerConditional(instruction, sequence, values);
    case Opcode::kCustomCall:
      if (IsTapeCustomCall(instruction.attrs.custom_call_target))
        return LowerTapeCall(instruction, sequence, values);
      break;
    case Opcode::kInfeed: {
      // (data, token) or data; the token has no storage.
      const Shape& shape = instruction.shape;
      const bool with_token =
          shape.IsTuple() && shape.tuple_shapes().size() == 2 && shape.tuple_shapes(1).IsToken();
      ProgramStep step;
      step.kind = ProgramStep::Kind::kInfeed;
      step.name = instruction.name;
      step.shape = with_token ? shape.tuple_shapes(0) : shape;
      step.targets = NewLeaves(step.shape, StepSlotKind::kTemporary);
      for (int slot : step.targets) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
      values[&instruction] = step.targets;
      Append(sequence, std::move(step));
      return OkStatus();
    }
    case Opcode::kOutfeed: {
      if (instruction.operands.empty()) return InvalidArgument(rules_.backend, ": outfeed needs an operand");
      ProgramStep step;
      step.kind = ProgramStep::Kind::kOutfeed;
      step.name = instruction.name;
      step.shape = instruction.operand(0)->shape;
      step.sources = operand_leaves(0);
      for (int slot : step.sources) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
      values[&instruction] = {};
      Append(sequence, std::move(step));
      return OkStatus();
    }
    default: break;
  }
  const bool fall_back = rules_.library_call_when_not_a_kernel;
  if (!AllArrays(instruction)) {
    if (fall_back) return LowerLibraryCall(instruction, sequence, values);
    return RefuseOp(rules_.backend, instruction, "its operands or results are not arrays");
  }
  // Before the host check: a registered op's custom-call is opaque to the
  // core, yet runs on the device as its user-supplied kernel.
  if (rules_.library_call && rules_.library_call(instruction))
    return LowerLibraryCall(instruction, sequence, values);
  if (NeedsHostOnDevice(instruction)) {
    if (fall_back) return LowerLibraryCall(instruction, sequence, values);
    // An op whose device expansion refused it says why (geev: as in JAX).
    if (const DeviceOpExpansion* row = FindDeviceOpExpansion(instruction)) {
      StatusOr<std::unique_ptr<Module>> expansion = row->expand(instruction);
      if (!expansion.ok()) return RefuseOp(rules_.backend, instruction, expansion.status().message());
    }
    return RefuseOp(rules_.backend, instruction, "it needs the host runtime");
  }
  Computation* single = SingleInstructionComputation(instruction);
  if (Status emittable = rules_.check_kernel(*single); !emittable.ok()) {
    if (fall_back) return LowerLibraryCall(instruction, sequence, values, single);
    return RefuseOp(rules_.backend, instruction, emittable.message());
  }
  return LowerKernel(instruction, *single, sequence, values);
}

Status Lowerer::LowerKernel(const Instruction& instruction, const Computation& computation, int sequence,
                            Values& values) {
  ProgramStep step;
  step.kind = ProgramStep::Kind::kLaunch;
  step.name = instruction.name;
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    const Leaves& leaves = values.at(instruction.operand(i));
    if (leaves.size() != 1)
      return Internal(rules_.backend, ": kernel operand ", i, " of '", instruction.name,
                      "' is not one array");
    step.buffers.push_back(leaves[0]);
  }
  Leaves outputs = NewLeaves(instruction.shape, StepSlotKind::kTemporary);
  step.buffers.insert(step.buffers.end(), outputs.begin(), outputs.end());
  const Instruction* root = computation.root();
  const int64_t scratch = rules_.kernel_scratch_bytes ? rules_.kernel_scratch_bytes(*root) : 0;
  if (scratch > 0) step.buffers.push_back(NewSlot(StepSlotKind::kTemporary, scratch));
  const auto [found, inserted] =
      request_of_key_.try_emplace(KernelKey(computation), static_cast<int>(program_.kernels.size()));
  if (inserted)
    program_.kernels.push_back(
        DescribeKernel(computation, "kiln_kernel_" + std::to_string(program_.kernels.size()), scratch));
  step.kernel = found->second;
  Append(sequence, std::move(step));
  values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::LowerLibraryCall(const Instruction& instruction, int sequence, Values& values,
                                 const Computation* single) {
  ProgramStep step;
  step.kind = ProgramStep::Kind::kLibraryCall;
  step.name = instruction.name;
  for (const Instruction* operand : instruction.operands) {
    const Leaves& leaves = values.at(operand);
    step.buffers.insert(step.buffers.end(), leaves.begin(), leaves.end());
  }
  Leaves outputs = NewLeaves(instruction.shape, StepSlotKind::kTemporary);
  step.buffers.insert(step.buffers.end(), outputs.begin(), outputs.end());
  step.call = static_cast<int>(program_.library_calls.size());
  program_.library_calls.push_back(&instruction);
  program_.library_call_computations.push_back(single);
  Append(sequence, std::move(step));
  values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::LowerWhile(const Instruction& instruction, int sequence, Values& values) {
  if (instruction.called.size() != 2 || instruction.operands.size() != 1)
    return InvalidArgument(rules_.backend, ": while needs one operand, a condition and a body");
  KILN_ASSIGN_OR_RETURN(const int condition, LowerNested(*instruction.called[0]));
  KILN_ASSIGN_OR_RETURN(const int body, LowerNested(*instruction.called[1]));
  const Leaves& init = values.at(instruction.operand(0));
  const StepSequence& lowered_condition = program_.sequences[static_cast<size_t>(condition)];
  const StepSequence& lowered_body = program_.sequences[static_cast<size_t>(body)];
  if (lowered_condition.results.size() != 1 || lowered_condition.parameters.size() != init.size() ||
      lowered_body.parameters.size() != init.size() || lowered_body.results.size() != init.size()) {
    return InvalidArgument(rules_.backend, ": while condition and body do not match the loop state ",
                           instruction.shape.ToString());
  }
  ProgramStep step;
  step.kind = ProgramStep::Kind::kWhile;
  step.name = instruction.name;
  step.sources = init;
  step.targets = NewLeaves(instruction.shape, StepSlotKind::kTemporary);
  for (int slot : init) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
  step.nested = {condition, body};
  values[&instruction] = step.targets;
  Append(sequence, std::move(step));
  return OkStatus();
}

Status Lowerer::LowerConditional(const Instruction& instruction, int sequence, Values& values) {
  const size_t branches = instruction.called.size();
  if (branches == 0 || instruction.operands.size() != branches + 1)
    return InvalidArgument(rules_.backend, ": conditional needs a selector and one operand per branch");
  const Instruction& selector = *instruction.operand(0);
  if (!selector.shape.IsArray() || selector.shape.element_count() != 1)
    return InvalidArgument(rules_.backend, ": conditional selector must be a scalar, got ",
                           selector.shape.ToString());
  if (selector.shape.element_type() == ElementType::kPred && branches != 2)
    return InvalidArgument(rules_.backend, ": a predicated conditional needs two branches");
  ProgramStep step;
  step.kind = ProgramStep::Kind::kConditional;
  step.name = instruction.name;
  step.selector = values.at(&selector)[0];
  step.selector_type = selector.shape.element_type();
  step.targets = NewLeaves(instruction.shape, StepSlotKind::kTemporary);
  for (int slot : step.targets) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
  for (size_t b = 0; b < branches; ++b) {
    KILN_ASSIGN_OR_RETURN(const int branch, LowerNested(*instruction.called[b]));
    const StepSequence& lowered = program_.sequences[static_cast<size_t>(branch)];
    const Leaves& operand = values.at(instruction.operand(b + 1));
    if (lowered.parameters.size() != operand.size() || lowered.results.size() != step.targets.size())
      return InvalidArgument(rules_.backend, ": conditional branch ", b,
                             " does not match its operand or result");
    step.branch_operands.push_back(operand);
    step.nested.push_back(branch);
  }
  values[&instruction] = step.targets;
  Append(sequence, std::move(step));
  return OkStatus();
}

StatusOr<int> Lowerer::LowerCounterStep(const Instruction& instruction, int32_t delta, int sequence,
                                        Values& values) {
  const Shape shape = Shape::Scalar(ElementType::kS32);
  Computation*& kernel = counter_steps_[delta];
  if (kernel == nullptr) {
    auto computation = std::make_unique<Computation>("kiln_tape_counter");
    auto parameter = std::make_unique<Instruction>();
    parameter->opcode = Opcode::kParameter;
    parameter->name = "counter";
    parameter->shape = shape;
    parameter->attrs.parameter_number = 0;
    auto step = std::make_unique<Instruction>();
    step->opcode = Opcode::kConstant;
    step->name = "step";
    step->shape = shape;
    step->literal = Literal::Scalar<int32_t>(delta);
    Instruction* counted = computation->AddInstruction(std::move(parameter));
    Instruction* by = computation->AddInstruction(std::move(step));
    auto next = std::make_unique<Instruction>();
    next->opcode = Opcode::kAdd;
    next->name = "next";
    next->shape = shape;
    next->operands = {counted, by};
    computation->set_root(computation->AddInstruction(std::move(next)));
    kernel = program_.module->AddComputation(std::move(computation));
  }
  if (Status emittable = rules_.check_kernel(*kernel); !emittable.ok())
    return RefuseOp(rules_.backend, instruction, "its counter's kernel: " + emittable.message());
  // A launch as for an instruction `counter + delta` of the tape call's
  // counter operand.
  Instruction update;
  update.opcode = Opcode::kAdd;
  update.name = instruction.name + ".counter";
  update.shape = shape;
  update.operands = {instruction.operands[0]};
  KILN_RETURN_IF_ERROR(LowerKernel(update, *kernel, sequence, values));
  const Leaves output = values.at(&update);
  values.erase(&update);
  if (output.size() != 1)
    return Internal(rules_.backend, ": the counter of '", instruction.name, "' is not one array");
  return output[0];
}

// A push: its arrays copied onto the tape and a kernel for counter + 1; a
// pop: the arrays copied back off it into new slots and counter - 1.
Status Lowerer::LowerTapeCall(const Instruction& instruction, int sequence, Values& values) {
  KILN_RETURN_IF_ERROR(CheckTapeCustomCall(instruction, rules_.backend));
  KILN_ASSIGN_OR_RETURN(const int64_t tape, TapeNumber(instruction));
  const bool push = instruction.attrs.custom_call_target == kTapePushTarget;
  KILN_ASSIGN_OR_RETURN(const int next, LowerCounterStep(instruction, push ? 1 : -1, sequence, values));
  ProgramStep step;
  step.kind = push ? ProgramStep::Kind::kTapePush : ProgramStep::Kind::kTapePop;
  step.name = instruction.name;
  step.tape = tape;
  Leaves result = {next};
  if (push) {
    for (size_t i = 1; i < instruction.operands.size(); ++i) {
      const Leaves& leaves = values.at(instruction.operand(i));
      step.sources.insert(step.sources.end(), leaves.begin(), leaves.end());
    }
    for (int slot : step.sources) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
  } else {
    const std::vector<Shape>& elements = instruction.shape.tuple_shapes();
    for (size_t i = 1; i < elements.size(); ++i) {
      const int64_t bytes = DenseBytes(elements[i]);
      step.targets.push_back(NewSlot(StepSlotKind::kTemporary, bytes));
      step.bytes.push_back(bytes);
    }
    result.insert(result.end(), step.targets.begin(), step.targets.end());
  }
  Append(sequence, std::move(step));
  values[&instruction] = std::move(result);
  return OkStatus();
}

Computation* Lowerer::SingleInstructionComputation(const Instruction& instruction) {
  return program_.module->AddComputation(
      kiln::SingleInstructionComputation(instruction, instruction.name + ".single"));
}

}  // namespace

bool LowersToFeedOrTapeSteps(const Instruction& instruction) {
  switch (instruction.opcode) {
    case Opcode::kInfeed:
    case Opcode::kOutfeed: return true;
    case Opcode::kCustomCall: return IsTapeCustomCall(instruction.attrs.custom_call_target);
    default: return false;
  }
}

bool NeedsHostOnDevice(const Instruction& instruction) {
  if (LowersToFeedOrTapeSteps(instruction)) {
    // A tape call stays a host op so that no fusion takes it in: its steps
    // run between kernels.
    return instruction.opcode == Opcode::kCustomCall;
  }
  switch (instruction.opcode) {
    case Opcode::kAfterAll:
    case Opcode::kRng: return false;
    // Annotations: RunDevicePasses forwards them to their operands.
    case Opcode::kCustomCall:
      if (IsIdentityCustomCall(instruction.attrs.custom_call_target)) return false;
      break;
    default: break;
  }
  constexpr OpTrait kNeedsRuntime = kSideEffect | kStateful | kOpaque | kPlacement;
  return (OpcodeTraits(instruction.opcode) & kNeedsRuntime) != 0 ||
         instruction.opcode == Opcode::kGetDimensionSize;
}

Status RunDevicePasses(Module& module, int optimization_level, const StepLoweringRules& rules) {
  // Annotations of a multi-device program cost nothing on one device, and
  // no device kernel runs them, whatever the optimisation level.
  KILN_RETURN_IF_ERROR(IdentityCustomCallRemoval().Run(module).status());
  // What no device kernel runs (LAPACK calls, fft) becomes ops they do run,
  // at every optimisation level: without it the program cannot run at all.
  KILN_RETURN_IF_ERROR(DeviceOpExpander().Run(module).status());
  if (optimization_level <= 0) return OkStatus();
  PipelineOptions pipeline;
  pipeline.verify_input = false;  // the caller verified the module it cloned
  pipeline.verify_output = VerifyOptimisedModules();
  pipeline.fuse_row_reductions = rules.fuse_row_reductions;
  // An instruction may join a kernel when it could be one.
  if (!rules.emittable) return Internal(rules.backend, ": the lowering rules have no emittable table");
  // No fused kernel binds more buffers than the device does.
  pipeline.max_kernel_buffers = rules.emittable->max_kernel_buffers();
  pipeline.fuse_gathers = rules.emittable->fuses_gathers();
  pipeline.can_fuse = [table = rules.emittable](const Instruction& instruction) {
    if (!AllArrays(instruction) || NeedsHostOnDevice(instruction)) return false;
    return table->Check(instruction).ok();
  };
  return RunOptimizationPipeline(module, pipeline);
}

namespace {

// What Lowerer::LowerInstruction turns into slot renames, copies or steps
// of their own rather than kernels (the tape custom calls: tape steps and
// a counter kernel), and the annotations RunDevicePasses removes.
bool LoweredWithoutAKernel(const Instruction& instruction) {
  if (OnlyStructures(instruction) || LowersToFeedOrTapeSteps(instruction)) return true;
  switch (instruction.opcode) {
    case Opcode::kFusion: return true;
    case Opcode::kCustomCall: return IsIdentityCustomCall(instruction.attrs.custom_call_target);
    default: return false;
  }
}

}  // namespace

std::vector<std::string> UnsupportedDeviceOps(const Module& module, const StepLoweringRules& rules) {
  std::set<std::string> unsupported;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (LoweredWithoutAKernel(*instruction) || ExpandsForDevices(*instruction)) continue;
      if (rules.library_call && AllArrays(*instruction) && rules.library_call(*instruction)) continue;
      const bool refused = NeedsHostOnDevice(*instruction) || !AllArrays(*instruction) ||
                           (rules.emittable && !rules.emittable->Check(*instruction).ok());
      if (refused) unsupported.insert(std::string(OpcodeName(instruction->opcode)));
    }
  }
  return {unsupported.begin(), unsupported.end()};
}

namespace {

// The slots a step reads and writes: what the buffer assignment measures
// lifetimes by. A launch's buffers are its kernel's arguments, then its
// results and scratch; a library call's, its instruction's operands, then
// its outputs. A loop or branch reads its initial state or operands and
// writes its results (its nested sequences are regions of their own).
void StepBuffers(const StepProgram& program, const ProgramStep& step, std::vector<int>& inputs,
                 std::vector<int>& outputs) {
  auto split = [&](size_t reads) {
    reads = std::min(reads, step.buffers.size());
    inputs.assign(step.buffers.begin(), step.buffers.begin() + static_cast<std::ptrdiff_t>(reads));
    outputs.assign(step.buffers.begin() + static_cast<std::ptrdiff_t>(reads), step.buffers.end());
  };
  switch (step.kind) {
    case ProgramStep::Kind::kLaunch:
      split(program.kernels[static_cast<size_t>(step.kernel)].arguments.size());
      return;
    case ProgramStep::Kind::kLibraryCall: {
      size_t reads = 0;
      for (const Instruction* operand : program.library_calls[static_cast<size_t>(step.call)]->operands)
        reads += static_cast<size_t>(ArrayLeafCount(operand->shape));
      split(reads);
      return;
    }
    case ProgramStep::Kind::kConditional:
      inputs = {step.selector};
      for (const std::vector<int>& operands : step.branch_operands)
        inputs.insert(inputs.end(), operands.begin(), operands.end());
      outputs = step.targets;
      return;
    case ProgramStep::Kind::kCopy:
    case ProgramStep::Kind::kWhile:
    case ProgramStep::Kind::kInfeed:
    case ProgramStep::Kind::kOutfeed:
    case ProgramStep::Kind::kTapePush:
    case ProgramStep::Kind::kTapePop:
      inputs = step.sources;
      outputs = step.targets;
      return;
  }
}

// Entry results computed into temporaries become result slots, written where
// the caller gets them instead of into scratch and a copy. A parameter, a
// constant, an empty array or a slot named as a second result is still
// copied out. Aliases of a value share its slot index, so changing the slot
// moves all of them.
void PlaceResults(StepProgram& program) {
  const std::vector<int>& results = program.sequences[0].results;
  for (size_t i = 0; i < results.size(); ++i) {
    StepSlot& slot = program.slots[static_cast<size_t>(results[i])];
    if (slot.kind != StepSlotKind::kTemporary || slot.bytes == 0) continue;
    slot.kind = StepSlotKind::kResult;
    slot.index = static_cast<int64_t>(i);
    slot.offset = 0;
  }
}

// The remaining temporaries are placed in the scratch block by the shared
// buffer assignment (core/compiler/buffer_assignment.h), as the CPU's arena
// is: each sequence is a region, and temporaries that are never live
// together share bytes. Steps run in order, with a full barrier (vulkan)
// or on one stream (cuda) between them, so a kernel never writes bytes an
// earlier one still reads.
void PlaceTemporaries(StepProgram& program, int64_t alignment) {
  compiler::BufferAssignmentProblem problem;
  problem.alignment = alignment;
  problem.buffers.resize(program.slots.size());
  for (size_t s = 0; s < program.slots.size(); ++s) {
    problem.buffers[s].bytes = program.slots[s].bytes;
    problem.buffers[s].in_arena = program.slots[s].kind == StepSlotKind::kTemporary;
    problem.buffers[s].region = -1;
  }
  problem.regions.resize(program.sequences.size());
  for (size_t region = 0; region < program.sequences.size(); ++region) {
    const StepSequence& sequence = program.sequences[region];
    for (const ProgramStep& step : sequence.steps) {
      compiler::AssignmentStep& uses = problem.regions[region].emplace_back();
      StepBuffers(program, step, uses.inputs, uses.outputs);
      // A temporary belongs to the sequence whose step writes it first.
      for (int output : uses.outputs) {
        int& owner = problem.buffers[static_cast<size_t>(output)].region;
        if (owner < 0) owner = static_cast<int>(region);
      }
    }
    problem.region_results.push_back(sequence.results);
  }
  for (compiler::AssignmentBuffer& buffer : problem.buffers) buffer.region = std::max(buffer.region, 0);
  const compiler::BufferAssignment assignment = compiler::AssignBuffers(problem);
  for (size_t s = 0; s < program.slots.size(); ++s) {
    if (program.slots[s].kind == StepSlotKind::kTemporary) program.slots[s].offset = assignment.offset[s];
  }
  program.scratch_bytes = assignment.arena_bytes;
}

}  // namespace

Status LowerToSteps(std::unique_ptr<Module> module, const StepLoweringRules& rules, StepProgram& program) {
  if (module == nullptr || module->entry() == nullptr)
    return InvalidArgument(rules.backend, ": the module has no entry");
  if (!rules.check_kernel) return Internal(rules.backend, ": the lowering rules have no kernel check");
  program.module = std::move(module);
  const ProgramShape signature = program.module->entry()->program_shape();
  for (const Shape& parameter : signature.parameters) {
    for (Shape& leaf : ArrayLeaves(parameter)) program.parameter_leaves.push_back(std::move(leaf));
  }
  program.result_leaves = ArrayLeaves(signature.result);
  Lowerer lowerer(program, rules);
  KILN_RETURN_IF_ERROR(lowerer.LowerEntry());
  if (program.sequences[0].results.size() != program.result_leaves.size()) {
    return Internal(rules.backend, ": the entry yields ", program.sequences[0].results.size(),
                    " arrays, its shape has ", program.result_leaves.size());
  }
  return OkStatus();
}

Status LowerToStepProgram(std::unique_ptr<Module> module, const StepLoweringRules& rules,
                          StepProgram& program) {
  KILN_RETURN_IF_ERROR(LowerToSteps(std::move(module), rules, program));
  PlaceResults(program);
  PlaceTemporaries(program, rules.slot_alignment);
  return OkStatus();
}

}  // namespace kiln
