// The sign of zero where a reduce, reduce-window, dot or convolution
// starts from a constant, on lavapipe with validation on, bit for bit
// against the interpreter (any NaN for a NaN). XLA folds the initial value
// in first: a sum of -0 elements from +0 is +0 (+0 + -0), from -0 it is -0.
// Lavapipe's backend folds `+0 + x` to x when it sees the constant meet the
// first element (a short loop unrolled, a subgroup's final fold of the
// initial value), which gave -0; the emitter computes that first step with
// the constant-operand helpers (constant_operands.h). Extents 1 to 16 are
// unrolled there, 1000 runs the subgroup (rows) or the plain loop
// (columns). A product from 1 is untouched (x * 1 folds to x, rightly).
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_instance.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "tests/vulkan/interpreter_agreement.h"
#include "tests/vulkan/validation_checked_test.h"

namespace kiln::vulkan {
namespace {

const int64_t kSignedZeroExtents[] = {1, 2, 4, 16, 1000};

// Rows of `extent` values: all -0; -0 and +0 alternating from -0 and from
// +0; all +0; -0, 2.5, zeros and -1.5 last (its sums and products exact in
// every type and order: a subgroup reduce folds in another order).
constexpr int64_t kSignedZeroRows = 5;
double SignedZeroRowValue(int64_t row, int64_t i, int64_t extent) {
  switch (row) {
    case 0: return -0.0;
    case 1: return i % 2 == 0 ? -0.0 : 0.0;
    case 2: return i % 2 == 0 ? 0.0 : -0.0;
    case 3: return 0.0;
    default:
      if (i == 1) return 2.5;
      if (i > 1 && i == extent - 1) return -1.5;
      return i % 2 == 0 ? -0.0 : 0.0;
  }
}

// f32[kSignedZeroRows, extent] of those rows, or its transpose f32[extent, kSignedZeroRows].
Literal SignedZeroRows(int64_t extent, bool transposed) {
  std::vector<float> values(static_cast<size_t>(kSignedZeroRows * extent));
  for (int64_t row = 0; row < kSignedZeroRows; ++row) {
    for (int64_t i = 0; i < extent; ++i) {
      const int64_t at = transposed ? i * kSignedZeroRows + row : row * extent + i;
      values[static_cast<size_t>(at)] = static_cast<float>(SignedZeroRowValue(row, i, extent));
    }
  }
  return transposed ? Literal::FromVector<float>(values, {extent, kSignedZeroRows})
                    : Literal::FromVector<float>(values, {kSignedZeroRows, extent});
}

std::string ReplaceAllInSignedZeroText(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Equal bits (as doubles: every type here converts exactly), or both NaN.
bool SameSignedZeroValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

class VulkanSignedZeroAccumulationTest : public ValidationCheckedTest<> {
 protected:
  // Runs `text` on both backends and expects every leaf bit for bit equal.
  static void ExpectSameBits(const std::string& text, const std::vector<Literal>& arguments) {
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
    KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves,
                              RunOnInterpreterAndVulkan(**module, arguments));
    ASSERT_EQ(leaves.vulkan.size(), leaves.interpreter.size());
    for (size_t leaf = 0; leaf < leaves.vulkan.size(); ++leaf) {
      const Literal& want = leaves.interpreter[leaf];
      const Literal& got = leaves.vulkan[leaf];
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.element_count(); ++i) {
        EXPECT_TRUE(SameSignedZeroValue(got.GetAsDouble(i), want.GetAsDouble(i)))
            << "leaf " << leaf << " element " << i << ": vulkan " << got.GetAsDouble(i) << ", interpreter "
            << want.GetAsDouble(i);
      }
    }
  }
};

constexpr const char* kSignedZeroComputeTypes[] = {"f32", "f64", "f16", "bf16"};

// A reduce of each row (over dimension 1, where f32 rows of 1000 take a
// subgroup per row) or of each column of the transpose (dimension 0, one
// invocation's loop), computed in $T from init $I with $OP.
std::string SignedZeroReduceModule(int64_t extent, bool columns, const char* type, const char* op,
                                   const char* init) {
  const std::string dims = columns ? std::to_string(extent) + "," + std::to_string(kSignedZeroRows)
                                   : std::to_string(kSignedZeroRows) + "," + std::to_string(extent);
  std::string text = R"(HloModule signed_zero_reduce
combine {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT c = $T[] $OP(a, b)
}
ENTRY e {
  p = f32[$D] parameter(0)
  x = $T[$D] convert(p)
  z = $T[] constant($I)
  ROOT r = $T[$R] reduce(x, z), dimensions={$K}, to_apply=combine
})";
  text = ReplaceAllInSignedZeroText(text, "$T", type);
  text = ReplaceAllInSignedZeroText(text, "$OP", op);
  text = ReplaceAllInSignedZeroText(text, "$I", init);
  text = ReplaceAllInSignedZeroText(text, "$D", dims);
  text = ReplaceAllInSignedZeroText(text, "$R", std::to_string(kSignedZeroRows));
  return ReplaceAllInSignedZeroText(text, "$K", columns ? "0" : "1");
}

TEST_F(VulkanSignedZeroAccumulationTest, SumsFromEitherZeroGiveTheInterpretersZero) {
  for (const char* type : kSignedZeroComputeTypes) {
    for (const char* init : {"0", "-0"}) {
      for (const int64_t extent : kSignedZeroExtents) {
        for (const bool columns : {false, true}) {
          SCOPED_TRACE(std::string(type) + " from " + init + ", extent " + std::to_string(extent) +
                       (columns ? ", columns" : ", rows"));
          ExpectSameBits(SignedZeroReduceModule(extent, columns, type, "add", init),
                         {SignedZeroRows(extent, columns)});
        }
      }
    }
  }
}

TEST_F(VulkanSignedZeroAccumulationTest, ProductsFromOneKeepTheirSign) {
  for (const char* type : {"f32", "f64"}) {
    for (const int64_t extent : kSignedZeroExtents) {
      for (const bool columns : {false, true}) {
        SCOPED_TRACE(std::string(type) + ", extent " + std::to_string(extent) +
                     (columns ? ", columns" : ", rows"));
        ExpectSameBits(SignedZeroReduceModule(extent, columns, type, "multiply", "1"),
                       {SignedZeroRows(extent, columns)});
      }
    }
  }
}

// A reduce that is not its kernel's root (the negate is fused after it).
TEST_F(VulkanSignedZeroAccumulationTest, FusedSumsFromZeroGiveTheInterpretersZero) {
  for (const int64_t extent : kSignedZeroExtents) {
    SCOPED_TRACE("extent " + std::to_string(extent));
    const std::string text = R"(HloModule fused_signed_zero_reduce
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[5,$E] parameter(0)
  z = f32[] constant(0)
  r = f32[5] reduce(x, z), dimensions={1}, to_apply=add
  ROOT n = f32[5] negate(r)
})";
    ExpectSameBits(ReplaceAllInSignedZeroText(text, "$E", std::to_string(extent)),
                   {SignedZeroRows(extent, false)});
  }
}

// Windows of 1 to 16 elements along the rows, without padding and with a
// padded element on each side (a window that starts in the padding).
TEST_F(VulkanSignedZeroAccumulationTest, WindowSumsFromZeroGiveTheInterpretersZero) {
  for (const char* type : {"f32", "f64", "f16"}) {
    for (const int64_t window : {1, 2, 4, 16}) {
      for (const int64_t pad : {0, 1}) {
        for (const char* init : {"0", "-0"}) {
          SCOPED_TRACE(std::string(type) + " window " + std::to_string(window) + " pad " +
                       std::to_string(pad) + " from " + init);
          const int64_t extent = 20;
          const int64_t out = extent + 2 * pad - window + 1;
          std::string text = R"(HloModule signed_zero_window
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT c = $T[] add(a, b)
}
ENTRY e {
  p = f32[5,$E] parameter(0)
  x = $T[5,$E] convert(p)
  z = $T[] constant($I)
  ROOT w = $T[5,$O] reduce-window(x, z), window={size=1x$W pad=0_0x$P_$P}, to_apply=add
})";
          text = ReplaceAllInSignedZeroText(text, "$T", type);
          text = ReplaceAllInSignedZeroText(text, "$E", std::to_string(extent));
          text = ReplaceAllInSignedZeroText(text, "$I", init);
          text = ReplaceAllInSignedZeroText(text, "$O", std::to_string(out));
          text = ReplaceAllInSignedZeroText(text, "$W", std::to_string(window));
          text = ReplaceAllInSignedZeroText(text, "$P", std::to_string(pad));
          ExpectSameBits(text, {SignedZeroRows(extent, false)});
        }
      }
    }
  }
}

// Each row dotted with ones (every product the row's element): the
// accumulator starts at +0 in the interpreter. m = 5 keeps it elemental.
TEST_F(VulkanSignedZeroAccumulationTest, DotsOfSignedZerosGiveTheInterpretersZero) {
  for (const char* type : kSignedZeroComputeTypes) {
    for (const int64_t extent : kSignedZeroExtents) {
      SCOPED_TRACE(std::string(type) + ", contracting " + std::to_string(extent));
      std::string text = R"(HloModule signed_zero_dot
ENTRY e {
  p = f32[5,$E] parameter(0)
  x = $T[5,$E] convert(p)
  o = $T[] constant(1)
  ones = $T[$E] broadcast(o), dimensions={}
  ROOT d = $T[5] dot(x, ones), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
      text = ReplaceAllInSignedZeroText(text, "$T", type);
      text = ReplaceAllInSignedZeroText(text, "$E", std::to_string(extent));
      ExpectSameBits(text, {SignedZeroRows(extent, false)});
    }
  }
}

// A 1-D convolution of each row (batch 5, one feature) with a window of
// ones, unpadded and padded by one on each side. f32 (a same-type convert
// is dropped) runs the library convolution, the others the generated
// kernel.
TEST_F(VulkanSignedZeroAccumulationTest, ConvolutionsOfSignedZerosGiveTheInterpretersZero) {
  for (const char* type : kSignedZeroComputeTypes) {
    for (const int64_t window : {1, 2, 4, 16}) {
      for (const int64_t pad : {0, 1}) {
        SCOPED_TRACE(std::string(type) + " window " + std::to_string(window) + " pad " + std::to_string(pad));
        const int64_t extent = 20;
        const int64_t out = extent + 2 * pad - window + 1;
        std::string text = R"(HloModule signed_zero_convolution
ENTRY e {
  p = f32[5,$E,1] parameter(0)
  q = f32[$W,1,1] parameter(1)
  x = $T[5,$E,1] convert(p)
  k = $T[$W,1,1] convert(q)
  ROOT c = $T[5,$O,1] convolution(x, k), window={size=$W pad=$P_$P}, dim_labels=b0f_0io->b0f
})";
        text = ReplaceAllInSignedZeroText(text, "$T", type);
        text = ReplaceAllInSignedZeroText(text, "$E", std::to_string(extent));
        text = ReplaceAllInSignedZeroText(text, "$O", std::to_string(out));
        text = ReplaceAllInSignedZeroText(text, "$W", std::to_string(window));
        text = ReplaceAllInSignedZeroText(text, "$P", std::to_string(pad));
        StatusOr<Literal> rows = SignedZeroRows(extent, false).Reshape({kSignedZeroRows, extent, 1});
        ASSERT_TRUE(rows.ok()) << rows.status().ToString();
        std::vector<Literal> arguments;
        arguments.push_back(std::move(rows).value());
        arguments.push_back(Literal::FromVector<float>(std::vector<float>(static_cast<size_t>(window), 1.0f),
                                                       {window, 1, 1}));
        ExpectSameBits(text, arguments);
      }
    }
  }
}

// The library convolution (an f32 or f16 convolution of two parameters
// with enough outputs and features) starts its accumulators at +0 too: five
// rows of 64 with 16 output features, windows padded to keep the width.
// (Each window is a pipeline of its own, which lavapipe takes seconds to
// compile: two of them.)
TEST_F(VulkanSignedZeroAccumulationTest, LibraryConvolutionsOfSignedZerosGiveTheInterpretersZero) {
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  for (const char* type : {"f32", "f16"}) {
    for (const int64_t window : {1, 16}) {
      SCOPED_TRACE(std::string(type) + " window " + std::to_string(window));
      const int64_t extent = 64, pad = window / 2, features = 16;
      const int64_t out = extent + 2 * pad - window + 1;
      std::string text = R"(HloModule signed_zero_library_convolution
ENTRY e {
  x = $T[5,$E,1] parameter(0)
  k = $T[$W,1,$F] parameter(1)
  ROOT c = $T[5,$O,$F] convolution(x, k), window={size=$W pad=$P_$P}, dim_labels=b0f_0io->b0f
})";
      text = ReplaceAllInSignedZeroText(text, "$T", type);
      text = ReplaceAllInSignedZeroText(text, "$E", std::to_string(extent));
      text = ReplaceAllInSignedZeroText(text, "$O", std::to_string(out));
      text = ReplaceAllInSignedZeroText(text, "$W", std::to_string(window));
      text = ReplaceAllInSignedZeroText(text, "$P", std::to_string(pad));
      text = ReplaceAllInSignedZeroText(text, "$F", std::to_string(features));
      StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
      ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
      KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program,
                                CompileForVulkan(**module, device->shader_features(), 256, 2));
      ASSERT_EQ(program->shaders.size(), 1u);
      ASSERT_TRUE(program->shaders[0].library.has_value()) << "not the library convolution:\n" << text;
      StatusOr<Literal> rows = SignedZeroRows(extent, false).Reshape({kSignedZeroRows, extent, 1});
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      KILN_ASSERT_OK_AND_ASSIGN(
          Literal x, rows->Convert(type == std::string("f32") ? ElementType::kF32 : ElementType::kF16));
      KILN_ASSERT_OK_AND_ASSIGN(
          Literal k,
          Literal::FromVector<float>(std::vector<float>(static_cast<size_t>(window * features), 1.0f),
                                     {window, 1, features})
              .Convert(x.shape().element_type()));
      std::vector<Literal> arguments;
      arguments.push_back(std::move(x));
      arguments.push_back(std::move(k));
      ExpectSameBits(text, arguments);
    }
  }
}

}  // namespace
}  // namespace kiln::vulkan
