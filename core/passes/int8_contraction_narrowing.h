// Runs integer dots of widened int8 operands on the int8 operands:
// dot(convert_s32(a_s8), convert_s32(b_s8)) -> s32 becomes dot(a_s8, b_s8)
// -> s32, the form JAX exports for jnp.matmul(a, b,
// preferred_element_type=int32) and the one a backend's int8 kernels take
// (oneDNN's s8 x s8 -> s32 matmul on the CPU backend). The results are the
// same: each product of two s8 values is exact in s32 either way and the sums
// wrap the same. A convert that other instructions also read stays for them.
#pragma once

#include "core/pass.h"

namespace kiln {

class Int8ContractionNarrowing : public Pass {
 public:
  std::string_view name() const override { return "int8-contraction-narrowing"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
