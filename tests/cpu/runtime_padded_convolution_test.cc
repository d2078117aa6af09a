// The cpu backend on the padded-tap cases (padded_convolution_cases.h),
// each where the backend's lowering puts it: a convolution thunk for every
// case (f16 and bf16 as f32 convolutions of converted operands), running on
// oneDNN, which skips the padding and so first looks for a non-finite
// weight, or on the Eigen path (f64, lhs dilation, geometries oneDNN
// leaves), whose im2col patches hold the padding's zeros. Results against
// the cases' expectations and the interpreter, on 1 and 2 threads (oneDNN
// runs 2-thread convolutions in pieces). The elemental kernels are
// codegen_padded_convolution_test.cc's.
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/convolution_thunk.h"
#include "backends/cpu/onednn_convolution.h"
#include "tests/cpu/runtime_test_util.h"
#include "tests/unit/padded_convolution_cases.h"

namespace kiln::cpu {
namespace {

using kiln::testing::PaddedTapCase;
using testing::ParseOrDie;

enum class ConvolutionRoute { kOneDnnCheckingWeights, kOneDnnUnchecked, kEigen, kNoThunk };

// Where the convolution thunk runs the root convolution of `c`: the
// geometry of its f32 form for f16 and bf16, which the backend upcasts.
ConvolutionRoute RouteOf(const PaddedTapCase& c) {
  PaddedTapCase wide = c;
  if (std::string(c.type) == "f16" || std::string(c.type) == "bf16") wide.type = "f32";
  std::unique_ptr<Module> module = ParseOrDie(kiln::testing::PaddedTapModule(wide));
  if (module == nullptr) return ConvolutionRoute::kNoThunk;
  std::optional<ConvolutionGeometry> geometry = PlanConvolution(*module->entry()->root());
  if (!geometry.has_value()) return ConvolutionRoute::kNoThunk;
  ConvolutionThunk thunk(0, 1, 2, 3, std::move(*geometry));
  if (!thunk.uses_onednn()) return ConvolutionRoute::kEigen;
  return thunk.checks_weights_for_onednn() ? ConvolutionRoute::kOneDnnCheckingWeights
                                           : ConvolutionRoute::kOneDnnUnchecked;
}

// Runs `c` on the interpreter and on cpu backends of 1 and 2 threads.
void ExpectCpuMatchesPaddedTapCase(const PaddedTapCase& c) {
  std::unique_ptr<Module> module = kiln::testing::ParsePaddedTapModule(c);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = kiln::testing::PaddedTapArguments(c, *module);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 1u);
  for (int threads : {1, 2}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::RunWithThreads(*module, arguments, threads));
    EXPECT_TRUE(kiln::testing::MatchesPaddedTapCase(c, *module, got, want[0])) << threads << " threads";
  }
}

class RuntimePaddedTapTest : public ::testing::TestWithParam<PaddedTapCase> {};

TEST_P(RuntimePaddedTapTest, EveryRouteMultipliesThePaddingsZeros) {
  const PaddedTapCase& c = GetParam();
  EXPECT_EQ(testing::CountThunks(kiln::testing::PaddedTapModule(c), "convolution"), 1);
  const ConvolutionRoute route = RouteOf(c);
  EXPECT_NE(route, ConvolutionRoute::kNoThunk);
  // Every case has padding: oneDNN never runs one unchecked.
  EXPECT_NE(route, ConvolutionRoute::kOneDnnUnchecked);
  const std::string attributes = c.attributes;
  if (std::string(c.type) == "f64" || attributes.find("lhs_dilate") != std::string::npos) {
    EXPECT_EQ(route, ConvolutionRoute::kEigen) << "oneDNN takes neither f64 nor lhs dilation";
  }
  ExpectCpuMatchesPaddedTapCase(c);
}

std::string RuntimePaddedTapCaseName(const ::testing::TestParamInfo<PaddedTapCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, RuntimePaddedTapTest, ::testing::ValuesIn(kiln::testing::PaddedTapCases()),
                         RuntimePaddedTapCaseName);
INSTANTIATE_TEST_SUITE_P(Cases3d, RuntimePaddedTapTest,
                         ::testing::ValuesIn(kiln::testing::PaddedTapCases3d()), RuntimePaddedTapCaseName);

// The table exercises both of the thunk's paths: oneDNN (with the weight
// check) where this build has it, and Eigen.
TEST(RuntimePaddedTapRoutesTest, TheCasesTakeOneDnnAndEigen) {
  int onednn = 0, eigen = 0;
  for (const PaddedTapCase& c : kiln::testing::PaddedTapCases()) {
    const ConvolutionRoute route = RouteOf(c);
    onednn += route == ConvolutionRoute::kOneDnnCheckingWeights ? 1 : 0;
    eigen += route == ConvolutionRoute::kEigen ? 1 : 0;
  }
  EXPECT_GE(eigen, 3);
  if (OneDnnConvolution::Available()) {
    EXPECT_GE(onednn, 8);
  } else {
    EXPECT_EQ(onednn, 0);
  }
}

// An unpadded 3x3 convolution large enough for Winograd's algorithm, whose
// weight transform mixes a tile's weights: oneDNN takes it after the
// weight check where it may use Winograd (AVX-512), and an infinite weight
// gives +inf in every output of its feature, as the direct sum does.
TEST(RuntimePaddedTapRoutesTest, WinogradCandidatesCheckTheirWeights) {
  const PaddedTapCase c{"f32_winograd_sized_inf_tap",
                        "f32",
                        "[2,64,30,30]",
                        "[64,64,3,3]",
                        "[2,64,28,28]",
                        "window={size=3x3}, dim_labels=bf01_oi01->bf01",
                        {10, 20, 1, 2},
                        std::numeric_limits<double>::infinity(),
                        std::string(28 * 28, 'I')};
  const ConvolutionRoute route = RouteOf(c);
  if (OneDnnConvolution::Available() && __builtin_cpu_supports("avx512f") != 0) {
    EXPECT_EQ(route, ConvolutionRoute::kOneDnnCheckingWeights);
  } else if (OneDnnConvolution::Available()) {
    EXPECT_EQ(route, ConvolutionRoute::kOneDnnUnchecked) << "no Winograd without AVX-512, no padding";
  }
  ExpectCpuMatchesPaddedTapCase(c);
}

}  // namespace
}  // namespace kiln::cpu
