#include "backends/cpu/thunk.h"

#include "backends/cpu/thunk_profile.h"

namespace kiln::cpu {

Status ThunkSequence::Run(ExecutionContext& context) const {
  if (ThunkProfilingEnabled()) return RunProfiled(*this, context);
  const StopCondition& stop = *context.stop;
  if (!stop.can_stop()) {
    for (const auto& thunk : thunks) KILN_RETURN_IF_ERROR(thunk->Run(context));
    return OkStatus();
  }
  for (const auto& thunk : thunks) {
    KILN_RETURN_IF_ERROR(stop.Check());
    KILN_RETURN_IF_ERROR(thunk->Run(context));
  }
  return OkStatus();
}

}  // namespace kiln::cpu
