// The device expansions of geqrf (Householder QR), orgqr/ungqr (its Q),
// gehrd (Hessenberg) and gesdd/gesvd (SVD) (core/passes/expansions/qr.cc,
// svd.cc): each custom call runs by LAPACK on the interpreter, and expanded
// (DeviceOpExpander applied: loops of ordinary HLO, no custom call left) on
// the interpreter and on cpu. QR and Hessenberg factors and scales must be
// LAPACK's element by element within a tolerance scaled by the type's
// epsilon and the order (LAPACK's reflector convention); the SVD's singular
// values must be LAPACK's, and its vectors (unique only up to phases) must
// give back A and be orthonormal.
#include <algorithm>
#include <cmath>
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

// A namespace of its own: a unity build may put this file in one unit with
// the other LAPACK tests, whose helpers have the same names.
namespace kiln::qr_svd_expansion_test {
namespace {

using testing::lapack::Complex;
using testing::lapack::EpsilonOf;
using testing::lapack::FromLiteral;
using testing::lapack::LapackTarget;
using testing::lapack::MatrixCount;
using testing::lapack::RandomValues;
using testing::lapack::RealTypeOf;
using testing::lapack::ToLiteral;
using testing::lapack::Values;
constexpr auto& kTypes = testing::lapack::kLapackTypes;
constexpr int64_t kSizes[] = {1, 2, 3, 7, 16, 33};

std::vector<int64_t> BatchedDims(std::vector<int64_t> batch, std::vector<int64_t> trailing) {
  batch.insert(batch.end(), trailing.begin(), trailing.end());
  return batch;
}

// A module of custom calls: `body` lines after parameters p0.. of `operands`.
std::string ModuleText(const std::vector<Shape>& operands, const std::string& body) {
  std::string text = "HloModule lapack\n\nENTRY main {\n";
  for (size_t i = 0; i < operands.size(); ++i)
    text += "  p" + std::to_string(i) + " = " + operands[i].ToString() + " parameter(" + std::to_string(i) +
            ")\n";
  return text + body + "}\n";
}

std::string Call(const std::string& name, const std::string& result, const std::string& target,
                 const std::string& operands, const std::string& config, bool root = false) {
  return std::string("  ") + (root ? "ROOT " : "") + name + " = " + result + " custom-call(" + operands +
         "), custom_call_target=\"" + target +
         "\", api_version=API_VERSION_TYPED_FFI, backend_config=" + config + "\n";
}

// The original module's leaves (LAPACK, interpreter) and the expanded
// module's on the interpreter and (when `on_cpu`) on cpu.
struct Runs {
  std::vector<Literal> lapack;
  std::vector<std::pair<std::string, std::vector<Literal>>> expanded;
};

Runs RunAll(const std::string& text, const std::vector<Literal>& arguments, bool on_cpu) {
  Runs runs;
  StatusOr<std::unique_ptr<kiln::Module>> original = ParseHloModule(text);
  StatusOr<std::unique_ptr<kiln::Module>> expanded = ParseHloModule(text);
  EXPECT_TRUE(original.ok() && expanded.ok()) << original.status().ToString() << "\n" << text;
  if (!original.ok() || !expanded.ok()) return runs;
  StatusOr<bool> changed = DeviceOpExpander().Run(**expanded);
  EXPECT_TRUE(changed.ok() && *changed) << changed.status().ToString() << "\n" << text;
  for (const auto& computation : (*expanded)->computations()) {
    for (const auto& instruction : computation->instructions())
      EXPECT_NE(instruction->opcode, Opcode::kCustomCall) << "still a custom call: " << instruction->name;
  }
  StatusOr<std::unique_ptr<Backend>> interpreter = CreateBackend("interpreter");
  EXPECT_TRUE(interpreter.ok());
  if (!interpreter.ok()) return runs;
  StatusOr<std::vector<Literal>> lapack = testing::ExecuteLeaves(**interpreter, **original, arguments);
  EXPECT_TRUE(lapack.ok()) << lapack.status().ToString();
  if (lapack.ok()) runs.lapack = std::move(lapack).value();
  std::vector<std::string> backends = {"interpreter"};
  if (on_cpu) backends.push_back("cpu");
  for (const std::string& name : backends) {
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(name);
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    if (!backend.ok()) continue;
    StatusOr<std::vector<Literal>> leaves = testing::ExecuteLeaves(**backend, **expanded, arguments);
    EXPECT_TRUE(leaves.ok()) << name << ": " << leaves.status().ToString();
    if (leaves.ok()) runs.expanded.emplace_back(name, std::move(leaves).value());
  }
  return runs;
}

// Every element of `got` within `tolerance` * (1 + max |want|) of `want`.
void ExpectNear(const Literal& want, const Literal& got, double tolerance, const std::string& what) {
  ASSERT_EQ(want.element_count(), got.element_count()) << what;
  const Values w = FromLiteral(want);
  const Values g = FromLiteral(got);
  double scale = 1;
  for (const Complex& v : w) scale = std::max(scale, std::abs(v));
  int reported = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::abs(w[i] - g[i]) > tolerance * scale && reported++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", LAPACK gives " << w[i];
  }
}

// Cases: the batch and the matrix extents.
struct Case {
  std::vector<int64_t> batch;
  int64_t rows, cols;
};

std::vector<Case> QrCases() {
  std::vector<Case> cases;
  for (int64_t n : kSizes) cases.push_back({{}, n, n});
  cases.push_back({{2}, 7, 7});
  cases.push_back({{2, 3}, 5, 3});
  cases.push_back({{}, 3, 5});
  cases.push_back({{3}, 16, 9});
  return cases;
}

std::string CaseName(ElementType type, const Case& c) {
  std::string name(ElementTypeName(type));
  for (int64_t d : c.batch) name += "[" + std::to_string(d) + "]";
  return name + " " + std::to_string(c.rows) + "x" + std::to_string(c.cols);
}

TEST(QrExpansionTest, GeqrfAndOrgqrAreLapacks) {
  uint32_t seed = 1;
  for (ElementType type : kTypes) {
    for (const Case& c : QrCases()) {
      const int64_t k = std::min(c.rows, c.cols);
      const Shape a(type, BatchedDims(c.batch, {c.rows, c.cols}));
      const Shape taus(type, BatchedDims(c.batch, {k}));
      std::string body =
          Call("qr", Shape::Tuple({a, taus}).ToString(), LapackTarget(type, "geqrf"), "p0", "{}");
      body += "  factor = " + a.ToString() + " get-tuple-element(qr), index=0\n";
      body += "  scales = " + taus.ToString() + " get-tuple-element(qr), index=1\n";
      // orgqr takes rows >= columns: the first k columns of a wide factor.
      const Shape q_shape(type, BatchedDims(c.batch, {c.rows, k}));
      std::string q_operand = "factor";
      if (k != c.cols) {
        std::string limits;
        for (int64_t d : c.batch) limits += "[0:" + std::to_string(d) + "], ";
        body += "  left = " + q_shape.ToString() + " slice(factor), slice={" + limits +
                "[0:" + std::to_string(c.rows) + "], [0:" + std::to_string(k) + "]}\n";
        q_operand = "left";
      }
      const std::string orgqr = LapackTarget(type, IsComplex(type) ? "ungqr" : "orgqr");
      body += Call("q", q_shape.ToString(), orgqr, q_operand + ", scales", "{}");
      body += "  ROOT all = " + Shape::Tuple({a, taus, q_shape}).ToString() + " tuple(factor, scales, q)\n";
      const std::string text = ModuleText({a}, body);
      Values input = RandomValues(type, MatrixCount(c.batch) * c.rows * c.cols, seed++);
      if (c.rows >= 3 && c.cols >= 2) {
        // A zero column below the diagonal: a reflector that is I (tau = 0)
        // for real types.
        for (int64_t r = 1; r < c.rows; ++r) input[static_cast<size_t>(r * c.cols)] = 0;
      }
      const bool on_cpu = c.rows <= 7;
      Runs runs = RunAll(text, {ToLiteral(input, type, a.dimensions())}, on_cpu);
      ASSERT_EQ(runs.lapack.size(), 3u) << CaseName(type, c);
      const double tolerance = 20 * EpsilonOf(type) * static_cast<double>(std::max(c.rows, c.cols));
      for (const auto& [backend, leaves] : runs.expanded) {
        ASSERT_EQ(leaves.size(), 3u);
        const std::string where = CaseName(type, c) + " on " + backend;
        ExpectNear(runs.lapack[0], leaves[0], tolerance, "geqrf factor, " + where);
        ExpectNear(runs.lapack[1], leaves[1], tolerance, "geqrf scales, " + where);
        ExpectNear(runs.lapack[2], leaves[2], tolerance, "orgqr Q, " + where);
      }
    }
  }
}

TEST(QrExpansionTest, GehrdIsLapacks) {
  uint32_t seed = 100;
  for (ElementType type : kTypes) {
    for (int64_t n : kSizes) {
      for (const std::vector<int64_t>& batch : {std::vector<int64_t>{}, std::vector<int64_t>{2}}) {
        const Shape a(type, BatchedDims(batch, {n, n}));
        const Shape taus(type, BatchedDims(batch, {std::max<int64_t>(0, n - 1)}));
        const Shape info(ElementType::kS32, batch);
        const std::string config = "{high = " + std::to_string(n) + " : i32, low = 1 : i32}";
        const std::string text = ModuleText({a}, Call("h", Shape::Tuple({a, taus, info}).ToString(),
                                                      LapackTarget(type, "gehrd"), "p0", config,
                                                      /*root=*/true));
        Runs runs = RunAll(
            text, {ToLiteral(RandomValues(type, MatrixCount(batch) * n * n, seed++), type, a.dimensions())},
            /*on_cpu=*/n <= 7);
        ASSERT_EQ(runs.lapack.size(), 3u);
        const double tolerance = 20 * EpsilonOf(type) * static_cast<double>(n);
        for (const auto& [backend, leaves] : runs.expanded) {
          const std::string where = CaseName(type, {batch, n, n}) + " on " + backend;
          ExpectNear(runs.lapack[0], leaves[0], tolerance, "gehrd factor, " + where);
          ExpectNear(runs.lapack[1], leaves[1], tolerance, "gehrd scales, " + where);
          EXPECT_EQ(FromLiteral(leaves[2]), FromLiteral(runs.lapack[2])) << "info, " << where;
        }
      }
    }
  }
}

TEST(QrExpansionTest, SytrdIsLapacks) {
  uint32_t seed = 150;
  for (ElementType type : kTypes) {
    for (int64_t n : kSizes) {
      for (const std::vector<int64_t>& batch : {std::vector<int64_t>{}, std::vector<int64_t>{2}}) {
        const Shape a(type, BatchedDims(batch, {n, n}));
        const int64_t off = std::max<int64_t>(0, n - 1);
        const Shape result =
            Shape::Tuple({a, Shape(RealTypeOf(type), BatchedDims(batch, {n})),
                          Shape(RealTypeOf(type), BatchedDims(batch, {off})),
                          Shape(type, BatchedDims(batch, {off})), Shape(ElementType::kS32, batch)});
        const std::string text = ModuleText(
            {a}, Call("t", result.ToString(), LapackTarget(type, IsComplex(type) ? "hetrd" : "sytrd"), "p0",
                      "{uplo = 76 : ui8}", /*root=*/true));
        // The lower triangle is read (the diagonal's real part); the upper
        // triangle is noise LAPACK leaves alone.
        Runs runs = RunAll(
            text, {ToLiteral(RandomValues(type, MatrixCount(batch) * n * n, seed++), type, a.dimensions())},
            /*on_cpu=*/n <= 7);
        ASSERT_EQ(runs.lapack.size(), 5u);
        // Looser than QR's: T is backward stable, but its entries' forward
        // error is not bounded by eps n (an f32 16x16 case differs from
        // LAPACK by 2e-4 on two diagonal entries near 3).
        const double tolerance = 200 * EpsilonOf(type) * static_cast<double>(n);
        for (const auto& [backend, leaves] : runs.expanded) {
          const std::string where = CaseName(type, {batch, n, n}) + " on " + backend;
          ExpectNear(runs.lapack[0], leaves[0], tolerance, "sytrd factor, " + where);
          ExpectNear(runs.lapack[1], leaves[1], tolerance, "sytrd diagonal, " + where);
          ExpectNear(runs.lapack[2], leaves[2], tolerance, "sytrd subdiagonal, " + where);
          ExpectNear(runs.lapack[3], leaves[3], tolerance, "sytrd scales, " + where);
          EXPECT_EQ(FromLiteral(leaves[4]), FromLiteral(runs.lapack[4])) << "info, " << where;
        }
      }
    }
  }
}

TEST(QrExpansionTest, GehrdOfPartOfTheMatrixIsRefused) {
  const Shape a(ElementType::kF32, {4, 4});
  const std::string text = ModuleText(
      {a},
      Call("h", Shape::Tuple({a, Shape(ElementType::kF32, {3}), Shape(ElementType::kS32, {})}).ToString(),
           "lapack_sgehrd_ffi", "p0", "{high = 3 : i32, low = 1 : i32}", true));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<kiln::Module> module, ParseHloModule(text));
  const Instruction* call = module->entry()->root();
  ASSERT_NE(FindDeviceOpExpansion(*call), nullptr);
  StatusOr<std::unique_ptr<kiln::Module>> expansion = FindDeviceOpExpansion(*call)->expand(*call);
  ASSERT_FALSE(expansion.ok());
  EXPECT_EQ(expansion.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(expansion.status().message().find("low = 1 and high = n"), std::string::npos)
      << expansion.status().ToString();
  EXPECT_FALSE(ExpandsForDevices(*call));
}

// Element (r, c) of matrix b in a batch of rows x cols matrices.
Complex At(const Values& values, int64_t rows, int64_t cols, int64_t b, int64_t r, int64_t c) {
  return values[static_cast<size_t>((b * rows + r) * cols + c)];
}

struct SvdCase {
  std::vector<int64_t> batch;
  int64_t rows, cols;
  char mode;
};

TEST(SvdExpansionTest, ValuesAreLapacksAndVectorsFactorTheMatrix) {
  std::vector<SvdCase> cases;
  for (int64_t n : kSizes) cases.push_back({{}, n, n, 'A'});
  cases.push_back({{2}, 7, 7, 'S'});
  cases.push_back({{2}, 5, 3, 'S'});
  cases.push_back({{}, 3, 5, 'S'});
  cases.push_back({{2}, 4, 6, 'N'});
  cases.push_back({{}, 6, 4, 'N'});
  cases.push_back({{}, 5, 3, 'A'});
  cases.push_back({{2}, 3, 5, 'A'});
  uint32_t seed = 200;
  for (ElementType type : kTypes) {
    for (const std::string routine : {"gesdd", "gesvd"}) {
      for (const SvdCase& c : cases) {
        const int64_t m = c.rows, n = c.cols, k = std::min(m, n);
        const bool vectors = c.mode != 'N';
        const int64_t u_cols = c.mode == 'S' ? k : m;
        const int64_t vt_rows = c.mode == 'S' ? k : n;
        const Shape a(type, BatchedDims(c.batch, {m, n}));
        const Shape result = Shape::Tuple({a, Shape(RealTypeOf(type), BatchedDims(c.batch, {k})),
                                           Shape(type, BatchedDims(c.batch, {m, u_cols})),
                                           Shape(type, BatchedDims(c.batch, {vt_rows, n})),
                                           Shape(ElementType::kS32, c.batch)});
        const std::string config = "{mode = " + std::to_string(static_cast<int>(c.mode)) + " : ui8}";
        const std::string text =
            ModuleText({a}, Call("svd", result.ToString(), LapackTarget(type, routine), "p0", config, true));
        Values input = RandomValues(type, MatrixCount(c.batch) * m * n, seed++);
        if (m == 7 && n == 7) {
          // Rank-deficient: row 3 repeats row 1.
          for (int64_t b = 0; b < MatrixCount(c.batch); ++b)
            for (int64_t j = 0; j < n; ++j)
              input[static_cast<size_t>((b * m + 3) * n + j)] =
                  input[static_cast<size_t>((b * m + 1) * n + j)];
        }
        Runs runs = RunAll(text, {ToLiteral(input, type, a.dimensions())}, /*on_cpu=*/m <= 7 && n <= 7);
        ASSERT_EQ(runs.lapack.size(), 5u);
        const double tolerance = 30 * EpsilonOf(type) * static_cast<double>(std::max(m, n));
        for (const auto& [backend, leaves] : runs.expanded) {
          const std::string where =
              routine + " " + c.mode + " " + CaseName(type, {c.batch, m, n}) + " on " + backend;
          ExpectNear(runs.lapack[1], leaves[1], tolerance, "singular values, " + where);
          EXPECT_EQ(FromLiteral(leaves[4]), FromLiteral(runs.lapack[4])) << "info, " << where;
          if (!vectors) continue;
          const Values s = FromLiteral(leaves[1]);
          const Values u = FromLiteral(leaves[2]);
          const Values vt = FromLiteral(leaves[3]);
          double worst_product = 0, worst_u = 0, worst_v = 0;
          for (int64_t b = 0; b < MatrixCount(c.batch); ++b) {
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                Complex sum = 0;
                for (int64_t t = 0; t < k; ++t)
                  sum += At(u, m, u_cols, b, i, t) * s[static_cast<size_t>(b * k + t)] *
                         At(vt, vt_rows, n, b, t, j);
                worst_product = std::max(worst_product, std::abs(sum - At(input, m, n, b, i, j)));
              }
            // Columns of U and rows of V^T are orthonormal, but for the
            // columns of zero singular values (zero in the expansion).
            auto zero_value = [&](int64_t x) {
              return x < k && s[static_cast<size_t>(b * k + x)].real() < 1e-3;
            };
            for (int64_t x = 0; x < u_cols; ++x)
              for (int64_t y = 0; y < u_cols; ++y) {
                if (zero_value(x) || zero_value(y)) continue;
                Complex uu = 0;
                for (int64_t r = 0; r < m; ++r)
                  uu += std::conj(At(u, m, u_cols, b, r, x)) * At(u, m, u_cols, b, r, y);
                worst_u = std::max(worst_u, std::abs(uu - (x == y ? 1.0 : 0.0)));
              }
            for (int64_t x = 0; x < vt_rows; ++x)
              for (int64_t y = 0; y < vt_rows; ++y) {
                if (zero_value(x) || zero_value(y)) continue;
                Complex vv = 0;
                for (int64_t r = 0; r < n; ++r)
                  vv += At(vt, vt_rows, n, b, x, r) * std::conj(At(vt, vt_rows, n, b, y, r));
                worst_v = std::max(worst_v, std::abs(vv - (x == y ? 1.0 : 0.0)));
              }
          }
          double scale = 1;
          for (const Complex& v : s) scale = std::max(scale, std::abs(v));
          EXPECT_LE(worst_product, tolerance * scale) << "U S V^H - A, " << where;
          EXPECT_LE(worst_u, tolerance) << "U^H U - I, " << where;
          EXPECT_LE(worst_v, tolerance) << "V^H V - I, " << where;
        }
      }
    }
  }
}

TEST(SvdExpansionTest, VectorsOfTheWrongShapeForTheModeAreRefused) {
  // Mode S (thin) with a full U: no LAPACK call gives these shapes.
  const Shape a(ElementType::kF32, {5, 3});
  const Shape result = Shape::Tuple({a, Shape(ElementType::kF32, {3}), Shape(ElementType::kF32, {5, 5}),
                                     Shape(ElementType::kF32, {3, 3}), Shape(ElementType::kS32, {})});
  const std::string text =
      ModuleText({a}, Call("svd", result.ToString(), "lapack_sgesdd_ffi", "p0", "{mode = 83 : ui8}", true));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<kiln::Module> module, ParseHloModule(text));
  const Instruction* call = module->entry()->root();
  ASSERT_NE(FindDeviceOpExpansion(*call), nullptr);
  StatusOr<std::unique_ptr<kiln::Module>> expansion = FindDeviceOpExpansion(*call)->expand(*call);
  ASSERT_FALSE(expansion.ok());
  EXPECT_EQ(expansion.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(expansion.status().message().find("shapes mode S gives"), std::string::npos)
      << expansion.status().ToString();
}

TEST(EighExpansionTest, ValuesAreLapacksAndVectorsDiagonaliseTheMatrix) {
  uint32_t seed = 300;
  for (ElementType type : kTypes) {
    for (int64_t n : kSizes) {
      for (const char uplo : {'L', 'U'}) {
        for (const char mode : {'V', 'N'}) {
          if (mode == 'N' && n != 7) continue;
          const std::vector<int64_t> batch =
              n == 3 || n == 7 ? std::vector<int64_t>{2} : std::vector<int64_t>{};
          const int64_t count = MatrixCount(batch);
          const Shape a(type, BatchedDims(batch, {n, n}));
          const Shape result = Shape::Tuple(
              {a, Shape(RealTypeOf(type), BatchedDims(batch, {n})), Shape(ElementType::kS32, batch)});
          const std::string config = "{mode = " + std::to_string(static_cast<int>(mode)) +
                                     " : ui8, uplo = " + std::to_string(static_cast<int>(uplo)) + " : ui8}";
          const std::string text = ModuleText(
              {a}, Call("eigh", result.ToString(), LapackTarget(type, IsComplex(type) ? "heevd" : "syevd"),
                        "p0", config, true));
          // The `uplo` triangle of a Hermitian matrix (indefinite; the
          // second of a batch has a repeated eigenvalue: 2 I plus a rank-one
          // term); the other triangle is noise, which LAPACK never reads.
          Values input = RandomValues(type, count * n * n, seed++);
          Values hermitian(input.size());
          for (int64_t b = 0; b < count; ++b)
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < n; ++j) {
                const bool kept = uplo == 'L' ? i >= j : i <= j;
                const Complex x = kept ? At(input, n, n, b, i, j) : std::conj(At(input, n, n, b, j, i));
                Complex value = i == j ? Complex(x.real()) : x;
                if (b == 1) {
                  value = (i == j ? Complex(2) : Complex(0)) +
                          At(input, n, n, b, i, 0) * std::conj(At(input, n, n, b, j, 0));
                }
                hermitian[static_cast<size_t>((b * n + i) * n + j)] = value;
              }
          Values given = input;
          for (int64_t b = 0; b < count; ++b)
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < n; ++j) {
                const bool kept = uplo == 'L' ? i >= j : i <= j;
                if (kept) given[static_cast<size_t>((b * n + i) * n + j)] = At(hermitian, n, n, b, i, j);
              }
          Runs runs = RunAll(text, {ToLiteral(given, type, a.dimensions())}, /*on_cpu=*/n <= 7);
          ASSERT_EQ(runs.lapack.size(), 3u);
          const double tolerance = 30 * EpsilonOf(type) * static_cast<double>(n);
          for (const auto& [backend, leaves] : runs.expanded) {
            const std::string where = std::string("uplo ") + uplo + " mode " + mode + " " +
                                      CaseName(type, {batch, n, n}) + " on " + backend;
            ExpectNear(runs.lapack[1], leaves[1], tolerance, "eigenvalues, " + where);
            EXPECT_EQ(FromLiteral(leaves[2]), FromLiteral(runs.lapack[2])) << "info, " << where;
            if (mode == 'N') continue;
            const Values w = FromLiteral(leaves[1]);
            const Values v = FromLiteral(leaves[0]);
            double worst_av = 0, worst_vv = 0, scale = 1;
            for (const Complex& x : w) scale = std::max(scale, std::abs(x));
            for (int64_t b = 0; b < count; ++b)
              for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  Complex av = 0, vv = 0;
                  for (int64_t t = 0; t < n; ++t) {
                    av += At(hermitian, n, n, b, i, t) * At(v, n, n, b, t, j);
                    vv += std::conj(At(v, n, n, b, t, i)) * At(v, n, n, b, t, j);
                  }
                  worst_av = std::max(
                      worst_av, std::abs(av - At(v, n, n, b, i, j) * w[static_cast<size_t>(b * n + j)]));
                  worst_vv = std::max(worst_vv, std::abs(vv - (i == j ? 1.0 : 0.0)));
                }
            EXPECT_LE(worst_av, tolerance * scale) << "A V - V diag(w), " << where;
            EXPECT_LE(worst_vv, tolerance) << "V^H V - I, " << where;
          }
        }
      }
    }
  }
}

TEST(EighExpansionTest, GeneralEigenAndSchurAreRefusedAsJaxRefusesThemOnGpu) {
  const Shape a(ElementType::kF32, {3, 3});
  const Shape vectors(ElementType::kC64, {3, 3});
  const Shape values(ElementType::kF32, {3});
  const Shape info(ElementType::kS32, {});
  const std::string geev = ModuleText(
      {a}, Call("eig", Shape::Tuple({values, values, vectors, vectors, info}).ToString(), "lapack_sgeev_ffi",
                "p0", "{compute_left = 78 : ui8, compute_right = 86 : ui8}", true));
  const std::string gees =
      ModuleText({a}, Call("schur", Shape::Tuple({a, a, values, values, info, info}).ToString(),
                           "lapack_sgees_ffi", "p0", "{mode = 86 : ui8, sort = 78 : ui8}", true));
  for (const std::string& text : {geev, gees}) {
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<kiln::Module> module, ParseHloModule(text));
    const Instruction* call = module->entry()->root();
    ASSERT_NE(FindDeviceOpExpansion(*call), nullptr) << text;
    StatusOr<std::unique_ptr<kiln::Module>> expansion = FindDeviceOpExpansion(*call)->expand(*call);
    ASSERT_FALSE(expansion.ok());
    EXPECT_EQ(expansion.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(expansion.status().message().find("as JAX refuses"), std::string::npos)
        << expansion.status().ToString();
    EXPECT_FALSE(ExpandsForDevices(*call));
    KILN_ASSERT_OK_AND_ASSIGN(bool changed, DeviceOpExpander().Run(*module));
    EXPECT_FALSE(changed);
  }
}

}  // namespace
}  // namespace kiln::qr_svd_expansion_test
