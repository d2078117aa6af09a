// Householder QR (?geqrf), the Q it implies (?orgqr / ?ungqr) and the
// Hessenberg reduction (?gehrd) as loops over columns of ordinary HLO: each
// trip builds one reflector with LAPACK's ?larfg convention
// (MakeReflector) and applies it to the whole batch at once, so the packed
// factors and the scales are LAPACK's within rounding (the unblocked
// ?geqr2 / ?org2r / ?gehd2 algorithms, which the blocked routines equal in
// exact arithmetic).
#include <algorithm>
#include <iterator>
#include <string>

#include "core/passes/expansions/expansions.h"
#include "core/passes/expansions/householder.h"
#include "core/passes/expansions/matrix_batch_ops.h"

namespace kiln {
namespace {

bool CallsQrFamilyRoutine(const Instruction& instruction, LapackRoutine routine) {
  const BuiltinCustomCall* target = matrix_batch::LapackTargetOf(instruction);
  return target != nullptr && target->routine == routine;
}

Status CheckQrFamilyTuple(const Instruction& instruction, size_t count) {
  if (!instruction.shape.IsTuple() || instruction.shape.tuple_shapes().size() != count)
    return expansions::CannotExpand(instruction, "its result is not a tuple of " + std::to_string(count));
  return OkStatus();
}

}  // namespace

bool MatchesGeqrf(const Instruction& instruction) {
  return CallsQrFamilyRoutine(instruction, LapackRoutine::kGeqrf);
}
bool MatchesOrgqr(const Instruction& instruction) {
  return CallsQrFamilyRoutine(instruction, LapackRoutine::kOrgqr);
}
bool MatchesGehrd(const Instruction& instruction) {
  return CallsQrFamilyRoutine(instruction, LapackRoutine::kGehrd);
}

StatusOr<std::vector<Op>> HouseholderFactor(Builder& builder, Op a,
                                            const matrix_batch::MatrixBatchShape& shape) {
  const int64_t reflectors = std::min(shape.rows, shape.cols);
  const Shape matrices(shape.type, shape.Dims({shape.rows, shape.cols}));
  const Shape scales(shape.type, shape.Dims({reflectors}));
  matrix_batch::CountingLoop loop;
  loop.value_shapes = {matrices, scales};
  loop.keep_going = [&](Builder& b, Op j, std::span<const Op>) {
    return b.Lt(j, b.ConstantR0<int32_t>(static_cast<int32_t>(reflectors)));
  };
  loop.body = [&](Builder& b, Op j, std::span<const Op> values) {
    Op column = matrix_batch::Column(b, values[0], shape, j);
    matrix_batch::Reflector h = matrix_batch::MakeReflector(b, column, shape, j);
    // ?geqr2 applies H^H = I - conj(tau) v v^H to the columns right of j.
    Op applied = matrix_batch::ApplyFromLeft(b, values[0], shape, h.v, matrix_batch::Conjugate(b, h.tau), j);
    return std::vector<Op>{matrix_batch::WithColumn(b, applied, shape, h.stored, j),
                           matrix_batch::WithEntry(b, values[1], shape, h.tau, j)};
  };
  const Op initial[] = {a, expansions::Filled(builder, shape.type, 0.0, scales.dimensions())};
  return matrix_batch::RunLoop(builder, loop, initial);
}

StatusOr<Op> HouseholderProduct(Builder& builder, Op a, Op taus, const matrix_batch::MatrixBatchShape& shape,
                                int64_t reflectors) {
  if (reflectors == 0) return matrix_batch::Identities(builder, shape);
  const Shape matrices(shape.type, shape.Dims({shape.rows, shape.cols}));
  // Q = H(0) ... H(k-1) I: the reflectors applied last to first (?org2r).
  // Columns left of i hold e_c then, which H(i) leaves alone (v(c) = 0).
  matrix_batch::CountingLoop loop;
  loop.value_shapes = {matrices, matrices, Shape(shape.type, shape.Dims({reflectors}))};
  loop.first = reflectors - 1;
  loop.step = -1;
  loop.keep_going = [&](Builder& b, Op i, std::span<const Op>) { return b.Ge(i, b.ConstantR0<int32_t>(0)); };
  loop.body = [&](Builder& b, Op i, std::span<const Op> values) {
    const std::vector<int64_t> dims = shape.Dims({shape.rows});
    Op row = expansions::IndexGrid(b, dims, shape.batch_rank());
    Op column = matrix_batch::Column(b, values[1], shape, i);
    Op zeros = expansions::Filled(b, shape.type, 0.0, dims);
    Op v = b.Select(b.Eq(row, i), expansions::Filled(b, shape.type, 1.0, dims),
                    b.Select(b.Gt(row, i), column, zeros));
    Op tau = matrix_batch::Entry(b, values[2], shape, reflectors, i);
    Op q = matrix_batch::ApplyFromLeft(b, values[0], shape, v, tau, b.ConstantR0<int32_t>(-1));
    return std::vector<Op>{q, values[1], values[2]};
  };
  const Op initial[] = {matrix_batch::Identities(builder, shape), a, taus};
  KILN_ASSIGN_OR_RETURN(std::vector<Op> result, matrix_batch::RunLoop(builder, loop, initial));
  return result[0];
}

StatusOr<std::unique_ptr<Module>> ExpandGeqrf(const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(matrix_batch::MatrixBatchShape shape, matrix_batch::MatrixOperand(instruction, 0));
  KILN_RETURN_IF_ERROR(CheckQrFamilyTuple(instruction, 2));
  const int64_t reflectors = std::min(shape.rows, shape.cols);
  const Shape scales(shape.type, shape.Dims({reflectors}));
  if (!instruction.shape.tuple_shapes(1).Compatible(scales))
    return expansions::CannotExpand(instruction, "its scales are not " + scales.ToString());
  if (reflectors == 0) return expansions::CannotExpand(instruction, "the matrices are empty");
  Builder builder("geqrf");
  Op a = builder.Parameter(0, instruction.operands[0]->shape, "a");
  KILN_ASSIGN_OR_RETURN(std::vector<Op> result, HouseholderFactor(builder, a, shape));
  builder.Tuple(result);
  return builder.Build();
}

StatusOr<std::unique_ptr<Module>> ExpandOrgqr(const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(matrix_batch::MatrixBatchShape shape, matrix_batch::MatrixOperand(instruction, 0));
  if (instruction.operands.size() != 2) return expansions::CannotExpand(instruction, "it takes two operands");
  const Shape& scales = instruction.operands[1]->shape;
  if (!scales.IsArray() || scales.rank() != shape.batch_rank() + 1 || scales.element_type() != shape.type)
    return expansions::CannotExpand(instruction,
                                    "operand 1 " + scales.ToString() + " is not a batch of scales");
  const int64_t reflectors = scales.dimensions(scales.rank() - 1);
  if (shape.cols > shape.rows || reflectors > shape.cols)
    return expansions::CannotExpand(instruction, "it needs rows >= columns >= reflectors");
  Builder builder("orgqr");
  Op a = builder.Parameter(0, instruction.operands[0]->shape, "a");
  Op taus = builder.Parameter(1, scales, "taus");
  KILN_ASSIGN_OR_RETURN(Op q, HouseholderProduct(builder, a, taus, shape, reflectors));
  return builder.Build(q);
}

namespace {

// ?gehd2 on the whole of each n x n matrix: {the reduced matrix with the
// reflectors below its subdiagonal, the n - 1 scales}.
StatusOr<std::vector<Op>> HessenbergReduction(Builder& builder, Op a,
                                              const matrix_batch::MatrixBatchShape& shape) {
  const int64_t n = shape.rows;
  const int64_t count = std::max<int64_t>(0, n - 1);
  const Shape scales(shape.type, shape.Dims({count}));
  matrix_batch::CountingLoop loop;
  loop.value_shapes = {Shape(shape.type, shape.Dims({n, n})), scales};
  loop.keep_going = [&](Builder& b, Op i, std::span<const Op>) {
    return b.Lt(i, b.ConstantR0<int32_t>(static_cast<int32_t>(count)));
  };
  loop.body = [&](Builder& b, Op i, std::span<const Op> values) {
    const int64_t nb = shape.batch_rank();
    const std::vector<int64_t> dims = shape.Dims({n, n});
    Op pivot = b.Add(i, b.ConstantR0<int32_t>(1));
    Op column = matrix_batch::Column(b, values[0], shape, i);
    matrix_batch::Reflector h = matrix_batch::MakeReflector(b, column, shape, pivot);
    // ?gehd2: A H(i) (all rows; v is zero up to row i, so columns up to i
    // keep their values), then H(i)^H A on the columns right of i.
    std::vector<int64_t> v_as_columns = shape.BatchAxes();
    v_as_columns.push_back(nb + 1);
    Op products =
        matrix_batch::SumOver(b, b.Mul(values[0], b.BroadcastInDim(h.v, dims, v_as_columns)), nb + 1);
    Op right =
        b.Sub(values[0], b.Mul(matrix_batch::Outer(b, products, matrix_batch::Conjugate(b, h.v), shape),
                               b.BroadcastInDim(h.tau, dims, shape.BatchAxes())));
    Op both = matrix_batch::ApplyFromLeft(b, right, shape, h.v, matrix_batch::Conjugate(b, h.tau), i);
    return std::vector<Op>{matrix_batch::WithColumn(b, both, shape, h.stored, i),
                           matrix_batch::WithEntry(b, values[1], shape, h.tau, i)};
  };
  const Op initial[] = {a, expansions::Filled(builder, shape.type, 0.0, scales.dimensions())};
  // No reflector (n <= 1): the body, which writes a scale, would not fit.
  if (count == 0) return std::vector<Op>(std::begin(initial), std::end(initial));
  return matrix_batch::RunLoop(builder, loop, initial);
}

}  // namespace

StatusOr<std::unique_ptr<Module>> ExpandGehrd(const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(matrix_batch::MatrixBatchShape shape, matrix_batch::MatrixOperand(instruction, 0));
  KILN_RETURN_IF_ERROR(CheckQrFamilyTuple(instruction, 3));
  if (shape.rows != shape.cols) return expansions::CannotExpand(instruction, "the matrices are not square");
  const int64_t n = shape.rows;
  KILN_ASSIGN_OR_RETURN(auto attributes, ParseFfiIntegerAttributes(instruction.attrs.backend_config));
  auto low = attributes.find("low");
  auto high = attributes.find("high");
  if (low == attributes.end() || high == attributes.end() || low->second != 1 || high->second != n) {
    return expansions::CannotExpand(
        instruction,
        "only low = 1 and high = n (the whole matrix, as jax.scipy.linalg.hessenberg "
        "asks) are expanded");
  }
  Builder builder("gehrd");
  Op a = builder.Parameter(0, instruction.operands[0]->shape, "a");
  KILN_ASSIGN_OR_RETURN(std::vector<Op> result, HessenbergReduction(builder, a, shape));
  result.push_back(expansions::Filled(builder, ElementType::kS32, 0.0, shape.batch));
  builder.Tuple(result);
  return builder.Build();
}

bool MatchesSytrd(const Instruction& instruction) {
  return CallsQrFamilyRoutine(instruction, LapackRoutine::kSytrd);
}

// ?sytrd / ?hetrd with uplo 'L' is ?gehd2 of the Hermitian matrix the lower
// triangle stands for (the same reflectors; H^H A H is ?her2's update): the
// lower triangle gets T's diagonal (real) and subdiagonal and the reflectors,
// the upper triangle keeps the input's.
StatusOr<std::unique_ptr<Module>> ExpandSytrd(const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(matrix_batch::MatrixBatchShape shape, matrix_batch::MatrixOperand(instruction, 0));
  KILN_RETURN_IF_ERROR(CheckQrFamilyTuple(instruction, 5));
  if (shape.rows != shape.cols) return expansions::CannotExpand(instruction, "the matrices are not square");
  KILN_ASSIGN_OR_RETURN(auto attributes, ParseFfiIntegerAttributes(instruction.attrs.backend_config));
  auto uplo = attributes.find("uplo");
  if (uplo == attributes.end() || uplo->second != 'L') {
    return expansions::CannotExpand(
        instruction,
        "only uplo 'L' (lax.linalg.tridiagonal's default) is expanded; 'U' builds its "
        "reflectors from the last column up");
  }
  const int64_t n = shape.rows;
  if (n == 0) return expansions::CannotExpand(instruction, "the matrices are empty");
  const int64_t nb = shape.batch_rank();
  const std::vector<int64_t> dims = shape.Dims({n, n});
  Builder builder("sytrd");
  Op a = builder.Parameter(0, instruction.operands[0]->shape, "a");
  Op rows = expansions::IndexGrid(builder, dims, nb);
  Op cols = expansions::IndexGrid(builder, dims, nb + 1);
  Op zeros = expansions::Filled(builder, shape.type, 0.0, dims);
  Op on_diagonal = builder.Eq(rows, cols);
  Op real_diagonal = matrix_batch::RealAs(builder, matrix_batch::RealPart(builder, a), shape.type);
  Op strict = builder.Select(builder.Gt(rows, cols), a, zeros);
  Op hermitian = builder.Add(builder.Add(strict, matrix_batch::Adjoint(builder, strict, shape)),
                             builder.Select(on_diagonal, real_diagonal, zeros));
  KILN_ASSIGN_OR_RETURN(std::vector<Op> reduced, HessenbergReduction(builder, hermitian, shape));
  Op h = reduced[0];
  Op h_real_diagonal = matrix_batch::RealAs(builder, matrix_batch::RealPart(builder, h), shape.type);
  Op lower = builder.Select(on_diagonal, h_real_diagonal, h);
  Op factor = builder.Select(builder.Ge(rows, cols), lower, a);
  auto along = [&](Op mask) {
    return matrix_batch::RealPart(builder,
                                  matrix_batch::SumOver(builder, builder.Select(mask, h, zeros), nb));
  };
  Op diagonal = along(on_diagonal);
  Op below = along(builder.Eq(rows, builder.Add(cols, builder.ConstantR0<int32_t>(1))));
  Op subdiagonal = builder.SliceInDim(below, 0, n - 1, 1, nb);
  builder.Tuple(std::vector<Op>{factor, diagonal, subdiagonal, reduced[1],
                                expansions::Filled(builder, ElementType::kS32, 0.0, shape.batch)});
  return builder.Build();
}

}  // namespace kiln
