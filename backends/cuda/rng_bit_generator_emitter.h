// rng-bit-generator on the GPU: the random bits XLA's RngBitGeneratorExpander
// gives (Threefry-2x32 or Philox-4x32, laid out as core/rng_bit_layout.h
// says), equal bit for bit to the interpreter's and the cpu backend's. One
// thread per output element: thread i encrypts the counter block element i
// takes (a block shared by up to four elements is encrypted by each of
// them: the encryption is a few dozen integer operations, cheaper than
// sharing through memory), and threads below the state's length write the
// new state.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir.h"
#include "core/status.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::cuda {

// OK when `generator` (a u64[n] state operand, a (u64[n], bits) result with
// integer bits of 8 to 64 bits, an algorithm that suits n) can be emitted;
// UNIMPLEMENTED naming what is wrong otherwise.
Status CheckRngBitGeneratorEmittable(const Instruction& generator);

// Adds `void name(ptr state, ptr new_state, ptr bits, i64 i)`: what thread i
// computes, in target-neutral IR (no GPU intrinsic), so that the same IR can
// be compiled for the host and run there (tests/cuda). Returns the number
// of threads the output needs: max(n, elements of bits).
StatusOr<int64_t> EmitRngBitGeneratorElement(llvm::Module& module, const Instruction& generator,
                                             const std::string& name);

// Adds the GPU entry `name(ptr state, ptr new_state, ptr bits, i64 extent)`,
// thread i running the element function above (inlined). Returns the
// number of threads to launch.
StatusOr<int64_t> EmitRngBitGeneratorKernel(llvm::Module& module, const Instruction& generator,
                                            const std::string& name);

}  // namespace kiln::cuda
