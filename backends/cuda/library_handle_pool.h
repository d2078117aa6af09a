// The handles of a vendor library (cuBLAS, cuDNN) for one GPU. A handle is
// bound to one stream at a time and must not be used by two threads at
// once, while executions run concurrently, each on a stream of its own: so
// each execution takes a handle from the pool for its library calls, binds
// it to its stream and gives it back when it ends. Handles are made on
// demand (creating one allocates device memory or loads kernels, so they
// are kept) and destroyed with the pool, which the backend and its
// executables share.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/cuda/device_memory.h"
#include "core/status.h"

namespace kiln::cuda {

template <typename Handle>
class LibraryHandlePool {
 public:
  // How the library makes, binds and destroys a handle.
  struct Calls {
    std::function<StatusOr<Handle>()> create;      // a new handle, set up for Kiln
    std::function<Status(Handle, CUstream)> bind;  // to a stream; nullptr unbinds
    std::function<void(Handle)> destroy;
  };

  LibraryHandlePool(Calls calls, std::shared_ptr<DeviceMemory> memory)
      : calls_(std::move(calls)), memory_(std::move(memory)) {}
  ~LibraryHandlePool() {
    if (all_.empty() || !memory_->MakeCurrent().ok()) return;
    for (Handle handle : all_) calls_.destroy(handle);
  }
  LibraryHandlePool(const LibraryHandlePool&) = delete;
  LibraryHandlePool& operator=(const LibraryHandlePool&) = delete;

  // A handle of its own for the caller, bound to `stream`. The GPU's
  // context must be current. Thread-safe.
  StatusOr<Handle> Acquire(CUstream stream) {
    Handle handle = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        handle = free_.back();
        free_.pop_back();
      }
    }
    if (handle == nullptr) {
      KILN_ASSIGN_OR_RETURN(handle, calls_.create());
      std::lock_guard<std::mutex> lock(mutex_);
      all_.push_back(handle);
    }
    Status bound = calls_.bind(handle, stream);
    if (!bound.ok()) {
      Release(handle);
      return bound;
    }
    return handle;
  }

  // Unbinds `handle` from its stream and returns it to the pool.
  void Release(Handle handle) {
    // Not left pointing at a stream its execution is about to destroy.
    (void)calls_.bind(handle, nullptr);
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(handle);
  }

 private:
  Calls calls_;
  std::shared_ptr<DeviceMemory> memory_;
  std::mutex mutex_;
  std::vector<Handle> free_;
  std::vector<Handle> all_;
};

}  // namespace kiln::cuda
