// The device expansions of potrf (Cholesky), trsm (triangular solve) and
// getrf (LU) (core/passes/expansions/): each custom call is run by LAPACK
// on the interpreter, and its expansion (DeviceOpExpander applied: loops of
// ordinary HLO) on the interpreter and on the cpu backend; the results must
// agree element by element within a tolerance scaled by the type's epsilon
// and the order, and pivots and info exactly, in the four element types,
// batched and not, with LAPACK's conventions (the triangle left alone, info
// at the first bad pivot, 1-based pivots).
#include <algorithm>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/passes/device_op_expansion.h"
#include "tests/unit/lapack_test_values.h"
#include "tests/unit/test_util.h"

namespace kiln::factor_expansion_test {
namespace {

using testing::lapack::Complex;
using testing::lapack::EpsilonOf;
using testing::lapack::FromLiteral;
using testing::lapack::LapackTarget;
using testing::lapack::MatrixCount;
using testing::lapack::RandomValues;
using testing::lapack::ToLiteral;
using testing::lapack::Values;
constexpr auto& kTypes = testing::lapack::kLapackTypes;
constexpr int64_t kSizes[] = {1, 2, 3, 7, 16, 33};

std::vector<int64_t> Dims(const std::vector<int64_t>& batch, int64_t rows, int64_t cols) {
  std::vector<int64_t> dims = batch;
  dims.push_back(rows);
  dims.push_back(cols);
  return dims;
}

// One custom call of `target` on parameters of `operands`, giving `result`.
std::string CallModule(const std::string& target, const std::vector<Shape>& operands,
                       const std::string& result, const std::string& config) {
  std::string text = "HloModule lapack\n\nENTRY main {\n";
  std::string names;
  for (size_t i = 0; i < operands.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + operands[i].ToString() + " parameter(" + std::to_string(i) +
            ")\n";
    names += (i == 0 ? "p" : ", p") + std::to_string(i);
  }
  text += "  ROOT call = " + result + " custom-call(" + names + "), custom_call_target=\"" + target +
          "\", api_version=API_VERSION_TYPED_FFI, backend_config=" + config + "\n}\n";
  return text;
}

// Element (r, c) of matrix k in a batch of row-major n x n matrices.
Complex& At(Values& values, int64_t n, int64_t k, int64_t r, int64_t c) {
  return values[static_cast<size_t>((k * n + r) * n + c)];
}

// B B^H + n I in the `lower` (or upper) triangle; the other triangle holds
// noise, which LAPACK never reads.
Values PositiveDefinite(ElementType type, int64_t count, int64_t n, bool lower, uint32_t seed) {
  Values b = RandomValues(type, count * n * n, seed);
  Values noise = RandomValues(type, count * n * n, seed + 1);
  Values a(b.size());
  for (int64_t k = 0; k < count; ++k)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Complex sum = i == j ? Complex(static_cast<double>(n)) : Complex(0);
        for (int64_t t = 0; t < n; ++t) sum += At(b, n, k, i, t) * std::conj(At(b, n, k, j, t));
        const bool kept = lower ? i >= j : i <= j;
        At(a, n, k, i, j) = kept ? sum : At(noise, n, k, i, j);
      }
  return a;
}

// Runs `text` as it is on the interpreter (LAPACK), and expanded on the
// interpreter and on cpu; `compare(leaf, want, got, backend)` checks each
// array leaf.
struct Runs {
  std::vector<Literal> lapack;
  std::vector<Literal> interpreter;
  std::vector<Literal> cpu;
  bool on_cpu = true;  // false: the expansion ran on the interpreter only
};

// Compiling an expansion for cpu costs about a tenth of a second per order
// and type (the loops' kernels), so the panel-edge tests run most orders
// expanded on the interpreter only (`on_cpu` false).
Runs RunAll(const std::string& text, const std::vector<Literal>& arguments, bool on_cpu = true) {
  Runs runs;
  runs.on_cpu = on_cpu;
  StatusOr<std::unique_ptr<Module>> original = ParseHloModule(text);
  StatusOr<std::unique_ptr<Module>> expanded = ParseHloModule(text);
  EXPECT_TRUE(original.ok() && expanded.ok()) << original.status().ToString() << "\n" << text;
  if (!original.ok() || !expanded.ok()) return runs;
  StatusOr<bool> changed = DeviceOpExpander().Run(**expanded);
  EXPECT_TRUE(changed.ok() && *changed) << changed.status().ToString();
  for (const auto& computation : (*expanded)->computations()) {
    for (const auto& instruction : computation->instructions()) {
      EXPECT_NE(instruction->opcode, Opcode::kCustomCall) << "still a custom call: " << instruction->name;
    }
  }
  for (auto [backend_name, out] :
       {std::pair<const char*, std::vector<Literal>*>{"interpreter", &runs.interpreter},
        {"cpu", &runs.cpu}}) {
    if (out == &runs.cpu && !on_cpu) break;
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(backend_name);
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    if (!backend.ok()) return runs;
    if (out == &runs.interpreter) {
      StatusOr<std::vector<Literal>> lapack = testing::ExecuteLeaves(**backend, **original, arguments);
      EXPECT_TRUE(lapack.ok()) << lapack.status().ToString();
      if (lapack.ok()) runs.lapack = std::move(lapack).value();
    }
    StatusOr<std::vector<Literal>> leaves = testing::ExecuteLeaves(**backend, **expanded, arguments);
    EXPECT_TRUE(leaves.ok()) << backend_name << ": " << leaves.status().ToString();
    if (leaves.ok()) *out = std::move(leaves).value();
  }
  return runs;
}

// |want - got| <= tolerance * (1 + |want|), element by element; `keep`
// says which elements are compared (all when empty).
void ExpectNear(const Literal& want, const Literal& got, double tolerance, const std::string& what,
                const std::vector<bool>& keep = {}) {
  ASSERT_EQ(want.shape().dimensions(), got.shape().dimensions()) << what;
  const Values w = FromLiteral(want), g = FromLiteral(got);
  for (size_t i = 0; i < w.size(); ++i) {
    if (!keep.empty() && !keep[i]) continue;
    EXPECT_LE(std::abs(w[i] - g[i]), tolerance * (1 + std::abs(w[i])))
        << what << " element " << i << ": LAPACK " << w[i] << ", expansion " << g[i];
  }
}

void ExpectEqualIntegers(const Literal& want, const Literal& got, const std::string& what) {
  ASSERT_EQ(want.shape().dimensions(), got.shape().dimensions()) << what;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    EXPECT_EQ(want.data<int32_t>()[static_cast<size_t>(i)], got.data<int32_t>()[static_cast<size_t>(i)])
        << what << " element " << i;
  }
}

// Compares every leaf of both expanded runs with LAPACK's: s32 leaves
// exactly, the others within `tolerance`, restricted to `keep` for leaf 0.
void ExpectSameAsLapack(const Runs& runs, double tolerance, const std::string& what,
                        const std::vector<bool>& keep = {}) {
  ASSERT_FALSE(runs.lapack.empty()) << what;
  for (const auto& [name, leaves] :
       {std::pair<const char*, const std::vector<Literal>*>{"interpreter", &runs.interpreter},
        {"cpu", &runs.cpu}}) {
    if (leaves == &runs.cpu && !runs.on_cpu) break;
    ASSERT_EQ(leaves->size(), runs.lapack.size()) << what << " on " << name;
    for (size_t leaf = 0; leaf < leaves->size(); ++leaf) {
      const std::string where = what + " on " + name + ", leaf " + std::to_string(leaf);
      if (runs.lapack[leaf].shape().element_type() == ElementType::kS32) {
        ExpectEqualIntegers(runs.lapack[leaf], (*leaves)[leaf], where);
      } else {
        ExpectNear(runs.lapack[leaf], (*leaves)[leaf], tolerance, where,
                   leaf == 0 ? keep : std::vector<bool>{});
      }
    }
  }
}

std::string Describe(ElementType type, const std::vector<int64_t>& dims, const std::string& extra) {
  return Shape(type, dims).ToString() + " " + extra;
}

// A batch of two 7x7 matrices, the second not positive definite at column
// 4 (a diagonal entry made negative): info 5 there and 0 for the first. Of
// the failing matrix LAPACK promises only the factor of the leading minor
// of order 4 and the other triangle (the rest depends on its blocking:
// reference ?potrf2 recurses and leaves some columns part-updated; JAX
// replaces the whole result with NaN), so those are compared.
TEST(LapackFactorExpansionTest, CholeskyOfAMatrixNotPositiveDefiniteGivesLapacksInfo) {
  constexpr int64_t kN = 7, kBad = 4;
  for (ElementType type : kTypes) {
    for (char uplo : {'L', 'U'}) {
      const std::vector<int64_t> dims = {2, kN, kN};
      const std::string what = Describe(type, dims, std::string("uplo ") + uplo);
      SCOPED_TRACE(what);
      Values a = PositiveDefinite(type, 2, kN, uplo == 'L', 5);
      At(a, kN, 1, kBad, kBad) = -1.0;
      const Shape shape(type, dims);
      const std::string text =
          CallModule(LapackTarget(type, "potrf"), {shape}, "(" + shape.ToString() + ", s32[2])",
                     std::string("{uplo = ") + std::to_string(int(uplo)) + " : ui8}");
      const Runs runs = RunAll(text, {ToLiteral(a, type, dims)});
      ASSERT_FALSE(runs.lapack.empty());
      ASSERT_EQ(runs.lapack[1].data<int32_t>()[0], 0);
      ASSERT_EQ(runs.lapack[1].data<int32_t>()[1], kBad + 1);
      std::vector<bool> keep(static_cast<size_t>(2 * kN * kN), true);
      for (int64_t r = 0; r < kN; ++r)
        for (int64_t c = 0; c < kN; ++c) {
          const bool in_triangle = uplo == 'L' ? r >= c : r <= c;
          const bool in_leading_minor = r < kBad && c < kBad;
          keep[static_cast<size_t>((kN + r) * kN + c)] = !in_triangle || in_leading_minor;
        }
      ExpectSameAsLapack(runs, 16 * kN * EpsilonOf(type), what, keep);
    }
  }
}

// potrf and getrf factor panels of PanelWidth columns (the whole matrix up
// to 32, then 32): orders on both sides of one and two panels, two panels
// and a bit, and several panels.
constexpr int64_t kPanelEdgeSizes[] = {31, 32, 33, 63, 64, 65, 67, 200};

void CheckCholesky(ElementType type, int64_t n, char uplo, const std::vector<int64_t>& batch,
                   bool on_cpu = true) {
  const std::vector<int64_t> dims = Dims(batch, n, n);
  const std::string what = Describe(type, dims, std::string("uplo ") + uplo);
  SCOPED_TRACE(what);
  const Values a = PositiveDefinite(type, MatrixCount(batch), n, uplo == 'L', static_cast<uint32_t>(n));
  const Shape shape(type, dims);
  const std::string text =
      CallModule(LapackTarget(type, "potrf"), {shape},
                 "(" + shape.ToString() + ", " + Shape(ElementType::kS32, batch).ToString() + ")",
                 std::string("{uplo = ") + std::to_string(int(uplo)) + " : ui8}");
  const Runs runs = RunAll(text, {ToLiteral(a, type, dims)}, on_cpu);
  ExpectSameAsLapack(runs, 16 * static_cast<double>(n) * EpsilonOf(type), what);
  ASSERT_FALSE(runs.lapack.empty());
  ASSERT_EQ(runs.lapack[1].data<int32_t>()[0], 0) << "not a factorisation test";
}

TEST(LapackFactorExpansionTest, CholeskyMatchesLapack) {
  for (ElementType type : kTypes)
    for (int64_t n : kSizes)
      for (char uplo : {'L', 'U'})
        for (const std::vector<int64_t>& batch : {std::vector<int64_t>{}, std::vector<int64_t>{2, 3}})
          CheckCholesky(type, n, uplo, batch);
}

TEST(LapackFactorExpansionTest, CholeskyMatchesLapackAtPanelEdges) {
  for (ElementType type : kTypes) {
    for (int64_t n : kPanelEdgeSizes) CheckCholesky(type, n, 'L', {}, /*on_cpu=*/n == 67);
    CheckCholesky(type, 67, 'U', {}, /*on_cpu=*/false);
    CheckCholesky(type, 33, 'U', {2});
    CheckCholesky(type, 65, 'L', {2}, /*on_cpu=*/false);
  }
}

// A batch of four 67x67 matrices, three of them not positive definite at
// column 31 (the first panel's last), 32 (the second panel's first) and 33:
// info 0, 32, 33 and 34, and the factor of each leading minor as LAPACK's.
TEST(LapackFactorExpansionTest, CholeskyFailsAtLapacksColumnAcrossPanels) {
  constexpr int64_t kN = 67;
  constexpr int64_t kBad[] = {31, 32, 33};
  for (ElementType type : kTypes) {
    for (char uplo : {'L', 'U'}) {
      const std::vector<int64_t> dims = {4, kN, kN};
      const std::string what = Describe(type, dims, std::string("uplo ") + uplo);
      SCOPED_TRACE(what);
      Values a = PositiveDefinite(type, 4, kN, uplo == 'L', 9);
      for (int64_t k = 1; k < 4; ++k) At(a, kN, k, kBad[k - 1], kBad[k - 1]) = -1.0;
      const Shape shape(type, dims);
      const std::string text =
          CallModule(LapackTarget(type, "potrf"), {shape}, "(" + shape.ToString() + ", s32[4])",
                     std::string("{uplo = ") + std::to_string(int(uplo)) + " : ui8}");
      const Runs runs = RunAll(text, {ToLiteral(a, type, dims)});
      ASSERT_FALSE(runs.lapack.empty());
      ASSERT_EQ(runs.lapack[1].data<int32_t>()[0], 0);
      std::vector<bool> keep(static_cast<size_t>(4 * kN * kN), true);
      for (int64_t k = 1; k < 4; ++k) {
        ASSERT_EQ(runs.lapack[1].data<int32_t>()[k], kBad[k - 1] + 1);
        for (int64_t r = 0; r < kN; ++r)
          for (int64_t c = 0; c < kN; ++c) {
            const bool in_triangle = uplo == 'L' ? r >= c : r <= c;
            const bool in_leading_minor = r < kBad[k - 1] && c < kBad[k - 1];
            keep[static_cast<size_t>((k * kN + r) * kN + c)] = !in_triangle || in_leading_minor;
          }
      }
      ExpectSameAsLapack(runs, 16 * kN * EpsilonOf(type), what, keep);
    }
  }
}

// A unit-free, well-conditioned triangle: diagonal n + |noise| (so the
// solution stays within the tolerance); the other triangle is noise the
// solve must not read.
Values TriangularMatrices(ElementType type, int64_t count, int64_t n, uint32_t seed) {
  Values a = RandomValues(type, count * n * n, seed);
  for (int64_t k = 0; k < count; ++k)
    for (int64_t i = 0; i < n; ++i) At(a, n, k, i, i) = static_cast<double>(n) + std::abs(At(a, n, k, i, i));
  return a;
}

void CheckTriangularSolve(ElementType type, int64_t n, int64_t rhs, const std::vector<int64_t>& batch,
                          char side, char uplo, char trans, char diag) {
  const std::vector<int64_t> a_dims = Dims(batch, n, n);
  const std::vector<int64_t> b_dims = side == 'L' ? Dims(batch, n, rhs) : Dims(batch, rhs, n);
  const std::string what = Describe(
      type, b_dims, std::string("side ") + side + " uplo " + uplo + " trans " + trans + " diag " + diag);
  SCOPED_TRACE(what);
  const Values a = TriangularMatrices(type, MatrixCount(batch), n, static_cast<uint32_t>(n + 7));
  const Values b = RandomValues(type, MatrixCount(batch) * n * rhs, static_cast<uint32_t>(n + 11));
  const Shape a_shape(type, a_dims), b_shape(type, b_dims);
  const std::string config = "{diag = " + std::to_string(int(diag)) +
                             " : ui8, side = " + std::to_string(int(side)) +
                             " : ui8, trans_x = " + std::to_string(int(trans)) +
                             " : ui8, uplo = " + std::to_string(int(uplo)) + " : ui8}";
  const std::string text =
      CallModule(LapackTarget(type, "trsm"), {a_shape, b_shape}, b_shape.ToString(), config);
  const Runs runs = RunAll(text, {ToLiteral(a, type, a_dims), ToLiteral(b, type, b_dims)});
  ExpectSameAsLapack(runs, 16 * static_cast<double>(n) * EpsilonOf(type), what);
}

TEST(LapackFactorExpansionTest, TriangularSolveMatchesBlasInEveryForm) {
  for (ElementType type : kTypes)
    for (char side : {'L', 'R'})
      for (char uplo : {'L', 'U'})
        for (char trans : {'N', 'T', 'C'})
          for (char diag : {'N', 'U'}) CheckTriangularSolve(type, 7, 3, {2}, side, uplo, trans, diag);
}

TEST(LapackFactorExpansionTest, TriangularSolveMatchesBlasAtEverySize) {
  for (ElementType type : kTypes)
    for (int64_t n : kSizes) {
      CheckTriangularSolve(type, n, 2, {}, 'L', 'L', 'N', 'N');
      CheckTriangularSolve(type, n, 3, {2, 2}, 'R', 'U', 'C', 'N');
    }
}

// Blocks of PanelWidth rows: one block and a bit, several blocks, batched.
TEST(LapackFactorExpansionTest, TriangularSolveMatchesBlasAtPanelEdges) {
  for (ElementType type : kTypes) {
    for (int64_t n : {32, 33, 67}) CheckTriangularSolve(type, n, 5, {}, 'L', 'L', 'N', 'N');
    CheckTriangularSolve(type, 67, 3, {2}, 'R', 'U', 'C', 'N');
    CheckTriangularSolve(type, 65, 4, {}, 'L', 'U', 'T', 'U');
  }
}

void CheckLu(ElementType type, const Values& a, int64_t rows, int64_t cols, const std::vector<int64_t>& batch,
             int32_t expected_info_of_first, bool on_cpu = true) {
  const std::vector<int64_t> dims = Dims(batch, rows, cols);
  const std::string what = Describe(type, dims, "getrf");
  SCOPED_TRACE(what);
  const Shape shape(type, dims);
  std::vector<int64_t> pivot_dims = batch;
  pivot_dims.push_back(std::min(rows, cols));
  const std::string text =
      CallModule(LapackTarget(type, "getrf"), {shape},
                 "(" + shape.ToString() + ", " + Shape(ElementType::kS32, pivot_dims).ToString() + ", " +
                     Shape(ElementType::kS32, batch).ToString() + ")",
                 "{}");
  const Runs runs = RunAll(text, {ToLiteral(a, type, dims)}, on_cpu);
  ASSERT_FALSE(runs.lapack.empty());
  ASSERT_EQ(runs.lapack[2].data<int32_t>()[0], expected_info_of_first);
  ExpectSameAsLapack(runs, 32 * static_cast<double>(std::max(rows, cols)) * EpsilonOf(type), what);
}

TEST(LapackFactorExpansionTest, LuMatchesLapack) {
  for (ElementType type : kTypes) {
    for (int64_t n : kSizes) {
      for (const std::vector<int64_t>& batch : {std::vector<int64_t>{}, std::vector<int64_t>{3}}) {
        CheckLu(type, RandomValues(type, MatrixCount(batch) * n * n, static_cast<uint32_t>(3 * n)), n, n,
                batch, 0);
      }
    }
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {5, 3}, {1, 4}, {4, 1}}) {
      CheckLu(type, RandomValues(type, 2 * rows * cols, 17), rows, cols, {2}, 0);
    }
  }
}

// Exact zero pivots: a rank-1 2x2 matrix (U(2,2) is exactly 0: info 2), and
// a 7x7 matrix whose column 3 is zero (info 4; LAPACK goes on factoring),
// batched with a regular matrix (info 0).
TEST(LapackFactorExpansionTest, LuOfSingularMatricesGivesLapacksInfo) {
  for (ElementType type : kTypes) {
    CheckLu(type, Values{1, 2, 2, 4}, 2, 2, {}, 2);
    constexpr int64_t kN = 7;
    Values a = RandomValues(type, 2 * kN * kN, 23);
    for (int64_t r = 0; r < kN; ++r) At(a, kN, 0, r, 3) = 0;
    CheckLu(type, a, kN, kN, {2}, 4);
  }
}

TEST(LapackFactorExpansionTest, LuMatchesLapackAtPanelEdges) {
  for (ElementType type : kTypes) {
    for (int64_t n : kPanelEdgeSizes) {
      CheckLu(type, RandomValues(type, n * n, static_cast<uint32_t>(5 * n)), n, n, {}, 0, /*on_cpu=*/n == 67);
    }
    CheckLu(type, RandomValues(type, 2 * 65 * 65, 29), 65, 65, {2}, 0, /*on_cpu=*/false);
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{70, 40}, {40, 70}, {33, 100}, {100, 33}}) {
      CheckLu(type, RandomValues(type, rows * cols, 31), rows, cols, {}, 0, /*on_cpu=*/rows == 70);
    }
  }
}

// Exact zero pivots at the panels' seams: three 67x67 matrices whose column
// 31, 32 or 33 is zero (info 32, 33, 34; LAPACK goes on factoring).
TEST(LapackFactorExpansionTest, LuOfSingularMatricesAcrossPanelsGivesLapacksInfo) {
  constexpr int64_t kN = 67;
  for (ElementType type : kTypes) {
    Values a = RandomValues(type, 3 * kN * kN, 37);
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t r = 0; r < kN; ++r) At(a, kN, k, r, 31 + k) = 0;
    CheckLu(type, a, kN, kN, {3}, 32);
  }
}

// Ties in the pivot search go to the first row, as i?amax; for complex the
// magnitude is |re| + |im|, so 3+0i beats 2+2i (|z| 2.83 < 3 but 4 > 3 as
// |re| + |im|: the second row wins).
TEST(LapackFactorExpansionTest, LuPivotsAsBlasIamax) {
  for (ElementType type : kTypes) {
    CheckLu(type, Values{2, 1, -2, -2, 2, 3, 1, 1, 0}, 3, 3, {}, 0);
    if (IsComplex(type)) CheckLu(type, Values{3, 1, Complex(2, 2), 0}, 2, 2, {}, 0);
  }
}

TEST(LapackFactorExpansionTest, AnInstanceThatCannotBeExpandedIsRefusedByName) {
  const std::string text = CallModule("lapack_spotrf_ffi", {Shape(ElementType::kF32, {2, 3})},
                                      "(f32[2,3], s32[])", "{uplo = 76 : ui8}");
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  const Instruction* call = module->entry()->root();
  const DeviceOpExpansion* row = FindDeviceOpExpansion(*call);
  ASSERT_NE(row, nullptr);
  StatusOr<std::unique_ptr<Module>> expansion = row->expand(*call);
  ASSERT_FALSE(expansion.ok());
  EXPECT_EQ(expansion.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(expansion.status().message().find("lapack_spotrf_ffi"), std::string::npos)
      << expansion.status().ToString();
  EXPECT_NE(expansion.status().message().find("not square"), std::string::npos)
      << expansion.status().ToString();
  EXPECT_FALSE(ExpandsForDevices(*call));

  const std::string no_letter =
      CallModule("lapack_strsm_ffi", {Shape(ElementType::kF32, {2, 2}), Shape(ElementType::kF32, {2, 1})},
                 "f32[2,1]", "{side = 76 : ui8, uplo = 76 : ui8, trans_x = 78 : ui8}");
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> trsm, ParseHloModule(no_letter));
  StatusOr<std::unique_ptr<Module>> refused =
      FindDeviceOpExpansion(*trsm->entry()->root())->expand(*trsm->entry()->root());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'diag'"), std::string::npos) << refused.status().ToString();
}

}  // namespace
}  // namespace kiln::factor_expansion_test
