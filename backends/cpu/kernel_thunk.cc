#include "backends/cpu/kernel_thunk.h"

#include <algorithm>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Bytes one task should touch at least, so scheduling stays cheap next to it.
constexpr int64_t kBytesPerTask = 64 * 1024;
constexpr size_t kMaxInlineArguments = 64;

}  // namespace

KernelThunk::KernelThunk(std::vector<int> inputs, std::vector<int> outputs,
                         std::unique_ptr<LibraryThunk> fallback)
    : Thunk(std::move(inputs), std::move(outputs)), fallback_(std::move(fallback)) {
  arguments_ = inputs_;
  arguments_.insert(arguments_.end(), outputs_.begin(), outputs_.end());
}

void KernelThunk::SetKernel(const KernelInfo& info) {
  function_ = info.function;
  extent_ = std::max<int64_t>(1, info.parallel_extent);
  grain_ =
      info.bytes_per_iteration > 0 ? std::max<int64_t>(1, kBytesPerTask / info.bytes_per_iteration) : extent_;
}

Status KernelThunk::Run(ExecutionContext& context) const {
  if (function_ == nullptr) return fallback_->Run(context);
  void* inline_buffers[kMaxInlineArguments];
  std::vector<void*> heap_buffers;
  void** buffers = inline_buffers;
  if (arguments_.size() > kMaxInlineArguments) {
    heap_buffers.resize(arguments_.size());
    buffers = heap_buffers.data();
  }
  for (size_t i = 0; i < arguments_.size(); ++i) buffers[i] = context.slots[arguments_[i]];
  const KernelFunction function = function_;
  if (extent_ <= grain_ || context.pool == nullptr || context.pool->num_threads() == 1) {
    function(buffers, 0, extent_);
  } else {
    context.pool->ParallelFor(extent_, grain_,
                              [&](int64_t begin, int64_t end) { function(buffers, begin, end); });
  }
  return OkStatus();
}

}  // namespace kiln::cpu
