// Process-wide pieces every oneDNN primitive of this backend shares: the CPU
// engine, a stream per thread, 64-byte aligned per-thread scratch memory, and
// a guard that makes oneDNN's OpenMP runtime use Kiln's thread count.
//
// Threading (checked on Debian 12's libdnnl 2.6.3): dnnl_config.h says
// DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP and libdnnl.so.2 links
// libgomp. A primitive takes its thread count from omp_get_max_threads() of
// the thread that creates it and keeps it: a 1024^3 matmul created under one
// thread ran at one-thread speed (9.8 ms) when executed under two; created
// and executed under two it took 5.0 ms, created under two and executed under
// one 10.1 ms. So a primitive belongs to one thread count, and both creation
// and execution run under OmpThreadsScope with that count. The build has no
// threadpool interop (that needs DNNL_CPU_RUNTIME == THREADPOOL), so Kiln's
// own pool cannot be handed in; its threads wait while oneDNN's OpenMP team
// (the calling thread and count - 1 libgomp threads) runs.
#pragma once

#ifdef KILN_HAVE_DNNL

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/status.h"

namespace kiln::cpu::onednn {

// Below this many multiply-adds (about 40 us of one AVX-512 core) a
// primitive runs on the calling thread alone, where one oneDNN thread already
// beats two Eigen threads (128^3: 18 vs 37 us best). Above it the backend's
// threads share the work: 256^3 takes 147 us median on two threads, 288 us
// on one; 512^3 takes 0.55 ms on two threads, 1.08 ms on one, 1.14 ms with
// Eigen (2-core machine).
// Caveat, measured: oneDNN splits work statically among its OpenMP team and
// libgomp's threads spin while they wait, so when other processes keep every
// core busy a parallel region can stall for whole scheduler ticks (512^3 then
// took 4 or 8 ms where Eigen, whose waiting threads sleep, took 2.3 ms).
// OMP_WAIT_POLICY=passive (read when libgomp loads) avoids the stalls but
// made two-thread 512^3 as slow as one thread.
constexpr int64_t kParallelMultiplyAdds = int64_t{1} << 23;

// The threads a primitive doing `multiply_adds` uses out of `pool_threads`.
inline int ThreadsFor(int64_t multiply_adds, int pool_threads) {
  return multiply_adds < kParallelMultiplyAdds || pool_threads < 1 ? 1 : pool_threads;
}

// The one CPU engine of the process.
const dnnl::engine& CpuEngine();

// A stream on CpuEngine() owned by the calling thread (CPU streams run each
// primitive to completion inside execute()).
dnnl::stream& ThreadStream();

// Sets the calling thread's OpenMP thread count for oneDNN and restores the
// previous count when destroyed, so OpenMP code of the embedding program on
// the same thread keeps its own setting.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int num_threads);
  ~OmpThreadsScope();
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int previous_ = 0;
};

// Runs fn(data) on `threads` threads, the caller and threads - 1 of the
// OpenMP runtime's team (the threads oneDNN's primitives run on), and returns
// when all have returned; false, running nothing, when the process has no
// such runtime. The intra-op pool runs its loops this way, so that a kernel
// right after a oneDNN call reuses that call's threads, which spin waiting
// for work, instead of competing with them for the cores (measured on the
// 784-512-512-10 MLP step: kernels after a matmul took 2-20x their time).
// Called inside an OpenMP parallel region of the embedding program, the team
// is the caller alone (nested regions are off by default): correct, serial.
bool RunOnOpenMpTeam(int threads, void (*fn)(void*), void* data);

// Growable 64-byte aligned memory kept by one thread between calls, so
// reorder targets and primitive scratchpads allocate only when they grow.
class ThreadScratch {
 public:
  // `slot` picks one of a few independent buffers of the calling thread.
  static void* Get(int slot, size_t bytes);
  static constexpr int kSlots = 4;
};

// A user scratchpad of `bytes` for primitives made with
// UserScratchpadAttributes(), in ThreadScratch slot 0.
dnnl::memory ThreadScratchpad(size_t bytes);

// Attributes that make a primitive take its scratchpad from the caller, so
// oneDNN keeps no scratch memory of its own between runs.
dnnl::primitive_attr UserScratchpadAttributes();

// The primitives of one operation, made once per thread count they run with.
// `Primitives` has a constructor `Primitives(const Spec&, int num_threads)`
// that may throw dnnl::error; it runs under OmpThreadsScope(num_threads).
template <typename Primitives, typename Spec>
class PerThreadCount {
 public:
  explicit PerThreadCount(Spec spec) : spec_(std::move(spec)) {}
  const Spec& spec() const { return spec_; }

  // Throws dnnl::error when the primitives cannot be made.
  const Primitives& GetOrThrow(int num_threads) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Primitives>& slot = made_[num_threads];
    if (slot == nullptr) {
      try {
        OmpThreadsScope scope(num_threads);
        slot = std::make_unique<Primitives>(spec_, num_threads);
      } catch (...) {
        made_.erase(num_threads);
        throw;
      }
    }
    return *slot;
  }

  StatusOr<const Primitives*> Get(int num_threads) const {
    try {
      return &GetOrThrow(num_threads);
    } catch (const dnnl::error& error) {
      return Internal("oneDNN could not create a primitive for ", num_threads, " threads: ", error.what());
    }
  }

 private:
  Spec spec_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<int, std::unique_ptr<Primitives>> made_;
};

}  // namespace kiln::cpu::onednn

#endif  // KILN_HAVE_DNNL
