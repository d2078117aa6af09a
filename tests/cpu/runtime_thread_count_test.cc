// How many threads the CPU backend uses: never more than the library's limit,
// whether asked for through the options or through KILN_NUM_THREADS.
#include <algorithm>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "backends/cpu/thread_pool.h"
#include "core/resource_limits.h"

namespace kiln::cpu {
namespace {

// Sets KILN_NUM_THREADS for one test and restores it after.
class RuntimeThreadCountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("KILN_NUM_THREADS");
    had_value_ = old != nullptr;
    if (had_value_) old_value_ = old;
  }
  void TearDown() override {
    if (had_value_) {
      setenv("KILN_NUM_THREADS", old_value_.c_str(), 1);
    } else {
      unsetenv("KILN_NUM_THREADS");
    }
  }

  bool had_value_ = false;
  std::string old_value_;
};

TEST_F(RuntimeThreadCountTest, RequestedCountsAreKeptUpToTheLimit) {
  EXPECT_EQ(ResolveThreadCount(1), 1);
  EXPECT_EQ(ResolveThreadCount(MaxThreads()), MaxThreads());
  EXPECT_EQ(ResolveThreadCount(100000), MaxThreads());
}

TEST_F(RuntimeThreadCountTest, EnvironmentCountsAreLoweredToTheLimit) {
  setenv("KILN_NUM_THREADS", "3", 1);
  EXPECT_EQ(ResolveThreadCount(0), 3);
  setenv("KILN_NUM_THREADS", "100000", 1);
  EXPECT_EQ(ResolveThreadCount(0), MaxThreads());
  setenv("KILN_NUM_THREADS", "99999999999999999999", 1);
  EXPECT_EQ(ResolveThreadCount(0), MaxThreads());
  unsetenv("KILN_NUM_THREADS");
  EXPECT_EQ(ResolveThreadCount(0), HardwareThreads());
}

TEST(RuntimeThreadLimitTest, DerivedFromTheHardwareWithAFloor) {
  EXPECT_EQ(MaxThreads(), std::max(kMinThreadLimit, kThreadsPerHardwareThread * HardwareThreads()));
  EXPECT_TRUE(CheckThreadCount("f", "n", MaxThreads()).ok());
  const Status above = CheckThreadCount("f", "n", MaxThreads() + int64_t{1});
  EXPECT_EQ(above.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(above.message().find("at most " + std::to_string(MaxThreads()) + " threads"), std::string::npos)
      << above.message();
  EXPECT_EQ(CheckThreadCount("f", "n", -1).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::cpu
