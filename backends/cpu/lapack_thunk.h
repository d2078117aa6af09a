// A built-in LAPACK custom call (jnp.linalg's lapack_*_ffi targets,
// core/builtin_custom_calls.h) run on the slots themselves: RunLapackCall
// (core/interpreter/lapack_calls.h) gets the operands' and results' buffers,
// so no literal is made, zeroed or copied per call, as the interpreter's
// library thunk would (for a 256x256 f32 Cholesky factorisation those
// copies and their fresh pages cost about as much as OpenBLAS's
// factorisation itself).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/builtin_custom_calls.h"
#include "core/ir.h"

namespace kiln::cpu {

class LapackThunk : public Thunk {
 public:
  // `instruction` (a custom call to `target` that CheckLapackCall accepts)
  // outlives the thunk; `inputs` holds one slot per operand, `outputs` one
  // per array leaf of its result.
  LapackThunk(const BuiltinCustomCall& target, const Instruction& instruction, std::vector<int> inputs,
              std::vector<int> outputs)
      : Thunk(std::move(inputs), std::move(outputs)), target_(target), instruction_(instruction) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "lapack"; }

 private:
  const BuiltinCustomCall& target_;
  const Instruction& instruction_;
};

}  // namespace kiln::cpu
