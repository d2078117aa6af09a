// Scatter-adds of rows that run the library scatter-add
// (library_scatter.h, shaders/scatter_add.comp) on lavapipe with the
// validation layers on, against the interpreter: f32 (VK_EXT_shader_atomic_float),
// s32 and u32 (exact; u32 sums wrap), indices with duplicates, negative and
// past the rows (skipped), indices as [U, 1] and as scalars, rows of one
// element, of 16 and of 3 x 5, two dimensions of indices, odd counts.
// Float values are multiples of 1/8 in [-4, 4): their sums of a few dozen
// terms are exact in any order, so every type is compared bit for bit.
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <span>
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

struct ScatterAddCase {
  std::string type;
  std::string index_type;
  std::vector<int64_t> operand;  // rows, then a row's dimensions
  std::vector<int64_t> indices;  // the indices' dimensions (a last 1: a vector of one)
  bool index_vector = true;      // index_vector_dim is the indices' last (of extent 1), else past them
};

std::string ScatterAddDims(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(dims[i]);
  return text + "]";
}

std::string ScatterAddModule(const ScatterAddCase& c) {
  std::vector<int64_t> updates(c.indices.begin(), c.indices.end() - (c.index_vector ? 1 : 0));
  const auto scatter_rank = static_cast<int64_t>(updates.size());
  std::string window;
  for (size_t d = 1; d < c.operand.size(); ++d) {
    updates.push_back(c.operand[d]);
    window += (window.empty() ? "" : ",") + std::to_string(scatter_rank + static_cast<int64_t>(d) - 1);
  }
  const std::string operand = c.type + ScatterAddDims(c.operand);
  const std::string index_vector_dim =
      std::to_string(c.index_vector ? c.indices.size() - 1 : c.indices.size());
  return "HloModule scatter_add\nadd {\n  x = " + c.type + "[] parameter(0)\n  y = " + c.type +
         "[] parameter(1)\n  ROOT r = " + c.type + "[] add(x, y)\n}\nENTRY main {\n  a = " + operand +
         " parameter(0)\n  i = " + c.index_type + ScatterAddDims(c.indices) +
         " parameter(1)\n  u = " + c.type + ScatterAddDims(updates) + " parameter(2)\n  ROOT s = " + operand +
         " scatter(a, i, u), update_window_dims={" + window +
         "}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=" +
         index_vector_dim + ", to_apply=add\n}\n";
}

// The case as its module says it (GoogleTest would print the bytes).
void PrintTo(const ScatterAddCase& c, std::ostream* out) { *out << ScatterAddModule(c); }

// Multiples of 1/8 in [-4, 4) (floats) or integers in [-20, 44).
Literal ScatterAddValues(const Shape& shape, uint32_t seed) {
  std::vector<double> values(static_cast<size_t>(shape.element_count()));
  uint32_t state = seed;
  for (double& value : values) {
    state = state * 1664525u + 1013904223u;
    const double whole = static_cast<double>((state >> 16) % 64);
    value = IsFloating(shape.element_type()) ? whole / 8.0 - 4.0 : whole - 20.0;
  }
  if (shape.element_type() == ElementType::kU32)
    for (double& value : values) value = value < 0 ? value + 4294967296.0 : value;
  StatusOr<Literal> literal = Literal::FromVector(values, shape.dimensions()).Convert(shape.element_type());
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal(shape);
}

// Indices from -3 to rows + 2: duplicates, and out of bounds both ways
// (for u32, the negative ones are past 2^31).
Literal ScatterAddIndices(const Shape& shape, int64_t rows, uint32_t seed) {
  Literal literal(shape);
  uint32_t state = seed;
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    state = state * 22695477u + 1u;
    const int32_t value = -3 + static_cast<int32_t>((state >> 8) % static_cast<uint32_t>(rows + 6));
    std::memcpy(literal.raw().data() + i * 4, &value, 4);
  }
  return literal;
}

class VulkanLibraryScatterAddTest : public ::testing::TestWithParam<ScatterAddCase> {};

TEST_P(VulkanLibraryScatterAddTest, AddsLikeTheInterpreter) {
  const ScatterAddCase& c = GetParam();
  const std::string text = ScatterAddModule(c);
  SCOPED_TRACE(text);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program,
                            CompileForVulkan(*module, device->shader_features(), 256, 2));
  ASSERT_EQ(program->shaders.size(), 1u);
  const LibraryShader expected =
      c.type == "f32" ? LibraryShader::kScatterAddF32 : LibraryShader::kScatterAddI32;
  EXPECT_EQ(program->shaders[0].library, expected) << program->shaders[0].glsl.source;

  const auto& parameters = module->entry()->parameters();
  std::vector<Literal> arguments;
  arguments.push_back(ScatterAddValues(parameters[0]->shape, 3));
  arguments.push_back(ScatterAddIndices(parameters[1]->shape, c.operand[0], 5));
  arguments.push_back(ScatterAddValues(parameters[2]->shape, 7));
  KILN_ASSERT_OK_AND_ASSIGN(InterpreterAndVulkanLeaves leaves, RunOnInterpreterAndVulkan(*module, arguments));
  ASSERT_EQ(leaves.vulkan.size(), 1u);
  ASSERT_EQ(leaves.vulkan[0].shape(), leaves.interpreter[0].shape());
  const std::span<const uint8_t> want = leaves.interpreter[0].raw(), got = leaves.vulkan[0].raw();
  ASSERT_EQ(got.size(), want.size());
  int64_t wrong = 0, first_wrong = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (wrong++ == 0) first_wrong = static_cast<int64_t>(i) / 4;
  }
  EXPECT_EQ(wrong, 0) << "first wrong element " << first_wrong;
}

std::vector<ScatterAddCase> ScatterAddCases() {
  return {
      {"f32", "s32", {64, 16}, {300, 1}},     {"f32", "s32", {101}, {1000}, false},
      {"f32", "u32", {37, 3, 5}, {11, 7, 1}}, {"s32", "s32", {64, 16}, {301, 1}},
      {"s32", "u32", {9}, {50}, false},       {"u32", "s32", {33, 7}, {5, 13}, false},
  };
}

std::string ScatterAddCaseName(const ::testing::TestParamInfo<ScatterAddCase>& info) {
  std::string name = info.param.type + "_" + info.param.index_type;
  for (int64_t d : info.param.operand) name += "_" + std::to_string(d);
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Rows, VulkanLibraryScatterAddTest, ::testing::ValuesIn(ScatterAddCases()),
                         ScatterAddCaseName);

}  // namespace
}  // namespace kiln::vulkan
