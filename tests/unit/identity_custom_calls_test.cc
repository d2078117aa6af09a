// Partitioning and placement annotations (Sharding, SPMD shape markers,
// memory-space moves) are their operand on one device, as in XLA: programs
// that carry them run on every backend here, the pipeline removes them, and
// one that really changes shape (a multi-device partitioning) is refused at
// compile time by name.
#include "core/identity_custom_calls.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/passes/pipeline.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// with_sharding_constraint as JAX 0.10 prints it on one device, and the
// shard_map markers around a multiply.
constexpr char kAnnotated[] = R"(HloModule annotated

ENTRY main {
  x = f32[4,8]{1,0} parameter(0)
  sin = f32[4,8]{1,0} sine(x)
  constraint = f32[4,8]{1,0} custom-call(sin), custom_call_target="Sharding", sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
  shard = f32[4,8]{1,0} custom-call(constraint), custom_call_target="SPMDFullToShardShape", sharding={manual}
  two = f32[] constant(2)
  twos = f32[4,8]{1,0} broadcast(two), dimensions={}
  product = f32[4,8]{1,0} multiply(shard, twos)
  ROOT full = f32[4,8]{1,0} custom-call(product), custom_call_target="SPMDShardToFullShape", sharding={devices=[1,1]0}
}
)";

Literal Input() {
  std::vector<float> values(32);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i) - 3.0f;
  return Literal::FromVector<float>(values, {4, 8});
}

class IdentityCustomCallTest : public ::testing::TestWithParam<std::string> {};

TEST_P(IdentityCustomCallTest, AnnotatedProgramRunsAsItsOperands) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(kAnnotated));
  const Literal x = Input();
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*module, std::vector<Literal>{x}, GetParam()));
  for (int64_t i = 0; i < 32; ++i) {
    EXPECT_FLOAT_EQ(result.data<float>()[i], 2.0f * std::sin(x.data<float>()[i])) << i;
  }
}

TEST_P(IdentityCustomCallTest, ShapeChangingMarkerIsRefusedAtCompileTime) {
  const std::string text = R"(HloModule partitioned
ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT shard = f32[4]{0} custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
)";
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend(GetParam()));
  const Status status = backend->Compile(*module, CompileOptions{}).status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
  for (const std::string& fragment : {std::string("SPMDFullToShardShape"), std::string("'shard'"), GetParam(),
                                      std::string("several devices")}) {
    EXPECT_NE(status.message().find(fragment), std::string::npos)
        << fragment << " not in " << status.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, IdentityCustomCallTest, ::testing::Values("interpreter", "cpu"));

TEST(IdentityCustomCallRemovalTest, PipelineLeavesNoAnnotation) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(kAnnotated));
  KILN_ASSERT_OK(RunOptimizationPipeline(*module));
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      EXPECT_NE(instruction->opcode, Opcode::kCustomCall) << instruction->ToString();
    }
  }
}

TEST(IdentityCustomCallRemovalTest, OnlyAnnotationTargetsAreIdentities) {
  for (const char* target :
       {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice"}) {
    EXPECT_TRUE(IsIdentityCustomCall(target)) << target;
  }
  for (const char* target : {"sharding", "my_kernel", "", "lapack_spotrf_ffi"}) {
    EXPECT_FALSE(IsIdentityCustomCall(target)) << target;
  }
}

}  // namespace
}  // namespace kiln
