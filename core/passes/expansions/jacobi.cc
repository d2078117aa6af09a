#include "core/passes/expansions/jacobi.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace kiln::jacobi {

using matrix_batch::MatrixBatchShape;

MatrixBatchShape Reshaped(const MatrixBatchShape& shape, int64_t rows, int64_t cols) {
  MatrixBatchShape reshaped = shape;
  reshaped.rows = rows;
  reshaped.cols = cols;
  return reshaped;
}

Op Columns(Builder& b, Op x, int64_t axis, int64_t start, int64_t limit) {
  return b.SliceInDim(x, start, limit, 1, axis);
}

Op NextSeating(Builder& b, Op x, int64_t axis, int64_t h) {
  if (h == 1) return x;
  Op top = Columns(b, x, axis, 0, h);
  Op bottom = Columns(b, x, axis, h, 2 * h);
  std::vector<Op> pieces = {Columns(b, top, axis, 0, 1), Columns(b, bottom, axis, 0, 1)};
  if (h > 2) pieces.push_back(Columns(b, top, axis, 1, h - 1));
  pieces.push_back(Columns(b, bottom, axis, 1, h));
  pieces.push_back(Columns(b, top, axis, h - 1, h));
  return b.ConcatInDim(pieces, axis);
}

PairRotation RotationFor(Builder& b, Op alpha, Op beta, Op gamma, ElementType type,
                         std::span<const int64_t> pair_dims) {
  const ElementType real = IsComplex(type) ? ComplexComponentType(type) : type;
  Op g = b.Abs(gamma);
  Op zero = expansions::Filled(b, real, 0.0, pair_dims);
  Op one = expansions::Filled(b, real, 1.0, pair_dims);
  Op rotate = b.Gt(g, zero);
  Op g_safe = b.Select(rotate, g, one);
  Op zeta = b.Div(b.Sub(beta, alpha), b.Mul(g_safe, expansions::ScalarOf(b, real, 2.0)));
  Op sign = b.Select(b.Ge(zeta, zero), one, b.Neg(one));
  Op t = b.Div(sign, b.Add(b.Abs(zeta), b.Sqrt(b.Add(one, b.Mul(zeta, zeta)))));
  Op c = b.Div(one, b.Sqrt(b.Add(one, b.Mul(t, t))));
  Op s = b.Mul(c, t);
  PairRotation rotation;
  rotation.c = matrix_batch::RealAs(b, b.Select(rotate, c, one), type);
  rotation.s = matrix_batch::RealAs(b, b.Select(rotate, s, zero), type);
  rotation.phase = b.Div(gamma, matrix_batch::RealAs(b, g_safe, type));
  return rotation;
}

Op RotatePairs(Builder& b, Op x, const MatrixBatchShape& shape, int64_t h, const PairRotation& r, bool rows) {
  const int64_t nb = shape.batch_rank();
  const int64_t axis = rows ? nb : nb + 1;
  const std::vector<int64_t> dims = rows ? shape.Dims({h, shape.cols}) : shape.Dims({shape.rows, h});
  std::vector<int64_t> axes = shape.BatchAxes();
  axes.push_back(axis);
  auto spread = [&](Op per_pair) { return b.BroadcastInDim(per_pair, dims, axes); };
  // Rows take J^H from the left: the same combination with the phase
  // conjugated.
  Op phase = rows ? matrix_batch::Conjugate(b, r.phase) : r.phase;
  Op top = Columns(b, x, axis, 0, h);
  Op bottom = Columns(b, x, axis, h, 2 * h);
  Op new_top =
      b.Sub(b.Mul(spread(r.c), top), b.Mul(spread(b.Mul(r.s, matrix_batch::Conjugate(b, phase))), bottom));
  Op new_bottom = b.Add(b.Mul(spread(b.Mul(r.s, phase)), top), b.Mul(spread(r.c), bottom));
  return b.ConcatInDim(std::vector<Op>{new_top, new_bottom}, axis);
}

StatusOr<JacobiSweeps> RunJacobiSweeps(
    Builder& builder, const MatrixBatchShape& shape, Op matrix, Op rotations, int64_t seats, double tolerance,
    bool two_sided, const std::function<JacobiTrip(Builder&, Op matrix, Op rotations)>& trip) {
  const int64_t nb = shape.batch_rank();
  const int64_t h = seats / 2;
  const ElementType real = shape.real_type();
  const int64_t trips_per_sweep = std::max<int64_t>(1, seats - 1);
  KILN_ASSIGN_OR_RETURN(Shape matrix_shape, builder.GetShape(matrix));
  KILN_ASSIGN_OR_RETURN(Shape rotations_shape, builder.GetShape(rotations));
  const Shape real_scalar(real, {});
  // State: matrix, rotations, seat ids, the largest ratio of this sweep so
  // far, and of the last finished sweep.
  matrix_batch::CountingLoop loop;
  loop.value_shapes = {matrix_shape, rotations_shape, Shape(ElementType::kS32, {seats}), real_scalar,
                       real_scalar};
  loop.keep_going = [&](Builder& b, Op counter, std::span<const Op> values) {
    Op per_sweep = b.ConstantR0<int32_t>(static_cast<int32_t>(trips_per_sweep));
    Op within = b.Lt(counter, b.ConstantR0<int32_t>(static_cast<int32_t>(trips_per_sweep * kMaxSweeps)));
    Op mid_sweep = b.Ne(b.Rem(counter, per_sweep), b.ConstantR0<int32_t>(0));
    Op unconverged = b.Gt(values[4], expansions::ScalarOf(b, real, tolerance));
    return b.And(within, b.Or(mid_sweep, unconverged));
  };
  loop.body = [&](Builder& b, Op counter, std::span<const Op> values) {
    JacobiTrip rotated = trip(b, values[0], values[1]);
    Op next_matrix = NextSeating(b, rotated.matrix, nb + 1, h);
    if (two_sided) next_matrix = NextSeating(b, next_matrix, nb, h);
    Op next_rotations = NextSeating(b, rotated.rotations, nb + 1, h);
    Op next_ids = NextSeating(b, values[2], 0, h);
    std::vector<int64_t> all_axes = shape.BatchAxes();
    all_axes.push_back(nb);
    Op off = b.Max(values[3], matrix_batch::MaxOver(b, rotated.ratio, all_axes));
    Op sweep_ends = b.Eq(b.Rem(counter, b.ConstantR0<int32_t>(static_cast<int32_t>(trips_per_sweep))),
                         b.ConstantR0<int32_t>(static_cast<int32_t>(trips_per_sweep - 1)));
    Op real_zero = expansions::ScalarOf(b, real, 0.0);
    return std::vector<Op>{next_matrix, next_rotations, next_ids, b.Select(sweep_ends, real_zero, off),
                           b.Select(sweep_ends, off, values[4])};
  };
  const std::vector<int64_t> id_dims = {seats};
  const Op initial[] = {matrix, rotations, expansions::IndexGrid(builder, id_dims, 0),
                        expansions::ScalarOf(builder, real, 0.0),
                        expansions::ScalarOf(builder, real, std::numeric_limits<float>::max())};
  KILN_ASSIGN_OR_RETURN(std::vector<Op> state, matrix_batch::RunLoop(builder, loop, initial));
  return JacobiSweeps{state[0], state[1], state[2], state[4]};
}

Op NotConvergedInfo(Builder& builder, const MatrixBatchShape& shape, Op last_sweep_ratio, double eps) {
  Op failed = builder.Or(
      builder.Ne(last_sweep_ratio, last_sweep_ratio),
      builder.Gt(last_sweep_ratio, expansions::ScalarOf(builder, shape.real_type(), std::sqrt(eps))));
  return builder.BroadcastInDim(
      builder.Select(failed, builder.ConstantR0<int32_t>(1), builder.ConstantR0<int32_t>(0)), shape.batch,
      {});
}

std::vector<Op> SortByKey(Builder& b, Op key, std::vector<Op> payloads, int64_t axis, bool descending) {
  // Complex payloads travel as their real and imaginary parts.
  std::vector<Op> operands = {key};
  std::vector<bool> complex_payload;
  for (Op payload : payloads) {
    StatusOr<Shape> shape = b.GetShape(payload);
    const bool complex = shape.ok() && IsComplex(shape->element_type());
    complex_payload.push_back(complex);
    if (complex) {
      operands.push_back(b.Real(payload));
      operands.push_back(b.Imag(payload));
    } else {
      operands.push_back(payload);
    }
  }
  Builder comparator(descending ? "descending" : "ascending");
  std::vector<Op> parameters;
  for (size_t i = 0; i < operands.size(); ++i) {
    StatusOr<Shape> shape = b.GetShape(operands[i]);
    const Shape scalar(shape.ok() ? shape->element_type() : ElementType::kF32, {});
    parameters.push_back(
        comparator.Parameter(static_cast<int64_t>(2 * i), scalar, "lhs" + std::to_string(i)));
    parameters.push_back(
        comparator.Parameter(static_cast<int64_t>(2 * i + 1), scalar, "rhs" + std::to_string(i)));
  }
  if (descending) {
    comparator.Gt(parameters[0], parameters[1]);
  } else {
    comparator.Lt(parameters[0], parameters[1]);
  }
  StatusOr<std::unique_ptr<Module>> compare = comparator.Build();
  if (!compare.ok()) return {};
  Op sorted = b.Sort(operands, **compare, axis, /*is_stable=*/true);
  std::vector<Op> result;
  int64_t index = 1;
  for (bool complex : complex_payload) {
    if (complex) {
      result.push_back(b.Complex(b.GetTupleElement(sorted, index), b.GetTupleElement(sorted, index + 1)));
      index += 2;
    } else {
      result.push_back(b.GetTupleElement(sorted, index++));
    }
  }
  return result;
}

}  // namespace kiln::jacobi
