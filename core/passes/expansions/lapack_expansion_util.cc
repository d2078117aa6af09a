#include "core/passes/expansions/lapack_expansion_util.h"

#include <algorithm>
#include <utility>

namespace kiln::expansions {

bool IsLapackCall(const Instruction& instruction, LapackRoutine routine) {
  if (instruction.opcode != Opcode::kCustomCall) return false;
  const BuiltinCustomCall* target = FindBuiltinCustomCall(instruction.attrs.custom_call_target);
  return target != nullptr && target->routine == routine;
}

StatusOr<MatrixBatchShape> MatrixOperand(const Instruction& instruction, size_t index) {
  const BuiltinCustomCall* target = FindBuiltinCustomCall(instruction.attrs.custom_call_target);
  if (target == nullptr) return CannotExpand(instruction, "it is not a built-in LAPACK target");
  if (index >= instruction.operands.size()) {
    return CannotExpand(instruction, "it has ", instruction.operands.size(), " operand(s), operand ", index,
                        " is missing");
  }
  const Shape& shape = instruction.operand(index)->shape;
  if (!shape.IsArray() || shape.element_type() != target->type || shape.rank() < 2) {
    return CannotExpand(instruction, "operand ", index, " is ", shape.ToString(), ", not a batch of ",
                        ElementTypeName(target->type), " matrices");
  }
  MatrixBatchShape matrices;
  matrices.type = target->type;
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) {
    matrices.batch_dims.push_back(shape.dimensions(d));
    matrices.batch *= shape.dimensions(d);
  }
  matrices.rows = shape.dimensions(shape.rank() - 2);
  matrices.cols = shape.dimensions(shape.rank() - 1);
  return matrices;
}

StatusOr<char> LetterAttribute(const Instruction& instruction, const std::string& name,
                               std::string_view allowed) {
  StatusOr<std::map<std::string, int64_t>> attributes =
      ParseFfiIntegerAttributes(instruction.attrs.backend_config);
  if (!attributes.ok()) return CannotExpand(instruction, attributes.status().message());
  auto it = attributes->find(name);
  if (it == attributes->end()) return CannotExpand(instruction, "the attribute '", name, "' is missing");
  for (char letter : allowed) {
    if (it->second == letter) return letter;
  }
  return CannotExpand(instruction, "attribute ", name, " = ", it->second, " is none of the letters '",
                      allowed, "'");
}

Op ScalarOf(Builder& builder, ElementType type, double value) {
  switch (type) {
    case ElementType::kF32: return builder.ConstantR0<float>(static_cast<float>(value));
    case ElementType::kF64: return builder.ConstantR0<double>(value);
    case ElementType::kC64: return builder.ConstantR0<complex64>(complex64(static_cast<float>(value), 0.0f));
    case ElementType::kC128: return builder.ConstantR0<complex128>(complex128(value, 0.0));
    case ElementType::kS32: return builder.ConstantR0<int32_t>(static_cast<int32_t>(value));
    default: return builder.ConvertElementType(builder.ConstantR0<double>(value), type);
  }
}

Op Filled(Builder& builder, ElementType type, double value, std::span<const int64_t> dims) {
  return builder.BroadcastInDim(ScalarOf(builder, type, value), dims, {});
}

Op IndexGrid(Builder& builder, std::span<const int64_t> dims, int64_t dimension) {
  return builder.Iota(Shape(ElementType::kS32, std::vector<int64_t>(dims.begin(), dims.end())), dimension);
}

Op Conjugate(Builder& builder, Op x, ElementType type) {
  if (!IsComplex(type)) return x;
  return builder.Complex(builder.Real(x), builder.Neg(builder.Imag(x)));
}

Op Adjoint(Builder& builder, Op x, ElementType type) {
  const int64_t swap[] = {0, 2, 1};
  return Conjugate(builder, builder.Transpose(x, swap), type);
}

Op TriangleMask(Builder& builder, std::span<const int64_t> dims, bool lower) {
  Op rows = IndexGrid(builder, dims, 1);
  Op cols = IndexGrid(builder, dims, 2);
  return lower ? builder.Ge(rows, cols) : builder.Le(rows, cols);
}

StatusOr<std::unique_ptr<Module>> ScalarComputation(Opcode opcode, ElementType type) {
  Builder builder(std::string(OpcodeName(opcode)) + "_" + std::string(ElementTypeName(type)));
  Op lhs = builder.Parameter(0, Shape::Scalar(type), "lhs");
  Op rhs = builder.Parameter(1, Shape::Scalar(type), "rhs");
  builder.BinaryOp(opcode, lhs, rhs);
  return builder.Build();
}

int64_t PanelWidth(int64_t order) {
  if (order <= 32) return std::max<int64_t>(order, 1);
  return order < 2048 ? 32 : 64;
}

int64_t RoundedUp(int64_t order, int64_t width) { return (order + width - 1) / width * width; }

Op PaddedMatrices(Builder& builder, Op x, ElementType type, std::span<const int64_t> dims, int64_t rows_to,
                  int64_t cols_to, bool unit_diagonal) {
  if (dims[1] == rows_to && dims[2] == cols_to) return x;
  const PaddingDimension padding[] = {{0, 0, 0}, {0, rows_to - dims[1], 0}, {0, cols_to - dims[2], 0}};
  Op padded = builder.Pad(x, ScalarOf(builder, type, 0), padding);
  if (!unit_diagonal) return padded;
  const int64_t padded_dims[] = {dims[0], rows_to, cols_to};
  Op rows = IndexGrid(builder, padded_dims, 1);
  Op added_diagonal =
      builder.And(builder.Eq(rows, IndexGrid(builder, padded_dims, 2)),
                  builder.Ge(rows, builder.ConstantR0<int32_t>(static_cast<int32_t>(dims[1]))));
  return builder.Select(added_diagonal, Filled(builder, type, 1, padded_dims), padded);
}

StatusOr<Op> UnitLowerInverse(Builder& builder, Op lower, ElementType type, int64_t batch, int64_t width) {
  const int64_t square[] = {batch, width, width};
  Op identity = builder.Select(builder.Eq(IndexGrid(builder, square, 1), IndexGrid(builder, square, 2)),
                               Filled(builder, type, 1, square), Filled(builder, type, 0, square));
  // Row s of L^-1 is e_s - L[s, :s] L^-1[:s, :]; rows before s are final.
  // L[s, :] is masked to its first s entries, so the dot reads only those.
  auto row_step = [&](Builder& b, Op s, const std::vector<Op>& state) -> std::vector<Op> {
    Op inverse = state[0], l = state[1];
    const std::vector<int64_t> row_dims = {batch, width};
    Op zero = b.ConstantR0<int32_t>(0);
    const Op row_at[] = {zero, s, zero};
    const int64_t one_row[] = {batch, 1, width};
    Op l_row = b.Reshape(b.DynamicSlice(l, row_at, one_row), row_dims);
    Op columns = IndexGrid(b, row_dims, 1);
    Op s_columns = b.BroadcastInDim(s, row_dims, {});
    Op known = b.Select(b.Lt(columns, s_columns), l_row, Filled(b, type, 0, row_dims));
    DotDimensionNumbers row_times_matrix;
    row_times_matrix.lhs_contracting_dimensions = {1};
    row_times_matrix.rhs_contracting_dimensions = {1};
    row_times_matrix.lhs_batch_dimensions = {0};
    row_times_matrix.rhs_batch_dimensions = {0};
    Op product = b.DotGeneral(known, inverse, row_times_matrix);  // [batch, width]
    Op unit = b.Select(b.Eq(columns, s_columns), Filled(b, type, 1, row_dims), Filled(b, type, 0, row_dims));
    const int64_t batch_and_column[] = {0, 2};
    Op is_row = b.Eq(IndexGrid(b, square, 1), b.BroadcastInDim(s, square, {}));
    return {b.Select(is_row, b.BroadcastInDim(b.Sub(unit, product), square, batch_and_column), inverse), l};
  };
  KILN_ASSIGN_OR_RETURN(std::vector<Op> rows, PanelColumnLoop(builder, width, {identity, lower}, row_step));
  return rows[0];
}

Op RowAt(Builder& builder, Op matrices, ElementType type, std::span<const int64_t> dims, Op row,
         const Module& add) {
  const int64_t along_batch[] = {0};
  const int64_t over_rows[] = {1};
  Op is_row = builder.Eq(IndexGrid(builder, dims, 1), builder.BroadcastInDim(row, dims, along_batch));
  return builder.Reduce(builder.Select(is_row, matrices, Filled(builder, type, 0, dims)),
                        ScalarOf(builder, type, 0), add, over_rows);
}

StatusOr<std::vector<Op>> CountedLoop(Builder& builder, int64_t trips, const std::vector<Op>& init,
                                      const LoopBody& body) {
  std::vector<Shape> shapes = {Shape::Scalar(ElementType::kS32)};
  for (Op op : init) {
    KILN_ASSIGN_OR_RETURN(Shape shape, builder.GetShape(op));
    shapes.push_back(std::move(shape));
  }
  const Shape state = Shape::Tuple(shapes);

  Builder condition(builder.name() + "_condition");
  condition.Lt(condition.GetTupleElement(condition.Parameter(0, state, "state"), 0),
               condition.ConstantR0<int32_t>(static_cast<int32_t>(trips)));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> condition_module, condition.Build());

  Builder step(builder.name() + "_body");
  Op parameter = step.Parameter(0, state, "state");
  Op trip = step.GetTupleElement(parameter, 0);
  std::vector<Op> current;
  for (size_t i = 0; i < init.size(); ++i) current.push_back(step.GetTupleElement(parameter, int64_t(i) + 1));
  std::vector<Op> next = body(step, trip, current);
  if (next.size() != init.size()) {
    return Internal("loop body of ", builder.name(), " returned ", next.size(), " values for ", init.size());
  }
  next.insert(next.begin(), step.Add(trip, step.ConstantR0<int32_t>(1)));
  Op root = step.Tuple(next);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> body_module, step.Build(root));

  std::vector<Op> start = {builder.ConstantR0<int32_t>(0)};
  start.insert(start.end(), init.begin(), init.end());
  Op loop = builder.While(*condition_module, *body_module, builder.Tuple(start));
  std::vector<Op> result;
  for (size_t i = 0; i < init.size(); ++i) result.push_back(builder.GetTupleElement(loop, int64_t(i) + 1));
  KILN_RETURN_IF_ERROR(builder.first_error());
  return result;
}

StatusOr<std::vector<Op>> PanelColumnLoop(Builder& builder, int64_t columns, const std::vector<Op>& init,
                                          const LoopBody& step) {
  const int64_t unrolled = columns % kColumnsPerInnerTrip == 0 ? kColumnsPerInnerTrip : columns;
  auto trip = [&](Builder& b, Op k, const std::vector<Op>& state) -> std::vector<Op> {
    std::vector<Op> current = state;
    Op first_column = b.Mul(k, b.ConstantR0<int32_t>(static_cast<int32_t>(unrolled)));
    for (int64_t c = 0; c < unrolled; ++c) {
      current = step(b, b.Add(first_column, b.ConstantR0<int32_t>(static_cast<int32_t>(c))), current);
    }
    return current;
  };
  return CountedLoop(builder, columns / unrolled, init, trip);
}

}  // namespace kiln::expansions
