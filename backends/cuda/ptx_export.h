// Ahead-of-time PTX for machines without a GPU: the module goes through the
// CUDA backend's passes and lowering exactly as Backend::Compile would take
// it, and the kernels' PTX is returned instead of being loaded into a
// driver. Used by `kiln compile --backend cuda --emit ptx` and by the tests
// that check every corpus program's PTX with ptxas.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/ptx_compiler.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cuda {

struct PtxExport {
  std::string ptx;                 // one module holding every kernel ("" when none)
  std::vector<PtxKernel> kernels;  // its entry points, the loops run whole (whole_loop.h) last
};

// UNIMPLEMENTED naming the op when part of `module` cannot run on the CUDA
// backend; INVALID_ARGUMENT for a module that does not verify.
StatusOr<PtxExport> ExportPtx(const Module& module, const PtxTarget& target);

}  // namespace kiln::cuda
