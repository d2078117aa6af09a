// Gather (elemental), scatter and select-and-scatter (serial kernels) from
// the code generator: known answers for the edge cases, and agreement with
// the reference interpreter.
#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// Compiles the entry as one kernel, runs it, and checks the interpreter
// agrees; returns the kernel's first output.
Literal RunAndCompare(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = Parse(text);
  if (module == nullptr) return Literal();
  const Status emittable = SharedCompiler().CheckEmittable(*module->entry());
  EXPECT_TRUE(emittable.ok()) << emittable.ToString();
  StatusOr<std::vector<Literal>> got = RunKernel(*module, arguments);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  StatusOr<std::vector<Literal>> want = RunInterpreter(*module, arguments);
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  if (!got.ok() || !want.ok()) return Literal();
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size() && i < want->size(); ++i) ExpectNear((*want)[i], (*got)[i], text);
  return std::move((*got)[0]);
}

constexpr char kAdd[] = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
)";

TEST(CodegenGatherTest, RowsWithOutOfRangeIndicesAreClamped) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[5,3] parameter(0)
  i = s32[4] parameter(1)
  ROOT g = f32[4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})";
  const Literal got = RunAndCompare(
      text, {Literal::FromVector<float>({0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42}, {5, 3}),
             Literal::FromVector<int32_t>({0, 4, 7, -2})});
  EXPECT_EQ(got, Literal::FromVector<float>({0, 1, 2, 40, 41, 42, 40, 41, 42, 0, 1, 2}, {4, 3}));
}

TEST(CodegenGatherTest, WindowIsClampedToFitTheOperand) {
  // 2x2 windows at (1,2) and (5,-1): both starts are clamped into [0,2]x[0,1].
  const char* text = R"(HloModule m
ENTRY e {
  x = s32[4,3] parameter(0)
  i = s64[2,2] parameter(1)
  ROOT g = s32[2,2,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
})";
  const Literal got = RunAndCompare(
      text, {Literal::FromVector<int32_t>({0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}, {4, 3}),
             Literal::FromVector<int64_t>({1, 2, 5, -1}, {2, 2})});
  EXPECT_EQ(got, Literal::FromVector<int32_t>({11, 12, 21, 22, 20, 21, 30, 31}, {2, 2, 2}));
}

TEST(CodegenGatherTest, BatchingDimensionsPairOperandAndIndexBatches) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  i = u32[2,3,1] parameter(1)
  ROOT g = f32[2,3] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
})";
  const Literal got =
      RunAndCompare(text, {Literal::FromVector<float>({0, 1, 2, 3, 4, 10, 11, 12, 13, 14}, {2, 5}),
                           Literal::FromVector<uint32_t>({4, 0, 2, 1, 9, 3}, {2, 3, 1})});
  EXPECT_EQ(got, Literal::FromVector<float>({4, 0, 2, 11, 14, 13}, {2, 3}));
}

TEST(CodegenScatterTest, DuplicateIndicesAccumulateAndOutOfRangeUpdatesAreSkipped) {
  const std::string text = std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = f32[5] parameter(0)
  i = s32[5,1] parameter(1)
  u = f32[5] parameter(2)
  ROOT s = f32[5] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";
  const Literal got = RunAndCompare(text, {Literal::FromVector<float>({1, 1, 1, 1, 1}),
                                           Literal::FromVector<int32_t>({1, 1, 7, -1, 4}, {5, 1}),
                                           Literal::FromVector<float>({10, 20, 30, 40, 50})});
  EXPECT_EQ(got, Literal::FromVector<float>({1, 31, 1, 1, 51}));
}

TEST(CodegenScatterTest, NonCommutativeCombinerAppliesUpdatesInOrder) {
  // combine(old, new) = 2*old + new: the result depends on the update order.
  const char* text = R"(HloModule m
combine {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  two = s32[] constant(2)
  d = s32[] multiply(a, two)
  ROOT r = s32[] add(d, b)
}
ENTRY e {
  x = s32[3] parameter(0)
  i = s32[3] parameter(1)
  u = s32[3] parameter(2)
  ROOT s = s32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})";
  const Literal got =
      RunAndCompare(text, {Literal::FromVector<int32_t>({1, 0, 0}), Literal::FromVector<int32_t>({0, 0, 2}),
                           Literal::FromVector<int32_t>({3, 5, 7})});
  // Index 0: 2*1+3 = 5, then 2*5+5 = 15.
  EXPECT_EQ(got, Literal::FromVector<int32_t>({15, 0, 7}));
}

TEST(CodegenScatterTest, RowWindowsSkipAWindowThatDoesNotFit) {
  const char* text = R"(HloModule m
replace {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  x = f32[4,3] parameter(0)
  i = s32[2] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[4,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=replace
})";
  const Literal got = RunAndCompare(
      text, {Literal::FromVector<float>(std::vector<float>(12, 0), {4, 3}),
             Literal::FromVector<int32_t>({3, 4}), Literal::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_EQ(got, Literal::FromVector<float>({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}, {4, 3}));
}

TEST(CodegenScatterTest, VariadicScatterUpdatesEveryOutput) {
  // Keeps, per target, the (value, index) pair with the larger value.
  const char* text = R"(HloModule m
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  take = pred[] compare(b, a), direction=GT
  v = f32[] select(take, b, a)
  vi = s32[] select(take, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, vi)
}
ENTRY e {
  x = f32[3] parameter(0)
  xi = s32[3] parameter(1)
  i = s32[4,1] parameter(2)
  u = f32[4] parameter(3)
  ui = s32[4] parameter(4)
  ROOT s = (f32[3], s32[3]) scatter(x, xi, i, u, ui), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmax
})";
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(SharedCompiler().CheckEmittable(*module->entry()).ok());
  const std::vector<Literal> arguments = {
      Literal::FromVector<float>({0, 0, 0}), Literal::FromVector<int32_t>({-1, -1, -1}),
      Literal::FromVector<int32_t>({2, 0, 2, 2}, {4, 1}), Literal::FromVector<float>({5, -1, 9, 7}),
      Literal::FromVector<int32_t>({10, 11, 12, 13})};
  StatusOr<std::vector<Literal>> got = RunKernel(*module, arguments);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0], Literal::FromVector<float>({0, 0, 9}));
  EXPECT_EQ((*got)[1], Literal::FromVector<int32_t>({-1, -1, 12}));
}

TEST(CodegenScatterTest, ScatterIsOnlyEmittedAsAKernelRoot) {
  const std::string text = std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = f32[5] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  s = f32[5] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT n = f32[5] negate(s)
})";
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(SharedCompiler().CheckEmittable(*module->entry()).ok());
}

constexpr char kSelectGe[] = R"(ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
)";

TEST(CodegenSelectAndScatterTest, OverlappingWindowsAddAtTheSameIndex) {
  // The operation-semantics example: 3x3 windows with stride 2 overlap, and 9
  // is the maximum of both top windows, so it receives 2 + 6 = 8.
  const std::string text = std::string("HloModule m\n") + kAdd + kSelectGe + R"(
ENTRY e {
  x = f32[5,5] parameter(0)
  s = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[5,5] select-and-scatter(x, s, z), window={size=3x3 stride=2x2}, select=ge, scatter=add
})";
  const Literal got = RunAndCompare(
      text, {Literal::FromVector<float>(
                 {7, 2, 5, 3, 8, 3, 8, 9, 3, 4, 1, 5, 7, 5, 6, 0, 6, 2, 10, 2, 8, 1, 4, 3, 5}, {5, 5}),
             Literal::FromVector<float>({2, 6, 3, 1}, {2, 2})});
  EXPECT_EQ(got, Literal::FromVector<float>(
                     {0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 0, 0, 0, 0}, {5, 5}));
}

TEST(CodegenSelectAndScatterTest, PaddedWindowsSkipPaddingAndTiesKeepTheFirst) {
  // With GE, the first of equal maxima wins; windows hanging over the edge
  // only consider real elements.
  const std::string text = std::string("HloModule m\n") + kAdd + kSelectGe + R"(
ENTRY e {
  x = f32[2,4] parameter(0)
  s = f32[1,2] parameter(1)
  z = f32[] constant(-1)
  ROOT r = f32[2,4] select-and-scatter(x, s, z), window={size=2x3 stride=2x3 pad=0_0x1_1}, select=ge, scatter=add
})";
  const Literal got = RunAndCompare(text, {Literal::FromVector<float>({5, 1, 5, 2, 0, 5, 1, 7}, {2, 4}),
                                           Literal::FromVector<float>({10, 20}, {1, 2})});
  EXPECT_EQ(got, Literal::FromVector<float>({9, -1, -1, -1, -1, -1, -1, 19}, {2, 4}));
}

}  // namespace
}  // namespace kiln::cpu::testing
