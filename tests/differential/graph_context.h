// The state of one graph under construction: the builder, the random source,
// the pool of values built so far (with what is known about their range and
// exactness), and helpers every op family shares.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/builder.h"
#include "core/literal.h"
#include "core/shape.h"
#include "tests/differential/random_source.h"

namespace kiln::differential {

// One array value of the graph.
struct Value {
  Op op;
  Shape shape;
  // Upper bound on |element| (for integers, saturated at the type's range).
  double bound = 0.0;
  // For floats: a small integer computed without rounding, so every backend
  // must produce it bit for bit. Integers and pred are always exact.
  bool exact = true;
  bool used = false;
};

class GraphContext {
 public:
  // `arguments` receives the data of new parameters; null means new inputs
  // become constants (inside nested computations).
  GraphContext(Builder& builder, RandomSource& random, ElementType type, std::vector<Literal>* arguments);

  Builder& builder() { return builder_; }
  RandomSource& random() { return random_; }
  ElementType type() const { return type_; }
  bool is_float() const;
  bool is_pred() const { return type_ == ElementType::kPred; }
  bool is_int() const;
  // Number of ops added to the builder up to the last recorded value.
  int64_t op_count() const { return op_count_; }

  std::vector<Value>& values() { return values_; }
  // Adds `op` (shape from the builder) to the pool and returns a copy of it.
  Value Record(Op op, double bound, bool exact);
  // Marks a value of the pool as consumed by another op.
  void Use(const Value& value);

  // A random value of the main type satisfying `filter`, or a new input of a
  // random shape when none does and `filter` accepts that shape.
  Value Pick(const std::function<bool(const Value&)>& filter = nullptr);
  // A value of the main type with exactly these dimensions: one from the
  // pool, or a new input.
  Value PickWithDims(const std::vector<int64_t>& dims);
  Value PickExact(const std::function<bool(const Value&)>& filter = nullptr);
  // PickWithDims restricted to exact values.
  Value PickExactWithDims(const std::vector<int64_t>& dims);

  // A new parameter (or constant) of `shape` (any element type) with random
  // data: small integers when `exact`, else values in [-2, 2) or, for
  // integers, any bits.
  Value NewInput(const Shape& shape, bool exact);
  Value NewInput(const std::vector<int64_t>& dims) { return NewInput(Shape(type_, dims), random_.Coin()); }
  // A constant of `type` and `dims` filled with `value`.
  Op Constant(ElementType type, const std::vector<int64_t>& dims, double value);
  Op ScalarConstant(double value) { return Constant(type_, {}, value); }

  // Clamps `value` into [-cap, cap] when its bound exceeds `cap` (floats
  // only); keeps exactness.
  Value Limit(const Value& value, double cap);
  // Largest magnitude below which integers are exact in the main type (floats),
  // and the cap that keeps products and sums away from overflow.
  double ExactLimit() const { return ExactLimit(type_); }
  static double ExactLimit(ElementType type);
  double Cap() const;
  // Exact iff both inputs are and the bound stays within ExactLimit.
  bool StaysExact(bool inputs_exact, double bound) const {
    return inputs_exact && (!is_float() || bound <= ExactLimit());
  }
  // A bound saturated at the range of the main type.
  double Saturate(double bound) const;

  // Random dims for a new array: rank in [min_rank, max_rank], sizes 1..4.
  std::vector<int64_t> RandomDims(int64_t min_rank, int64_t max_rank);

  // Scalar computation (lhs, rhs) -> opcode(lhs, rhs) of `type`.
  std::unique_ptr<Module> BinaryComputation(Opcode opcode, ElementType type);

 private:
  Builder& builder_;
  RandomSource& random_;
  ElementType type_;
  std::vector<Literal>* arguments_;
  std::vector<Value> values_;
  int64_t op_count_ = 0;
  int64_t input_count_ = 0;
};

}  // namespace kiln::differential
