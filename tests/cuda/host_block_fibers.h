// A GPU block played on one host thread: each GPU thread of the block is
// a cooperative fiber (ucontext, a stack of its own) that runs until it
// meets the others at a meeting point (a block barrier, a warp's shuffle)
// or returns. The fibers take turns on the calling thread, so a barrier
// costs a few context switches however busy the machine is, where a host
// thread per GPU thread needed every one of them scheduled at once.
//
// A meeting point is for a fixed set of parties: a fiber that arrives
// parks until all of them have arrived, then all go on. When no fiber can
// run and some are parked (the others returned, or wait at another
// meeting point) the block can never finish: Run returns INTERNAL saying
// who waits where, and abandons the parked fibers, where a GPU would hang
// or give undefined results.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace kiln::cuda_test {

// Where a fixed number of fibers meet; used by one FiberBlock at a time.
struct FiberMeeting {
  FiberMeeting(std::string name, int parties) : name(std::move(name)), parties(parties) {}
  std::string name;  // what the error of a block that cannot finish calls it
  int parties;
  int arrived = 0;
  uint64_t round = 0;  // how many times every party arrived
};

class FiberBlock {
 public:
  // A block of `fibers` fibers (Run refuses fewer than 1); their stacks
  // (256 KiB each) come from a pool of the calling thread's and go back
  // to it with the block.
  explicit FiberBlock(int fibers);
  ~FiberBlock();
  FiberBlock(const FiberBlock&) = delete;
  FiberBlock& operator=(const FiberBlock&) = delete;

  // Runs body(i) as fiber i, for every i, on the calling thread until all
  // returned; once per block. INTERNAL when parked fibers can never go on.
  Status Run(std::function<void(int fiber)> body);

  // From inside a fiber of the running block: parks it until all of
  // `meeting`'s parties have arrived.
  void Meet(FiberMeeting& meeting);

 private:
  struct Fiber;
  struct Scheduler;
  static void EnterFiber();
  bool Runnable(int fiber) const;
  // Leaves the running fiber (parked, or returning) for the next one that
  // can run, or for the scheduler in Run when none can.
  void SwitchAway(bool returning);
  Status CannotFinish() const;

  std::vector<Fiber> fibers_;
  std::unique_ptr<Scheduler> scheduler_;
  std::function<void(int)> body_;
  int current_ = -1;
  bool ran_ = false;
};

}  // namespace kiln::cuda_test
