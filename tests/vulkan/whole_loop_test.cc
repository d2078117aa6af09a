// Small while loops run whole on vulkan (glsl_whole_loop.h): which loops
// become one loop shader, what the shader is made of, and, on lavapipe with
// the validation layers on, that such loops give the interpreter's results:
// zero trips, trips past one dispatch's budget, row reductions in the
// body, state of 1-, 2- and 4-byte types moved by the shader's copies.
// (Deadlines and cancellation of an endless loop on every backend, this
// one's whole loops included: tests/unit/execution_stop_test.cc.)
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_whole_loop.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/unit/whole_loop_programs.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

using testing::whole_loop::kConditionalLoop;
using testing::whole_loop::kForiAccumulate;
using testing::whole_loop::kForiX;
using testing::whole_loop::kRowReductionLoop;

// Sets one environment variable for a scope and puts back what was there.
class WholeLoopSetting {
 public:
  explicit WholeLoopSetting(const char* value) {
    if (const char* old = std::getenv(kName)) saved_ = old;
    ::setenv(kName, value, 1);
  }
  ~WholeLoopSetting() {
    if (saved_) {
      ::setenv(kName, saved_->c_str(), 1);
    } else {
      ::unsetenv(kName);
    }
  }

 private:
  static constexpr const char* kName = "KILN_VULKAN_WHOLE_LOOPS";
  std::optional<std::string> saved_;
};

// State of 1-, 2- and 4-byte types (a pred flag that turns false, s8[3] of
// 3 bytes, f16[3] of 6, u8[4] of 4) passed through the body unchanged and
// changed: the loop shader copies each in words of the size it allows.
constexpr char kNarrowStateLoop[] = R"(HloModule narrow_state_loop
cond {
  s = (pred[], s32[], s8[3], f16[3], u8[4]) parameter(0)
  ROOT go = pred[] get-tuple-element(s), index=0
}
body {
  s = (pred[], s32[], s8[3], f16[3], u8[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=1
  a = s8[3] get-tuple-element(s), index=2
  h = f16[3] get-tuple-element(s), index=3
  u = u8[4] get-tuple-element(s), index=4
  one = s32[] constant(1)
  next = s32[] add(i, one)
  limit = s32[] constant(13)
  go = pred[] compare(next, limit), direction=LT
  k = s8[] constant(3)
  ks = s8[3] broadcast(k), dimensions={}
  a2 = s8[3] subtract(a, ks)
  half = f16[] constant(0.5)
  hs = f16[3] broadcast(half), dimensions={}
  h2 = f16[3] add(h, hs)
  ROOT t = (pred[], s32[], s8[3], f16[3], u8[4]) tuple(go, next, a2, h2, u)
}
ENTRY main {
  go = pred[] parameter(0)
  a = s8[3] parameter(1)
  h = f16[3] parameter(2)
  u = u8[4] parameter(3)
  zero = s32[] constant(0)
  init = (pred[], s32[], s8[3], f16[3], u8[4]) tuple(go, zero, a, h, u)
  ROOT w = (pred[], s32[], s8[3], f16[3], u8[4]) while(init), condition=cond, body=body
})";

// The same accumulation over 5000 elements, past what a loop shader takes.
std::string LargeForiAccumulate() {
  std::string text = kForiAccumulate;
  const std::string initial = "acc = f32[8] constant({0.1, -0.2, 0.3, 0, 1e-3, 5, -7.5, 0.25})";
  text.replace(text.find(initial), initial.size(),
               "half = f32[] constant(0.5)\n  acc = f32[8] broadcast(half), dimensions={}");
  for (size_t at = text.find("f32[8]"); at != std::string::npos; at = text.find("f32[8]", at))
    text.replace(at, 6, "f32[5000]");
  return text;
}

std::unique_ptr<Module> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

StatusOr<std::unique_ptr<VulkanProgram>> CompileProgram(
    const std::string& text, const ShaderFeatures& features = AllShaderFeatures()) {
  std::unique_ptr<Module> module = Parse(text);
  if (module == nullptr) return InvalidArgument("the test's module does not parse");
  return CompileForVulkan(*module, features, /*offset_alignment=*/256, /*optimization_level=*/2);
}

Literal Floats(const std::vector<float>& values) { return Literal::FromVector<float>(values); }
Literal S32(int32_t value) { return Literal::Scalar<int32_t>(value); }

TEST(VulkanWholeLoopPlan, ASmallLoopIsOneShaderOfOneWorkgroup) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program, CompileProgram(kForiAccumulate));
  ASSERT_EQ(program->whole_loops.size(), 1u);
  const VulkanWholeLoop& loop = program->whole_loops[0];
  const GlslKernel& shader = loop.shader.glsl;
  EXPECT_EQ(loop.trips_per_launch, kWholeLoopTripsPerLaunch);
  EXPECT_EQ(shader.workgroup_size, kGlslLoopWorkgroupSize);
  EXPECT_EQ(shader.binding_count, 1 + static_cast<int>(loop.loop.slots.size()));
  EXPECT_EQ(shader.push_constant_bytes, 4);
  EXPECT_FALSE(loop.shader.spirv.empty());
  ASSERT_NE(loop.loop.step, nullptr);
  EXPECT_EQ(loop.loop.step->kind, ProgramStep::Kind::kWhile);
  // The predicate is read, then a barrier before anyone acts on it; every
  // step ends with a buffer barrier.
  const std::string& source = shader.source;
  const size_t test = source.find("bool k_go = ");
  ASSERT_NE(test, std::string::npos) << source;
  EXPECT_EQ(source.find("barrier();", test), source.find('\n', test) + 1 + 4) << source;
  EXPECT_NE(source.find("memoryBarrierBuffer();\n    barrier();"), std::string::npos) << source;
  EXPECT_NE(source.find("coherent buffer"), std::string::npos) << source;
  EXPECT_EQ(source.find("gl_GlobalInvocationID"), std::string::npos) << source;
}

// A loop with conditionals in its body is still one shader: each branch's
// steps inline, chosen by the selector every invocation has read.
TEST(VulkanWholeLoopPlan, ConditionalsInTheBodyInlineEveryBranch) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program, CompileProgram(kConditionalLoop));
  ASSERT_EQ(program->whole_loops.size(), 1u);
  const std::string& source = program->whole_loops[0].shader.glsl.source;
  EXPECT_NE(source.find("k_branch0_index > 2 ? 2u"), std::string::npos) << source;
  EXPECT_NE(source.find("} else if (k_branch0 == 2u) {"), std::string::npos) << source;
  EXPECT_NE(source.find("uint k_branch1 = uint("), std::string::npos) << source;
}

// Lavapipe stops an invocation after so many loop iterations: a dispatch
// then runs fewer trips, within that limit.
TEST(VulkanWholeLoopPlan, ADeviceLoopLimitShortensEachDispatch) {
  ShaderFeatures lavapipe = AllShaderFeatures();
  lavapipe.max_loop_iterations = 65535;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program,
                            CompileProgram(kRowReductionLoop, lavapipe));
  ASSERT_EQ(program->whole_loops.size(), 1u);
  const VulkanWholeLoop& loop = program->whole_loops[0];
  EXPECT_LT(loop.trips_per_launch, kWholeLoopTripsPerLaunch);
  EXPECT_GE(loop.trips_per_launch, 100);
  EXPECT_LE(loop.shader.glsl.max_loop_iterations, lavapipe.max_loop_iterations);
  const int64_t wide_trips = loop.trips_per_launch;
  // On a CPU device the workgroup is one subgroup: more passes a step, so
  // fewer trips a dispatch, still within the limit.
  lavapipe.cpu_device = true;
  KILN_ASSERT_OK_AND_ASSIGN(program, CompileProgram(kRowReductionLoop, lavapipe));
  ASSERT_EQ(program->whole_loops.size(), 1u);
  const VulkanWholeLoop& narrow = program->whole_loops[0];
  EXPECT_EQ(narrow.shader.glsl.workgroup_size, lavapipe.subgroup_size);
  EXPECT_LT(narrow.trips_per_launch, wide_trips);
  EXPECT_GE(narrow.trips_per_launch, 4);
  EXPECT_LE(narrow.shader.glsl.max_loop_iterations, lavapipe.max_loop_iterations);
}

TEST(VulkanWholeLoopPlan, LargeArraysAndTheSwitchKeepLoopsOnTheHost) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> large, CompileProgram(LargeForiAccumulate()));
  EXPECT_TRUE(large->whole_loops.empty());
  {
    WholeLoopSetting off("0");
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program, CompileProgram(kForiAccumulate));
    EXPECT_TRUE(program->whole_loops.empty());
  }
  {
    WholeLoopSetting bad("sometimes");
    const Status status = CompileProgram(kForiAccumulate).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find("KILN_VULKAN_WHOLE_LOOPS='sometimes'"), std::string::npos)
        << status.message();
  }
}

// A device that binds fewer buffers than the loop needs keeps it on the host.
TEST(VulkanWholeLoopPlan, TooManyBuffersForTheDeviceKeepTheLoopOnTheHost) {
  ShaderFeatures few = AllShaderFeatures();
  few.max_storage_buffers = 4;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program, CompileProgram(kForiAccumulate, few));
  EXPECT_TRUE(program->whole_loops.empty());
}

// On lavapipe, validation on: the results of each loop agree with the
// interpreter's, run whole and (KILN_VULKAN_WHOLE_LOOPS=0) from the host.
void ExpectAgreementBothWays(const std::string& text, const std::vector<Literal>& arguments,
                             const std::string& what) {
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  ExpectVulkanAgreesWithInterpreter(*module, arguments, what + ", run whole");
  WholeLoopSetting off("0");
  ExpectVulkanAgreesWithInterpreter(*module, arguments, what + ", from the host");
}

TEST(VulkanWholeLoop, ForiLoopsOfZeroToThousandsOfTripsAgreeWithTheInterpreter) {
  for (int32_t n : {77, 0, -5, 1, 9000}) {
    ExpectAgreementBothWays(kForiAccumulate, {S32(n), Floats(kForiX)}, "n = " + std::to_string(n));
  }
}

TEST(VulkanWholeLoop, RowReductionsInTheBodyAgreeWithTheInterpreter) {
  Literal m(Shape(ElementType::kF32, {16, 64}));
  int next = 0;
  for (float& value : m.data<float>()) value = static_cast<float>((next++ * 7) % 9) - 4.0f;
  std::vector<Literal> arguments;
  arguments.push_back(std::move(m));
  ExpectAgreementBothWays(kRowReductionLoop, arguments, "row reductions");
}

TEST(VulkanWholeLoop, ConditionalsInTheBodyAgreeWithTheInterpreter) {
  std::vector<Literal> arguments;
  arguments.push_back(Floats({1.0f, -2.0f, 0.5f, 3.0f, 0.0f, -0.25f, 8.0f, 1e-3f}));
  arguments.push_back(Floats({0.5f, 0.5f, -1.0f, 2.0f, 1.0f, 0.0f, -3.0f, 0.125f}));
  ExpectAgreementBothWays(kConditionalLoop, arguments, "conditionals");
}

// Queue submissions of one execution of `executable` with `n` trips.
StatusOr<uint64_t> SubmissionsOfOneRun(Backend& backend, Executable& executable, int32_t n) {
  kiln::Device* device = backend.devices()[0];
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> trips, backend.BufferFromLiteral(S32(n), device));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> x, backend.BufferFromLiteral(Floats(kForiX), device));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<vulkan::Device> vulkan, vulkan::Device::Default());
  const std::vector<DeviceBuffer*> arguments = {trips.get(), x.get()};
  const uint64_t before = vulkan->submissions();
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                        executable.Execute(arguments, ExecuteOptions{}));
  return vulkan->submissions() - before;
}

// What a loop costs in round trips to the device: run from the host, one
// submission a trip (the predicate's read-back rides in it, staging or
// not: vulkan.runtime_staging runs this with buffers the host cannot map);
// run whole, one for a whole dispatch's budget of trips.
TEST(VulkanWholeLoop, HostTripsAreOneSubmissionEachAndAWholeLoopOneInAll) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> backend, CreateBackend("vulkan"));
  std::unique_ptr<Module> module = Parse(kForiAccumulate);
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Executable> from_host;
  {
    WholeLoopSetting off("0");
    KILN_ASSERT_OK_AND_ASSIGN(from_host, backend->Compile(*module, CompileOptions{}));
  }
  KILN_ASSERT_OK_AND_ASSIGN(const uint64_t ten, SubmissionsOfOneRun(*backend, *from_host, 10));
  KILN_ASSERT_OK_AND_ASSIGN(const uint64_t thirty, SubmissionsOfOneRun(*backend, *from_host, 30));
  EXPECT_EQ(thirty - ten, 20u) << "submissions of 10 trips " << ten << ", of 30 " << thirty;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> whole, backend->Compile(*module, CompileOptions{}));
  KILN_ASSERT_OK_AND_ASSIGN(const uint64_t whole_ten, SubmissionsOfOneRun(*backend, *whole, 10));
  KILN_ASSERT_OK_AND_ASSIGN(const uint64_t whole_thousand, SubmissionsOfOneRun(*backend, *whole, 1000));
  EXPECT_EQ(whole_thousand, whole_ten);
  EXPECT_LE(whole_ten, 3u);
}

TEST(VulkanWholeLoop, NarrowStateTypesAgreeWithTheInterpreter) {
  KILN_ASSERT_OK_AND_ASSIGN(const Literal halves,
                            Literal::FromVector<float>({1.0f, -2.5f, 0.25f}).Convert(ElementType::kF16));
  for (bool go : {true, false}) {
    std::vector<Literal> arguments;
    arguments.push_back(Literal::Scalar<bool>(go));
    arguments.push_back(Literal::FromVector<int8_t>({100, -7, 0}));
    arguments.push_back(halves);
    arguments.push_back(Literal::FromVector<uint8_t>({1, 2, 250, 0}));
    ExpectAgreementBothWays(kNarrowStateLoop, arguments, go ? "flag set" : "flag clear");
  }
}

}  // namespace
}  // namespace kiln::vulkan
