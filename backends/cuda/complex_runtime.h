// Complex arithmetic for GPU kernels. The shared kernel emitter
// (backends/llvm/complex_ir.h) calls the C library's complex functions
// (cexpf, clog, ...) and libgcc's careful multiply and divide (__mulsc3,
// __divsc3, ...), which a GPU does not have; this defines each one the
// emitter asks for (cuda_target_hooks.h), in IR, from real math that
// libdevice provides, with the same signatures (a float complex as
// <2 x float>; a double complex as two doubles in and a {double, double}
// out).
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace kiln::cuda {

// Gives `function` its body when it is a declaration of one of these
// functions (by name); leaves anything else as it is.
void DefineComplexFunction(llvm::Function& function);

}  // namespace kiln::cuda
