// BinaryCombinerOpcode, SimpleReducer and IsNarrowFloatSum (core/reducer.h) on parsed modules:
// which reduce computations count as one elementwise op of the parameters.
#include "core/reducer.h"

#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"

namespace kiln {
namespace {

// A module reducing f`type`[8] by a computation whose root is `root` (HLO
// text over the scalar parameters a and b), and the reduce in it.
struct ReduceModule {
  std::unique_ptr<Module> module;
  const Instruction* reduce = nullptr;
};

ReduceModule ParseReduce(const std::string& type, const std::string& root) {
  const std::string text = "HloModule reducer_test\n\nreducer {\n  a = " + type +
                           "[] parameter(0)\n  b = " + type + "[] parameter(1)\n  ROOT r = " + type + "[] " +
                           root + "\n}\n\nENTRY main {\n  x = " + type +
                           "[8] parameter(0)\n  zero = " + type + "[] constant(0)\n  ROOT total = " + type +
                           "[] reduce(x, zero), dimensions={0}, to_apply=reducer\n}\n";
  auto parsed = ParseHloModule(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
  ReduceModule result;
  if (!parsed.ok()) return result;
  result.module = std::move(parsed).value();
  result.reduce = result.module->entry()->root();
  return result;
}

TEST(ReducerTest, SimpleReducerNamesAddMaximumAndMinimumOfTheTwoParameters) {
  EXPECT_EQ(SimpleReducer(*ParseReduce("f32", "add(a, b)").reduce), Opcode::kAdd);
  EXPECT_EQ(SimpleReducer(*ParseReduce("f32", "add(b, a)").reduce), Opcode::kAdd);
  EXPECT_EQ(SimpleReducer(*ParseReduce("s32", "maximum(a, b)").reduce), Opcode::kMaximum);
  EXPECT_EQ(SimpleReducer(*ParseReduce("f16", "minimum(a, b)").reduce), Opcode::kMinimum);
  EXPECT_EQ(SimpleReducer(*ParseReduce("f32", "multiply(a, b)").reduce), std::nullopt);
  EXPECT_EQ(SimpleReducer(*ParseReduce("f32", "add(a, a)").reduce), std::nullopt);
}

TEST(ReducerTest, BinaryCombinerOpcodeNamesAnyBinaryOpOfBothParameters) {
  const auto combiner = [](const std::string& type, const std::string& root) {
    const ReduceModule parsed = ParseReduce(type, root);
    return BinaryCombinerOpcode(*parsed.reduce->called[0]);
  };
  EXPECT_EQ(combiner("s32", "xor(b, a)"), Opcode::kXor);
  EXPECT_EQ(combiner("f32", "multiply(a, b)"), Opcode::kMultiply);
  EXPECT_EQ(combiner("u32", "minimum(a, b)"), Opcode::kMinimum);
  EXPECT_EQ(combiner("f32", "add(a, a)"), std::nullopt);
  EXPECT_EQ(combiner("f32", "negate(a)"), std::nullopt);
}

TEST(ReducerTest, NarrowFloatSumsAreAddsOfF16OrBf16) {
  EXPECT_TRUE(IsNarrowFloatSum(*ParseReduce("f16", "add(a, b)").reduce));
  EXPECT_TRUE(IsNarrowFloatSum(*ParseReduce("bf16", "add(a, b)").reduce));
  EXPECT_FALSE(IsNarrowFloatSum(*ParseReduce("f32", "add(a, b)").reduce));
  EXPECT_FALSE(IsNarrowFloatSum(*ParseReduce("f16", "maximum(a, b)").reduce));
  EXPECT_FALSE(IsNarrowFloatSum(*ParseReduce("f16", "add(a, a)").reduce));
  const ReduceModule sum = ParseReduce("f16", "add(a, b)");
  // The reduce's operand is not a reduce.
  EXPECT_FALSE(IsNarrowFloatSum(*sum.reduce->operand(0)));
}

}  // namespace
}  // namespace kiln
