// Lowering for the CUDA backend: what the CPU backend's lowering does for
// kernels (backends/cpu/lowering.cc), with GPU steps instead of thunks.
// Everything that computes is a kernel; what the kernel emitter cannot
// emit is refused by name instead of running on the host behind the
// caller's back.
#include <functional>
#include <string>
#include <unordered_map>

#include "backends/cpu/codegen/kernel_key.h"
#include "backends/cuda/cuda_buffer.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/sort_emitter.h"
#include "core/array_leaves.h"
#include "core/passes/pipeline.h"
#include "core/single_instruction.h"

namespace kiln::cuda {
namespace {

using Leaves = std::vector<int>;

// Scratch slots start at multiples of this (what cuMemAlloc guarantees).
constexpr int64_t kSlotAlignment = 256;

// Ops that talk to the host, keep state, run host code or ask where they
// run (their traits say so), and get-dimension-size: no GPU kernel yet.
bool NeedsRuntime(const Instruction& instruction) {
  constexpr OpTrait kNeedsRuntime = kSideEffect | kStateful | kOpaque | kPlacement;
  return (OpcodeTraits(instruction.opcode) & kNeedsRuntime) != 0 ||
         instruction.opcode == Opcode::kGetDimensionSize;
}

}  // namespace

bool RefusedOnCuda(const Instruction& instruction) {
  switch (instruction.opcode) {
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kAfterAll:
    case Opcode::kRng: return false;
    default: return NeedsRuntime(instruction);
  }
}

namespace {

Status RefuseOp(const Instruction& instruction, const std::string& why) {
  return Unimplemented("cuda: ", OpcodeName(instruction.opcode), " '", instruction.name, "' (",
                       instruction.shape.ToString(), ") cannot run on the cuda backend yet: ", why,
                       "; run the module on the cpu backend");
}

class Lowerer {
 public:
  explicit Lowerer(CudaProgram& program) : program_(program) {}

  Status LowerEntry();
  Status CompileKernels(const PtxTarget& target, const std::string& dump_ir_dir,
                        const std::string& dump_stem);

 private:
  using Values = std::unordered_map<const Instruction*, Leaves>;

  int NewSlot(SlotKind kind, int64_t bytes) {
    Slot slot;
    slot.kind = kind;
    slot.bytes = bytes;
    if (kind == SlotKind::kTemporary) {
      slot.offset = program_.scratch_bytes;
      program_.scratch_bytes += (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
    }
    program_.slots.push_back(slot);
    return static_cast<int>(program_.slots.size() - 1);
  }
  Leaves NewLeaves(const Shape& shape, SlotKind kind) {
    Leaves leaves;
    for (const Shape& leaf : ArrayLeaves(shape)) leaves.push_back(NewSlot(kind, DenseBytes(leaf)));
    return leaves;
  }
  bool IsBound(int slot) const { return program_.slots[static_cast<size_t>(slot)].kind == SlotKind::kBound; }

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
  Computation* SingleInstructionComputation(const Instruction& instruction);
  Step& Append(int sequence, Step step) {
    auto& steps = program_.sequences[static_cast<size_t>(sequence)].steps;
    steps.push_back(std::move(step));
    return steps.back();
  }
  int NewSequence() {
    program_.sequences.emplace_back();
    return static_cast<int>(program_.sequences.size() - 1);
  }

  CudaProgram& program_;
  std::vector<cpu::KernelRequest> requests_;
  std::unordered_map<std::string, int> request_of_key_;
};

Status Lowerer::LowerEntry() {
  const int sequence = NewSequence();
  // The program shape lists the parameters by number, as arguments come.
  std::vector<Leaves> parameters;
  int64_t leaf = 0;
  for (const Shape& shape : program_.module->entry()->program_shape().parameters) {
    Leaves leaves = NewLeaves(shape, SlotKind::kParameter);
    for (int slot : leaves) program_.slots[static_cast<size_t>(slot)].index = leaf++;
    parameters.push_back(std::move(leaves));
  }
  KILN_ASSIGN_OR_RETURN(Leaves results, LowerInto(*program_.module->entry(), sequence, parameters));
  program_.sequences[static_cast<size_t>(sequence)].results = std::move(results);
  return OkStatus();
}

StatusOr<int> Lowerer::LowerNested(const Computation& computation) {
  const int sequence = NewSequence();
  // parameters() is indexed by parameter number.
  std::vector<Leaves> parameters;
  std::vector<int> bound;
  for (const Instruction* parameter : computation.parameters()) {
    parameters.push_back(NewLeaves(parameter->shape, SlotKind::kBound));
    bound.insert(bound.end(), parameters.back().begin(), parameters.back().end());
  }
  KILN_ASSIGN_OR_RETURN(Leaves results, LowerInto(computation, sequence, parameters));
  // A result that is one of the sequence's own parameters would alias the
  // loop state or branch operand it is copied over: give it its own copy.
  Step copy;
  copy.kind = Step::Kind::kCopy;
  copy.name = computation.name() + ".results";
  for (int& result : results) {
    if (!IsBound(result)) continue;
    const int64_t bytes = program_.slots[static_cast<size_t>(result)].bytes;
    const int target = NewSlot(SlotKind::kTemporary, bytes);
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
    return InvalidArgument("cuda: computation '", computation.name(), "' has no root");
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
  switch (instruction.opcode) {
    case Opcode::kParameter: {
      const auto number = static_cast<size_t>(instruction.attrs.parameter_number);
      if (number >= parameters.size()) return Internal("cuda: parameter ", number, " is not bound");
      values[&instruction] = parameters[number];
      return OkStatus();
    }
    case Opcode::kConstant: {
      if (!instruction.literal.has_value())
        return InvalidArgument("cuda: constant '", instruction.name, "' has no value");
      std::vector<Literal> leaves;
      if (instruction.literal->shape().IsArray()) {
        leaves.push_back(*instruction.literal);
      } else {
        for (Literal& leaf : instruction.literal->Leaves()) {
          if (leaf.shape().IsArray()) leaves.push_back(std::move(leaf));
        }
      }
      Leaves slots;
      for (Literal& leaf : leaves) {
        const int slot = NewSlot(SlotKind::kConstant, static_cast<int64_t>(leaf.raw().size()));
        program_.slots[static_cast<size_t>(slot)].index = static_cast<int64_t>(program_.constants.size());
        program_.constants.push_back(std::move(leaf));
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
        return InvalidArgument("cuda: get-tuple-element index ", index, " out of range for ",
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
      if (instruction.called.size() != 1) return InvalidArgument("cuda: call needs one computation");
      std::vector<Leaves> arguments;
      for (size_t i = 0; i < instruction.operands.size(); ++i) arguments.push_back(operand_leaves(i));
      KILN_ASSIGN_OR_RETURN(values[&instruction], LowerInto(*instruction.called[0], sequence, arguments));
      return OkStatus();
    }
    case Opcode::kFusion: {
      if (instruction.called.size() != 1) return InvalidArgument("cuda: fusion needs one computation");
      if (AllArrays(instruction) && CheckPtxEmittable(*instruction.called[0]).ok())
        return LowerKernel(instruction, *instruction.called[0], sequence, values);
      // Not one kernel: lower the fused instructions one by one.
      std::vector<Leaves> arguments;
      for (size_t i = 0; i < instruction.operands.size(); ++i) arguments.push_back(operand_leaves(i));
      KILN_ASSIGN_OR_RETURN(values[&instruction], LowerInto(*instruction.called[0], sequence, arguments));
      return OkStatus();
    }
    case Opcode::kWhile: return LowerWhile(instruction, sequence, values);
    case Opcode::kConditional: return LowerConditional(instruction, sequence, values);
    case Opcode::kInfeed: {
      // (data, token) or data; the token has no storage.
      const Shape& shape = instruction.shape;
      const bool with_token =
          shape.IsTuple() && shape.tuple_shapes().size() == 2 && shape.tuple_shapes(1).IsToken();
      Step step;
      step.kind = Step::Kind::kInfeed;
      step.name = instruction.name;
      step.shape = with_token ? shape.tuple_shapes(0) : shape;
      step.targets = NewLeaves(step.shape, SlotKind::kTemporary);
      for (int slot : step.targets) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
      values[&instruction] = step.targets;
      Append(sequence, std::move(step));
      return OkStatus();
    }
    case Opcode::kOutfeed: {
      if (instruction.operands.empty()) return InvalidArgument("cuda: outfeed needs an operand");
      Step step;
      step.kind = Step::Kind::kOutfeed;
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
  if (RefusedOnCuda(instruction)) return RefuseOp(instruction, "it needs the host runtime");
  if (!AllArrays(instruction)) return RefuseOp(instruction, "its operands or results are not arrays");
  Computation* single = SingleInstructionComputation(instruction);
  if (Status emittable = CheckPtxEmittable(*single); !emittable.ok())
    return RefuseOp(instruction, emittable.message());
  return LowerKernel(instruction, *single, sequence, values);
}

Status Lowerer::LowerKernel(const Instruction& instruction, const Computation& computation, int sequence,
                            Values& values) {
  Step step;
  step.kind = Step::Kind::kLaunch;
  step.name = instruction.name;
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    const Leaves& leaves = values.at(instruction.operand(i));
    if (leaves.size() != 1)
      return Internal("cuda: kernel operand ", i, " of '", instruction.name, "' is not one array");
    step.buffers.push_back(leaves[0]);
  }
  Leaves outputs = NewLeaves(instruction.shape, SlotKind::kTemporary);
  step.buffers.insert(step.buffers.end(), outputs.begin(), outputs.end());
  const Instruction* root = computation.root();
  if (root->opcode == Opcode::kSort || root->opcode == Opcode::kTopK)
    step.buffers.push_back(NewSlot(SlotKind::kTemporary, SortScratchBytes(*root)));
  const auto [found, inserted] =
      request_of_key_.try_emplace(cpu::codegen::KernelKey(computation), static_cast<int>(requests_.size()));
  if (inserted) requests_.push_back({&computation, "kiln_kernel_" + std::to_string(requests_.size())});
  step.kernel = found->second;
  Append(sequence, std::move(step));
  values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::LowerWhile(const Instruction& instruction, int sequence, Values& values) {
  if (instruction.called.size() != 2 || instruction.operands.size() != 1)
    return InvalidArgument("cuda: while needs one operand, a condition and a body");
  KILN_ASSIGN_OR_RETURN(const int condition, LowerNested(*instruction.called[0]));
  KILN_ASSIGN_OR_RETURN(const int body, LowerNested(*instruction.called[1]));
  const Leaves& init = values.at(instruction.operand(0));
  const StepSequence& lowered_condition = program_.sequences[static_cast<size_t>(condition)];
  const StepSequence& lowered_body = program_.sequences[static_cast<size_t>(body)];
  if (lowered_condition.results.size() != 1 || lowered_condition.parameters.size() != init.size() ||
      lowered_body.parameters.size() != init.size() || lowered_body.results.size() != init.size()) {
    return InvalidArgument("cuda: while condition and body do not match the loop state ",
                           instruction.shape.ToString());
  }
  Step step;
  step.kind = Step::Kind::kWhile;
  step.name = instruction.name;
  step.sources = init;
  step.targets = NewLeaves(instruction.shape, SlotKind::kTemporary);
  for (int slot : init) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
  step.nested = {condition, body};
  values[&instruction] = step.targets;
  Append(sequence, std::move(step));
  return OkStatus();
}

Status Lowerer::LowerConditional(const Instruction& instruction, int sequence, Values& values) {
  const size_t branches = instruction.called.size();
  if (branches == 0 || instruction.operands.size() != branches + 1)
    return InvalidArgument("cuda: conditional needs a selector and one operand per branch");
  const Instruction& selector = *instruction.operand(0);
  if (!selector.shape.IsArray() || selector.shape.element_count() != 1)
    return InvalidArgument("cuda: conditional selector must be a scalar, got ", selector.shape.ToString());
  if (selector.shape.element_type() == ElementType::kPred && branches != 2)
    return InvalidArgument("cuda: a predicated conditional needs two branches");
  Step step;
  step.kind = Step::Kind::kConditional;
  step.name = instruction.name;
  step.selector = values.at(&selector)[0];
  step.selector_type = selector.shape.element_type();
  step.targets = NewLeaves(instruction.shape, SlotKind::kTemporary);
  for (int slot : step.targets) step.bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
  for (size_t b = 0; b < branches; ++b) {
    KILN_ASSIGN_OR_RETURN(const int branch, LowerNested(*instruction.called[b]));
    const StepSequence& lowered = program_.sequences[static_cast<size_t>(branch)];
    const Leaves& operand = values.at(instruction.operand(b + 1));
    if (lowered.parameters.size() != operand.size() || lowered.results.size() != step.targets.size())
      return InvalidArgument("cuda: conditional branch ", b, " does not match its operand or result");
    step.branch_operands.push_back(operand);
    step.nested.push_back(branch);
  }
  values[&instruction] = step.targets;
  Append(sequence, std::move(step));
  return OkStatus();
}

Computation* Lowerer::SingleInstructionComputation(const Instruction& instruction) {
  return program_.module->AddComputation(
      kiln::SingleInstructionComputation(instruction, instruction.name + ".single"));
}

Status Lowerer::CompileKernels(const PtxTarget& target, const std::string& dump_ir_dir,
                               const std::string& dump_stem) {
  KILN_ASSIGN_OR_RETURN(program_.ptx, CompileToPtx(requests_, target, dump_ir_dir, dump_stem));
  if (program_.ptx.kernels.size() != requests_.size())
    return Internal("cuda: ", program_.ptx.kernels.size(), " kernels compiled for ", requests_.size(),
                    " requests");
  return OkStatus();
}

// The fusion rule: an instruction may join a kernel when it could be one.
bool Emittable(const Instruction& instruction) {
  if (!AllArrays(instruction) || NeedsRuntime(instruction)) return false;
  return CheckPtxEmittable(*kiln::SingleInstructionComputation(instruction, "single")).ok();
}

}  // namespace

Status RunCudaPasses(Module& module, int optimization_level) {
  if (optimization_level <= 0) return OkStatus();
  PipelineOptions pipeline;
  pipeline.verify_input = false;  // the caller verified the module it cloned
  pipeline.can_fuse = Emittable;
  return RunOptimizationPipeline(module, pipeline);
}

StatusOr<std::unique_ptr<CudaProgram>> LowerForCuda(std::unique_ptr<Module> module, const PtxTarget& target,
                                                    const std::string& dump_ir_dir,
                                                    const std::string& dump_stem) {
  if (module == nullptr || module->entry() == nullptr)
    return InvalidArgument("cuda: the module has no entry");
  auto program = std::make_unique<CudaProgram>();
  program->module = std::move(module);
  const ProgramShape signature = program->module->entry()->program_shape();
  for (const Shape& parameter : signature.parameters) {
    for (Shape& leaf : ArrayLeaves(parameter)) program->parameter_leaves.push_back(std::move(leaf));
  }
  program->result_leaves = ArrayLeaves(signature.result);
  Lowerer lowerer(*program);
  KILN_RETURN_IF_ERROR(lowerer.LowerEntry());
  if (program->sequences[0].results.size() != program->result_leaves.size()) {
    return Internal("cuda: the entry yields ", program->sequences[0].results.size(),
                    " arrays, its shape has ", program->result_leaves.size());
  }
  KILN_RETURN_IF_ERROR(lowerer.CompileKernels(target, dump_ir_dir, dump_stem));
  return program;
}

}  // namespace kiln::cuda
