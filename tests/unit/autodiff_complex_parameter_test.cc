// Forward mode with respect to complex (c128) parameters: tangents are
// complex and the rules are linear over the reals, so J v is the
// derivative along v whatever its real and imaginary parts. Checked on the
// interpreter and cpu against f64 central differences along random
// complex, purely real and purely imaginary directions, for holomorphic
// ops (multiply, divide, exp, log, fft, dot) and others (conjugate, abs,
// real, imag); and against reverse mode under Kiln's convention, JAX's:
// the cotangent of z = x + iy under a real loss L is dL/dx - i dL/dy, so
// reverse mode is the transpose of forward mode for the pairing
// <a, b> = Re(sum a b) (no conjugate): <w, J v> == <J^T w, v>.
#include <complex>
#include <random>
#include <vector>

#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::F64;
using testing::RandomF64;
using C = std::complex<double>;

Shape C128(std::vector<int64_t> dimensions) { return Shape(ElementType::kC128, std::move(dimensions)); }

// Random c128 values, real parts in [re_low, re_high), imaginary in [-1, 1).
Literal RandomC128(const Shape& shape, std::mt19937& random, double re_low = -1.0, double re_high = 1.0) {
  Literal literal(shape);
  std::uniform_real_distribution<double> re(re_low, re_high);
  std::uniform_real_distribution<double> im(-1.0, 1.0);
  for (C& value : literal.data<C>()) value = C(re(random), im(random));
  return literal;
}

bool IsC128(const Literal& literal) { return literal.shape().element_type() == ElementType::kC128; }

// Re(sum a b) over the leaves (f64 or c128), the pairing reverse mode
// transposes under.
double Pairing(const std::vector<Literal>& a, const std::vector<Literal>& b) {
  double sum = 0.0;
  for (size_t l = 0; l < a.size(); ++l) {
    for (int64_t i = 0; i < a[l].element_count(); ++i) {
      const auto k = static_cast<size_t>(i);
      if (IsC128(a[l])) {
        sum += (a[l].data<C>()[k] * b[l].data<C>()[k]).real();
      } else {
        sum += a[l].data<double>()[k] * b[l].data<double>()[k];
      }
    }
  }
  return sum;
}

// inputs + scale * direction on the `wrt` parameters.
std::vector<Literal> Moved(std::vector<Literal> inputs, const std::vector<int64_t>& wrt,
                           const std::vector<Literal>& direction, double scale) {
  for (size_t k = 0; k < wrt.size(); ++k) {
    Literal& input = inputs[static_cast<size_t>(wrt[k])];
    for (int64_t i = 0; i < input.element_count(); ++i) {
      const auto j = static_cast<size_t>(i);
      if (IsC128(input)) {
        input.data<C>()[j] += scale * direction[k].data<C>()[j];
      } else {
        input.data<double>()[j] += scale * direction[k].data<double>()[j];
      }
    }
  }
  return inputs;
}

void ExpectNearLeaf(const Literal& got, const Literal& plus, const Literal& minus, double step,
                    const char* what) {
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const auto k = static_cast<size_t>(i);
    if (IsC128(got)) {
      const C want = (plus.data<C>()[k] - minus.data<C>()[k]) / (2.0 * step);
      EXPECT_NEAR(got.data<C>()[k].real(), want.real(), 1e-6 * (1.0 + std::abs(want))) << what << " " << i;
      EXPECT_NEAR(got.data<C>()[k].imag(), want.imag(), 1e-6 * (1.0 + std::abs(want))) << what << " " << i;
    } else {
      const double want = (plus.GetAsDouble(i) - minus.GetAsDouble(i)) / (2.0 * step);
      EXPECT_NEAR(got.GetAsDouble(i), want, 1e-6 * (1.0 + std::fabs(want))) << what << " " << i;
    }
  }
}

enum class Direction { kComplex, kReal, kImaginary };

// The forward-mode check of `forward` with respect to `wrt` (c128 or f64
// parameters) along tangents of each kind: against central differences,
// and against reverse mode under random cotangents.
void ExpectComplexJvpMatches(const Module& forward, const std::vector<int64_t>& wrt,
                             const std::vector<Literal>& inputs, uint32_t seed) {
  SCOPED_TRACE(forward.ToString());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(forward, wrt));
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(forward, wrt));
  std::mt19937 random(seed);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(auto forward_executable, interpreter->Compile(forward, CompileOptions{}));
  const std::vector<Shape> leaves = forward.entry()->root()->shape.Leaves();
  std::vector<Literal> cotangents;
  std::vector<Literal> vjp_inputs = inputs;
  for (const Shape& leaf : leaves) {
    cotangents.push_back(leaf.element_type() == ElementType::kC128 ? RandomC128(leaf, random)
                                                                   : RandomF64(leaf, random));
    vjp_inputs.push_back(cotangents.back());
  }
  for (Direction kind : {Direction::kComplex, Direction::kReal, Direction::kImaginary}) {
    SCOPED_TRACE(kind == Direction::kComplex ? "complex tangents"
                 : kind == Direction::kReal  ? "real tangents"
                                             : "imaginary tangents");
    std::vector<Literal> tangents;
    for (int64_t number : wrt) {
      const Shape& shape = inputs[static_cast<size_t>(number)].shape();
      Literal tangent =
          shape.element_type() == ElementType::kC128 ? RandomC128(shape, random) : RandomF64(shape, random);
      if (IsC128(tangent)) {
        for (C& value : tangent.data<C>()) {
          if (kind == Direction::kReal) value = C(value.real(), 0.0);
          if (kind == Direction::kImaginary) value = C(0.0, value.imag());
        }
      }
      tangents.push_back(std::move(tangent));
    }
    const double step = 1e-5;
    const std::vector<Literal> plus =
        testing::RunLeaves(*forward_executable, *interpreter, Moved(inputs, wrt, tangents, step));
    const std::vector<Literal> minus =
        testing::RunLeaves(*forward_executable, *interpreter, Moved(inputs, wrt, tangents, -step));
    std::vector<Literal> jvp_inputs = inputs;
    for (const Literal& tangent : tangents) jvp_inputs.push_back(tangent);
    for (const char* backend_name : {"interpreter", "cpu"}) {
      SCOPED_TRACE(backend_name);
      KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
      KILN_ASSERT_OK_AND_ASSIGN(auto executable, backend->Compile(*jvp, CompileOptions{}));
      const std::vector<Literal> got = testing::RunLeaves(*executable, *backend, jvp_inputs);
      ASSERT_EQ(got.size(), 2 * leaves.size());
      std::vector<Literal> result_tangents;
      for (size_t l = 0; l < leaves.size(); ++l) {
        ASSERT_EQ(got[leaves.size() + l].shape().element_type(), leaves[l].element_type());
        ExpectNearLeaf(got[leaves.size() + l], plus[l], minus[l], step, "tangent element");
        result_tangents.push_back(got[leaves.size() + l]);
      }
      KILN_ASSERT_OK_AND_ASSIGN(auto reverse, backend->Compile(*vjp, CompileOptions{}));
      const std::vector<Literal> pulled = testing::RunLeaves(*reverse, *backend, vjp_inputs);
      ASSERT_EQ(pulled.size(), leaves.size() + wrt.size());
      const std::vector<Literal> gradients(pulled.begin() + static_cast<std::ptrdiff_t>(leaves.size()),
                                           pulled.end());
      const double forward_side = Pairing(cotangents, result_tangents);
      const double reverse_side = Pairing(gradients, tangents);
      EXPECT_NEAR(forward_side, reverse_side, 1e-9 * (1.0 + std::fabs(reverse_side)))
          << "<w, J v> vs <J^T w, v>";
    }
  }
}

// Holomorphic ops (multiply, divide, exp, log) and others (conjugate, abs,
// real, imag) of two complex parameters and a real one.
TEST(AutodiffComplexParameterTest, ElementwiseOps) {
  Builder builder("elementwise");
  const Shape shape = C128({2, 3});
  Op z = builder.Parameter(0, shape, "z");
  Op w = builder.Parameter(1, shape, "w");
  Op x = builder.Parameter(2, F64({2, 3}), "x");
  Op conj_z = builder.Complex(builder.Real(z), builder.Neg(builder.Imag(z)));
  const Op results[] = {
      builder.Div(builder.Mul(z, builder.Exp(w)), builder.Log(w)),
      builder.Mul(conj_z, w),
      builder.Add(builder.Abs(z), builder.Mul(builder.Real(w), x)),
      builder.Imag(builder.Mul(z, z)),
  };
  builder.Tuple(results);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  std::mt19937 random(61);
  // w's real part keeps log(w) away from its branch cut and from 0.
  const std::vector<Literal> inputs = {RandomC128(shape, random, 0.3, 1.5),
                                       RandomC128(shape, random, 1.5, 2.5), RandomF64(F64({2, 3}), random)};
  ExpectComplexJvpMatches(*module, {0, 1, 2}, inputs, 62);
  ExpectComplexJvpMatches(*module, {1}, inputs, 63);
}

// fft and dot of complex parameters, and an rfft of a real part times a
// real parameter.
TEST(AutodiffComplexParameterTest, FftAndDot) {
  Builder builder("fft_dot");
  Op z = builder.Parameter(0, C128({2, 4}), "z");
  Op w = builder.Parameter(1, C128({4, 3}), "w");
  Op x = builder.Parameter(2, F64({2, 4}), "x");
  const int64_t length[] = {4};
  Op spectrum = builder.Fft(z, FftType::kFft, length);
  const Op results[] = {
      builder.Fft(builder.Mul(spectrum, z), FftType::kIfft, length),
      builder.Dot(builder.Exp(z), w),
      builder.Fft(builder.Mul(builder.Real(z), x), FftType::kRfft, length),
  };
  builder.Tuple(results);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  std::mt19937 random(64);
  const std::vector<Literal> inputs = {RandomC128(C128({2, 4}), random), RandomC128(C128({4, 3}), random),
                                       RandomF64(F64({2, 4}), random)};
  ExpectComplexJvpMatches(*module, {0, 1, 2}, inputs, 65);
  ExpectComplexJvpMatches(*module, {0}, inputs, 66);
}

// The convention, element by element: for a real loss L(z), forward mode
// along 1 gives dL/dx and along i gives dL/dy (each against central
// differences), and reverse mode's gradient is dL/dx - i dL/dy.
TEST(AutodiffComplexParameterTest, RealLossGradientIsDxMinusIDy) {
  KILN_ASSERT_OK_AND_ASSIGN(auto add,
                            testing::ScalarBinaryComputation(Opcode::kAdd, ElementType::kF64, "add"));
  Builder builder("loss");
  Op z = builder.Parameter(0, C128({3}), "z");
  const int64_t all[] = {0};
  Op terms = builder.Add(builder.Real(builder.Mul(builder.Mul(z, z), builder.Exp(z))), builder.Abs(z));
  builder.Reduce(terms, builder.ConstantR0<double>(0.0), *add, all);
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto jvp, autodiff::BuildJvp(*module, std::vector<int64_t>{0}));
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  std::mt19937 random(67);
  const Literal at = RandomC128(C128({3}), random);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(auto forward_executable, interpreter->Compile(*module, CompileOptions{}));
  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(auto forward_mode, backend->Compile(*jvp, CompileOptions{}));
    KILN_ASSERT_OK_AND_ASSIGN(auto reverse_mode, backend->Compile(*vjp, CompileOptions{}));
    const std::vector<Literal> gradient =
        testing::RunLeaves(*reverse_mode, *backend, std::vector<Literal>{at});
    ASSERT_EQ(gradient.size(), 2u);
    for (size_t k = 0; k < 3; ++k) {
      double partial[2] = {0.0, 0.0};  // dL/dx_k, dL/dy_k
      for (int part = 0; part < 2; ++part) {
        Literal unit(C128({3}));
        unit.data<C>()[k] = part == 0 ? C(1.0, 0.0) : C(0.0, 1.0);
        const std::vector<Literal> tangent =
            testing::RunLeaves(*forward_mode, *backend, std::vector<Literal>{at, unit});
        ASSERT_EQ(tangent.size(), 2u);
        partial[part] = tangent[1].GetAsDouble(0);
        const double step = 1e-5;
        auto loss = [&](double scale) {
          return testing::RunLeaves(*forward_executable, *interpreter, Moved({at}, {0}, {unit}, scale))[0]
              .GetAsDouble(0);
        };
        const double difference = (loss(step) - loss(-step)) / (2.0 * step);
        EXPECT_NEAR(partial[part], difference, 1e-6 * (1.0 + std::fabs(difference))) << "element " << k;
      }
      const C got = gradient[1].data<C>()[k];
      EXPECT_NEAR(got.real(), partial[0], 1e-10 * (1.0 + std::fabs(partial[0]))) << "element " << k;
      EXPECT_NEAR(got.imag(), -partial[1], 1e-10 * (1.0 + std::fabs(partial[1]))) << "element " << k;
    }
  }
}

}  // namespace
}  // namespace kiln
