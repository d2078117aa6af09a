// Compare, select, clamp, is-finite and convert. Comparisons and conversions
// to integers see only exact operands (see graph_generator.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/differential/graph_generator.h"
#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

constexpr ComparisonDirection kDirections[] = {ComparisonDirection::kEq, ComparisonDirection::kNe,
                                               ComparisonDirection::kGe, ComparisonDirection::kGt,
                                               ComparisonDirection::kLe, ComparisonDirection::kLt};

double RangeOf(ElementType type) {
  double range = std::numeric_limits<double>::infinity();
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      range = 1.0;
    } else if constexpr (std::is_integral_v<T>) {
      range = std::max(std::fabs(static_cast<double>(std::numeric_limits<T>::lowest())),
                       static_cast<double>(std::numeric_limits<T>::max()));
    } else if constexpr (std::is_same_v<T, half>) {
      range = 65504.0;
    }
  });
  return range;
}

// After converting a value of bound `bound` (exact or not) to `type`.
double ConvertedBound(double bound, ElementType type) { return std::min(bound, RangeOf(type)); }
bool ConvertedExact(bool exact, double bound, ElementType type) {
  return exact && bound <= GraphContext::ExactLimit(type);
}

}  // namespace

Op MakePredicate(GraphContext& context, const std::vector<int64_t>& dims) {
  Value x = context.PickExactWithDims(dims);
  Value y = context.PickExactWithDims(dims);
  context.Use(x);
  context.Use(y);
  const ComparisonDirection direction =
      context.random().Pick(std::span<const ComparisonDirection>(kDirections));
  ComparisonType type = ComparisonType::kDefault;
  if (context.is_float() && context.random().Chance(1, 4)) type = ComparisonType::kTotalOrder;
  return context.builder().Compare(x.op, y.op, direction, type);
}

bool EmitCompareSelect(GraphContext& context) {
  Value on_true = context.Pick();
  Value on_false = context.PickWithDims(on_true.shape.dimensions());
  const bool scalar_predicate = context.random().Chance(1, 4);
  Op predicate =
      MakePredicate(context, scalar_predicate ? std::vector<int64_t>{} : on_true.shape.dimensions());
  if (context.random().Chance(1, 4)) {
    // The comparison itself is a result too.
    context.Record(predicate, 1.0, true);
    return true;
  }
  context.Use(on_true);
  context.Use(on_false);
  context.Record(context.builder().Select(predicate, on_true.op, on_false.op),
                 std::max(on_true.bound, on_false.bound), on_true.exact && on_false.exact);
  return true;
}

bool EmitClamp(GraphContext& context) {
  Value operand = context.Pick();
  const std::vector<int64_t> bound_dims =
      context.random().Coin() ? std::vector<int64_t>{} : operand.shape.dimensions();
  Value low = context.PickWithDims(bound_dims);
  Value high = context.PickWithDims(bound_dims);
  for (const Value* used : {&operand, &low, &high}) context.Use(*used);
  context.Record(context.builder().Clamp(low.op, operand.op, high.op),
                 std::max({operand.bound, low.bound, high.bound}), operand.exact && low.exact && high.exact);
  return true;
}

bool EmitIsFinite(GraphContext& context) {
  if (!context.is_float()) return false;
  Value x = context.Pick();
  context.Use(x);
  context.Record(context.builder().IsFinite(x.op), 1.0, true);
  return true;
}

bool EmitConvert(GraphContext& context) {
  const std::vector<ElementType> types = GeneratedElementTypes();
  const ElementType target = context.random().Pick(types);
  const bool to_discrete = !IsFloating(target);
  Value x = to_discrete ? context.PickExact() : context.Pick();
  context.Use(x);
  Builder& b = context.builder();
  Op converted = b.ConvertElementType(x.op, target);
  const double bound = ConvertedBound(x.bound, target);
  const bool exact = ConvertedExact(x.exact, x.bound, target) || !IsFloating(target);
  Value there = context.Record(converted, bound, exact);
  // Back to the main type, unless that would truncate an inexact float (the
  // converted value is then a result of its own).
  if (!exact && !context.is_float()) return true;
  context.Use(there);
  context.Record(b.ConvertElementType(converted, context.type()), ConvertedBound(bound, context.type()),
                 ConvertedExact(exact, bound, context.type()));
  return true;
}

}  // namespace kiln::differential
