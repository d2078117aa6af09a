// Sort and control flow: single- and multi-operand sorts, while loops that
// count to a runtime limit, and predicated and indexed conditionals whose
// branches are random elementwise chains.
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

std::unique_ptr<Module> Comparator(ElementType key_type, int64_t operand_count, bool descending,
                                   bool total_order) {
  Builder builder(descending ? "greater" : "less");
  std::vector<Op> parameters;
  for (int64_t i = 0; i < 2 * operand_count; ++i) {
    parameters.push_back(builder.Parameter(i, Shape::Scalar(key_type), "c" + std::to_string(i)));
  }
  builder.Compare(parameters[0], parameters[1],
                  descending ? ComparisonDirection::kGt : ComparisonDirection::kLt,
                  total_order ? ComparisonType::kTotalOrder : ComparisonType::kDefault);
  StatusOr<std::unique_ptr<Module>> module = builder.Build();
  return module.ok() ? std::move(module).value() : nullptr;
}

// A chain of 1-3 elementwise ops on `input` (bound and exactness as given)
// built in `context`; the result is clamped back into `max_bound`.
Value ElementwiseChain(GraphContext& context, Value input, double max_bound) {
  const int64_t steps = context.random().Between(1, 3);
  Value current = input;
  for (int64_t i = 0; i < steps; ++i) current = ApplyElementwise(context, current);
  return context.Limit(current, max_bound);
}

}  // namespace

bool EmitSort(GraphContext& context) {
  RandomSource& random = context.random();
  Builder& b = context.builder();
  const bool multi = random.Coin();
  // Keys decide where payloads go: they must be exact. A lone operand may
  // be inexact: its sorted values move continuously with the inputs.
  Value keys = multi ? context.PickExact([](const Value& v) { return v.shape.rank() >= 1; })
                     : context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  context.Use(keys);
  if (!multi && random.Chance(1, 4)) {
    context.Record(b.Sort(keys.op), keys.bound, keys.exact);  // ascending along the last dimension
    return true;
  }
  const int64_t dimension = random.Below(keys.shape.rank());
  std::vector<Op> operands = {keys.op};
  Value payload;
  if (multi) {
    payload = context.PickWithDims(keys.shape.dimensions());
    context.Use(payload);
    operands.push_back(payload.op);
  }
  const bool total_order = context.is_float() && random.Coin();
  std::unique_ptr<Module> comparator =
      Comparator(context.type(), static_cast<int64_t>(operands.size()), random.Coin(), total_order);
  if (comparator == nullptr) return false;
  // Stable, so equal keys keep their payloads in order on every backend.
  Op sorted = b.Sort(operands, *comparator, dimension, /*is_stable=*/multi);
  if (!multi) {
    context.Record(sorted, keys.bound, keys.exact);
    return true;
  }
  context.Record(b.GetTupleElement(sorted, 0), keys.bound, keys.exact);
  context.Record(b.GetTupleElement(sorted, 1), payload.bound, payload.exact);
  return true;
}

bool EmitWhile(GraphContext& context) {
  RandomSource& random = context.random();
  Builder& b = context.builder();
  Value x = context.Pick();
  const Shape counter = Shape::Scalar(ElementType::kS32);
  const Shape state = Shape::Tuple({counter, counter, x.shape});

  Builder condition("loop_condition");
  {
    Op s = condition.Parameter(0, state, "state");
    condition.Lt(condition.GetTupleElement(s, 0), condition.GetTupleElement(s, 1));
  }
  // The body must keep x's bound and exactness invariant across iterations:
  // it is clamped back to the bound, and when one step loses exactness the
  // body is rebuilt assuming an inexact x from the start.
  std::unique_ptr<Module> body_module;
  bool exact = x.exact;
  for (int attempt = 0; attempt < 2 && body_module == nullptr; ++attempt) {
    Builder body("loop_body");
    GraphContext body_context(body, random, context.type(), nullptr);
    Op s = body.Parameter(0, state, "state");
    Op i = body.GetTupleElement(s, 0);
    Op n = body.GetTupleElement(s, 1);
    Value input = body_context.Record(body.GetTupleElement(s, 2), x.bound, exact);
    Value next = ElementwiseChain(body_context, input, std::max(x.bound, 1.0));
    if (exact && !next.exact) {
      exact = false;
      continue;
    }
    const Op elements[] = {body.Add(i, body.ConstantR0<int32_t>(1)), n, next.op};
    body.Tuple(elements);
    StatusOr<std::unique_ptr<Module>> built = body.Build();
    if (!built.ok()) return false;
    body_module = std::move(built).value();
  }
  StatusOr<std::unique_ptr<Module>> condition_module = condition.Build();
  if (body_module == nullptr || !condition_module.ok()) return false;
  // Trip count from a runtime input in [-8, 8]: zero iterations included.
  Value limit = context.NewInput(counter, true);
  context.Use(limit);
  context.Use(x);
  const Op init[] = {b.ConstantR0<int32_t>(random.Between(-1, 1)), limit.op, x.op};
  Op loop = b.While(**condition_module, *body_module, b.Tuple(init));
  context.Record(b.GetTupleElement(loop, 0), 10.0, true);
  // Integers may grow without bound inside the loop (they wrap).
  const double bound = context.is_float() ? std::max(x.bound, 1.0) : std::numeric_limits<double>::infinity();
  context.Record(b.GetTupleElement(loop, 2), bound, exact);
  return true;
}

bool EmitConditional(GraphContext& context) {
  RandomSource& random = context.random();
  Builder& b = context.builder();
  Value x = context.Pick();
  const int64_t branch_count = random.Between(2, 3);
  std::vector<std::unique_ptr<Module>> branches;
  double bound = 0.0;
  bool exact = true;
  const double max_bound = std::max(x.bound, 1.0) * 2.0;
  for (int64_t i = 0; i < branch_count; ++i) {
    Builder branch("branch" + std::to_string(i));
    GraphContext branch_context(branch, random, context.type(), nullptr);
    Value input = branch_context.Record(branch.Parameter(0, x.shape, "x"), x.bound, x.exact);
    Value result = ElementwiseChain(branch_context, input, max_bound);
    bound = std::max(bound, result.bound);
    exact = exact && result.exact;
    StatusOr<std::unique_ptr<Module>> built = branch.Build(result.op);
    if (!built.ok()) return false;
    branches.push_back(std::move(built).value());
  }
  context.Use(x);
  Op result;
  if (branch_count == 2 && random.Coin()) {
    Op predicate = MakePredicate(context, {});
    result = b.Conditional(predicate, x.op, *branches[0], x.op, *branches[1]);
  } else {
    // An index in [-8, 8]: out of range runs the last branch.
    Value index = context.NewInput(Shape::Scalar(ElementType::kS32), true);
    context.Use(index);
    std::vector<const Module*> computations;
    std::vector<Op> operands;
    for (const auto& branch : branches) {
      computations.push_back(branch.get());
      operands.push_back(x.op);
    }
    result = b.Conditional(index.op, computations, operands);
  }
  if (!context.is_float()) bound = std::numeric_limits<double>::infinity();
  context.Record(result, bound, exact);
  return true;
}

}  // namespace kiln::differential
