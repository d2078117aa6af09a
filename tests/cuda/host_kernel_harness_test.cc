// The host kernel harness (host_kernel_harness.h) plays a block's
// barriers and warp shuffles as a GPU does, and a block whose threads
// cannot all finish (some returned, or wait at another meeting point)
// fails RunBlock with a message saying who waits where, instead of hanging.
// The kernels are hand-written IR that calls the NVVM intrinsics the cuda
// backend emits.
#include "tests/cuda/host_kernel_harness.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "tests/cuda/host_block_fibers.h"

namespace kiln {
namespace {

constexpr char kNvvmDeclarations[] = R"(
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
)";

// rotate(ptr shared, ptr out, i32 rounds): each thread starts with its
// number and, `rounds` times, leaves its value in shared[t], meets the
// block, takes shared[(t + 1) % n] and meets the block again; out[t] is
// then (t + rounds) % n. A barrier that let a thread on early would have
// it read a slot not yet written this round.
constexpr char kRotate[] = R"(
define void @rotate(ptr %shared, ptr %out, i32 %rounds) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t64 = zext i32 %t to i64
  %mine = getelementptr i32, ptr %shared, i64 %t64
  %t1 = add i32 %t, 1
  %right = urem i32 %t1, %n
  %right64 = zext i32 %right to i64
  %theirs = getelementptr i32, ptr %shared, i64 %right64
  %any = icmp sgt i32 %rounds, 0
  br i1 %any, label %round, label %done
round:
  %r = phi i32 [ 0, %entry ], [ %r1, %round ]
  %v = phi i32 [ %t, %entry ], [ %taken, %round ]
  store i32 %v, ptr %mine
  call void @llvm.nvvm.barrier0()
  %taken = load i32, ptr %theirs
  call void @llvm.nvvm.barrier0()
  %r1 = add i32 %r, 1
  %more = icmp slt i32 %r1, %rounds
  br i1 %more, label %round, label %done
done:
  %result = phi i32 [ %t, %entry ], [ %taken, %round ]
  %slot = getelementptr i32, ptr %out, i64 %t64
  store i32 %result, ptr %slot
  ret void
}
)";

// warp_sum(ptr out): a butterfly over each warp of 32: out[t] is the sum
// of its warp's thread numbers; out2[t] the number of its lane ^ 1.
constexpr char kWarpSum[] = R"(
define void @warp_sum(ptr %out, ptr %out2) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %t, i32 1, i32 31)
  %a16 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %t, i32 16, i32 31)
  %s16 = add i32 %t, %a16
  %a8 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %s16, i32 8, i32 31)
  %s8 = add i32 %s16, %a8
  %a4 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %s8, i32 4, i32 31)
  %s4 = add i32 %s8, %a4
  %a2 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %s4, i32 2, i32 31)
  %s2 = add i32 %s4, %a2
  %a1 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %s2, i32 1, i32 31)
  %s1 = add i32 %s2, %a1
  %t64 = zext i32 %t to i64
  %slot = getelementptr i32, ptr %out, i64 %t64
  store i32 %s1, ptr %slot
  %slot2 = getelementptr i32, ptr %out2, i64 %t64
  store i32 %p, ptr %slot2
  ret void
}
)";

// Thread `skipper` returns at once; the others meet at a barrier.
constexpr char kOneSkipsTheBarrier[] = R"(
define void @one_skips_the_barrier(i32 %skipper) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %skips = icmp eq i32 %t, %skipper
  br i1 %skips, label %done, label %meet
meet:
  call void @llvm.nvvm.barrier0()
  br label %done
done:
  ret void
}
)";

// Thread `skipper` returns at once; the others shuffle with lane ^ 1.
constexpr char kOneSkipsTheShuffle[] = R"(
define void @one_skips_the_shuffle(i32 %skipper) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %skips = icmp eq i32 %t, %skipper
  br i1 %skips, label %done, label %meet
meet:
  %p = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %t, i32 1, i32 31)
  br label %done
done:
  ret void
}
)";

// Threads below 16 meet at the block barrier, the others shuffle.
constexpr char kBarrierAndShuffle[] = R"(
define void @barrier_and_shuffle() {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %low = icmp ult i32 %t, 16
  br i1 %low, label %barrier, label %shuffle
barrier:
  call void @llvm.nvvm.barrier0()
  ret void
shuffle:
  %p = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %t, i32 1, i32 31)
  ret void
}
)";

std::unique_ptr<cuda_test::HostKernels> CompileKernels() {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic problem;
  const std::string text = std::string(kNvvmDeclarations) + kRotate + kWarpSum + kOneSkipsTheBarrier +
                           kOneSkipsTheShuffle + kBarrierAndShuffle;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(text, problem, *context);
  if (module == nullptr) {
    std::string message;
    llvm::raw_string_ostream out(message);
    problem.print("host_kernel_harness_test", out);
    ADD_FAILURE() << message;
    return nullptr;
  }
  auto kernels = cuda_test::HostKernels::Compile(
      std::move(context), std::move(module),
      {"rotate", "warp_sum", "one_skips_the_barrier", "one_skips_the_shuffle", "barrier_and_shuffle"});
  if (!kernels.ok()) {
    ADD_FAILURE() << kernels.status().ToString();
    return nullptr;
  }
  return std::move(kernels).value();
}

uint64_t Word(void* pointer) { return reinterpret_cast<uint64_t>(pointer); }

::testing::AssertionResult HarnessStatusIsOk(const Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << status.ToString();
}

class HostKernelHarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels_ = CompileKernels();
    ASSERT_NE(kernels_, nullptr);
  }
  Status RunTogether(const std::string& entry, const std::vector<uint64_t>& arguments, int threads,
                     int64_t block = 0) {
    return kernels_->RunBlock(entry, arguments, block, threads, cuda_test::BlockThreads::kTogether);
  }
  std::unique_ptr<cuda_test::HostKernels> kernels_;
};

TEST_F(HostKernelHarnessTest, BarriersHoldEveryThreadUntilTheBlockArrives) {
  // Whole warps and a last warp of 8; one round, several, and none.
  for (int threads : {256, 40, 1}) {
    for (int rounds : {1, 3, 0}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(rounds) + " rounds");
      std::vector<int32_t> shared(static_cast<size_t>(threads), -1);
      std::vector<int32_t> out(static_cast<size_t>(threads), -1);
      ASSERT_TRUE(HarnessStatusIsOk(RunTogether(
          "rotate", {Word(shared.data()), Word(out.data()), static_cast<uint64_t>(rounds)}, threads)));
      for (int t = 0; t < threads; ++t) EXPECT_EQ(out[static_cast<size_t>(t)], (t + rounds) % threads) << t;
    }
  }
}

TEST_F(HostKernelHarnessTest, ShufflesExchangeWithinEachWarp) {
  constexpr int kThreads = 96;
  std::vector<int32_t> sums(kThreads, -1), partners(kThreads, -1);
  ASSERT_TRUE(
      HarnessStatusIsOk(RunTogether("warp_sum", {Word(sums.data()), Word(partners.data())}, kThreads)));
  for (int t = 0; t < kThreads; ++t) {
    const int first = t / 32 * 32;
    EXPECT_EQ(sums[static_cast<size_t>(t)], 32 * first + 31 * 32 / 2) << t;
    EXPECT_EQ(partners[static_cast<size_t>(t)], t ^ 1) << t;
  }
}

TEST_F(HostKernelHarnessTest, BarrierThatAThreadSkipsFailsTheBlock) {
  const Status status = RunTogether("one_skips_the_barrier", {5}, 64, /*block=*/3);
  ASSERT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  EXPECT_EQ(
      status.message(),
      "kernel one_skips_the_barrier, block 3: a block of 64 threads can never finish: 63 of the 64 threads "
      "of the block barrier wait there (threads 0-4, 6-63); 1 returned (a barrier or shuffle that not every "
      "thread reaches, or threads at different ones)");
  // No thread skips: the block finishes.
  ASSERT_TRUE(HarnessStatusIsOk(RunTogether("one_skips_the_barrier", {64}, 64)));
}

TEST_F(HostKernelHarnessTest, ShuffleThatALaneSkipsFailsTheBlock) {
  const Status status = RunTogether("one_skips_the_shuffle", {33}, 64);
  ASSERT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  // Warp 0 shuffled and returned.
  EXPECT_NE(status.message().find(
                "31 of the 32 threads of warp 1's shuffle wait there (threads 32, 34-63); 33 returned"),
            std::string::npos)
      << status.message();
  ASSERT_TRUE(HarnessStatusIsOk(RunTogether("one_skips_the_shuffle", {64}, 64)));
}

TEST_F(HostKernelHarnessTest, ThreadsAtDifferentMeetingPointsFailTheBlock) {
  const Status status = RunTogether("barrier_and_shuffle", {}, 32);
  ASSERT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  EXPECT_NE(
      status.message().find("16 of the 32 threads of the block barrier wait there (threads 0-15); 16 of the "
                            "32 threads of warp 0's shuffle wait there (threads 16-31); 0 returned"),
      std::string::npos)
      << status.message();
}

TEST_F(HostKernelHarnessTest, AFailedBlockLeavesTheNextOneWhole) {
  // The abandoned fibers' stacks serve the next block.
  EXPECT_EQ(RunTogether("one_skips_the_barrier", {0}, 256).code(), StatusCode::kInternal);
  std::vector<int32_t> shared(256, -1), out(256, -1);
  ASSERT_TRUE(HarnessStatusIsOk(RunTogether("rotate", {Word(shared.data()), Word(out.data()), 2}, 256)));
  for (int t = 0; t < 256; ++t) EXPECT_EQ(out[static_cast<size_t>(t)], (t + 2) % 256) << t;
}

TEST_F(HostKernelHarnessTest, BarrierInThreadsRunOneAfterAnotherIsATestFailure) {
  const std::vector<uint64_t> no_skipper = {99};
  EXPECT_NONFATAL_FAILURE(
      {
        const Status status = kernels_->RunBlock("one_skips_the_barrier", no_skipper, 0, 1,
                                                 cuda_test::BlockThreads::kOneAfterAnother);
        EXPECT_TRUE(status.ok()) << status.ToString();
      },
      "a block barrier in a kernel whose threads run one after another");
}

TEST(FiberBlockTest, ABlockOfNoFibersOrRunTwiceIsRefused) {
  cuda_test::FiberBlock empty(0);
  const Status none = empty.Run([](int) {});
  EXPECT_EQ(none.code(), StatusCode::kInternal);
  EXPECT_EQ(none.message(), "a FiberBlock of no fibers");

  cuda_test::FiberBlock block(3);
  cuda_test::FiberMeeting meeting("the meeting", 3);
  std::vector<int> order;
  ASSERT_TRUE(HarnessStatusIsOk(block.Run([&](int fiber) {
    order.push_back(fiber);
    block.Meet(meeting);
    order.push_back(10 + fiber);
  })));
  // Every fiber arrives before any leaves.
  ASSERT_EQ(order.size(), 6u);
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(order[i], 10) << i;
  for (size_t i = 3; i < 6; ++i) EXPECT_GE(order[i], 10) << i;
  const Status again = block.Run([](int) {});
  EXPECT_EQ(again.code(), StatusCode::kInternal);
  EXPECT_EQ(again.message(), "a FiberBlock runs once");
}

}  // namespace
}  // namespace kiln
