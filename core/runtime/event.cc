#include "core/runtime/event.h"

#include <atomic>
#include <utility>

namespace kiln {

Event Event::Ready(Status status) {
  Promise promise;
  Event event = promise.event();
  promise.Set(std::move(status));
  return event;
}

bool Event::IsReady() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->ready;
}

Status Event::Await() const {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->ready_changed.wait(lock, [&] { return state_->ready; });
  return state_->status;
}

void Event::OnReady(Callback callback) const {
  Status status;
  {
    const std::lock_guard<std::mutex> lock(state_->mutex);
    if (!state_->ready) {
      state_->callbacks.push_back(std::move(callback));
      return;
    }
    status = state_->status;
  }
  callback(status);
}

Promise::Promise() : state_(std::make_shared<Event::State>()) {}

Promise::~Promise() {
  if (state_ != nullptr) Set(Internal("the work behind this event ended without reporting its outcome"));
}

void Promise::Set(Status status) {
  // A waiter may destroy this Promise as soon as it sees the event ready, so
  // after the lock is released only this local reference is touched: it keeps
  // the condition variable alive through notify_all and the callbacks.
  const std::shared_ptr<Event::State> state = state_;
  std::vector<Event::Callback> callbacks;
  {
    const std::lock_guard<std::mutex> lock(state->mutex);
    if (state->ready) return;
    state->ready = true;
    state->status = std::move(status);
    callbacks.swap(state->callbacks);
  }
  state->ready_changed.notify_all();
  // The status is final once ready, so callbacks read it without the lock.
  for (Event::Callback& callback : callbacks) callback(state->status);
}

Event AllReady(const std::vector<Event>& events) {
  if (events.empty()) return Event::Ready();
  // Shared by the callbacks; the last one to run sets the promise.
  struct Join {
    explicit Join(size_t count) : pending(count), outcomes(count) {}
    Promise promise;
    std::atomic<size_t> pending;
    std::vector<Status> outcomes;  // each written by its own callback only
  };
  auto join = std::make_shared<Join>(events.size());
  Event all = join->promise.event();
  for (size_t i = 0; i < events.size(); ++i) {
    events[i].OnReady([join, i](const Status& status) {
      join->outcomes[i] = status;
      if (join->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      for (const Status& outcome : join->outcomes) {
        if (!outcome.ok()) {
          join->promise.Set(outcome);
          return;
        }
      }
      join->promise.Set(OkStatus());
    });
  }
  return all;
}

}  // namespace kiln
