// topk: the k largest (or smallest) elements of each row along the last
// dimension, with their indices. Floats use the total order of compare's
// TOTALORDER type (-NaN < -inf < ... < -0 < +0 < ... < inf < +NaN), and equal
// elements keep index order, as XLA specifies.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

// A signed integer whose order is the total order of the float `value`.
int64_t TotalOrderKey(double value) {
  auto bits = std::bit_cast<int64_t>(value);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

template <typename T>
void TopKRows(const Literal& operand, int64_t k, bool largest, Literal& values, Literal& indices) {
  const int64_t row_length = operand.shape().dimensions().back();
  const int64_t rows = row_length == 0 ? 0 : operand.element_count() / row_length;
  auto in = operand.data<T>();
  auto out_values = values.data<T>();
  auto out_indices = indices.data<int32_t>();
  std::vector<int64_t> order(static_cast<size_t>(row_length));
  for (int64_t row = 0; row < rows; ++row) {
    const T* base = in.data() + row * row_length;
    auto before = [&](int64_t a, int64_t b) {
      // Ties broken by index make this a strict total order, so a partial
      // sort gives the stable answer without a full sort.
      if constexpr (std::is_integral_v<T>) {
        if (base[a] != base[b]) return largest ? base[a] > base[b] : base[a] < base[b];
      } else {
        const int64_t ka = TotalOrderKey(static_cast<double>(base[a]));
        const int64_t kb = TotalOrderKey(static_cast<double>(base[b]));
        if (ka != kb) return largest ? ka > kb : ka < kb;
      }
      return a < b;
    };
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t i = 0; i < k; ++i) {
      out_values[static_cast<size_t>(row * k + i)] = base[order[static_cast<size_t>(i)]];
      out_indices[static_cast<size_t>(row * k + i)] = static_cast<int32_t>(order[static_cast<size_t>(i)]);
    }
  }
}

}  // namespace

StatusOr<Literal> EvaluateTopK(const Instruction& instruction, Operands operands) {
  if (operands.size() != 1 || !instruction.shape.IsTuple() || instruction.shape.tuple_shapes().size() != 2) {
    return Internal("topk needs one operand and a (values, indices) result");
  }
  const Literal& operand = *operands[0];
  Literal values(instruction.shape.tuple_shapes(0));
  Literal indices(instruction.shape.tuple_shapes(1));
  const int64_t k = instruction.attrs.top_k;
  const bool largest = instruction.attrs.largest;
  DispatchElementType(operand.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128> || std::is_same_v<T, bool>) {
      // Refused by shape inference; nothing to order.
    } else {
      TopKRows<T>(operand, k, largest, values, indices);
    }
  });
  std::vector<Literal> elements;
  elements.push_back(std::move(values));
  elements.push_back(std::move(indices));
  return Literal::Tuple(std::move(elements));
}

}  // namespace kiln::interpreter
