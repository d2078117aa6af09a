#include "backends/cpu/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "core/resource_limits.h"

namespace kiln::cpu {
namespace {

using Clock = std::chrono::steady_clock;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or IntraOpThreadPool::kSpinBeforeSleeping has passed;
// returns done().
template <typename Done>
bool SpinUntil(Done done) {
  const Clock::time_point give_up = Clock::now() + IntraOpThreadPool::kSpinBeforeSleeping;
  for (int i = 1;; ++i) {
    if (done()) return true;
    CpuRelax();
    if (i % 64 == 0 && Clock::now() >= give_up) return done();
  }
}

// One ParallelFor: ranges [0, count) claimed one at a time by the caller and
// the helpers that join. Shared (not on the caller's stack) so that a helper
// that joins late, after the caller has returned, touches only this.
struct Job {
  const std::function<void(int64_t)>* run = nullptr;  // called only for claimed ranges
  int64_t count = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int32_t> unfinished{0};  // the caller returns once it is 0
  int helpers_left = 0;                // guarded by the team's mutex
};

// Runs ranges of `job` until none is left to claim.
void Work(Job& job) {
  for (int64_t r = job.next.fetch_add(1, std::memory_order_relaxed); r < job.count;
       r = job.next.fetch_add(1, std::memory_order_relaxed)) {
    (*job.run)(r);
    if (job.unfinished.fetch_sub(1, std::memory_order_acq_rel) == 1) job.unfinished.notify_one();
  }
}

}  // namespace

// The helper threads. An idle helper spins on `posted_` for
// kSpinBeforeSleeping, then blocks on it (a futex) until the next job.
class IntraOpThreadPool::Team {
 public:
  explicit Team(int helpers) {
    threads_.reserve(static_cast<size_t>(helpers));
    for (int i = 0; i < helpers; ++i) {
      threads_.emplace_back([this] { HelperLoop(); });
      pthread_setname_np(threads_.back().native_handle(), "kiln-intra-op");
    }
  }

  ~Team() {
    stopping_.store(true, std::memory_order_release);
    posted_.fetch_add(1, std::memory_order_release);
    posted_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

  void Run(int64_t count, int max_helpers, const std::function<void(int64_t)>& run) {
    auto job = std::make_shared<Job>();
    job->run = &run;
    job->count = count;
    job->unfinished.store(static_cast<int32_t>(count), std::memory_order_relaxed);
    job->helpers_left = max_helpers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_.push_back(job);
    }
    posted_.fetch_add(1, std::memory_order_release);
    posted_.notify_all();
    Work(*job);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_.erase(std::find(open_.begin(), open_.end(), job));
    }
    // Wait for the ranges helpers claimed, never for a helper that has not
    // claimed one (it may be waiting for a time slice on a busy core).
    auto finished = [&] { return job->unfinished.load(std::memory_order_acquire) == 0; };
    if (SpinUntil(finished)) return;
    for (int32_t left = job->unfinished.load(std::memory_order_acquire); left != 0;
         left = job->unfinished.load(std::memory_order_acquire)) {
      job->unfinished.wait(left, std::memory_order_acquire);
    }
  }

  int sleeping() const { return sleeping_.load(std::memory_order_relaxed); }

 private:
  void HelperLoop() {
    while (true) {
      const uint32_t seen = posted_.load(std::memory_order_acquire);
      if (stopping_.load(std::memory_order_acquire)) return;
      if (std::shared_ptr<Job> job = Take()) {
        Work(*job);
        continue;
      }
      if (SpinUntil([&] { return posted_.load(std::memory_order_relaxed) != seen; })) continue;
      sleeping_.fetch_add(1, std::memory_order_relaxed);
      posted_.wait(seen, std::memory_order_acquire);
      sleeping_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  // A job with ranges left that may take another helper.
  std::shared_ptr<Job> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::shared_ptr<Job>& job : open_) {
      if (job->helpers_left > 0 && job->next.load(std::memory_order_relaxed) < job->count) {
        --job->helpers_left;
        return job;
      }
    }
    return nullptr;
  }

  std::mutex mutex_;
  std::vector<std::shared_ptr<Job>> open_;  // jobs that helpers may join
  std::atomic<uint32_t> posted_{0};         // bumped for every job (and to stop)
  std::atomic<bool> stopping_{false};
  std::atomic<int> sleeping_{0};
  std::vector<std::thread> threads_;
};

IntraOpThreadPool::IntraOpThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {}

IntraOpThreadPool::~IntraOpThreadPool() {
  device_.reset();
  eigen_pool_.reset();
  delete team_.load(std::memory_order_acquire);
}

IntraOpThreadPool::Team* IntraOpThreadPool::team() const {
  if (num_threads_ <= 1) return nullptr;
  std::call_once(team_started_,
                 [this] { team_.store(new Team(num_threads_ - 1), std::memory_order_release); });
  return team_.load(std::memory_order_acquire);
}

const Eigen::ThreadPoolDevice& IntraOpThreadPool::device() const {
  std::call_once(eigen_started_, [this] {
    eigen_pool_ = std::make_unique<Eigen::ThreadPool>(num_threads_);
    device_ = std::make_unique<Eigen::ThreadPoolDevice>(eigen_pool_.get(), num_threads_);
  });
  return *device_;
}

void IntraOpThreadPool::ParallelFor(int64_t extent, int64_t grain,
                                    const std::function<void(int64_t, int64_t)>& body) const {
  if (extent <= 0) return;
  grain = std::max<int64_t>(1, grain);
  // A few ranges per thread balance uneven ranges without much scheduling,
  // and let the caller take over more of the work when a helper is late.
  const int64_t max_ranges = int64_t{num_threads_} * 4;
  const int64_t ranges = std::min(max_ranges, (extent + grain - 1) / grain);
  if (ranges <= 1 || num_threads_ <= 1) {
    body(0, extent);
    return;
  }
  const int64_t step = (extent + ranges - 1) / ranges;
  const int64_t count = (extent + step - 1) / step;
  const std::function<void(int64_t)> run = [&](int64_t r) {
    const int64_t begin = r * step;
    body(begin, std::min(extent, begin + step));
  };
  // Never more runnable threads than the intra-op thread count: a third one
  // on two cores made every kernel wait for a time slice.
  team()->Run(count, static_cast<int>(std::min<int64_t>(num_threads_ - 1, count - 1)), run);
}

int IntraOpThreadPool::sleeping_helpers() const {
  const Team* team = team_.load(std::memory_order_acquire);
  return team == nullptr ? 0 : team->sleeping();
}

int ResolveThreadCount(int requested) {
  // Callers check requested counts (CheckThreadCount); an environment variable
  // cannot report an error, so a larger one is lowered to the limit.
  if (requested > 0) return std::min(requested, MaxThreads());
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    const long value = std::strtol(env, nullptr, 10);
    if (value > 0) return static_cast<int>(std::min<long>(value, MaxThreads()));
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

}  // namespace kiln::cpu
