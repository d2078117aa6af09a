// The `rng` op on the GPU: element i of one launch is a function of a 64-bit
// key and i (a SplitMix64 counter hash), and the executable gives every
// launch a new key derived from the execution's seed and the launch's
// number, so equal seeds give equal numbers and a loop's iterations
// differ. The distributions are the interpreter's (core/interpreter/rng.cc):
// uniform in [a, b), normal by Box-Muller with mean a and deviation b,
// integers a + (x mod (b - a)); the streams themselves differ.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir.h"
#include "core/status.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

Status CheckRngEmittable(const Instruction& rng);

// Adds `name(ptr a, ptr b, ptr out, i64 extent, i64 key)`; returns the
// number of threads (elements).
StatusOr<int64_t> EmitRngKernel(llvm::Module& module, const Instruction& rng, const std::string& name);

}  // namespace kiln::cuda
