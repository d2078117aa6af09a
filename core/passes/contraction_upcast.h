// Runs f16 and bf16 dots and convolutions in f32: contraction(a, b) of a low
// precision type becomes convert(contraction(convert(a), convert(b)) in f32),
// and one of low-precision operands and an f32 result (JAX's
// preferred_element_type=f32) contraction(convert(a), convert(b)).
// The semantics are the same (Kiln, like XLA, accumulates low-precision
// contractions in f32 and rounds the result once), and a backend then runs
// them on its f32 matrix-multiply and convolution kernels. The converts fuse
// with their neighbours. A convert of the result to f32 reads the f32
// result directly (no rounding through f16/bf16), as on XLA's CPU backend.
#pragma once

#include "core/pass.h"

namespace kiln {

class ContractionUpcast : public Pass {
 public:
  std::string_view name() const override { return "contraction-upcast"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
