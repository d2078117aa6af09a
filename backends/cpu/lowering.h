// Lowers an optimised module to a CompiledProgram: the shared step lowering
// (core/lowering/step_lowering.h) with the cpu's rules (kernels for what
// the code generator emits, library calls for what the cpu's own thunks or
// the interpreter path run), each step then translated into thunks; every
// temporary then gets its place in the arena by liveness.
#pragma once

#include <memory>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/program.h"

namespace kiln::cpu {

// `compiler` may be null: then everything that would be a kernel runs on the
// library path. `dump` says where the kernels' IR is written, if anywhere.
StatusOr<std::unique_ptr<CompiledProgram>> LowerModule(std::unique_ptr<Module> module,
                                                       KernelCompiler* compiler, const KernelDump& dump = {});

}  // namespace kiln::cpu
