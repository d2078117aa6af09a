// KernelKey (core/lowering/kernel_key.h) and the printer's positional names
// it is built on: computations that differ only in names share a key, any
// other difference separates them, and the key is the text the lowering used
// before it stopped copying each kernel (the copy renamed "v0", "v1", ... and
// named "kernel", then printed).
#include "core/lowering/kernel_key.h"

#include <memory>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

#include "core/hlo_printer.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using testing::ParseHloOrFail;

// The key as it was computed before: a renamed copy, printed.
std::string KernelKeyOfRenamedCopy(const Computation& computation) {
  Computation renamed("kernel");
  std::unordered_map<const Instruction*, Instruction*> copies;
  for (const auto& instruction : computation.instructions()) {
    auto copy = std::make_unique<Instruction>(*instruction);
    for (Instruction*& operand : copy->operands) operand = copies.at(operand);
    copy->name = "v" + std::to_string(copies.size());
    copies[instruction.get()] = renamed.AddInstruction(std::move(copy));
  }
  if (computation.root() != nullptr) renamed.set_root(copies.at(computation.root()));
  return PrintComputation(renamed);
}

constexpr char kKernelKeyFusions[] = R"(HloModule fusions
add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}
fused_a {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8] parameter(1)
  b = f32[4,8] broadcast(p1), dimensions={1}
  m = f32[4,8] multiply(p0, b)
  zero = f32[] constant(0)
  ROOT r = f32[4] reduce(m, zero), dimensions={1}, to_apply=add_f32
}
fused_b {
  x = f32[4,8] parameter(0)
  y = f32[8] parameter(1)
  wide = f32[4,8] broadcast(y), dimensions={1}
  product = f32[4,8] multiply(x, wide)
  nothing = f32[] constant(0)
  ROOT total = f32[4] reduce(product, nothing), dimensions={1}, to_apply=add_f32
}
fused_other_constant {
  x = f32[4,8] parameter(0)
  y = f32[8] parameter(1)
  wide = f32[4,8] broadcast(y), dimensions={1}
  product = f32[4,8] multiply(x, wide)
  one = f32[] constant(1)
  ROOT total = f32[4] reduce(product, one), dimensions={1}, to_apply=add_f32
}
ENTRY e {
  a = f32[4,8] parameter(0)
  v = f32[8] parameter(1)
  f = f32[4] fusion(a, v), kind=kInput, calls=fused_a
  g = f32[4] fusion(a, v), kind=kInput, calls=fused_b
  h = f32[4] fusion(a, v), kind=kInput, calls=fused_other_constant
  ROOT t = (f32[4], f32[4], f32[4]) tuple(f, g, h)
})";

TEST(KernelKeyTest, NamesDoNotMatterButConstantsDo) {
  std::unique_ptr<Module> module = ParseHloOrFail(kKernelKeyFusions);
  ASSERT_NE(module, nullptr);
  const std::string a = KernelKey(*module->FindComputation("fused_a"));
  EXPECT_EQ(a, KernelKey(*module->FindComputation("fused_b")));
  EXPECT_NE(a, KernelKey(*module->FindComputation("fused_other_constant")));
  EXPECT_EQ(a.rfind("kernel ", 0), 0u) << a;
  EXPECT_EQ(a.find("fused_a"), std::string::npos) << a;
  EXPECT_NE(a.find("ROOT v5 = f32[4]{0} reduce(f32[4,8]{1,0} v3, f32[] v4)"), std::string::npos) << a;
}

TEST(KernelKeyTest, IsTheTextOfARenamedCopy) {
  std::unique_ptr<Module> module = ParseHloOrFail(kKernelKeyFusions);
  ASSERT_NE(module, nullptr);
  for (const auto& computation : module->computations()) {
    EXPECT_EQ(KernelKey(*computation), KernelKeyOfRenamedCopy(*computation)) << computation->name();
  }
}

TEST(PositionalNamesTest, APrintedModuleParsesAndPrintsTheSameAgain) {
  std::unique_ptr<Module> module = ParseHloOrFail(kKernelKeyFusions);
  ASSERT_NE(module, nullptr);
  PrintOptions positional;
  positional.positional_names = true;
  const std::string text = PrintModule(*module, positional);
  EXPECT_EQ(text.find("fused_a {"), std::string::npos) << "the long form prints a signature";
  EXPECT_NE(text.find("ROOT v5 = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple("), std::string::npos) << text;
  std::unique_ptr<Module> again = ParseHloOrFail(text);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(PrintModule(*again, positional), text);
  // A lone instruction keeps its name, and the default keeps every name.
  EXPECT_EQ(PrintInstruction(*module->entry()->root(), positional).rfind("t = ", 0), 0u);
  EXPECT_NE(PrintModule(*module).find("ROOT t = "), std::string::npos);
}

}  // namespace
}  // namespace kiln
