// Reductions: reduce over random dimensions, a variadic arg-max/arg-min
// reduce (value, index) with lowest-index tie breaking, and reduce-window
// with strides, padding and dilations.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

std::vector<Opcode> Reducers(ElementType type) {
  if (type == ElementType::kPred) return {Opcode::kAnd, Opcode::kOr, Opcode::kMaximum, Opcode::kMinimum};
  if (IsIntegral(type)) {
    return {Opcode::kAdd, Opcode::kMultiply, Opcode::kMaximum, Opcode::kMinimum,
            Opcode::kAnd, Opcode::kOr,       Opcode::kXor};
  }
  return {Opcode::kAdd, Opcode::kMaximum, Opcode::kMinimum};
}

// The identity of `reducer` over values of bound `bound` (floats: the
// finite ±ceil(bound), so windows over padding stay finite).
Op Identity(GraphContext& context, Opcode reducer, double bound) {
  const ElementType type = context.type();
  double value = 0.0;
  double lowest = 0.0, highest = 1.0;
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      lowest = static_cast<double>(std::numeric_limits<T>::lowest());
      highest = static_cast<double>(std::numeric_limits<T>::max());
    }
  });
  if (context.is_float()) {
    lowest = -std::ceil(bound);
    highest = std::ceil(bound);
  }
  switch (reducer) {
    case Opcode::kMultiply: value = 1.0; break;
    case Opcode::kMaximum: value = lowest; break;
    case Opcode::kMinimum: value = highest; break;
    case Opcode::kAnd: value = context.is_pred() ? 1.0 : -1.0; break;
    default: value = 0.0; break;
  }
  const bool all_ones = reducer == Opcode::kAnd && IsIntegral(type);
  const bool extreme = IsIntegral(type) && (reducer == Opcode::kMaximum || reducer == Opcode::kMinimum);
  if (all_ones || extreme) {
    // Built bit-exactly: 2^63 - 1 and 2^64 - 1 are not doubles.
    Literal literal(Shape::Scalar(type));
    DispatchElementType(type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        T identity =
            reducer == Opcode::kMaximum ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        if (all_ones) identity = static_cast<T>(~uint64_t{0});
        literal.data<T>()[0] = identity;
      }
    });
    return context.builder().ConstantLiteral(literal);
  }
  return context.ScalarConstant(value);
}

// Reduced result bound and exactness for `count` elements of `x`.
double ReducedBound(const GraphContext& context, Opcode reducer, const Value& x, int64_t count) {
  if (reducer == Opcode::kAdd) return x.bound * static_cast<double>(count);
  if (reducer == Opcode::kMultiply ||
      ((reducer == Opcode::kAnd || reducer == Opcode::kOr || reducer == Opcode::kXor) &&
       !context.is_pred())) {
    return std::numeric_limits<double>::infinity();
  }
  return x.bound;
}

std::unique_ptr<Module> ArgExtremeComputation(ElementType type, bool largest) {
  Builder builder(largest ? "argmax" : "argmin");
  const Shape value_shape = Shape::Scalar(type);
  const Shape index_shape = Shape::Scalar(ElementType::kS32);
  Op value_a = builder.Parameter(0, value_shape, "value_a");
  Op index_a = builder.Parameter(1, index_shape, "index_a");
  Op value_b = builder.Parameter(2, value_shape, "value_b");
  Op index_b = builder.Parameter(3, index_shape, "index_b");
  Op better = largest ? builder.Gt(value_a, value_b) : builder.Lt(value_a, value_b);
  Op a_wins = builder.Or(better, builder.And(builder.Eq(value_a, value_b), builder.Lt(index_a, index_b)));
  const Op outputs[] = {builder.Select(a_wins, value_a, value_b), builder.Select(a_wins, index_a, index_b)};
  builder.Tuple(outputs);
  StatusOr<std::unique_ptr<Module>> module = builder.Build();
  return module.ok() ? std::move(module).value() : nullptr;
}

}  // namespace

bool EmitReduce(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d = 0; d < x.shape.rank(); ++d) {
    if (random.Coin()) {
      dims.push_back(d);
      count *= x.shape.dimensions(d);
    }
  }
  if (dims.empty()) {
    dims.push_back(random.Below(x.shape.rank()));
    count = x.shape.dimensions(dims[0]);
  }
  const Opcode reducer = random.Pick(Reducers(context.type()));
  if (reducer == Opcode::kAdd) x = context.Limit(x, context.Cap() / static_cast<double>(count));
  std::unique_ptr<Module> computation = context.BinaryComputation(reducer, context.type());
  if (computation == nullptr) return false;
  context.Use(x);
  const double bound = ReducedBound(context, reducer, x, count);
  context.Record(context.builder().Reduce(x.op, Identity(context, reducer, x.bound), *computation, dims),
                 bound, context.StaysExact(x.exact, bound));
  return true;
}

bool EmitArgMaxReduce(GraphContext& context) {
  RandomSource& random = context.random();
  // Which element wins depends on comparisons: exact values only.
  Value x = context.PickExact([](const Value& v) { return v.shape.rank() >= 1; });
  const int64_t dimension = random.Below(x.shape.rank());
  const bool largest = random.Coin();
  std::unique_ptr<Module> computation = ArgExtremeComputation(context.type(), largest);
  if (computation == nullptr) return false;
  Builder& b = context.builder();
  Op indices = b.Iota(Shape(ElementType::kS32, x.shape.dimensions()), dimension);
  const Op operands[] = {x.op, indices};
  const Op inits[] = {Identity(context, largest ? Opcode::kMaximum : Opcode::kMinimum, x.bound),
                      b.ConstantR0<int32_t>(std::numeric_limits<int32_t>::max())};
  const int64_t dims[] = {dimension};
  context.Use(x);
  Op reduced = b.Reduce(operands, inits, *computation, dims);
  context.Record(b.GetTupleElement(reduced, 0), x.bound, x.exact);
  context.Record(b.GetTupleElement(reduced, 1), static_cast<double>(x.shape.dimensions(dimension)), true);
  return true;
}

bool EmitReduceWindow(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  const int64_t rank = x.shape.rank();
  std::vector<int64_t> window(static_cast<size_t>(rank)), strides(window), base_dilation(window),
      window_dilation(window);
  std::vector<std::pair<int64_t, int64_t>> padding;
  int64_t window_count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t size = x.shape.dimensions(d);
    base_dilation[i] = random.Chance(1, 5) ? 2 : 1;
    window_dilation[i] = random.Chance(1, 5) ? 2 : 1;
    strides[i] = random.Between(1, 2);
    padding.emplace_back(random.Between(0, 1), random.Between(0, 1));
    const int64_t padded = (size - 1) * base_dilation[i] + 1 + padding.back().first + padding.back().second;
    window[i] = random.Between(1, 3);
    if ((window[i] - 1) * window_dilation[i] + 1 > padded) window[i] = window_dilation[i] = 1;
    window_count *= window[i];
  }
  std::vector<Opcode> reducers = {Opcode::kMaximum, Opcode::kMinimum};
  if (!context.is_pred()) reducers.push_back(Opcode::kAdd);
  const Opcode reducer = random.Pick(reducers);
  if (reducer == Opcode::kAdd) x = context.Limit(x, context.Cap() / static_cast<double>(window_count));
  std::unique_ptr<Module> computation = context.BinaryComputation(reducer, context.type());
  if (computation == nullptr) return false;
  const Op operands[] = {x.op};
  const Op inits[] = {Identity(context, reducer, x.bound)};
  context.Use(x);
  const double bound =
      reducer == Opcode::kAdd ? x.bound * static_cast<double>(window_count) : std::ceil(x.bound);
  context.Record(context.builder().ReduceWindowWithGeneralPadding(
                     operands, inits, *computation, window, strides, base_dilation, window_dilation, padding),
                 bound, context.StaysExact(x.exact, bound));
  return true;
}

}  // namespace kiln::differential
