// The fft expansion the device backends run (core/passes/expansions/fft.cc):
// for every fft_type, c64 and c128, lengths that are 1, powers of two,
// small primes, composites, a prime above the dense limit (Bluestein) and a
// composite holding one, over 1 to 3 dimensions with and without batch
// dimensions, the expanded module (DeviceOpExpander applied) holds no fft
// and gives, on the interpreter and on `cpu`, what the interpreter's Eigen
// FFT gives within eps * log2(N) times the largest magnitude.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/passes/device_op_expansion.h"
#include "core/passes/expansions/fft_leading_axis.h"
#include "tests/unit/fft_reference.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using fft_reference::CaseName;
using fft_reference::FftCase;
using fft_reference::NextValue;
using Complex = std::complex<double>;
using ET = ElementType;

// The operand shape of a case: the complex side for FFT/IFFT, the reals for
// RFFT, the half spectrum for IRFFT.
Shape OperandShape(const FftCase& c) {
  std::vector<int64_t> dims = c.batch;
  dims.insert(dims.end(), c.lengths.begin(), c.lengths.end());
  if (c.type == FftType::kIrfft) dims.back() = dims.back() / 2 + 1;
  if (c.type == FftType::kRfft) return Shape(c.f64 ? ET::kF64 : ET::kF32, dims);
  return Shape(c.f64 ? ET::kC128 : ET::kC64, dims);
}

Literal RandomOperand(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  uint64_t state = seed;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const auto at = static_cast<size_t>(i);
    switch (shape.element_type()) {
      case ET::kF32: literal.data<float>()[at] = static_cast<float>(NextValue(state)); break;
      case ET::kF64: literal.data<double>()[at] = NextValue(state); break;
      case ET::kC64:
        literal.data<complex64>()[at] =
            complex64(static_cast<float>(NextValue(state)), static_cast<float>(NextValue(state)));
        break;
      default: literal.data<complex128>()[at] = complex128(NextValue(state), NextValue(state)); break;
    }
  }
  return literal;
}

Complex ValueAt(const Literal& literal, int64_t i) {
  const auto at = static_cast<size_t>(i);
  switch (literal.shape().element_type()) {
    case ET::kF32: return literal.data<float>()[at];
    case ET::kF64: return literal.data<double>()[at];
    case ET::kC64: return Complex(literal.data<complex64>()[at].real(), literal.data<complex64>()[at].imag());
    default: return literal.data<complex128>()[at];
  }
}

std::unique_ptr<Module> FftModule(const FftCase& c) {
  Builder builder("fft");
  builder.Fft(builder.Parameter(0, OperandShape(c), "x"), c.type, c.lengths);
  auto module = builder.Build();
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(*module) : nullptr;
}

StatusOr<std::unique_ptr<Module>> Expanded(const Module& module) {
  std::unique_ptr<Module> expanded = module.Clone();
  KILN_ASSIGN_OR_RETURN(bool changed, DeviceOpExpander().Run(*expanded));
  if (!changed) return Internal("the expander changed nothing");
  return expanded;
}

int64_t CountOpcode(const Module& module, Opcode opcode) {
  int64_t count = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) count += instruction->opcode == opcode;
  }
  return count;
}

void ExpectNear(const Literal& expected, const Literal& got, double tolerance) {
  ASSERT_EQ(got.shape().dimensions(), expected.shape().dimensions());
  ASSERT_EQ(got.shape().element_type(), expected.shape().element_type());
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double error = std::abs(ValueAt(got, i) - ValueAt(expected, i));
    if (!(error <= worst)) {
      worst = error;
      worst_at = i;
    }
  }
  EXPECT_LE(worst, tolerance) << "worst error at element " << worst_at << ": expected "
                              << ValueAt(expected, worst_at) << ", got " << ValueAt(got, worst_at);
}

// Runs a case: the interpreter's fft against the expansion on the
// interpreter and on cpu.
void CheckExpansion(const FftCase& c) {
  SCOPED_TRACE(CaseName(c));
  std::unique_ptr<Module> module = FftModule(c);
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> expanded, Expanded(*module));
  EXPECT_EQ(CountOpcode(*expanded, Opcode::kFft), 0);
  const Literal operand = RandomOperand(OperandShape(c), 1000 + c.lengths.back() * 7 + c.lengths.size());
  KILN_ASSERT_OK_AND_ASSIGN(Literal expected, testing::Run(*module, std::span<const Literal>(&operand, 1)));

  int64_t total = 1;
  for (int64_t length : c.lengths) total *= length;
  double largest = 0;
  for (int64_t i = 0; i < expected.element_count(); ++i)
    largest = std::max(largest, std::abs(ValueAt(expected, i)));
  const double eps = c.f64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  const double tolerance =
      8 * eps * std::max(1.0, std::log2(static_cast<double>(total))) * std::max(1.0, largest);
  for (const char* backend : {"interpreter", "cpu"}) {
    SCOPED_TRACE(backend);
    auto got = testing::Run(*expanded, std::span<const Literal>(&operand, 1), backend);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ExpectNear(expected, *got, tolerance);
  }
}

constexpr FftType kTypes[] = {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft};

// 67 is a prime above the dense limit (Bluestein), 134 = 2 * 67, 289 = 17 * 17
// a square of a prime above the largest radix.
TEST(FftExpansionTest, OneDimensionalEveryTypeAndLength) {
  for (FftType type : kTypes) {
    for (bool f64 : {false, true}) {
      for (int64_t n : {1, 2, 3, 5, 8, 12, 17, 64, 67, 100, 134, 289, 1024}) {
        CheckExpansion({type, f64, {3}, {n}});
      }
    }
  }
}

TEST(FftExpansionTest, OneDimensionalWithoutAndWithSeveralBatchDimensions) {
  for (FftType type : kTypes) {
    for (bool f64 : {false, true}) {
      CheckExpansion({type, f64, {}, {12}});
      CheckExpansion({type, f64, {}, {1}});
      CheckExpansion({type, f64, {2, 3}, {9}});
    }
  }
}

TEST(FftExpansionTest, TwoAndThreeDimensional) {
  for (FftType type : kTypes) {
    for (bool f64 : {false, true}) {
      CheckExpansion({type, f64, {2}, {6, 8}});
      CheckExpansion({type, f64, {}, {5, 17}});
      CheckExpansion({type, f64, {}, {1, 7}});
      CheckExpansion({type, f64, {2}, {4, 6, 10}});
      CheckExpansion({type, f64, {}, {3, 5, 7}});
    }
  }
}

TEST(FftExpansionTest, IrfftIgnoresTheImaginaryPartsOfTheRealBins) {
  // NumPy's irfft drops the imaginary parts of the zero and (even length)
  // n/2 bins; the expansion must not let them leak into the packed transform.
  for (int64_t n : {8, 9}) {
    SCOPED_TRACE(n);
    const FftCase c{FftType::kIrfft, true, {2}, {n}};
    std::unique_ptr<Module> module = FftModule(c);
    ASSERT_NE(module, nullptr);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> expanded, Expanded(*module));
    Literal operand = RandomOperand(OperandShape(c), 5);
    Literal cleared = operand;
    const int64_t h = n / 2 + 1;
    for (int64_t line = 0; line < 2; ++line) {
      auto& first = cleared.data<complex128>()[static_cast<size_t>(line * h)];
      first = complex128(first.real(), 0);
      if (n % 2 == 0) {
        auto& last = cleared.data<complex128>()[static_cast<size_t>(line * h + h - 1)];
        last = complex128(last.real(), 0);
      }
    }
    KILN_ASSERT_OK_AND_ASSIGN(Literal with, testing::Run(*expanded, std::span<const Literal>(&operand, 1)));
    KILN_ASSERT_OK_AND_ASSIGN(Literal without,
                              testing::Run(*expanded, std::span<const Literal>(&cleared, 1)));
    ExpectNear(without, with, 1e-14);
  }
}

TEST(FftExpansionTest, StagesStayWithinTheRadixSoTheWorkIsNLogN) {
  // Every dot of the expanded 1024-point transform contracts at most the
  // largest radix (a dense 1024 x 1024 DFT matrix would contract 1024).
  std::unique_ptr<Module> module = FftModule({FftType::kFft, false, {4}, {1024}});
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> expanded, Expanded(*module));
  int64_t dots = 0;
  for (const auto& computation : expanded->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode != Opcode::kDot) continue;
      ++dots;
      const Shape& lhs = instruction->operand(0)->shape;
      EXPECT_LE(lhs.dimensions(1), fft_expansion::kLargestRadix) << instruction->name;
    }
  }
  EXPECT_EQ(dots, 3);  // 1024 = 16 * 16 * 4
}

TEST(FftExpansionTest, ZeroSizedOperandsGiveEmptyResults) {
  for (FftType type : {FftType::kFft, FftType::kRfft}) {
    Builder builder("empty");
    const Shape shape(type == FftType::kFft ? ET::kC64 : ET::kF32, {0, 8});
    const int64_t lengths[] = {8};
    builder.Fft(builder.Parameter(0, shape, "x"), type, lengths);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Build());
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> expanded, Expanded(*module));
    EXPECT_EQ(CountOpcode(*expanded, Opcode::kFft), 0);
    const Literal operand(shape);
    KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*expanded, std::span<const Literal>(&operand, 1)));
    EXPECT_EQ(result.element_count(), 0);
  }
}

TEST(FftExpansionTest, RefusesAColumnMajorOperandByName) {
  Shape column_major(ET::kC64, {6, 8});
  column_major.mutable_layout().minor_to_major = {0, 1};
  Builder builder("column_major");
  const int64_t lengths[] = {8};
  builder.Fft(builder.Parameter(0, column_major, "x"), FftType::kFft, lengths);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, builder.Build());
  const Instruction* fft = module->entry()->root();
  ASSERT_EQ(fft->opcode, Opcode::kFft);
  ASSERT_NE(FindDeviceOpExpansion(*fft), nullptr);
  auto expansion = FindDeviceOpExpansion(*fft)->expand(*fft);
  ASSERT_FALSE(expansion.ok());
  EXPECT_EQ(expansion.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(expansion.status().message().find("fft expansion"), std::string::npos)
      << expansion.status().message();
  EXPECT_NE(expansion.status().message().find("layout"), std::string::npos) << expansion.status().message();
}

}  // namespace
}  // namespace kiln
