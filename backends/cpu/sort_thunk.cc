#include "backends/cpu/sort_thunk.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should sort at least, so scheduling stays cheap.
constexpr int64_t kElementsPerTask = 16 * 1024;

// Sorts `order` stably by `less` (bottom-up merge sort through `scratch`).
// It never reads outside the slice, even for a comparator that is not a
// strict weak order: such a comparator gives some order, never a crash.
template <typename Less>
void MergeSort(std::vector<int64_t>& order, std::vector<int64_t>& scratch, const Less& less) {
  const size_t n = order.size();
  scratch.resize(n);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t left = 0; left < n; left += 2 * width) {
      const size_t middle = std::min(left + width, n);
      const size_t right = std::min(left + 2 * width, n);
      size_t i = left, j = middle, k = left;
      while (i < middle && j < right) scratch[k++] = less(order[j], order[i]) ? order[j++] : order[i++];
      while (i < middle) scratch[k++] = order[i++];
      while (j < right) scratch[k++] = order[j++];
    }
    order.swap(scratch);
  }
}

}  // namespace

SortThunk::SortThunk(std::vector<int> inputs, std::vector<int> outputs, SortGeometry geometry,
                     std::unique_ptr<LibraryThunk> fallback)
    : Thunk(std::move(inputs), std::move(outputs)),
      geometry_(std::move(geometry)),
      fallback_(std::move(fallback)) {
  const std::vector<int64_t>& dims = geometry_.dimensions;
  const auto rank = static_cast<int64_t>(dims.size());
  if (rank > 0) length_ = dims[static_cast<size_t>(geometry_.sort_dimension)];
  int64_t outer = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < geometry_.sort_dimension) outer *= dims[static_cast<size_t>(d)];
    if (d > geometry_.sort_dimension) inner_ *= dims[static_cast<size_t>(d)];
  }
  slices_ = outer * inner_;
}

void SortThunk::SortSlices(void* const* slots, int64_t begin, int64_t end) const {
  const size_t operands = inputs_.size();
  // Comparator buffers: (lhs, rhs) element pointers per operand, then the result.
  std::vector<void*> arguments(2 * operands + 1);
  bool less_result = false;
  arguments.back() = &less_result;
  auto less = [&](int64_t a, int64_t b) {
    for (size_t k = 0; k < operands; ++k) {
      auto* base = static_cast<uint8_t*>(slots[inputs_[k]]);
      const int bytes = geometry_.element_bytes[k];
      arguments[2 * k] = base + a * bytes;
      arguments[2 * k + 1] = base + b * bytes;
    }
    comparator_(arguments.data(), 0, 1);
    return less_result;
  };
  std::vector<int64_t> order(static_cast<size_t>(length_)), scratch;
  for (int64_t slice = begin; slice < end; ++slice) {
    const int64_t first = (slice / inner_) * length_ * inner_ + slice % inner_;
    for (int64_t p = 0; p < length_; ++p) order[static_cast<size_t>(p)] = first + p * inner_;
    MergeSort(order, scratch, less);
    for (size_t k = 0; k < operands; ++k) {
      const auto* source = static_cast<const uint8_t*>(slots[inputs_[k]]);
      auto* target = static_cast<uint8_t*>(slots[outputs_[k]]);
      const auto bytes = static_cast<size_t>(geometry_.element_bytes[k]);
      for (int64_t p = 0; p < length_; ++p) {
        std::memcpy(target + static_cast<size_t>(first + p * inner_) * bytes,
                    source + static_cast<size_t>(order[static_cast<size_t>(p)]) * bytes, bytes);
      }
    }
  }
}

Status SortThunk::Run(ExecutionContext& context) const {
  if (comparator_ == nullptr) return fallback_->Run(context);
  if (length_ == 0 || slices_ == 0) return OkStatus();
  void* const* slots = context.slots;
  const int64_t grain = std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(1, length_));
  if (slices_ <= grain || context.pool == nullptr || context.pool->num_threads() == 1) {
    SortSlices(slots, 0, slices_);
  } else {
    context.pool->ParallelFor(slices_, grain,
                              [&](int64_t begin, int64_t end) { SortSlices(slots, begin, end); });
  }
  return OkStatus();
}

}  // namespace kiln::cpu
