// Which sorts run the library sort (library_sort.h) and with what variant,
// key order, tiles and push constants, and that its embedded SPIR-V passes
// the steps every kernel passes. No device needed: the features are given.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/library_kernels.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/library_sort.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "core/lowering/bitonic_sort.h"

namespace kiln::vulkan {
namespace {

// jnp.sort's comparator of `type` keys, with `passengers` parameter pairs of
// `passenger` after them.
std::string JaxSortComparator(const std::string& type, const std::string& passenger = "") {
  std::string text = "cmp {\n  nan = " + type + "[] constant(nan)\n  zero = " + type + "[] constant(0)\n";
  for (const char* side : {"a", "b"}) {
    const std::string s = side;
    text += "  " + s + " = " + type + "[] parameter(" + (s == "a" ? "0" : "1") + ")\n  ne." + s +
            " = pred[] compare(" + s + ", " + s + "), direction=NE\n  eq." + s + " = pred[] compare(" + s +
            ", zero), direction=EQ\n  z." + s + " = " + type + "[] select(eq." + s + ", zero, " + s +
            ")\n  c." + s + " = " + type + "[] select(ne." + s + ", nan, z." + s + ")\n";
  }
  if (!passenger.empty())
    text += "  p0 = " + passenger + "[] parameter(2)\n  p1 = " + passenger + "[] parameter(3)\n";
  return text + "  ROOT lt = pred[] compare(c.a, c.b), direction=LT, type=TOTALORDER\n}\n";
}

// compare(`lhs`, `rhs`) of parameters named a (0) and b (1) with
// `direction` and `kind` (empty: the default comparison).
std::string KeyComparator(const std::string& type, const std::string& lhs, const std::string& rhs,
                          const std::string& direction, const std::string& kind,
                          const std::string& passenger = "") {
  std::string text = "cmp {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n";
  if (!passenger.empty())
    text += "  p0 = " + passenger + "[] parameter(2)\n  p1 = " + passenger + "[] parameter(3)\n";
  return text + "  ROOT lt = pred[] compare(" + lhs + ", " + rhs + "), direction=" + direction +
         (kind.empty() ? "" : ", type=" + kind) + "\n}\n";
}

// A module whose entry sorts `keys` (and `passengers`, if given) along
// `dimension` with `comparator`.
std::unique_ptr<Module> SortModule(const std::string& comparator, const std::string& keys,
                                   const std::string& passengers = "", int64_t dimension = 1) {
  std::string text = "HloModule s\n" + comparator + "ENTRY main {\n  k = " + keys + " parameter(0)\n";
  std::string operands = "k", result = keys;
  if (!passengers.empty()) {
    text += "  p = " + passengers + " parameter(1)\n";
    operands += ", p";
    result = "(" + keys + ", " + passengers + ")";
  }
  text += "  ROOT s = " + result + " sort(" + operands + "), dimensions={" + std::to_string(dimension) +
          "}, is_stable=true, to_apply=cmp\n}\n";
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

std::optional<SortPlan> SortPlanOf(const Module* module,
                                   const ShaderFeatures& features = AllShaderFeatures()) {
  if (module == nullptr) return std::nullopt;
  return PlanKernelSort(*module->entry(), features);
}

TEST(VulkanSortPlan, JaxSortAndArgsortTakeTheLibrarySort) {
  const std::unique_ptr<Module> sort = SortModule(JaxSortComparator("f32"), "f32[4,1000]");
  std::optional<SortPlan> plan = SortPlanOf(sort.get());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kBitonicSort32);
  EXPECT_EQ(plan->operands, 1);
  EXPECT_EQ(plan->shape.order, SortKeyOrder::kCanonicalTotal);
  EXPECT_EQ(plan->shape.descending, 0u);
  EXPECT_EQ(plan->shape.exponent, 0x7F800000u);
  EXPECT_EQ(plan->shape.nan_bits, 0x7FC00000u);
  EXPECT_EQ(plan->shape.zero_bits, 0u);
  EXPECT_EQ(plan->shape.rows, 4u);
  EXPECT_EQ(plan->shape.row_length, 1000u);
  EXPECT_EQ(plan->shape.padded_log2, 10u);
  EXPECT_EQ(plan->shape.inner, 1u);
  EXPECT_EQ(plan->shape.outputs, 4000u);
  EXPECT_EQ(plan->shape.passenger_words, 0u);

  const std::unique_ptr<Module> argsort =
      SortModule(JaxSortComparator("f32", "s32"), "f32[4,1000]", "s32[4,1000]");
  plan = SortPlanOf(argsort.get());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kBitonicSortPassenger32);
  EXPECT_EQ(plan->operands, 2);
  EXPECT_EQ(plan->shape.passenger_words, 1u);
}

TEST(VulkanSortPlan, KeyOrdersAndVariants) {
  struct Expected {
    std::string type, direction, kind, lhs;
    LibraryShader shader;
    SortKeyOrder order;
    uint32_t descending, exponent;
  };
  const std::vector<Expected> cases = {
      {"s32", "LT", "", "a", LibraryShader::kBitonicSort32, SortKeyOrder::kSigned, 0, 0},
      {"u32", "GT", "", "a", LibraryShader::kBitonicSort32, SortKeyOrder::kUnsigned, 1, 0},
      // compare(b, a) LT is descending.
      {"s64", "LT", "", "b", LibraryShader::kBitonicSort64, SortKeyOrder::kSigned, 1, 0},
      {"u8", "LT", "", "a", LibraryShader::kBitonicSort8, SortKeyOrder::kUnsigned, 0, 0},
      {"s16", "GT", "SIGNED", "b", LibraryShader::kBitonicSort16, SortKeyOrder::kSigned, 0, 0},
      {"f16", "LT", "TOTALORDER", "a", LibraryShader::kBitonicSort16, SortKeyOrder::kTotal, 0, 0x7C00},
      {"bf16", "GT", "TOTALORDER", "a", LibraryShader::kBitonicSort16, SortKeyOrder::kTotal, 1, 0x7F80},
      {"f32", "LT", "TOTALORDER", "a", LibraryShader::kBitonicSort32, SortKeyOrder::kTotal, 0, 0x7F800000},
      // A 64-bit float's exponent mask is its high word's.
      {"f64", "GT", "TOTALORDER", "a", LibraryShader::kBitonicSort64, SortKeyOrder::kTotal, 1, 0x7FF00000},
  };
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.type + " " + e.direction + " " + e.kind + " " + e.lhs);
    const std::string rhs = e.lhs == "a" ? "b" : "a";
    const std::unique_ptr<Module> module =
        SortModule(KeyComparator(e.type, e.lhs, rhs, e.direction, e.kind), e.type + "[3,100]");
    const std::optional<SortPlan> plan = SortPlanOf(module.get());
    ASSERT_TRUE(plan.has_value());
    EXPECT_EQ(plan->shader, e.shader);
    EXPECT_EQ(plan->shape.order, e.order);
    EXPECT_EQ(plan->shape.descending, e.descending);
    EXPECT_EQ(plan->shape.exponent, e.exponent);
  }
  // The f64 canonicalisation's constants, both words.
  const std::unique_ptr<Module> jax = SortModule(JaxSortComparator("f64", "s64"), "f64[3,100]", "s64[3,100]");
  const std::optional<SortPlan> plan = SortPlanOf(jax.get());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->shader, LibraryShader::kBitonicSortPassenger64);
  EXPECT_EQ(plan->shape.nan_bits, 0x7FF8000000000000ull);
  EXPECT_EQ(plan->shape.passenger_words, 2u);
  const std::vector<uint32_t> words = plan->shape.Words();
  ASSERT_EQ(words.size(), 14u);
  EXPECT_EQ(words[9], 0u);            // nan_lo
  EXPECT_EQ(words[10], 0x7FF80000u);  // nan_hi
}

TEST(VulkanSortPlan, OtherSortsStayGenerated) {
  const ShaderFeatures features = AllShaderFeatures();
  // The partial float order: NaNs are unordered.
  std::unique_ptr<Module> module = SortModule(KeyComparator("f32", "a", "b", "LT", ""), "f32[3,100]");
  EXPECT_FALSE(SortPlanOf(module.get()).has_value());
  // Two keys (lexicographic).
  module = SortModule(
      "cmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = s32[] parameter(2)\n"
      "  d = s32[] parameter(3)\n  lt = pred[] compare(a, b), direction=LT\n"
      "  eq = pred[] compare(a, b), direction=EQ\n  lt2 = pred[] compare(c, d), direction=LT\n"
      "  both = pred[] and(eq, lt2)\n  ROOT or = pred[] or(lt, both)\n}\n",
      "s32[3,100]", "s32[3,100]");
  EXPECT_FALSE(SortPlanOf(module.get()).has_value());
  // The key is the second operand.
  module = SortModule(
      "cmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n"
      "  d = f32[] parameter(3)\n  ROOT lt = pred[] compare(c, d), direction=LT, type=TOTALORDER\n}\n",
      "s32[3,100]", "f32[3,100]");
  EXPECT_FALSE(SortPlanOf(module.get()).has_value());
  // A 16-bit passenger.
  module = SortModule(KeyComparator("s32", "a", "b", "LT", "", "f16"), "s32[3,100]", "f16[3,100]");
  EXPECT_FALSE(SortPlanOf(module.get()).has_value());
  // Narrow keys on a device that cannot store them.
  ShaderFeatures narrow = features;
  narrow.storage8 = narrow.storage16 = false;
  module = SortModule(KeyComparator("u8", "a", "b", "LT", ""), "u8[3,100]");
  EXPECT_TRUE(SortPlanOf(module.get(), features).has_value());
  EXPECT_FALSE(SortPlanOf(module.get(), narrow).has_value());
  module = SortModule(KeyComparator("f16", "a", "b", "LT", "TOTALORDER"), "f16[3,100]");
  EXPECT_FALSE(SortPlanOf(module.get(), narrow).has_value());
  // 64-bit keys need no 64-bit arithmetic.
  narrow.i64 = narrow.f64 = false;
  module = SortModule(KeyComparator("s64", "a", "b", "LT", ""), "s64[3,100]");
  EXPECT_TRUE(SortPlanOf(module.get(), narrow).has_value());
}

TEST(VulkanSortPlan, ACpuDeviceKeepsItsSerialSortForShortRows) {
  ShaderFeatures cpu = AllShaderFeatures();
  cpu.cpu_device = true;
  cpu.max_loop_iterations = 65535;
  std::unique_ptr<Module> module = SortModule(JaxSortComparator("f32"), "f32[16,4096]");
  EXPECT_FALSE(SortPlanOf(module.get(), cpu).has_value());
  module = SortModule(JaxSortComparator("f32"), "f32[16,4097]");
  EXPECT_TRUE(SortPlanOf(module.get(), cpu).has_value());
}

TEST(VulkanSortPlan, TilesLeaveRoomForTheKeys) {
  ShaderFeatures features = AllShaderFeatures();
  features.max_shared_memory_bytes = 16384;
  // 32-bit keys: a number and a key, 8 bytes an element: 2048 of them.
  std::unique_ptr<Module> module = SortModule(KeyComparator("s32", "a", "b", "LT", ""), "s32[1,100000]");
  std::optional<SortPlan> plan = SortPlanOf(module.get(), features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->layout.tile, 2048);
  EXPECT_EQ(plan->layout.workgroup_size, 1024);
  ASSERT_EQ(plan->specialization().size(), 15u);
  EXPECT_EQ(plan->specialization()[0], 2048u);
  // 64-bit keys: 12 bytes an element.
  module = SortModule(KeyComparator("s64", "a", "b", "LT", ""), "s64[1,100000]");
  plan = SortPlanOf(module.get(), features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->layout.tile, 1024);
  // At most the device's invocations a workgroup.
  features.max_workgroup_size = 64;
  plan = SortPlanOf(module.get(), features);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->layout.tile, 128);
  EXPECT_EQ(plan->layout.workgroup_size, 64);
}

TEST(VulkanSortPlan, TheKernelsLaunchesAreTheNetworksWithTheShape) {
  const std::unique_ptr<Module> module =
      SortModule(JaxSortComparator("f32", "s32"), "f32[2,5000]", "s32[2,5000]");
  ASSERT_NE(module, nullptr);
  const std::optional<LibraryKernel> kernel = PlanLibraryKernel(*module->entry(), AllShaderFeatures(), "s");
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->shader, LibraryShader::kBitonicSortPassenger32);
  const GlslKernel& d = kernel->description;
  EXPECT_EQ(d.input_count, 2);
  EXPECT_EQ(d.output_count, 2);
  EXPECT_TRUE(d.has_scratch);
  EXPECT_EQ(d.binding_count, 5);
  const std::optional<SortPlan> plan = SortPlanOf(module.get());
  ASSERT_TRUE(plan.has_value());
  // Each launch's mode, block and stride as push constants; the shape as
  // specialization constants after the chunk.
  EXPECT_EQ(d.push_constant_bytes, 4 * kBitonicLaunchParameterCount);
  const std::vector<KernelLaunch> network = BitonicSortDispatches(plan->layout);
  ASSERT_EQ(d.launches.size(), network.size());
  ASSERT_GT(network.size(), 2u);  // rows of 8192 places pass across tiles of 2048
  for (size_t i = 0; i < network.size(); ++i) {
    EXPECT_EQ(d.launches[i].parameters, network[i].parameters) << "launch " << i;
    EXPECT_EQ(d.launches[i].grid.workgroups, network[i].grid.workgroups) << "launch " << i;
  }
  EXPECT_EQ(d.workgroup_size, plan->layout.workgroup_size);
  std::vector<uint32_t> constants{static_cast<uint32_t>(plan->layout.chunk)};
  const std::vector<uint32_t> shape = plan->shape.Words();
  constants.insert(constants.end(), shape.begin(), shape.end());
  EXPECT_EQ(kernel->specialization, constants);
}

TEST(VulkanSortPlan, TheProgramRunsTheLibrarySort) {
  const std::unique_ptr<Module> module =
      SortModule(JaxSortComparator("f32", "s32"), "f32[3,700]", "s32[3,700]");
  ASSERT_NE(module, nullptr);
  StatusOr<std::unique_ptr<VulkanProgram>> compiled = CompileForVulkan(*module, AllShaderFeatures(), 256, 2);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  const std::unique_ptr<VulkanProgram>& program = *compiled;
  ASSERT_EQ(program->shaders.size(), 1u);
  EXPECT_EQ(program->shaders[0].library, LibraryShader::kBitonicSortPassenger32);
  EXPECT_NE(program->shaders[0].glsl.source.find("library shader bitonic_sort_passenger_32"),
            std::string::npos)
      << program->shaders[0].glsl.source;
  EXPECT_EQ(program->kernels[0].launches.size(), program->shaders[0].glsl.launches.size());
}

TEST(VulkanLibraryShaders, EverySortVariantPassesTheSpirvSteps) {
  for (LibraryShader shader :
       {LibraryShader::kBitonicSort8, LibraryShader::kBitonicSort16, LibraryShader::kBitonicSort32,
        LibraryShader::kBitonicSort64, LibraryShader::kBitonicSortPassenger8,
        LibraryShader::kBitonicSortPassenger16, LibraryShader::kBitonicSortPassenger32,
        LibraryShader::kBitonicSortPassenger64}) {
    SCOPED_TRACE(std::string(LibraryShaderName(shader)));
    StatusOr<std::vector<uint32_t>> words = LibraryShaderSpirv(shader, kAllFloatControls);
    ASSERT_TRUE(words.ok()) << words.status().ToString();
    EXPECT_GT(words->size(), 5u);
    EXPECT_EQ((*words)[0], 0x07230203u);
  }
}

}  // namespace
}  // namespace kiln::vulkan
