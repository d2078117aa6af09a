#include "backends/cpu/top_k_thunk.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <type_traits>
#include <vector>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should scan at least, so scheduling stays cheap.
constexpr int64_t kElementsPerTask = 16 * 1024;

// A signed integer whose order is the total order of the float `value`.
int64_t TotalOrderKey(double value) {
  const auto bits = std::bit_cast<int64_t>(value);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

template <typename T>
void TopKRows(const TopKGeometry& geometry, const T* input, T* values, int32_t* indices, int64_t begin,
              int64_t end) {
  const int64_t length = geometry.row_length;
  const int64_t k = geometry.k;
  std::vector<int64_t> order(static_cast<size_t>(length));
  for (int64_t row = begin; row < end; ++row) {
    const T* base = input + row * length;
    // Ties broken by index make this a strict total order, so a partial sort
    // gives the one stable answer.
    auto before = [&](int64_t a, int64_t b) {
      if constexpr (std::is_integral_v<T>) {
        if (base[a] != base[b]) return geometry.largest ? base[a] > base[b] : base[a] < base[b];
      } else {
        const int64_t key_a = TotalOrderKey(static_cast<double>(base[a]));
        const int64_t key_b = TotalOrderKey(static_cast<double>(base[b]));
        if (key_a != key_b) return geometry.largest ? key_a > key_b : key_a < key_b;
      }
      return a < b;
    };
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t source = order[static_cast<size_t>(i)];
      values[row * k + i] = base[source];
      indices[row * k + i] = static_cast<int32_t>(source);
    }
  }
}

}  // namespace

Status TopKThunk::Run(ExecutionContext& context) const {
  if (!Supports(geometry_.type)) return Internal("cpu: topk cannot order ", ElementTypeName(geometry_.type));
  if (geometry_.rows == 0 || geometry_.k == 0) return OkStatus();
  void* input = context.slots[inputs_[0]];
  void* values = context.slots[outputs_[0]];
  auto* indices = static_cast<int32_t*>(context.slots[outputs_[1]]);
  auto rows = [&](int64_t begin, int64_t end) {
    DispatchElementType(geometry_.type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, complex64> ||
                    std::is_same_v<T, complex128>) {
        // Refused by Supports above.
      } else {
        TopKRows<T>(geometry_, static_cast<const T*>(input), static_cast<T*>(values), indices, begin, end);
      }
    });
  };
  const int64_t grain = std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(1, geometry_.row_length));
  if (geometry_.rows <= grain || context.pool == nullptr || context.pool->num_threads() == 1) {
    rows(0, geometry_.rows);
  } else {
    context.pool->ParallelFor(geometry_.rows, grain, rows);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
