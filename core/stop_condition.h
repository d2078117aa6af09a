// How a running execution is stopped early: a cancellation flag that any
// thread may raise, and a deadline on the monotonic clock. Backends check the
// StopCondition of their ExecuteOptions between steps and at every loop
// back-edge, so that no program (an infinite `while` included) runs on
// without a way out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/status.h"

namespace kiln {

// Raised once, from any thread (also from a signal handler: raising is one
// lock-free atomic store); never lowered.
class CancellationFlag {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
};

class StopCondition {
 public:
  using Clock = std::chrono::steady_clock;

  // Never stops.
  StopCondition() = default;
  // Stops once `flag` (may be null) is raised or `deadline` has passed.
  StopCondition(std::shared_ptr<const CancellationFlag> flag, Clock::time_point deadline)
      : flag_(std::move(flag)), deadline_(deadline) {}

  // Whether Check can ever fail; when not, callers may skip it.
  bool can_stop() const { return flag_ != nullptr || deadline_ != Clock::time_point::max(); }

  // OK while the execution may go on; CANCELLED once the flag is raised,
  // DEADLINE_EXCEEDED once the deadline has passed (cancellation first).
  // Costs an atomic load and, with a deadline, a read of the clock.
  Status Check() const {
    if (!can_stop()) return OkStatus();
    return CheckNow();
  }

 private:
  Status CheckNow() const;

  std::shared_ptr<const CancellationFlag> flag_;
  Clock::time_point deadline_ = Clock::time_point::max();
};

// A stop (CANCELLED or DEADLINE_EXCEEDED) with " in while 'LOOP' after N
// iterations" added, so a user learns which loop ran on; any other status
// unchanged. Nested loops each add theirs.
Status StoppedInLoop(const Status& status, std::string_view loop, int64_t iterations);

}  // namespace kiln
