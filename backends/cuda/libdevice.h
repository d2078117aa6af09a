// libdevice, NVIDIA's bitcode library of math functions (__nv_expf, ...):
// where to find it and how to link just what a kernel module calls. It
// ships with every CUDA installation (nvvm/libdevice/libdevice.10.bc) and
// in the nvidia-cuda-nvcc wheel; Kiln never bundles it.
#pragma once

#include <string>

namespace llvm {
class Module;
}  // namespace llvm

#include "core/status.h"

namespace kiln::cuda {

// The libdevice file: $KILN_CUDA_LIBDEVICE, else nvvm/libdevice/
// libdevice.10.bc under $CUDA_HOME, $CUDA_PATH or /usr/local/cuda; "" when
// none exists.
std::string FindLibdevice();

// Renames the C library's math functions and the LLVM math intrinsics that
// NVPTX cannot select (exp, log, sin, cos, pow, ...) to libdevice's names.
// Returns whether `module` now calls libdevice.
bool UseLibdeviceNames(llvm::Module& module);

// Links the libdevice functions `module` calls (only those, internalised so
// that the optimiser inlines and drops them). FAILED_PRECONDITION naming
// the first function and KILN_CUDA_LIBDEVICE when libdevice is missing.
Status LinkLibdevice(llvm::Module& module);

}  // namespace kiln::cuda
