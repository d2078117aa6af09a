// `kiln compile`: ahead-of-time compilation of an HLO module to a file,
// without a device. Today one form exists: `--backend cuda --emit ptx
// --target sm_XX` writes the PTX of every kernel the CUDA backend would
// launch (kiln::cuda::ExportPtx), for machines without a GPU and for
// checking the PTX with NVIDIA's ptxas.
#pragma once

#include <ostream>
#include <string>

#include "core/status.h"
#include "tools/command_line.h"

namespace kiln::tool {

// INVALID_ARGUMENT (a usage error) unless `target` names a GPU the CUDA
// backend compiles for, or when this build has no CUDA backend.
Status CheckPtxTargetName(const std::string& target);

// Writes DIR/STEM.ptx (STEM: the module file's name without its extension),
// creating DIR, and prints one line saying what it wrote to `out`.
Status CompileModule(const CompileArguments& arguments, std::ostream& out);

}  // namespace kiln::tool
