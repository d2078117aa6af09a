// What a pass pipeline checks: the module's structure after each pass that
// changed it (the error names that pass), every instruction's shape once at
// the end of Run (the error names the passes that changed the module).
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/pass.h"
#include "core/verifier.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

constexpr char kTwoNegates[] = R"(HloModule t
ENTRY main {
  p = f32[2] parameter(0)
  a = f32[2] negate(p)
  ROOT b = f32[2] negate(a)
})";

Instruction* Named(const Module& module, std::string_view name) {
  for (const auto& instruction : module.entry()->instructions()) {
    if (instruction->name == name) return instruction.get();
  }
  return nullptr;
}

// Makes `a` read `b`, which comes after it: a broken structure.
class UseBeforeDefinition : public Pass {
 public:
  std::string_view name() const override { return "use-before-definition"; }
  StatusOr<bool> Run(Module& module) override {
    Named(module, "a")->operands[0] = Named(module, "b");
    return true;
  }
};

// Gives `b` a shape its operand does not have: the structure still holds.
class WrongShape : public Pass {
 public:
  std::string_view name() const override { return "wrong-shape"; }
  StatusOr<bool> Run(Module& module) override {
    Named(module, "b")->shape = Shape(ElementType::kF32, {3});
    return true;
  }
};

// Names `b` as `a`: the structure still holds.
class DuplicateName : public Pass {
 public:
  std::string_view name() const override { return "duplicate-name"; }
  StatusOr<bool> Run(Module& module) override {
    Named(module, "b")->name = "a";
    return true;
  }
};

// Changes nothing.
class Unchanged : public Pass {
 public:
  std::string_view name() const override { return "unchanged"; }
  StatusOr<bool> Run(Module&) override { return false; }
};

TEST(PassPipelineTest, ABrokenStructureIsCaughtAtThePassThatMadeIt) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kTwoNegates));
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<UseBeforeDefinition>());
  pipeline.AddPass(std::make_unique<Unchanged>());
  const StatusOr<bool> ran = pipeline.Run(*module);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), StatusCode::kInternal);
  EXPECT_NE(ran.status().message().find("after pass 'use-before-definition'"), std::string::npos)
      << ran.status().message();
  EXPECT_NE(ran.status().message().find("before it is defined"), std::string::npos) << ran.status().message();
}

TEST(PassPipelineTest, AWrongShapeIsCaughtAtTheEndNamingThePassesThatChangedTheModule) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kTwoNegates));
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<WrongShape>());
  pipeline.AddPass(std::make_unique<Unchanged>());
  const StatusOr<bool> ran = pipeline.Run(*module);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), StatusCode::kInternal);
  const std::string& message = ran.status().message();
  EXPECT_NE(message.find("after pass(es) 'wrong-shape':"), std::string::npos) << message;
  EXPECT_NE(message.find("shape inference gives f32[2]"), std::string::npos) << message;
  EXPECT_EQ(message.find("unchanged"), std::string::npos) << message;
}

TEST(PassPipelineTest, ADuplicateNameIsCaughtAtTheEnd) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kTwoNegates));
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<DuplicateName>());
  const StatusOr<bool> ran = pipeline.Run(*module);
  ASSERT_FALSE(ran.ok());
  const std::string& message = ran.status().message();
  EXPECT_NE(message.find("after pass(es) 'duplicate-name':"), std::string::npos) << message;
  EXPECT_NE(message.find("two instructions named a"), std::string::npos) << message;
}

// A caller that verifies the result itself (RunOptimizationPipeline, after
// several pipelines) leaves the shapes to that check.
TEST(PassPipelineTest, WithoutTheCheckAtTheEndTheShapesAreLeftToTheCaller) {
  KILN_ASSERT_OK_AND_ASSIGN(auto module, ParseHloModule(kTwoNegates));
  PassPipeline pipeline(/*verify_shapes_at_end=*/false);
  pipeline.AddPass(std::make_unique<WrongShape>());
  KILN_ASSERT_OK_AND_ASSIGN(bool changed, pipeline.Run(*module));
  EXPECT_TRUE(changed);
  EXPECT_TRUE(VerifyModuleStructure(*module).ok());
  EXPECT_FALSE(VerifyModule(*module).ok());
}

}  // namespace
}  // namespace kiln
