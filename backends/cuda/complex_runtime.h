// Complex arithmetic for GPU kernels. The shared kernel emitter
// (backends/llvm/complex_ir.h) calls the C library's complex functions
// (cexpf, clog, ...) and libgcc's careful multiply and divide (__mulsc3,
// __divsc3, ...), which a GPU does not have; this defines each one the
// module declares, in IR, from real math that libdevice provides, with the
// same signatures (a float complex as <2 x float>; a double complex as two
// doubles in and a {double, double} out).
#pragma once

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

// Gives a body to every complex runtime function `module` declares.
void DefineComplexRuntime(llvm::Module& module);

}  // namespace kiln::cuda
