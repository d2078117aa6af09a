#include "backends/cpu/lapack_thunk.h"

#include "core/interpreter/lapack_calls.h"

namespace kiln::cpu {

Status LapackThunk::Run(ExecutionContext& context) const {
  interpreter::LapackBuffers buffers;
  buffers.operands.reserve(inputs_.size());
  for (int slot : inputs_) buffers.operands.push_back(context.slots[slot]);
  buffers.results.reserve(outputs_.size());
  for (int slot : outputs_) buffers.results.push_back(context.slots[slot]);
  return interpreter::RunLapackCall(target_, instruction_, buffers);
}

}  // namespace kiln::cpu
