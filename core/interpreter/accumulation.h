// Accumulation types of the contraction kernels (dot, convolution): f16,
// bf16 and f32 accumulate in float, f64 in double, complex in its own type,
// integers in wrapping 64-bit arithmetic.
#pragma once

#include <vector>

#include "core/interpreter/scalar_ops.h"
#include "core/literal.h"

namespace kiln::interpreter {

template <typename Out>
using AccumulatorType =
    std::conditional_t<kIsLowFloat<Out> || std::is_same_v<Out, float>, float,
                       std::conditional_t<std::is_same_v<Out, double> || kIsComplex<Out>, Out, uint64_t>>;

// The elements of `literal` (any type) converted to Acc, row-major.
template <typename Acc>
std::vector<Acc> ToAccumulator(const Literal& literal) {
  std::vector<Acc> values(static_cast<size_t>(literal.element_count()));
  DispatchElementType(literal.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    auto in = literal.data<T>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = ConvertElement<Acc>(in[i]);
  });
  return values;
}

// Writes accumulators into `result` converted to its element type.
template <typename Out, typename Acc>
void FromAccumulator(const std::vector<Acc>& values, Literal& result) {
  auto out = result.data<Out>();
  for (size_t i = 0; i < out.size() && i < values.size(); ++i) out[i] = ConvertElement<Out>(values[i]);
}

}  // namespace kiln::interpreter
