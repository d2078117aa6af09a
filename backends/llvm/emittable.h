// What the elemental emitter can compile: checked up front so that the
// runtime can route anything else (dot, sort, gather, complex, ...) to its
// other paths instead of failing mid-compile.
#pragma once

#include <string>

#include "core/compiler/emittable_table.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

struct EmittableOptions {
  // A dynamic-update-slice root, emitted elementally (each output element
  // from the update or the operand). The CPU runtime keeps its in-place
  // thunk instead, which writes only the update; a GPU has no such path.
  bool dynamic_update_slice_root = false;
};

// OK, or UNIMPLEMENTED naming the first op (and element type) that cannot
// be emitted, in `computation` or any computation it calls.
Status CheckEmittable(const Computation& computation, const EmittableOptions& options = {});

// What the LLVM emitters can compute as a kernel of one instruction (its
// operands as the kernel's arguments), declared per opcode
// (core/compiler/emittable_table.h): the same answer as CheckEmittable on
// that one-instruction computation, without building it. The fusion pass
// asks it of every candidate instruction of a module. `backend` is named in
// refusals; `options` are those its CheckEmittable would be called with.
compiler::EmittableTable MakeLlvmEmittableTable(std::string backend, const EmittableOptions& options = {});
// The CPU backend's table: MakeLlvmEmittableTable("cpu"), whose gathers
// fuse (EmittableTable::fuses_gathers).
const compiler::EmittableTable& CpuEmittableTable();

}  // namespace kiln::llvm_ir
