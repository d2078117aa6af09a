// The intra-op thread pool's ParallelFor: disjoint ranges that cover the
// extent exactly once, at least `grain` long, on up to num_threads threads
// at a time (the caller among them); and idle helpers that stop using the
// processor once the loop is done.
#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

int ThreadsInThisProcess() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(tasks)) count += entry->d_name[0] != '.';
  closedir(tasks);
  return count;
}

// Threads start when a loop first splits (the helpers) or an Eigen
// expression first asks for its device (Eigen's own), never with the pool:
// a client that compiles, or runs only loops too small to split, starts
// none, and is created and destroyed without a thread start or join.
TEST(RuntimeThreadPoolTest, ThreadsStartOnlyWhenFirstNeeded) {
  // A thread started and joined first, so that threads a runtime starts
  // with the process's first thread (ThreadSanitizer's) are counted before.
  std::thread([] {}).join();
  const int before = ThreadsInThisProcess();
  ASSERT_GT(before, 0) << "cannot count this process's threads in /proc/self/task";
  {
    IntraOpThreadPool pool(3);
    EXPECT_EQ(ThreadsInThisProcess(), before) << "the pool started threads before any work";
    int64_t covered = 0;
    pool.ParallelFor(100, 1000, [&](int64_t begin, int64_t end) { covered += end - begin; });
    EXPECT_EQ(covered, 100);
    EXPECT_EQ(ThreadsInThisProcess(), before) << "a loop of one range started threads";
    std::atomic<int64_t> split{0};
    pool.ParallelFor(4096, 16, [&](int64_t begin, int64_t end) { split.fetch_add(end - begin); });
    EXPECT_EQ(split.load(), 4096);
    EXPECT_EQ(ThreadsInThisProcess(), before + 2) << "a split loop should start the two helpers";
    EXPECT_EQ(pool.device().numThreads(), 3);
    EXPECT_EQ(ThreadsInThisProcess(), before + 2 + 3) << "Eigen's device should start its three threads";
  }
  // A joined thread's /proc entry can linger for a moment after the join.
  for (int polls = 0; polls < 100 && ThreadsInThisProcess() != before; ++polls) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(ThreadsInThisProcess(), before) << "the pool's threads outlived it";
}

TEST(RuntimeThreadPoolTest, RangesCoverTheExtentOnce) {
  for (int threads : {1, 2, 3, 8}) {
    IntraOpThreadPool pool(threads);
    for (int64_t extent : {0, 1, 7, 64, 1000, 4097}) {
      for (int64_t grain : {1, 3, 100}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(extent));
        std::mutex mutex;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        pool.ParallelFor(extent, grain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
          std::lock_guard<std::mutex> lock(mutex);
          ranges.emplace_back(begin, end);
        });
        for (int64_t i = 0; i < extent; ++i) {
          ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1)
              << threads << " " << extent << " " << grain << " " << i;
        }
        std::sort(ranges.begin(), ranges.end());
        for (size_t r = 0; r + 1 < ranges.size(); ++r) {
          EXPECT_GE(ranges[r].second - ranges[r].first, std::min(grain, extent)) << threads << " " << extent;
        }
      }
    }
  }
}

TEST(RuntimeThreadPoolTest, NoMoreThreadsAtOnceThanAskedFor) {
  for (int threads : {1, 2, 4}) {
    IntraOpThreadPool pool(threads);
    std::atomic<int> running{0}, most{0};
    std::set<std::thread::id> seen;
    std::mutex mutex;
    pool.ParallelFor(64, 1, [&](int64_t, int64_t) {
      const int now = running.fetch_add(1) + 1;
      int previous = most.load();
      while (now > previous && !most.compare_exchange_weak(previous, now)) {
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        seen.insert(std::this_thread::get_id());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      running.fetch_sub(1);
    });
    EXPECT_LE(most.load(), threads);
    EXPECT_LE(static_cast<int>(seen.size()), threads);
  }
}

// CPU time of the whole process (every thread), in seconds.
double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Once a loop is done its helpers spin for at most kSpinBeforeSleeping and
// then block, so over a pause after the loop the process uses next to no
// processor time. A team that busy-waits for milliseconds uses a core per
// helper for that long, which other processes on the machine need: libgomp's
// team, which the pool's loops ran on before, used 4.3 to 8.3 ms of CPU time
// in such a 50 ms pause with two threads on two cores (with more threads
// than cores it spins less). The bound is on CPU time, not elapsed time.
TEST(RuntimeThreadPoolTest, IdleHelpersBlockAfterABoundedSpin) {
  constexpr int kThreads = 2;
  IntraOpThreadPool pool(kThreads);
  std::vector<double> sink(1 << 16, 1.0);
  for (int round = 0; round < 3; ++round) {
    pool.ParallelFor(static_cast<int64_t>(sink.size()), 1024, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sink[static_cast<size_t>(i)] = std::sqrt(sink[static_cast<size_t>(i)] + 1.0);
    });
    const double before = ProcessCpuSeconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double idle = ProcessCpuSeconds() - before;
    EXPECT_LT(idle, 0.002) << "round " << round << ": the process used " << idle * 1e3
                           << " ms of CPU time while its pool had nothing to do";
  }
  // And they are blocked in the kernel by now (polled: on a busy machine a
  // helper may not have had a time slice yet to go to sleep).
  for (int polls = 0; polls < 1000 && pool.sleeping_helpers() != kThreads - 1; ++polls) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(pool.sleeping_helpers(), kThreads - 1);
}

// A loop whose helpers are all busy elsewhere still finishes: the caller
// runs the ranges no helper claimed and waits only for claimed ones. Here a
// first loop holds the only helper until the second loop, on another thread,
// has finished without it.
TEST(RuntimeThreadPoolTest, ACallerDoesNotWaitForAHelperThatIsBusy) {
  IntraOpThreadPool pool(2);
  std::atomic<bool> helper_held{false}, second_done{false};
  std::thread first([&] {
    const std::thread::id caller = std::this_thread::get_id();
    // The caller's ranges wait (up to a minute) for the helper to take one,
    // which it then keeps until the second loop is done.
    pool.ParallelFor(8, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() == caller) {
        for (int polls = 0; polls < 60000 && !helper_held.load(); ++polls) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return;
      }
      if (helper_held.exchange(true)) return;
      while (!second_done.load()) std::this_thread::yield();
    });
  });
  for (int polls = 0; polls < 60000 && !helper_held.load(); ++polls) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (helper_held.load()) {
    std::atomic<int64_t> covered{0};
    pool.ParallelFor(64, 1, [&](int64_t begin, int64_t end) { covered += end - begin; });
    EXPECT_EQ(covered.load(), 64);
  }
  second_done = true;
  first.join();
  EXPECT_TRUE(helper_held.load()) << "the helper never took a range of the first loop";
}

}  // namespace
}  // namespace kiln::cpu
