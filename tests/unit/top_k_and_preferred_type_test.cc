// topk (as JAX's lax.top_k lowers it) and contractions whose declared result
// type differs from the operands' (preferred_element_type), from HLO text and
// through the builder.
#include <cmath>
#include <limits>

#include "core/hlo_parser.h"
#include "core/shape_inference.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::BuildAndRun;

TEST(TopKTest, LargestKeepsIndexOrderForTies) {
  Builder builder("top_k");
  Op x = builder.ConstantLiteral(Literal::FromVector<float>({3, 1, 4, 1, 5, 9, 2, 6, 5, 5}, {2, 5}));
  builder.TopK(x, 3);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<float>({5, 4, 3, 9, 6, 5}, {2, 3}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<int32_t>({4, 2, 0, 0, 2, 3}, {2, 3}));
}

TEST(TopKTest, SmallestAndNaNInTotalOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Builder builder("top_k");
  Op x = builder.ConstantR1<float>({0.5f, nan, -1.0f, -0.0f});
  const Op outputs[] = {builder.TopK(x, 2, /*largest=*/true), builder.TopK(x, 2, /*largest=*/false)};
  builder.Tuple(outputs);
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, BuildAndRun(builder));
  const Literal& largest = result.tuple_elements()[0];
  EXPECT_TRUE(std::isnan(largest.tuple_elements()[0].data<float>()[0]));
  EXPECT_EQ(largest.tuple_elements()[1], Literal::FromVector<int32_t>({1, 0}));
  EXPECT_EQ(result.tuple_elements()[1].tuple_elements()[1], Literal::FromVector<int32_t>({2, 3}));
}

TEST(TopKTest, IntegersFromHloText) {
  auto module = ParseHloModule(
      "HloModule t\nENTRY main {\n  x = s32[6] parameter(0)\n"
      "  ROOT r = (s32[2], s32[2]) topk(x), k=2, largest=true\n}\n");
  KILN_ASSERT_OK(module.status());
  const Literal arguments[] = {Literal::FromVector<int32_t>({-7, 12, 3, 12, 0, 5})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(**module, arguments));
  EXPECT_EQ(result.tuple_elements()[0], Literal::FromVector<int32_t>({12, 12}));
  EXPECT_EQ(result.tuple_elements()[1], Literal::FromVector<int32_t>({1, 3}));
}

TEST(TopKTest, ShapeErrors) {
  Attributes attrs;
  attrs.top_k = 4;
  const Shape operand(ElementType::kF32, {2, 3});
  auto too_many = InferShape(Opcode::kTopK, std::span<const Shape>(&operand, 1), attrs, {}, nullptr);
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.status().message().find("topk: k=4"), std::string::npos) << too_many.status().message();
  const Shape scalar(ElementType::kF32, {});
  attrs.top_k = 0;
  auto rank0 = InferShape(Opcode::kTopK, std::span<const Shape>(&scalar, 1), attrs, {}, nullptr);
  EXPECT_EQ(rank0.status().code(), StatusCode::kInvalidArgument);
}

TEST(PreferredElementTypeTest, Int8DotAccumulatesIntoInt32) {
  auto module = ParseHloModule(
      "HloModule m\nENTRY main {\n  a = s8[1,2] parameter(0)\n  b = s8[2,1] parameter(1)\n"
      "  ROOT d = s32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  KILN_ASSERT_OK(module.status());
  const Literal arguments[] = {Literal::FromVector<int8_t>({100, 100}, {1, 2}),
                               Literal::FromVector<int8_t>({100, 100}, {2, 1})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(**module, arguments));
  // 20000 does not fit in s8: the product must be accumulated in s32.
  EXPECT_EQ(result, Literal::FromVector<int32_t>({20000}, {1, 1}));
}

TEST(PreferredElementTypeTest, DeclaredDimsMustStillMatch) {
  auto module = ParseHloModule(
      "HloModule m\nENTRY main {\n  a = s8[1,2] parameter(0)\n  b = s8[2,1] parameter(1)\n"
      "  ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
