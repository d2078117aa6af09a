// One-shot completion of work that runs in the background (an asynchronous
// execution, the filling of a buffer): it becomes ready once, with OK or the
// work's error. Copies share one state, so the producer keeps a Promise and
// hands Events to whoever waits; either may outlive the other.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/status.h"

namespace kiln {

class Event {
 public:
  using Callback = std::function<void(const Status&)>;

  // An event that is ready already, with `status`.
  static Event Ready(Status status = OkStatus());

  bool IsReady() const;
  // Blocks until ready; returns the outcome.
  Status Await() const;
  // Runs `callback` once with the outcome: now, on this thread, when the event
  // is ready, else on the thread that makes it ready.
  void OnReady(Callback callback) const;

 private:
  friend class Promise;
  struct State {
    mutable std::mutex mutex;
    std::condition_variable ready_changed;
    bool ready = false;
    Status status;
    std::vector<Callback> callbacks;
  };
  explicit Event(std::shared_ptr<State> state) : state_(std::move(state)) {}

  std::shared_ptr<State> state_;
};

// The producer's side of an Event. Set it once; a Promise dropped without
// being set makes its event ready with INTERNAL, so no waiter hangs.
class Promise {
 public:
  Promise();
  ~Promise();
  Promise(Promise&&) noexcept = default;
  Promise& operator=(Promise&&) noexcept = delete;
  Promise(const Promise&) = delete;
  Promise& operator=(const Promise&) = delete;

  Event event() const { return Event(state_); }
  // Makes the event ready and runs its callbacks on this thread. Later calls
  // do nothing.
  void Set(Status status);

 private:
  std::shared_ptr<Event::State> state_;
};

// An event that becomes ready when all of `events` are: with OK, or with the
// first error among them (in their order).
Event AllReady(const std::vector<Event>& events);

}  // namespace kiln
