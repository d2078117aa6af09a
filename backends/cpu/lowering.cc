#include "backends/cpu/lowering.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "backends/cpu/control_flow_thunks.h"
#include "backends/cpu/convolution_thunk.h"
#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/data_movement_thunks.h"
#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/fft_thunk.h"
#include "backends/cpu/fused_loops.h"
#include "backends/cpu/host_step_thunks.h"
#include "backends/cpu/kernel_thunk.h"
#include "backends/cpu/lapack_thunk.h"
#include "backends/cpu/library_thunk.h"
#include "backends/cpu/program_buffers.h"
#include "backends/cpu/rng_bit_generator_thunk.h"
#include "backends/cpu/rng_thunk.h"
#include "backends/cpu/row_scatter_segments.h"
#include "backends/cpu/row_scatter_thunk.h"
#include "backends/cpu/scan_thunk.h"
#include "backends/cpu/sort_thunk.h"
#include "backends/cpu/top_k_thunk.h"
#include "backends/cpu/window_thunk.h"
#include "core/array_leaves.h"
#include "core/interpreter/lapack_calls.h"
#include "core/lowering/kernel_key.h"
#include "core/lowering/step_lowering.h"
#include "core/single_instruction.h"

namespace kiln::cpu {
namespace {

using Leaves = std::vector<int>;

// With KILN_CPU_LOG_LIBRARY set, every op lowered to the (slow) library path
// is listed on stderr, to see what still needs a native implementation.
void NoteLibraryThunk(const Instruction& instruction) {
  static const bool enabled = std::getenv("KILN_CPU_LOG_LIBRARY") != nullptr;
  if (!enabled) return;
  const std::string opcode(OpcodeName(instruction.opcode));
  std::fprintf(stderr, "kiln cpu: library thunk for %s %s\n", opcode.c_str(),
               instruction.shape.ToString().c_str());
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

// How a SortThunk sorts `sort`: by key alone (`key_plan`, no comparator
// kernel unless its float order needs one) or with its compiled comparator.
struct CpuSortPlan {
  SortGeometry geometry;
  std::optional<SortKeyPlan> key_plan;
  bool needs_comparator = false;
};

// A plan when a SortThunk can run `sort`: operands of one shape, a dimension
// in range, and a comparator that is a single key or can be compiled.
std::optional<CpuSortPlan> PlanCpuSort(const Instruction& sort, KernelCompiler* compiler) {
  if (sort.called.size() != 1 || sort.operands.empty() || !AllArrays(sort) || compiler == nullptr)
    return std::nullopt;
  const Shape& first = sort.operand(0)->shape;
  const int64_t rank = first.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank == 0) dimension = 0;
  CpuSortPlan plan{SortGeometry{first.dimensions(), dimension, {}, {}}, MatchSortKeyComparator(sort), false};
  for (const Instruction* operand : sort.operands) {
    if (operand->shape.dimensions() != first.dimensions()) return std::nullopt;
    plan.geometry.element_bytes.push_back(ByteWidth(operand->shape.element_type()));
  }
  if (rank > 0 && dimension >= rank) return std::nullopt;
  // A single-key comparator sorts by key and needs no compiled comparator,
  // except under the partial float order (for slices with NaNs).
  plan.needs_comparator = !plan.key_plan.has_value() || plan.key_plan->order == SortKeyPlan::Order::kFloat;
  if (plan.needs_comparator && (!ComparatorFitsSort(sort) || !compiler->CheckEmittable(*sort.called[0]).ok()))
    return std::nullopt;
  return plan;
}

// A geometry when a TopKThunk can run `top_k`: real operands, (values, s32
// indices) results of k per row.
std::optional<TopKGeometry> PlanCpuTopK(const Instruction& top_k) {
  const Shape& operand = top_k.operand(0)->shape;
  const Shape& shape = top_k.shape;
  const bool fits = top_k.operands.size() == 1 && operand.IsArray() && operand.rank() >= 1 &&
                    TopKThunk::Supports(operand.element_type()) && shape.IsTuple() &&
                    shape.tuple_shapes().size() == 2 && shape.tuple_shapes(0).IsArray() &&
                    shape.tuple_shapes(1).IsArray() &&
                    shape.tuple_shapes(0).element_type() == operand.element_type() &&
                    shape.tuple_shapes(1).element_type() == ElementType::kS32;
  if (!fits) return std::nullopt;
  TopKGeometry geometry;
  geometry.type = operand.element_type();
  geometry.row_length = operand.dimensions().back();
  geometry.rows = geometry.row_length == 0 ? 0 : operand.element_count() / geometry.row_length;
  geometry.k = top_k.attrs.top_k;
  geometry.largest = top_k.attrs.largest;
  if (geometry.k < 0 || geometry.k > geometry.row_length ||
      shape.tuple_shapes(0).element_count() != geometry.rows * geometry.k ||
      shape.tuple_shapes(1).element_count() != geometry.rows * geometry.k) {
    return std::nullopt;
  }
  return geometry;
}

// Whether a DynamicUpdateSliceThunk can run `update`: arrays, one index
// operand per dimension.
bool FitsDynamicUpdateSliceThunk(const Instruction& update) {
  return AllArrays(update) && update.shape.IsArray() && update.operands.size() >= 2 &&
         update.operands.size() - 2 == static_cast<size_t>(update.shape.rank());
}

// The cpu's answer to StepLoweringRules::host_library_call: what a thunk
// of its own runs (a blocked transpose, oneDNN or Eigen dots and
// convolutions, scans, windows, row scatters, rng, sort, top-k, fft, in-place
// updates) and what only the interpreter path runs (the host ops no device
// lowering runs either, NeedsHostOnDevice, and tuples of non-arrays). A
// fusion is one only when it is a lone transpose, a select-and-scatter
// with its pad and slice folded in, or a reduce-window with its epilogue.
bool RunsAsCpuThunk(const Instruction& instruction, KernelCompiler* compiler) {
  if (instruction.opcode == Opcode::kFusion)
    return instruction.called.size() == 1 &&
           (LoneTranspose(instruction) != nullptr || PlanFoldedSelectAndScatter(instruction).has_value() ||
            PlanFoldedReduceWindow(instruction).has_value());
  // Infeed, outfeed and the tape calls are steps of their own
  // (host_step_thunks.h), except that without a code generator a tape call,
  // whose counter is a kernel, stays on the interpreter path.
  if (LowersToFeedOrTapeSteps(instruction))
    return compiler == nullptr && instruction.opcode == Opcode::kCustomCall;
  if (NeedsHostOnDevice(instruction) || !AllArrays(instruction)) return true;
  switch (instruction.opcode) {
    case Opcode::kDot: return PlanDot(instruction).has_value();
    case Opcode::kConvolution: return PlanConvolution(instruction).has_value();
    case Opcode::kReduceWindow:
      return PlanScan(instruction).has_value() || PlanReduceWindow(instruction).has_value();
    case Opcode::kSelectAndScatter: return PlanSelectAndScatter(instruction).has_value();
    case Opcode::kScatter: return PlanRowScatter(instruction).has_value();
    case Opcode::kRngBitGenerator: return PlanRngBitGenerator(instruction).has_value();
    case Opcode::kSort: return PlanCpuSort(instruction, compiler).has_value();
    case Opcode::kTopK: return PlanCpuTopK(instruction).has_value();
    case Opcode::kFft: return true;  // a length Kiln's FFT cannot take is refused by name
    case Opcode::kDynamicUpdateSlice: return FitsDynamicUpdateSliceThunk(instruction);
    default: return false;
  }
}

StepLoweringRules CpuLoweringRules(KernelCompiler* compiler) {
  StepLoweringRules rules;
  rules.backend = "cpu";
  rules.check_kernel = [compiler](const Computation& kernel) {
    if (compiler == nullptr) return Unimplemented("cpu: no code generator");
    return compiler->CheckEmittable(kernel);
  };
  rules.host_library_call = [compiler](const Instruction& instruction) {
    return RunsAsCpuThunk(instruction, compiler);
  };
  rules.library_call_when_not_a_kernel = true;  // the interpreter path
  rules.copy_bound_results = false;             // WhileThunk keeps passed-through leaves in place
  rules.bitcasts_rename_their_operand = true;   // buffers are plain bytes
  return rules;
}

// Builds the thunk program from the shared step program: a launch is a
// KernelThunk (with the interpreter path as its fallback until compiled), a
// library call the cpu's own thunk for its instruction or the interpreter
// path, a loop a WhileThunk over two state buffers per leaf, a branch a
// ConditionalThunk. Slots keep their indices; the thunks add the arena slots
// they need (transposed dot operands, packed kernels, scatter orders, loop
// state).
class StepTranslator {
 public:
  StepTranslator(const StepProgram& steps, CompiledProgram& program, KernelCompiler* compiler)
      : steps_(steps), program_(program), compiler_(compiler) {}

  Status Translate();
  Status CompileKernels(const KernelDump& dump);

 private:
  using KernelInstaller = std::function<void(const KernelInfo&, const KernelGrid&)>;

  int NewArenaSlot(int64_t bytes, int region) {
    Slot slot;
    slot.kind = SlotKind::kArena;
    slot.bytes = bytes;
    slot.region = region;
    program_.slots.push_back(std::move(slot));
    return static_cast<int>(program_.slots.size() - 1);
  }
  std::vector<int64_t> SlotBytes(const Leaves& slots) const {
    std::vector<int64_t> bytes;
    for (int slot : slots) bytes.push_back(program_.slots[static_cast<size_t>(slot)].bytes);
    return bytes;
  }
  NestedComputation Nested(int sequence) const {
    const StepSequence& lowered = steps_.sequences[static_cast<size_t>(sequence)];
    return {&program_.sequences[static_cast<size_t>(sequence)], lowered.parameters, lowered.results};
  }
  Status TranslateSlots();
  // Finds the sorts that write an operand's positions themselves (an iota
  // along the sort dimension beside a key plan) and the launches of those
  // iotas, which are then not translated.
  void FindPositionsSortsWrite();
  // Finds the row scatters whose indices are a launch of JAX's wrap of
  // negative indices read by nothing else; the scatter wraps them itself
  // (RowScatterPlan::wrap_negative_indices) and the launch is dropped.
  void FindIndexWrapsRowScattersFold();
  // How many steps, and sequence parameters and results, name each slot.
  std::vector<int> SlotMentions() const;
  // Drops the kernel descriptions no thunk asked for (those dropped
  // launches'), so that they are not compiled.
  void DropUnrequestedKernels();
  Status TranslateStep(const ProgramStep& step, int region, ThunkSequence& sequence);
  Status TranslateLaunch(const ProgramStep& step, ThunkSequence& sequence);
  Status TranslateLibraryCall(const ProgramStep& step, int region, ThunkSequence& sequence);
  Status TranslateWhile(const ProgramStep& step, int region, ThunkSequence& sequence);
  // `instruction` through the interpreter on `operands` (per operand, its
  // leaves) into `outputs`; `single` is the instruction alone as a
  // computation when the step lowering built it, else one is built here.
  std::unique_ptr<LibraryThunk> InterpreterThunk(const Instruction& instruction,
                                                 const std::vector<Leaves>& operands, const Leaves& outputs,
                                                 const Computation* single = nullptr);
  // `install` receives kernel `description` once compiled.
  void RequestKernel(size_t description, KernelInstaller install) {
    if (kernel_installers_.size() <= description) kernel_installers_.resize(description + 1);
    kernel_installers_[description].push_back(std::move(install));
  }
  // The description of a sort's comparator: a kernel the step lowering did
  // not make (a sort is a library call to it), shared with any identical one.
  size_t ComparatorKernel(const Computation& comparator);

  const StepProgram& steps_;
  CompiledProgram& program_;
  KernelCompiler* compiler_;
  std::vector<std::vector<KernelInstaller>> kernel_installers_;  // per kernel description
  std::unordered_map<std::string, size_t> description_of_key_;   // filled on the first comparator
  // Iotas a sort writes itself, index wraps a row scatter does itself.
  std::unordered_set<const ProgramStep*> dropped_launches_;
  std::unordered_map<const ProgramStep*, std::vector<bool>> generated_positions_;  // per sort step
  std::unordered_map<const ProgramStep*, int> unwrapped_indices_;  // per row scatter step that wraps
};

Status StepTranslator::Translate() {
  KILN_RETURN_IF_ERROR(TranslateSlots());
  FindPositionsSortsWrite();
  FindIndexWrapsRowScattersFold();
  program_.sequences.resize(steps_.sequences.size());
  program_.region_results.resize(steps_.sequences.size());
  // Nested sequences come after the one holding their loop or branch; the
  // innermost first, so that a loop sees the slot kinds its body's loops set.
  for (size_t s = steps_.sequences.size(); s-- > 0;) {
    ThunkSequence& sequence = program_.sequences[s];
    for (const ProgramStep& step : steps_.sequences[s].steps) {
      const size_t first_new = sequence.thunks.size();
      Status status = TranslateStep(step, static_cast<int>(s), sequence);
      if (!status.ok()) return status.WithContext("lowering '" + step.name + "'");
      for (size_t i = first_new; i < sequence.thunks.size(); ++i) sequence.thunks[i]->set_name(step.name);
    }
    program_.region_results[s] = steps_.sequences[s].results;
  }
  program_.result_sources = steps_.sequences[0].results;
  return OkStatus();
}

Status StepTranslator::TranslateSlots() {
  program_.slots.reserve(steps_.slots.size());
  for (const StepSlot& lowered : steps_.slots) {
    Slot slot;
    slot.bytes = lowered.bytes;
    slot.region = lowered.sequence;
    switch (lowered.kind) {
      case StepSlotKind::kTemporary: slot.kind = SlotKind::kArena; break;
      case StepSlotKind::kConstant:
        slot.kind = SlotKind::kConstant;
        slot.constant = steps_.constants[static_cast<size_t>(lowered.index)]->raw().data();
        break;
      case StepSlotKind::kParameter:
        slot.kind = SlotKind::kParameter;
        slot.index = lowered.index;
        break;
      case StepSlotKind::kBound: slot.kind = SlotKind::kBound; break;
      case StepSlotKind::kResult: return Internal("cpu: the step program's slots are already placed");
    }
    program_.slots.push_back(std::move(slot));
  }
  return OkStatus();
}

std::vector<int> StepTranslator::SlotMentions() const {
  std::vector<int> mentions(steps_.slots.size(), 0);
  const auto note = [&](std::vector<int> slots) {
    std::sort(slots.begin(), slots.end());
    slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
    for (int slot : slots) {
      if (slot >= 0 && static_cast<size_t>(slot) < mentions.size()) ++mentions[static_cast<size_t>(slot)];
    }
  };
  for (const StepSequence& sequence : steps_.sequences) {
    note(sequence.parameters);
    note(sequence.results);
    for (const ProgramStep& step : sequence.steps) {
      std::vector<int> named = step.buffers;
      named.insert(named.end(), step.sources.begin(), step.sources.end());
      named.insert(named.end(), step.targets.begin(), step.targets.end());
      for (const std::vector<int>& operands : step.branch_operands)
        named.insert(named.end(), operands.begin(), operands.end());
      named.push_back(step.selector);
      note(std::move(named));
    }
  }
  return mentions;
}

void StepTranslator::FindPositionsSortsWrite() {
  const std::vector<int> mentions = SlotMentions();
  for (const StepSequence& sequence : steps_.sequences) {
    // The launch that alone writes each slot it names as its one buffer.
    std::unordered_map<int, const ProgramStep*> lone_launch_of;
    for (const ProgramStep& step : sequence.steps) {
      if (step.kind == ProgramStep::Kind::kLaunch && step.buffers.size() == 1)
        lone_launch_of.emplace(step.buffers[0], &step);
    }
    for (const ProgramStep& step : sequence.steps) {
      if (step.kind != ProgramStep::Kind::kLibraryCall) continue;
      const Instruction& sort = *steps_.library_calls[static_cast<size_t>(step.call)];
      if (sort.opcode != Opcode::kSort) continue;
      const std::optional<CpuSortPlan> plan = PlanCpuSort(sort, compiler_);
      // One buffer per operand (all arrays), then the results.
      if (!plan.has_value() || !plan->key_plan.has_value() || step.buffers.size() < sort.operands.size())
        continue;
      std::vector<bool> generated(sort.operands.size(), false);
      bool any = false;
      for (size_t k = 0; k < sort.operands.size(); ++k) {
        const int slot = step.buffers[k];
        const auto producer = lone_launch_of.find(slot);
        // Named by its launch and this sort only, and by the sort once (an
        // iota that is also the key, after CSE, must be computed).
        if (static_cast<int>(k) == plan->key_plan->operand || producer == lone_launch_of.end() ||
            mentions[static_cast<size_t>(slot)] != 2 ||
            std::count(step.buffers.begin(), step.buffers.end(), slot) != 1 ||
            steps_.slots[static_cast<size_t>(slot)].kind != StepSlotKind::kTemporary) {
          continue;
        }
        const KernelDescription& kernel =
            program_.kernel_descriptions[static_cast<size_t>(producer->second->kernel)];
        if (!kernel.arguments.empty() || kernel.results.size() != 1 || kernel.computation == nullptr ||
            !ComputesPositionsAlong(*kernel.computation, sort.operand(k)->shape,
                                    plan->geometry.sort_dimension)) {
          continue;
        }
        generated[k] = true;
        any = true;
        dropped_launches_.insert(producer->second);
      }
      if (any) generated_positions_.emplace(&step, std::move(generated));
    }
  }
}

void StepTranslator::FindIndexWrapsRowScattersFold() {
  const std::vector<int> mentions = SlotMentions();
  for (const StepSequence& sequence : steps_.sequences) {
    // The launch of one argument that alone writes each slot it names as its result.
    std::unordered_map<int, const ProgramStep*> unary_launch_of;
    for (const ProgramStep& step : sequence.steps) {
      if (step.kind == ProgramStep::Kind::kLaunch && step.buffers.size() == 2)
        unary_launch_of.emplace(step.buffers[1], &step);
    }
    for (const ProgramStep& step : sequence.steps) {
      if (step.kind != ProgramStep::Kind::kLibraryCall) continue;
      const Instruction& scatter = *steps_.library_calls[static_cast<size_t>(step.call)];
      if (scatter.opcode != Opcode::kScatter) continue;
      const std::optional<RowScatterPlan> plan = PlanRowScatter(scatter);
      // Buffers: operand, indices, updates, result (all arrays).
      if (!plan.has_value() || step.buffers.size() != 4) continue;
      const int indices = step.buffers[1];
      const auto producer = unary_launch_of.find(indices);
      // Named by its launch and this scatter only, and by the scatter once.
      if (producer == unary_launch_of.end() || mentions[static_cast<size_t>(indices)] != 2 ||
          std::count(step.buffers.begin(), step.buffers.end(), indices) != 1 ||
          steps_.slots[static_cast<size_t>(indices)].kind != StepSlotKind::kTemporary) {
        continue;
      }
      const KernelDescription& kernel =
          program_.kernel_descriptions[static_cast<size_t>(producer->second->kernel)];
      if (kernel.arguments.size() != 1 || kernel.results.size() != 1 || kernel.scratch_bytes != 0 ||
          kernel.computation == nullptr || !WrapsNegativeRowScatterIndices(*kernel.computation, *plan)) {
        continue;
      }
      unwrapped_indices_.emplace(&step, producer->second->buffers[0]);
      dropped_launches_.insert(producer->second);
    }
  }
}

void StepTranslator::DropUnrequestedKernels() {
  if (dropped_launches_.empty()) return;
  std::vector<KernelDescription>& kernels = program_.kernel_descriptions;
  kernel_installers_.resize(kernels.size());
  size_t kept = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernel_installers_[i].empty()) continue;
    if (kept != i) {
      kernels[kept] = std::move(kernels[i]);
      kernel_installers_[kept] = std::move(kernel_installers_[i]);
    }
    ++kept;
  }
  kernels.resize(kept);
  kernel_installers_.resize(kept);
}

Status StepTranslator::TranslateStep(const ProgramStep& step, int region, ThunkSequence& sequence) {
  switch (step.kind) {
    case ProgramStep::Kind::kLaunch:
      // An iota whose sort writes its positions, or indices a row scatter
      // wraps: no kernel.
      if (dropped_launches_.count(&step) != 0) return OkStatus();
      return TranslateLaunch(step, sequence);
    case ProgramStep::Kind::kLibraryCall: return TranslateLibraryCall(step, region, sequence);
    case ProgramStep::Kind::kWhile: return TranslateWhile(step, region, sequence);
    case ProgramStep::Kind::kConditional: {
      std::vector<NestedComputation> branches;
      for (int nested : step.nested) branches.push_back(Nested(nested));
      sequence.thunks.push_back(std::make_unique<ConditionalThunk>(step.selector, step.selector_type,
                                                                   step.branch_operands, std::move(branches),
                                                                   step.targets, step.bytes));
      return OkStatus();
    }
    case ProgramStep::Kind::kCopy:
      sequence.thunks.push_back(std::make_unique<SlotCopyThunk>(step.sources, step.targets, step.bytes));
      return OkStatus();
    case ProgramStep::Kind::kInfeed:
      sequence.thunks.push_back(std::make_unique<InfeedThunk>(step.shape, step.targets, step.bytes));
      return OkStatus();
    case ProgramStep::Kind::kOutfeed:
      sequence.thunks.push_back(std::make_unique<OutfeedThunk>(step.shape, step.sources, step.bytes));
      return OkStatus();
    case ProgramStep::Kind::kTapePush:
    case ProgramStep::Kind::kTapePop:
      sequence.thunks.push_back(std::make_unique<TapeThunk>(step));
      return OkStatus();
  }
  return Internal("cpu: the step lowering made a step of kind ", static_cast<int>(step.kind));
}

Status StepTranslator::TranslateLaunch(const ProgramStep& step, ThunkSequence& sequence) {
  const auto description = static_cast<size_t>(step.kernel);
  const KernelDescription& kernel = program_.kernel_descriptions[description];
  const size_t arguments = kernel.arguments.size();
  if (step.buffers.size() != arguments + kernel.results.size())
    return Internal("cpu: launch of '", kernel.name, "' has ", step.buffers.size(), " buffers");
  const Leaves inputs(step.buffers.begin(), step.buffers.begin() + static_cast<std::ptrdiff_t>(arguments));
  const Leaves outputs(step.buffers.begin() + static_cast<std::ptrdiff_t>(arguments), step.buffers.end());
  std::vector<ParameterBinding> bindings;
  for (size_t i = 0; i < arguments; ++i) bindings.push_back({kernel.arguments[i].shape, {inputs[i]}});
  auto fallback =
      std::make_unique<LibraryThunk>(kernel.computation, std::move(bindings), outputs, SlotBytes(outputs));
  auto thunk = std::make_unique<KernelThunk>(inputs, outputs, std::move(fallback));
  RequestKernel(description, [raw = thunk.get()](const KernelInfo& info, const KernelGrid& grid) {
    raw->SetKernel(info.function, grid);
  });
  sequence.thunks.push_back(std::move(thunk));
  return OkStatus();
}

std::unique_ptr<LibraryThunk> StepTranslator::InterpreterThunk(const Instruction& instruction,
                                                               const std::vector<Leaves>& operands,
                                                               const Leaves& outputs,
                                                               const Computation* single) {
  std::vector<ParameterBinding> bindings;
  for (size_t i = 0; i < operands.size(); ++i)
    bindings.push_back({instruction.operand(i)->shape, operands[i]});
  if (single == nullptr) {
    single = program_.module->AddComputation(
        kiln::SingleInstructionComputation(instruction, instruction.name + ".single"));
  }
  return std::make_unique<LibraryThunk>(single, std::move(bindings), outputs, SlotBytes(outputs));
}

size_t StepTranslator::ComparatorKernel(const Computation& comparator) {
  std::vector<KernelDescription>& kernels = program_.kernel_descriptions;
  if (description_of_key_.empty()) {
    for (size_t i = 0; i < kernels.size(); ++i)
      description_of_key_.emplace(KernelKey(*kernels[i].computation), i);
  }
  const auto [found, inserted] = description_of_key_.try_emplace(KernelKey(comparator), kernels.size());
  if (inserted)
    kernels.push_back(DescribeKernel(comparator, "kiln_kernel_" + std::to_string(kernels.size())));
  return found->second;
}

Status StepTranslator::TranslateLibraryCall(const ProgramStep& step, int region, ThunkSequence& sequence) {
  const Instruction& instruction = *steps_.library_calls[static_cast<size_t>(step.call)];
  // The step's buffers: each operand's array leaves, then the result's.
  std::vector<Leaves> operands;
  size_t next = 0;
  for (const Instruction* operand : instruction.operands) {
    const auto count = static_cast<size_t>(ArrayLeafCount(operand->shape));
    if (next + count > step.buffers.size()) return Internal("cpu: library call with too few buffers");
    operands.emplace_back(step.buffers.begin() + static_cast<std::ptrdiff_t>(next),
                          step.buffers.begin() + static_cast<std::ptrdiff_t>(next + count));
    next += count;
  }
  const Leaves outputs(step.buffers.begin() + static_cast<std::ptrdiff_t>(next), step.buffers.end());
  auto first = [&](size_t i) { return operands[i].at(0); };
  auto add = [&](std::unique_ptr<Thunk> thunk) {
    sequence.thunks.push_back(std::move(thunk));
    return OkStatus();
  };
  switch (instruction.opcode) {
    case Opcode::kFusion:
      // A transpose that fused with nothing: a blocked copy beats a kernel
      // that reads across rows element by element.
      if (const Instruction* transpose = LoneTranspose(instruction)) {
        return add(std::make_unique<TransposeThunk>(first(0), outputs.at(0), transpose->operand(0)->shape,
                                                    transpose->attrs.dimensions));
      }
      if (std::optional<FoldedSelectAndScatterPlan> folded = PlanFoldedSelectAndScatter(instruction)) {
        auto operand = [&](int64_t i) { return first(static_cast<size_t>(i)); };
        return add(std::make_unique<SelectAndScatterThunk>(
            operand(folded->operand), operand(folded->source), operand(folded->initial),
            operand(folded->pad_value), outputs.at(0), std::move(folded->plan)));
      }
      if (std::optional<ReduceWindowPlan> plan = PlanFoldedReduceWindow(instruction))
        return add(std::make_unique<ReduceWindowThunk>(first(0), first(1), first(2), outputs.at(0),
                                                       std::move(*plan)));
      break;
    case Opcode::kDot:
      if (std::optional<DotPlan> plan = PlanDot(instruction)) {
        auto prepared = [&](size_t i, const std::vector<int64_t>& permutation) {
          if (permutation.empty()) return first(i);
          const Shape& shape = instruction.operand(i)->shape;
          const int transposed = NewArenaSlot(DenseByteSize(shape), region);
          sequence.thunks.push_back(
              std::make_unique<TransposeThunk>(first(i), transposed, shape, permutation));
          return transposed;
        };
        const int lhs = prepared(0, plan->lhs_permutation);
        const int rhs = prepared(1, plan->rhs_permutation);
        return add(std::make_unique<DotThunk>(lhs, rhs, outputs.at(0), plan->geometry));
      }
      break;
    case Opcode::kConvolution:
      if (std::optional<ConvolutionGeometry> geometry = PlanConvolution(instruction)) {
        const int64_t packed_bytes = geometry->packed_kernel_elements() * ByteWidth(geometry->type);
        const int packed = NewArenaSlot(packed_bytes, region);
        return add(std::make_unique<ConvolutionThunk>(first(0), first(1), outputs.at(0), packed,
                                                      std::move(*geometry)));
      }
      break;
    case Opcode::kReduceWindow:
      if (std::optional<ScanGeometry> scan = PlanScan(instruction))
        return add(std::make_unique<ScanThunk>(first(0), outputs.at(0), *scan));
      if (std::optional<ReduceWindowPlan> plan = PlanReduceWindow(instruction))
        return add(std::make_unique<ReduceWindowThunk>(first(0), first(1), outputs.at(0), std::move(*plan)));
      break;
    case Opcode::kSelectAndScatter:
      if (std::optional<SelectAndScatterPlan> plan = PlanSelectAndScatter(instruction)) {
        return add(std::make_unique<SelectAndScatterThunk>(first(0), first(1), first(2), outputs.at(0),
                                                           std::move(*plan)));
      }
      break;
    case Opcode::kScatter:
      if (std::optional<RowScatterPlan> plan = PlanRowScatter(instruction)) {
        int indices = first(1);
        if (const auto unwrapped = unwrapped_indices_.find(&step); unwrapped != unwrapped_indices_.end()) {
          indices = unwrapped->second;
          plan->wrap_negative_indices = true;
        }
        const int64_t scratch_bytes = RowScatterScratchBytes(*plan);
        const int scratch = scratch_bytes > 0 ? NewArenaSlot(scratch_bytes, region) : -1;
        return add(
            std::make_unique<RowScatterThunk>(first(0), indices, first(2), outputs.at(0), scratch, *plan));
      }
      break;
    case Opcode::kRng:
      if (std::optional<RngPlan> plan = PlanRng(instruction))
        return add(std::make_unique<RngThunk>(first(0), first(1), outputs.at(0), *plan));
      break;
    case Opcode::kRngBitGenerator:
      if (std::optional<RngBitPlan> plan = PlanRngBitGenerator(instruction))
        return add(std::make_unique<RngBitGeneratorThunk>(first(0), outputs.at(0), outputs.at(1), *plan));
      break;
    case Opcode::kSort:
      if (std::optional<CpuSortPlan> plan = PlanCpuSort(instruction, compiler_)) {
        if (const auto generated = generated_positions_.find(&step); generated != generated_positions_.end())
          plan->geometry.generated_positions = generated->second;
        auto fallback = InterpreterThunk(instruction, operands, outputs);
        Leaves inputs;
        for (const Leaves& operand : operands) inputs.insert(inputs.end(), operand.begin(), operand.end());
        auto thunk = std::make_unique<SortThunk>(std::move(inputs), outputs, std::move(plan->geometry),
                                                 std::move(fallback));
        if (plan->key_plan.has_value()) thunk->SetKeyPlan(*plan->key_plan);
        if (const int64_t radix_bytes = thunk->RadixScratchBytes(); radix_bytes > 0)
          thunk->SetRadixScratch(NewArenaSlot(radix_bytes, region));
        if (plan->needs_comparator) {
          RequestKernel(
              ComparatorKernel(*instruction.called[0]),
              [raw = thunk.get()](const KernelInfo& info, const KernelGrid&) { raw->SetComparator(info); });
        }
        return add(std::move(thunk));
      }
      break;
    case Opcode::kTopK:
      if (std::optional<TopKGeometry> geometry = PlanCpuTopK(instruction))
        return add(std::make_unique<TopKThunk>(first(0), outputs.at(0), outputs.at(1), *geometry));
      break;
    case Opcode::kFft: {
      if (instruction.operands.size() != 1) break;
      StatusOr<interpreter::FftGeometry> geometry =
          interpreter::PlanFft(instruction.operand(0)->shape, instruction.shape, instruction.attrs);
      // A length the library cannot take is refused now (UNIMPLEMENTED, by name).
      if (!geometry.ok()) return geometry.status();
      return add(std::make_unique<FftThunk>(first(0), outputs.at(0), std::move(geometry).value()));
    }
    case Opcode::kDynamicUpdateSlice:
      if (FitsDynamicUpdateSliceThunk(instruction)) {
        Leaves inputs;
        std::vector<ElementType> index_types;
        for (size_t i = 0; i < operands.size(); ++i) {
          inputs.push_back(first(i));
          if (i >= 2) index_types.push_back(instruction.operand(i)->shape.element_type());
        }
        return add(std::make_unique<DynamicUpdateSliceThunk>(
            std::move(inputs), outputs.at(0), instruction.operand(0)->shape, instruction.operand(1)->shape,
            std::move(index_types)));
      }
      break;
    case Opcode::kCustomCall:
      // A LAPACK call the library thunk would refuse keeps it, so the error
      // comes from the same place as on the interpreter.
      if (const BuiltinCustomCall* lapack = FindBuiltinCustomCall(instruction.attrs.custom_call_target);
          lapack != nullptr && interpreter::CheckLapackCall(*lapack, instruction).ok()) {
        Leaves inputs;
        for (size_t i = 0; i < operands.size(); ++i) inputs.push_back(first(i));
        return add(std::make_unique<LapackThunk>(*lapack, instruction, std::move(inputs), outputs));
      }
      break;
    default: break;
  }
  NoteLibraryThunk(instruction);
  return add(InterpreterThunk(instruction, operands, outputs,
                              steps_.library_call_computations.at(static_cast<size_t>(step.call))));
}

Status StepTranslator::TranslateWhile(const ProgramStep& step, int region, ThunkSequence& sequence) {
  if (step.nested.size() != 2) return Internal("cpu: a loop step without a condition and a body");
  const NestedComputation condition = Nested(step.nested[0]);
  const NestedComputation body = Nested(step.nested[1]);
  const Leaves& init = step.sources;
  const Leaves& results = step.targets;
  Leaves state_a, state_b;
  for (size_t i = 0; i < results.size(); ++i) {
    state_a.push_back(NewArenaSlot(step.bytes[i], region));
    state_b.push_back(NewArenaSlot(step.bytes[i], region));
    // The loop starts from the initial value where it is (it never writes
    // the buffer holding the current state), so that value, and whatever it
    // may point to (another loop's state), lives as long. The results are
    // set by the loop to whichever buffer holds the final state.
    std::vector<int> backing = {state_a[i], state_b[i], init[i]};
    const std::vector<int>& inherited = program_.slots[static_cast<size_t>(init[i])].backing;
    backing.insert(backing.end(), inherited.begin(), inherited.end());
    Slot& result = program_.slots[static_cast<size_t>(results[i])];
    result.kind = SlotKind::kBound;
    result.backing = std::move(backing);
  }
  // A state leaf the body computes into one of its own temporaries is
  // computed straight into the loop's other state buffer instead (the loop
  // binds that slot each iteration), so the back-edge swaps pointers rather
  // than copying the array. The other buffer is never the one the body reads,
  // so no element is overwritten before it is read. Leaves passed through,
  // taken from another leaf or a constant, or repeated are still copied.
  std::vector<bool> computed_in_place(results.size(), false);
  for (size_t i = 0; i < results.size(); ++i) {
    const int produced = body.result_leaves[i];
    Slot& slot = program_.slots[static_cast<size_t>(produced)];
    const auto before = body.result_leaves.begin() + static_cast<std::ptrdiff_t>(i);
    const bool repeated = std::find(body.result_leaves.begin(), before, produced) != before;
    if (slot.kind == SlotKind::kArena && !repeated) {
      slot.kind = SlotKind::kBound;
      computed_in_place[i] = true;
    } else if (produced != body.parameter_leaves[i]) {
      program_.statistics.loop_state_bytes_copied_per_iteration += step.bytes[i];
    }
  }
  sequence.thunks.push_back(std::make_unique<WhileThunk>(init, std::move(state_a), std::move(state_b),
                                                         results, step.bytes, std::move(computed_in_place),
                                                         condition, body));
  return OkStatus();
}

Status StepTranslator::CompileKernels(const KernelDump& dump) {
  DropUnrequestedKernels();
  std::vector<KernelDescription>& kernels = program_.kernel_descriptions;
  if (kernels.empty() || compiler_ == nullptr) return OkStatus();
  program_.statistics.distinct_kernels = static_cast<int64_t>(kernels.size());
  kernel_installers_.resize(kernels.size());
  // Small loops are compiled whole in the same call (one link), over the
  // kernels they call, which are compiled once for both.
  const FusedLoopPlan loops = PlanFusedLoops(program_);
  // A kernel that the emitter accepted but LLVM could not compile is a bug
  // to report, never a silent (and much slower) run of the library path.
  KILN_ASSIGN_OR_RETURN(program_.kernels, compiler_->Compile(kernels, loops.requests, dump));
  KILN_RETURN_IF_ERROR(InstallFusedLoops(loops, *program_.kernels, program_));
  const std::vector<KernelInfo>& infos = program_.kernels->kernels();
  if (infos.size() != kernels.size())
    return Internal("cpu: the code generator returned ", infos.size(), " kernels for ", kernels.size());
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
  const ProgramShape signature = module->entry()->program_shape();
  program->parameter_shapes = signature.parameters;
  Shape result = signature.result;
  // Entry layouts are metadata only (all data is dense row-major); they are
  // reported on the leaves, as the interpreter does.
  const auto& layout = module->entry_layout();
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

  // The shared step lowering (core/lowering/step_lowering.h) with the cpu's
  // rules, then its steps as thunks.
  StepProgram steps;
  KILN_RETURN_IF_ERROR(LowerToSteps(std::move(module), CpuLoweringRules(compiler), steps));
  program->module = std::move(steps.module);  // the instructions and literals the steps point at stay put
  program->constant_storage = std::move(steps.constant_storage);
  program->kernel_descriptions = std::move(steps.kernels);
  StepTranslator translator(steps, *program, compiler);
  KILN_RETURN_IF_ERROR(translator.Translate());
  if (program->result_sources.size() != program->result_leaves.size()) {
    return Internal("cpu: the entry yields ", program->result_sources.size(), " arrays, its shape has ",
                    program->result_leaves.size());
  }
  KILN_RETURN_IF_ERROR(translator.CompileKernels(dump));
  // Planned per computation when a library call first runs it: most programs
  // run none through the interpreter.
  program->library_plan =
      std::make_unique<interpreter::ModulePlan>(interpreter::ModulePlan::OnFirstUse(*program->module));
  AssignBuffers(*program);
  return program;
}

}  // namespace kiln::cpu
