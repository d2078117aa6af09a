// Contraction upcast: f16/bf16 dots and convolutions run in f32 between
// converts, with the same results (both accumulate in f32 and round once).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/passes/contraction_upcast.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

Literal Ramp(ElementType type, std::vector<int64_t> dims, double scale) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(static_cast<float>(scale * ((i * 5) % 9) - 1.5));
  Literal f32 = Literal::FromVector<float>(values, std::move(dims));
  auto converted = f32.Convert(type);
  EXPECT_TRUE(converted.ok());
  return converted.ok() ? std::move(converted).value() : std::move(f32);
}

// Runs the pass (with the backend rule `keeps_operands`) on a copy; returns
// it and whether it changed.
std::unique_ptr<Module> Upcast(const Module& module, const std::vector<Literal>& arguments, bool* changed,
                               ContractionUpcast::KeepsOperands keeps_operands = {}) {
  std::unique_ptr<Module> upcast = module.Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<ContractionUpcast>(std::move(keeps_operands)));
  auto result = pipeline.Run(*upcast);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  *changed = result.ok() && *result;
  testing::ExpectSameResults(module, *upcast, arguments);
  return upcast;
}

const Instruction* Find(const Computation& computation, Opcode opcode) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode == opcode) return instruction.get();
  }
  return nullptr;
}

TEST(PassesContractionUpcastTest, HalfDotRunsInF32) {
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  a = f16[3,5] parameter(0)
  b = f16[5,4] parameter(1)
  ROOT d = f16[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto upcast = Upcast(*module, {Ramp(ElementType::kF16, {3, 5}, 0.5), Ramp(ElementType::kF16, {5, 4}, 0.25)},
                       &changed);
  EXPECT_TRUE(changed);
  const Computation& entry = *upcast->entry();
  EXPECT_EQ(entry.root()->opcode, Opcode::kConvert);
  EXPECT_EQ(entry.root()->shape.element_type(), ElementType::kF16);
  const Instruction* dot = Find(entry, Opcode::kDot);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->shape.element_type(), ElementType::kF32);
  EXPECT_EQ(dot->operand(0)->shape.element_type(), ElementType::kF32);
}

TEST(PassesContractionUpcastTest, BfloatConvolutionRunsInF32) {
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = bf16[1,2,5,5] parameter(0)
  w = bf16[3,2,3,3] parameter(1)
  ROOT c = bf16[1,3,5,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto upcast = Upcast(
      *module, {Ramp(ElementType::kBF16, {1, 2, 5, 5}, 0.5), Ramp(ElementType::kBF16, {3, 2, 3, 3}, 0.25)},
      &changed);
  EXPECT_TRUE(changed);
  const Instruction* convolution = Find(*upcast->entry(), Opcode::kConvolution);
  ASSERT_NE(convolution, nullptr);
  EXPECT_EQ(convolution->shape.element_type(), ElementType::kF32);
}

TEST(PassesContractionUpcastTest, LowPrecisionOperandsWithAnF32ResultRunInF32) {
  // lax.dot(..., preferred_element_type=f32) on bf16 operands: the operands
  // are widened (exactly) and the f32 kernels compute the same sums.
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  a = bf16[3,5] parameter(0)
  b = bf16[5,4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto upcast = Upcast(
      *module, {Ramp(ElementType::kBF16, {3, 5}, 0.5), Ramp(ElementType::kBF16, {5, 4}, 0.25)}, &changed);
  EXPECT_TRUE(changed);
  const Instruction* root = upcast->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kDot);
  EXPECT_EQ(root->shape.element_type(), ElementType::kF32);
  EXPECT_EQ(root->operand(0)->opcode, Opcode::kConvert);
  EXPECT_EQ(root->operand(0)->shape.element_type(), ElementType::kF32);
  EXPECT_EQ(root->operand(1)->shape.element_type(), ElementType::kF32);
}

TEST(PassesContractionUpcastTest, ConvertToF32ReadsTheUnroundedProduct) {
  // dot(bf16, bf16).astype(f32), as JAX lowers it: XLA's CPU backend gives the
  // f32 product without rounding it to bf16 first, and so does Kiln. A use
  // in bf16 still reads the rounded value.
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  a = bf16[3,5] parameter(0)
  b = bf16[5,4] parameter(1)
  d = bf16[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  wide = f32[3,4] convert(d)
  twice = bf16[3,4] add(d, d)
  ROOT t = (f32[3,4], bf16[3,4]) tuple(wide, twice)
})");
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> upcast = module->Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<ContractionUpcast>());
  KILN_ASSERT_OK(pipeline.Run(*upcast).status());
  const Instruction* root = upcast->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kTuple);
  EXPECT_EQ(root->operand(0)->opcode, Opcode::kDot) << root->operand(0)->ToString();
  EXPECT_EQ(root->operand(0)->shape.element_type(), ElementType::kF32);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode, Opcode::kConvert);

  // Values: the f32 leaf equals the product of the bf16 inputs in f32 (not
  // rounded to bf16, which this input would change), the bf16 leaf as before.
  const Literal a = Ramp(ElementType::kBF16, {3, 5}, 0.37);
  const Literal b = Ramp(ElementType::kBF16, {5, 4}, 0.29);
  KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::Run(*upcast, std::vector<Literal>{a, b}));
  KILN_ASSERT_OK_AND_ASSIGN(Literal a32, a.Convert(ElementType::kF32));
  KILN_ASSERT_OK_AND_ASSIGN(Literal b32, b.Convert(ElementType::kF32));
  bool some_rounding_avoided = false;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      float exact = 0;
      for (int64_t k = 0; k < 5; ++k) exact += a32.data<float>()[i * 5 + k] * b32.data<float>()[k * 4 + j];
      const float leaf = got.tuple_elements()[0].data<float>()[i * 4 + j];
      EXPECT_NEAR(leaf, exact, 1e-5f) << i << "," << j;
      KILN_ASSERT_OK_AND_ASSIGN(Literal rounded,
                                Literal::FromVector<float>({exact}).Convert(ElementType::kBF16));
      if (rounded.GetAsDouble(0) != static_cast<double>(exact)) some_rounding_avoided = true;
    }
  }
  EXPECT_TRUE(some_rounding_avoided) << "the inputs must make bf16 rounding visible";
}

// A backend that runs bf16 dots as they are (the CPU on AVX512-BF16) is
// asked about each in its f32-result form: an f32-result dot it keeps stays
// as it is; a bf16-result one becomes that form and a convert to bf16, a
// convert of it to f32 reading the unrounded product; a convolution it does
// not keep still widens.
TEST(PassesContractionUpcastTest, KeptContractionsKeepTheirOperands) {
  std::vector<std::string> asked;
  auto keeps_bf16_dots = [&asked](const Instruction& contraction) {
    asked.push_back(contraction.shape.ToString() + " " + contraction.operand(0)->shape.ToString());
    return contraction.opcode == Opcode::kDot;
  };
  auto f32_result = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  a = bf16[3,5] parameter(0)
  b = bf16[5,4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(f32_result, nullptr);
  const std::vector<Literal> dot_arguments = {Ramp(ElementType::kBF16, {3, 5}, 0.37),
                                              Ramp(ElementType::kBF16, {5, 4}, 0.29)};
  bool changed = true;
  auto kept = Upcast(*f32_result, dot_arguments, &changed, keeps_bf16_dots);
  EXPECT_FALSE(changed);
  EXPECT_EQ(kept->entry()->root()->operand(0)->opcode, Opcode::kParameter);
  EXPECT_EQ(asked, std::vector<std::string>{"f32[3,4] bf16[3,5]"});

  auto bf16_result = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  a = bf16[3,5] parameter(0)
  b = bf16[5,4] parameter(1)
  d = bf16[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  wide = f32[3,4] convert(d)
  twice = bf16[3,4] add(d, d)
  ROOT t = (f32[3,4], bf16[3,4]) tuple(wide, twice)
})");
  ASSERT_NE(bf16_result, nullptr);
  asked.clear();
  // (Not compared with the module's values: the f32 leaf is not rounded to
  // bf16 any more, as ConvertToF32ReadsTheUnroundedProduct checks.)
  std::unique_ptr<Module> rewritten = bf16_result->Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<ContractionUpcast>(keeps_bf16_dots));
  KILN_ASSERT_OK_AND_ASSIGN(changed, pipeline.Run(*rewritten));
  EXPECT_TRUE(changed);
  EXPECT_EQ(asked, std::vector<std::string>{"f32[3,4] bf16[3,5]"});
  const Instruction* root = rewritten->entry()->root();
  const Instruction* dot = root->operand(0);
  ASSERT_EQ(dot->opcode, Opcode::kDot) << dot->ToString();
  EXPECT_EQ(dot->shape.element_type(), ElementType::kF32);
  EXPECT_EQ(dot->operand(0)->opcode, Opcode::kParameter);
  EXPECT_EQ(root->operand(1)->operand(0)->opcode, Opcode::kConvert);
  EXPECT_EQ(root->operand(1)->operand(0)->operand(0), dot);

  auto convolution = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = bf16[1,2,5,5] parameter(0)
  w = bf16[3,2,3,3] parameter(1)
  ROOT c = f32[1,3,5,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(convolution, nullptr);
  auto widened =
      Upcast(*convolution,
             {Ramp(ElementType::kBF16, {1, 2, 5, 5}, 0.5), Ramp(ElementType::kBF16, {3, 2, 3, 3}, 0.25)},
             &changed, keeps_bf16_dots);
  EXPECT_TRUE(changed);
  EXPECT_EQ(widened->entry()->root()->operand(0)->opcode, Opcode::kConvert);
}

TEST(PassesContractionUpcastTest, OtherTypesStay) {
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  a = s32[3,5] parameter(0)
  b = s32[5,4] parameter(1)
  ROOT d = s32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(module, nullptr);
  bool changed = true;
  Upcast(*module, {Ramp(ElementType::kS32, {3, 5}, 2), Ramp(ElementType::kS32, {5, 4}, 3)}, &changed);
  EXPECT_FALSE(changed);
}

// s8 values from -128 to 127, both extremes included.
Literal Int8Ramp(std::vector<int64_t> dims, int step) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int8_t> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(static_cast<int8_t>((i * step) % 256 - 128));
  values[0] = 127;
  return Literal::FromVector<int8_t>(values, std::move(dims));
}

TEST(PassesContractionUpcastTest, ShallowInt8ConvolutionRunsInF32Exactly) {
  // 4 input features x 3x3 window = 36 products per output.
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = s8[2,4,6,6] parameter(0)
  w = s8[3,4,3,3] parameter(1)
  ROOT c = s32[2,3,6,6] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto upcast = Upcast(*module, {Int8Ramp({2, 4, 6, 6}, 37), Int8Ramp({3, 4, 3, 3}, 101)}, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(upcast->entry()->root()->opcode, Opcode::kConvert);
  EXPECT_EQ(upcast->entry()->root()->shape.element_type(), ElementType::kS32);
  const Instruction* convolution = Find(*upcast->entry(), Opcode::kConvolution);
  ASSERT_NE(convolution, nullptr);
  EXPECT_EQ(convolution->shape.element_type(), ElementType::kF32);
}

TEST(PassesContractionUpcastTest, DeepInt8ConvolutionRunsInExactPieces) {
  // 40 input features x 5x6 window = 1200 products per output: past 2^24 an
  // f32 sum could round, so it runs as two convolutions of 20 features (600
  // products) each in f32, added in s32.
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = s8[1,40,6,6] parameter(0)
  w = s8[2,40,5,6] parameter(1)
  ROOT c = s32[1,2,2,1] convolution(x, w), window={size=5x6}, dim_labels=bf01_oi01->bf01
})");
  ASSERT_NE(module, nullptr);
  bool changed = false;
  auto upcast = Upcast(*module, {Int8Ramp({1, 40, 6, 6}, 37), Int8Ramp({2, 40, 5, 6}, 101)}, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(upcast->entry()->root()->opcode, Opcode::kAdd);
  int convolutions = 0;
  for (const auto& instruction : upcast->entry()->instructions()) {
    if (instruction->opcode != Opcode::kConvolution) continue;
    ++convolutions;
    EXPECT_EQ(instruction->shape.element_type(), ElementType::kF32);
    EXPECT_EQ(instruction->operand(1)->shape.dimensions(1), 20);
  }
  EXPECT_EQ(convolutions, 2);
}

TEST(PassesContractionUpcastTest, UncuttableInt8ConvolutionsAndInt8DotsStay) {
  // A 33x33 window alone is 1089 products; a grouped convolution (80
  // features x 4x4 = 1280 products) is not cut along its features; an int8
  // dot is left for the backend's int8 kernels.
  auto module = testing::ParseHloOrFail(R"(HloModule m
ENTRY e {
  x = s8[1,1,40,40] parameter(0)
  w = s8[2,1,33,33] parameter(1)
  c = s32[1,2,8,8] convolution(x, w), window={size=33x33}, dim_labels=bf01_oi01->bf01
  gx = s8[1,160,6,6] parameter(2)
  gw = s8[80,4,4,4] parameter(3)
  g = s32[1,4,3,3] convolution(gx, gw), window={size=4x4}, dim_labels=bf01_io01->bf01, feature_group_count=2
  a = s8[3,5] parameter(4)
  b = s8[5,4] parameter(5)
  d = s32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[1,2,8,8], s32[1,4,3,3], s32[3,4]) tuple(c, g, d)
})");
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> copy = module->Clone();
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<ContractionUpcast>());
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pipeline.Run(*copy));
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace kiln
