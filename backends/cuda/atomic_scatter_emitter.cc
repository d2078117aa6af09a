#include "backends/cuda/atomic_scatter_emitter.h"

#include <optional>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/atomic_scatter_compare_swap.h"
#include "backends/cuda/cuda_target_hooks.h"
#include "backends/cuda/gpu_entry.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/kernel_emitter.h"
#include "backends/llvm/scatter_emitter.h"
#include "core/reducer.h"

namespace kiln::cuda {
namespace {

using AtomicOp = llvm::AtomicRMWInst::BinOp;

// The atomic form of `opcode` on integers, signed or not; nullopt when it
// has none. Every op here is commutative, as BinaryCombinerOpcode needs.
std::optional<AtomicOp> IntegerScatterAtomic(Opcode opcode, bool is_signed) {
  switch (opcode) {
    case Opcode::kAdd: return AtomicOp::Add;
    case Opcode::kMinimum: return is_signed ? AtomicOp::Min : AtomicOp::UMin;
    case Opcode::kMaximum: return is_signed ? AtomicOp::Max : AtomicOp::UMax;
    case Opcode::kAnd: return AtomicOp::And;
    case Opcode::kOr: return AtomicOp::Or;
    case Opcode::kXor: return AtomicOp::Xor;
    default: return std::nullopt;
  }
}

// How a thread combines its update into an output element: one atomic
// instruction, or (`instruction` empty) a compare-and-swap loop.
struct ScatterAtomicCombine {
  std::optional<AtomicOp> instruction;
};

// How `scatter`'s combiner applies to an output element atomically;
// nullopt when it does not here (the serial kernel runs it).
std::optional<ScatterAtomicCombine> ScatterAtomicCombineOf(const Instruction& scatter) {
  if (scatter.opcode != Opcode::kScatter || scatter.operands.size() != 3 || scatter.called.size() != 1 ||
      scatter.called[0] == nullptr || !scatter.shape.IsArray())
    return std::nullopt;
  const ElementType type = scatter.shape.element_type();
  if (scatter.operand(0)->shape.element_type() != type || scatter.operand(2)->shape.element_type() != type)
    return std::nullopt;
  const Computation& combiner = *scatter.called[0];
  const Shape& result = combiner.root() == nullptr ? Shape() : combiner.root()->shape;
  if (!result.IsArray() || result.rank() != 0 || result.element_type() != type) return std::nullopt;
  const std::optional<Opcode> opcode = BinaryCombinerOpcode(combiner);
  if (!opcode.has_value()) return std::nullopt;
  std::optional<AtomicOp> instruction;
  switch (type) {
    // NVPTX has atom.add.f32 and (sm_60 on) atom.add.f64; LLVM expands
    // the f64 add to a compare-and-swap loop for older GPUs.
    case ElementType::kF32:
    case ElementType::kF64:
      if (*opcode == Opcode::kAdd) instruction = AtomicOp::FAdd;
      break;
    case ElementType::kS32:
    case ElementType::kS64: instruction = IntegerScatterAtomic(*opcode, /*is_signed=*/true); break;
    case ElementType::kU32:
    case ElementType::kU64: instruction = IntegerScatterAtomic(*opcode, /*is_signed=*/false); break;
    default: break;
  }
  if (instruction.has_value()) return ScatterAtomicCombine{instruction};
  if (CombinesByCompareSwap(*opcode, type)) return ScatterAtomicCombine{std::nullopt};
  return std::nullopt;
}

}  // namespace

bool RunsAsAtomicScatter(const Computation& kernel) {
  return kernel.root() != nullptr && ScatterAtomicCombineOf(*kernel.root()).has_value();
}

StatusOr<PtxKernel> EmitAtomicScatterKernel(llvm::Module& module, const Computation& kernel,
                                            const std::string& name) {
  const Instruction& scatter = *kernel.root();
  const std::optional<ScatterAtomicCombine> atomic = ScatterAtomicCombineOf(scatter);
  if (!atomic.has_value())
    return Internal("cuda: ", scatter.name, " has no atomic combiner for the parallel scatter");
  const CudaTargetHooks hooks;
  // The serial kernel, for a loop that runs whole (it calls name.iteration).
  const std::string serial_name = name + ".iteration";
  KILN_RETURN_IF_ERROR(llvm_ir::EmitKernel(module, kernel, serial_name, hooks).status());
  llvm::Function* serial = module.getFunction(serial_name);
  serial->setLinkage(llvm::GlobalValue::InternalLinkage);
  serial->addFnAttr(llvm::Attribute::AlwaysInline);

  const size_t parameter_count = kernel.parameters().size();
  const int buffer_count = static_cast<int>(parameter_count + 1);
  GpuEntry entry = BeginGpuEntry(module, name, buffer_count, /*extra_i64_params=*/1);
  llvm::IRBuilder<>& b = *entry.builder;
  std::vector<llvm::Value*> parameter_buffers;
  for (size_t i = 0; i < parameter_count; ++i)
    parameter_buffers.push_back(entry.function->getArg(static_cast<unsigned>(i)));
  const std::vector<llvm::Value*> outputs = {entry.function->getArg(static_cast<unsigned>(parameter_count))};
  llvm::Value* mode = entry.function->getArg(static_cast<unsigned>(buffer_count + 1));
  llvm_ir::ElementalEmitter emitter(b, hooks, entry.entry_block, parameter_buffers);
  const ElementType type = scatter.shape.element_type();
  const std::vector<int64_t>& operand_dims = scatter.operand(0)->shape.dimensions();
  const std::vector<int64_t>& update_dims = scatter.operand(2)->shape.dimensions();

  llvm::Function* function = entry.function;
  llvm::BasicBlock* copy = llvm::BasicBlock::Create(b.getContext(), "scatter.copy", function);
  llvm::BasicBlock* update = llvm::BasicBlock::Create(b.getContext(), "scatter.update", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "scatter.done", function);
  b.CreateCondBr(b.CreateICmpEQ(mode, b.getInt64(kAtomicScatterCopyMode)), copy, update);

  b.SetInsertPoint(copy);
  emitter.PushScope();  // values made in one mode do not dominate the other
  Status status = llvm_ir::EmitScatterOperandCopy(
      b, emitter, scatter, outputs, emitter.Delinearize(entry.thread, operand_dims), entry.thread);
  emitter.PopScope();
  KILN_RETURN_IF_ERROR(status);
  b.CreateBr(done);

  b.SetInsertPoint(update);
  // Relaxed ordering: nothing in this launch reads what another thread
  // combined; the next launch on the stream sees every write.
  const llvm_ir::ScatterCombine combine = [&](llvm::Value* target_linear,
                                              const llvm_ir::IrValues& updates) -> Status {
    llvm::Value* address =
        b.CreateInBoundsGEP(llvm_ir::StorageType(b.getContext(), type), outputs[0], target_linear);
    if (!atomic->instruction.has_value())
      return EmitCompareSwapCombine(b, emitter, *scatter.called[0], type, address, updates[0]);
    b.CreateAtomicRMW(*atomic->instruction, address, updates[0], llvm::MaybeAlign(ByteWidth(type)),
                      llvm::AtomicOrdering::Monotonic);
    return OkStatus();
  };
  emitter.PushScope();
  status = llvm_ir::EmitScatterUpdate(b, emitter, scatter, emitter.Delinearize(entry.thread, update_dims),
                                      combine);
  emitter.PopScope();
  KILN_RETURN_IF_ERROR(status);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  FinishGpuEntry(entry);

  const int64_t outputs_count = scatter.shape.element_count();
  const int64_t updates_count = scatter.operand(2)->shape.element_count();
  PtxKernel result;
  result.name = name;
  result.parallel_extent = 1;  // the serial kernel's, for a loop run whole
  result.buffer_count = buffer_count;
  result.launches = {
      KernelLaunch{LinearGrid(outputs_count, kThreadsPerBlock), {outputs_count, kAtomicScatterCopyMode}},
      KernelLaunch{LinearGrid(updates_count, kThreadsPerBlock), {updates_count, kAtomicScatterUpdateMode}}};
  return result;
}

}  // namespace kiln::cuda
