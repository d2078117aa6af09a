// Reverse-mode gradients through while loops on vulkan (lavapipe here):
// the tape steps of the shared device runner (core/lowering/step_tapes.h)
// keep each forward iteration's state in a device buffer and give it back
// to the backward loop. Loops whose trip counts only the data decide
// (nested, inside a conditional, around a conditional, long enough for the
// tape to grow several times, zero trips) agree with the cpu backend's
// gradients within the conformance corpus's tolerance for their types.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/autodiff/vjp.h"
#include "core/hlo_parser.h"
#include "core/literal_compare.h"
#include "tests/unit/control_flow_programs.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

namespace control_flow = testing::control_flow;

const std::string kAdd = control_flow::AddComputation("f32");

const std::string kGrow = control_flow::GrowComputations("f32");

std::unique_ptr<Module> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

Literal Uniform(int64_t count, std::mt19937& random, float low, float high) {
  std::uniform_real_distribution<float> draw(low, high);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = draw(random);
  return Literal::FromVector<float>(values);
}

// The gradient module of `module` with respect to parameters `wrt`, run on
// vulkan and on cpu with `inputs` and a random cotangent for each float
// result leaf (zero for the rest): every leaf agrees (integers exactly,
// floats within the corpus's tolerance). Returns the cpu's leaves.
std::vector<Literal> ExpectGradientsAgreeWithCpu(const Module& module, const std::vector<int64_t>& wrt,
                                                 std::vector<Literal> inputs, uint32_t seed) {
  StatusOr<std::unique_ptr<Module>> vjp = autodiff::BuildVjp(module, std::span<const int64_t>(wrt));
  EXPECT_TRUE(vjp.ok()) << vjp.status().ToString();
  if (!vjp.ok()) return {};
  std::mt19937 random(seed);
  const Shape& result = module.entry()->root()->shape;
  if (!result.IsScalar()) {
    for (const Shape& leaf : result.Leaves()) {
      inputs.push_back(leaf.element_type() == ElementType::kF32 ? Uniform(leaf.element_count(), random, -1, 1)
                                                                : Literal(leaf));
    }
  }
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  EXPECT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  StatusOr<std::unique_ptr<Backend>> cpu = CreateBackend("cpu");
  EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
  if (!vulkan.ok() || !cpu.ok()) return {};
  StatusOr<std::vector<Literal>> want = testing::ExecuteLeaves(**cpu, **vjp, inputs);
  StatusOr<std::vector<Literal>> got = testing::ExecuteLeaves(**vulkan, **vjp, inputs);
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  if (!want.ok() || !got.ok()) return {};
  EXPECT_EQ(got->size(), want->size());
  const Tolerance module_tolerance = ModuleTolerance(**vjp);
  for (size_t leaf = 0; leaf < want->size() && leaf < got->size(); ++leaf) {
    const Literal& expected = (*want)[leaf];
    const LeafDifference difference =
        CompareLeaf((*got)[leaf], expected, LeafTolerance(expected.shape().element_type(), module_tolerance));
    EXPECT_TRUE(difference.agree()) << "leaf " << leaf << ": " << difference.first_mismatch;
  }
  return std::move(want).value();
}

int32_t TripCount(const std::vector<Literal>& leaves, size_t leaf) {
  return leaves.size() > leaf ? leaves[leaf].data<int32_t>()[0] : -1;
}

TEST(VulkanTape, WhileWithADataDependentTripCount) {
  auto module = Parse(std::string("HloModule grow\n") + kAdd + kGrow + R"(
ENTRY main {
  x = f32[3] parameter(0)
  a = f32[3] parameter(1)
  zero = s32[] constant(0)
  init = (f32[3], f32[3], s32[]) tuple(x, a, zero)
  w = (f32[3], f32[3], s32[]) while(init), condition=grow_cond, body=grow_body
  rx = f32[3] get-tuple-element(w), index=0
  ri = s32[] get-tuple-element(w), index=2
  ROOT out = (f32[3], s32[]) tuple(rx, ri)
}
)");
  ASSERT_NE(module, nullptr);
  std::mt19937 random(31);
  for (int trial = 0; trial < 3; ++trial) {
    // Outputs: the forward results (x, trips), then d/dx and d/da.
    const std::vector<Literal> cpu = ExpectGradientsAgreeWithCpu(
        *module, {0, 1}, {Uniform(3, random, 0.2f, 0.6f), Uniform(3, random, 1.2f, 1.5f)}, 40 + trial);
    EXPECT_GT(TripCount(cpu, 1), 2) << "the loop should run a data-dependent number of times";
  }
}

// x decays for n iterations, n an argument: zero, one and enough
// iterations for the tape (12 bytes an entry) to double several times.
TEST(VulkanTape, ZeroOneAndManyTripsGrowTheTape) {
  auto module = Parse(R"(HloModule decay
decay_body {
  s = (f32[3], s32[], s32[]) parameter(0)
  x = f32[3] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  k = f32[] constant(0.97)
  kb = f32[3] broadcast(k), dimensions={}
  kx = f32[3] multiply(x, kb)
  sx = f32[3] sine(x)
  h = f32[] constant(0.05)
  hb = f32[3] broadcast(h), dimensions={}
  d = f32[3] multiply(sx, hb)
  nx = f32[3] add(kx, d)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT r = (f32[3], s32[], s32[]) tuple(nx, ni, n)
}
decay_cond {
  s = (f32[3], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[3] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (f32[3], s32[], s32[]) tuple(x, zero, n)
  w = (f32[3], s32[], s32[]) while(init), condition=decay_cond, body=decay_body
  rx = f32[3] get-tuple-element(w), index=0
  ri = s32[] get-tuple-element(w), index=1
  ROOT out = (f32[3], s32[]) tuple(rx, ri)
}
)");
  ASSERT_NE(module, nullptr);
  std::mt19937 random(5);
  for (int32_t trips : {0, 1, 2, 300}) {
    SCOPED_TRACE("trips " + std::to_string(trips));
    const std::vector<Literal> cpu = ExpectGradientsAgreeWithCpu(
        *module, {0}, {Uniform(3, random, 0.5f, 1.5f), Literal::Scalar<int32_t>(trips)}, 7);
    EXPECT_EQ(TripCount(cpu, 1), trips);
  }
}

// An inner loop whose trip count is the outer iteration number (plus one)
// inside an outer loop that runs until x is large.
TEST(VulkanTape, NestedWhileLoops) {
  auto module = Parse(control_flow::NestedLoopsModule("f32"));

  ASSERT_NE(module, nullptr);
  std::mt19937 random(32);
  for (int trial = 0; trial < 2; ++trial) {
    const std::vector<Literal> cpu = ExpectGradientsAgreeWithCpu(
        *module, {0, 1}, {Uniform(2, random, 0.3f, 0.8f), Uniform(2, random, 1.3f, 1.6f)}, 50 + trial);
    EXPECT_GT(TripCount(cpu, 1), 2);
  }
}

// A conditional whose true branch is a loop and whose false branch is
// straight-line code; and a loop whose body picks a branch by parity.
TEST(VulkanTape, LoopsInsideAndAroundConditionals) {
  auto in_conditional = Parse(control_flow::LoopInAConditionalModule("f32"));

  ASSERT_NE(in_conditional, nullptr);
  std::mt19937 random(34);
  for (bool predicate : {true, false}) {
    SCOPED_TRACE(predicate);
    const std::vector<Literal> cpu = ExpectGradientsAgreeWithCpu(
        *in_conditional, {0, 1},
        {Uniform(3, random, 0.2f, 0.6f), Uniform(3, random, 1.2f, 1.5f), Literal::Scalar<bool>(predicate)},
        9);
    EXPECT_EQ(TripCount(cpu, 1) > 2, predicate) << TripCount(cpu, 1);
  }

  auto around_conditional = Parse(control_flow::ConditionalInALoopModule("f32"));

  ASSERT_NE(around_conditional, nullptr);
  const std::vector<Literal> cpu = ExpectGradientsAgreeWithCpu(
      *around_conditional, {0, 1}, {Uniform(2, random, 0.3f, 0.9f), Uniform(2, random, 0.3f, 0.6f)}, 11);
  EXPECT_GT(TripCount(cpu, 1), 3);
}

// The tape custom calls lower to steps: the backend no longer lists them
// among what it cannot run.
TEST(VulkanTape, TapeCallsAreNotUnsupported) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << vulkan.status().ToString();
  auto module = Parse(R"(HloModule tape
ENTRY main {
  x = f32[4] parameter(0)
  n = s32[] constant(0)
  pushed = s32[] custom-call(n, x), custom_call_target="kiln_tape_push", backend_config="0"
  popped = (s32[], f32[4]) custom-call(pushed), custom_call_target="kiln_tape_pop", backend_config="0"
  count = s32[] get-tuple-element(popped), index=0
  back = f32[4] get-tuple-element(popped), index=1
  ROOT out = (s32[], s32[], f32[4]) tuple(pushed, count, back)
}
)");
  ASSERT_NE(module, nullptr);
  const std::vector<std::string> unsupported = (*vulkan)->UnsupportedOps(*module);
  EXPECT_TRUE(unsupported.empty()) << unsupported.front();
  const Literal x = Literal::FromVector<float>({1.5f, -2, 0.25f, 8});
  StatusOr<std::vector<Literal>> got = testing::ExecuteLeaves(**vulkan, *module, std::vector<Literal>{x});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0], Literal::Scalar<int32_t>(1)) << "push returns its counter plus one";
  EXPECT_EQ((*got)[1], Literal::Scalar<int32_t>(0)) << "pop returns its counter minus one";
  EXPECT_EQ((*got)[2], x) << "the pop gives back what was pushed";
}

// A pop with nothing pushed before it is an internal error naming the tape.
TEST(VulkanTape, APopWithoutItsPushNamesTheTape) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << vulkan.status().ToString();
  auto module = Parse(R"(HloModule tape
ENTRY main {
  n = s32[] constant(1)
  ROOT popped = (s32[], f32[4]) custom-call(n), custom_call_target="kiln_tape_pop", backend_config="3"
}
)");
  ASSERT_NE(module, nullptr);
  StatusOr<std::vector<Literal>> got = testing::ExecuteLeaves(**vulkan, *module, std::vector<Literal>{});
  ASSERT_FALSE(got.ok()) << "a pop of an empty tape ran";
  EXPECT_EQ(got.status().code(), StatusCode::kInternal) << got.status().ToString();
  EXPECT_NE(got.status().message().find("tape 3"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("popped"), std::string::npos) << got.status().ToString();
}

}  // namespace
}  // namespace kiln::vulkan
