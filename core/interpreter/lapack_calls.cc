// LAPACK is called through LAPACKE (loaded on the first call:
// lapack_calls_library.h says why) with LAPACK_ROW_MAJOR: Kiln's literals
// hold each matrix row-major whatever their layout says, and LAPACKE turns
// such a matrix into the column-major one LAPACK factors (and back), so the
// results are the logical values JAX gets from its column-major buffers.
// LAPACKE also sizes every workspace. Triangular solves are BLAS (no
// LAPACKE wrapper): called through BLAS's Fortran symbol on the transposed
// problem.
#include "core/interpreter/lapack_calls.h"

#include <algorithm>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/interpreter/lapack_calls_library.h"

namespace kiln::interpreter {
namespace {

// The LAPACK routines of one element type.
template <typename T>
struct Lapack;

template <>
struct Lapack<float> {
  using Real = float;
  using Complex = complex64;
  static auto potrf(const LapackLibrary& lapack) { return lapack.spotrf; }
  static auto getrf(const LapackLibrary& lapack) { return lapack.sgetrf; }
  static auto geqrf(const LapackLibrary& lapack) { return lapack.sgeqrf; }
  static auto orgqr(const LapackLibrary& lapack) { return lapack.sorgqr; }
  static auto syevd(const LapackLibrary& lapack) { return lapack.ssyevd; }
  static auto gesdd(const LapackLibrary& lapack) { return lapack.sgesdd; }
  static auto gesvd(const LapackLibrary& lapack) { return lapack.sgesvd; }
  static auto geev(const LapackLibrary& lapack) { return lapack.sgeev; }
  static auto gees(const LapackLibrary& lapack) { return lapack.sgees; }
  static auto gehrd(const LapackLibrary& lapack) { return lapack.sgehrd; }
  static auto sytrd(const LapackLibrary& lapack) { return lapack.ssytrd; }
  static auto trsm(const LapackLibrary& lapack) { return lapack.strsm; }
};
template <>
struct Lapack<double> {
  using Real = double;
  using Complex = complex128;
  static auto potrf(const LapackLibrary& lapack) { return lapack.dpotrf; }
  static auto getrf(const LapackLibrary& lapack) { return lapack.dgetrf; }
  static auto geqrf(const LapackLibrary& lapack) { return lapack.dgeqrf; }
  static auto orgqr(const LapackLibrary& lapack) { return lapack.dorgqr; }
  static auto syevd(const LapackLibrary& lapack) { return lapack.dsyevd; }
  static auto gesdd(const LapackLibrary& lapack) { return lapack.dgesdd; }
  static auto gesvd(const LapackLibrary& lapack) { return lapack.dgesvd; }
  static auto geev(const LapackLibrary& lapack) { return lapack.dgeev; }
  static auto gees(const LapackLibrary& lapack) { return lapack.dgees; }
  static auto gehrd(const LapackLibrary& lapack) { return lapack.dgehrd; }
  static auto sytrd(const LapackLibrary& lapack) { return lapack.dsytrd; }
  static auto trsm(const LapackLibrary& lapack) { return lapack.dtrsm; }
};
template <>
struct Lapack<complex64> {
  using Real = float;
  using Complex = complex64;
  static auto potrf(const LapackLibrary& lapack) { return lapack.cpotrf; }
  static auto getrf(const LapackLibrary& lapack) { return lapack.cgetrf; }
  static auto geqrf(const LapackLibrary& lapack) { return lapack.cgeqrf; }
  static auto orgqr(const LapackLibrary& lapack) { return lapack.cungqr; }
  static auto syevd(const LapackLibrary& lapack) { return lapack.cheevd; }
  static auto gesdd(const LapackLibrary& lapack) { return lapack.cgesdd; }
  static auto gesvd(const LapackLibrary& lapack) { return lapack.cgesvd; }
  static auto geev(const LapackLibrary& lapack) { return lapack.cgeev; }
  static auto gees(const LapackLibrary& lapack) { return lapack.cgees; }
  static auto gehrd(const LapackLibrary& lapack) { return lapack.cgehrd; }
  static auto sytrd(const LapackLibrary& lapack) { return lapack.chetrd; }
  static auto trsm(const LapackLibrary& lapack) { return lapack.ctrsm; }
};
template <>
struct Lapack<complex128> {
  using Real = double;
  using Complex = complex128;
  static auto potrf(const LapackLibrary& lapack) { return lapack.zpotrf; }
  static auto getrf(const LapackLibrary& lapack) { return lapack.zgetrf; }
  static auto geqrf(const LapackLibrary& lapack) { return lapack.zgeqrf; }
  static auto orgqr(const LapackLibrary& lapack) { return lapack.zungqr; }
  static auto syevd(const LapackLibrary& lapack) { return lapack.zheevd; }
  static auto gesdd(const LapackLibrary& lapack) { return lapack.zgesdd; }
  static auto gesvd(const LapackLibrary& lapack) { return lapack.zgesvd; }
  static auto geev(const LapackLibrary& lapack) { return lapack.zgeev; }
  static auto gees(const LapackLibrary& lapack) { return lapack.zgees; }
  static auto gehrd(const LapackLibrary& lapack) { return lapack.zgehrd; }
  static auto sytrd(const LapackLibrary& lapack) { return lapack.zhetrd; }
  static auto trsm(const LapackLibrary& lapack) { return lapack.ztrsm; }
};

// One custom call being run: names what is wrong with it.
struct Call {
  const BuiltinCustomCall& target;
  const Instruction& instruction;
  std::map<std::string, int64_t> attributes;
  const LapackLibrary& lapack;

  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgument("custom-call '", instruction.name, "' (target '", target.target, "'): ", args...);
  }
};

// A batch of matrices: the leading dimensions index the matrices.
struct MatrixBatch {
  std::vector<int64_t> batch_dims;
  int64_t count = 1;
  lapack_int rows = 0;
  lapack_int cols = 0;
};

StatusOr<MatrixBatch> Matrices(const Call& call, const Shape& shape, std::string_view what) {
  if (!shape.IsArray() || shape.element_type() != call.target.type || shape.rank() < 2) {
    return call.Error(what, " is ", shape.ToString(), "; it takes a batch of ",
                      ElementTypeName(call.target.type), " matrices (rank >= 2)");
  }
  MatrixBatch batch;
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) {
    batch.batch_dims.push_back(shape.dimensions(d));
    batch.count *= shape.dimensions(d);
  }
  const int64_t rows = shape.dimensions(shape.rank() - 2);
  const int64_t cols = shape.dimensions(shape.rank() - 1);
  if (rows > std::numeric_limits<lapack_int>::max() || cols > std::numeric_limits<lapack_int>::max()) {
    return call.Error(what, " ", shape.ToString(), " has more rows or columns than LAPACK indexes");
  }
  batch.rows = static_cast<lapack_int>(rows);
  batch.cols = static_cast<lapack_int>(cols);
  return batch;
}

Shape Batched(ElementType type, const MatrixBatch& batch, std::vector<int64_t> trailing) {
  std::vector<int64_t> dims = batch.batch_dims;
  dims.insert(dims.end(), trailing.begin(), trailing.end());
  return Shape(type, std::move(dims));
}

Status CheckOperandCount(const Call& call, Operands operands, size_t count) {
  if (operands.size() != count) return call.Error("takes ", count, " operand(s), got ", operands.size());
  return OkStatus();
}

// The instruction's shape must be `expected` (one array, or a tuple of them).
Status CheckResultShape(const Call& call, const std::vector<Shape>& expected, bool tuple) {
  const Shape want = tuple ? Shape::Tuple(expected) : expected.front();
  if (!call.instruction.shape.Compatible(want)) {
    return call.Error("result is ", call.instruction.shape.ToString(), " but the operands give ",
                      want.ToString());
  }
  return OkStatus();
}

// A one-letter attribute (JAX passes LAPACK's option letters as their codes).
StatusOr<char> LetterAttribute(const Call& call, const std::string& name, std::string_view allowed) {
  auto it = call.attributes.find(name);
  if (it == call.attributes.end()) return call.Error("needs the attribute '", name, "' in backend_config");
  for (char letter : allowed) {
    if (it->second == letter) return letter;
  }
  return call.Error("attribute ", name, " = ", it->second, " is none of the letters '", allowed, "'");
}

template <typename T>
T* MatrixAt(Literal& literal, int64_t index, int64_t size) {
  return literal.data<T>().data() + index * size;
}

Status LapackFailed(const Call& call, lapack_int info) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR) {
    return ResourceExhausted("custom-call '", call.instruction.name, "' (target '", call.target.target,
                             "'): LAPACK could not allocate its workspace");
  }
  return Internal("custom-call '", call.instruction.name, "' (target '", call.target.target,
                  "'): LAPACK refused argument ", -info);
}

template <typename T>
StatusOr<Literal> Potrf(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  const Shape matrices = operands[0]->shape();
  KILN_RETURN_IF_ERROR(
      CheckResultShape(call, {matrices, Batched(ElementType::kS32, batch, {})}, /*tuple=*/true));
  Literal result(call.instruction.shape);
  Literal& factor = result.mutable_tuple_elements()[0];
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), factor.raw().begin());
  const int64_t size = int64_t{batch.rows} * batch.cols;
  for (int64_t i = 0; i < batch.count; ++i) {
    const lapack_int info =
        Lapack<T>::potrf(call.lapack)(LAPACK_ROW_MAJOR, uplo, batch.rows, MatrixAt<T>(factor, i, size),
                                      std::max<lapack_int>(1, batch.cols));
    if (info < 0) return LapackFailed(call, info);
    result.mutable_tuple_elements()[1].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> Getrf(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  const lapack_int pivots = std::min(batch.rows, batch.cols);
  KILN_RETURN_IF_ERROR(CheckResultShape(call,
                                        {operands[0]->shape(), Batched(ElementType::kS32, batch, {pivots}),
                                         Batched(ElementType::kS32, batch, {})},
                                        /*tuple=*/true));
  Literal result(call.instruction.shape);
  Literal& factor = result.mutable_tuple_elements()[0];
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), factor.raw().begin());
  const int64_t size = int64_t{batch.rows} * batch.cols;
  for (int64_t i = 0; i < batch.count; ++i) {
    const lapack_int info =
        Lapack<T>::getrf(call.lapack)(LAPACK_ROW_MAJOR, batch.rows, batch.cols, MatrixAt<T>(factor, i, size),
                                      std::max<lapack_int>(1, batch.cols),
                                      MatrixAt<int32_t>(result.mutable_tuple_elements()[1], i, pivots));
    if (info < 0) return LapackFailed(call, info);
    result.mutable_tuple_elements()[2].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> Geqrf(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  const lapack_int reflectors = std::min(batch.rows, batch.cols);
  KILN_RETURN_IF_ERROR(
      CheckResultShape(call, {operands[0]->shape(), Batched(call.target.type, batch, {reflectors})}, true));
  Literal result(call.instruction.shape);
  Literal& factor = result.mutable_tuple_elements()[0];
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), factor.raw().begin());
  const int64_t size = int64_t{batch.rows} * batch.cols;
  for (int64_t i = 0; i < batch.count; ++i) {
    const lapack_int info = Lapack<T>::geqrf(call.lapack)(
        LAPACK_ROW_MAJOR, batch.rows, batch.cols, MatrixAt<T>(factor, i, size),
        std::max<lapack_int>(1, batch.cols), MatrixAt<T>(result.mutable_tuple_elements()[1], i, reflectors));
    if (info < 0) return LapackFailed(call, info);
  }
  return result;
}

template <typename T>
StatusOr<Literal> Orgqr(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 2));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  const Shape& scales = operands[1]->shape();
  if (!scales.IsArray() || scales.rank() != static_cast<int64_t>(batch.batch_dims.size()) + 1 ||
      !scales.Compatible(Batched(call.target.type, batch, {scales.dimensions(scales.rank() - 1)}))) {
    return call.Error("operand 1 is ", scales.ToString(), "; it takes the reflectors' scales, ",
                      Batched(call.target.type, batch, {batch.cols}).ToString(),
                      " or fewer in the last dimension");
  }
  const int64_t reflectors = scales.dimensions(scales.rank() - 1);
  if (batch.cols > batch.rows || reflectors > batch.cols) {
    return call.Error("needs rows >= columns >= reflectors, got ", batch.rows, ", ", batch.cols, ", ",
                      reflectors);
  }
  KILN_RETURN_IF_ERROR(CheckResultShape(call, {operands[0]->shape()}, /*tuple=*/false));
  Literal result(call.instruction.shape);
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), result.raw().begin());
  const int64_t size = int64_t{batch.rows} * batch.cols;
  for (int64_t i = 0; i < batch.count; ++i) {
    const lapack_int info = Lapack<T>::orgqr(call.lapack)(
        LAPACK_ROW_MAJOR, batch.rows, batch.cols, static_cast<lapack_int>(reflectors),
        MatrixAt<T>(result, i, size), std::max<lapack_int>(1, batch.cols),
        operands[1]->data<T>().data() + i * reflectors);
    if (info < 0) return LapackFailed(call, info);
  }
  return result;
}

template <typename T>
StatusOr<Literal> Syevd(const Call& call, Operands operands) {
  using Real = typename Lapack<T>::Real;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  KILN_ASSIGN_OR_RETURN(char mode, LetterAttribute(call, "mode", "VN"));
  KILN_RETURN_IF_ERROR(
      CheckResultShape(call,
                       {operands[0]->shape(), Batched(TypeOf<Real>::value, batch, {batch.rows}),
                        Batched(ElementType::kS32, batch, {})},
                       true));
  Literal result(call.instruction.shape);
  Literal& vectors = result.mutable_tuple_elements()[0];
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), vectors.raw().begin());
  const int64_t size = int64_t{batch.rows} * batch.cols;
  for (int64_t i = 0; i < batch.count; ++i) {
    const lapack_int info =
        Lapack<T>::syevd(call.lapack)(LAPACK_ROW_MAJOR, mode, uplo, batch.rows, MatrixAt<T>(vectors, i, size),
                                      std::max<lapack_int>(1, batch.cols),
                                      MatrixAt<Real>(result.mutable_tuple_elements()[1], i, batch.rows));
    if (info < 0) return LapackFailed(call, info);
    result.mutable_tuple_elements()[2].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

// The columns of U or rows of V^T a result holds: `full` for mode 'A',
// min(m, n) for 'S'; for 'N' (values only) JAX gives either shape, unwritten.
lapack_int SingularVectorCount(const Call& call, char mode, size_t part, lapack_int full, lapack_int thin,
                               int64_t dimension) {
  if (mode == 'A') return full;
  if (mode == 'S') return thin;
  const Shape& shape = call.instruction.shape;
  if (shape.IsTuple() && shape.tuple_shapes().size() == 5 && shape.tuple_shapes(part).IsArray() &&
      shape.tuple_shapes(part).rank() >= 2) {
    const int64_t given =
        shape.tuple_shapes(part).dimensions(shape.tuple_shapes(part).rank() - 2 + dimension);
    if (given == thin) return thin;
  }
  return full;
}

template <typename T>
StatusOr<Literal> SingularValues(const Call& call, Operands operands) {
  using Real = typename Lapack<T>::Real;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  // 'A': all of U and V^T; 'S': their first min(m, n) columns and rows;
  // 'N': singular values only.
  KILN_ASSIGN_OR_RETURN(char mode, LetterAttribute(call, "mode", "ASN"));
  const lapack_int m = batch.rows;
  const lapack_int n = batch.cols;
  const lapack_int k = std::min(m, n);
  const lapack_int u_cols = SingularVectorCount(call, mode, 2, m, k, 1);
  const lapack_int vt_rows = SingularVectorCount(call, mode, 3, n, k, 0);
  KILN_RETURN_IF_ERROR(CheckResultShape(
      call,
      {operands[0]->shape(), Batched(TypeOf<Real>::value, batch, {k}),
       Batched(call.target.type, batch, {m, u_cols}), Batched(call.target.type, batch, {vt_rows, n}),
       Batched(ElementType::kS32, batch, {})},
      true));
  Literal result(call.instruction.shape);
  std::vector<Literal>& parts = result.mutable_tuple_elements();
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), parts[0].raw().begin());
  std::vector<Real> superdiagonal(static_cast<size_t>(std::max<lapack_int>(1, k)));
  for (int64_t i = 0; i < batch.count; ++i) {
    T* a = MatrixAt<T>(parts[0], i, int64_t{m} * n);
    Real* s = MatrixAt<Real>(parts[1], i, k);
    T* u = MatrixAt<T>(parts[2], i, int64_t{m} * u_cols);
    T* vt = MatrixAt<T>(parts[3], i, int64_t{vt_rows} * n);
    const lapack_int lda = std::max<lapack_int>(1, n);
    const lapack_int ldu = std::max<lapack_int>(1, u_cols);
    const lapack_int info =
        call.target.routine == LapackRoutine::kGesdd
            ? Lapack<T>::gesdd(call.lapack)(LAPACK_ROW_MAJOR, mode, m, n, a, lda, s, u, ldu, vt, lda)
            : Lapack<T>::gesvd(call.lapack)(LAPACK_ROW_MAJOR, mode, mode, m, n, a, lda, s, u, ldu, vt, lda,
                                            superdiagonal.data());
    if (info < 0) return LapackFailed(call, info);
    parts[4].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> Trsm(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 2));
  KILN_ASSIGN_OR_RETURN(MatrixBatch a,
                        Matrices(call, operands[0]->shape(), "operand 0 (the triangular matrix)"));
  KILN_ASSIGN_OR_RETURN(MatrixBatch b,
                        Matrices(call, operands[1]->shape(), "operand 1 (the right-hand sides)"));
  KILN_ASSIGN_OR_RETURN(char side, LetterAttribute(call, "side", "LR"));
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  KILN_ASSIGN_OR_RETURN(char trans, LetterAttribute(call, "trans_x", "NTC"));
  KILN_ASSIGN_OR_RETURN(char diag, LetterAttribute(call, "diag", "NU"));
  const lapack_int order = side == 'L' ? b.rows : b.cols;
  if (a.batch_dims != b.batch_dims || a.rows != a.cols || a.rows != order) {
    return call.Error("operand 0 ", operands[0]->shape().ToString(), " is not a square matrix of order ",
                      order, " for each right-hand side matrix of operand 1 ",
                      operands[1]->shape().ToString(), " (side ", side, ")");
  }
  KILN_RETURN_IF_ERROR(CheckResultShape(call, {operands[1]->shape()}, /*tuple=*/false));
  Literal result(call.instruction.shape);
  std::copy(operands[1]->raw().begin(), operands[1]->raw().end(), result.raw().begin());
  // Row-major B (m x n) is column-major B^T (n x m); op(A) X = B becomes
  // X^T op(A)^T = B^T, where row-major A is column-major A^T: the solve runs
  // on the other side with the other triangle, the same op.
  const char blas_side = side == 'L' ? 'R' : 'L';
  const char blas_uplo = uplo == 'L' ? 'U' : 'L';
  const int blas_rows = b.cols;
  const int blas_cols = b.rows;
  const int lda = std::max<lapack_int>(1, a.cols);
  const int ldb = std::max<lapack_int>(1, b.cols);
  const T one(1);
  for (int64_t i = 0; i < b.count; ++i) {
    if (b.rows == 0 || b.cols == 0) break;
    Lapack<T>::trsm(call.lapack)(&blas_side, &blas_uplo, &trans, &diag, &blas_rows, &blas_cols, &one,
                                 operands[0]->data<T>().data() + i * int64_t{a.rows} * a.cols, &lda,
                                 MatrixAt<T>(result, i, int64_t{b.rows} * b.cols), &ldb, 1, 1, 1, 1);
  }
  return result;
}

template <typename T>
constexpr bool kIsComplex = !std::is_same_v<T, typename Lapack<T>::Real>;

// Real ?geev packs a complex pair's eigenvectors into two real columns
// (real part, imaginary part); JAX gets them as complex columns.
template <typename Real>
void UnpackEigenvectors(const Real* packed, const Real* imaginary_values, lapack_int n,
                        std::complex<Real>* out) {
  for (lapack_int c = 0; c < n; ++c) {
    const bool pair = imaginary_values[c] != 0 && c + 1 < n;
    for (lapack_int r = 0; r < n; ++r) {
      if (!pair) {
        out[r * n + c] = packed[r * n + c];
      } else {
        const Real re = packed[r * n + c];
        const Real im = packed[r * n + c + 1];
        out[r * n + c] = {re, im};
        out[r * n + c + 1] = {re, -im};
      }
    }
    if (pair) ++c;
  }
}

template <typename T>
StatusOr<Literal> Geev(const Call& call, Operands operands) {
  using Real = typename Lapack<T>::Real;
  using Complex = typename Lapack<T>::Complex;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char left, LetterAttribute(call, "compute_left", "NV"));
  KILN_ASSIGN_OR_RETURN(char right, LetterAttribute(call, "compute_right", "NV"));
  const lapack_int n = batch.rows;
  const ElementType complex_type = TypeOf<Complex>::value;
  std::vector<Shape> expected;
  if constexpr (kIsComplex<T>) {
    expected.push_back(Batched(complex_type, batch, {n}));
  } else {
    expected.push_back(Batched(call.target.type, batch, {n}));
    expected.push_back(Batched(call.target.type, batch, {n}));
  }
  expected.push_back(Batched(complex_type, batch, {n, n}));
  expected.push_back(Batched(complex_type, batch, {n, n}));
  expected.push_back(Batched(ElementType::kS32, batch, {}));
  KILN_RETURN_IF_ERROR(CheckResultShape(call, expected, true));
  Literal result(call.instruction.shape);
  std::vector<Literal>& parts = result.mutable_tuple_elements();
  const size_t vectors = kIsComplex<T> ? 1 : 2;
  std::vector<T> matrix(static_cast<size_t>(n) * n);
  std::vector<Real> packed_left(kIsComplex<T> ? 0 : matrix.size()), packed_right(packed_left.size());
  const lapack_int ld = std::max<lapack_int>(1, n);
  for (int64_t i = 0; i < batch.count; ++i) {
    std::copy_n(operands[0]->data<T>().data() + i * n * n, matrix.size(), matrix.data());
    Complex* vl = MatrixAt<Complex>(parts[vectors], i, int64_t{n} * n);
    Complex* vr = MatrixAt<Complex>(parts[vectors + 1], i, int64_t{n} * n);
    lapack_int info = 0;
    if constexpr (kIsComplex<T>) {
      info = Lapack<T>::geev(call.lapack)(LAPACK_ROW_MAJOR, left, right, n, matrix.data(), ld,
                                          MatrixAt<T>(parts[0], i, n), vl, ld, vr, ld);
    } else {
      Real* wr = MatrixAt<Real>(parts[0], i, n);
      Real* wi = MatrixAt<Real>(parts[1], i, n);
      info = Lapack<T>::geev(call.lapack)(LAPACK_ROW_MAJOR, left, right, n, matrix.data(), ld, wr, wi,
                                          packed_left.data(), ld, packed_right.data(), ld);
      if (info == 0 && left == 'V') UnpackEigenvectors(packed_left.data(), wi, n, vl);
      if (info == 0 && right == 'V') UnpackEigenvectors(packed_right.data(), wi, n, vr);
    }
    if (info < 0) return LapackFailed(call, info);
    parts.back().data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> Gees(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char mode, LetterAttribute(call, "mode", "VN"));
  // Sorting needs a selection function, which JAX never passes.
  KILN_ASSIGN_OR_RETURN(char sort, LetterAttribute(call, "sort", "N"));
  const lapack_int n = batch.rows;
  std::vector<Shape> expected = {operands[0]->shape(), operands[0]->shape()};
  expected.push_back(Batched(call.target.type, batch, {n}));
  if constexpr (!kIsComplex<T>) expected.push_back(Batched(call.target.type, batch, {n}));
  expected.push_back(Batched(ElementType::kS32, batch, {}));
  expected.push_back(Batched(ElementType::kS32, batch, {}));
  KILN_RETURN_IF_ERROR(CheckResultShape(call, expected, true));
  Literal result(call.instruction.shape);
  std::vector<Literal>& parts = result.mutable_tuple_elements();
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), parts[0].raw().begin());
  const size_t sdim_part = parts.size() - 2;
  const lapack_int ld = std::max<lapack_int>(1, n);
  for (int64_t i = 0; i < batch.count; ++i) {
    T* t = MatrixAt<T>(parts[0], i, int64_t{n} * n);
    T* z = MatrixAt<T>(parts[1], i, int64_t{n} * n);
    lapack_int sdim = 0;
    lapack_int info = 0;
    if constexpr (kIsComplex<T>) {
      info = Lapack<T>::gees(call.lapack)(LAPACK_ROW_MAJOR, mode, sort, nullptr, n, t, ld, &sdim,
                                          MatrixAt<T>(parts[2], i, n), z, ld);
    } else {
      info = Lapack<T>::gees(call.lapack)(LAPACK_ROW_MAJOR, mode, sort, nullptr, n, t, ld, &sdim,
                                          MatrixAt<T>(parts[2], i, n), MatrixAt<T>(parts[3], i, n), z, ld);
    }
    if (info < 0) return LapackFailed(call, info);
    parts[sdim_part].data<int32_t>()[static_cast<size_t>(i)] = sdim;
    parts[sdim_part + 1].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> Gehrd(const Call& call, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  const lapack_int n = batch.rows;
  auto low = call.attributes.find("low");
  auto high = call.attributes.find("high");
  if (low == call.attributes.end() || high == call.attributes.end()) {
    return call.Error(
        "needs the attributes 'low' and 'high' (1-based rows and columns to reduce) in backend_config");
  }
  if (n > 0 && !(1 <= low->second && low->second <= high->second && high->second <= n)) {
    return call.Error("needs 1 <= low <= high <= ", n, ", got low = ", low->second,
                      ", high = ", high->second);
  }
  const lapack_int scales = std::max<lapack_int>(0, n - 1);
  KILN_RETURN_IF_ERROR(CheckResultShape(call,
                                        {operands[0]->shape(), Batched(call.target.type, batch, {scales}),
                                         Batched(ElementType::kS32, batch, {})},
                                        true));
  Literal result(call.instruction.shape);
  std::vector<Literal>& parts = result.mutable_tuple_elements();
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), parts[0].raw().begin());
  for (int64_t i = 0; i < batch.count; ++i) {
    if (n == 0) break;
    const lapack_int info = Lapack<T>::gehrd(call.lapack)(
        LAPACK_ROW_MAJOR, n, static_cast<lapack_int>(low->second), static_cast<lapack_int>(high->second),
        MatrixAt<T>(parts[0], i, int64_t{n} * n), std::max<lapack_int>(1, n),
        MatrixAt<T>(parts[1], i, scales));
    if (info < 0) return LapackFailed(call, info);
    parts[2].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> Sytrd(const Call& call, Operands operands) {
  using Real = typename Lapack<T>::Real;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, operands, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, operands[0]->shape(), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  const lapack_int n = batch.rows;
  const lapack_int off = std::max<lapack_int>(0, n - 1);
  const ElementType real_type = TypeOf<Real>::value;
  KILN_RETURN_IF_ERROR(CheckResultShape(
      call,
      {operands[0]->shape(), Batched(real_type, batch, {n}), Batched(real_type, batch, {off}),
       Batched(call.target.type, batch, {off}), Batched(ElementType::kS32, batch, {})},
      true));
  Literal result(call.instruction.shape);
  std::vector<Literal>& parts = result.mutable_tuple_elements();
  std::copy(operands[0]->raw().begin(), operands[0]->raw().end(), parts[0].raw().begin());
  for (int64_t i = 0; i < batch.count; ++i) {
    if (n == 0) break;
    const lapack_int info = Lapack<T>::sytrd(call.lapack)(
        LAPACK_ROW_MAJOR, uplo, n, MatrixAt<T>(parts[0], i, int64_t{n} * n), std::max<lapack_int>(1, n),
        MatrixAt<Real>(parts[1], i, n), MatrixAt<Real>(parts[2], i, off), MatrixAt<T>(parts[3], i, off));
    if (info < 0) return LapackFailed(call, info);
    parts[4].data<int32_t>()[static_cast<size_t>(i)] = info;
  }
  return result;
}

template <typename T>
StatusOr<Literal> RunRoutine(const Call& call, Operands operands) {
  switch (call.target.routine) {
    case LapackRoutine::kPotrf: return Potrf<T>(call, operands);
    case LapackRoutine::kGetrf: return Getrf<T>(call, operands);
    case LapackRoutine::kGeqrf: return Geqrf<T>(call, operands);
    case LapackRoutine::kOrgqr: return Orgqr<T>(call, operands);
    case LapackRoutine::kSyevd: return Syevd<T>(call, operands);
    case LapackRoutine::kGesdd:
    case LapackRoutine::kGesvd: return SingularValues<T>(call, operands);
    case LapackRoutine::kTrsm: return Trsm<T>(call, operands);
    case LapackRoutine::kGeev: return Geev<T>(call, operands);
    case LapackRoutine::kGees: return Gees<T>(call, operands);
    case LapackRoutine::kGehrd: return Gehrd<T>(call, operands);
    case LapackRoutine::kSytrd: return Sytrd<T>(call, operands);
  }
  return call.Error("has no LAPACK routine");
}

}  // namespace

StatusOr<Literal> EvaluateLapackCall(const BuiltinCustomCall& target, const Instruction& instruction,
                                     Operands operands) {
  StatusOr<std::map<std::string, int64_t>> attributes =
      ParseFfiIntegerAttributes(instruction.attrs.backend_config);
  StatusOr<const LapackLibrary*> lapack = LapackLibrary::Get();
  if (!lapack.ok()) {
    return Status(lapack.status().code(), "custom-call '" + instruction.name + "' (target '" + target.target +
                                              "'): " + lapack.status().message());
  }
  Call call{target, instruction, {}, **lapack};
  if (!attributes.ok()) return call.Error(attributes.status().message());
  call.attributes = std::move(attributes).value();
  for (const Literal* operand : operands) {
    if (operand == nullptr || !operand->shape().IsArray()) return call.Error("takes array operands only");
  }
  switch (target.type) {
    case ElementType::kF32: return RunRoutine<float>(call, operands);
    case ElementType::kF64: return RunRoutine<double>(call, operands);
    case ElementType::kC64: return RunRoutine<complex64>(call, operands);
    case ElementType::kC128: return RunRoutine<complex128>(call, operands);
    default: return call.Error("has no LAPACK element type");
  }
}

}  // namespace kiln::interpreter
