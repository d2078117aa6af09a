// The elemental convolution kernel (backends/llvm/convolution_emitter.h,
// which the cuda backend's kernels share) on the padded-tap cases
// (padded_convolution_cases.h), every type of them: the entry compiled as
// one kernel whatever the runtime would route it to, against the cases'
// expectations and the interpreter.
#include <memory>
#include <string>
#include <vector>

#include "tests/cpu/codegen_test_util.h"
#include "tests/unit/padded_convolution_cases.h"
#include "tests/unit/test_util.h"

namespace kiln::cpu::testing {
namespace {

using kiln::testing::PaddedTapCase;

class CodegenPaddedTapTest : public ::testing::TestWithParam<PaddedTapCase> {};

TEST_P(CodegenPaddedTapTest, ElementalKernelMultipliesThePaddingsZeros) {
  const PaddedTapCase& c = GetParam();
  std::unique_ptr<Module> module = kiln::testing::ParsePaddedTapModule(c);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = kiln::testing::PaddedTapArguments(c, *module);
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunInterpreter(*module, arguments));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, RunKernel(*module, arguments));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_TRUE(kiln::testing::MatchesPaddedTapCase(c, *module, got[0], want[0]));
}

std::string CodegenPaddedTapCaseName(const ::testing::TestParamInfo<PaddedTapCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, CodegenPaddedTapTest, ::testing::ValuesIn(kiln::testing::PaddedTapCases()),
                         CodegenPaddedTapCaseName);
INSTANTIATE_TEST_SUITE_P(Cases3d, CodegenPaddedTapTest,
                         ::testing::ValuesIn(kiln::testing::PaddedTapCases3d()), CodegenPaddedTapCaseName);

}  // namespace
}  // namespace kiln::cpu::testing
