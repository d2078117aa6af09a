#include "backends/cpu/kernel_thunk.h"

#include <algorithm>

#include "backends/cpu/thread_pool.h"
#include "backends/cpu/thunk_profile.h"

namespace kiln::cpu {
namespace {

// Bytes one task should touch at least, so scheduling stays cheap next to it.
constexpr int64_t kBytesPerTask = 64 * 1024;

}  // namespace

KernelThunk::KernelThunk(std::vector<int> inputs, std::vector<int> outputs,
                         std::unique_ptr<LibraryThunk> fallback)
    : Thunk(std::move(inputs), std::move(outputs)), fallback_(std::move(fallback)) {
  arguments_ = inputs_;
  arguments_.insert(arguments_.end(), outputs_.begin(), outputs_.end());
}

KernelGrid CpuKernelGrid(const KernelInfo& info) {
  const int64_t extent = std::max<int64_t>(1, info.parallel_extent);
  const int64_t grain =
      info.bytes_per_iteration > 0 ? std::max<int64_t>(1, kBytesPerTask / info.bytes_per_iteration) : extent;
  return LinearGrid(extent, grain);
}

void KernelThunk::SetKernel(KernelFunction function, const KernelGrid& grid) {
  function_ = function;
  extent_ = std::max<int64_t>(1, grid.iterations);
  grain_ = std::max<int64_t>(1, grid.workgroup_size[0]);
}

Status KernelThunk::Run(ExecutionContext& context) const {
  if (function_ == nullptr) return fallback_->Run(context);
  if (extent_ <= grain_ || context.pool == nullptr || context.pool->num_threads() == 1) {
    RunInline(context.slots);
    return OkStatus();
  }
  void* inline_buffers[kMaxInlineArguments];
  std::vector<void*> heap_buffers;
  void** buffers = BindArguments(context.slots, inline_buffers, heap_buffers);
  const KernelFunction function = function_;
  context.pool->ParallelFor(extent_, grain_,
                            [&](int64_t begin, int64_t end) { function(buffers, begin, end); });
  return OkStatus();
}

void** KernelThunk::BindArguments(void* const* slots, void** inline_buffers,
                                  std::vector<void*>& heap_buffers) const {
  void** buffers = inline_buffers;
  if (arguments_.size() > kMaxInlineArguments) {
    heap_buffers.resize(arguments_.size());
    buffers = heap_buffers.data();
  }
  for (size_t i = 0; i < arguments_.size(); ++i) buffers[i] = slots[arguments_[i]];
  return buffers;
}

void KernelThunk::RunInline(void* const* slots) const {
  void* inline_buffers[kMaxInlineArguments];
  const size_t count = arguments_.size();
  if (count > kMaxInlineArguments) {
    std::vector<void*> heap_buffers;
    function_(BindArguments(slots, inline_buffers, heap_buffers), 0, extent_);
    return;
  }
  // The common case stays free of the vector: a loop body's kernels run
  // this once per iteration.
  const int* arguments = arguments_.data();
  for (size_t i = 0; i < count; ++i) inline_buffers[i] = slots[arguments[i]];
  function_(inline_buffers, 0, extent_);
}

bool KernelsRunInline(const ThunkSequence& sequence) {
  if (ThunkProfilingEnabled()) return false;
  for (const auto& thunk : sequence.thunks) {
    const auto* kernel = dynamic_cast<const KernelThunk*>(thunk.get());
    if (kernel == nullptr || !kernel->RunsInline()) return false;
  }
  return true;
}

void RunKernelsInline(const ThunkSequence& sequence, void* const* slots) {
  for (const auto& thunk : sequence.thunks) static_cast<const KernelThunk&>(*thunk).RunInline(slots);
}

}  // namespace kiln::cpu
