// sort: a stable merge sort of each 1-D slice along the sort dimension,
// ordered by the comparator. Merge sort never reads outside the slice even
// when a comparator is not a strict weak order, so a bad comparator gives an
// unspecified order, never a crash.
#include <cstring>
#include <functional>

#include "core/interpreter/array_util.h"
#include "core/interpreter/called_computation.h"
#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

// Sorts `order` stably by `less`, stopping at the first comparator error.
Status MergeSort(std::vector<int64_t>& order, const std::function<StatusOr<bool>(int64_t, int64_t)>& less) {
  std::vector<int64_t> buffer(order.size());
  const size_t n = order.size();
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t left = 0; left < n; left += 2 * width) {
      const size_t middle = std::min(left + width, n);
      const size_t right = std::min(left + 2 * width, n);
      size_t i = left, j = middle, k = left;
      while (i < middle && j < right) {
        KILN_ASSIGN_OR_RETURN(bool right_first, less(order[j], order[i]));
        buffer[k++] = right_first ? order[j++] : order[i++];
      }
      while (i < middle) buffer[k++] = order[i++];
      while (j < right) buffer[k++] = order[j++];
    }
    order.swap(buffer);
  }
  return OkStatus();
}

template <typename T>
int64_t SortKey(T value) {
  if constexpr (kIsFloat<T>) {
    using Bits =
        std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    Bits bits;
    std::memcpy(&bits, &value, sizeof(T));
    const Bits sign = Bits(1) << (sizeof(T) * 8 - 1);
    const auto magnitude = static_cast<int64_t>(bits & static_cast<Bits>(~sign));
    return (bits & sign) ? -magnitude - 1 : magnitude;
  } else {
    return 0;
  }
}

// A typed comparator for `compare(p0, p1)` roots.
template <typename T>
std::function<StatusOr<bool>(int64_t, int64_t)> TypedLess(const Literal& keys, const Instruction& compare) {
  const bool descending = compare.attrs.comparison_direction == ComparisonDirection::kGt;
  const bool total = compare.attrs.comparison_type == ComparisonType::kTotalOrder;
  auto data = keys.data<T>();
  return [=](int64_t a, int64_t b) -> StatusOr<bool> {
    const T x = data[static_cast<size_t>(a)];
    const T y = data[static_cast<size_t>(b)];
    if constexpr (kIsComplex<T>) {
      return false;
    } else if constexpr (kIsFloat<T>) {
      if (total) return descending ? SortKey(x) > SortKey(y) : SortKey(x) < SortKey(y);
      return descending ? x > y : x < y;
    } else {
      return descending ? x > y : x < y;
    }
  };
}

}  // namespace

StatusOr<Literal> EvaluateSort(const Instruction& instruction, Operands operands, EvalContext& context) {
  if (operands.empty() || instruction.called.size() != 1)
    return Internal("sort needs operands and a comparator");
  const Shape& shape = operands[0]->shape();
  const int64_t rank = shape.rank();
  int64_t dimension = instruction.attrs.dimensions.empty() ? rank - 1 : instruction.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank == 0) dimension = 0;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) {
    return InvalidArgument("sort dimension ", dimension, " out of range for ", shape.ToString());
  }
  std::vector<ElementType> argument_types;
  for (const Literal* operand : operands) {
    if (operand->shape().dimensions() != shape.dimensions()) {
      return InvalidArgument("sort operands must share dimensions, got ", shape.ToString(), " and ",
                             operand->shape().ToString());
    }
    argument_types.push_back(operand->shape().element_type());
    argument_types.push_back(operand->shape().element_type());
  }
  std::vector<Literal> results;
  for (const Literal* operand : operands) results.push_back(*operand);
  const int64_t length = rank == 0 ? 1 : shape.dimensions(dimension);
  int64_t inner = 1, outer = 1;
  for (int64_t d = dimension + 1; d < rank; ++d) inner *= shape.dimensions(d);
  for (int64_t d = 0; d < dimension; ++d) outer *= shape.dimensions(d);

  const Computation& comparator = *instruction.called[0];
  ScalarCall call(*context.runner, comparator, argument_types);
  std::function<StatusOr<bool>(int64_t, int64_t)> less;
  if (const Instruction* compare = SimpleComparator(comparator);
      compare != nullptr &&
      compare->operands[0]->shape.element_type() == operands[0]->shape().element_type()) {
    less = DispatchElementType(operands[0]->shape().element_type(),
                               [&](auto tag) { return TypedLess<decltype(tag)>(*operands[0], *compare); });
  } else {
    less = [&](int64_t a, int64_t b) -> StatusOr<bool> {
      for (size_t i = 0; i < operands.size(); ++i) {
        call.Set(2 * i, *operands[i], a);
        call.Set(2 * i + 1, *operands[i], b);
      }
      KILN_ASSIGN_OR_RETURN(Literal result, call.Call());
      if (result.element_count() != 1 || result.shape().element_type() != ElementType::kPred) {
        return InvalidArgument("sort comparator must return pred[], got ", result.shape().ToString());
      }
      return result.data<bool>()[0];
    };
  }
  std::vector<int64_t> order(static_cast<size_t>(length));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * length * inner + i;
      for (int64_t p = 0; p < length; ++p) order[static_cast<size_t>(p)] = base + p * inner;
      KILN_RETURN_IF_ERROR(MergeSort(order, less));
      for (size_t k = 0; k < operands.size(); ++k) {
        for (int64_t p = 0; p < length; ++p) {
          CopyElement(*operands[k], order[static_cast<size_t>(p)], results[k], base + p * inner);
        }
      }
    }
  }
  if (results.size() == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace kiln::interpreter
