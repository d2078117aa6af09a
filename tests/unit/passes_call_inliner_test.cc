// Call inlining: the callee's body replaces the call and the callee goes away.
#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/pass.h"
#include "core/passes/call_inliner.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kNestedCalls[] = R"(HloModule t
inner {
  a = f32[3] parameter(0)
  ROOT n = f32[3] negate(a)
}
outer {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  c = f32[3] call(x), to_apply=inner
  ROOT s = f32[3] add(c, y)
}
ENTRY main {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  first = f32[3] call(p, q), to_apply=outer
  ROOT second = f32[3] call(first, p), to_apply=outer
})";

TEST(PassesCallInlinerTest, InlinesNestedCallsAndDropsTheCallees) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kNestedCalls));
  interpreter::InterpreterBackend backend;
  const std::vector<Literal> arguments = {Literal::FromVector<float>({1, 2, 3}),
                                          Literal::FromVector<float>({10, 20, 30})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal before, testing::Execute(backend, *module, arguments));
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<CallInliner>());
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pipeline.Run(*module));
  EXPECT_TRUE(changed);
  ASSERT_EQ(module->computations().size(), 1u);
  int negates = 0;
  for (const auto& instruction : module->entry()->instructions()) {
    EXPECT_NE(instruction->opcode, Opcode::kCall);
    negates += instruction->opcode == Opcode::kNegate;
  }
  EXPECT_EQ(negates, 2);
  KILN_ASSERT_OK_AND_ASSIGN(Literal after, testing::Execute(backend, *module, arguments));
  EXPECT_EQ(after, before);
  EXPECT_EQ(after, Literal::FromVector<float>({-8, -16, -24}));  // outer(outer(p, q), p) = 2p - q
}

TEST(PassesCallInlinerTest, NoCallsNoChange) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module,
                            ParseHloModule("HloModule t\nENTRY main {\n  ROOT x = f32[2] parameter(0)\n}\n"));
  CallInliner inliner;
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, inliner.Run(*module));
  EXPECT_FALSE(changed);
}

TEST(PassesCallInlinerTest, RemoveUnreachableComputationsKeepsCallees) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kNestedCalls));
  EXPECT_FALSE(module->RemoveUnreachableComputations());
  EXPECT_EQ(module->computations().size(), 3u);
}

}  // namespace
}  // namespace kiln
