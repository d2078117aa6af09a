// LAPACK is called through LAPACKE (loaded on the first call:
// lapack_calls_library.h says why) in LAPACK's own column-major order.
// Kiln's literals hold each matrix row-major whatever their layout says, so
// each matrix is transposed into a column-major scratch matrix and back
// here, in cache tiles: LAPACKE's LAPACK_ROW_MAJOR path does the same with a
// plain double loop whose strided reads cost more than the factorisation of
// a 256x256 f32 matrix on an optimised LAPACK (issue 19). The LAPACK calls
// and their inputs are the ones the row-major path made, so the results are
// the logical values JAX gets from its column-major buffers. Cholesky needs
// no transpose at all (see Potrf). LAPACKE sizes every workspace.
// Triangular solves are BLAS (no LAPACKE wrapper): called through BLAS's
// Fortran symbol on the transposed problem.
#include "core/interpreter/lapack_calls.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
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

// One custom call being checked or run: names what is wrong with it, and
// reaches its arrays.
struct Call {
  const BuiltinCustomCall& target;
  const Instruction& instruction;
  std::map<std::string, int64_t> attributes;
  // Both null when the call is only checked (CheckLapackCall): each routine
  // returns once its shapes and attributes are checked.
  const LapackLibrary* lapack = nullptr;
  const LapackBuffers* buffers = nullptr;

  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgument("custom-call '", instruction.name, "' (target '", target.target, "'): ", args...);
  }
  const Shape& operand_shape(size_t operand) const { return instruction.operand(operand)->shape; }
  // Matrix `index` (of `size` elements) of an operand or of a result leaf.
  template <typename T>
  const T* Operand(size_t operand, int64_t index, int64_t size) const {
    return static_cast<const T*>(buffers->operands[operand]) + index * size;
  }
  template <typename T>
  T* Result(size_t leaf, int64_t index, int64_t size) const {
    return static_cast<T*>(buffers->results[leaf]) + index * size;
  }
  // The operand's bytes into the result leaf, unless that leaf is the
  // operand's own buffer (XLA's output_to_operand_aliasing).
  void CopyOperandToResult(size_t operand, size_t leaf) const {
    if (buffers->operands[operand] == buffers->results[leaf]) return;
    std::memmove(buffers->results[leaf], buffers->operands[operand],
                 static_cast<size_t>(operand_shape(operand).byte_size()));
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

Status CheckOperandCount(const Call& call, size_t count) {
  const size_t given = call.instruction.operands.size();
  if (given != count) return call.Error("takes ", count, " operand(s), got ", given);
  for (size_t i = 0; i < given; ++i) {
    if (!call.operand_shape(i).IsArray()) return call.Error("takes array operands only");
  }
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

// out[c * rows + r] = in[r * cols + c]: a row-major rows x cols matrix
// into column-major order (or, read the other way, column-major back to
// row-major with rows and cols swapped), in tiles so that both the reads
// and the writes stay within a few cache lines at a time.
template <typename T>
void TransposeInTiles(const T* in, int64_t rows, int64_t cols, T* out) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
      }
    }
  }
}

// Scratch buffer `which` (of kScratchBuffers) of the calling thread, at
// least `count` elements, kept for the thread's next calls: a fresh
// allocation of a 256x256 matrix per call is mapped, faulted in page by page
// and unmapped again, which cost more than the transposes it holds.
inline constexpr int kScratchBuffers = 4;
template <typename T>
T* ThreadScratch(int which, size_t count) {
  thread_local std::array<std::vector<T>, kScratchBuffers> scratch;
  std::vector<T>& buffer = scratch[static_cast<size_t>(which)];
  if (buffer.size() < count) buffer.resize(count);
  return buffer.data();
}

// One rows x cols matrix held column-major for LAPACK in scratch buffer
// `which`, reused for every matrix of a batch: Load takes a row-major matrix
// in, Store gives it back row-major.
template <typename T>
class ColumnMajor {
 public:
  ColumnMajor(lapack_int rows, lapack_int cols, int which)
      : rows_(rows),
        cols_(cols),
        values_(ThreadScratch<T>(which, static_cast<size_t>(rows) * static_cast<size_t>(cols))) {}
  void Load(const T* row_major) { TransposeInTiles(row_major, rows_, cols_, values_); }
  void Store(T* row_major) const { TransposeInTiles(values_, cols_, rows_, row_major); }
  T* data() { return values_; }
  // LAPACK's leading dimension: the rows, and at least 1.
  lapack_int ld() const { return std::max<lapack_int>(1, rows_); }

 private:
  lapack_int rows_;
  lapack_int cols_;
  T* values_;
};

Status LapackFailed(const Call& call, lapack_int info) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR) {
    return ResourceExhausted("custom-call '", call.instruction.name, "' (target '", call.target.target,
                             "'): LAPACK could not allocate its workspace");
  }
  return Internal("custom-call '", call.instruction.name, "' (target '", call.target.target,
                  "'): LAPACK refused argument ", -info);
}

template <typename T>
Status Potrf(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  const Shape matrices = call.operand_shape(0);
  KILN_RETURN_IF_ERROR(
      CheckResultShape(call, {matrices, Batched(ElementType::kS32, batch, {})}, /*tuple=*/true));
  if (call.buffers == nullptr) return OkStatus();
  call.CopyOperandToResult(0, 0);
  // A row-major matrix is the column-major storage of its transpose, which
  // for a Hermitian A is conj(A). Factoring that in the other triangle
  // gives U with U^H U = A^T = conj(L L^H), that is U = L^T, whose
  // column-major storage is row-major L: the factor comes out in place, in
  // the triangle asked for, without a transpose either way.
  const char column_major_uplo = uplo == 'L' ? 'U' : 'L';
  const int64_t size = int64_t{batch.rows} * batch.cols;
  for (int64_t i = 0; i < batch.count; ++i) {
    const lapack_int info =
        Lapack<T>::potrf(*call.lapack)(LAPACK_COL_MAJOR, column_major_uplo, batch.rows,
                                       call.Result<T>(0, i, size), std::max<lapack_int>(1, batch.rows));
    if (info < 0) return LapackFailed(call, info);
    *call.Result<int32_t>(1, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status Getrf(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  const lapack_int pivots = std::min(batch.rows, batch.cols);
  KILN_RETURN_IF_ERROR(CheckResultShape(call,
                                        {call.operand_shape(0), Batched(ElementType::kS32, batch, {pivots}),
                                         Batched(ElementType::kS32, batch, {})},
                                        /*tuple=*/true));
  if (call.buffers == nullptr) return OkStatus();
  const int64_t size = int64_t{batch.rows} * batch.cols;
  ColumnMajor<T> matrix(batch.rows, batch.cols, 0);
  for (int64_t i = 0; i < batch.count; ++i) {
    matrix.Load(call.Operand<T>(0, i, size));
    const lapack_int info =
        Lapack<T>::getrf(*call.lapack)(LAPACK_COL_MAJOR, batch.rows, batch.cols, matrix.data(), matrix.ld(),
                                       call.Result<int32_t>(1, i, pivots));
    if (info < 0) return LapackFailed(call, info);
    matrix.Store(call.Result<T>(0, i, size));
    *call.Result<int32_t>(2, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status Geqrf(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  const lapack_int reflectors = std::min(batch.rows, batch.cols);
  KILN_RETURN_IF_ERROR(
      CheckResultShape(call, {call.operand_shape(0), Batched(call.target.type, batch, {reflectors})}, true));
  if (call.buffers == nullptr) return OkStatus();
  const int64_t size = int64_t{batch.rows} * batch.cols;
  ColumnMajor<T> matrix(batch.rows, batch.cols, 0);
  for (int64_t i = 0; i < batch.count; ++i) {
    matrix.Load(call.Operand<T>(0, i, size));
    const lapack_int info =
        Lapack<T>::geqrf(*call.lapack)(LAPACK_COL_MAJOR, batch.rows, batch.cols, matrix.data(), matrix.ld(),
                                       call.Result<T>(1, i, reflectors));
    if (info < 0) return LapackFailed(call, info);
    matrix.Store(call.Result<T>(0, i, size));
  }
  return OkStatus();
}

template <typename T>
Status Orgqr(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 2));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  const Shape& scales = call.operand_shape(1);
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
  KILN_RETURN_IF_ERROR(CheckResultShape(call, {call.operand_shape(0)}, /*tuple=*/false));
  if (call.buffers == nullptr) return OkStatus();
  const int64_t size = int64_t{batch.rows} * batch.cols;
  ColumnMajor<T> matrix(batch.rows, batch.cols, 0);
  for (int64_t i = 0; i < batch.count; ++i) {
    matrix.Load(call.Operand<T>(0, i, size));
    const lapack_int info = Lapack<T>::orgqr(*call.lapack)(LAPACK_COL_MAJOR, batch.rows, batch.cols,
                                                           static_cast<lapack_int>(reflectors), matrix.data(),
                                                           matrix.ld(), call.Operand<T>(1, i, reflectors));
    if (info < 0) return LapackFailed(call, info);
    matrix.Store(call.Result<T>(0, i, size));
  }
  return OkStatus();
}

template <typename T>
Status Syevd(const Call& call) {
  using Real = typename Lapack<T>::Real;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  KILN_ASSIGN_OR_RETURN(char mode, LetterAttribute(call, "mode", "VN"));
  KILN_RETURN_IF_ERROR(
      CheckResultShape(call,
                       {call.operand_shape(0), Batched(TypeOf<Real>::value, batch, {batch.rows}),
                        Batched(ElementType::kS32, batch, {})},
                       true));
  if (call.buffers == nullptr) return OkStatus();
  const int64_t size = int64_t{batch.rows} * batch.cols;
  ColumnMajor<T> matrix(batch.rows, batch.cols, 0);
  for (int64_t i = 0; i < batch.count; ++i) {
    matrix.Load(call.Operand<T>(0, i, size));
    const lapack_int info =
        Lapack<T>::syevd(*call.lapack)(LAPACK_COL_MAJOR, mode, uplo, batch.rows, matrix.data(), matrix.ld(),
                                       call.Result<Real>(1, i, batch.rows));
    if (info < 0) return LapackFailed(call, info);
    matrix.Store(call.Result<T>(0, i, size));
    *call.Result<int32_t>(2, i, 1) = info;
  }
  return OkStatus();
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
Status SingularValues(const Call& call) {
  using Real = typename Lapack<T>::Real;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
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
      {call.operand_shape(0), Batched(TypeOf<Real>::value, batch, {k}),
       Batched(call.target.type, batch, {m, u_cols}), Batched(call.target.type, batch, {vt_rows, n}),
       Batched(ElementType::kS32, batch, {})},
      true));
  if (call.buffers == nullptr) return OkStatus();
  std::vector<Real> superdiagonal(static_cast<size_t>(std::max<lapack_int>(1, k)));
  ColumnMajor<T> a(m, n, 0);
  ColumnMajor<T> u(m, u_cols, 1);
  ColumnMajor<T> vt(vt_rows, n, 2);
  for (int64_t i = 0; i < batch.count; ++i) {
    a.Load(call.Operand<T>(0, i, int64_t{m} * n));
    Real* s = call.Result<Real>(1, i, k);
    const lapack_int info =
        call.target.routine == LapackRoutine::kGesdd
            ? Lapack<T>::gesdd(*call.lapack)(LAPACK_COL_MAJOR, mode, m, n, a.data(), a.ld(), s, u.data(),
                                             u.ld(), vt.data(), vt.ld())
            : Lapack<T>::gesvd(*call.lapack)(LAPACK_COL_MAJOR, mode, mode, m, n, a.data(), a.ld(), s,
                                             u.data(), u.ld(), vt.data(), vt.ld(), superdiagonal.data());
    if (info < 0) return LapackFailed(call, info);
    a.Store(call.Result<T>(0, i, int64_t{m} * n));
    if (mode != 'N') {
      u.Store(call.Result<T>(2, i, int64_t{m} * u_cols));
      vt.Store(call.Result<T>(3, i, int64_t{vt_rows} * n));
    } else {
      // With mode 'N' LAPACK computes no vectors: zeros, as JAX's are.
      std::fill_n(call.Result<T>(2, i, int64_t{m} * u_cols), int64_t{m} * u_cols, T{});
      std::fill_n(call.Result<T>(3, i, int64_t{vt_rows} * n), int64_t{vt_rows} * n, T{});
    }
    *call.Result<int32_t>(4, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status Trsm(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 2));
  KILN_ASSIGN_OR_RETURN(MatrixBatch a,
                        Matrices(call, call.operand_shape(0), "operand 0 (the triangular matrix)"));
  KILN_ASSIGN_OR_RETURN(MatrixBatch b,
                        Matrices(call, call.operand_shape(1), "operand 1 (the right-hand sides)"));
  KILN_ASSIGN_OR_RETURN(char side, LetterAttribute(call, "side", "LR"));
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  KILN_ASSIGN_OR_RETURN(char trans, LetterAttribute(call, "trans_x", "NTC"));
  KILN_ASSIGN_OR_RETURN(char diag, LetterAttribute(call, "diag", "NU"));
  const lapack_int order = side == 'L' ? b.rows : b.cols;
  if (a.batch_dims != b.batch_dims || a.rows != a.cols || a.rows != order) {
    return call.Error("operand 0 ", call.operand_shape(0).ToString(), " is not a square matrix of order ",
                      order, " for each right-hand side matrix of operand 1 ",
                      call.operand_shape(1).ToString(), " (side ", side, ")");
  }
  KILN_RETURN_IF_ERROR(CheckResultShape(call, {call.operand_shape(1)}, /*tuple=*/false));
  if (call.buffers == nullptr) return OkStatus();
  call.CopyOperandToResult(1, 0);
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
    Lapack<T>::trsm (*call.lapack)(&blas_side, &blas_uplo, &trans, &diag, &blas_rows, &blas_cols, &one,
                                   call.Operand<T>(0, i, int64_t{a.rows} * a.cols), &lda,
                                   call.Result<T>(0, i, int64_t{b.rows} * b.cols), &ldb, 1, 1, 1, 1);
  }
  return OkStatus();
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
Status Geev(const Call& call) {
  using Real = typename Lapack<T>::Real;
  using Complex = typename Lapack<T>::Complex;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
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
  if (call.buffers == nullptr) return OkStatus();
  const size_t vectors = kIsComplex<T> ? 1 : 2;
  const size_t info_leaf = vectors + 2;
  const int64_t size = int64_t{n} * n;
  ColumnMajor<T> matrix(n, n, 0);
  ColumnMajor<T> left_vectors(n, n, 1);
  ColumnMajor<T> right_vectors(n, n, 2);
  // Real vectors packed as LAPACK gives them, row-major.
  Real* packed = ThreadScratch<Real>(3, kIsComplex<T> ? 0 : static_cast<size_t>(size));
  for (int64_t i = 0; i < batch.count; ++i) {
    matrix.Load(call.Operand<T>(0, i, size));
    Complex* vl = call.Result<Complex>(vectors, i, size);
    Complex* vr = call.Result<Complex>(vectors + 1, i, size);
    // Vectors not asked for, or not computed, are zeros.
    std::fill_n(vl, size, Complex{});
    std::fill_n(vr, size, Complex{});
    lapack_int info = 0;
    if constexpr (kIsComplex<T>) {
      info = Lapack<T>::geev(*call.lapack)(LAPACK_COL_MAJOR, left, right, n, matrix.data(), matrix.ld(),
                                           call.Result<T>(0, i, n), left_vectors.data(), left_vectors.ld(),
                                           right_vectors.data(), right_vectors.ld());
      if (left == 'V') left_vectors.Store(vl);
      if (right == 'V') right_vectors.Store(vr);
    } else {
      Real* wr = call.Result<Real>(0, i, n);
      Real* wi = call.Result<Real>(1, i, n);
      info = Lapack<T>::geev(*call.lapack)(LAPACK_COL_MAJOR, left, right, n, matrix.data(), matrix.ld(), wr,
                                           wi, left_vectors.data(), left_vectors.ld(), right_vectors.data(),
                                           right_vectors.ld());
      if (info == 0 && left == 'V') {
        left_vectors.Store(packed);
        UnpackEigenvectors(packed, wi, n, vl);
      }
      if (info == 0 && right == 'V') {
        right_vectors.Store(packed);
        UnpackEigenvectors(packed, wi, n, vr);
      }
    }
    if (info < 0) return LapackFailed(call, info);
    *call.Result<int32_t>(info_leaf, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status Gees(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char mode, LetterAttribute(call, "mode", "VN"));
  // Sorting needs a selection function, which JAX never passes.
  KILN_ASSIGN_OR_RETURN(char sort, LetterAttribute(call, "sort", "N"));
  const lapack_int n = batch.rows;
  std::vector<Shape> expected = {call.operand_shape(0), call.operand_shape(0)};
  expected.push_back(Batched(call.target.type, batch, {n}));
  if constexpr (!kIsComplex<T>) expected.push_back(Batched(call.target.type, batch, {n}));
  expected.push_back(Batched(ElementType::kS32, batch, {}));
  expected.push_back(Batched(ElementType::kS32, batch, {}));
  KILN_RETURN_IF_ERROR(CheckResultShape(call, expected, true));
  if (call.buffers == nullptr) return OkStatus();
  const size_t sdim_part = expected.size() - 2;
  const int64_t size = int64_t{n} * n;
  ColumnMajor<T> t(n, n, 0);
  ColumnMajor<T> z(n, n, 1);
  for (int64_t i = 0; i < batch.count; ++i) {
    t.Load(call.Operand<T>(0, i, size));
    lapack_int sdim = 0;
    lapack_int info = 0;
    if constexpr (kIsComplex<T>) {
      info = Lapack<T>::gees(*call.lapack)(LAPACK_COL_MAJOR, mode, sort, nullptr, n, t.data(), t.ld(), &sdim,
                                           call.Result<T>(2, i, n), z.data(), z.ld());
    } else {
      info =
          Lapack<T>::gees(*call.lapack)(LAPACK_COL_MAJOR, mode, sort, nullptr, n, t.data(), t.ld(), &sdim,
                                        call.Result<T>(2, i, n), call.Result<T>(3, i, n), z.data(), z.ld());
    }
    if (info < 0) return LapackFailed(call, info);
    t.Store(call.Result<T>(0, i, size));
    if (mode == 'V') {
      z.Store(call.Result<T>(1, i, size));
    } else {
      std::fill_n(call.Result<T>(1, i, size), size, T{});  // no vectors asked for: zeros
    }
    *call.Result<int32_t>(sdim_part, i, 1) = sdim;
    *call.Result<int32_t>(sdim_part + 1, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status Gehrd(const Call& call) {
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
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
                                        {call.operand_shape(0), Batched(call.target.type, batch, {scales}),
                                         Batched(ElementType::kS32, batch, {})},
                                        true));
  if (call.buffers == nullptr) return OkStatus();
  const int64_t size = int64_t{n} * n;
  ColumnMajor<T> matrix(n, n, 0);
  for (int64_t i = 0; i < batch.count; ++i) {
    if (n == 0) break;
    matrix.Load(call.Operand<T>(0, i, size));
    const lapack_int info = Lapack<T>::gehrd(*call.lapack)(
        LAPACK_COL_MAJOR, n, static_cast<lapack_int>(low->second), static_cast<lapack_int>(high->second),
        matrix.data(), matrix.ld(), call.Result<T>(1, i, scales));
    if (info < 0) return LapackFailed(call, info);
    matrix.Store(call.Result<T>(0, i, size));
    *call.Result<int32_t>(2, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status Sytrd(const Call& call) {
  using Real = typename Lapack<T>::Real;
  KILN_RETURN_IF_ERROR(CheckOperandCount(call, 1));
  KILN_ASSIGN_OR_RETURN(MatrixBatch batch, Matrices(call, call.operand_shape(0), "operand 0"));
  if (batch.rows != batch.cols) return call.Error("the matrices are not square");
  KILN_ASSIGN_OR_RETURN(char uplo, LetterAttribute(call, "uplo", "LU"));
  const lapack_int n = batch.rows;
  const lapack_int off = std::max<lapack_int>(0, n - 1);
  const ElementType real_type = TypeOf<Real>::value;
  KILN_RETURN_IF_ERROR(CheckResultShape(
      call,
      {call.operand_shape(0), Batched(real_type, batch, {n}), Batched(real_type, batch, {off}),
       Batched(call.target.type, batch, {off}), Batched(ElementType::kS32, batch, {})},
      true));
  if (call.buffers == nullptr) return OkStatus();
  const int64_t size = int64_t{n} * n;
  ColumnMajor<T> matrix(n, n, 0);
  for (int64_t i = 0; i < batch.count; ++i) {
    if (n == 0) break;
    matrix.Load(call.Operand<T>(0, i, size));
    const lapack_int info = Lapack<T>::sytrd(*call.lapack)(
        LAPACK_COL_MAJOR, uplo, n, matrix.data(), matrix.ld(), call.Result<Real>(1, i, n),
        call.Result<Real>(2, i, off), call.Result<T>(3, i, off));
    if (info < 0) return LapackFailed(call, info);
    matrix.Store(call.Result<T>(0, i, size));
    *call.Result<int32_t>(4, i, 1) = info;
  }
  return OkStatus();
}

template <typename T>
Status RunRoutine(const Call& call) {
  switch (call.target.routine) {
    case LapackRoutine::kPotrf: return Potrf<T>(call);
    case LapackRoutine::kGetrf: return Getrf<T>(call);
    case LapackRoutine::kGeqrf: return Geqrf<T>(call);
    case LapackRoutine::kOrgqr: return Orgqr<T>(call);
    case LapackRoutine::kSyevd: return Syevd<T>(call);
    case LapackRoutine::kGesdd:
    case LapackRoutine::kGesvd: return SingularValues<T>(call);
    case LapackRoutine::kTrsm: return Trsm<T>(call);
    case LapackRoutine::kGeev: return Geev<T>(call);
    case LapackRoutine::kGees: return Gees<T>(call);
    case LapackRoutine::kGehrd: return Gehrd<T>(call);
    case LapackRoutine::kSytrd: return Sytrd<T>(call);
  }
  return call.Error("has no LAPACK routine");
}

}  // namespace

namespace {

// The call's parsed attributes, its library (when it runs) and its arrays.
StatusOr<Call> MakeCall(const BuiltinCustomCall& target, const Instruction& instruction,
                        const LapackLibrary* lapack, const LapackBuffers* buffers) {
  Call call{target, instruction, {}, lapack, buffers};
  StatusOr<std::map<std::string, int64_t>> attributes =
      ParseFfiIntegerAttributes(instruction.attrs.backend_config);
  if (!attributes.ok()) return call.Error(attributes.status().message());
  call.attributes = std::move(attributes).value();
  return call;
}

Status RunForType(const Call& call) {
  switch (call.target.type) {
    case ElementType::kF32: return RunRoutine<float>(call);
    case ElementType::kF64: return RunRoutine<double>(call);
    case ElementType::kC64: return RunRoutine<complex64>(call);
    case ElementType::kC128: return RunRoutine<complex128>(call);
    default: return call.Error("has no LAPACK element type");
  }
}

}  // namespace

Status CheckLapackCall(const BuiltinCustomCall& target, const Instruction& instruction) {
  KILN_ASSIGN_OR_RETURN(Call call, MakeCall(target, instruction, nullptr, nullptr));
  return RunForType(call);
}

Status RunLapackCall(const BuiltinCustomCall& target, const Instruction& instruction,
                     const LapackBuffers& buffers) {
  StatusOr<const LapackLibrary*> lapack = LapackLibrary::Get();
  if (!lapack.ok()) {
    return Status(lapack.status().code(), "custom-call '" + instruction.name + "' (target '" + target.target +
                                              "'): " + lapack.status().message());
  }
  KILN_ASSIGN_OR_RETURN(Call call, MakeCall(target, instruction, *lapack, &buffers));
  const size_t leaves = instruction.shape.IsTuple() ? instruction.shape.tuple_shapes().size() : 1;
  if (buffers.operands.size() != instruction.operands.size() || buffers.results.size() != leaves) {
    return Internal("custom-call '", instruction.name, "' (target '", target.target, "'): given ",
                    buffers.operands.size(), " operand and ", buffers.results.size(),
                    " result arrays for an instruction of ", instruction.operands.size(), " operands and ",
                    leaves, " result arrays");
  }
  return RunForType(call);
}

StatusOr<Literal> EvaluateLapackCall(const BuiltinCustomCall& target, const Instruction& instruction,
                                     Operands operands) {
  Literal result(instruction.shape);
  LapackBuffers buffers;
  for (const Literal* operand : operands) {
    if (operand == nullptr || !operand->shape().IsArray()) {
      return InvalidArgument("custom-call '", instruction.name, "' (target '", target.target,
                             "'): takes array operands only");
    }
    buffers.operands.push_back(operand->raw().data());
  }
  if (result.shape().IsTuple()) {
    // A leaf that is not an array fails RunLapackCall's shape check before
    // any array is touched.
    for (Literal& leaf : result.mutable_tuple_elements())
      buffers.results.push_back(leaf.shape().IsArray() ? leaf.raw().data() : nullptr);
  } else {
    buffers.results.push_back(result.raw().data());
  }
  KILN_RETURN_IF_ERROR(RunLapackCall(target, instruction, buffers));
  return result;
}

}  // namespace kiln::interpreter
