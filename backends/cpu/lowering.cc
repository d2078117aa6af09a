#include "backends/cpu/lowering.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unordered_map>

#include "backends/cpu/control_flow_thunks.h"
#include "backends/cpu/convolution_thunk.h"
#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/data_movement_thunks.h"
#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/fft_thunk.h"
#include "backends/cpu/kernel_thunk.h"
#include "backends/cpu/library_thunk.h"
#include "backends/cpu/program_buffers.h"
#include "backends/cpu/rng_bit_generator_thunk.h"
#include "backends/cpu/row_scatter_thunk.h"
#include "backends/cpu/scan_thunk.h"
#include "backends/cpu/sort_thunk.h"
#include "backends/cpu/top_k_thunk.h"
#include "backends/cpu/window_thunk.h"
#include "core/array_leaves.h"
#include "core/lowering/kernel_key.h"
#include "core/single_instruction.h"

namespace kiln::cpu {
namespace {

using Leaves = std::vector<int>;

// Ops that must go through the library path: they keep state between
// executions, talk to the host, run host code or ask where they run (their
// traits say so); and get-dimension-size, which the kernel emitters lack.
bool LibraryOnly(const Instruction& instruction) {
  constexpr OpTrait kNeedsRuntime = kSideEffect | kStateful | kOpaque | kPlacement;
  return (OpcodeTraits(instruction.opcode) & kNeedsRuntime) != 0 ||
         instruction.opcode == Opcode::kGetDimensionSize;
}

// With KILN_CPU_LOG_LIBRARY set, every op lowered to the (slow) library path
// is listed on stderr, to see what still needs a native implementation.
void NoteLibraryThunk(const Instruction& instruction) {
  static const bool enabled = std::getenv("KILN_CPU_LOG_LIBRARY") != nullptr;
  if (!enabled) return;
  const std::string opcode(OpcodeName(instruction.opcode));
  std::fprintf(stderr, "kiln cpu: library thunk for %s %s\n", opcode.c_str(),
               instruction.shape.ToString().c_str());
}

class Lowerer {
 public:
  Lowerer(CompiledProgram& program, KernelCompiler* compiler) : program_(program), compiler_(compiler) {}

  Status LowerEntry();
  Status CompileKernels(const KernelDump& dump);

 private:
  struct Scope {
    int region;
    ThunkSequence* sequence;
    std::unordered_map<const Instruction*, Leaves> values;
  };

  int NewSlot(SlotKind kind, int64_t bytes, int region) {
    Slot slot;
    slot.kind = kind;
    slot.bytes = bytes;
    slot.region = region;
    program_.slots.push_back(std::move(slot));
    return static_cast<int>(program_.slots.size() - 1);
  }
  Leaves NewLeaves(const Shape& shape, SlotKind kind, int region) {
    Leaves leaves;
    for (const Shape& leaf : ArrayLeaves(shape)) leaves.push_back(NewSlot(kind, DenseByteSize(leaf), region));
    return leaves;
  }
  std::vector<int64_t> LeafBytes(const Shape& shape) const {
    std::vector<int64_t> bytes;
    for (const Shape& leaf : ArrayLeaves(shape)) bytes.push_back(DenseByteSize(leaf));
    return bytes;
  }
  int NewRegion(ThunkSequence*& sequence) {
    program_.sequences.emplace_back();
    program_.region_results.emplace_back();
    sequence = &program_.sequences.back();
    return static_cast<int>(program_.sequences.size() - 1);
  }

  // Lowers `computation` into `scope`'s sequence with its parameters bound to
  // `parameters`; returns its result leaves.
  StatusOr<Leaves> LowerInto(const Computation& computation, int region, ThunkSequence* sequence,
                             const std::vector<Leaves>& parameters);
  StatusOr<NestedComputation> LowerNested(const Computation& computation);
  Status LowerInstruction(const Instruction& instruction, Scope& scope,
                          const std::vector<Leaves>& parameters);
  Status LowerConstant(const Instruction& instruction, Scope& scope);
  Status LowerWhile(const Instruction& instruction, Scope& scope);
  Status LowerConditional(const Instruction& instruction, Scope& scope);
  Status LowerDot(const Instruction& instruction, const DotPlan& plan, Scope& scope);
  // A SortThunk when the comparator is a single key (sorted by key) or can be
  // compiled, else a library thunk.
  Status LowerSort(const Instruction& instruction, Scope& scope);
  // A TopKThunk for real operands, else a library thunk.
  Status LowerTopK(const Instruction& instruction, Scope& scope);
  // An FftThunk (Kiln's own FFT on the slots, lines in parallel).
  Status LowerFft(const Instruction& instruction, Scope& scope);
  // Gives a thunk its compiled kernel and the grid the CPU chose for it.
  using KernelInstaller = std::function<void(const KernelInfo&, const KernelGrid&)>;
  // Queues `computation` for the code generator; `install` receives the
  // kernel. Identical computations (a layer repeated, a long chain cut into
  // fusions of the same ops) share one kernel: LLVM's time is per kernel.
  void RequestKernel(const Computation& computation, KernelInstaller install) {
    std::vector<KernelDescription>& kernels = program_.kernel_descriptions;
    const auto [found, inserted] = request_of_key_.try_emplace(KernelKey(computation), kernels.size());
    if (inserted) {
      kernels.push_back(DescribeKernel(computation, "kiln_kernel_" + std::to_string(next_computation_++)));
      kernel_installers_.emplace_back();
    }
    kernel_installers_[found->second].push_back(std::move(install));
  }
  // A kernel when the code generator emits `computation` (called with the
  // instruction's operands), else a library thunk.
  Status LowerGeneric(const Instruction& instruction, Scope& scope);
  Status LowerComputationCall(const Instruction& instruction, const Computation& computation, bool try_kernel,
                              Scope& scope);
  Computation* SingleInstructionComputation(const Instruction& instruction);

  std::vector<ParameterBinding> Bindings(const Instruction& instruction, const Scope& scope) const {
    std::vector<ParameterBinding> bindings;
    for (const Instruction* operand : instruction.operands)
      bindings.push_back({operand->shape, scope.values.at(operand)});
    return bindings;
  }

  CompiledProgram& program_;
  KernelCompiler* compiler_;
  // Per kernel description, the thunks that run its kernel.
  std::vector<std::vector<KernelInstaller>> kernel_installers_;
  std::unordered_map<std::string, size_t> request_of_key_;  // KernelKey -> request
  int next_computation_ = 0;
};

Status Lowerer::LowerEntry() {
  const Computation& entry = *program_.module->entry();
  ThunkSequence* sequence = nullptr;
  const int region = NewRegion(sequence);
  std::vector<Leaves> parameters;
  int64_t leaf = 0;
  for (const Shape& shape : program_.parameter_shapes) {
    Leaves leaves = NewLeaves(shape, SlotKind::kParameter, region);
    for (int slot : leaves) program_.slots[static_cast<size_t>(slot)].index = leaf++;
    parameters.push_back(std::move(leaves));
  }
  KILN_ASSIGN_OR_RETURN(Leaves results, LowerInto(entry, region, sequence, parameters));
  program_.result_sources = results;
  program_.region_results[static_cast<size_t>(region)] = results;
  return OkStatus();
}

StatusOr<NestedComputation> Lowerer::LowerNested(const Computation& computation) {
  ThunkSequence* sequence = nullptr;
  const int region = NewRegion(sequence);
  std::vector<Leaves> parameters;
  NestedComputation nested;
  nested.sequence = sequence;
  for (const Instruction* parameter : computation.parameters()) {
    Leaves leaves = NewLeaves(parameter->shape, SlotKind::kBound, region);
    nested.parameter_leaves.insert(nested.parameter_leaves.end(), leaves.begin(), leaves.end());
    parameters.push_back(std::move(leaves));
  }
  KILN_ASSIGN_OR_RETURN(nested.result_leaves, LowerInto(computation, region, sequence, parameters));
  program_.region_results[static_cast<size_t>(region)] = nested.result_leaves;
  return nested;
}

StatusOr<Leaves> Lowerer::LowerInto(const Computation& computation, int region, ThunkSequence* sequence,
                                    const std::vector<Leaves>& parameters) {
  if (computation.root() == nullptr)
    return InvalidArgument("cpu: computation '", computation.name(), "' has no root");
  Scope scope{region, sequence, {}};
  for (const Instruction* instruction : computation.LiveInstructions()) {
    const size_t first_new = sequence->thunks.size();
    Status status = LowerInstruction(*instruction, scope, parameters);
    if (!status.ok()) return status.WithContext(std::string("lowering '") + instruction->name + "'");
    for (size_t i = first_new; i < sequence->thunks.size(); ++i)
      sequence->thunks[i]->set_name(instruction->name);
  }
  return scope.values.at(computation.root());
}

Status Lowerer::LowerInstruction(const Instruction& instruction, Scope& scope,
                                 const std::vector<Leaves>& parameters) {
  auto operand_leaves = [&](size_t i) -> const Leaves& { return scope.values.at(instruction.operand(i)); };
  switch (instruction.opcode) {
    case Opcode::kParameter: {
      const auto number = static_cast<size_t>(instruction.attrs.parameter_number);
      if (number >= parameters.size()) return Internal("cpu: parameter ", number, " is not bound");
      scope.values[&instruction] = parameters[number];
      return OkStatus();
    }
    case Opcode::kConstant: return LowerConstant(instruction, scope);
    case Opcode::kTuple:
    case Opcode::kAllReduce: {  // one replica: all-reduce returns its operands
      Leaves leaves;
      for (size_t i = 0; i < instruction.operands.size(); ++i) {
        leaves.insert(leaves.end(), operand_leaves(i).begin(), operand_leaves(i).end());
      }
      scope.values[&instruction] = std::move(leaves);
      return OkStatus();
    }
    case Opcode::kGetTupleElement: {
      const Shape& tuple = instruction.operand(0)->shape;
      const int64_t index = instruction.attrs.tuple_index;
      if (!tuple.IsTuple() || index < 0 || index >= static_cast<int64_t>(tuple.tuple_shapes().size())) {
        return InvalidArgument("cpu: get-tuple-element index ", index, " out of range for ",
                               tuple.ToString());
      }
      int64_t begin = 0;
      for (int64_t i = 0; i < index; ++i) begin += ArrayLeafCount(tuple.tuple_shapes(i));
      const int64_t count = ArrayLeafCount(tuple.tuple_shapes(index));
      const Leaves& all = operand_leaves(0);
      scope.values[&instruction] = Leaves(all.begin() + begin, all.begin() + begin + count);
      return OkStatus();
    }
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
      // Arrays are dense row-major, so these only rename their operand.
      scope.values[&instruction] = operand_leaves(0);
      return OkStatus();
    case Opcode::kAfterAll: scope.values[&instruction] = {}; return OkStatus();
    case Opcode::kCall:
      if (instruction.called.size() != 1) return InvalidArgument("cpu: call needs one computation");
      return LowerComputationCall(instruction, *instruction.called[0], /*try_kernel=*/false, scope);
    case Opcode::kFusion:
      if (instruction.called.size() != 1) return InvalidArgument("cpu: fusion needs one computation");
      // A transpose that fused with nothing: a blocked copy beats a kernel
      // that reads across rows element by element.
      if (const Instruction* transpose = LoneTranspose(instruction)) {
        const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
        scope.sequence->thunks.push_back(std::make_unique<TransposeThunk>(
            operand_leaves(0)[0], output, transpose->operand(0)->shape, transpose->attrs.dimensions));
        scope.values[&instruction] = {output};
        return OkStatus();
      }
      return LowerComputationCall(instruction, *instruction.called[0], /*try_kernel=*/true, scope);
    case Opcode::kWhile: return LowerWhile(instruction, scope);
    case Opcode::kConditional: return LowerConditional(instruction, scope);
    case Opcode::kDot:
      if (std::optional<DotPlan> plan = PlanDot(instruction)) return LowerDot(instruction, *plan, scope);
      return LowerGeneric(instruction, scope);
    case Opcode::kConvolution:
      if (std::optional<ConvolutionGeometry> geometry = PlanConvolution(instruction)) {
        const int64_t packed_bytes = geometry->packed_kernel_elements() * ByteWidth(geometry->type);
        const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
        const int packed = NewSlot(SlotKind::kArena, packed_bytes, scope.region);
        scope.sequence->thunks.push_back(std::make_unique<ConvolutionThunk>(
            operand_leaves(0)[0], operand_leaves(1)[0], output, packed, std::move(*geometry)));
        scope.values[&instruction] = {output};
        return OkStatus();
      }
      return LowerGeneric(instruction, scope);
    case Opcode::kReduceWindow:
      if (std::optional<ScanGeometry> scan = PlanScan(instruction)) {
        const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
        scope.sequence->thunks.push_back(std::make_unique<ScanThunk>(operand_leaves(0)[0], output, *scan));
        scope.values[&instruction] = {output};
        return OkStatus();
      }
      if (std::optional<ReduceWindowPlan> plan = PlanReduceWindow(instruction)) {
        const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
        scope.sequence->thunks.push_back(std::make_unique<ReduceWindowThunk>(
            operand_leaves(0)[0], operand_leaves(1)[0], output, std::move(*plan)));
        scope.values[&instruction] = {output};
        return OkStatus();
      }
      return LowerGeneric(instruction, scope);
    case Opcode::kSelectAndScatter:
      if (std::optional<SelectAndScatterPlan> plan = PlanSelectAndScatter(instruction)) {
        const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
        scope.sequence->thunks.push_back(std::make_unique<SelectAndScatterThunk>(
            operand_leaves(0)[0], operand_leaves(1)[0], operand_leaves(2)[0], output, std::move(*plan)));
        scope.values[&instruction] = {output};
        return OkStatus();
      }
      return LowerGeneric(instruction, scope);
    case Opcode::kScatter:
      if (std::optional<RowScatterPlan> plan = PlanRowScatter(instruction)) {
        const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
        const int order = NewSlot(SlotKind::kArena, RowScatterScratchBytes(*plan), scope.region);
        scope.sequence->thunks.push_back(std::make_unique<RowScatterThunk>(
            operand_leaves(0)[0], operand_leaves(1)[0], operand_leaves(2)[0], output, order, *plan));
        scope.values[&instruction] = {output};
        return OkStatus();
      }
      return LowerGeneric(instruction, scope);
    case Opcode::kRngBitGenerator:
      if (std::optional<RngBitPlan> plan = PlanRngBitGenerator(instruction)) {
        Leaves outputs = NewLeaves(instruction.shape, SlotKind::kArena, scope.region);
        scope.sequence->thunks.push_back(
            std::make_unique<RngBitGeneratorThunk>(operand_leaves(0)[0], outputs[0], outputs[1], *plan));
        scope.values[&instruction] = std::move(outputs);
        return OkStatus();
      }
      return LowerGeneric(instruction, scope);
    case Opcode::kSort: return LowerSort(instruction, scope);
    case Opcode::kTopK: return LowerTopK(instruction, scope);
    case Opcode::kFft: return LowerFft(instruction, scope);
    case Opcode::kDynamicUpdateSlice: {
      if (!AllArrays(instruction) || !instruction.shape.IsArray() || instruction.operands.size() < 2) {
        return LowerGeneric(instruction, scope);
      }
      std::vector<int> inputs;
      std::vector<ElementType> index_types;
      for (size_t i = 0; i < instruction.operands.size(); ++i) {
        inputs.push_back(operand_leaves(i)[0]);
        if (i >= 2) index_types.push_back(instruction.operand(i)->shape.element_type());
      }
      if (index_types.size() != static_cast<size_t>(instruction.shape.rank()))
        return LowerGeneric(instruction, scope);
      const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
      scope.sequence->thunks.push_back(
          std::make_unique<DynamicUpdateSliceThunk>(std::move(inputs), output, instruction.operand(0)->shape,
                                                    instruction.operand(1)->shape, std::move(index_types)));
      scope.values[&instruction] = {output};
      return OkStatus();
    }
    default: return LowerGeneric(instruction, scope);
  }
}

Status Lowerer::LowerConstant(const Instruction& instruction, Scope& scope) {
  if (!instruction.literal.has_value())
    return InvalidArgument("cpu: constant '", instruction.name, "' has no value");
  std::vector<const Literal*> leaves;
  if (instruction.literal->shape().IsArray()) {
    leaves.push_back(&*instruction.literal);
  } else {
    for (Literal& leaf : instruction.literal->Leaves()) {
      if (leaf.shape().IsArray()) leaves.push_back(&program_.constant_storage.emplace_back(std::move(leaf)));
    }
  }
  Leaves slots;
  for (const Literal* leaf : leaves) {
    const int slot = NewSlot(SlotKind::kConstant, static_cast<int64_t>(leaf->raw().size()), scope.region);
    program_.slots[static_cast<size_t>(slot)].constant = leaf->raw().data();
    slots.push_back(slot);
  }
  scope.values[&instruction] = std::move(slots);
  return OkStatus();
}

Status Lowerer::LowerWhile(const Instruction& instruction, Scope& scope) {
  if (instruction.called.size() != 2 || instruction.operands.size() != 1) {
    return InvalidArgument("cpu: while needs one operand, a condition and a body");
  }
  KILN_ASSIGN_OR_RETURN(NestedComputation condition, LowerNested(*instruction.called[0]));
  KILN_ASSIGN_OR_RETURN(NestedComputation body, LowerNested(*instruction.called[1]));
  const Leaves& init = scope.values.at(instruction.operand(0));
  if (condition.result_leaves.size() != 1 || condition.parameter_leaves.size() != init.size() ||
      body.parameter_leaves.size() != init.size() || body.result_leaves.size() != init.size()) {
    return InvalidArgument("cpu: while condition and body do not match the loop state ",
                           instruction.shape.ToString());
  }
  Leaves state_a = NewLeaves(instruction.shape, SlotKind::kArena, scope.region);
  Leaves state_b = NewLeaves(instruction.shape, SlotKind::kArena, scope.region);
  Leaves results = NewLeaves(instruction.shape, SlotKind::kBound, scope.region);
  for (size_t i = 0; i < results.size(); ++i) {
    // The loop starts from the initial value where it is (it never writes
    // the buffer holding the current state), so that value, and whatever it
    // may point to (another loop's state), lives as long.
    std::vector<int> backing = {state_a[i], state_b[i], init[i]};
    const std::vector<int>& inherited = program_.slots[static_cast<size_t>(init[i])].backing;
    backing.insert(backing.end(), inherited.begin(), inherited.end());
    program_.slots[static_cast<size_t>(results[i])].backing = std::move(backing);
  }
  // A state leaf the body computes into one of its own temporaries is
  // computed straight into the loop's other state buffer instead (the loop
  // binds that slot each iteration), so the back-edge swaps pointers rather
  // than copying the array. The other buffer is never the one the body reads,
  // so no element is overwritten before it is read. Leaves passed through,
  // taken from another leaf or a constant, or repeated are still copied.
  const std::vector<int64_t> leaf_bytes = LeafBytes(instruction.shape);
  std::vector<bool> computed_in_place(results.size(), false);
  for (size_t i = 0; i < results.size(); ++i) {
    const int produced = body.result_leaves[i];
    Slot& slot = program_.slots[static_cast<size_t>(produced)];
    const bool repeated =
        std::find(body.result_leaves.begin(), body.result_leaves.begin() + static_cast<std::ptrdiff_t>(i),
                  produced) != body.result_leaves.begin() + static_cast<std::ptrdiff_t>(i);
    if (slot.kind == SlotKind::kArena && !repeated) {
      slot.kind = SlotKind::kBound;
      computed_in_place[i] = true;
    } else if (produced != body.parameter_leaves[i]) {
      program_.statistics.loop_state_bytes_copied_per_iteration += leaf_bytes[i];
    }
  }
  scope.sequence->thunks.push_back(std::make_unique<WhileThunk>(init, state_a, state_b, results, leaf_bytes,
                                                                std::move(computed_in_place),
                                                                std::move(condition), std::move(body)));
  scope.values[&instruction] = std::move(results);
  return OkStatus();
}

Status Lowerer::LowerConditional(const Instruction& instruction, Scope& scope) {
  const size_t branches = instruction.called.size();
  if (branches == 0 || instruction.operands.size() != branches + 1) {
    return InvalidArgument("cpu: conditional needs a selector and one operand per branch");
  }
  const Instruction& selector = *instruction.operand(0);
  if (!selector.shape.IsArray() || selector.shape.element_count() != 1) {
    return InvalidArgument("cpu: conditional selector must be a scalar, got ", selector.shape.ToString());
  }
  if (selector.shape.element_type() == ElementType::kPred && branches != 2) {
    return InvalidArgument("cpu: a predicated conditional needs two branches");
  }
  std::vector<Leaves> operands;
  std::vector<NestedComputation> nested;
  for (size_t b = 0; b < branches; ++b) {
    KILN_ASSIGN_OR_RETURN(NestedComputation branch, LowerNested(*instruction.called[b]));
    const Leaves& operand = scope.values.at(instruction.operand(b + 1));
    if (branch.parameter_leaves.size() != operand.size() ||
        static_cast<int64_t>(branch.result_leaves.size()) != ArrayLeafCount(instruction.shape)) {
      return InvalidArgument("cpu: conditional branch ", b, " does not match its operand or result");
    }
    operands.push_back(operand);
    nested.push_back(std::move(branch));
  }
  Leaves outputs = NewLeaves(instruction.shape, SlotKind::kArena, scope.region);
  scope.sequence->thunks.push_back(std::make_unique<ConditionalThunk>(
      scope.values.at(&selector)[0], selector.shape.element_type(), std::move(operands), std::move(nested),
      outputs, LeafBytes(instruction.shape)));
  scope.values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::LowerDot(const Instruction& instruction, const DotPlan& plan, Scope& scope) {
  auto prepared = [&](size_t i, const std::vector<int64_t>& permutation) {
    const int source = scope.values.at(instruction.operand(i))[0];
    if (permutation.empty()) return source;
    const Shape& shape = instruction.operand(i)->shape;
    const int transposed = NewSlot(SlotKind::kArena, DenseByteSize(shape), scope.region);
    scope.sequence->thunks.push_back(
        std::make_unique<TransposeThunk>(source, transposed, shape, permutation));
    return transposed;
  };
  const int lhs = prepared(0, plan.lhs_permutation);
  const int rhs = prepared(1, plan.rhs_permutation);
  const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
  scope.sequence->thunks.push_back(std::make_unique<DotThunk>(lhs, rhs, output, plan.geometry));
  scope.values[&instruction] = {output};
  return OkStatus();
}

// The comparator must take one scalar of each operand's type twice (lhs, rhs
// per operand) and return a pred scalar: that is the SortThunk's calling
// convention for the compiled comparator.
bool ComparatorFitsSort(const Instruction& sort) {
  const Computation& comparator = *sort.called[0];
  const auto& parameters = comparator.parameters();
  if (parameters.size() != 2 * sort.operands.size() || comparator.root() == nullptr) return false;
  const Shape& root = comparator.root()->shape;
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != ElementType::kPred) return false;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Shape& shape = parameters[i]->shape;
    const Shape& operand = sort.operand(i / 2)->shape;
    if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != operand.element_type()) return false;
  }
  return true;
}

Status Lowerer::LowerSort(const Instruction& instruction, Scope& scope) {
  if (instruction.called.size() != 1 || instruction.operands.empty() || !AllArrays(instruction) ||
      compiler_ == nullptr) {
    return LowerGeneric(instruction, scope);
  }
  const Shape& first = instruction.operand(0)->shape;
  const int64_t rank = first.rank();
  int64_t dimension = instruction.attrs.dimensions.empty() ? rank - 1 : instruction.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank == 0) dimension = 0;
  SortGeometry geometry{first.dimensions(), dimension, {}};
  for (const Instruction* operand : instruction.operands) {
    if (operand->shape.dimensions() != first.dimensions()) return LowerGeneric(instruction, scope);
    geometry.element_bytes.push_back(ByteWidth(operand->shape.element_type()));
  }
  if (rank > 0 && dimension >= rank) return LowerGeneric(instruction, scope);
  // A single-key comparator sorts by key and needs no compiled comparator,
  // except under the partial float order (for slices with NaNs).
  const std::optional<SortKeyPlan> key_plan = MatchSortKeyComparator(instruction);
  const bool needs_comparator = !key_plan.has_value() || key_plan->order == SortKeyPlan::Order::kFloat;
  if (needs_comparator &&
      (!ComparatorFitsSort(instruction) || !compiler_->CheckEmittable(*instruction.called[0]).ok())) {
    return LowerGeneric(instruction, scope);
  }
  std::vector<ParameterBinding> bindings = Bindings(instruction, scope);
  Leaves outputs = NewLeaves(instruction.shape, SlotKind::kArena, scope.region);
  auto fallback = std::make_unique<LibraryThunk>(SingleInstructionComputation(instruction), bindings, outputs,
                                                 LeafBytes(instruction.shape));
  auto thunk =
      std::make_unique<SortThunk>(BindingSlots(bindings), outputs, std::move(geometry), std::move(fallback));
  if (key_plan.has_value()) thunk->SetKeyPlan(*key_plan);
  if (needs_comparator) {
    RequestKernel(*instruction.called[0], [raw = thunk.get()](const KernelInfo& info, const KernelGrid&) {
      raw->SetComparator(info);
    });
  }
  scope.sequence->thunks.push_back(std::move(thunk));
  scope.values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::LowerTopK(const Instruction& instruction, Scope& scope) {
  const Shape& operand = instruction.operand(0)->shape;
  const Shape& shape = instruction.shape;
  const bool fits = instruction.operands.size() == 1 && operand.IsArray() && operand.rank() >= 1 &&
                    TopKThunk::Supports(operand.element_type()) && shape.IsTuple() &&
                    shape.tuple_shapes().size() == 2 && shape.tuple_shapes(0).IsArray() &&
                    shape.tuple_shapes(1).IsArray() &&
                    shape.tuple_shapes(0).element_type() == operand.element_type() &&
                    shape.tuple_shapes(1).element_type() == ElementType::kS32;
  if (!fits) return LowerGeneric(instruction, scope);
  TopKGeometry geometry;
  geometry.type = operand.element_type();
  geometry.row_length = operand.dimensions().back();
  geometry.rows = geometry.row_length == 0 ? 0 : operand.element_count() / geometry.row_length;
  geometry.k = instruction.attrs.top_k;
  geometry.largest = instruction.attrs.largest;
  if (geometry.k < 0 || geometry.k > geometry.row_length ||
      shape.tuple_shapes(0).element_count() != geometry.rows * geometry.k ||
      shape.tuple_shapes(1).element_count() != geometry.rows * geometry.k) {
    return LowerGeneric(instruction, scope);
  }
  Leaves outputs = NewLeaves(shape, SlotKind::kArena, scope.region);
  scope.sequence->thunks.push_back(std::make_unique<TopKThunk>(scope.values.at(instruction.operand(0))[0],
                                                               outputs[0], outputs[1], geometry));
  scope.values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::LowerFft(const Instruction& instruction, Scope& scope) {
  if (instruction.operands.size() != 1) return LowerGeneric(instruction, scope);
  StatusOr<interpreter::FftGeometry> geometry =
      interpreter::PlanFft(instruction.operand(0)->shape, instruction.shape, instruction.attrs);
  // A length the library cannot take is refused now (UNIMPLEMENTED, by name).
  if (!geometry.ok()) return geometry.status();
  const int output = NewSlot(SlotKind::kArena, DenseByteSize(instruction.shape), scope.region);
  scope.sequence->thunks.push_back(std::make_unique<FftThunk>(scope.values.at(instruction.operand(0))[0],
                                                              output, std::move(geometry).value()));
  scope.values[&instruction] = {output};
  return OkStatus();
}

Computation* Lowerer::SingleInstructionComputation(const Instruction& instruction) {
  return program_.module->AddComputation(
      kiln::SingleInstructionComputation(instruction, instruction.name + ".single"));
}

Status Lowerer::LowerGeneric(const Instruction& instruction, Scope& scope) {
  return LowerComputationCall(instruction, *SingleInstructionComputation(instruction),
                              /*try_kernel=*/!LibraryOnly(instruction) && AllArrays(instruction), scope);
}

Status Lowerer::LowerComputationCall(const Instruction& instruction, const Computation& computation,
                                     bool try_kernel, Scope& scope) {
  std::vector<ParameterBinding> bindings = Bindings(instruction, scope);
  const bool kernel = try_kernel && compiler_ != nullptr && AllArrays(instruction) &&
                      compiler_->CheckEmittable(computation).ok();
  if (!kernel && (instruction.opcode == Opcode::kFusion || instruction.opcode == Opcode::kCall)) {
    // Not one kernel: inline the fused (or called) instructions.
    std::vector<Leaves> parameters;
    for (ParameterBinding& binding : bindings) parameters.push_back(std::move(binding.leaf_slots));
    KILN_ASSIGN_OR_RETURN(Leaves results, LowerInto(computation, scope.region, scope.sequence, parameters));
    scope.values[&instruction] = std::move(results);
    return OkStatus();
  }
  Leaves outputs = NewLeaves(instruction.shape, SlotKind::kArena, scope.region);
  auto library =
      std::make_unique<LibraryThunk>(&computation, bindings, outputs, LeafBytes(instruction.shape));
  if (kernel) {
    auto thunk = std::make_unique<KernelThunk>(BindingSlots(bindings), outputs, std::move(library));
    RequestKernel(computation, [raw = thunk.get()](const KernelInfo& info, const KernelGrid& grid) {
      raw->SetKernel(info.function, grid);
    });
    scope.sequence->thunks.push_back(std::move(thunk));
  } else {
    NoteLibraryThunk(instruction);
    scope.sequence->thunks.push_back(std::move(library));
  }
  scope.values[&instruction] = std::move(outputs);
  return OkStatus();
}

Status Lowerer::CompileKernels(const KernelDump& dump) {
  std::vector<KernelDescription>& kernels = program_.kernel_descriptions;
  if (kernels.empty() || compiler_ == nullptr) return OkStatus();
  program_.statistics.distinct_kernels = static_cast<int64_t>(kernels.size());
  // A kernel that the emitter accepted but LLVM could not compile is a bug
  // to report, never a silent (and much slower) run of the library path.
  KILN_ASSIGN_OR_RETURN(program_.kernels, compiler_->Compile(kernels, dump));
  const std::vector<KernelInfo>& infos = program_.kernels->kernels();
  if (infos.size() != kernel_installers_.size()) {
    return Internal("cpu: the code generator returned ", infos.size(), " kernels for ",
                    kernel_installers_.size(), " requests");
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].function == nullptr) continue;
    kernels[i].grid = CpuKernelGrid(infos[i]);
    for (const auto& install : kernel_installers_[i]) install(infos[i], kernels[i].grid);
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<CompiledProgram>> LowerModule(std::unique_ptr<Module> module,
                                                       KernelCompiler* compiler, const KernelDump& dump) {
  if (module == nullptr || module->entry() == nullptr) return InvalidArgument("cpu: the module has no entry");
  auto program = std::make_unique<CompiledProgram>();
  program->module = std::move(module);
  const ProgramShape signature = program->module->entry()->program_shape();
  program->parameter_shapes = signature.parameters;
  Shape result = signature.result;
  // Entry layouts are metadata only (all data is dense row-major); they are
  // reported on the leaves, as the interpreter does.
  const auto& layout = program->module->entry_layout();
  if (layout.has_value() && layout->parameters.size() == program->parameter_shapes.size()) {
    for (size_t i = 0; i < program->parameter_shapes.size(); ++i) {
      if (layout->parameters[i].Compatible(program->parameter_shapes[i])) {
        program->parameter_shapes[i] = layout->parameters[i];
      }
    }
    if (layout->result.Compatible(result)) result = layout->result;
  }
  for (const Shape& parameter : program->parameter_shapes) {
    for (Shape& leaf : ArrayLeaves(parameter)) program->parameter_leaves.push_back(std::move(leaf));
  }
  program->result_leaves = ArrayLeaves(result);

  Lowerer lowerer(*program, compiler);
  KILN_RETURN_IF_ERROR(lowerer.LowerEntry());
  if (program->result_sources.size() != program->result_leaves.size()) {
    return Internal("cpu: the entry yields ", program->result_sources.size(), " arrays, its shape has ",
                    program->result_leaves.size());
  }
  KILN_RETURN_IF_ERROR(lowerer.CompileKernels(dump));
  program->library_plan =
      std::make_unique<interpreter::ModulePlan>(interpreter::ModulePlan::Build(*program->module));
  AssignBuffers(*program);
  return program;
}

}  // namespace kiln::cpu
