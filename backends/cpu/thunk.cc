#include "backends/cpu/thunk.h"

#include "backends/cpu/thunk_profile.h"

namespace kiln::cpu {

Status ThunkSequence::Run(ExecutionContext& context) const {
  if (ThunkProfilingEnabled()) return RunProfiled(*this, context);
  for (const auto& thunk : thunks) KILN_RETURN_IF_ERROR(thunk->Run(context));
  return OkStatus();
}

}  // namespace kiln::cpu
