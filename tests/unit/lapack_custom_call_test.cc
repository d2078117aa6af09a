// The built-in LAPACK custom-call targets JAX emits for jnp.linalg on CPU
// (core/builtin_custom_calls.h): each factorization is checked by the
// property that defines it, in the four element types, on the interpreter
// and the cpu backend (which runs them through the interpreter's kernels).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/builtin_custom_calls.h"
#include "core/hlo_parser.h"
#include "core/interpreter/lapack_calls_library.h"
#include "core/lowering/step_lowering.h"
#include "tests/unit/lapack_test_values.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::lapack::Complex;
using testing::lapack::FromLiteral;
using testing::lapack::LapackLetter;
using testing::lapack::RandomValues;
using testing::lapack::RealTypeOf;
using testing::lapack::ToLiteral;
using testing::lapack::Values;
constexpr auto& kTypes = testing::lapack::kLapackTypes;

double LapackTolerance(ElementType type) { return RealTypeOf(type) == ElementType::kF32 ? 2e-4 : 1e-10; }

std::string ShapeText(ElementType type, const std::vector<int64_t>& dims) {
  return Shape(type, dims).ToString();
}

// A module whose root is one custom call of `target` on parameters `operands`
// (shape texts), giving `result` (shape text), with `config` as backend_config.
std::string CallModule(const std::string& target, const std::vector<std::string>& operands,
                       const std::string& result, const std::string& config) {
  std::string text = "HloModule lapack\n\nENTRY main {\n";
  std::string names;
  for (size_t i = 0; i < operands.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + operands[i] + " parameter(" + std::to_string(i) + ")\n";
    names += (i == 0 ? "p" : ", p") + std::to_string(i);
  }
  text += "  ROOT call = " + result + " custom-call(" + names + "), custom_call_target=\"" + target +
          "\", api_version=API_VERSION_TYPED_FFI, backend_config=" + config + "\n}\n";
  return text;
}

// Matrix `index` of a batch: element (r, c).
struct Batch {
  const Values& values;
  int64_t rows, cols;
  Complex operator()(int64_t index, int64_t r, int64_t c) const {
    return values[static_cast<size_t>((index * rows + r) * cols + c)];
  }
};

// B B^H + n I for each matrix: Hermitian positive definite.
Values PositiveDefinite(ElementType type, int64_t count, int64_t n, uint32_t seed) {
  const Values b = RandomValues(type, count * n * n, seed);
  Batch B{b, n, n};
  Values a(b.size());
  for (int64_t k = 0; k < count; ++k)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Complex sum = i == j ? Complex(static_cast<double>(n)) : Complex(0);
        for (int64_t t = 0; t < n; ++t) sum += B(k, i, t) * std::conj(B(k, j, t));
        a[static_cast<size_t>((k * n + i) * n + j)] = sum;
      }
  return a;
}

class LapackCallTest : public ::testing::TestWithParam<std::string> {
 protected:
  StatusOr<std::vector<Literal>> RunText(const std::string& text, std::span<const Literal> arguments) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(text));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(GetParam()));
    return testing::ExecuteLeaves(*backend, *module, arguments);
  }
};

// Expects |want - got| <= tolerance * (1 + |want|) element by element.
void ExpectNear(const Values& want, const Values& got, double tolerance, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::abs(want[i] - got[i]), tolerance * (1 + std::abs(want[i])))
        << what << " element " << i << ": want " << want[i] << " got " << got[i];
  }
}

TEST_P(LapackCallTest, PotrfLowerFactorTimesItsAdjointIsTheMatrix) {
  constexpr int64_t kCount = 2, kN = 4;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = PositiveDefinite(type, kCount, kN, 1);
    const std::string shape = ShapeText(type, {kCount, kN, kN});
    const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "potrf_ffi", {shape},
                                        "(" + shape + "{1,2,0}, s32[2]{0})", "{uplo = 76 : ui8}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, kN, kN})}));
    EXPECT_EQ(out[1].data<int32_t>()[0], 0);
    EXPECT_EQ(out[1].data<int32_t>()[1], 0);
    const Values l = FromLiteral(out[0]);
    Batch L{l, kN, kN};
    Values product(a.size());
    for (int64_t k = 0; k < kCount; ++k)
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          Complex sum = 0;
          for (int64_t t = 0; t <= std::min(i, j); ++t) sum += L(k, i, t) * std::conj(L(k, j, t));
          product[static_cast<size_t>((k * kN + i) * kN + j)] = sum;
        }
    ExpectNear(a, product, LapackTolerance(type) * 10, "L L^H");
  }
}

TEST_P(LapackCallTest, PotrfOfAMatrixNotPositiveDefiniteReportsInfo) {
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    // diag(1, -1): the second leading minor is negative.
    const Values a = {1, 0, 0, -1};
    const std::string shape = ShapeText(type, {2, 2});
    const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "potrf_ffi", {shape},
                                        "(" + shape + ", s32[])", "{uplo = 76 : ui8}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {2, 2})}));
    EXPECT_EQ(out[1].data<int32_t>()[0], 2);
  }
}

// Applies LAPACK's row interchanges (1-based, in order) backwards to P L U.
TEST_P(LapackCallTest, GetrfPivotsTimesLowerTimesUpperIsTheMatrix) {
  for (ElementType type : kTypes) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4, 4}, {3, 5}, {5, 3}}) {
      SCOPED_TRACE(std::string(ElementTypeName(type)) + " " + std::to_string(rows) + "x" +
                   std::to_string(cols));
      constexpr int64_t kCount = 2;
      const int64_t k = std::min(rows, cols);
      const Values a = RandomValues(type, kCount * rows * cols, 2);
      const std::string shape = ShapeText(type, {kCount, rows, cols});
      const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "getrf_ffi", {shape},
                                          "(" + shape + ", s32[2," + std::to_string(k) + "], s32[2])", "{}");
      KILN_ASSERT_OK_AND_ASSIGN(
          std::vector<Literal> out,
          RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, rows, cols})}));
      const Values lu = FromLiteral(out[0]);
      Batch LU{lu, rows, cols};
      Values product(a.size());
      for (int64_t b = 0; b < kCount; ++b) {
        EXPECT_EQ(out[2].data<int32_t>()[b], 0);
        std::vector<Values> rows_of(static_cast<size_t>(rows), Values(static_cast<size_t>(cols)));
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            Complex sum = 0;
            for (int64_t t = 0; t <= std::min({i, j, k - 1}); ++t)
              sum += (t == i ? Complex(1) : LU(b, i, t)) * LU(b, t, j);
            rows_of[static_cast<size_t>(i)][static_cast<size_t>(j)] = sum;
          }
        for (int64_t p = k - 1; p >= 0; --p) {
          const int32_t swap_with = out[1].data<int32_t>()[static_cast<size_t>(b * k + p)] - 1;
          ASSERT_GE(swap_with, p);
          ASSERT_LT(swap_with, rows);
          std::swap(rows_of[static_cast<size_t>(p)], rows_of[static_cast<size_t>(swap_with)]);
        }
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            product[static_cast<size_t>((b * rows + i) * cols + j)] =
                rows_of[static_cast<size_t>(i)][static_cast<size_t>(j)];
      }
      ExpectNear(a, product, LapackTolerance(type) * 10, "P L U");
    }
  }
}

TEST_P(LapackCallTest, GetrfOfASingularMatrixReportsInfo) {
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = {1, 2, 2, 4};  // rank 1: U(2, 2) is exactly 0
    const std::string shape = ShapeText(type, {2, 2});
    const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "getrf_ffi", {shape},
                                        "(" + shape + ", s32[2], s32[])", "{}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {2, 2})}));
    EXPECT_EQ(out[2].data<int32_t>()[0], 2);
  }
}

TEST_P(LapackCallTest, GeqrfThenOrgqrGiveAnOrthonormalQTimesRThatIsTheMatrix) {
  constexpr int64_t kCount = 2, kRows = 5, kCols = 3;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = RandomValues(type, kCount * kRows * kCols, 3);
    const std::string matrix = ShapeText(type, {kCount, kRows, kCols});
    const std::string scales = ShapeText(type, {kCount, kCols});
    const std::string letter(1, LapackLetter(type));
    const std::string text = "HloModule qr\n\nENTRY main {\n  a = " + matrix + " parameter(0)\n  qr = (" +
                             matrix + "{1,2,0}, " + scales +
                             ") custom-call(a), custom_call_target=\"lapack_" + letter +
                             "geqrf_ffi\", operand_layout_constraints={" + matrix +
                             "{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, "
                             "api_version=API_VERSION_TYPED_FFI, backend_config={}\n  r = " +
                             matrix + " get-tuple-element(qr), index=0\n  tau = " + scales +
                             " get-tuple-element(qr), index=1\n  q = " + matrix +
                             "{1,2,0} custom-call(r, tau), custom_call_target=\"lapack_" + letter +
                             (IsComplex(type) ? "ungqr" : "orgqr") +
                             "_ffi\", api_version=API_VERSION_TYPED_FFI, backend_config={}\n  ROOT t = (" +
                             matrix + ", " + matrix + ") tuple(q, r)\n}\n";
    KILN_ASSERT_OK_AND_ASSIGN(
        std::vector<Literal> out,
        RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, kRows, kCols})}));
    const Values q = FromLiteral(out[0]);
    const Values r = FromLiteral(out[1]);
    Batch Q{q, kRows, kCols}, R{r, kRows, kCols};
    Values product(a.size());
    for (int64_t b = 0; b < kCount; ++b) {
      for (int64_t i = 0; i < kRows; ++i)
        for (int64_t j = 0; j < kCols; ++j) {
          Complex sum = 0;
          for (int64_t t = 0; t <= j; ++t) sum += Q(b, i, t) * R(b, t, j);  // R is upper triangular
          product[static_cast<size_t>((b * kRows + i) * kCols + j)] = sum;
        }
      for (int64_t i = 0; i < kCols; ++i)
        for (int64_t j = 0; j < kCols; ++j) {
          Complex dot = 0;
          for (int64_t t = 0; t < kRows; ++t) dot += std::conj(Q(b, t, i)) * Q(b, t, j);
          EXPECT_LE(std::abs(dot - Complex(i == j ? 1.0 : 0.0)), LapackTolerance(type) * 10)
              << "Q^H Q at " << i << "," << j;
        }
    }
    ExpectNear(a, product, LapackTolerance(type) * 10, "Q R");
  }
}

TEST_P(LapackCallTest, SyevdEigenvectorsScaleByTheirAscendingEigenvalues) {
  constexpr int64_t kCount = 2, kN = 4;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = PositiveDefinite(type, kCount, kN, 4);
    const std::string shape = ShapeText(type, {kCount, kN, kN});
    const std::string target =
        std::string("lapack_") + LapackLetter(type) + (IsComplex(type) ? "heevd" : "syevd") + "_ffi";
    const std::string text = CallModule(
        target, {shape}, "(" + shape + ", " + ShapeText(RealTypeOf(type), {kCount, kN}) + ", s32[2])",
        "{mode = 86 : ui8, uplo = 76 : ui8}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, kN, kN})}));
    const Values v = FromLiteral(out[0]);
    const Values w = FromLiteral(out[1]);
    Batch A{a, kN, kN}, V{v, kN, kN};
    Values av(a.size()), vw(a.size());
    for (int64_t b = 0; b < kCount; ++b) {
      EXPECT_EQ(out[2].data<int32_t>()[b], 0);
      for (int64_t j = 0; j + 1 < kN; ++j) EXPECT_LE(w[b * kN + j].real(), w[b * kN + j + 1].real());
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          Complex sum = 0;
          for (int64_t t = 0; t < kN; ++t) sum += A(b, i, t) * V(b, t, j);
          av[static_cast<size_t>((b * kN + i) * kN + j)] = sum;
          vw[static_cast<size_t>((b * kN + i) * kN + j)] = V(b, i, j) * w[static_cast<size_t>(b * kN + j)];
        }
    }
    ExpectNear(av, vw, LapackTolerance(type) * 50, "A V = V diag(w)");
  }
}

// Both SVD routines; values only ('N') with U and V^T shaped as for 'A' or as for 'S', as JAX gives them.
TEST_P(LapackCallTest, SvdVectorsAndDescendingValuesRebuildTheMatrix) {
  constexpr int64_t kCount = 2, kRows = 3, kCols = 5, kK = 3;
  for (ElementType type : kTypes) {
    for (const char* routine : {"gesdd", "gesvd"})
      for (const char* modes : {"AA", "SS", "NA", "NS"}) {
        const char mode = modes[0];
        const char vector_shape = modes[1];
        SCOPED_TRACE(std::string(ElementTypeName(type)) + " " + routine + " mode " + modes);
        const Values a = RandomValues(type, kCount * kRows * kCols, 5);
        const std::string shape = ShapeText(type, {kCount, kRows, kCols});
        const int64_t u_cols = vector_shape == 'S' ? kK : kRows;
        const int64_t vt_rows = vector_shape == 'S' ? kK : kCols;
        const std::string text =
            CallModule(std::string("lapack_") + LapackLetter(type) + routine + "_ffi", {shape},
                       "(" + shape + ", " + ShapeText(RealTypeOf(type), {kCount, kK}) + ", " +
                           ShapeText(type, {kCount, kRows, u_cols}) + "{1,2,0}, " +
                           ShapeText(type, {kCount, vt_rows, kCols}) + "{1,2,0}, s32[2])",
                       "{mode = " + std::to_string(static_cast<int>(mode)) + " : ui8}");
        KILN_ASSERT_OK_AND_ASSIGN(
            std::vector<Literal> out,
            RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, kRows, kCols})}));
        const Values s = FromLiteral(out[1]);
        const Values u = FromLiteral(out[2]);
        const Values vt = FromLiteral(out[3]);
        Batch U{u, kRows, u_cols}, VT{vt, vt_rows, kCols};
        Values product(a.size());
        for (int64_t b = 0; b < kCount; ++b) {
          EXPECT_EQ(out[4].data<int32_t>()[b], 0);
          for (int64_t j = 0; j + 1 < kK; ++j) EXPECT_GE(s[b * kK + j].real(), s[b * kK + j + 1].real());
          for (int64_t i = 0; i < kRows; ++i)
            for (int64_t j = 0; j < kCols; ++j) {
              Complex sum = 0;
              for (int64_t t = 0; t < kK; ++t)
                sum += U(b, i, t) * s[static_cast<size_t>(b * kK + t)] * VT(b, t, j);
              product[static_cast<size_t>((b * kRows + i) * kCols + j)] = sum;
            }
        }
        if (mode != 'N') {
          ExpectNear(a, product, LapackTolerance(type) * 10, "U S V^H");
        } else {
          // Values only: the sum of their squares is the Frobenius norm squared.
          for (int64_t b = 0; b < kCount; ++b) {
            double norm = 0, squares = 0;
            for (int64_t i = 0; i < kRows * kCols; ++i)
              norm += std::norm(a[static_cast<size_t>(b * kRows * kCols + i)]);
            for (int64_t t = 0; t < kK; ++t) squares += std::norm(s[static_cast<size_t>(b * kK + t)]);
            EXPECT_NEAR(norm, squares, LapackTolerance(type) * 10 * norm);
          }
        }
      }
  }
}

TEST_P(LapackCallTest, TrsmSolvesEverySideTriangleAndTranspose) {
  constexpr int64_t kM = 4, kN = 3;
  for (ElementType type : kTypes) {
    for (char side : {'L', 'R'})
      for (char uplo : {'L', 'U'})
        for (char trans : {'N', 'T', 'C'})
          for (char diag : {'N', 'U'}) {
            SCOPED_TRACE(std::string(ElementTypeName(type)) + " side " + side + " uplo " + uplo + " trans " +
                         trans + " diag " + diag);
            const int64_t order = side == 'L' ? kM : kN;
            Values a = RandomValues(type, order * order, 6);
            for (int64_t i = 0; i < order; ++i) a[static_cast<size_t>(i * order + i)] += 3.0;
            const Values b = RandomValues(type, kM * kN, 7);
            auto letter = [](char c) { return std::to_string(static_cast<int>(c)); };
            const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "trsm_ffi",
                                                {ShapeText(type, {order, order}), ShapeText(type, {kM, kN})},
                                                ShapeText(type, {kM, kN}) + "{0,1}",
                                                "{diag = " + letter(diag) + " : ui8, side = " + letter(side) +
                                                    " : ui8, trans_x = " + letter(trans) +
                                                    " : ui8, uplo = " + letter(uplo) + " : ui8}");
            KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                                      RunText(text, std::vector<Literal>{ToLiteral(a, type, {order, order}),
                                                                         ToLiteral(b, type, {kM, kN})}));
            const Values x = FromLiteral(out[0]);
            // op(A) element (i, j) with A's other triangle and (for 'U') diagonal as LAPACK reads them.
            auto op = [&](int64_t i, int64_t j) {
              int64_t r = i, c = j;
              if (trans != 'N') std::swap(r, c);
              Complex value = a[static_cast<size_t>(r * order + c)];
              if (r == c && diag == 'U') value = 1;
              if ((uplo == 'L' && c > r) || (uplo == 'U' && c < r)) value = 0;
              return trans == 'C' ? std::conj(value) : value;
            };
            Values product(b.size());
            for (int64_t i = 0; i < kM; ++i)
              for (int64_t j = 0; j < kN; ++j) {
                Complex sum = 0;
                if (side == 'L') {
                  for (int64_t t = 0; t < kM; ++t) sum += op(i, t) * x[static_cast<size_t>(t * kN + j)];
                } else {
                  for (int64_t t = 0; t < kN; ++t) sum += x[static_cast<size_t>(i * kN + t)] * op(t, j);
                }
                product[static_cast<size_t>(i * kN + j)] = sum;
              }
            ExpectNear(b, product, LapackTolerance(type) * 10, "op(A) X or X op(A)");
          }
  }
}

// Complex n x n product of row-major matrices (one batch element each).
Values Multiply(const Values& a, const Values& b, int64_t n) {
  Values product(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < n; ++t)
        product[static_cast<size_t>(i * n + j)] +=
            a[static_cast<size_t>(i * n + t)] * b[static_cast<size_t>(t * n + j)];
  return product;
}

Values Adjoint(const Values& a, int64_t n) {
  Values adjoint(a.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      adjoint[static_cast<size_t>(j * n + i)] = std::conj(a[static_cast<size_t>(i * n + j)]);
  return adjoint;
}

Values Slice(const Values& batch, int64_t index, int64_t size) {
  return Values(batch.begin() + index * size, batch.begin() + (index + 1) * size);
}

TEST_P(LapackCallTest, GeevRightAndLeftEigenvectorsSatisfyTheirEquations) {
  constexpr int64_t kCount = 2, kN = 4;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const ElementType complex_type =
        RealTypeOf(type) == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128;
    const Values a = RandomValues(type, kCount * kN * kN, 8);
    const std::string shape = ShapeText(type, {kCount, kN, kN});
    const std::string values =
        IsComplex(type) ? ShapeText(type, {kCount, kN}) + ", "
                        : ShapeText(type, {kCount, kN}) + ", " + ShapeText(type, {kCount, kN}) + ", ";
    const std::string vectors = ShapeText(complex_type, {kCount, kN, kN});
    const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "geev_ffi", {shape},
                                        "(" + values + vectors + ", " + vectors + ", s32[2])",
                                        "{compute_left = 86 : ui8, compute_right = 86 : ui8}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, kN, kN})}));
    Values w = FromLiteral(out[0]);
    if (!IsComplex(type)) {
      const Values imaginary = FromLiteral(out[1]);
      for (size_t i = 0; i < w.size(); ++i) w[i] += Complex(0, imaginary[i].real());
    }
    const size_t vectors_at = IsComplex(type) ? 1 : 2;
    for (int64_t b = 0; b < kCount; ++b) {
      EXPECT_EQ(out.back().data<int32_t>()[b], 0);
      const Values matrix = Slice(a, b, kN * kN);
      const Values left = Slice(FromLiteral(out[vectors_at]), b, kN * kN);
      const Values right = Slice(FromLiteral(out[vectors_at + 1]), b, kN * kN);
      Values right_scaled(right.size()), left_scaled(left.size());
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          right_scaled[static_cast<size_t>(i * kN + j)] =
              right[static_cast<size_t>(i * kN + j)] * w[static_cast<size_t>(b * kN + j)];
          // Row j of VL^H A is w_j times row j of VL^H.
          left_scaled[static_cast<size_t>(j * kN + i)] =
              w[static_cast<size_t>(b * kN + j)] * std::conj(left[static_cast<size_t>(i * kN + j)]);
        }
      ExpectNear(right_scaled, Multiply(matrix, right, kN), LapackTolerance(type) * 50, "A VR = VR diag(w)");
      ExpectNear(left_scaled, Multiply(Adjoint(left, kN), matrix, kN), LapackTolerance(type) * 50,
                 "VL^H A = diag(w) VL^H");
    }
  }
}

TEST_P(LapackCallTest, GeesSchurVectorsAreUnitaryAndRebuildTheMatrix) {
  constexpr int64_t kCount = 2, kN = 4;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = RandomValues(type, kCount * kN * kN, 9);
    const std::string shape = ShapeText(type, {kCount, kN, kN});
    const std::string values = IsComplex(type)
                                   ? ShapeText(type, {kCount, kN})
                                   : ShapeText(type, {kCount, kN}) + ", " + ShapeText(type, {kCount, kN});
    const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "gees_ffi", {shape},
                                        "(" + shape + ", " + shape + ", " + values + ", s32[2], s32[2])",
                                        "{mode = 86 : ui8, sort = 78 : ui8}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {kCount, kN, kN})}));
    for (int64_t b = 0; b < kCount; ++b) {
      EXPECT_EQ(out.back().data<int32_t>()[b], 0);
      const Values t = Slice(FromLiteral(out[0]), b, kN * kN);
      const Values z = Slice(FromLiteral(out[1]), b, kN * kN);
      // T is (quasi-, for real types) upper triangular.
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j + (IsComplex(type) ? 0 : 1) < i; ++j)
          EXPECT_EQ(t[static_cast<size_t>(i * kN + j)], Complex(0));
      ExpectNear(Slice(a, b, kN * kN), Multiply(Multiply(z, t, kN), Adjoint(z, kN), kN),
                 LapackTolerance(type) * 50, "Z T Z^H");
      Values identity(static_cast<size_t>(kN * kN));
      for (int64_t i = 0; i < kN; ++i) identity[static_cast<size_t>(i * kN + i)] = 1;
      ExpectNear(identity, Multiply(Adjoint(z, kN), z, kN), LapackTolerance(type) * 50, "Z^H Z");
    }
  }
}

TEST_P(LapackCallTest, GehrdReflectorsTimesHessenbergRebuildTheMatrix) {
  constexpr int64_t kN = 5;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = RandomValues(type, kN * kN, 10);
    const std::string shape = ShapeText(type, {kN, kN});
    const std::string text = CallModule(std::string("lapack_") + LapackLetter(type) + "gehrd_ffi", {shape},
                                        "(" + shape + ", " + ShapeText(type, {kN - 1}) + ", s32[])",
                                        "{high = 5 : i32, low = 1 : i32}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {kN, kN})}));
    EXPECT_EQ(out[2].data<int32_t>()[0], 0);
    const Values packed = FromLiteral(out[0]);
    const Values tau = FromLiteral(out[1]);
    Values hessenberg = packed;
    for (int64_t i = 0; i < kN; ++i)
      for (int64_t j = 0; j + 1 < i; ++j) hessenberg[static_cast<size_t>(i * kN + j)] = 0;
    // Q = H_0 H_1 ... H_{n-2}, H_k = I - tau_k v v^H, v = (0.., 1 at k + 1, the packed column k below).
    Values q(static_cast<size_t>(kN * kN));
    for (int64_t i = 0; i < kN; ++i) q[static_cast<size_t>(i * kN + i)] = 1;
    for (int64_t k = 0; k + 1 < kN; ++k) {
      Values v(static_cast<size_t>(kN));
      v[static_cast<size_t>(k + 1)] = 1;
      for (int64_t i = k + 2; i < kN; ++i)
        v[static_cast<size_t>(i)] = packed[static_cast<size_t>(i * kN + k)];
      Values reflector(static_cast<size_t>(kN * kN));
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j < kN; ++j)
          reflector[static_cast<size_t>(i * kN + j)] =
              (i == j ? 1.0 : 0.0) -
              tau[static_cast<size_t>(k)] * v[static_cast<size_t>(i)] * std::conj(v[static_cast<size_t>(j)]);
      q = Multiply(q, reflector, kN);
    }
    ExpectNear(a, Multiply(Multiply(q, hessenberg, kN), Adjoint(q, kN), kN), LapackTolerance(type) * 50,
               "Q H Q^H");
  }
}

TEST_P(LapackCallTest, SytrdReflectorsTimesTridiagonalRebuildTheMatrix) {
  constexpr int64_t kN = 5;
  for (ElementType type : kTypes) {
    SCOPED_TRACE(ElementTypeName(type));
    const Values a = PositiveDefinite(type, 1, kN, 11);
    const std::string shape = ShapeText(type, {kN, kN});
    const std::string target =
        std::string("lapack_") + LapackLetter(type) + (IsComplex(type) ? "hetrd" : "sytrd") + "_ffi";
    const std::string text =
        CallModule(target, {shape},
                   "(" + shape + ", " + ShapeText(RealTypeOf(type), {kN}) + ", " +
                       ShapeText(RealTypeOf(type), {kN - 1}) + ", " + ShapeText(type, {kN - 1}) + ", s32[])",
                   "{uplo = 76 : ui8}");
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> out,
                              RunText(text, std::vector<Literal>{ToLiteral(a, type, {kN, kN})}));
    EXPECT_EQ(out[4].data<int32_t>()[0], 0);
    const Values packed = FromLiteral(out[0]);
    const Values diagonal = FromLiteral(out[1]);
    const Values off_diagonal = FromLiteral(out[2]);
    const Values tau = FromLiteral(out[3]);
    Values tridiagonal(static_cast<size_t>(kN * kN));
    for (int64_t i = 0; i < kN; ++i) {
      tridiagonal[static_cast<size_t>(i * kN + i)] = diagonal[static_cast<size_t>(i)];
      if (i + 1 < kN) {
        tridiagonal[static_cast<size_t>((i + 1) * kN + i)] = off_diagonal[static_cast<size_t>(i)];
        tridiagonal[static_cast<size_t>(i * kN + i + 1)] = off_diagonal[static_cast<size_t>(i)];
      }
    }
    // Lower: Q = H_0 ... H_{n-2}, H_k = I - tau_k v v^H, v = (0.., 1 at k + 1, the packed column k below).
    Values q(static_cast<size_t>(kN * kN));
    for (int64_t i = 0; i < kN; ++i) q[static_cast<size_t>(i * kN + i)] = 1;
    for (int64_t k = 0; k + 1 < kN; ++k) {
      Values v(static_cast<size_t>(kN));
      v[static_cast<size_t>(k + 1)] = 1;
      for (int64_t i = k + 2; i < kN; ++i)
        v[static_cast<size_t>(i)] = packed[static_cast<size_t>(i * kN + k)];
      Values reflector(static_cast<size_t>(kN * kN));
      for (int64_t i = 0; i < kN; ++i)
        for (int64_t j = 0; j < kN; ++j)
          reflector[static_cast<size_t>(i * kN + j)] =
              (i == j ? 1.0 : 0.0) -
              tau[static_cast<size_t>(k)] * v[static_cast<size_t>(i)] * std::conj(v[static_cast<size_t>(j)]);
      q = Multiply(q, reflector, kN);
    }
    ExpectNear(a, Multiply(Multiply(q, tridiagonal, kN), Adjoint(q, kN), kN), LapackTolerance(type) * 50,
               "Q T Q^H");
  }
}

// Each malformed call: INVALID_ARGUMENT naming the instruction, the target and what is wrong.
TEST_P(LapackCallTest, MalformedCallsAreRefusedByName) {
  struct Case {
    std::string result, config, message;
  };
  const Case cases[] = {
      {"(f32[3,3], s32[])", "{}", "needs the attribute 'uplo'"},
      {"(f32[3,3], s32[])", "{uplo = 81 : ui8}", "uplo = 81"},
      {"(f32[3,3], s32[])", "{uplo = 76 : f32}", "no integer type"},
      {"(f32[3,3], s32[])", "{uplo 76}", "no '='"},
      {"(f32[3,3], s32[2])", "{uplo = 76 : ui8}", "result is"},
      {"(f32[3,3])", "{uplo = 76 : ui8}", "result is"},
  };
  const Literal a = ToLiteral(Values(9, 1.0), ElementType::kF32, {3, 3});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.result + " " + c.config);
    StatusOr<std::vector<Literal>> out =
        RunText(CallModule("lapack_spotrf_ffi", {"f32[3,3]"}, c.result, c.config), std::vector<Literal>{a});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().ToString();
    EXPECT_NE(out.status().message().find("custom-call 'call' (target 'lapack_spotrf_ffi')"),
              std::string::npos)
        << out.status().message();
    EXPECT_NE(out.status().message().find(c.message), std::string::npos) << out.status().message();
  }
  // An operand of another element type than the target's.
  StatusOr<std::vector<Literal>> wrong_type =
      RunText(CallModule("lapack_dpotrf_ffi", {"f32[3,3]"}, "(f32[3,3], s32[])", "{uplo = 76 : ui8}"),
              std::vector<Literal>{a});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_type.status().message().find("f64 matrices"), std::string::npos)
      << wrong_type.status().message();
  // Attributes of the other families: a Hessenberg range out of order, a sorted Schur form (JAX passes no
  // selection).
  const std::pair<std::string, std::string> others[] = {
      {CallModule("lapack_sgehrd_ffi", {"f32[3,3]"}, "(f32[3,3], f32[2], s32[])",
                  "{high = 2 : i32, low = 3 : i32}"),
       "needs 1 <= low <= high <= 3"},
      {CallModule("lapack_sgees_ffi", {"f32[3,3]"}, "(f32[3,3], f32[3,3], f32[3], f32[3], s32[], s32[])",
                  "{mode = 86 : ui8, sort = 83 : ui8}"),
       "attribute sort = 83"},
  };
  for (const auto& [text, message] : others) {
    StatusOr<std::vector<Literal>> out = RunText(text, std::vector<Literal>{a});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find(message), std::string::npos) << out.status().message();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LapackCallTest, ::testing::Values("interpreter", "cpu"));

TEST(BuiltinCustomCallTest, TableNamesEveryRoutineInEveryTypeAsJaxDoes) {
  EXPECT_EQ(BuiltinCustomCalls().size(), 48u);
  for (const char* name :
       {"lapack_spotrf_ffi", "lapack_zpotrf_ffi", "lapack_dorgqr_ffi", "lapack_cungqr_ffi",
        "lapack_ssyevd_ffi", "lapack_zheevd_ffi", "lapack_cgesdd_ffi", "lapack_dgesvd_ffi",
        "lapack_zgeev_ffi", "lapack_sgees_ffi", "lapack_cgehrd_ffi", "lapack_dsytrd_ffi", "lapack_zhetrd_ffi",
        "lapack_dtrsm_ffi", "lapack_sgetrf_ffi", "lapack_zgeqrf_ffi"}) {
    EXPECT_NE(FindBuiltinCustomCall(name), nullptr) << name;
  }
  EXPECT_EQ(FindBuiltinCustomCall("lapack_corgqr_ffi"), nullptr);
  EXPECT_EQ(FindBuiltinCustomCall("lapack_ssyevd"), nullptr);
  EXPECT_EQ(FindBuiltinCustomCall("lapack_zpotrf_ffi")->type, ElementType::kC128);
}

TEST(BuiltinCustomCallTest, FfiAttributesParseAsJaxPrintsThem) {
  KILN_ASSERT_OK_AND_ASSIGN(auto attributes,
                            ParseFfiIntegerAttributes("{high = 4 : i32, low = 1 : i32, mode = 86 : ui8}"));
  EXPECT_EQ(attributes, (std::map<std::string, int64_t>{{"high", 4}, {"low", 1}, {"mode", 86}}));
  KILN_ASSERT_OK_AND_ASSIGN(auto empty, ParseFfiIntegerAttributes("{}"));
  EXPECT_TRUE(empty.empty());
  KILN_ASSERT_OK_AND_ASSIGN(auto absent, ParseFfiIntegerAttributes(""));
  EXPECT_TRUE(absent.empty());
  for (const char* bad : {"{mode = 86 : ui8", "{mode = 86 : ui8, mode = 78 : ui8}", "{mode = \"V\"}",
                          "mode = 86 : ui8", "{mode = 86 : ui8} x"}) {
    EXPECT_EQ(ParseFfiIntegerAttributes(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(BuiltinCustomCallTest, BuiltInNamesCannotBeRegisteredAndPassTheCompileCheck) {
  CustomCallFunction function = [](void*, const void**) {};
  const Status registered = RegisterCustomCallTarget("lapack_spotrf_ffi", function);
  EXPECT_EQ(registered.code(), StatusCode::kAlreadyExists) << registered.ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> builtin,
                            ParseHloModule(CallModule("lapack_spotrf_ffi", {"f32[2,2]"}, "(f32[2,2], s32[])",
                                                      "{uplo = 76 : ui8}")));
  EXPECT_TRUE(CheckCustomCallTargetsRegistered(*builtin, "cpu").ok());
  // Device backends run no host code: they refuse the call by its op name.
  EXPECT_TRUE(NeedsHostOnDevice(*builtin->entry()->root()));
  KILN_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<Module> unknown,
      ParseHloModule(CallModule("lapack_sfoo_ffi", {"f32[2,2]"}, "(f32[2,2], s32[])", "{uplo = 76 : ui8}")));
  const Status check = CheckCustomCallTargetsRegistered(*unknown, "cpu");
  EXPECT_EQ(check.code(), StatusCode::kNotFound);
  EXPECT_NE(check.message().find("cpu: custom-call target 'lapack_sfoo_ffi' of instruction 'call'"),
            std::string::npos)
      << check.message();
}

// LAPACK is loaded on first use; a library that is missing or is not
// LAPACKE is UNAVAILABLE naming the file, what is wrong and what to install.
TEST(LapackLibraryTest, MissingOrWrongLibraryIsUnavailableNamingItAndThePackage) {
  const StatusOr<const interpreter::LapackLibrary*> missing =
      interpreter::LapackLibrary::Load("libkiln-test-no-such-lapacke.so.3");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("libkiln-test-no-such-lapacke.so.3"), std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("Debian package liblapacke"), std::string::npos)
      << missing.status().message();
  const StatusOr<const interpreter::LapackLibrary*> not_lapacke =
      interpreter::LapackLibrary::Load("libc.so.6");
  ASSERT_FALSE(not_lapacke.ok());
  EXPECT_EQ(not_lapacke.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(not_lapacke.status().message().find("libc.so.6 has no LAPACKE_spotrf"), std::string::npos)
      << not_lapacke.status().message();
}

TEST(LapackLibraryTest, TheProcessWideLibraryIsLoadedOnceWithEveryRoutine) {
  KILN_ASSERT_OK_AND_ASSIGN(const interpreter::LapackLibrary* first, interpreter::LapackLibrary::Get());
  KILN_ASSERT_OK_AND_ASSIGN(const interpreter::LapackLibrary* second, interpreter::LapackLibrary::Get());
  EXPECT_EQ(first, second);
  EXPECT_EQ(first->soname, interpreter::LapackLibrary::kDefaultSoname);
  EXPECT_NE(first->zhetrd, nullptr);
  EXPECT_NE(first->ztrsm, nullptr);
}

// Once LAPACK has run, an idle process uses next to no processor time: an
// OpenBLAS behind LAPACKE is held to one thread and its worker threads are
// stopped when it is loaded, so no thread pool of its own spins beside
// Kiln's workers (held to one thread but with its workers left running,
// OpenBLAS 0.3.21 used 17-50 ms of CPU per 50 ms idle pause here for the
// first tenth of a second). With reference LAPACK nothing spins either;
// the test prints which one it ran on.
TEST(LapackLibraryTest, AnIdleProcessUsesNoProcessorTimeAfterALapackCall) {
  KILN_ASSERT_OK_AND_ASSIGN(const interpreter::LapackLibrary* library, interpreter::LapackLibrary::Get());
  std::cout << "[          ] LAPACK behind " << library->soname
            << (library->held_to_one_thread ? ": OpenBLAS, held to one thread" : ": not OpenBLAS") << "\n";
  constexpr int kN = 384;  // large enough for a threaded BLAS to use its threads
  const auto process_cpu_seconds = [] {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  };
  for (int round = 0; round < 3; ++round) {
    std::vector<double> matrix(static_cast<size_t>(kN) * kN, 0.0);  // n I + ones: positive definite
    for (int i = 0; i < kN; ++i) {
      for (int j = 0; j < kN; ++j) matrix[static_cast<size_t>(i) * kN + j] = (i == j ? kN : 0) + 1.0;
    }
    ASSERT_EQ(library->dpotrf(LAPACK_ROW_MAJOR, 'L', kN, matrix.data(), kN), 0);
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double idle = process_cpu_seconds() - before;
    EXPECT_LT(idle, 0.002) << "round " << round << ": the process used " << idle * 1e3
                           << " ms of CPU time in a 50 ms pause after a Cholesky factorisation";
  }
}

}  // namespace
}  // namespace kiln
