// Process-wide pieces every oneDNN primitive of this backend shares: the CPU
// engine, a stream per thread, 64-byte aligned per-thread scratch memory, and
// a guard that makes oneDNN's OpenMP runtime use one thread.
//
// Threading (checked on Debian 12's libdnnl 2.6.3): dnnl_config.h says
// DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP and libdnnl.so.2 links
// libgomp. A primitive takes its thread count from omp_get_max_threads() of
// the thread that creates it and keeps it: a 1024^3 matmul created under one
// thread ran at one-thread speed (9.8 ms) when executed under two; created
// and executed under two it took 5.0 ms, created under two and executed under
// one 10.1 ms. The build has no threadpool interop (that needs
// DNNL_CPU_RUNTIME == THREADPOOL), so Kiln's own pool cannot be handed in.
//
// So every primitive is made and run under OmpThreadsScope(1), and an
// operation large enough for several threads is cut into independent pieces
// (rows of a product, images of a batch) that Kiln's pool runs in parallel.
// libgomp's team would spin for about 3 ms after every parallel region
// (GOMP_SPINCOUNT, read once when the library loads), and its static split
// waits for every thread: with another process keeping both cores busy a
// 256^3 matmul took 8.0 ms median on two threads against 0.87 ms on one.
// Pieces on the pool take 0.45 ms idle, as the team did (2-core AVX2 machine).
#pragma once

#ifdef KILN_HAVE_DNNL

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
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
constexpr int64_t kParallelMultiplyAdds = int64_t{1} << 23;

// How many pieces an operation of `multiply_adds` is cut into for a pool of
// `pool_threads`: one (the calling thread alone) below kParallelMultiplyAdds,
// else two per thread, so that the threads that are running take over the
// pieces of one that a busy core keeps waiting.
inline int64_t PiecesFor(int64_t multiply_adds, int pool_threads) {
  return multiply_adds < kParallelMultiplyAdds || pool_threads <= 1 ? 1 : int64_t{2} * pool_threads;
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

// The first failure among pieces that run on several threads (where no
// exception may escape): Guard(fn) runs fn and records what it throws.
class PieceErrors {
 public:
  template <typename Fn>
  void Guard(Fn&& fn) noexcept {
    try {
      fn();
    } catch (const dnnl::error& error) {
      Record(StatusCode::kInternal, error.what());
    } catch (const std::bad_alloc&) {
      Record(StatusCode::kResourceExhausted, "out of memory");
    } catch (const std::exception& error) {
      Record(StatusCode::kInternal, error.what());
    }
  }
  // OK, or the first failure as `operation: oneDNN failed: ...`.
  Status ToStatus(std::string_view operation) const;

 private:
  void Record(StatusCode code, const char* message) noexcept;
  mutable std::mutex mutex_;
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

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

// The primitives of one operation, made once per pool thread count (which
// decides how it is cut into pieces). `Primitives` has a constructor
// `Primitives(const Spec&, int pool_threads)` that may throw dnnl::error; it
// runs under OmpThreadsScope(1).
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
        OmpThreadsScope scope(1);
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
