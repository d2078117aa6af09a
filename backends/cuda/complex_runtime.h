// Complex arithmetic for GPU kernels. The shared kernel emitter
// (backends/llvm/complex_ir.h) asks the target for C99's complex functions
// (cexp, clog, ...) and C Annex G's careful product and quotient
// (TargetHooks::EmitComplexCall), which a GPU has no library for; the CUDA
// backend's hooks (cuda_target_hooks.h) call functions defined here, in IR,
// from real math that libdevice provides. They take and return complex
// values as the emitters hold them (<2 x float> or <2 x double>): internal
// to the module, they follow no C ABI, and the optimiser inlines them.
#pragma once

#include "backends/llvm/target_hooks.h"

namespace llvm {
class Function;
class Module;
class Type;
}  // namespace llvm

namespace kiln::cuda {

// The function computing `call` on values of `complex_type` in `module`
// ("kiln.complex.exp.f32", ...), defined on first use and reused after.
llvm::Function* ComplexRuntimeFunction(llvm::Module& module, llvm_ir::ComplexCall call,
                                       llvm::Type* complex_type);

}  // namespace kiln::cuda
