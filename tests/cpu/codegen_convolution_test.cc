// Convolutions the oneDNN/Eigen paths do not take, emitted elementally: f16,
// bf16 and integers, with padding, strides, both dilations, window reversal,
// feature and batch groups, one to three spatial dimensions and any
// dimension order. Results must equal the interpreter's.
#include <string>
#include <vector>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

void Check(const std::string& body, const std::string& what, ElementType type, std::vector<int64_t> lhs,
           std::vector<int64_t> rhs, double tolerance) {
  const double range = IsIntegral(type) ? 5 : 2;
  CompareTwoInputEntry(body, what, Shape(type, std::move(lhs)), Shape(type, std::move(rhs)), 61, tolerance,
                       -range, range);
}

TEST(CodegenConvolution, HalfPrecisionPaddedThreeByThree) {
  Check(R"(  x = f16[2,4,7,6] parameter(0)
  w = f16[5,4,3,3] parameter(1)
  ROOT c = f16[2,5,7,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
)",
        "f16 3x3", ElementType::kF16, {2, 4, 7, 6}, {5, 4, 3, 3}, 2e-2);
}

TEST(CodegenConvolution, BfloatChannelsLastWithStridesAndDilations) {
  Check(R"(  x = bf16[1,9,8,3] parameter(0)
  w = bf16[2,3,3,4] parameter(1)
  ROOT c = bf16[1,4,7,4] convolution(x, w), window={size=2x3 stride=2x2 rhs_dilate=2x1 lhs_dilate=1x2 pad=0_1x0_0}, dim_labels=b01f_01io->b01f
)",
        "bf16 strided and dilated", ElementType::kBF16, {1, 9, 8, 3}, {2, 3, 3, 4}, 1e-1);
}

TEST(CodegenConvolution, IntegerFeatureGroupsAndReversedWindow) {
  Check(R"(  x = s32[2,6,5] parameter(0)
  w = s32[3,3,4] parameter(1)
  ROOT c = s32[2,4,5] convolution(x, w), window={size=3 pad=1_1 rhs_reversal=1}, dim_labels=bf0_0io->bf0, feature_group_count=2
)",
        "s32 grouped 1-D", ElementType::kS32, {2, 6, 5}, {3, 3, 4}, 0);
}

TEST(CodegenConvolution, BatchGroupsInThreeDimensions) {
  Check(R"(  x = f16[4,2,3,3,3] parameter(0)
  w = f16[2,2,2,2,4] parameter(1)
  ROOT c = f16[2,4,2,2,2] convolution(x, w), window={size=2x2x2}, dim_labels=bf012_i012o->bf012, batch_group_count=2
)",
        "f16 batch groups 3-D", ElementType::kF16, {4, 2, 3, 3, 3}, {2, 2, 2, 2, 4}, 2e-2);
}

}  // namespace
}  // namespace kiln::cpu::testing
