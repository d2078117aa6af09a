// A Vulkan kernel binds at most the device's storage buffers: fusion keeps
// every kernel within ShaderFeatures::max_storage_buffers (the emittable
// table carries it), so programs wider than that compile and run on
// lavapipe (32 bindings, its push-descriptor limit) and agree with the
// interpreter; and the backend builds its emittable table once, not per
// compile.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_emittable.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/backend.h"
#include "core/hlo_parser.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

// benchmarks/compile_time's `wide` shape: `leaves` multiplies of one
// parameter by distinct constants, joined by a balanced tree of maximum.
// At 250 leaves (its 1k size) a fused kernel bound 65 buffers.
std::string WideModule(int leaves) {
  std::string text = "HloModule wide\nENTRY main {\n  p = f32[16] parameter(0)\n";
  std::vector<std::string> level;
  for (int i = 0; i < leaves; ++i) {
    const std::string n = std::to_string(i);
    text += "  c" + n + " = f32[] constant(" + std::to_string(i + 2) + ")\n";
    text += "  b" + n + " = f32[16] broadcast(c" + n + "), dimensions={}\n";
    text += "  m" + n + " = f32[16] multiply(p, b" + n + ")\n";
    level.push_back("m" + n);
  }
  for (int node = 0; level.size() > 1;) {
    std::vector<std::string> joined;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      joined.push_back("t" + std::to_string(node++));
      text += "  " + joined.back() + " = f32[16] maximum(" + level[j] + ", " + level[j + 1] + ")\n";
    }
    if (level.size() % 2 == 1) joined.push_back(level.back());
    level = std::move(joined);
  }
  return text + "  ROOT r = f32[16] negate(" + level[0] + ")\n}\n";
}

// A sum of `inputs` parameters, one add after another.
std::string SumModule(int inputs) {
  std::string text = "HloModule sum\nENTRY main {\n";
  for (int i = 0; i < inputs; ++i)
    text += "  p" + std::to_string(i) + " = f32[8] parameter(" + std::to_string(i) + ")\n";
  std::string last = "p0";
  for (int i = 1; i < inputs; ++i) {
    const std::string next = "s" + std::to_string(i);
    text += std::string(i + 1 == inputs ? "  ROOT " : "  ") + next + " = f32[8] add(" + last + ", p" +
            std::to_string(i) + ")\n";
    last = next;
  }
  return text + "}\n";
}

std::vector<Literal> Ramps(int count, int64_t length) {
  std::vector<Literal> arguments;
  for (int i = 0; i < count; ++i) {
    std::vector<float> values;
    for (int64_t e = 0; e < length; ++e)
      values.push_back(0.25f * static_cast<float>((e * 7 + i) % 11) - 1.0f);
    arguments.push_back(Literal::FromVector<float>(values, {length}));
  }
  return arguments;
}

TEST(VulkanBufferLimit, WideProgramsRunOnLavapipeAndAgreeWithTheInterpreter) {
  auto wide = ParseHloModule(WideModule(250));
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  ExpectVulkanAgreesWithInterpreter(**wide, Ramps(1, 16), "wide (250 leaves)");
  auto sum = ParseHloModule(SumModule(100));
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  ExpectVulkanAgreesWithInterpreter(**sum, Ramps(100, 8), "sum of 100 inputs");
}

TEST(VulkanBufferLimit, NoKernelBindsMoreThanTheDevicesBuffers) {
  for (const int limit : {4, 8, 32}) {
    SCOPED_TRACE("max_storage_buffers " + std::to_string(limit));
    ShaderFeatures features = AllShaderFeatures();
    features.max_storage_buffers = limit;
    for (const std::string& text : {WideModule(250), SumModule(100)}) {
      auto module = ParseHloModule(text);
      ASSERT_TRUE(module.ok()) << module.status().ToString();
      StatusOr<std::unique_ptr<VulkanProgram>> program = CompileForVulkan(
          **module, features, /*offset_alignment=*/256, /*optimization_level=*/2, "", "", nullptr);
      ASSERT_TRUE(program.ok()) << (*module)->name() << ": " << program.status().ToString();
      ASSERT_FALSE((*program)->shaders.empty());
      int most = 0;
      for (const CompiledShader& shader : (*program)->shaders)
        most = std::max(most, shader.glsl.binding_count);
      EXPECT_LE(most, limit) << (*module)->name();
      // The limit, not a smaller bound, decides how long the chain's kernels grow.
      if ((*module)->name() == "sum") {
        EXPECT_EQ(most, limit);
      }
    }
  }
}

TEST(VulkanBufferLimit, AnInstructionWiderThanTheDeviceIsRefusedByName) {
  auto module = ParseHloModule(R"(HloModule wide_concatenate
ENTRY main {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  d = f32[2] parameter(3)
  ROOT r = f32[8] concatenate(a, b, c, d), dimensions={0}
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ShaderFeatures features = AllShaderFeatures();
  features.max_storage_buffers = 4;  // the concatenate binds five
  StatusOr<std::unique_ptr<VulkanProgram>> program =
      CompileForVulkan(**module, features, 256, /*optimization_level=*/2, "", "", nullptr);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("concatenate"), std::string::npos) << program.status().ToString();
  EXPECT_NE(program.status().message().find("5 storage buffers and this device at most 4"), std::string::npos)
      << program.status().ToString();
  EXPECT_EQ(UnsupportedDeviceOps(**module, VulkanLoweringRules(features, 256)),
            std::vector<std::string>{"concatenate"});
  features.max_storage_buffers = 5;
  EXPECT_TRUE(CompileForVulkan(**module, features, 256, 2, "", "", nullptr).ok());
}

TEST(VulkanEmittableTableCache, TheBackendBuildsItsTableOncePerDevice) {
  const int64_t before = GlslEmittableTablesMade();
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << vulkan.status().ToString();
  const int64_t made = GlslEmittableTablesMade() - before;
  EXPECT_EQ(made, 1);
  for (const std::string& text : {WideModule(8), SumModule(5), WideModule(3)}) {
    auto module = ParseHloModule(text);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    EXPECT_TRUE((*vulkan)->UnsupportedOps(**module).empty());
    StatusOr<std::unique_ptr<Executable>> executable = (*vulkan)->Compile(**module, CompileOptions{});
    ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  }
  EXPECT_EQ(GlslEmittableTablesMade() - before, made)
      << "three compiles and three UnsupportedOps built tables";
}

}  // namespace
}  // namespace kiln::vulkan
