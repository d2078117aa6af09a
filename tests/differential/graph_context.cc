#include "tests/differential/graph_context.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::differential {

GraphContext::GraphContext(Builder& builder, RandomSource& random, ElementType type,
                           std::vector<Literal>* arguments)
    : builder_(builder), random_(random), type_(type), arguments_(arguments) {}

bool GraphContext::is_float() const { return IsFloating(type_); }
bool GraphContext::is_int() const { return IsIntegral(type_); }

Value GraphContext::Record(Op op, double bound, bool exact) {
  Value value;
  value.op = op;
  StatusOr<Shape> shape = builder_.GetShape(op);
  if (shape.ok()) value.shape = *shape;
  value.bound = value.shape.element_type() == type_ ? Saturate(bound) : bound;
  const ElementType type = value.shape.element_type();
  value.exact = IsComplex(type) ? false : exact || !IsFloating(type);
  op_count_ = std::max(op_count_, op.id() + 1);
  values_.push_back(value);
  return value;
}

void GraphContext::Use(const Value& value) {
  for (Value& candidate : values_) {
    if (candidate.op.id() == value.op.id()) candidate.used = true;
  }
}

Value GraphContext::Pick(const std::function<bool(const Value&)>& filter) {
  std::vector<size_t> matches;
  for (size_t i = 0; i < values_.size(); ++i) {
    const Value& value = values_[i];
    if (value.shape.element_type() == type_ && (!filter || filter(value))) matches.push_back(i);
  }
  // Prefer values nobody consumed yet, so graphs grow deep rather than wide.
  std::vector<size_t> unused;
  for (size_t i : matches) {
    if (!values_[i].used) unused.push_back(i);
  }
  if (!unused.empty() && random_.Chance(3, 4)) return values_[random_.Pick(unused)];
  if (!matches.empty() && random_.Chance(7, 8)) return values_[random_.Pick(matches)];
  for (int attempt = 0; attempt < 16; ++attempt) {
    Value candidate;
    candidate.shape = Shape(type_, RandomDims(0, 3));
    if (!filter || filter(candidate)) return NewInput(candidate.shape, random_.Coin());
  }
  // Filters used by the families accept some rank-3 shape of sizes 1..4.
  return NewInput(Shape(type_, {2, 3, 4}), random_.Coin());
}

Value GraphContext::PickExact(const std::function<bool(const Value&)>& filter) {
  Value value =
      Pick([&](const Value& candidate) { return candidate.exact && (!filter || filter(candidate)); });
  if (value.exact) return value;
  return NewInput(value.shape, true);
}

namespace {

Value PickOrCreate(GraphContext& context, const std::vector<int64_t>& dims, bool exact_only) {
  std::vector<size_t> matches;
  const std::vector<Value>& values = context.values();
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& value = values[i];
    if (value.shape.element_type() == context.type() && value.shape.dimensions() == dims &&
        (value.exact || !exact_only)) {
      matches.push_back(i);
    }
  }
  if (!matches.empty() && context.random().Chance(3, 4)) return values[context.random().Pick(matches)];
  return context.NewInput(Shape(context.type(), dims), exact_only || context.random().Coin());
}

}  // namespace

Value GraphContext::PickWithDims(const std::vector<int64_t>& dims) {
  return PickOrCreate(*this, dims, false);
}
Value GraphContext::PickExactWithDims(const std::vector<int64_t>& dims) {
  return PickOrCreate(*this, dims, true);
}

namespace {

// Random data for one input. Small integers for exact inputs, values in
// [-2, 2) for inexact floats, arbitrary bits for "wide" integers.
Literal RandomLiteral(RandomSource& random, const Shape& shape, bool exact, double& bound) {
  Literal literal(shape);
  const ElementType type = shape.element_type();
  const int64_t count = shape.element_count();
  const bool wide_integers = IsIntegral(type) && !exact;
  bound = 0.0;
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    auto data = literal.data<T>();
    for (int64_t i = 0; i < count; ++i) {
      T element{};
      double magnitude = 0.0;
      if constexpr (std::is_same_v<T, bool>) {
        element = random.Coin();
        magnitude = 1.0;
      } else if constexpr (std::is_integral_v<T>) {
        if (wide_integers) {
          element = static_cast<T>(random.Next());
          magnitude = std::fabs(static_cast<double>(element));
        } else {
          const int64_t small = std::is_signed_v<T> ? random.Between(-8, 8) : random.Between(0, 16);
          element = static_cast<T>(small);
          magnitude = std::fabs(static_cast<double>(small));
        }
      } else if constexpr (convert_detail::IsComplexT<T>::value) {
        using R = typename T::value_type;
        const double real = exact ? static_cast<double>(random.Between(-4, 4)) : random.Real(-2.0, 2.0);
        const double imag = exact ? static_cast<double>(random.Between(-4, 4)) : random.Real(-2.0, 2.0);
        element = T(static_cast<R>(real), static_cast<R>(imag));
        magnitude = std::hypot(real, imag);
      } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                           std::is_same_v<T, bfloat16>) {
        const double real = exact ? static_cast<double>(random.Between(-4, 4)) : random.Real(-2.0, 2.0);
        element = static_cast<T>(static_cast<float>(real));
        magnitude = std::fabs(real);
      }
      data[static_cast<size_t>(i)] = element;
      bound = std::max(bound, magnitude);
    }
  });
  return literal;
}

}  // namespace

Value GraphContext::NewInput(const Shape& shape, bool exact) {
  double bound = 0.0;
  Literal literal = RandomLiteral(random_, shape, exact, bound);
  Op op;
  if (arguments_ != nullptr && random_.Chance(4, 5)) {
    const auto number = static_cast<int64_t>(arguments_->size());
    op = builder_.Parameter(number, shape, "p" + std::to_string(number));
    arguments_->push_back(std::move(literal));
  } else {
    op = builder_.ConstantLiteral(literal);
  }
  ++input_count_;
  // Integers with arbitrary bits have no useful bound.
  if (IsIntegral(shape.element_type()) && !exact) bound = std::numeric_limits<double>::infinity();
  return Record(op, bound, exact);
}

Op GraphContext::Constant(ElementType type, const std::vector<int64_t>& dims, double value) {
  Literal literal(Shape(type, dims));
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    for (T& element : literal.data<T>()) element = ConvertElement<T>(value);
  });
  return builder_.ConstantLiteral(literal);
}

Value GraphContext::Limit(const Value& value, double cap) {
  // Integer caps keep exact values integers.
  if (cap >= 1.0) cap = std::floor(cap);
  if (!IsFloating(value.shape.element_type()) || value.bound <= cap) return value;
  Use(value);
  const ElementType type = value.shape.element_type();
  Op clamped = builder_.Clamp(Constant(type, {}, -cap), value.op, Constant(type, {}, cap));
  return Record(clamped, cap, value.exact);
}

double GraphContext::ExactLimit(ElementType type) {
  switch (type) {
    case ElementType::kF16: return 2048.0;
    case ElementType::kBF16: return 256.0;
    case ElementType::kF32: return 16777216.0;
    case ElementType::kF64: return 9007199254740992.0;
    default: return std::numeric_limits<double>::infinity();
  }
}

double GraphContext::Cap() const {
  // Floats: keep values where f16/bf16 stay exact and f32/f64 far from overflow.
  switch (type_) {
    case ElementType::kF16: return 2048.0;
    case ElementType::kBF16: return 256.0;
    case ElementType::kF32:
    case ElementType::kF64: return 1.0e6;
    default: return std::numeric_limits<double>::infinity();
  }
}

double GraphContext::Saturate(double bound) const {
  if (is_pred()) return 1.0;
  if (is_int()) {
    double max = 0.0;
    DispatchElementType(type_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        max = std::max(std::fabs(static_cast<double>(std::numeric_limits<T>::lowest())),
                       static_cast<double>(std::numeric_limits<T>::max()));
      }
    });
    return std::min(bound, max);
  }
  return bound;
}

std::vector<int64_t> GraphContext::RandomDims(int64_t min_rank, int64_t max_rank) {
  const int64_t rank = random_.Between(min_rank, max_rank);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) dims.push_back(random_.Between(1, 4));
  return dims;
}

std::unique_ptr<Module> GraphContext::BinaryComputation(Opcode opcode, ElementType type) {
  Builder computation(std::string(OpcodeName(opcode)) + "_" + std::string(ElementTypeName(type)));
  Op lhs = computation.Parameter(0, Shape::Scalar(type), "lhs");
  Op rhs = computation.Parameter(1, Shape::Scalar(type), "rhs");
  computation.BinaryOp(opcode, lhs, rhs);
  StatusOr<std::unique_ptr<Module>> module = computation.Build();
  return module.ok() ? std::move(module).value() : nullptr;
}

}  // namespace kiln::differential
