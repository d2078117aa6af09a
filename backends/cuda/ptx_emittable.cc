#include "backends/cuda/ptx_emittable.h"

#include "backends/cuda/rng_bit_generator_emitter.h"
#include "backends/cuda/rng_emitter.h"
#include "backends/cuda/sort_emitter.h"
#include "backends/llvm/emittable.h"

namespace kiln::cuda {
namespace {

// A kernel's parameters (gpu_entry.h: a pointer per buffer, then the i64
// extent and at most one more i64, an rng kernel's key) must fit the 4 KiB
// of parameter space every CUDA device has (newer drivers allow more on
// Volta and later; 4 KiB holds everywhere). One buffer is kept for a
// kernel's scratch (sort, topk).
constexpr int64_t kKernelParameterBytes = 4096;
constexpr int64_t kMaxKernelBuffers = (kKernelParameterBytes - 2 * 8) / 8 - 1;

compiler::EmittableTable MakePtxEmittableTable() {
  using compiler::Emittability;
  llvm_ir::EmittableOptions options;
  options.dynamic_update_slice_root = true;
  compiler::EmittableTable table = llvm_ir::MakeLlvmEmittableTable("cuda", options);
  const compiler::ElementTypeSet all = compiler::ElementTypeSet::All();
  // Kernels of their own, which take their operands as they are.
  table.Override({
      {Opcode::kRng, Emittability::kChecked},
      {Opcode::kRngBitGenerator, Emittability::kChecked, all, /*tuple_result=*/true},
      {Opcode::kSort, Emittability::kChecked, all, /*tuple_result=*/true},
      {Opcode::kTopK, Emittability::kChecked, all, /*tuple_result=*/true},
  });
  table.set_check([llvm = table.check()](const Instruction& instruction) -> Status {
    switch (instruction.opcode) {
      case Opcode::kRng: return CheckRngEmittable(instruction);
      case Opcode::kRngBitGenerator: return CheckRngBitGeneratorEmittable(instruction);
      case Opcode::kSort: return CheckSortEmittable(instruction);
      case Opcode::kTopK: return CheckTopKEmittable(instruction);
      default: return llvm(instruction);
    }
  });
  table.set_max_kernel_buffers(kMaxKernelBuffers);
  return table;
}

}  // namespace

const compiler::EmittableTable& PtxEmittableTable() {
  static const compiler::EmittableTable* const table = new compiler::EmittableTable(MakePtxEmittableTable());
  return *table;
}

Status CheckPtxKernelBuffers(const Computation& kernel) {
  if (kernel.root() == nullptr) return InvalidArgument("cuda: kernel ", kernel.name(), " has no root");
  const Shape& result = kernel.root()->shape;
  const size_t results = result.IsTuple() ? result.tuple_shapes().size() : 1;
  const auto buffers = static_cast<int64_t>(kernel.parameters().size() + results);
  if (buffers <= kMaxKernelBuffers) return OkStatus();
  return Unimplemented("cuda: cannot emit ", OpcodeName(kernel.root()->opcode), " ", result.ToString(), " (",
                       kernel.root()->name, "): its kernel would take ", buffers,
                       " buffers as parameters and one kernel takes at most ", kMaxKernelBuffers, " (",
                       kKernelParameterBytes, " bytes of parameters)");
}

}  // namespace kiln::cuda
