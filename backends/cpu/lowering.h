// Lowers an optimised module to a CompiledProgram: one thunk per
// instruction that computes something (tuples, get-tuple-element, reshape and
// copy only rename arrays; call and unfusable fusions are inlined), kernels
// for what the code generator emits, library thunks for the rest; then
// assigns every temporary a place in the arena by liveness.
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
