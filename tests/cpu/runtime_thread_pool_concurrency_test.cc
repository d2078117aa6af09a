// The intra-op thread pool's ParallelFor: disjoint ranges that cover the
// extent exactly once, at least `grain` long, on up to num_threads threads
// at a time (the caller among them).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Every test runs on both: the OpenMP runtime's team (where the process has
// one, as builds with oneDNN do) and the pool's own threads.
constexpr bool kOpenMpTeamOrNot[] = {true, false};

TEST(RuntimeThreadPoolTest, RangesCoverTheExtentOnce) {
  for (bool openmp_team : kOpenMpTeamOrNot)
    for (int threads : {1, 2, 3, 8}) {
      IntraOpThreadPool pool(threads, openmp_team);
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
            EXPECT_GE(ranges[r].second - ranges[r].first, std::min(grain, extent))
                << threads << " " << extent;
          }
        }
      }
    }
}

TEST(RuntimeThreadPoolTest, NoMoreThreadsAtOnceThanAskedFor) {
  for (bool openmp_team : kOpenMpTeamOrNot)
    for (int threads : {1, 2, 4}) {
      IntraOpThreadPool pool(threads, openmp_team);
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

}  // namespace
}  // namespace kiln::cpu
