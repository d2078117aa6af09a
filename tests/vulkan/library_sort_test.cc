// Sorts that run the library sort (library_sort.h, shaders/bitonic_sort.comp)
// on lavapipe with the validation layers on, bit for bit against the
// interpreter (rows of more than kLibrarySortInterpreterKeys keys against
// tests/unit/sort_model.h's model of its sort): every key variant (8, 16,
// 32 and 64 bits) and order (signed, unsigned, TOTALORDER, jnp's
// canonicalised total order; ascending and descending, also as swapped
// parameters), alone and with a passenger of 4 or 8 bytes, keys with
// ties, both zeros, infinities and NaNs of both signs and several payloads;
// rows of odd lengths about the tile, sorts along leading and middle
// dimensions, empty arrays. Lavapipe is played as a GPU (a CPU device
// merge sorts short rows one invocation each, glsl_serial_sort.h), on a
// device of 4 invocations a workgroup (tiles of 8: many passes across
// tiles), and as itself for rows past the serial sort's.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "core/lowering/sort_key_comparator.h"
#include "tests/unit/sort_model.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

// Past this many keys the reference is the model of the interpreter's sort
// (the interpreter runs jnp's comparator, eleven instructions, per compare).
constexpr int64_t kLibrarySortInterpreterKeys = 4096;

enum class Comparator {
  kPlain,      // compare(a, b) of integers
  kTotal,      // compare(a, b), type=TOTALORDER
  kCanonical,  // jnp.sort's: NaN -> NaN, -0 -> +0, then TOTALORDER
};

struct LibrarySortCase {
  std::string key_type;
  std::string passenger_type;  // empty: the key alone
  std::vector<int64_t> dims;
  int64_t dimension = 0;
  Comparator comparator = Comparator::kPlain;
  bool descending = false;
  bool swapped = false;  // compare(b, a): the other direction
};

std::string LibrarySortShape(const std::string& type, const std::vector<int64_t>& dims) {
  std::string text = type + "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(dims[i]);
  return text + "]";
}

// The comparator's canonicalised operand `name` of parameter `parameter`.
std::string CanonicalOperand(const std::string& type, const std::string& name, int parameter) {
  const std::string p = std::to_string(parameter);
  return "  " + name + " = " + type + "[] parameter(" + p + ")\n  ne." + name + " = pred[] compare(" + name +
         ", " + name + "), direction=NE\n  eq." + name + " = pred[] compare(" + name +
         ", zero), direction=EQ\n  z." + name + " = " + type + "[] select(eq." + name + ", zero, " + name +
         ")\n  c." + name + " = " + type + "[] select(ne." + name + ", nan, z." + name + ")\n";
}

std::string LibrarySortModule(const LibrarySortCase& c) {
  const std::string& t = c.key_type;
  std::string comparator = "cmp {\n";
  std::string a = "a", b = "b";
  if (c.comparator == Comparator::kCanonical) {
    comparator += "  nan = " + t + "[] constant(nan)\n  zero = " + t + "[] constant(0)\n" +
                  CanonicalOperand(t, "a", 0) + CanonicalOperand(t, "b", 1);
    a = "c.a";
    b = "c.b";
  } else {
    comparator += "  a = " + t + "[] parameter(0)\n  b = " + t + "[] parameter(1)\n";
  }
  if (!c.passenger_type.empty())
    comparator +=
        "  p0 = " + c.passenger_type + "[] parameter(2)\n  p1 = " + c.passenger_type + "[] parameter(3)\n";
  if (c.swapped) std::swap(a, b);
  comparator += "  ROOT lt = pred[] compare(" + a + ", " + b +
                "), direction=" + (c.descending ? "GT" : "LT") +
                (c.comparator == Comparator::kPlain ? "" : ", type=TOTALORDER") + "\n}\n";
  const std::string keys = LibrarySortShape(t, c.dims);
  std::string entry = "ENTRY main {\n  k = " + keys + " parameter(0)\n";
  std::string operands = "k", result = keys;
  if (!c.passenger_type.empty()) {
    const std::string passengers = LibrarySortShape(c.passenger_type, c.dims);
    entry += "  p = " + passengers + " parameter(1)\n";
    operands += ", p";
    result = "(" + keys + ", " + passengers + ")";
  }
  return "HloModule sort\n" + comparator + entry + "  ROOT s = " + result + " sort(" + operands +
         "), dimensions={" + std::to_string(c.dimension) + "}, is_stable=true, to_apply=cmp\n}\n";
}

// The case as its module says it (GoogleTest would print the bytes).
void PrintTo(const LibrarySortCase& c, std::ostream* out) { *out << LibrarySortModule(c); }

// Keys of few distinct values (ties), with, for floats, NaNs of both signs
// and two payloads, both zeros and both infinities planted; for integers
// the extremes and -1.
Literal LibrarySortKeys(ElementType type, const std::vector<int64_t>& dims, uint32_t seed) {
  const Shape shape(type, dims);
  const int64_t count = shape.element_count();
  std::vector<double> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (double& value : values) {
    state = state * 1664525u + 1013904223u;
    value = static_cast<double>((state >> 16) % 13) - (IsUnsignedIntegral(type) ? 0.0 : 6.0);
  }
  StatusOr<Literal> converted = Literal::FromVector(values, dims).Convert(type);
  EXPECT_TRUE(converted.ok()) << converted.status().ToString();
  if (!converted.ok()) return Literal(shape);
  Literal keys = std::move(converted).value();
  const auto bytes = static_cast<size_t>(ByteWidth(type));
  const uint64_t top = uint64_t{1} << (8 * bytes - 1);
  std::vector<uint64_t> planted;
  if (const std::optional<FloatBitLayout> layout = FloatBitLayoutOf(type)) {
    const uint64_t quiet_nan = layout->exponent | (layout->exponent >> 1);
    planted = {quiet_nan,        layout->sign | quiet_nan,        layout->exponent | 1, layout->sign,    0,
               layout->exponent, layout->sign | layout->exponent, quiet_nan | 2,        layout->sign | 1};
  } else {
    planted = {top, top - 1, ~uint64_t{0}, 0, 1, top | 1};
  }
  for (int64_t i = 0; i < count; i += 5) {
    const uint64_t bits = planted[static_cast<size_t>(i / 5) % planted.size()];
    std::memcpy(keys.raw().data() + static_cast<size_t>(i) * bytes, &bits, bytes);
  }
  return keys;
}

// Each element's position, as `type`: shows the order of equal keys.
Literal LibrarySortPositions(ElementType type, const std::vector<int64_t>& dims) {
  const Shape shape(type, dims);
  std::vector<double> values(static_cast<size_t>(shape.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  StatusOr<Literal> literal = Literal::FromVector(values, dims).Convert(type);
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal(shape);
}

std::vector<Literal> LibrarySortReference(const LibrarySortCase& c, const Module& module,
                                          const std::vector<Literal>& arguments) {
  if (arguments[0].element_count() <= kLibrarySortInterpreterKeys) {
    StatusOr<std::unique_ptr<Backend>> interpreter = CreateBackend("interpreter");
    EXPECT_TRUE(interpreter.ok()) << interpreter.status().ToString();
    if (!interpreter.ok()) return {};
    StatusOr<std::vector<Literal>> leaves = testing::ExecuteLeaves(**interpreter, module, arguments);
    EXPECT_TRUE(leaves.ok()) << leaves.status().ToString();
    return leaves.ok() ? std::move(leaves).value() : std::vector<Literal>{};
  }
  testing::SortModelComparator model;
  model.order = c.comparator == Comparator::kPlain   ? testing::SortModelComparator::Order::kPlain
                : c.comparator == Comparator::kTotal ? testing::SortModelComparator::Order::kTotalOrder
                                                     : testing::SortModelComparator::Order::kCanonical;
  model.descending = c.descending;
  model.swapped = c.swapped;
  return testing::SortLikeTheInterpreter(arguments, c.dimension, model);
}

// Compiles `c` with the device's features edited by `edit`, expects its one
// kernel to be the library sort, then runs it on a backend made with the
// same edit and compares every leaf byte for byte with the reference.
void ExpectLibrarySortGivesTheReference(const LibrarySortCase& c,
                                        const std::function<void(ShaderFeatures&)>& edit) {
  const std::string text = LibrarySortModule(c);
  SCOPED_TRACE(text);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_ASSERT_OK_AND_ASSIGN(std::shared_ptr<Device> device, Device::Default());
  ShaderFeatures features = device->shader_features();
  edit(features);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<VulkanProgram> program,
                            CompileForVulkan(*module, features, 256, 2));
  int library_sorts = 0;
  for (const CompiledShader& shader : program->shaders)
    if (shader.library.has_value() && LibraryShaderName(*shader.library).starts_with("bitonic_sort"))
      ++library_sorts;
  // (A sort of no element or of rows of one may leave no kernel at all.)
  const Shape& keys = module->entry()->parameters()[0]->shape;
  if (keys.element_count() > 0 && keys.dimensions(c.dimension) > 1) {
    EXPECT_EQ(library_sorts, 1) << "the sort is not the library sort";
  }

  std::vector<Literal> arguments;
  arguments.push_back(LibrarySortKeys(module->entry()->parameters()[0]->shape.element_type(), c.dims, 7));
  if (!c.passenger_type.empty())
    arguments.push_back(LibrarySortPositions(module->entry()->parameters()[1]->shape.element_type(), c.dims));
  const std::vector<Literal> want = LibrarySortReference(c, *module, arguments);
  ASSERT_FALSE(want.empty());
  SetShaderFeaturesOverrideForTesting(edit);
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  SetShaderFeaturesOverrideForTesting(nullptr);
  ASSERT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::ExecuteLeaves(**vulkan, *module, arguments));
  ASSERT_EQ(got.size(), want.size());
  for (size_t leaf = 0; leaf < want.size(); ++leaf) {
    ASSERT_EQ(got[leaf].shape(), want[leaf].shape()) << "leaf " << leaf;
    const std::span<const uint8_t> expected = want[leaf].raw(), actual = got[leaf].raw();
    ASSERT_EQ(actual.size(), expected.size());
    const int bytes = ByteWidth(want[leaf].shape().element_type());
    int64_t wrong = 0, first_wrong = -1;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (actual[i] == expected[i]) continue;
      if (wrong++ == 0) first_wrong = static_cast<int64_t>(i) / bytes;
    }
    EXPECT_EQ(wrong, 0) << "leaf " << leaf << ": first wrong element " << first_wrong;
  }
}

void PlayedAsAGpu(ShaderFeatures& features) { features.cpu_device = false; }

void PlayedAsAGpuOfFourInvocations(ShaderFeatures& features) {
  features.cpu_device = false;
  features.max_workgroup_size = 4;
}

void AsItIs(ShaderFeatures&) {}

class VulkanLibrarySortTest : public ::testing::TestWithParam<LibrarySortCase> {
 protected:
  void TearDown() override { SetShaderFeaturesOverrideForTesting(nullptr); }
};

TEST_P(VulkanLibrarySortTest, GivesTheInterpretersBits) {
  const LibrarySortCase& c = GetParam();
  {
    SCOPED_TRACE("played as a GPU");
    ExpectLibrarySortGivesTheReference(c, PlayedAsAGpu);
  }
  // Tiles of 8: the short rows too pass across tiles.
  int64_t elements = 1;
  for (const int64_t d : c.dims) elements *= d;
  if (elements <= 3000) {
    SCOPED_TRACE("played as a GPU of 4 invocations a workgroup");
    ExpectLibrarySortGivesTheReference(c, PlayedAsAGpuOfFourInvocations);
  }
}

std::vector<LibrarySortCase> LibrarySortCases() {
  std::vector<LibrarySortCase> cases;
  // Every key variant and order, alone and with positions, on rows of odd
  // lengths (1, 3, 33, 1000, 2049: the device tile and one past it).
  cases.push_back({"f32", "", {3, 33}, 1, Comparator::kCanonical});
  cases.push_back({"f32", "s32", {2, 1000}, 1, Comparator::kCanonical});
  cases.push_back({"f32", "s32", {1, 2049}, 1, Comparator::kCanonical, true});
  cases.push_back({"f32", "", {5, 3}, 1, Comparator::kTotal, true});
  cases.push_back({"f32", "u32", {4, 257}, 1, Comparator::kTotal, false, true});
  cases.push_back({"f16", "s32", {3, 500}, 1, Comparator::kTotal});
  cases.push_back({"f16", "", {2, 77}, 1, Comparator::kCanonical, true});
  cases.push_back({"bf16", "s32", {3, 129}, 1, Comparator::kTotal, true});
  cases.push_back({"f64", "", {3, 500}, 1, Comparator::kTotal, true});
  cases.push_back({"f64", "s64", {2, 300}, 1, Comparator::kCanonical});
  cases.push_back({"s32", "s32", {4, 700}, 1, Comparator::kPlain});
  cases.push_back({"u32", "", {4, 700}, 1, Comparator::kPlain, true});
  cases.push_back({"s64", "s32", {4, 300}, 1, Comparator::kPlain});
  cases.push_back({"u64", "f64", {3, 300}, 1, Comparator::kPlain, true});
  cases.push_back({"s8", "s32", {4, 300}, 1, Comparator::kPlain, true});
  cases.push_back({"u8", "", {4, 300}, 1, Comparator::kPlain});
  cases.push_back({"s16", "s32", {3, 200}, 1, Comparator::kPlain, false, true});
  cases.push_back({"u16", "", {3, 200}, 1, Comparator::kPlain, true});
  // Other dimensions: rows down columns, along a middle dimension, rows of
  // one element, many short rows, no row, empty rows.
  cases.push_back({"f32", "s32", {300, 5}, 0, Comparator::kCanonical});
  cases.push_back({"s32", "s32", {3, 37, 4}, 1, Comparator::kPlain, true});
  cases.push_back({"f32", "s32", {37, 1}, 1, Comparator::kCanonical});
  cases.push_back({"s32", "s32", {999, 3}, 1, Comparator::kPlain, true});
  cases.push_back({"s32", "s32", {0, 5}, 1, Comparator::kPlain});
  cases.push_back({"f32", "", {4, 0}, 1, Comparator::kCanonical});
  // A long row: merges across tiles over the scratch; the model is the reference.
  cases.push_back({"f32", "s32", {70000}, 0, Comparator::kCanonical});
  return cases;
}

std::string LibrarySortCaseName(const ::testing::TestParamInfo<LibrarySortCase>& info) {
  const LibrarySortCase& c = info.param;
  std::string name = c.key_type + (c.passenger_type.empty() ? "" : "_" + c.passenger_type);
  for (int64_t d : c.dims) name += "_" + std::to_string(d);
  name += c.comparator == Comparator::kPlain   ? "_plain"
          : c.comparator == Comparator::kTotal ? "_total"
                                               : "_jax";
  if (c.descending) name += "_descending";
  if (c.swapped) name += "_swapped";
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(KeysAndPassengers, VulkanLibrarySortTest, ::testing::ValuesIn(LibrarySortCases()),
                         LibrarySortCaseName);

// Lavapipe as itself: rows past its serial merge sort's longest take the
// library sort (shorter ones are glsl_serial_sort.h's, vulkan.runtime's
// VulkanBitonicSortTest).
TEST(VulkanLibrarySortOnThisDevice, RowsPastTheSerialSort) {
  ExpectLibrarySortGivesTheReference({"f32", "s32", {2, 5000}, 1, Comparator::kCanonical}, AsItIs);
  ExpectLibrarySortGivesTheReference({"s64", "", {1, 4097}, 1, Comparator::kPlain, true}, AsItIs);
}

}  // namespace
}  // namespace kiln::vulkan
