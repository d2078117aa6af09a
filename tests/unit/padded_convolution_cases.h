// The cases that hold every backend to one rule for a convolution's taps
// that land in the padding or between base-dilated input elements (README,
// numerics: "a convolution's padding"): they are zeros that take part in
// the products, so an infinite or NaN weight at such a tap makes the output
// NaN, and a finite weight adds a zero that changes no result, its sign
// included.
//
// Each case is one convolution of a parameter of positive inputs and a
// parameter of positive weights, one of which is made infinite or NaN; its
// expectation, derived by hand from the window, says which outputs of the
// poisoned weight's output feature are NaN, which +inf (the tap meets an
// input) and which finite; every other feature is finite. A case without a
// poisoned weight has -0 inputs and weights of both signs: every output is
// +0. The interpreter's test checks the expectations; every backend's test
// checks its results against them and its finite values against the
// interpreter's. The "_large" cases are sized for the device library
// kernels (vulkan's library convolution takes at least 4096 outputs and 4
// output features a group), and so is every case of three spatial
// dimensions (PaddedTapCases3d).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/literal.h"

namespace kiln::testing {

struct PaddedTapCase {
  const char* name;
  const char* type;  // element type of both operands and the result
  const char* lhs;   // dimensions, e.g. "[1,5,1]"
  const char* rhs;
  const char* out;
  const char* attributes;
  // The weight made infinite or NaN, as its index in the rhs; empty: none
  // (the -0 cases).
  std::vector<int64_t> poisoned_weight;
  double poison;
  // One character per output position of the poisoned weight's output
  // feature, row-major over the output's spatial dimensions, the same in
  // every image: 'N' NaN, 'I' +inf, '.' finite. Without a poisoned weight,
  // '0': every output of every feature is +0.
  std::string expected;
};

inline void PrintTo(const PaddedTapCase& c, std::ostream* out) {
  *out << c.name << ": " << c.type << c.lhs << " x " << c.type << c.rhs << " -> " << c.out << ", "
       << c.attributes;
}

inline std::vector<PaddedTapCase> PaddedTapCases() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  return {
      // 1-D, input positions j-1, j, j+1: tap 0 meets the low padding at j = 0.
      {"f32_1d_inf_tap_meets_padding_and_inputs",
       "f32",
       "[1,5,1]",
       "[3,1,2]",
       "[1,5,2]",
       "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f",
       {0, 0, 1},
       kInf,
       "NIIII"},
      {"f32_1d_nan_tap_meets_padding_and_inputs",
       "f32",
       "[1,5,1]",
       "[3,1,2]",
       "[1,5,2]",
       "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f",
       {0, 0, 1},
       kNaN,
       "NNNNN"},
      // Two inputs, padding 2 below: tap 0 reads positions -2 and -1 only.
      {"f32_1d_inf_tap_meets_only_padding",
       "f32",
       "[1,2,1]",
       "[3,1,2]",
       "[1,2,2]",
       "window={size=3 pad=2_0}, dim_labels=b0f_0io->b0f",
       {0, 0, 0},
       kInf,
       "NN"},
      {"f64_1d_nan_tap_meets_only_padding",
       "f64",
       "[1,2,1]",
       "[3,1,2]",
       "[1,2,2]",
       "window={size=3 pad=2_0}, dim_labels=b0f_0io->b0f",
       {0, 0, 1},
       kNaN,
       "NN"},
      // Tap 2 reads j+2 of four inputs padded 2 above: padding at j = 2, 3.
      {"f32_1d_inf_tap_meets_high_padding",
       "f32",
       "[1,4,1]",
       "[3,1,2]",
       "[1,4,2]",
       "window={size=3 pad=0_2}, dim_labels=b0f_0io->b0f",
       {2, 0, 1},
       kInf,
       "IINN"},
      // Three inputs dilated to x.x.x (holes at 1 and 3), padded 1 each side:
      // tap 0 reads dilated position j-1: padding, input, hole, input, hole.
      {"f32_1d_inf_tap_meets_lhs_dilation_holes",
       "f32",
       "[1,3,1]",
       "[3,1,2]",
       "[1,5,2]",
       "window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f",
       {0, 0, 0},
       kInf,
       "NININ"},
      {"bf16_1d_inf_tap_meets_lhs_dilation_holes",
       "bf16",
       "[1,3,1]",
       "[3,1,2]",
       "[1,5,2]",
       "window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f",
       {0, 0, 1},
       kInf,
       "NININ"},
      // Window dilation 2: tap 2 reads j+4-2 of six inputs: padding at j = 4, 5.
      {"f32_1d_inf_tap_with_rhs_dilation",
       "f32",
       "[1,6,1]",
       "[3,1,2]",
       "[1,6,2]",
       "window={size=3 pad=2_2 rhs_dilate=2}, dim_labels=b0f_0io->b0f",
       {2, 0, 0},
       kInf,
       "IIIINN"},
      // 2-D 3x3 same padding, tap (0,0) reads (i-1, j-1): padding along the
      // first row and column.
      {"f32_2d_nhwc_inf_corner_tap",
       "f32",
       "[2,4,4,3]",
       "[3,3,3,4]",
       "[2,4,4,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       {0, 0, 1, 2},
       kInf,
       "NNNNNIIINIIINIII"},
      {"f16_2d_nhwc_inf_corner_tap",
       "f16",
       "[2,4,4,3]",
       "[3,3,3,4]",
       "[2,4,4,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       {0, 0, 1, 2},
       kInf,
       "NNNNNIIINIIINIII"},
      {"f64_2d_nhwc_nan_corner_tap",
       "f64",
       "[2,4,4,3]",
       "[3,3,3,4]",
       "[2,4,4,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       {0, 0, 1, 2},
       kNaN,
       "NNNNNNNNNNNNNNNN"},
      // Stride 2 over 5x5 padded 1: tap (2,2) reads (2i+1, 2j+1), padding at
      // i = 2 or j = 2.
      {"f32_2d_nchw_inf_corner_tap_strided",
       "f32",
       "[1,3,5,5]",
       "[4,3,3,3]",
       "[1,4,3,3]",
       "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
       {1, 0, 2, 2},
       kInf,
       "IINIINNNN"},
      // Two feature groups; tap (2,0) of output feature 3 (group 1) reads
      // (i+1, j-1): padding in the last row and the first column.
      {"f32_2d_grouped_inf_corner_tap",
       "f32",
       "[1,4,4,4]",
       "[3,3,2,4]",
       "[1,4,4,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2",
       {2, 0, 1, 3},
       kInf,
       "NIIINIIINIIINNNN"},
      // Depthwise; tap (2,2) reads (i+1, j+1): padding in the last row and column.
      {"f32_2d_depthwise_inf_corner_tap",
       "f32",
       "[1,4,4,3]",
       "[3,3,1,3]",
       "[1,4,4,3]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=3",
       {2, 2, 0, 1},
       kInf,
       "IIINIIINIIINNNNN"},
      // -0 inputs, finite weights of both signs: every product and sum is a
      // zero, and every sum +0.
      {"f32_1d_negative_zero_inputs",
       "f32",
       "[1,5,2]",
       "[3,2,3]",
       "[1,5,3]",
       "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f",
       {},
       0,
       "00000"},
      {"f16_2d_negative_zero_inputs",
       "f16",
       "[1,3,3,2]",
       "[3,3,2,2]",
       "[1,3,3,2]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       {},
       0,
       "000000000"},
      // Sized for the device library kernels: 16384 outputs, 8 or 16
      // output features a group. Patterns as above: tap (0,0) reads
      // (i-1, j-1), (2,0) reads (i+1, j-1), (0,1) reads (i-1, j), (2,2)
      // reads (i+1, j+1).
      {"f32_2d_nhwc_inf_corner_tap_large",
       "f32",
       "[64,4,4,8]",
       "[3,3,8,16]",
       "[64,4,4,16]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       {0, 0, 3, 5},
       kInf,
       "NNNNNIIINIIINIII"},
      {"f32_2d_nchw_nan_corner_tap_large",
       "f32",
       "[64,8,4,4]",
       "[16,8,3,3]",
       "[64,16,4,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
       {5, 3, 0, 2},
       kNaN,
       "NNNNNNNNNNNNNNNN"},
      {"f16_2d_nchw_inf_corner_tap_large",
       "f16",
       "[64,8,4,4]",
       "[16,8,3,3]",
       "[64,16,4,4]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
       {2, 0, 2, 0},
       kInf,
       "NIIINIIINIIINNNN"},
      {"f32_2d_nhwc_grouped_inf_edge_tap_large",
       "f32",
       "[64,4,4,16]",
       "[3,3,8,16]",
       "[64,4,4,16]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2",
       {0, 1, 0, 9},
       kInf,
       "NNNNIIIIIIIIIIII"},
      {"f32_2d_nhwc_ohwi_inf_corner_tap_large",
       "f32",
       "[64,4,4,8]",
       "[16,3,3,8]",
       "[64,4,4,16]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f",
       {7, 2, 2, 0},
       kInf,
       "IIINIIINIIINNNNN"},
      {"f32_2d_nhwc_negative_zero_inputs_large",
       "f32",
       "[64,4,4,8]",
       "[3,3,8,16]",
       "[64,4,4,16]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       {},
       0,
       "0000000000000000"},
  };
}

// The pattern of a tap that meets an input only where the output's three
// coordinates, each below `extent`, are odd.
inline std::string PaddedTapOddCoordinatesMeetInputs(int extent) {
  std::string pattern;
  for (int z = 0; z < extent; ++z)
    for (int y = 0; y < extent; ++y)
      for (int x = 0; x < extent; ++x) pattern += z % 2 == 1 && y % 2 == 1 && x % 2 == 1 ? 'I' : 'N';
  return pattern;
}

// Three spatial dimensions, every case sized for the device library
// kernels as the "_large" ones above. Patterns run over (z, y, x)
// row-major.
inline std::vector<PaddedTapCase> PaddedTapCases3d() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::string all_padded(16, 'N');
  const std::string first_row_and_column =
      "NNNN"
      "NIII"
      "NIII"
      "NIII";
  const std::string last_row_or_column =
      "IIIN"
      "IIIN"
      "IIIN"
      "NNNN";
  const std::string inputs(16, 'I');
  return {
      // Tap (0,0,0) reads (z-1, y-1, x-1): padding where any of them is 0.
      {"f32_3d_ndhwc_inf_corner_tap_large",
       "f32",
       "[32,3,4,4,8]",
       "[3,3,3,8,16]",
       "[32,3,4,4,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f",
       {0, 0, 0, 3, 5},
       kInf,
       all_padded + first_row_and_column + first_row_and_column},
      {"f32_3d_ncdhw_nan_tap_large",
       "f32",
       "[32,8,3,4,4]",
       "[16,8,3,3,3]",
       "[32,16,3,4,4]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=bf012_oi012->bf012",
       {5, 3, 1, 1, 1},
       kNaN,
       std::string(48, 'N')},
      // Stride 2 over 5x5x5 padded 1: tap (2,2,2) reads (2z+1, 2y+1, 2x+1),
      // padding where any of them is 2.
      {"f16_3d_ndhwc_inf_corner_tap_strided_large",
       "f16",
       "[32,5,5,5,8]",
       "[3,3,3,8,16]",
       "[32,3,3,3,16]",
       "window={size=3x3x3 stride=2x2x2 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f",
       {2, 2, 2, 7, 9},
       kInf,
       "IIN"
       "IIN"
       "NNN"
       "IIN"
       "IIN"
       "NNN"
       "NNN"
       "NNN"
       "NNN"},
      // Two feature groups; tap (1,2,0) of output feature 9 (group 1) reads
      // (z, y+1, x-1): padding in the last row and the first column.
      {"f32_3d_grouped_inf_edge_tap_large",
       "f32",
       "[32,3,4,4,16]",
       "[3,3,3,8,16]",
       "[32,3,4,4,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f, feature_group_count=2",
       {1, 2, 0, 4, 9},
       kInf,
       "NIII"
       "NIII"
       "NIII"
       "NNNN"
       "NIII"
       "NIII"
       "NIII"
       "NNNN"
       "NIII"
       "NIII"
       "NIII"
       "NNNN"},
      // Window dilation 2 along depth, padded 2 each side: tap (2,0,0) reads
      // z+2, padding at z = 2 and 3.
      {"f32_3d_inf_tap_with_rhs_dilation_large",
       "f32",
       "[32,4,4,4,8]",
       "[3,1,1,8,16]",
       "[32,4,4,4,16]",
       "window={size=3x1x1 pad=2_2x0_0x0_0 rhs_dilate=2x1x1}, dim_labels=b012f_012io->b012f",
       {2, 0, 0, 1, 15},
       kInf,
       inputs + inputs + all_padded + all_padded},
      // Inputs dilated to x.x.x (holes at 1 and 3), padded 1: tap (0,0,0)
      // reads (z-1, y-1, x-1), an input only where all three are odd.
      {"f32_3d_inf_tap_meets_lhs_dilation_holes_large",
       "f32",
       "[32,3,3,3,8]",
       "[3,3,3,8,16]",
       "[32,5,5,5,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1 lhs_dilate=2x2x2}, dim_labels=b012f_012io->b012f",
       {0, 0, 0, 2, 6},
       kInf,
       PaddedTapOddCoordinatesMeetInputs(5)},
      {"f32_3d_negative_zero_inputs_large",
       "f32",
       "[32,3,4,4,8]",
       "[3,3,3,8,16]",
       "[32,3,4,4,16]",
       "window={size=3x3x3 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f",
       {},
       0,
       std::string(48, '0')},
  };
}

// The module of `c`: one convolution of parameters x and w.
inline std::string PaddedTapModule(const PaddedTapCase& c) {
  const std::string type = c.type;
  return "HloModule padded_taps\nENTRY main {\n  x = " + type + c.lhs + " parameter(0)\n  w = " + type +
         c.rhs + " parameter(1)\n  ROOT c = " + type + c.out + " convolution(x, w), " + c.attributes +
         "\n}\n";
}

inline std::unique_ptr<Module> ParsePaddedTapModule(const PaddedTapCase& c) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(PaddedTapModule(c));
  EXPECT_TRUE(module.ok()) << c.name << ": " << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// The arguments of `c`'s module: inputs 1, 1.25, 1.5, 1.75 and weights
// 0.25, 0.5, 0.75 repeating (exact in every float type), the poisoned
// weight in its place; for a case without one, -0 inputs and the weights
// alternating in sign.
inline std::vector<Literal> PaddedTapArguments(const PaddedTapCase& c, const Module& module) {
  const Shape& lhs = module.entry()->parameters()[0]->shape;
  const Shape& rhs = module.entry()->parameters()[1]->shape;
  const bool negative_zeros = c.poisoned_weight.empty();
  std::vector<double> inputs(static_cast<size_t>(lhs.element_count()));
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = negative_zeros ? -0.0 : 1.0 + 0.25 * (i % 4);
  std::vector<double> weights(static_cast<size_t>(rhs.element_count()));
  for (size_t i = 0; i < weights.size(); ++i) {
    weights[i] = 0.25 * (1 + i % 3);
    if (negative_zeros && i % 2 == 1) weights[i] = -weights[i];
  }
  if (!negative_zeros) {
    int64_t at = 0;
    for (int64_t d = 0; d < rhs.rank(); ++d)
      at = at * rhs.dimensions(d) + c.poisoned_weight[static_cast<size_t>(d)];
    weights[static_cast<size_t>(at)] = c.poison;
  }
  std::vector<Literal> arguments;
  for (auto [values, shape] : {std::pair{&inputs, &lhs}, std::pair{&weights, &rhs}}) {
    StatusOr<Literal> converted =
        Literal::FromVector(*values, shape->dimensions()).Convert(shape->element_type());
    EXPECT_TRUE(converted.ok()) << converted.status().ToString();
    arguments.push_back(converted.ok() ? std::move(converted).value() : Literal());
  }
  return arguments;
}

// What `c` expects of output element `i` (row-major) of `result`: 'N', 'I',
// '.' or '0' as PaddedTapCase::expected says.
inline char ExpectedPaddedTapClass(const PaddedTapCase& c, const Module& module, const Literal& result,
                                   int64_t i) {
  const Instruction& convolution = *module.entry()->root();
  const ConvolutionDimensionNumbers& dn = convolution.attrs.conv;
  const std::vector<int64_t>& dims = result.shape().dimensions();
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = i % dims[d];
    i /= dims[d];
  }
  if (c.poisoned_weight.empty()) return '0';
  const int64_t feature = c.poisoned_weight[static_cast<size_t>(dn.kernel_output_feature_dimension)];
  if (index[static_cast<size_t>(dn.output_feature_dimension)] != feature) return '.';
  int64_t position = 0;
  for (int64_t d : dn.output_spatial_dimensions) {
    position = position * dims[static_cast<size_t>(d)] + index[static_cast<size_t>(d)];
  }
  return c.expected[static_cast<size_t>(position)];
}

// Whether `value` is of class `expected` ('N', 'I', '.' or '0').
inline bool IsOfPaddedTapClass(double value, char expected) {
  switch (expected) {
    case 'N': return std::isnan(value);
    case 'I': return value == std::numeric_limits<double>::infinity();
    case '0': return value == 0 && !std::signbit(value);
    default: return std::isfinite(value);
  }
}

// Whether `got`, `c`'s result on some backend, holds `c`'s expectations and
// its finite values are the interpreter's (`want`) within a rounding of
// the sum's type (the products are positive: no cancellation). Pass `got`
// as `want` to check the expectations alone.
inline ::testing::AssertionResult MatchesPaddedTapCase(const PaddedTapCase& c, const Module& module,
                                                       const Literal& got, const Literal& want) {
  if (c.expected.empty()) return ::testing::AssertionFailure() << c.name << " has no expectation";
  if (got.shape() != want.shape()) {
    return ::testing::AssertionFailure()
           << c.name << ": shape " << got.shape().ToString() << ", not " << want.shape().ToString();
  }
  const std::string type = c.type;
  const double relative = type == "bf16" ? 1e-2 : type == "f16" ? 2e-3 : type == "f32" ? 1e-5 : 1e-12;
  int64_t wrong = 0;
  std::string first;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const char expected = ExpectedPaddedTapClass(c, module, got, i);
    const double value = got.GetAsDouble(i), reference = want.GetAsDouble(i);
    const bool right = IsOfPaddedTapClass(value, expected) &&
                       (expected != '.' || std::fabs(value - reference) <= relative * std::fabs(reference));
    if (!right && wrong++ == 0) {
      first = "element " + std::to_string(i) + " is " + std::to_string(value) + " (" +
              (std::signbit(value) ? "sign set" : "sign clear") + "), expected class '" + expected +
              "', the interpreter's value " + std::to_string(reference);
    }
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << c.name << ": " << wrong << " of " << got.element_count() << " outputs wrong; first " << first;
}

}  // namespace kiln::testing
