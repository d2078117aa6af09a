#include "core/runtime/work_queue.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace kiln {
namespace {

class WorkQueue {
 public:
  void Push(std::function<void()> work) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(work));
      // A worker is started whenever every existing one may be busy, up to
      // the limit, so a queue that is never used costs no thread.
      if (static_cast<int>(queue_.size()) > idle_ && workers_ < Limit()) {
        ++workers_;
        std::thread([this] { Work(); }).detach();
      }
    }
    work_arrived_.notify_one();
  }

 private:
  static int Limit() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 8); }

  void Work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ++idle_;
      work_arrived_.wait(lock, [&] { return !queue_.empty(); });
      --idle_;
      std::function<void()> work = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      work();
      work = nullptr;  // destroy what it captured outside the lock
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_arrived_;
  std::deque<std::function<void()>> queue_;
  int workers_ = 0;
  int idle_ = 0;
};

}  // namespace

void RunInBackground(std::function<void()> work) {
  // Never destroyed: detached workers wait on it until the process ends.
  static WorkQueue* queue = new WorkQueue();
  queue->Push(std::move(work));
}

}  // namespace kiln
