#include "core/passes/expansions/matrix_batch_ops.h"

#include <complex>
#include <numeric>
#include <utility>

namespace kiln::matrix_batch {
namespace {

// (lhs, rhs) -> lhs `opcode` rhs on scalars of `type`, for reduces.
std::unique_ptr<Module> ScalarCombiner(ElementType type, Opcode opcode) {
  Builder builder("combine");
  const Shape scalar(type, {});
  builder.BinaryOp(opcode, builder.Parameter(0, scalar, "lhs"), builder.Parameter(1, scalar, "rhs"));
  StatusOr<std::unique_ptr<Module>> module = builder.Build();
  return module.ok() ? std::move(module).value() : nullptr;
}

ElementType ElementTypeOf(Builder& builder, Op op) {
  StatusOr<Shape> shape = builder.GetShape(op);
  return shape.ok() ? shape->element_type() : ElementType::kF32;
}

std::vector<int64_t> DimsOf(Builder& builder, Op op) {
  StatusOr<Shape> shape = builder.GetShape(op);
  return shape.ok() ? shape->dimensions() : std::vector<int64_t>{};
}

}  // namespace

const BuiltinCustomCall* LapackTargetOf(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kCustomCall) return nullptr;
  return FindBuiltinCustomCall(instruction.attrs.custom_call_target);
}

std::vector<int64_t> MatrixBatchShape::Dims(std::vector<int64_t> trailing) const {
  std::vector<int64_t> dims = batch;
  dims.insert(dims.end(), trailing.begin(), trailing.end());
  return dims;
}

std::vector<int64_t> MatrixBatchShape::BatchAxes() const {
  std::vector<int64_t> axes(batch.size());
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

ElementType MatrixBatchShape::real_type() const {
  return IsComplex(type) ? ComplexComponentType(type) : type;
}

StatusOr<MatrixBatchShape> MatrixOperand(const Instruction& instruction, size_t index) {
  if (index >= instruction.operands.size()) return expansions::CannotExpand(instruction, "too few operands");
  const Shape& shape = instruction.operands[index]->shape;
  if (!shape.IsArray() || shape.rank() < 2) {
    return expansions::CannotExpand(instruction, "operand " + std::to_string(index) + " is " +
                                                     shape.ToString() + ", not a batch of matrices");
  }
  MatrixBatchShape matrices;
  matrices.type = shape.element_type();
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) matrices.batch.push_back(shape.dimensions(d));
  matrices.rows = shape.dimensions(shape.rank() - 2);
  matrices.cols = shape.dimensions(shape.rank() - 1);
  return matrices;
}

Op Conjugate(Builder& builder, Op x) {
  if (!IsComplex(ElementTypeOf(builder, x))) return x;
  return builder.Complex(builder.Real(x), builder.Neg(builder.Imag(x)));
}

Op AbsSquared(Builder& builder, Op x) {
  if (!IsComplex(ElementTypeOf(builder, x))) return builder.Mul(x, x);
  Op re = builder.Real(x);
  Op im = builder.Imag(x);
  return builder.Add(builder.Mul(re, re), builder.Mul(im, im));
}

Op RealAs(Builder& builder, Op real, ElementType type) {
  if (!IsComplex(type)) return real;
  return builder.Complex(
      real, builder.BroadcastInDim(expansions::ScalarOf(builder, ElementTypeOf(builder, real), 0.0),
                                   DimsOf(builder, real), {}));
}

Op RealPart(Builder& builder, Op x) { return IsComplex(ElementTypeOf(builder, x)) ? builder.Real(x) : x; }

Op ImagPart(Builder& builder, Op x, std::span<const int64_t> dims) {
  const ElementType type = ElementTypeOf(builder, x);
  if (IsComplex(type)) return builder.Imag(x);
  return expansions::Filled(builder, type, 0.0, dims);
}

Op SumOver(Builder& builder, Op x, int64_t axis) {
  const ElementType type = ElementTypeOf(builder, x);
  std::unique_ptr<Module> add = ScalarCombiner(type, Opcode::kAdd);
  const int64_t axes[] = {axis};
  return builder.Reduce(x, expansions::ScalarOf(builder, type, 0.0), *add, axes);
}

Op MaxOver(Builder& builder, Op x, std::span<const int64_t> axes) {
  const ElementType type = ElementTypeOf(builder, x);
  std::unique_ptr<Module> max = ScalarCombiner(type, Opcode::kMaximum);
  return builder.Reduce(x, expansions::ScalarOf(builder, type, 0.0), *max, axes);
}

Op Column(Builder& builder, Op matrices, const MatrixBatchShape& shape, Op index) {
  Op zero = builder.ConstantR0<int32_t>(0);
  std::vector<Op> starts(shape.batch.size() + 1, zero);
  starts.push_back(index);
  Op slice = builder.DynamicSlice(matrices, starts, shape.Dims({shape.rows, 1}));
  return builder.Reshape(slice, shape.Dims({shape.rows}));
}

Op WithColumn(Builder& builder, Op matrices, const MatrixBatchShape& shape, Op column, Op index) {
  Op zero = builder.ConstantR0<int32_t>(0);
  std::vector<Op> starts(shape.batch.size() + 1, zero);
  starts.push_back(index);
  return builder.DynamicUpdateSlice(matrices, builder.Reshape(column, shape.Dims({shape.rows, 1})), starts);
}

Op Entry(Builder& builder, Op vectors, const MatrixBatchShape& shape, int64_t /*length*/, Op index) {
  Op zero = builder.ConstantR0<int32_t>(0);
  std::vector<Op> starts(shape.batch.size(), zero);
  starts.push_back(index);
  Op slice = builder.DynamicSlice(vectors, starts, shape.Dims({1}));
  return builder.Reshape(slice, shape.batch);
}

Op WithEntry(Builder& builder, Op vectors, const MatrixBatchShape& shape, Op values, Op index) {
  Op zero = builder.ConstantR0<int32_t>(0);
  std::vector<Op> starts(shape.batch.size(), zero);
  starts.push_back(index);
  return builder.DynamicUpdateSlice(vectors, builder.Reshape(values, shape.Dims({1})), starts);
}

Op Identities(Builder& builder, const MatrixBatchShape& shape) {
  const std::vector<int64_t> dims = shape.Dims({shape.rows, shape.cols});
  const int64_t nb = shape.batch_rank();
  return builder.Select(
      builder.Eq(expansions::IndexGrid(builder, dims, nb), expansions::IndexGrid(builder, dims, nb + 1)),
      expansions::Filled(builder, shape.type, 1.0, dims), expansions::Filled(builder, shape.type, 0.0, dims));
}

Op Outer(Builder& builder, Op a, Op b, const MatrixBatchShape& shape) {
  const std::vector<int64_t> dims = shape.Dims({shape.rows, shape.cols});
  std::vector<int64_t> a_axes = shape.BatchAxes();
  std::vector<int64_t> b_axes = a_axes;
  a_axes.push_back(shape.batch_rank());
  b_axes.push_back(shape.batch_rank() + 1);
  return builder.Mul(builder.BroadcastInDim(a, dims, a_axes), builder.BroadcastInDim(b, dims, b_axes));
}

Op Adjoint(Builder& builder, Op matrices, const MatrixBatchShape& shape) {
  std::vector<int64_t> permutation = shape.BatchAxes();
  permutation.push_back(shape.batch_rank() + 1);
  permutation.push_back(shape.batch_rank());
  return Conjugate(builder, builder.Transpose(matrices, permutation));
}

Reflector MakeReflector(Builder& builder, Op column, const MatrixBatchShape& shape, Op pivot) {
  const std::vector<int64_t> dims = shape.Dims({shape.rows});
  const std::vector<int64_t> batch_axes = shape.BatchAxes();
  const int64_t nb = shape.batch_rank();
  const ElementType real = shape.real_type();
  auto spread = [&](Op per_matrix) { return builder.BroadcastInDim(per_matrix, dims, batch_axes); };
  Op row = expansions::IndexGrid(builder, dims, nb);
  Op at = builder.Eq(row, pivot);
  Op below = builder.Gt(row, pivot);
  Op zeros = expansions::Filled(builder, shape.type, 0.0, dims);
  Op tail = builder.Select(below, column, zeros);
  Op alpha = SumOver(builder, builder.Select(at, column, zeros), nb);
  Op tail_norm2 = SumOver(builder, AbsSquared(builder, tail), nb);
  Op alpha_re = RealPart(builder, alpha);
  Op alpha_im = ImagPart(builder, alpha, shape.batch);
  Op norm = builder.Sqrt(builder.Add(AbsSquared(builder, alpha), tail_norm2));
  // Fortran's SIGN(norm, Re alpha): +norm for Re alpha >= 0.
  Op real_zero = expansions::ScalarOf(builder, real, 0.0);
  Op beta_real = builder.Select(builder.Ge(alpha_re, real_zero), builder.Neg(norm), norm);
  Op identity = builder.And(builder.Eq(tail_norm2, real_zero), builder.Eq(alpha_im, real_zero));
  Op beta = RealAs(builder, beta_real, shape.type);
  Op batch_zeros = expansions::Filled(builder, shape.type, 0.0, shape.batch);
  Op tau = builder.Select(identity, batch_zeros, builder.Div(builder.Sub(beta, alpha), beta));
  // ?larfg scales the tail by 1 / (alpha - beta).
  Op scale =
      builder.Select(identity, batch_zeros,
                     builder.Div(expansions::ScalarOf(builder, shape.type, 1.0), builder.Sub(alpha, beta)));
  Op v_tail = builder.Mul(tail, spread(scale));
  Reflector reflector;
  reflector.v = builder.Select(at, expansions::Filled(builder, shape.type, 1.0, dims), v_tail);
  reflector.tau = tau;
  Op kept_beta = builder.Select(identity, alpha, beta);
  reflector.stored = builder.Select(at, spread(kept_beta), builder.Select(below, v_tail, column));
  return reflector;
}

Op ApplyFromLeft(Builder& builder, Op matrices, const MatrixBatchShape& shape, Op v, Op scale, Op after) {
  const std::vector<int64_t> dims = shape.Dims({shape.rows, shape.cols});
  const int64_t nb = shape.batch_rank();
  std::vector<int64_t> v_axes = shape.BatchAxes();
  v_axes.push_back(nb);
  Op projections = SumOver(
      builder, builder.Mul(builder.BroadcastInDim(Conjugate(builder, v), dims, v_axes), matrices), nb);
  Op update = builder.Mul(Outer(builder, v, projections, shape),
                          builder.BroadcastInDim(scale, dims, shape.BatchAxes()));
  Op columns = builder.Gt(expansions::IndexGrid(builder, dims, nb + 1), after);
  return builder.Sub(matrices,
                     builder.Select(columns, update, expansions::Filled(builder, shape.type, 0.0, dims)));
}

StatusOr<std::vector<Op>> RunLoop(Builder& builder, const CountingLoop& loop, std::span<const Op> initial) {
  std::vector<Shape> state_shapes = {Shape(ElementType::kS32, {})};
  state_shapes.insert(state_shapes.end(), loop.value_shapes.begin(), loop.value_shapes.end());
  const Shape state = Shape::Tuple(state_shapes);
  auto unpack = [&](Builder& b, Op tuple, std::vector<Op>& values) {
    for (size_t i = 0; i < loop.value_shapes.size(); ++i)
      values.push_back(b.GetTupleElement(tuple, static_cast<int64_t>(i) + 1));
    return b.GetTupleElement(tuple, 0);
  };
  Builder condition_builder("loop_condition");
  {
    std::vector<Op> values;
    Op counter = unpack(condition_builder, condition_builder.Parameter(0, state, "state"), values);
    loop.keep_going(condition_builder, counter, values);
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> condition, condition_builder.Build());
  Builder body_builder("loop_body");
  {
    std::vector<Op> values;
    Op counter = unpack(body_builder, body_builder.Parameter(0, state, "state"), values);
    std::vector<Op> next = {
        body_builder.Add(counter, body_builder.ConstantR0<int32_t>(static_cast<int32_t>(loop.step)))};
    std::vector<Op> computed = loop.body(body_builder, counter, values);
    next.insert(next.end(), computed.begin(), computed.end());
    body_builder.Tuple(next);
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> body, body_builder.Build());
  std::vector<Op> init = {builder.ConstantR0<int32_t>(static_cast<int32_t>(loop.first))};
  init.insert(init.end(), initial.begin(), initial.end());
  Op result = builder.While(*condition, *body, builder.Tuple(init));
  std::vector<Op> values;
  for (size_t i = 0; i < loop.value_shapes.size(); ++i)
    values.push_back(builder.GetTupleElement(result, static_cast<int64_t>(i) + 1));
  return values;
}

}  // namespace kiln::matrix_batch
