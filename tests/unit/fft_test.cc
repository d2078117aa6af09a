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
#include "core/interpreter/interpreter_backend.h"
#include "core/shape_inference.h"
#include "tests/unit/fft_reference.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using fft_reference::CheckAgainstNaiveDft;
using fft_reference::NextValue;

Backend& Interpreter() {
  static interpreter::InterpreterBackend backend;
  return backend;
}

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

TEST(FftValuesTest, OneDimensionalLengths) {
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 30, 31, 97, 100, 128, 210}) {
    for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
      for (bool f64 : {false, true}) CheckAgainstNaiveDft({type, f64, {3}, {n}}, Interpreter());
    }
  }
}

TEST(FftValuesTest, TwoDimensional) {
  for (std::vector<int64_t> lengths :
       std::vector<std::vector<int64_t>>{{6, 10}, {7, 9}, {1, 5}, {5, 1}, {16, 16}, {11, 8}}) {
    for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
      for (bool f64 : {false, true}) CheckAgainstNaiveDft({type, f64, {2}, lengths}, Interpreter());
    }
  }
}

TEST(FftValuesTest, ThreeDimensionalWithBatches) {
  for (std::vector<int64_t> lengths :
       std::vector<std::vector<int64_t>>{{3, 4, 5}, {2, 6, 7}, {4, 4, 4}, {5, 3, 2}}) {
    for (FftType type : {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
      for (bool f64 : {false, true}) {
        CheckAgainstNaiveDft({type, f64, {}, lengths}, Interpreter());
        CheckAgainstNaiveDft({type, f64, {2, 3}, lengths}, Interpreter());
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
