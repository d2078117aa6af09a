#include "backends/cuda/ptx_emittable.h"

#include "backends/cuda/rng_bit_generator_emitter.h"
#include "backends/cuda/rng_emitter.h"
#include "backends/cuda/sort_emitter.h"
#include "backends/llvm/emittable.h"

namespace kiln::cuda {
namespace {

// The i64 parameters a kernel may take after its buffers (gpu_entry.h):
// the extent and an rng kernel's key.
constexpr int64_t kKernelParameterWords = 2;

compiler::EmittableTable MakePtxEmittableTable(int64_t parameter_bytes) {
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
  table.set_max_kernel_buffers(MaxKernelBuffers(parameter_bytes));
  return table;
}

}  // namespace

int64_t KernelParameterBytes(int driver_version, int compute_capability) {
  return driver_version >= 12010 && compute_capability >= 70 ? kLargeKernelParameterBytes
                                                             : kPortableKernelParameterBytes;
}

int64_t MaxKernelBuffers(int64_t parameter_bytes) {
  return (parameter_bytes - kKernelParameterWords * 8) / 8 - 1;
}

const compiler::EmittableTable& PtxEmittableTable(int64_t parameter_bytes) {
  static const compiler::EmittableTable* const portable =
      new compiler::EmittableTable(MakePtxEmittableTable(kPortableKernelParameterBytes));
  static const compiler::EmittableTable* const large =
      new compiler::EmittableTable(MakePtxEmittableTable(kLargeKernelParameterBytes));
  return parameter_bytes == kLargeKernelParameterBytes ? *large : *portable;
}

Status CheckPtxKernelBuffers(const Computation& kernel, int64_t parameter_bytes) {
  if (kernel.root() == nullptr) return InvalidArgument("cuda: kernel ", kernel.name(), " has no root");
  const Shape& result = kernel.root()->shape;
  const size_t results = result.IsTuple() ? result.tuple_shapes().size() : 1;
  const auto buffers = static_cast<int64_t>(kernel.parameters().size() + results);
  const int64_t limit = MaxKernelBuffers(parameter_bytes);
  if (buffers <= limit) return OkStatus();
  return Unimplemented("cuda: cannot emit ", OpcodeName(kernel.root()->opcode), " ", result.ToString(), " (",
                       kernel.root()->name, "): its kernel would take ", buffers,
                       " buffers as parameters and one kernel takes at most ", limit, " (", parameter_bytes,
                       " bytes of parameters)");
}

}  // namespace kiln::cuda
