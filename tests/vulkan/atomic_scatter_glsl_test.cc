// The atomic scatter's plan and shader without a device
// (glsl_atomic_scatter.h): which combiners become which atomics, the two
// launches (operand copy, then one invocation per update element), GLSL
// that glslang compiles for each kind, and the loop bound that lets a
// scatter of a million updates onto lavapipe, whose per-output-element
// form it refuses.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_atomic_scatter.h"
#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/shader_compiler.h"
#include "core/hlo_parser.h"

namespace kiln::vulkan {
namespace {

// `count` rows of `width` of `type` scattered into `rows` rows by `op`.
std::string AtomicPlanModule(const std::string& type, const std::string& combiner_root, int64_t rows,
                             int64_t count, int64_t width) {
  const std::string operand = type + "[" + std::to_string(rows) + "," + std::to_string(width) + "]";
  return "HloModule m\ncombine {\n  x = " + type + "[] parameter(0)\n  y = " + type +
         "[] parameter(1)\n  ROOT r = " + type + "[] " + combiner_root +
         "\n}\nENTRY main {\n  a = " + operand + " parameter(0)\n  i = s32[" + std::to_string(count) +
         ",1] parameter(1)\n  u = " + type + "[" + std::to_string(count) + "," + std::to_string(width) +
         "] parameter(2)\n  ROOT s = " + operand +
         " scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

struct PlannedScatter {
  std::unique_ptr<Module> module;
  AtomicScatterPlan plan;
};

PlannedScatter PlanAtomicScatterOf(const std::string& text,
                                   const ShaderFeatures& features = AllShaderFeatures()) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  PlannedScatter planned{std::move(module).value(), {}};
  planned.plan = PlanAtomicScatter(*planned.module->entry()->root(), features);
  return planned;
}

TEST(AtomicScatterPlanTest, CombinersBecomeAtomicInstructionsOrCompareAndSwap) {
  struct Case {
    std::string type, root, instruction;
    ScatterAtomicKind kind;
  };
  const std::vector<Case> cases = {
      {"s32", "add(x, y)", "atomicAdd", ScatterAtomicKind::kInstruction},
      {"u32", "add(y, x)", "atomicAdd", ScatterAtomicKind::kInstruction},
      {"s32", "maximum(x, y)", "atomicMax", ScatterAtomicKind::kInstruction},
      {"u32", "minimum(x, y)", "atomicMin", ScatterAtomicKind::kInstruction},
      {"s32", "xor(x, y)", "atomicXor", ScatterAtomicKind::kInstruction},
      {"f32", "add(x, y)", "atomicAdd", ScatterAtomicKind::kInstruction},
      {"f32", "maximum(x, y)", "", ScatterAtomicKind::kCompareSwap},
      {"s32", "multiply(x, y)", "", ScatterAtomicKind::kCompareSwap},
      {"s32", "subtract(x, y)", "", ScatterAtomicKind::kCompareSwap},
      {"s32", "add(x, x)", "", ScatterAtomicKind::kCompareSwap},
      {"f64", "add(x, y)", "", ScatterAtomicKind::kNone},
      {"s64", "add(x, y)", "", ScatterAtomicKind::kNone},
      {"f16", "add(x, y)", "", ScatterAtomicKind::kNone},
      {"s16", "add(x, y)", "", ScatterAtomicKind::kNone},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type + " " + c.root);
    const PlannedScatter planned = PlanAtomicScatterOf(AtomicPlanModule(c.type, c.root, 8, 5, 4));
    EXPECT_EQ(planned.plan.kind, c.kind);
    EXPECT_EQ(planned.plan.instruction, c.instruction);
  }
  // Without shaderBufferFloat32AtomicAdd an f32 add is a compare-and-swap
  // on the element's bits.
  ShaderFeatures no_float_atomic = AllShaderFeatures();
  no_float_atomic.float32_atomic_add = false;
  const PlannedScatter bits =
      PlanAtomicScatterOf(AtomicPlanModule("f32", "add(x, y)", 8, 5, 4), no_float_atomic);
  EXPECT_EQ(bits.plan.kind, ScatterAtomicKind::kCompareSwap);
  EXPECT_EQ(bits.plan.storage_type, "uint");
}

TEST(AtomicScatterPlanTest, VariadicScattersAreNotPlanned) {
  const PlannedScatter planned = PlanAtomicScatterOf(R"(HloModule m
pair {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  m = s32[] add(a, c)
  n = s32[] add(b, d)
  ROOT t = (s32[], s32[]) tuple(m, n)
}
ENTRY main {
  a = s32[8] parameter(0)
  b = s32[8] parameter(1)
  i = s32[4] parameter(2)
  u = s32[4] parameter(3)
  v = s32[4] parameter(4)
  ROOT s = (s32[8], s32[8]) scatter(a, b, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
})");
  EXPECT_EQ(planned.plan.kind, ScatterAtomicKind::kNone);
}

// The shader of each kind compiles; its launches copy every output element,
// then cover every update element, 64 invocations a workgroup.
TEST(AtomicScatterKernelTest, EachKindCompilesWithACopyAndAnUpdateLaunch) {
  ShaderFeatures no_float_atomic = AllShaderFeatures();
  no_float_atomic.float32_atomic_add = false;
  struct Case {
    std::string type, root;
    ShaderFeatures features;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"f32", "add(x, y)", AllShaderFeatures(), {"GL_EXT_shader_atomic_float", "atomicAdd(b3.d["}},
      {"f32", "add(x, y)", no_float_atomic, {"atomicCompSwap(b3.d[", "floatBitsToUint", "k_scatter_combine"}},
      {"s32", "add(x, y)", AllShaderFeatures(), {"atomicAdd(b3.d["}},
      {"f32", "maximum(x, y)", AllShaderFeatures(), {"atomicCompSwap(b3.d[", "k_scatter_combine"}},
      {"u32", "multiply(x, y)", AllShaderFeatures(), {"atomicCompSwap(b3.d[", "k_scatter_combine"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type + " " + c.root);
    const PlannedScatter planned =
        PlanAtomicScatterOf(AtomicPlanModule(c.type, c.root, 8192, 65536, 16), c.features);
    ASSERT_NE(planned.module, nullptr);
    StatusOr<GlslKernel> kernel = EmitGlslKernel(*planned.module->entry(), c.features, "scatter");
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    for (const std::string& part : c.expected)
      EXPECT_NE(kernel->source.find(part), std::string::npos) << part << " in\n" << kernel->source;
    EXPECT_EQ(kernel->push_constant_bytes, kAtomicScatterPushConstantBytes);
    ASSERT_EQ(kernel->launches.size(), 2u);
    EXPECT_EQ(kernel->launches[0].parameters, std::vector<int64_t>{kAtomicScatterCopyMode});
    EXPECT_EQ(kernel->launches[0].grid.workgroups[0], 8192 * 16 / kGlslWorkgroupSize);
    EXPECT_EQ(kernel->launches[1].parameters, std::vector<int64_t>{kAtomicScatterUpdateMode});
    EXPECT_EQ(kernel->launches[1].grid.workgroups[0], 65536 * 16 / kGlslWorkgroupSize);
    for (const KernelLaunch& launch : kernel->launches)
      EXPECT_EQ(launch.grid.workgroup_size[0], kGlslWorkgroupSize);
    StatusOr<std::vector<uint32_t>> spirv =
        CompileGlslToSpirv(kernel->source, kernel->name, kAllFloatControls);
    EXPECT_TRUE(spirv.ok()) << spirv.status().ToString() << "\n" << kernel->source;
  }
}

// x.at[idx].add(u) with a million updates of 16 into 100k rows: per output
// element that is every update for each, past lavapipe's 65535 loop
// iterations an invocation; one invocation per update element runs 5
// passes of a grid-stride loop (16M updates, 65535 x 64 invocations).
TEST(AtomicScatterKernelTest, AMillionUpdatesStayWithinLavapipesLoopLimit) {
  ShaderFeatures lavapipe = AllShaderFeatures();
  lavapipe.max_loop_iterations = 65535;
  for (const char* type : {"f32", "s32"}) {
    SCOPED_TRACE(type);
    const PlannedScatter planned =
        PlanAtomicScatterOf(AtomicPlanModule(type, "add(x, y)", 100000, 1 << 20, 16), lavapipe);
    ASSERT_NE(planned.module, nullptr);
    EXPECT_TRUE(CheckGlslEmittable(*planned.module->entry(), lavapipe).ok());
    StatusOr<GlslKernel> kernel = EmitGlslKernel(*planned.module->entry(), lavapipe, "scatter");
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    EXPECT_EQ(kernel->max_loop_iterations, 5);
  }
  // The per-output-element scatter (f64: no atomics planned) is refused.
  const PlannedScatter wide =
      PlanAtomicScatterOf(AtomicPlanModule("f64", "add(x, y)", 100000, 1 << 20, 16), lavapipe);
  ASSERT_NE(wide.module, nullptr);
  const Status refused = CheckGlslEmittable(*wide.module->entry(), lavapipe);
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented) << refused.ToString();
}

}  // namespace
}  // namespace kiln::vulkan
