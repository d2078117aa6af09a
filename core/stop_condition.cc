#include "core/stop_condition.h"

namespace kiln {

Status StopCondition::CheckNow() const {
  if (flag_ != nullptr && flag_->cancelled()) return Status(StatusCode::kCancelled, "execution cancelled");
  if (deadline_ != Clock::time_point::max() && Clock::now() >= deadline_) {
    return Status(StatusCode::kDeadlineExceeded, "execution ran past its deadline");
  }
  return OkStatus();
}

Status StoppedInLoop(const Status& status, std::string_view loop, int64_t iterations) {
  if (status.code() != StatusCode::kCancelled && status.code() != StatusCode::kDeadlineExceeded)
    return status;
  return Status(status.code(), internal::StrCat(status.message(), " in while '", loop, "' after ", iterations,
                                                " iterations"));
}

}  // namespace kiln
