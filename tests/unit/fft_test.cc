// fft: shape inference (XLA's rules, refusals naming the op and what is
// wrong), HLO text, and the interpreter's values against a naive discrete
// Fourier transform computed here in double precision, for every fft_type,
// both precisions, 1 to 3 transformed dimensions, batch dimensions and
// lengths that are powers of two, odd, prime or 1.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/hlo_printer.h"
#include "core/shape_inference.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using ET = ElementType;

StatusOr<Shape> InferFft(const Shape& operand, FftType type, std::vector<int64_t> lengths) {
  Attributes attrs;
  attrs.fft_type = type;
  attrs.fft_length = std::move(lengths);
  return InferShape(Opcode::kFft, std::span<const Shape>(&operand, 1), attrs, {}, nullptr);
}

void ExpectInferred(const StatusOr<Shape>& result, const Shape& expected) {
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, expected) << result->ToString(true) << " vs " << expected.ToString(true);
}

void ExpectRefused(const StatusOr<Shape>& result, const std::string& text) {
  ASSERT_FALSE(result.ok()) << "unexpectedly inferred " << result->ToString();
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message().rfind("fft: ", 0), 0u) << result.status().message();
  EXPECT_NE(result.status().message().find(text), std::string::npos) << result.status().message();
}

TEST(FftShapeTest, XlaResultShapes) {
  ExpectInferred(InferFft(Shape(ET::kC64, {8, 16}), FftType::kFft, {16}), Shape(ET::kC64, {8, 16}));
  ExpectInferred(InferFft(Shape(ET::kC128, {8, 16}), FftType::kIfft, {8, 16}), Shape(ET::kC128, {8, 16}));
  ExpectInferred(InferFft(Shape(ET::kF32, {4, 6, 10}), FftType::kRfft, {10}), Shape(ET::kC64, {4, 6, 6}));
  ExpectInferred(InferFft(Shape(ET::kF64, {4, 6, 9}), FftType::kRfft, {4, 6, 9}),
                 Shape(ET::kC128, {4, 6, 5}));
  ExpectInferred(InferFft(Shape(ET::kC64, {4, 6, 6}), FftType::kIrfft, {6, 10}), Shape(ET::kF32, {4, 6, 10}));
  ExpectInferred(InferFft(Shape(ET::kC64, {4, 6, 6}), FftType::kIrfft, {6, 11}), Shape(ET::kF32, {4, 6, 11}));
  ExpectInferred(InferFft(Shape(ET::kC128, {3, 5}), FftType::kIrfft, {3, 9}), Shape(ET::kF64, {3, 9}));
  // Zero-sized dimensions stay zero-sized, as in XLA.
  ExpectInferred(InferFft(Shape(ET::kF32, {2, 0}), FftType::kRfft, {0}), Shape(ET::kC64, {2, 0}));
  ExpectInferred(InferFft(Shape(ET::kC64, {2, 0}), FftType::kIrfft, {0}), Shape(ET::kF32, {2, 0}));
  ExpectInferred(InferFft(Shape(ET::kC64, {0, 4}), FftType::kFft, {4}), Shape(ET::kC64, {0, 4}));
  // The operand's layout carries over.
  Shape column_major(ET::kF32, {6, 8});
  column_major.mutable_layout().minor_to_major = {0, 1};
  Shape expected(ET::kC64, {6, 5});
  expected.mutable_layout().minor_to_major = {0, 1};
  ExpectInferred(InferFft(column_major, FftType::kRfft, {8}), expected);
}

TEST(FftShapeTest, RefusesWrongElementTypes) {
  ExpectRefused(InferFft(Shape(ET::kF32, {8}), FftType::kFft, {8}),
                "FFT needs a complex (c64 or c128) operand");
  ExpectRefused(InferFft(Shape(ET::kF64, {8}), FftType::kIfft, {8}), "IFFT needs a complex");
  ExpectRefused(InferFft(Shape(ET::kC64, {8}), FftType::kRfft, {8}), "RFFT needs an f32 or f64 operand");
  ExpectRefused(InferFft(Shape(ET::kF16, {8}), FftType::kRfft, {8}), "f16[8]");
  ExpectRefused(InferFft(Shape(ET::kS32, {8}), FftType::kRfft, {8}), "s32[8]");
  ExpectRefused(InferFft(Shape(ET::kF32, {5}), FftType::kIrfft, {8}), "IRFFT needs a complex");
  const Shape tuple = Shape::Tuple({Shape(ET::kC64, {8})});
  ExpectRefused(InferFft(tuple, FftType::kFft, {8}), "must be an array");
}

TEST(FftShapeTest, RefusesLengthsThatDoNotFit) {
  ExpectRefused(InferFft(Shape(ET::kC64, {8, 16}), FftType::kFft, {8}),
                "dimension 1 is 16 but fft_length={8}");
  ExpectRefused(InferFft(Shape(ET::kC64, {8, 16}), FftType::kIfft, {16, 16}), "dimension 0 is 8");
  ExpectRefused(InferFft(Shape(ET::kF32, {4, 6}), FftType::kRfft, {4, 5}), "dimension 1 is 6");
  ExpectRefused(InferFft(Shape(ET::kC64, {5, 9}), FftType::kIrfft, {4, 16}), "dimension 0 is 5");
  // IRFFT's last dimension is the half spectrum: 16 real values need 9.
  ExpectRefused(InferFft(Shape(ET::kC64, {4, 8}), FftType::kIrfft, {16}), "needs 16/2+1 = 9");
  ExpectRefused(InferFft(Shape(ET::kC64, {4, 16}), FftType::kIrfft, {16}), "dimension 1 is 16");
  ExpectRefused(InferFft(Shape(ET::kC64, {4, 0}), FftType::kIrfft, {2}), "needs 2/2+1 = 2");
}

TEST(FftShapeTest, RefusesBadFftLengthLists) {
  ExpectRefused(InferFft(Shape(ET::kC64, {16}), FftType::kFft, {4, 16}),
                "transforms 2 trailing dimensions but the operand c64[16] has rank 1");
  ExpectRefused(InferFft(Shape(ET::kC64, {}), FftType::kFft, {1}), "has rank 0");
  ExpectRefused(InferFft(Shape(ET::kC64, {2, 2, 2, 2}), FftType::kFft, {2, 2, 2, 2}),
                "fft_length={2,2,2,2} lists 4 lengths; an fft transforms 1 to 3");
  ExpectRefused(InferFft(Shape(ET::kC64, {2}), FftType::kFft, {}), "lists 0 lengths");
  ExpectRefused(InferFft(Shape(ET::kF32, {2}), FftType::kRfft, {-2}), "negative length");
  const Shape operands[] = {Shape(ET::kC64, {2}), Shape(ET::kC64, {2})};
  Attributes attrs;
  attrs.fft_length = {2};
  auto two = InferShape(Opcode::kFft, operands, attrs, {}, nullptr);
  ExpectRefused(two, "takes 1 operands but got 2");
}

TEST(FftShapeTest, BuilderRefusesByName) {
  Builder builder("fft");
  Op x = builder.Parameter(0, Shape(ET::kF32, {8}), "x");
  const int64_t lengths[] = {8};
  EXPECT_FALSE(builder.Fft(x, FftType::kFft, lengths).valid());
  EXPECT_EQ(builder.first_error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(builder.first_error().message().find("fft: FFT needs a complex"), std::string::npos)
      << builder.first_error().message();
}

TEST(FftHloTest, ParsesWhatJaxPrints) {
  auto module =
      ParseHloModule(R"(HloModule jit_fft, entry_computation_layout={(c64[8,16]{1,0})->c64[8,16]{1,0}}

ENTRY %main.2 (Arg_0.1: c64[8,16]) -> c64[8,16] {
  %Arg_0.1 = c64[8,16]{1,0} parameter(0)
  ROOT %fft.3 = c64[8,16]{1,0} fft(c64[8,16]{1,0} %Arg_0.1), fft_type=FFT, fft_length={16}, metadata={op_name="jit(fft)/jit(main)/fft"}
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Instruction* root = (*module)->entry()->root();
  EXPECT_EQ(root->opcode, Opcode::kFft);
  EXPECT_EQ(root->attrs.fft_type, FftType::kFft);
  EXPECT_EQ(root->attrs.fft_length, (std::vector<int64_t>{16}));
  EXPECT_NE(PrintModule(**module).find("fft(c64[8,16]{1,0} Arg_0.1), fft_type=FFT, fft_length={16}"),
            std::string::npos)
      << PrintModule(**module);
}

TEST(FftHloTest, EveryTypeRoundTrips) {
  const std::string text = R"(HloModule m

ENTRY main {
  x = f32[2,4,6,10] parameter(0)
  r = c64[2,4,6,6] fft(x), fft_type=RFFT, fft_length={4,6,10}
  f = c64[2,4,6,6] fft(r), fft_type=FFT, fft_length={6,6}
  i = c64[2,4,6,6] fft(f), fft_type=IFFT, fft_length={6}
  ROOT ir = f32[2,4,6,10] fft(i), fft_type=IRFFT, fft_length={4,6,10}
}
)";
  auto first = ParseHloModule(text);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string printed = PrintModule(**first);
  for (const char* spelling : {"fft_type=RFFT, fft_length={4,6,10}", "fft_type=FFT, fft_length={6,6}",
                               "fft_type=IFFT, fft_length={6}", "fft_type=IRFFT, fft_length={4,6,10}"}) {
    EXPECT_NE(printed.find(spelling), std::string::npos) << spelling << " in\n" << printed;
  }
  auto second = ParseHloModule(printed);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(PrintModule(**second), printed);
}

TEST(FftHloTest, RefusesBadText) {
  auto unknown = ParseHloModule(
      "HloModule m\nENTRY e {\n  x = c64[8] parameter(0)\n  ROOT f = c64[8] fft(x), fft_type=DCT, "
      "fft_length={8}\n}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown fft_type 'DCT'"), std::string::npos)
      << unknown.status().message();
  auto mismatched = ParseHloModule(
      "HloModule m\nENTRY e {\n  x = c64[8] parameter(0)\n  ROOT f = c64[8] fft(x), fft_type=FFT, "
      "fft_length={4}\n}\n");
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("fft: FFT operand c64[8] dimension 0 is 8"), std::string::npos)
      << mismatched.status().message();
  auto wrong_result = ParseHloModule(
      "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT f = c64[8] fft(x), fft_type=RFFT, "
      "fft_length={8}\n}\n");
  EXPECT_FALSE(wrong_result.ok()) << "c64[5] is RFFT's result, not c64[8]";
}

// ---- Values against a naive DFT -------------------------------------------

using Complex = std::complex<double>;

// A deterministic pseudo-random value in [-1, 1].
double NextValue(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<double>((state >> 33) % 20001) / 10000.0 - 1.0;
}

// The naive DFT of `data` (row-major, dims `dims`) along dimension `axis`,
// exp(-+2 pi i jk/n) with jk reduced mod n, scaled by 1/n when inverse.
std::vector<Complex> NaiveDftAxis(const std::vector<Complex>& data, const std::vector<int64_t>& dims,
                                  size_t axis, bool inverse) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[axis];
  std::vector<Complex> result(data.size());
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < n; ++k) {
        Complex sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          const double angle = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / n;
          sum += data[static_cast<size_t>((o * n + j) * inner + i)] * std::polar(1.0, angle);
        }
        result[static_cast<size_t>((o * n + k) * inner + i)] = inverse ? sum / static_cast<double>(n) : sum;
      }
    }
  }
  return result;
}

struct FftCase {
  FftType type;
  bool f64;
  std::vector<int64_t> batch;
  std::vector<int64_t> lengths;
};

std::string CaseName(const FftCase& c) {
  static const char* kNames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  std::string name = std::string(kNames[static_cast<int>(c.type)]) + (c.f64 ? " f64 " : " f32 ") + "batch {";
  for (int64_t b : c.batch) name += std::to_string(b) + " ";
  name += "} fft_length {";
  for (int64_t l : c.lengths) name += std::to_string(l) + " ";
  return name + "}";
}

// Runs the case on the interpreter and compares it with the naive DFT.
void CheckAgainstNaiveDft(const FftCase& c) {
  SCOPED_TRACE(CaseName(c));
  const size_t rank = c.lengths.size();
  const bool real_in = c.type == FftType::kRfft;
  const bool real_out = c.type == FftType::kIrfft;
  const bool inverse = c.type == FftType::kIfft || c.type == FftType::kIrfft;
  std::vector<int64_t> full = c.batch;  // the full (complex) spectrum's dims
  full.insert(full.end(), c.lengths.begin(), c.lengths.end());
  std::vector<int64_t> half = full;  // the half spectrum's
  half.back() = c.lengths.back() / 2 + 1;
  const std::vector<int64_t>& in_dims = c.type == FftType::kIrfft ? half : full;
  const std::vector<int64_t>& out_dims = c.type == FftType::kRfft ? half : full;
  const ET complex_type = c.f64 ? ET::kC128 : ET::kC64;
  const ET real_type = c.f64 ? ET::kF64 : ET::kF32;
  const Shape in_shape(real_in ? real_type : complex_type, in_dims);

  // The input, as complex doubles and as the operand literal.
  uint64_t state = 12345 + rank * 7 + static_cast<uint64_t>(c.lengths.back());
  Literal operand(in_shape);
  std::vector<Complex> input(static_cast<size_t>(operand.element_count()));
  for (size_t i = 0; i < input.size(); ++i) {
    const double re = NextValue(state);
    const double im = real_in ? 0.0 : NextValue(state);
    if (c.f64) {
      if (real_in)
        operand.data<double>()[i] = re;
      else
        operand.data<complex128>()[i] = complex128(re, im);
    } else {
      if (real_in)
        operand.data<float>()[i] = static_cast<float>(re);
      else
        operand.data<complex64>()[i] = complex64(static_cast<float>(re), static_cast<float>(im));
    }
    // The reference sees the values the operand holds.
    input[i] = c.f64 ? Complex(re, im) : Complex(static_cast<float>(re), static_cast<float>(im));
  }

  // The reference: for IRFFT the leading dimensions' inverses first, then
  // the last dimension's spectrum completed with conjugates (its real part
  // is NumPy's irfft); else the full transform, cut to the half spectrum
  // for RFFT.
  const size_t first = c.batch.size();
  std::vector<Complex> expected;
  if (c.type == FftType::kIrfft) {
    std::vector<Complex> staged = input;
    for (size_t axis = first; axis + 1 < full.size(); ++axis) staged = NaiveDftAxis(staged, half, axis, true);
    const int64_t n = c.lengths.back();
    const int64_t h = half.back();
    const int64_t lines = static_cast<int64_t>(staged.size()) / h;
    std::vector<Complex> completed(static_cast<size_t>(lines * n));
    for (int64_t line = 0; line < lines; ++line) {
      for (int64_t k = 0; k < n; ++k) {
        completed[static_cast<size_t>(line * n + k)] =
            k < h ? staged[static_cast<size_t>(line * h + k)]
                  : std::conj(staged[static_cast<size_t>(line * h + n - k)]);
      }
    }
    expected = NaiveDftAxis(completed, full, full.size() - 1, true);
    for (Complex& value : expected) value = value.real();
  } else {
    expected = input;
    for (size_t axis = first; axis < full.size(); ++axis)
      expected = NaiveDftAxis(expected, full, axis, inverse);
    if (c.type == FftType::kRfft) {
      const int64_t n = c.lengths.back();
      const int64_t h = half.back();
      const int64_t lines = static_cast<int64_t>(expected.size()) / n;
      std::vector<Complex> cut(static_cast<size_t>(lines * h));
      for (int64_t line = 0; line < lines; ++line) {
        for (int64_t k = 0; k < h; ++k)
          cut[static_cast<size_t>(line * h + k)] = expected[static_cast<size_t>(line * n + k)];
      }
      expected = std::move(cut);
    }
  }

  Builder builder("fft");
  Op x = builder.Parameter(0, in_shape, "x");
  Op f = builder.Fft(x, c.type, c.lengths);
  ASSERT_TRUE(f.valid()) << builder.first_error().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(Shape result_shape, builder.GetShape(f));
  EXPECT_EQ(result_shape.dimensions(), out_dims);
  EXPECT_EQ(result_shape.element_type(), real_out ? real_type : complex_type);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result,
                            testing::BuildAndRun(builder, std::span<const Literal>(&operand, 1)));
  ASSERT_EQ(result.element_count(), static_cast<int64_t>(expected.size()));

  double scale = 1.0;
  for (const Complex& value : expected) scale = std::max(scale, std::abs(value));
  // Rounding of the library's float arithmetic grows slowly with the length.
  const double tolerance = (c.f64 ? 1e-13 : 4e-6) * scale;
  double worst = 0;
  int64_t worst_at = -1;
  for (size_t i = 0; i < expected.size(); ++i) {
    Complex got;
    if (real_out) {
      got = c.f64 ? result.data<double>()[i] : static_cast<double>(result.data<float>()[i]);
    } else if (c.f64) {
      got = result.data<complex128>()[i];
    } else {
      const complex64 value = result.data<complex64>()[i];
      got = Complex(value.real(), value.imag());
    }
    const double error = std::abs(got - expected[i]);
    if (!(error <= worst)) {
      worst = error;
      worst_at = static_cast<int64_t>(i);
    }
  }
  EXPECT_LE(worst, tolerance) << "worst error at element " << worst_at << " of " << expected.size()
                              << " (largest magnitude " << scale << ")";
}

TEST(FftValuesTest, OneDimensionalLengths) {
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 30, 31, 97, 100, 128, 210}) {
    for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
      for (bool f64 : {false, true}) CheckAgainstNaiveDft({type, f64, {3}, {n}});
    }
  }
}

TEST(FftValuesTest, TwoDimensional) {
  for (std::vector<int64_t> lengths :
       std::vector<std::vector<int64_t>>{{6, 10}, {7, 9}, {1, 5}, {5, 1}, {16, 16}, {11, 8}}) {
    for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
      for (bool f64 : {false, true}) CheckAgainstNaiveDft({type, f64, {2}, lengths});
    }
  }
}

TEST(FftValuesTest, ThreeDimensionalWithBatches) {
  for (std::vector<int64_t> lengths :
       std::vector<std::vector<int64_t>>{{3, 4, 5}, {2, 6, 7}, {4, 4, 4}, {5, 3, 2}}) {
    for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
      for (bool f64 : {false, true}) {
        CheckAgainstNaiveDft({type, f64, {}, lengths});
        CheckAgainstNaiveDft({type, f64, {2, 3}, lengths});
      }
    }
  }
}

TEST(FftValuesTest, IrfftIgnoresImaginaryPartsARealSignalCannotHave) {
  // NumPy: irfft([1+1j, 2+3j, 4+5j], n=4) = irfft([1, 2+3j, 4], n=4) =
  // [2.25, -2.25, 0.25, 0.75]: the zero frequency's and the n/2 one's
  // imaginary parts do not count.
  Builder builder("irfft");
  Op x = builder.ConstantR1<complex64>({{1, 1}, {2, 3}, {4, 5}});
  const int64_t lengths[] = {4};
  builder.Fft(x, FftType::kIrfft, lengths);
  EXPECT_TRUE(testing::RunsTo(builder, Literal::FromVector<float>({2.25f, -2.25f, 0.25f, 0.75f}), {}, 1e-6));
}

TEST(FftValuesTest, ZeroSizedArrays) {
  Builder builder("empty");
  Op x = builder.Parameter(0, Shape(ET::kF32, {0, 8}), "x");
  const int64_t lengths[] = {8};
  Op r = builder.Fft(x, FftType::kRfft, lengths);
  Op i = builder.Fft(r, FftType::kIrfft, lengths);
  const Op both[] = {r, i};
  builder.Tuple(both);
  const Literal operand(Shape(ET::kF32, {0, 8}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result,
                            testing::BuildAndRun(builder, std::span<const Literal>(&operand, 1)));
  EXPECT_EQ(result.tuple_elements()[0].shape(), Shape(ET::kC64, {0, 5}));
  EXPECT_EQ(result.tuple_elements()[1].shape(), Shape(ET::kF32, {0, 8}));
}

TEST(FftValuesTest, RoundTripsOnTheCpuBackend) {
  // rfft2 then irfft2 gives the signal back; the same program on cpu.
  Builder builder("round_trip");
  Op x = builder.Parameter(0, Shape(ET::kF64, {3, 12, 10}), "x");
  const int64_t lengths[] = {12, 10};
  builder.Fft(builder.Fft(x, FftType::kRfft, lengths), FftType::kIrfft, lengths);
  Literal operand(Shape(ET::kF64, {3, 12, 10}));
  uint64_t state = 7;
  for (double& value : operand.data<double>()) value = NextValue(state);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Build());
  for (const char* backend : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend);
    auto result = testing::Run(*module, std::span<const Literal>(&operand, 1), backend);
    if (!result.ok() && result.status().code() == StatusCode::kNotFound) continue;  // a build without cpu
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(testing::LiteralNear(operand, *result, 1e-13));
  }
}

}  // namespace
}  // namespace kiln
