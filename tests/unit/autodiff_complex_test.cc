// Reverse mode through complex intermediates: complex/real/imag, complex
// elementwise math, abs, conversions, dots and every FFT type. The
// differentiated parameters and the results are real (f64), so the
// gradients of these real losses are checked against central differences
// (tests/unit/autodiff_gradient_check.h) on the interpreter and cpu; a wrong
// conjugate in a rule changes them. Forward mode over the same modules
// (tests/unit/autodiff_jvp_check.h): tangents against central differences
// and <w, J v> == <J^T w, v>.
#include <random>
#include <string>
#include <vector>

#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::ExpectGradientsMatchFiniteDifferences;
using testing::RandomF64;

// The real and imaginary parts and the magnitude of `z` as three results.
void ReturnParts(Builder& builder, Op z) {
  const Op parts[] = {builder.Real(z), builder.Imag(z), builder.UnaryOp(Opcode::kAbs, z)};
  builder.Tuple(parts);
}

struct ComplexUnaryCase {
  Opcode opcode;
  double re_low, re_high;  // real parts where the function is smooth (away from branch cuts)
};

class ComplexUnaryGradientTest : public ::testing::TestWithParam<ComplexUnaryCase> {};

TEST_P(ComplexUnaryGradientTest, RealLossesMatchFiniteDifferences) {
  const ComplexUnaryCase& c = GetParam();
  std::mt19937 random(static_cast<uint32_t>(c.opcode) + 31);
  const Shape shape(ElementType::kF64, {2, 3});
  Builder builder("complex_unary");
  Op z = builder.Complex(builder.Parameter(0, shape, "re"), builder.Parameter(1, shape, "im"));
  ReturnParts(builder, builder.UnaryOp(c.opcode, z));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  const std::vector<Literal> inputs = {RandomF64(shape, random, c.re_low, c.re_high),
                                       RandomF64(shape, random, -1.5, 1.5)};
  ExpectGradientsMatchFiniteDifferences(*module, {0, 1}, inputs);
  testing::ExpectJvpMatches(*module, {0, 1}, inputs);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ComplexUnaryGradientTest,
    ::testing::Values(ComplexUnaryCase{Opcode::kNegate, -2, 2}, ComplexUnaryCase{Opcode::kExp, -2, 2},
                      ComplexUnaryCase{Opcode::kLog, 0.3, 2}, ComplexUnaryCase{Opcode::kSqrt, 0.3, 2},
                      ComplexUnaryCase{Opcode::kRsqrt, 0.3, 2}, ComplexUnaryCase{Opcode::kSin, -2, 2},
                      ComplexUnaryCase{Opcode::kCos, -2, 2}, ComplexUnaryCase{Opcode::kTanh, -1, 1},
                      ComplexUnaryCase{Opcode::kAbs, -2, 2}),
    [](const ::testing::TestParamInfo<ComplexUnaryCase>& info) {
      return std::string(OpcodeName(info.param.opcode));
    });

class ComplexBinaryGradientTest : public ::testing::TestWithParam<Opcode> {};

TEST_P(ComplexBinaryGradientTest, RealLossesMatchFiniteDifferences) {
  std::mt19937 random(static_cast<uint32_t>(GetParam()) + 57);
  const Shape shape(ElementType::kF64, {3, 2});
  Builder builder("complex_binary");
  Op lhs = builder.Complex(builder.Parameter(0, shape, "a"), builder.Parameter(1, shape, "b"));
  Op rhs = builder.Complex(builder.Parameter(2, shape, "c"), builder.Parameter(3, shape, "d"));
  ReturnParts(builder, builder.BinaryOp(GetParam(), lhs, rhs));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  const std::vector<Literal> inputs = {RandomF64(shape, random, 0.5, 2), RandomF64(shape, random),
                                       RandomF64(shape, random, 0.5, 2), RandomF64(shape, random)};
  ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 2, 3}, inputs);
  testing::ExpectJvpMatches(*module, {0, 1, 2, 3}, inputs);
}

INSTANTIATE_TEST_SUITE_P(Ops, ComplexBinaryGradientTest,
                         ::testing::Values(Opcode::kAdd, Opcode::kSubtract, Opcode::kMultiply,
                                           Opcode::kDivide),
                         [](const ::testing::TestParamInfo<Opcode>& info) {
                           return std::string(OpcodeName(info.param));
                         });

TEST(AutodiffComplexTest, ConvertDotAndSumOfComplexValues) {
  // A real matrix made complex, times a complex one, summed: the real
  // parameter gets the real part of its cotangent.
  std::mt19937 random(5);
  const Shape matrix(ElementType::kF64, {3, 4});
  const Shape other(ElementType::kF64, {4, 2});
  Builder builder("complex_dot");
  Op x = builder.ConvertElementType(builder.Parameter(0, matrix, "x"), ElementType::kC128);
  Op w = builder.Complex(builder.Parameter(1, other, "re"), builder.Parameter(2, other, "im"));
  Op product = builder.Dot(builder.Mul(x, x), w);
  ReturnParts(builder, builder.Mul(product, builder.UnaryOp(Opcode::kExp, product)));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  const std::vector<Literal> inputs = {RandomF64(matrix, random, -1, 1), RandomF64(other, random, -1, 1),
                                       RandomF64(other, random, -1, 1)};
  ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 2}, inputs);
  testing::ExpectJvpMatches(*module, {0, 1, 2}, inputs);
}

TEST(AutodiffComplexTest, ComplexParameterGetsJaxsCotangent) {
  // d/dz of real(z^2) in JAX's convention, dL/dx - i dL/dy, is 2z: a
  // conjugated rule would give 2 conj(z).
  Builder builder("complex_parameter");
  Op z = builder.Parameter(0, Shape::Scalar(ElementType::kC128), "z");
  builder.Real(builder.Mul(z, z));
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  KILN_ASSERT_OK_AND_ASSIGN(auto vjp, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  for (const char* backend_name : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend_name);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(backend_name));
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                              backend->Compile(*vjp, CompileOptions{}));
    for (const complex128 value : {complex128{1.5, -2.0}, complex128{-0.5, 0.25}}) {
      const std::vector<Literal> inputs = {Literal::Scalar(value)};
      const std::vector<Literal> leaves = testing::RunLeaves(*executable, *backend, inputs);
      ASSERT_EQ(leaves.size(), 2u);
      EXPECT_EQ(leaves[1].data<complex128>()[0], 2.0 * value) << value;
    }
  }
}

TEST(AutodiffComplexTest, ComplexStateThroughAWhileLoop) {
  // The loop carries complex values (pushed on the tape and popped in the
  // backward loop); the losses are the real and imaginary parts.
  auto module = ParseHloModule(R"(
HloModule complex_loop

condition {
  s = (s32[], c128[3], c128[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT more = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], c128[3], c128[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  z = c128[3] get-tuple-element(s), index=1
  w = c128[3] get-tuple-element(s), index=2
  zw = c128[3] multiply(z, w)
  stepped = c128[3] sine(zw)
  ROOT state = (s32[], c128[3], c128[3]) tuple(next, stepped, w)
}

ENTRY main {
  a = f64[3] parameter(0)
  b = f64[3] parameter(1)
  c = f64[3] parameter(2)
  d = f64[3] parameter(3)
  z = c128[3] complex(a, b)
  w = c128[3] complex(c, d)
  zero = s32[] constant(0)
  start = (s32[], c128[3], c128[3]) tuple(zero, z, w)
  loop = (s32[], c128[3], c128[3]) while(start), condition=condition, body=body
  out = c128[3] get-tuple-element(loop), index=1
  re = f64[3] real(out)
  im = f64[3] imag(out)
  ROOT parts = (f64[3], f64[3]) tuple(re, im)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::mt19937 random(11);
  const Shape shape(ElementType::kF64, {3});
  std::vector<Literal> inputs;
  for (int i = 0; i < 4; ++i) inputs.push_back(RandomF64(shape, random, -1, 1));
  ExpectGradientsMatchFiniteDifferences(**module, {0, 1, 2, 3}, std::move(inputs));
}

TEST(AutodiffComplexTest, ComplexValuesThroughAConditionalAndASort) {
  // A conditional on a real predicate whose branches compute with the
  // complex operand, and a sort of real keys carrying complex values.
  auto module = ParseHloModule(R"(
HloModule complex_branches_and_sort

squared {
  z = c128[4] parameter(0)
  ROOT zz = c128[4] multiply(z, z)
}

exponential {
  z = c128[4] parameter(0)
  ROOT ez = c128[4] exponential(z)
}

by_key {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = c128[] parameter(2)
  d = c128[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ENTRY main {
  re = f64[4] parameter(0)
  im = f64[4] parameter(1)
  keys = f64[4] parameter(2)
  z = c128[4] complex(re, im)
  first = f64[1] slice(re), slice={[0:1]}
  first_scalar = f64[] reshape(first)
  zero = f64[] constant(0)
  positive = pred[] compare(first_scalar, zero), direction=GT
  branched = c128[4] conditional(positive, z, z), true_computation=squared, false_computation=exponential
  sorted = (f64[4], c128[4]) sort(keys, branched), dimensions={0}, to_apply=by_key
  values = c128[4] get-tuple-element(sorted), index=1
  real_part = f64[4] real(values)
  imag_part = f64[4] imag(values)
  ROOT parts = (f64[4], f64[4]) tuple(real_part, imag_part)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Shape shape(ElementType::kF64, {4});
  for (double first : {0.5, -0.5}) {  // both branches
    SCOPED_TRACE(first);
    std::mt19937 random(13);
    std::vector<Literal> inputs;
    for (int i = 0; i < 3; ++i) inputs.push_back(RandomF64(shape, random, -1, 1));
    inputs[0].data<double>()[0] = first;
    ExpectGradientsMatchFiniteDifferences(**module, {0, 1}, std::move(inputs));
  }
}

struct FftCase {
  FftType type;
  std::vector<int64_t> lengths;
  std::string name;
};

class FftGradientTest : public ::testing::TestWithParam<FftCase> {};

TEST_P(FftGradientTest, RealLossesMatchFiniteDifferences) {
  // Even and odd lengths: the Nyquist entry of a half spectrum exists only
  // for even ones, and the transposes of RFFT and IRFFT weigh it apart.
  const FftCase& c = GetParam();
  std::mt19937 random(static_cast<uint32_t>(c.lengths.back()) + 3);
  std::vector<int64_t> dimensions = {2};
  dimensions.insert(dimensions.end(), c.lengths.begin(), c.lengths.end());
  if (c.type == FftType::kIrfft) dimensions.back() = dimensions.back() / 2 + 1;
  const Shape shape(ElementType::kF64, dimensions);
  Builder builder("fft");
  std::vector<Literal> inputs = {RandomF64(shape, random)};
  Op operand = builder.Parameter(0, shape, "x");
  if (c.type != FftType::kRfft) {
    operand = builder.Complex(operand, builder.Parameter(1, shape, "y"));
    inputs.push_back(RandomF64(shape, random));
  }
  Op transformed = builder.Fft(operand, c.type, c.lengths);
  if (c.type == FftType::kIrfft) {
    builder.Mul(transformed, builder.UnaryOp(Opcode::kSin, transformed));
  } else {
    ReturnParts(builder, transformed);
  }
  KILN_ASSERT_OK_AND_ASSIGN(auto module, builder.Build());
  std::vector<int64_t> wrt = {0};
  if (inputs.size() == 2) wrt.push_back(1);
  ExpectGradientsMatchFiniteDifferences(*module, wrt, inputs);
  testing::ExpectJvpMatches(*module, wrt, std::move(inputs));
}

INSTANTIATE_TEST_SUITE_P(Types, FftGradientTest,
                         ::testing::Values(FftCase{FftType::kFft, {5}, "fft_5"},
                                           FftCase{FftType::kIfft, {2, 3}, "ifft_2x3"},
                                           FftCase{FftType::kRfft, {6}, "rfft_6"},
                                           FftCase{FftType::kRfft, {3, 5}, "rfft_3x5"},
                                           FftCase{FftType::kIrfft, {6}, "irfft_6"},
                                           FftCase{FftType::kIrfft, {2, 5}, "irfft_2x5"}),
                         [](const ::testing::TestParamInfo<FftCase>& info) { return info.param.name; });

}  // namespace
}  // namespace kiln
