#include "backends/cuda/ptx_emittable.h"

#include "backends/cuda/rng_bit_generator_emitter.h"
#include "backends/cuda/rng_emitter.h"
#include "backends/cuda/sort_emitter.h"
#include "backends/llvm/emittable.h"

namespace kiln::cuda {
namespace {

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
  return table;
}

}  // namespace

const compiler::EmittableTable& PtxEmittableTable() {
  static const compiler::EmittableTable* const table = new compiler::EmittableTable(MakePtxEmittableTable());
  return *table;
}

}  // namespace kiln::cuda
