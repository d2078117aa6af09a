// f32 convolutions that the oneDNN path takes, against the interpreter, and
// shapes it must leave to the Eigen path. Every comparison also runs in a
// build without oneDNN: there it checks the Eigen path on the same shapes, and
// the routing checks expect the Eigen path (OneDnnConvolution::Available()
// says which build this is).
#include <memory>
#include <string>

#include "backends/cpu/convolution_thunk.h"
#include "backends/cpu/onednn_convolution.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;
using testing::ParseOrDie;

// Whether the thunk lowering makes for the root convolution of `text` runs
// on oneDNN.
bool RootUsesOneDnn(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return false;
  std::optional<ConvolutionGeometry> geometry = PlanConvolution(*module->entry()->root());
  EXPECT_TRUE(geometry.has_value());
  if (!geometry.has_value()) return false;
  ConvolutionThunk thunk(0, 1, 2, 3, std::move(*geometry));
  return thunk.uses_onednn();
}

// Compares with the interpreter and checks which path ran.
void ExpectMatchesOnPath(const std::string& text, bool onednn_can_run_it) {
  ExpectMatchesInterpreter(text, 1e-4);
  EXPECT_EQ(RootUsesOneDnn(text), onednn_can_run_it && OneDnnConvolution::Available())
      << "oneDNN in this build: " << OneDnnConvolution::Available();
}

TEST(RuntimeOneDnnConvTest, ChannelsFirst) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,8,10,10] parameter(0)
  w = f32[16,8,3,3] parameter(1)
  ROOT c = f32[2,16,10,10] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, ChannelsLast) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,9,9,6] parameter(0)
  w = f32[3,3,6,10] parameter(1)
  ROOT c = f32[2,9,9,10] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                      true);
}

// Channel counts that are multiples of 16 run in oneDNN's 16-channel blocked
// layout on AVX-512 hosts: reorders in and out of it, from both layouts.
TEST(RuntimeOneDnnConvTest, SixteenChannelBlocksFromChannelsFirst) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,32,11,9] parameter(0)
  w = f32[48,32,3,3] parameter(1)
  ROOT c = f32[2,48,11,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, SixteenChannelBlocksFromChannelsLastWithStride) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[3,13,10,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  ROOT c = f32[3,6,4,32] convolution(x, w), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, MixedLayoutsOfInputKernelAndOutput) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[7,6,2,8] parameter(0)
  w = f32[5,3,3,8] parameter(1)
  ROOT c = f32[2,5,5,4] convolution(x, w), window={size=3x3}, dim_labels=01bf_o01i->bf01
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, StrideTwo) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,16,15,15] parameter(0)
  w = f32[32,16,3,3] parameter(1)
  ROOT c = f32[2,32,8,8] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, AsymmetricPadding) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,9,8,4] parameter(0)
  w = f32[3,2,4,8] parameter(1)
  ROOT c = f32[1,10,10,8] convolution(x, w), window={size=3x2 pad=0_3x2_1}, dim_labels=b01f_01io->b01f
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, RhsDilationTwo) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,4,12,12] parameter(0)
  w = f32[8,4,3,3] parameter(1)
  ROOT c = f32[2,8,12,12] convolution(x, w), window={size=3x3 pad=2_2x2_2 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, DepthwiseFeatureGroups) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,10,10,16] parameter(0)
  w = f32[3,3,1,16] parameter(1)
  ROOT c = f32[2,10,10,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=16
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, FeatureGroupsWithSeveralFeaturesEach) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,12,7,7] parameter(0)
  w = f32[18,4,3,3] parameter(1)
  ROOT c = f32[1,18,5,5] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=3
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, BatchOne) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,32,14,14] parameter(0)
  w = f32[32,32,3,3] parameter(1)
  ROOT c = f32[1,32,14,14] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, OneByOneKernel) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[3,7,7,24] parameter(0)
  w = f32[1,1,24,40] parameter(1)
  ROOT c = f32[3,7,7,40] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, OneAndThreeSpatialDimensions) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[2,20,6] parameter(0)
  w = f32[5,6,7] parameter(1)
  ROOT c = f32[2,18,7] convolution(x, w), window={size=5 pad=1_1}, dim_labels=b0f_0io->b0f
})",
                      true);
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,3,6,6,6] parameter(0)
  w = f32[4,3,2,2,2] parameter(1)
  ROOT c = f32[1,4,5,5,5] convolution(x, w), window={size=2x2x2}, dim_labels=bf012_oi012->bf012
})",
                      true);
}

TEST(RuntimeOneDnnConvTest, LhsDilationFallsBackToEigen) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,4,5,5] parameter(0)
  w = f32[3,4,3,3] parameter(1)
  ROOT c = f32[1,3,11,11] convolution(x, w), window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01
})",
                      false);
}

TEST(RuntimeOneDnnConvTest, NegativePaddingAndReversalFallBackToEigen) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,2,8,8] parameter(0)
  w = f32[3,2,3,3] parameter(1)
  ROOT c = f32[1,3,4,6] convolution(x, w), window={size=3x3 pad=-1_-1x0_0}, dim_labels=bf01_oi01->bf01
})",
                      false);
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f32[1,2,8,8] parameter(0)
  w = f32[3,2,3,3] parameter(1)
  ROOT c = f32[1,3,6,6] convolution(x, w), window={size=3x3 rhs_reversal=1x1}, dim_labels=bf01_oi01->bf01
})",
                      false);
}

TEST(RuntimeOneDnnConvTest, DoubleStaysOnEigen) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  x = f64[1,3,6,6] parameter(0)
  w = f64[4,3,3,3] parameter(1)
  ROOT c = f64[1,4,4,4] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01
})",
                      false);
}

// oneDNN's reference loops are slower than the Eigen path, so the thunk never
// keeps a oneDNN convolution that would run on them.
TEST(RuntimeOneDnnConvTest, ChosenImplementationIsNotOneDnnsReferenceLoops) {
  std::unique_ptr<Module> module = ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[2,8,10,10] parameter(0)
  w = f32[16,8,3,3] parameter(1)
  ROOT c = f32[2,16,10,10] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module, nullptr);
  std::optional<ConvolutionGeometry> geometry = PlanConvolution(*module->entry()->root());
  ASSERT_TRUE(geometry.has_value());
  std::unique_ptr<OneDnnConvolution> convolution = OneDnnConvolution::Create(*geometry, 2);
  if (!OneDnnConvolution::Available()) {
    EXPECT_EQ(convolution, nullptr) << "a build without oneDNN made a oneDNN convolution";
    return;
  }
  ASSERT_NE(convolution, nullptr);
  EXPECT_FALSE(convolution->implementation().empty());
  EXPECT_NE(convolution->implementation().rfind("ref", 0), 0u) << convolution->implementation();
}

// A backend whose thread count differs from the default count the primitive
// was made for gets a primitive of its own and the same results. The
// convolution is big enough (38M multiply-adds) to be split among threads.
TEST(RuntimeOneDnnConvTest, ExplicitThreadCounts) {
  std::unique_ptr<Module> module = ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[4,32,32,32] parameter(0)
  w = f32[32,32,3,3] parameter(1)
  ROOT c = f32[4,32,32,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 3}, 1e-4);
}

// The pieces a pool of `threads` cuts the root convolution of `text` into
// (0 without oneDNN).
size_t RootPieces(const std::string& text, int threads) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return 0;
  std::optional<ConvolutionGeometry> geometry = PlanConvolution(*module->entry()->root());
  if (!geometry.has_value()) return 0;
  std::unique_ptr<OneDnnConvolution> convolution = OneDnnConvolution::Create(*geometry, threads);
  return convolution == nullptr ? 0 : convolution->pieces(threads);
}

// Large convolutions run in pieces on the intra-op pool: images of the batch
// (here 8 images, 2 threads: 4 pieces of 2 images), or with fewer images
// than threads bands of output rows, whose first and last keep the padding
// and whose inner ones read the rows around them instead (strides and
// dilation included). One thread runs the whole convolution at once.
TEST(RuntimeOneDnnConvTest, LargeConvolutionsRunInPieces) {
  const std::string by_images = R"(HloModule m
ENTRY e {
  x = f32[8,32,24,24] parameter(0)
  w = f32[32,32,3,3] parameter(1)
  ROOT c = f32[8,32,24,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";
  const std::string by_rows = R"(HloModule m
ENTRY e {
  x = f32[1,32,61,40] parameter(0)
  w = f32[64,32,3,3] parameter(1)
  ROOT c = f32[1,64,30,20] convolution(x, w), window={size=3x3 stride=2x2 pad=2_1x1_1 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01
})";
  const std::string channels_last_rows = R"(HloModule m
ENTRY e {
  x = f32[1,50,50,32] parameter(0)
  w = f32[3,3,32,32] parameter(1)
  ROOT c = f32[1,50,50,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";
  for (const std::string& text : {by_images, by_rows, channels_last_rows}) {
    std::unique_ptr<Module> module = ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 3, 4}, 1e-4);
    if (!OneDnnConvolution::Available()) continue;
    EXPECT_EQ(RootPieces(text, 1), 1u);
    EXPECT_GT(RootPieces(text, 2), 1u) << text;
    EXPECT_GT(RootPieces(text, 4), RootPieces(text, 2)) << text;
  }
  // Pieces of equal size: with 5 images (pieces of 2, 2 and 1) oneDNN may
  // choose another weights layout for the one-image piece on some machines
  // (it does on AVX-512), and then the convolution rightly stays whole.
  if (OneDnnConvolution::Available()) {
    EXPECT_EQ(RootPieces(by_images, 2), 4u);
  }
}

// Padding so wide that a band of output rows would read no input row: the
// convolution is not cut into bands and runs whole, with the same results.
TEST(RuntimeOneDnnConvTest, BandsOfPaddingOnlyRunWhole) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,64,4,16] parameter(0)
  w = f32[64,64,3,3] parameter(1)
  ROOT c = f32[1,64,42,16] convolution(x, w), window={size=3x3 pad=20_20x1_1}, dim_labels=bf01_oi01->bf01
})";
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 1e-4);
  if (OneDnnConvolution::Available()) {
    EXPECT_EQ(RootPieces(text, 2), 1u);
    EXPECT_EQ(RootPieces(text, 4), 1u);
  }
}

// The oneDNN implementation the root convolution of `text` gets, or "" when
// oneDNN does not run it.
std::string RootImplementation(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return "";
  std::optional<ConvolutionGeometry> geometry = PlanConvolution(*module->entry()->root());
  if (!geometry.has_value()) return "";
  std::unique_ptr<OneDnnConvolution> convolution = OneDnnConvolution::Create(*geometry, 2);
  return convolution == nullptr ? "" : convolution->implementation();
}

// A 3x3 64->64 convolution big enough (58M multiply-adds) for Winograd.
std::string WinogradSizedConvolution(const std::string& precision) {
  return "HloModule m\nENTRY e {\n  x = f32[2,64,28,28] parameter(0)\n  w = f32[64,64,3,3] parameter(1)\n"
         "  ROOT c = f32[2,64,28,28] convolution(x, w), window={size=3x3 pad=1_1x1_1}, "
         "dim_labels=bf01_oi01->bf01" +
         precision + "\n}\n";
}

bool HostHasAvx512() { return __builtin_cpu_supports("avx512f") != 0; }

// With the default precision, oneDNN's Winograd kernels (AVX-512) run it;
// the sums of 576 products stay within 1e-3 of the interpreter's (the
// inputs are in [-1, 1]: Winograd's error measured 5e-7 of the products'
// magnitudes).
TEST(RuntimeOneDnnConvTest, DefaultPrecisionMayUseWinograd) {
  for (const std::string precision : {"", ", operand_precision={default,default}"}) {
    const std::string text = WinogradSizedConvolution(precision);
    ExpectMatchesInterpreter(text, 1e-3);
    const std::string implementation = RootImplementation(text);
    if (OneDnnConvolution::Available() && HostHasAvx512()) {
      EXPECT_NE(implementation.find("wino"), std::string::npos) << implementation;
    } else {
      EXPECT_EQ(implementation.find("wino"), std::string::npos) << implementation;
    }
  }
}

// HIGH or HIGHEST precision on either operand keeps the direct sum.
TEST(RuntimeOneDnnConvTest, HigherPrecisionKeepsTheDirectSum) {
  for (const std::string precision :
       {", operand_precision={highest,highest}", ", operand_precision={default,high}"}) {
    const std::string text = WinogradSizedConvolution(precision);
    ExpectMatchesInterpreter(text, 1e-4);
    const std::string implementation = RootImplementation(text);
    EXPECT_EQ(implementation.find("wino"), std::string::npos) << precision << ": " << implementation;
    EXPECT_EQ(implementation.empty(), !OneDnnConvolution::Available()) << implementation;
  }
}

}  // namespace
}  // namespace kiln::cpu
