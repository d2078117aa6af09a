// Custom calls that only annotate a program for XLA's partitioner or memory
// placement: JAX emits them for `with_sharding_constraint`, `shard_map` and
// memory-kind transfers, and on one device XLA treats each as its operand.
// Kiln runs programs on one device, so it does the same: the optimisation
// pipeline forwards them (IdentityCustomCallRemoval) and the interpreter
// returns the operand. One whose result differs from its operand (a real
// multi-device partitioning) is refused at compile time.
#pragma once

#include <string_view>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

// Whether `target` is one of the annotation targets.
bool IsIdentityCustomCall(std::string_view target);

// OK when `instruction` (an annotation custom call) has one operand of its
// own shape; UNIMPLEMENTED naming the instruction, target and `backend`
// otherwise.
Status CheckIdentityCustomCall(const Instruction& instruction, std::string_view backend);

}  // namespace kiln
