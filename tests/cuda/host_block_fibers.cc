#include "tests/cuda/host_block_fibers.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <utility>

// AddressSanitizer keeps its own idea of the running stack: each switch
// is announced to it, or it takes the fibers' frames for overflows.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_FIBERS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_FIBERS_UNDER_ASAN 1
#endif
#endif
#ifdef KILN_FIBERS_UNDER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kiln::cuda_test {
namespace {

// The JIT-compiled kernels keep their locals on the stack unoptimised
// (the emitted IR's allocas), and a failing check runs gtest's reporting
// there: 256 KiB is far more than either needs, and only the pages a
// fiber touches are ever backed by memory.
constexpr size_t kFiberStackBytes = size_t{256} << 10;

size_t FiberPageBytes() {
  static const size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

}  // namespace

// Not in the unnamed namespace: FiberBlock::Fiber holds one, and GCC
// warns of a member whose type has internal linkage when this file is
// compiled inside another (CI's unity batches).
namespace host_fibers_internal {

// A fiber's stack: kFiberStackBytes above an inaccessible guard page, so
// an overflow faults at once instead of writing over another stack.
class FiberStack {
 public:
  FiberStack() {
    const size_t mapped = kFiberStackBytes + FiberPageBytes();
    void* memory = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED || mprotect(memory, FiberPageBytes(), PROT_NONE) != 0) {
      std::cerr << "host_block_fibers: cannot map a fiber stack of " << mapped
                << " bytes: " << std::strerror(errno) << "\n";
      std::abort();
    }
    mapping_ = static_cast<char*>(memory);
  }
  ~FiberStack() {
    if (mapping_ != nullptr) munmap(mapping_, kFiberStackBytes + FiberPageBytes());
  }
  FiberStack(FiberStack&& other) noexcept : mapping_(std::exchange(other.mapping_, nullptr)) {}
  FiberStack& operator=(FiberStack&&) = delete;

  char* bottom() const { return mapping_ + FiberPageBytes(); }

 private:
  char* mapping_ = nullptr;
};

}  // namespace host_fibers_internal

namespace {

using host_fibers_internal::FiberStack;

// Stacks outlive their blocks: a test runs thousands of blocks, and
// mapping 256 stacks for each costs more than running it.
thread_local std::vector<FiberStack> spare_fiber_stacks;
thread_local FiberBlock* running_fiber_block = nullptr;

// "threads 0, 2-31": ascending numbers as runs.
std::string FiberNumberRanges(const std::vector<int>& numbers) {
  std::ostringstream text;
  text << (numbers.size() == 1 ? "thread " : "threads ");
  for (size_t first = 0; first < numbers.size();) {
    size_t last = first;
    while (last + 1 < numbers.size() && numbers[last + 1] == numbers[last] + 1) ++last;
    text << (first > 0 ? ", " : "") << numbers[first];
    if (last > first) text << "-" << numbers[last];
    first = last + 1;
  }
  return text.str();
}

}  // namespace

struct FiberBlock::Fiber {
  FiberStack stack;
  ucontext_t context{};
  const FiberMeeting* parked_at = nullptr;  // null: runnable (or returned)
  uint64_t parked_round = 0;
  bool returned = false;
#ifdef KILN_FIBERS_UNDER_ASAN
  void* fake_stack = nullptr;  // ASan's frames of the parked fiber
#endif
};

struct FiberBlock::Scheduler {
  ucontext_t context{};
#ifdef KILN_FIBERS_UNDER_ASAN
  const void* stack_bottom = nullptr;
  size_t stack_bytes = 0;
#endif
};

FiberBlock::FiberBlock(int fibers) : scheduler_(std::make_unique<Scheduler>()) {
  fibers_.reserve(static_cast<size_t>(fibers < 0 ? 0 : fibers));
  for (int i = 0; i < fibers; ++i) {
    if (spare_fiber_stacks.empty()) {
      fibers_.push_back(Fiber{FiberStack()});
    } else {
      fibers_.push_back(Fiber{std::move(spare_fiber_stacks.back())});
      spare_fiber_stacks.pop_back();
    }
  }
}

FiberBlock::~FiberBlock() {
  for (Fiber& fiber : fibers_) {
#ifdef KILN_FIBERS_UNDER_ASAN
    // A fiber's last frames (and every frame of an abandoned one) left
    // their redzones poisoned: the next block's fibers start clean.
    ASAN_UNPOISON_MEMORY_REGION(fiber.stack.bottom(), kFiberStackBytes);
#endif
    spare_fiber_stacks.push_back(std::move(fiber.stack));
  }
}

void FiberBlock::EnterFiber() {
  FiberBlock* block = running_fiber_block;
#ifdef KILN_FIBERS_UNDER_ASAN
  // The first fiber is entered from the scheduler, whose stack the fibers
  // switch back to at the end; the others from another fiber.
  const void* from_bottom = nullptr;
  size_t from_bytes = 0;
  __sanitizer_finish_switch_fiber(nullptr, &from_bottom, &from_bytes);
  if (block->scheduler_->stack_bottom == nullptr) {
    block->scheduler_->stack_bottom = from_bottom;
    block->scheduler_->stack_bytes = from_bytes;
  }
#endif
  const int fiber = block->current_;
  block->body_(fiber);
  block->fibers_[static_cast<size_t>(fiber)].returned = true;
  block->SwitchAway(/*returning=*/true);
  // Never resumed: no fiber switches to one that returned.
  std::abort();
}

bool FiberBlock::Runnable(int index) const {
  const Fiber& fiber = fibers_[static_cast<size_t>(index)];
  return !fiber.returned && (fiber.parked_at == nullptr || fiber.parked_at->round != fiber.parked_round);
}

void FiberBlock::SwitchAway(bool returning) {
  const int from = current_;
  Fiber& fiber = fibers_[static_cast<size_t>(from)];
  // The next runnable fiber after this one, round the block; the
  // scheduler when there is none (every fiber returned, or the block
  // cannot finish). Switching fiber to fiber halves the switches.
  const int count = static_cast<int>(fibers_.size());
  int next = -1;
  for (int step = 1; step <= count && next < 0; ++step) {
    if (Runnable((from + step) % count)) next = (from + step) % count;
  }
  ucontext_t* target = &scheduler_->context;
#ifdef KILN_FIBERS_UNDER_ASAN
  const void* target_bottom = scheduler_->stack_bottom;
  size_t target_bytes = scheduler_->stack_bytes;
#endif
  if (next >= 0) {
    Fiber& resumed = fibers_[static_cast<size_t>(next)];
    resumed.parked_at = nullptr;
    target = &resumed.context;
#ifdef KILN_FIBERS_UNDER_ASAN
    target_bottom = resumed.stack.bottom();
    target_bytes = kFiberStackBytes;
#endif
  }
  current_ = next;
#ifdef KILN_FIBERS_UNDER_ASAN
  // A returning fiber's fake frames go with it (null keeps none).
  __sanitizer_start_switch_fiber(returning ? nullptr : &fiber.fake_stack, target_bottom, target_bytes);
#else
  (void)returning;
#endif
  swapcontext(&fiber.context, target);
  // Resumed by a fiber that set current_ to this one.
#ifdef KILN_FIBERS_UNDER_ASAN
  __sanitizer_finish_switch_fiber(fiber.fake_stack, nullptr, nullptr);
#endif
}

void FiberBlock::Meet(FiberMeeting& meeting) {
  if (running_fiber_block != this || current_ < 0) {
    std::cerr << "FiberBlock::Meet(" << meeting.name << ") outside a fiber of its block\n";
    std::abort();
  }
  if (++meeting.arrived == meeting.parties) {
    // The last party releases the others and goes on at once.
    meeting.arrived = 0;
    ++meeting.round;
    return;
  }
  Fiber& fiber = fibers_[static_cast<size_t>(current_)];
  fiber.parked_at = &meeting;
  fiber.parked_round = meeting.round;
  SwitchAway(/*returning=*/false);
}

Status FiberBlock::Run(std::function<void(int)> body) {
  if (ran_) return Internal("a FiberBlock runs once");
  if (running_fiber_block != nullptr) return Internal("a FiberBlock run inside another's fiber");
  if (fibers_.empty()) return Internal("a FiberBlock of no fibers");
  ran_ = true;
  body_ = std::move(body);
  for (Fiber& fiber : fibers_) {
    if (getcontext(&fiber.context) != 0) return Internal("getcontext: ", std::strerror(errno));
    fiber.context.uc_stack.ss_sp = fiber.stack.bottom();
    fiber.context.uc_stack.ss_size = kFiberStackBytes;
    fiber.context.uc_link = nullptr;  // EnterFiber never returns
    makecontext(&fiber.context, &FiberBlock::EnterFiber, 0);
    // Only makecontext reads uc_stack; AddressSanitizer's swapcontext
    // clears the shadow of the stack named there at every switch (32 KiB
    // a switch, most of a run's time, and the parked frames' redzones
    // with it). The destructor unpoisons each stack once instead.
    fiber.context.uc_stack = stack_t{};
  }
  // Fiber 0 starts; the fibers pass the thread on among themselves, and
  // it comes back here when none of them can run.
  running_fiber_block = this;
  current_ = 0;
#ifdef KILN_FIBERS_UNDER_ASAN
  void* scheduler_fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&scheduler_fake_stack, fibers_[0].stack.bottom(), kFiberStackBytes);
#endif
  swapcontext(&scheduler_->context, &fibers_[0].context);
#ifdef KILN_FIBERS_UNDER_ASAN
  __sanitizer_finish_switch_fiber(scheduler_fake_stack, nullptr, nullptr);
#endif
  running_fiber_block = nullptr;
  current_ = -1;
  for (const Fiber& fiber : fibers_) {
    if (!fiber.returned) return CannotFinish();
  }
  return OkStatus();
}

Status FiberBlock::CannotFinish() const {
  // The parked fibers' numbers by meeting point, in the order of their first.
  std::map<const FiberMeeting*, std::vector<int>> parked;
  std::vector<const FiberMeeting*> order;
  int returned = 0;
  for (size_t i = 0; i < fibers_.size(); ++i) {
    const Fiber& fiber = fibers_[i];
    if (fiber.returned) {
      ++returned;
      continue;
    }
    auto [where, added] = parked.try_emplace(fiber.parked_at);
    if (added) order.push_back(fiber.parked_at);
    where->second.push_back(static_cast<int>(i));
  }
  std::ostringstream waits;
  for (const FiberMeeting* meeting : order) {
    const std::vector<int>& threads = parked.at(meeting);
    waits << threads.size() << " of the " << meeting->parties << " threads of " << meeting->name
          << " wait there (" << FiberNumberRanges(threads) << "); ";
  }
  return Internal(
      "a block of ", fibers_.size(), " threads can never finish: ", waits.str(), returned,
      " returned (a barrier or shuffle that not every thread reaches, or threads at different ones)");
}

}  // namespace kiln::cuda_test
