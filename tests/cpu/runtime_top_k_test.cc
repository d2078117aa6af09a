// topk on the CPU backend: a native "topk" thunk (no library thunk), ties in
// index order and floats in total order, as the interpreter.
#include <cmath>

#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

std::vector<Literal> RunNativeTopK(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {};
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {};
  const auto& thunks = static_cast<const CpuExecutable&>(**executable).program().statistics.thunks;
  EXPECT_EQ(thunks.count("topk"), 1u);
  EXPECT_EQ(thunks.count("library"), 0u);
  StatusOr<std::vector<Literal>> results = testing::RunOn(cpu, *module, arguments);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? std::move(results).value() : std::vector<Literal>{};
}

TEST(RuntimeTopKTest, LargestWithTiesInIndexOrder) {
  const char* text = R"(HloModule m
ENTRY e {
  x = s32[2,5] parameter(0)
  ROOT t = (s32[2,3], s32[2,3]) topk(x), k=3, largest=true
})";
  const std::vector<Literal> results =
      RunNativeTopK(text, {Literal::FromVector<int32_t>({4, 9, 4, 1, 9, 0, -1, 3, 3, 2}, {2, 5})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], Literal::FromVector<int32_t>({9, 9, 4, 3, 3, 2}, {2, 3}));
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({1, 4, 0, 2, 3, 4}, {2, 3}));
}

TEST(RuntimeTopKTest, SmallestFloatsInTotalOrder) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  ROOT t = (f32[3], s32[3]) topk(x), k=3, largest=false
})";
  const std::vector<Literal> results =
      RunNativeTopK(text, {Literal::FromVector<float>({0.0f, std::nanf(""), -0.0f, 2.0f, -INFINITY})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({4, 2, 0}));
  EXPECT_TRUE(std::signbit(results[0].data<float>()[1]));
}

TEST(RuntimeTopKTest, ManyRowsMatchTheInterpreter) {
  testing::ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = bf16[300,200] parameter(0)
  ROOT t = (bf16[300,7], s32[300,7]) topk(x), k=7, largest=true
})",
                                    0);
}

}  // namespace
}  // namespace kiln::cpu
