// Scatters on the vulkan backend (lavapipe, validation on) against the
// interpreter, on the path glsl_atomic_scatter.h gives them: the operand
// copied, then one invocation per update element combining atomically.
// Duplicate indices, out-of-bounds indices (whose windows XLA skips),
// windows of 16-element rows and of 4 elements along a 2-D index vector,
// scalar updates; add as atomicAdd (f32 through VK_EXT_shader_atomic_float,
// which lavapipe has, and through the compare-and-swap loop on a device
// played without it), s32 add and max, u32 min as atomic instructions,
// f32 max and s32 multiply in the compare-and-swap loop, an operand and
// updates computed in the kernel. Integer results must be exact; float sums
// may differ from the interpreter's sequential order by rounding: the
// comparison (interpreter_agreement.h) allows 1e-4 + 1e-5 relative, and the
// values here are O(1) sums of at most a few dozen terms. Combiners that are
// not atomic-able (f64, two arrays scattered together) keep the
// per-output-element scatter and still agree. Rows of parameters added
// (f32 with the float atomic, s32) take the library scatter-add instead
// (library_scatter.h), with the same two launches.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

// combiner { x, y: type[] ; ROOT r = op(x, y) }
std::string AtomicScatterCombiner(const std::string& type, const std::string& op) {
  return "combine {\n  x = " + type + "[] parameter(0)\n  y = " + type +
         "[] parameter(1)\n  ROOT r = " + type + "[] " + op + "(x, y)\n}\n";
}

// `count` rows of `width` scattered into rows x width by one index each.
std::string AtomicScatterRowsModule(const std::string& type, const std::string& op, int64_t rows,
                                    int64_t count, int64_t width) {
  const std::string operand = type + "[" + std::to_string(rows) + "," + std::to_string(width) + "]";
  const std::string updates = type + "[" + std::to_string(count) + "," + std::to_string(width) + "]";
  return "HloModule rows\n" + AtomicScatterCombiner(type, op) + "ENTRY main {\n  a = " + operand +
         " parameter(0)\n  i = s32[" + std::to_string(count) + ",1] parameter(1)\n  u = " + updates +
         " parameter(2)\n  ROOT s = " + operand +
         " scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

// Deterministic values: small integers (exact in every type) or, for
// floats with `fractions`, multiples of 1/8 in [-4, 4).
std::vector<double> AtomicScatterValues(int64_t count, uint32_t seed, bool fractions) {
  std::vector<double> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (double& value : values) {
    state = state * 1664525u + 1013904223u;
    const double whole = static_cast<double>((state >> 16) % 64);
    value = fractions ? whole / 8.0 - 4.0 : whole - 20.0;
  }
  return values;
}

Literal AtomicScatterArray(ElementType type, const std::vector<int64_t>& dims, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<double> values = AtomicScatterValues(count, seed, IsFloating(type));
  if (type == ElementType::kU32)
    for (double& value : values) value += 20.0;
  StatusOr<Literal> literal = Literal::FromVector(values, dims).Convert(type);
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal(Shape(type, dims));
}

// Indices from `low` to `high` - 1 (duplicates when there are more indices
// than values; out of bounds where the range passes the operand's).
Literal AtomicScatterIndices(const std::vector<int64_t>& dims, int32_t low, int32_t high, uint32_t seed) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int32_t> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (int32_t& value : values) {
    state = state * 22695477u + 1u;
    value = low + static_cast<int32_t>((state >> 8) % static_cast<uint32_t>(high - low));
  }
  return Literal::FromVector(values, dims);
}

std::unique_ptr<Module> ParseAtomicScatterModule(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

// The shader source of the kernel whose root is the scatter, compiled for
// lavapipe's features changed by `edit`, and its launches.
struct ScatterKernelSeen {
  std::string source;
  size_t launches = 0;
};

ScatterKernelSeen CompiledScatterKernel(const Module& module,
                                        const std::function<void(ShaderFeatures&)>& edit) {
  StatusOr<std::shared_ptr<Device>> device = Device::Default();
  EXPECT_TRUE(device.ok()) << device.status().ToString();
  if (!device.ok()) return {};
  ShaderFeatures features = (*device)->shader_features();
  if (edit) edit(features);
  StatusOr<std::unique_ptr<VulkanProgram>> program = CompileForVulkan(module, features, 256, 2);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return {};
  for (size_t k = 0; k < (*program)->kernels.size(); ++k) {
    if ((*program)->kernels[k].computation->root()->opcode == Opcode::kScatter)
      return {(*program)->shaders[k].glsl.source, (*program)->kernels[k].launches.size()};
  }
  ADD_FAILURE() << "no kernel has the scatter as its root";
  return {};
}

class VulkanAtomicScatterTest : public ::testing::Test {
 protected:
  void TearDown() override { SetShaderFeaturesOverrideForTesting(nullptr); }

  // Runs `text` on arguments of the module's parameter shapes (indices
  // from `low` to `high`), checks the scatter's kernel has two launches
  // and `expected` in its source (or, for `expected` empty, one launch:
  // the per-output-element scatter), and compares with the interpreter.
  void Check(const std::string& text, int32_t low, int32_t high, const std::string& expected,
             const std::function<void(ShaderFeatures&)>& edit = nullptr) {
    std::unique_ptr<Module> module = ParseAtomicScatterModule(text);
    ASSERT_NE(module, nullptr);
    const ScatterKernelSeen seen = CompiledScatterKernel(*module, edit);
    if (expected.empty()) {
      EXPECT_EQ(seen.launches, 0u) << seen.source;
    } else {
      EXPECT_EQ(seen.launches, 2u) << seen.source;
      EXPECT_NE(seen.source.find(expected), std::string::npos) << expected << " in\n" << seen.source;
    }
    std::vector<Literal> arguments;
    uint32_t seed = 1;
    for (const Instruction* parameter : module->entry()->parameters()) {
      const Shape& shape = parameter->shape;
      if (shape.element_type() == ElementType::kS32 && parameter->name == "i") {
        arguments.push_back(AtomicScatterIndices(shape.dimensions(), low, high, seed++));
      } else {
        arguments.push_back(AtomicScatterArray(shape.element_type(), shape.dimensions(), seed++));
      }
    }
    SetShaderFeaturesOverrideForTesting(edit);
    ExpectVulkanAgreesWithInterpreter(*module, arguments, text);
  }
};

// 300 rows of 16 into 64 rows, indices -3 .. 66: duplicates and both kinds
// of out-of-bounds index. Adding rows of parameters is the library
// scatter-add's (library_scatter.h), through the float atomic.
TEST_F(VulkanAtomicScatterTest, AddsRowsOfF32WithTheFloatAtomic) {
  Check(AtomicScatterRowsModule("f32", "add", 64, 300, 16), -3, 67, "library shader scatter_add_f32");
}

TEST_F(VulkanAtomicScatterTest, AddsRowsOfF32WithCompareAndSwapWithoutTheFloatAtomic) {
  Check(AtomicScatterRowsModule("f32", "add", 64, 300, 16), -3, 67, "atomicCompSwap(",
        [](ShaderFeatures& features) { features.float32_atomic_add = false; });
}

TEST_F(VulkanAtomicScatterTest, IntegerCombinersAreAtomicInstructionsAndExact) {
  Check(AtomicScatterRowsModule("s32", "add", 64, 300, 16), -3, 67, "library shader scatter_add_i32");
  Check(AtomicScatterRowsModule("s32", "maximum", 64, 300, 16), -3, 67, "atomicMax(");
  Check(AtomicScatterRowsModule("u32", "minimum", 64, 300, 16), -3, 67, "atomicMin(");
}

TEST_F(VulkanAtomicScatterTest, OtherCombinersRunInACompareAndSwapLoop) {
  Check(AtomicScatterRowsModule("f32", "maximum", 64, 300, 16), -3, 67, "atomicCompSwap(");
  // Wrapping products are associative: exact in any order.
  Check(AtomicScatterRowsModule("s32", "multiply", 16, 40, 8), -1, 17, "atomicCompSwap(");
}

// A 2-D index vector and a window of 4 along the operand's last dimension:
// windows starting past 26 do not fit and are skipped whole.
TEST_F(VulkanAtomicScatterTest, WindowsThatDoNotFitAreSkipped) {
  const std::string text = "HloModule windows\n" + AtomicScatterCombiner("f32", "add") +
                           R"(ENTRY main {
  a = f32[20,30] parameter(0)
  i = s32[200,2] parameter(1)
  u = f32[200,4] parameter(2)
  ROOT s = f32[20,30] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=combine
}
)";
  Check(text, -1, 30, "atomicAdd(");
}

// Scalar updates, many more than the operand's elements; the operand and
// the updates computed before the scatter (kernels of their own, so the
// scatter's kernel adds parameters: the library scatter-add).
TEST_F(VulkanAtomicScatterTest, ScalarUpdatesIntoAComputedOperand) {
  const std::string text = "HloModule scalars\n" + AtomicScatterCombiner("f32", "add") +
                           R"(ENTRY main {
  z = f32[] constant(0)
  a = f32[100] broadcast(z), dimensions={}
  i = s32[1000] parameter(0)
  v = f32[1000] parameter(1)
  u = f32[1000] multiply(v, v)
  ROOT s = f32[100] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)";
  Check(text, -5, 105, "library shader scatter_add_f32");
}

TEST_F(VulkanAtomicScatterTest, CombinersThatAreNotAtomicKeepThePerElementScatter) {
  Check(AtomicScatterRowsModule("f64", "add", 64, 300, 16), -3, 67, "");
  const std::string pair = R"(HloModule pair
pair {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  m = s32[] maximum(a, c)
  n = f32[] add(b, d)
  ROOT t = (s32[], f32[]) tuple(m, n)
}
ENTRY main {
  a = s32[64] parameter(0)
  b = f32[64] parameter(1)
  i = s32[200] parameter(2)
  u = s32[200] parameter(3)
  v = f32[200] parameter(4)
  ROOT s = (s32[64], f32[64]) scatter(a, b, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
}
)";
  Check(pair, -2, 66, "");
}

}  // namespace
}  // namespace kiln::vulkan
