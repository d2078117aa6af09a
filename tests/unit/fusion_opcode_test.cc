// The fusion opcode: XLA's text form parses and prints back identically, the
// verifier checks the fused computation's signature against the operands,
// and the interpreter evaluates a fusion like a call.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/hlo_printer.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/verifier.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kLoopFusionText[] = R"(HloModule fused

fused_computation {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  m = f32[4]{0} multiply(p0, p1)
  ROOT r = f32[4]{0} add(m, p0)
}

ENTRY main {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  ROOT f = f32[4]{0} fusion(f32[4]{0} a, f32[4]{0} b), kind=kLoop, calls=fused_computation
}
)";

const Instruction* FindFusion(const Module& module) {
  for (const auto& instruction : module.entry()->instructions()) {
    if (instruction->opcode == Opcode::kFusion) return instruction.get();
  }
  return nullptr;
}

TEST(FusionOpcodeTest, ParsesKindAndCalledComputation) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kLoopFusionText));
  const Instruction* fusion = FindFusion(*module);
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->attrs.fusion_kind, FusionKind::kLoop);
  ASSERT_EQ(fusion->called.size(), 1u);
  EXPECT_EQ(fusion->called[0]->name(), "fused_computation");
  EXPECT_EQ(fusion->shape, Shape(ElementType::kF32, {4}));
}

TEST(FusionOpcodeTest, PrintsInXlaSpelling) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kLoopFusionText));
  const std::string line = FindFusion(*module)->ToString();
  EXPECT_NE(line.find("fusion("), std::string::npos) << line;
  EXPECT_NE(line.find(", kind=kLoop, calls=fused_computation"), std::string::npos) << line;
}

TEST(FusionOpcodeTest, RoundTripsEveryKind) {
  for (const char* kind : {"kLoop", "kInput", "kOutput"}) {
    std::string text = kLoopFusionText;
    text.replace(text.find("kLoop"), 5, kind);
    KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(text));
    const std::string printed = module->ToString();
    EXPECT_NE(printed.find(std::string("kind=") + kind), std::string::npos) << printed;
    KILN_ASSERT_OK_AND_ASSIGN(auto reparsed, ParseHloModule(printed));
    EXPECT_EQ(reparsed->ToString(), printed);
  }
}

TEST(FusionOpcodeTest, RefusesUnknownKind) {
  std::string text = kLoopFusionText;
  text.replace(text.find("kLoop"), 5, "kWhatever");
  auto module = ParseHloModule(text);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("unknown fusion kind"), std::string::npos)
      << module.status().ToString();
}

TEST(FusionOpcodeTest, RefusesMissingCalls) {
  std::string text = kLoopFusionText;
  text.erase(text.find(", calls=fused_computation"), std::string(", calls=fused_computation").size());
  EXPECT_FALSE(ParseHloModule(text).ok());
}

TEST(FusionOpcodeTest, RefusesOperandCountMismatch) {
  std::string text = kLoopFusionText;
  text.replace(text.find("fusion(f32[4]{0} a, f32[4]{0} b)"),
               std::string("fusion(f32[4]{0} a, f32[4]{0} b)").size(), "fusion(f32[4]{0} a)");
  auto module = ParseHloModule(text);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("fused computation takes 2 parameters"), std::string::npos)
      << module.status().ToString();
}

TEST(FusionOpcodeTest, RefusesResultShapeOtherThanTheRoot) {
  std::string text = kLoopFusionText;
  text.replace(text.find("ROOT f = f32[4]{0}"), std::string("ROOT f = f32[4]{0}").size(),
               "ROOT f = f32[5]{0}");
  EXPECT_FALSE(ParseHloModule(text).ok());
}

TEST(FusionOpcodeTest, VerifierRefusesOperandShapeMismatch) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kLoopFusionText));
  KILN_ASSERT_OK(VerifyModule(*module));
  Instruction* b = module->entry()->parameter(1);
  b->shape = Shape(ElementType::kF32, {3});
  EXPECT_FALSE(VerifyModule(*module).ok());
}

TEST(FusionOpcodeTest, VerifierRefusesFusionWithoutComputation) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kLoopFusionText));
  const_cast<Instruction*>(FindFusion(*module))->called.clear();
  EXPECT_FALSE(VerifyModule(*module).ok());
}

TEST(FusionOpcodeTest, InterpreterEvaluatesLikeACall) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kLoopFusionText));
  interpreter::InterpreterBackend backend;
  const std::vector<Literal> arguments = {Literal::FromVector<float>({1, 2, 3, 4}),
                                          Literal::FromVector<float>({10, 20, 30, 40})};
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Execute(backend, *module, arguments));
  EXPECT_EQ(result, Literal::FromVector<float>({11, 42, 93, 164}));
}

}  // namespace
}  // namespace kiln
