// Runs f16 and bf16 dots and convolutions in f32: contraction(a, b) of a low
// precision type becomes convert(contraction(convert(a), convert(b)) in f32),
// and one of low-precision operands and an f32 result (JAX's
// preferred_element_type=f32) contraction(convert(a), convert(b)).
// The semantics are the same (Kiln, like XLA, accumulates low-precision
// contractions in f32 and rounds the result once), and a backend then runs
// them on its f32 matrix-multiply and convolution kernels. This is what XLA's
// CPU backend does: jaxlib 0.10.2 compiles jnp.matmul of two f16 (or bf16)
// arrays to a convert of each operand to f32, an f32 dot and one convert of
// the result back (its compiled HLO, checked on 2026-11-27), so a result here
// is the f32 product rounded once to f16/bf16, within half an f16/bf16 unit
// in the last place of the f32 sum. The converts fuse with their neighbours.
// On the CPU backend a widened operand is a separate pass over memory, as on
// XLA's: for bf16 x bf16 -> f32 1024^3 the two converts took 1.7-3.7 ms of a
// 20-31 ms run on two threads (JAX 41-50 ms, same busy 2-core AVX-512 BF16
// machine).
//
// An s8 x s8 -> s32 convolution of at most 1024 products per output runs in
// f32 too, exactly (every partial sum is an integer within 2^24), and
// converts back to s32; a deeper one (ungrouped) runs as several such
// convolutions over pieces of its input features whose s32 results are
// added. int8 dots stay in int8 for the backend (see
// int8_contraction_narrowing.h).
//
// A convert of the result to f32 reads the f32 result directly (no rounding
// through f16/bf16), as on XLA's CPU backend.
//
// A backend with fast kernels for some low-precision contractions (the CPU's
// bf16 dots on AVX512-BF16, backends/cpu/dot_thunk.h) keeps their operands
// as they are: it is asked about each contraction in its f32-result form
// (low-precision operands, f32 result); one it keeps becomes that form, with
// a low-precision result converted from it as above.
#pragma once

#include <functional>
#include <utility>

#include "core/pass.h"

namespace kiln {

class ContractionUpcast : public Pass {
 public:
  // Whether the backend runs `contraction` (f16/bf16 operands, f32 result;
  // not yet in a computation) with its operands as they are.
  using KeepsOperands = std::function<bool(const Instruction& contraction)>;

  explicit ContractionUpcast(KeepsOperands keeps_operands = {})
      : keeps_operands_(std::move(keeps_operands)) {}
  std::string_view name() const override { return "contraction-upcast"; }
  StatusOr<bool> Run(Module& module) override;

 private:
  KeepsOperands keeps_operands_;
};

}  // namespace kiln
