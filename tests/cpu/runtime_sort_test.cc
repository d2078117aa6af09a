// sort on the CPU backend: the comparator is compiled and slices are sorted
// natively (a "sort" thunk, no library thunk), with the interpreter's results.
#include <cmath>

#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

const CompiledProgram& ProgramOf(const Executable& executable) {
  return static_cast<const CpuExecutable&>(executable).program();
}

// Compiles `text`, expects one native sort and no library thunk, and runs it.
std::vector<Literal> RunNativeSort(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {};
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {};
  const auto& thunks = ProgramOf(**executable).statistics.thunks;
  EXPECT_EQ(thunks.count("sort") ? thunks.at("sort") : 0, 1);
  EXPECT_EQ(thunks.count("library"), 0u);
  StatusOr<std::vector<Literal>> results = testing::RunOn(cpu, *module, arguments);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? std::move(results).value() : std::vector<Literal>{};
}

std::string Comparator(const std::string& type, const std::string& direction, int operands,
                       const std::string& compare_type = "") {
  std::string text = "cmp {\n";
  for (int i = 0; i < 2 * operands; ++i) {
    text += "  p" + std::to_string(i) + " = " + (i < 2 ? type : std::string("s32")) + "[] parameter(" +
            std::to_string(i) + ")\n";
  }
  text += "  ROOT c = pred[] compare(p0, p1), direction=" + direction +
          (compare_type.empty() ? "" : ", type=" + compare_type) + "\n}\n";
  return text;
}

TEST(RuntimeSortTest, SortsEachRowAscending) {
  const std::string text = "HloModule m\n" + Comparator("f32", "LT", 1) + R"(
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT s = f32[2,4] sort(x), dimensions={1}, to_apply=cmp
})";
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<float>({3, 1, 2, 0, -1, 5, -7, 4}, {2, 4})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], Literal::FromVector<float>({0, 1, 2, 3, -7, -1, 4, 5}, {2, 4}));
}

TEST(RuntimeSortTest, DescendingComparatorAlongDimensionZero) {
  const std::string text = "HloModule m\n" + Comparator("s32", "GT", 1) + R"(
ENTRY e {
  x = s32[3,2] parameter(0)
  ROOT s = s32[3,2] sort(x), dimensions={0}, to_apply=cmp
})";
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<int32_t>({1, 9, 7, 2, 4, 5}, {3, 2})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], Literal::FromVector<int32_t>({7, 9, 4, 5, 1, 2}, {3, 2}));
}

TEST(RuntimeSortTest, StableSortKeepsEqualKeysInOrderAndMovesEveryOperand) {
  const std::string text = "HloModule m\n" + Comparator("s32", "LT", 2) + R"(
ENTRY e {
  k = s32[7] parameter(0)
  v = s32[7] parameter(1)
  ROOT s = (s32[7], s32[7]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
})";
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<int32_t>({2, 1, 2, 0, 1, 2, 0}),
                           Literal::FromVector<int32_t>({0, 1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], Literal::FromVector<int32_t>({0, 0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({3, 6, 1, 4, 0, 2, 5}));
}

TEST(RuntimeSortTest, TotalOrderPutsNegativeZeroFirstAndNanLast) {
  const std::string text = "HloModule m\n" + Comparator("f32", "LT", 1, "TOTALORDER") + R"(
ENTRY e {
  x = f32[6] parameter(0)
  ROOT s = f32[6] sort(x), dimensions={0}, to_apply=cmp
})";
  const float nan = std::nanf("");
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<float>({nan, 0.0f, 1.0f, -0.0f, -INFINITY, -2.0f})});
  ASSERT_EQ(results.size(), 1u);
  const auto values = results[0].data<float>();
  EXPECT_EQ(values[0], -INFINITY);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_TRUE(values[2] == 0.0f && std::signbit(values[2]));
  EXPECT_TRUE(values[3] == 0.0f && !std::signbit(values[3]));
  EXPECT_EQ(values[4], 1.0f);
  EXPECT_TRUE(std::isnan(values[5]));
}

TEST(RuntimeSortTest, ComparatorOnSecondOperandAndMixedTypes) {
  // Sorts by the s32 values, carrying f16 keys along (unstable is allowed).
  const char* text = R"(HloModule m
cmp {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(c, d), direction=LT
}
ENTRY e {
  k = f16[5,3] parameter(0)
  v = s32[5,3] parameter(1)
  ROOT s = (f16[5,3], s32[5,3]) sort(k, v), dimensions={0}, to_apply=cmp
})";
  testing::ExpectMatchesInterpreter(text, 0);
}

TEST(RuntimeSortTest, ManyRowsSortedInParallelMatchTheInterpreter) {
  const std::string text = "HloModule m\n" + Comparator("f32", "LT", 1) + R"(
ENTRY e {
  x = f32[64,1000] parameter(0)
  ROOT s = f32[64,1000] sort(x), dimensions={1}, to_apply=cmp
})";
  testing::ExpectMatchesInterpreter(text, 0, 3);
}

TEST(RuntimeSortTest, ComplexKeysWithACompiledComparator) {
  // Complex operands sort natively too: the comparator (on real parts) is
  // compiled like any other, and ties keep the interpreter's order.
  const char* text = R"(HloModule m
cmp {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ra = f32[] real(a)
  rb = f32[] real(b)
  ROOT lt = pred[] compare(ra, rb), direction=LT
}
ENTRY e {
  x = c64[6] parameter(0)
  ROOT s = c64[6] sort(x), dimensions={0}, to_apply=cmp
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  EXPECT_EQ(ProgramOf(*executable).statistics.thunks.count("sort"), 1u);
  testing::ExpectMatchesInterpreter(text, 0);
}

}  // namespace
}  // namespace kiln::cpu
