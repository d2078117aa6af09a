// The interpreter, every backend's oracle, against the hand-derived
// expectations of the padded-tap cases (padded_convolution_cases.h): a
// non-finite weight at a tap in the padding or a base-dilation hole makes
// the output NaN, and -0 inputs give +0 sums.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/padded_convolution_cases.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::PaddedTapCase;

class InterpreterPaddedTapTest : public ::testing::TestWithParam<PaddedTapCase> {};

TEST_P(InterpreterPaddedTapTest, NonFiniteWeightsMeetThePaddingsZeros) {
  const PaddedTapCase& c = GetParam();
  std::unique_ptr<Module> module = testing::ParsePaddedTapModule(c);
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(
      std::vector<Literal> result,
      testing::ExecuteLeaves(*interpreter, *module, testing::PaddedTapArguments(c, *module)));
  ASSERT_EQ(result.size(), 1u);
  EXPECT_TRUE(testing::MatchesPaddedTapCase(c, *module, result[0], result[0]));
}

// An integer convolution's padding adds nothing: the sums are the inputs
// that the window meets.
TEST(InterpreterIntegerPaddingTest, PaddingAndHolesAddNothing) {
  std::unique_ptr<Module> module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = s32[1,3,1] parameter(0)
  w = s32[3,1,1] parameter(1)
  ROOT c = s32[1,5,1] convolution(x, w), window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f
})");
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = {Literal::FromVector<int32_t>({1, 2, 3}, {1, 3, 1}),
                                          Literal::FromVector<int32_t>({100, 10, 1}, {3, 1, 1})};
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Execute(*interpreter, *module, arguments));
  // Dilated input 1 . 2 . 3, padded: position j reads (j-1, j, j+1).
  EXPECT_EQ(result, Literal::FromVector<int32_t>({10 + 0, 100 + 0 + 2, 20, 200 + 0 + 3, 30}, {1, 5, 1}));
}

std::string PaddedTapCaseName(const ::testing::TestParamInfo<PaddedTapCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Cases, InterpreterPaddedTapTest, ::testing::ValuesIn(testing::PaddedTapCases()),
                         PaddedTapCaseName);
INSTANTIATE_TEST_SUITE_P(Cases3d, InterpreterPaddedTapTest, ::testing::ValuesIn(testing::PaddedTapCases3d()),
                         PaddedTapCaseName);

}  // namespace
}  // namespace kiln
