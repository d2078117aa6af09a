// Sorts and topk on the vulkan backend (the bitonic network's passes, one
// dispatch each, then the gather; glsl_bitonic_sort.h), on lavapipe playing
// a GPU with the validation layers on, against the interpreter bit for bit: row lengths
// about the tile (the device's, and a tile of 8 on a device played with 4
// invocations per workgroup), several rows, a sort along a leading
// dimension, a key with a payload, descending comparators, equal keys
// (stability), NaN and -0 under JAX's comparator, integer types; topk with
// k of 1, 16 and the whole row. Then lavapipe as itself, a CPU device:
// short rows sorted one invocation's merge sort each (glsl_serial_sort.h),
// over the same kinds of rows. Rows of more than kInterpreterJaxKeys keys
// under JAX's comparator are checked against a model of the interpreter's
// sort (tests/unit/sort_model.h), which the shorter ones check against the
// interpreter itself.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_bitonic_sort.h"
#include "backends/vulkan/vulkan_backend.h"
#include "core/hlo_parser.h"
#include "tests/unit/sort_model.h"
#include "tests/unit/test_util.h"
#include "tests/vulkan/lavapipe_environment.h"

namespace kiln::vulkan {
namespace {

// "f32[3,5]"
std::string SortTestShape(const std::string& type, const std::vector<int64_t>& dims) {
  std::string text = type + "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(dims[i]);
  return text + "]";
}

// Keys with few distinct values (so equal keys meet), and, for floats with
// `specials`, NaN of both signs, both zeros and both infinities planted.
Literal SortTestKeys(ElementType type, const std::vector<int64_t>& dims, uint32_t seed, bool specials) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<double> values(static_cast<size_t>(count));
  uint32_t state = seed;
  const bool is_unsigned = type == ElementType::kU8 || type == ElementType::kU16 ||
                           type == ElementType::kU32 || type == ElementType::kU64;
  for (double& value : values) {
    state = state * 1664525u + 1013904223u;
    value = static_cast<double>((state >> 16) % 13) - (is_unsigned ? 0.0 : 6.0);
  }
  if (specials) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const double planted[] = {nan, -nan, -0.0, 0.0, inf, -inf, -0.0, nan};
    for (size_t i = 0; i < values.size(); i += 5) values[i] = planted[(i / 5) % 8];
  }
  StatusOr<Literal> literal = Literal::FromVector(values, dims).Convert(type);
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal(Shape(type, dims));
}

Literal SortTestPayload(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<double> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  StatusOr<Literal> literal = Literal::FromVector(values, dims).Convert(ElementType::kS32);
  EXPECT_TRUE(literal.ok()) << literal.status().ToString();
  return literal.ok() ? std::move(literal).value() : Literal(Shape(ElementType::kS32, dims));
}

// A comparator of `type` keys, with `extra` further parameter pairs it
// ignores (the payloads): compare(a, b) with `direction` and `kind`.
std::string SortTestComparator(const std::string& type, const std::string& direction, const std::string& kind,
                               int extra) {
  std::string text = "cmp {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n";
  for (int i = 0; i < 2 * extra; ++i)
    text += "  p" + std::to_string(i) + " = s32[] parameter(" + std::to_string(2 + i) + ")\n";
  return text + "  ROOT c = pred[] compare(a, b), direction=" + direction +
         (kind.empty() ? "" : ", type=" + kind) + "\n}\n";
}

// JAX's f32 comparator: NaN and -0 canonicalised, then the total order.
const char kJaxComparator[] = R"(cmp {
  a = f32[] parameter(0)
  ne.a = pred[] compare(a, a), direction=NE
  nan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq.a = pred[] compare(a, zero), direction=EQ
  z.a = f32[] select(eq.a, zero, a)
  c.a = f32[] select(ne.a, nan, z.a)
  b = f32[] parameter(1)
  ne.b = pred[] compare(b, b), direction=NE
  eq.b = pred[] compare(b, zero), direction=EQ
  z.b = f32[] select(eq.b, zero, b)
  c.b = f32[] select(ne.b, nan, z.b)
  ROOT lt = pred[] compare(c.a, c.b), direction=LT, type=TOTALORDER
}
)";

// The interpreter runs kJaxComparator's eleven instructions for each
// comparison: under ASan its sort of 2^17 keys took 100 s, once in
// vulkan.runtime and again in vulkan.runtime_staging. Past this many keys
// the reference is the model of its sort; up to it, the interpreter, and
// the model is checked against it (rows, columns, one and several rows).
constexpr int64_t kInterpreterJaxKeys = 1500;

class VulkanBitonicSortTest : public ::testing::Test {
 protected:
  // The backend for the next checks, on a device played with at most
  // `max_workgroup` invocations per workgroup (0: as it is), as a GPU (the
  // bitonic network for every row) unless `cpu_device`; records the tile
  // the sorts then use and whether the device said it is a CPU device.
  void MakeBackend(int max_workgroup, bool cpu_device = false) {
    SetShaderFeaturesOverrideForTesting([this, max_workgroup, cpu_device](ShaderFeatures& features) {
      if (max_workgroup > 0) features.max_workgroup_size = max_workgroup;
      reported_cpu_device_ = features.cpu_device;
      features.cpu_device = cpu_device;
      tile_ = BitonicDeviceTile(features);
    });
    StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
    SetShaderFeaturesOverrideForTesting(nullptr);
    ASSERT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                             << vulkan.status().ToString();
    vulkan_ = std::move(vulkan).value();
    StatusOr<std::unique_ptr<Backend>> interpreter = CreateBackend("interpreter");
    ASSERT_TRUE(interpreter.ok()) << interpreter.status().ToString();
    interpreter_ = std::move(interpreter).value();
  }

  // The interpreter's result leaves.
  std::vector<Literal> InterpreterLeaves(const std::string& hlo, const std::vector<Literal>& arguments) {
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
    EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << hlo;
    if (!module.ok()) return {};
    StatusOr<std::vector<Literal>> want = testing::ExecuteLeaves(*interpreter_, **module, arguments);
    EXPECT_TRUE(want.ok()) << want.status().ToString();
    return want.ok() ? std::move(want).value() : std::vector<Literal>{};
  }

  // Every result leaf the same bytes as the interpreter's.
  void ExpectSameAsInterpreter(const std::string& hlo, const std::vector<Literal>& arguments,
                               const std::string& what) {
    SCOPED_TRACE(what);
    ExpectSameLeaves(hlo, arguments, InterpreterLeaves(hlo, arguments));
  }

  // Every result leaf the same bytes as `want`'s.
  void ExpectSameLeaves(const std::string& hlo, const std::vector<Literal>& arguments,
                        const std::vector<Literal>& want) {
    ASSERT_FALSE(want.empty());
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
    ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << hlo;
    StatusOr<std::vector<Literal>> got = testing::ExecuteLeaves(*vulkan_, **module, arguments);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), want.size());
    for (size_t leaf = 0; leaf < want.size(); ++leaf) {
      const Literal& w = want[leaf];
      const Literal& g = (*got)[leaf];
      ASSERT_EQ(g.shape(), w.shape()) << "leaf " << leaf;
      const std::vector<uint8_t> want_bytes(w.raw().begin(), w.raw().end());
      const std::vector<uint8_t> got_bytes(g.raw().begin(), g.raw().end());
      if (got_bytes == want_bytes) continue;
      size_t first = 0;
      while (got_bytes[first] == want_bytes[first]) ++first;
      const int64_t element = static_cast<int64_t>(first) / (static_cast<int64_t>(want_bytes.size()) /
                                                             std::max<int64_t>(1, w.element_count()));
      ADD_FAILURE() << "leaf " << leaf << " first differs at element " << element << ": got "
                    << g.GetAsDouble(element) << ", the reference " << w.GetAsDouble(element);
    }
  }

  // One row of keys of `length` sorted with `comparator` (a key alone).
  void SortRows(const std::string& type, ElementType element, const std::vector<int64_t>& dims,
                int64_t dimension, const std::string& comparator, bool specials, const std::string& what) {
    const std::string shape = SortTestShape(type, dims);
    const std::string hlo = "HloModule m\n" + comparator + "ENTRY main {\n  a = " + shape +
                            " parameter(0)\n  ROOT s = " + shape + " sort(a), dimensions={" +
                            std::to_string(dimension) + "}, is_stable=true, to_apply=cmp\n}\n";
    std::vector<Literal> arguments;
    arguments.push_back(SortTestKeys(element, dims, 11, specials));
    if (comparator != kJaxComparator) {
      ExpectSameAsInterpreter(hlo, arguments, what + " " + shape);
      return;
    }
    SCOPED_TRACE(what + " " + shape);
    testing::SortModelComparator jax;
    jax.order = testing::SortModelComparator::Order::kCanonical;
    const std::vector<Literal> model = testing::SortLikeTheInterpreter(arguments, dimension, jax);
    ASSERT_EQ(model.size(), 1u);
    if (arguments[0].element_count() > kInterpreterJaxKeys) {
      ExpectSameLeaves(hlo, arguments, model);
      return;
    }
    const std::vector<Literal> want = InterpreterLeaves(hlo, arguments);
    ASSERT_EQ(want.size(), 1u);
    EXPECT_TRUE(model[0] == want[0]) << "the model of the interpreter's sort differs from it";
    ExpectSameLeaves(hlo, arguments, want);
  }

  // Keys with an s32 payload (their positions): the payload shows the order
  // of equal keys.
  void SortWithPayload(const std::string& type, ElementType element, const std::vector<int64_t>& dims,
                       int64_t dimension, const std::string& direction, const std::string& what) {
    const std::string keys = SortTestShape(type, dims);
    const std::string payload = SortTestShape("s32", dims);
    const std::string hlo =
        "HloModule m\n" + SortTestComparator(type, direction, "", 1) + "ENTRY main {\n  a = " + keys +
        " parameter(0)\n  p = " + payload + " parameter(1)\n  ROOT s = (" + keys + ", " + payload +
        ") sort(a, p), dimensions={" + std::to_string(dimension) + "}, is_stable=true, to_apply=cmp\n}\n";
    std::vector<Literal> arguments;
    arguments.push_back(SortTestKeys(element, dims, 5, false));
    arguments.push_back(SortTestPayload(dims));
    ExpectSameAsInterpreter(hlo, arguments, what + " " + keys);
  }

  void TopK(const std::string& type, ElementType element, const std::vector<int64_t>& dims, int64_t k,
            bool largest) {
    const std::string shape = SortTestShape(type, dims);
    std::vector<int64_t> out = dims;
    out.back() = k;
    const std::string hlo = "HloModule m\nENTRY main {\n  a = " + shape + " parameter(0)\n  ROOT t = (" +
                            SortTestShape(type, out) + ", " + SortTestShape("s32", out) +
                            ") topk(a), k=" + std::to_string(k) +
                            ", largest=" + (largest ? "true" : "false") + "\n}\n";
    std::vector<Literal> arguments;
    arguments.push_back(SortTestKeys(element, dims, 17, element == ElementType::kF32));
    ExpectSameAsInterpreter(hlo, arguments, "topk " + shape + " k=" + std::to_string(k));
  }

  // Lengths about the tile: 1, 2, 3, tile - 1, tile, tile + 1, 3 tile + 5.
  std::vector<int64_t> LengthsAboutTheTile() const {
    return {1, 2, 3, tile_ - 1, tile_, tile_ + 1, 3 * tile_ + 5};
  }

  std::unique_ptr<Backend> vulkan_;
  std::unique_ptr<Backend> interpreter_;
  int64_t tile_ = 0;
  bool reported_cpu_device_ = false;
};

TEST_F(VulkanBitonicSortTest, RowsAboutTheDevicesTile) {
  MakeBackend(0);
  ASSERT_GE(tile_, 2);
  const std::string lt = SortTestComparator("f32", "LT", "", 0);
  for (int64_t length : LengthsAboutTheTile())
    SortRows("f32", ElementType::kF32, {length}, 0, lt, false, "lt");
  // A long row: passes across tiles over the scratch.
  SortRows("f32", ElementType::kF32, {int64_t{1} << 17}, 0, kJaxComparator, true, "jax");
}

TEST_F(VulkanBitonicSortTest, RowsAboutASmallTile) {
  MakeBackend(4);
  ASSERT_EQ(tile_, 8);
  const std::string gt = SortTestComparator("f32", "GT", "", 0);
  for (int64_t length : LengthsAboutTheTile()) {
    SortRows("f32", ElementType::kF32, {length}, 0, kJaxComparator, true, "jax");
    SortWithPayload("f32", ElementType::kF32, {3, length}, 1, "GT", "descending with payload");
  }
  // Many merges across tiles of 8.
  SortWithPayload("s32", ElementType::kS32, {2, 1000}, 1, "LT", "ascending with payload");
}

TEST_F(VulkanBitonicSortTest, SeveralRowsAndLeadingDimensions) {
  MakeBackend(0);
  SortRows("f32", ElementType::kF32, {5, 300}, 1, kJaxComparator, true, "jax rows");
  SortRows("f32", ElementType::kF32, {300, 5}, 0, kJaxComparator, true, "jax columns");
  SortWithPayload("f32", ElementType::kF32, {37, 3, 4}, 0, "LT", "leading dimension");
  SortWithPayload("f32", ElementType::kF32, {3, 37, 4}, 1, "GT", "middle dimension");
  // Rows of 1 and of 3 in many rows (several rows per workgroup).
  SortWithPayload("s32", ElementType::kS32, {999, 1}, 1, "LT", "rows of one");
  SortWithPayload("s32", ElementType::kS32, {999, 3}, 1, "GT", "rows of three");
  // Empty arrays: no row, or rows of no element.
  SortWithPayload("s32", ElementType::kS32, {0, 5}, 1, "LT", "no row");
  SortWithPayload("s32", ElementType::kS32, {4, 0}, 1, "LT", "empty rows");
}

TEST_F(VulkanBitonicSortTest, IntegerAndOtherTypes) {
  MakeBackend(0);
  SortWithPayload("s32", ElementType::kS32, {4, 700}, 1, "LT", "s32");
  SortWithPayload("u8", ElementType::kU8, {4, 700}, 1, "GT", "u8");
  SortWithPayload("s64", ElementType::kS64, {4, 700}, 1, "LT", "s64");
  SortWithPayload("u32", ElementType::kU32, {4, 700}, 1, "GT", "u32");
  SortRows("f16", ElementType::kF16, {3, 500}, 1, SortTestComparator("f16", "LT", "TOTALORDER", 0), true,
           "f16 total order");
  SortRows("f64", ElementType::kF64, {3, 500}, 1, SortTestComparator("f64", "GT", "TOTALORDER", 0), true,
           "f64 total order");
}

TEST_F(VulkanBitonicSortTest, TopK) {
  MakeBackend(0);
  for (int64_t k : {int64_t{1}, int64_t{16}, int64_t{3000}}) {
    TopK("f32", ElementType::kF32, {3, 3000}, k, true);
    TopK("s32", ElementType::kS32, {3, 3000}, k, false);
  }
  TopK("f32", ElementType::kF32, {2, 5}, 5, false);
  TopK("f32", ElementType::kF32, {2, 5}, 0, true);  // nothing to write
  MakeBackend(4);
  TopK("f32", ElementType::kF32, {4, 100}, 16, true);
  TopK("u16", ElementType::kU16, {4, 100}, 100, false);
}

// Lavapipe as it is: a CPU device, whose short rows are merge sorted one
// per invocation (an even and an odd number of merge passes, a run left
// without a partner, the longest serial row), and a row past the crossover
// on the bitonic network.
TEST_F(VulkanBitonicSortTest, SerialMergeSortOnACpuDevice) {
  if (const std::string why = WhyNotLavapipeEnvironment(); !why.empty()) GTEST_SKIP() << why;
  MakeBackend(0, /*cpu_device=*/true);
  EXPECT_TRUE(reported_cpu_device_) << "lavapipe's device type is VK_PHYSICAL_DEVICE_TYPE_CPU";
  for (int64_t length : {1, 2, 3, 7, 8, 9, 300, 2048}) {
    SortRows("f32", ElementType::kF32, {2, length}, 1, kJaxComparator, true, "jax");
    SortWithPayload("f32", ElementType::kF32, {3, length}, 1, "GT", "descending with payload");
    SortWithPayload("s32", ElementType::kS32, {5, length}, 1, "LT", "ascending with payload");
  }
  SortRows("f32", ElementType::kF32, {300, 5}, 0, kJaxComparator, true, "jax columns");
  SortWithPayload("f32", ElementType::kF32, {37, 3, 4}, 0, "LT", "leading dimension");
  SortWithPayload("f32", ElementType::kF32, {3, 37, 4}, 1, "GT", "middle dimension");
  SortWithPayload("s32", ElementType::kS32, {999, 3}, 1, "GT", "many rows of three");
  SortWithPayload("s32", ElementType::kS32, {0, 5}, 1, "LT", "no row");
  SortWithPayload("s32", ElementType::kS32, {4, 0}, 1, "LT", "empty rows");
  SortWithPayload("u8", ElementType::kU8, {4, 700}, 1, "GT", "u8");
  SortWithPayload("s64", ElementType::kS64, {4, 700}, 1, "LT", "s64");
  SortRows("f16", ElementType::kF16, {3, 500}, 1, SortTestComparator("f16", "LT", "TOTALORDER", 0), true,
           "f16 total order");
  SortRows("f64", ElementType::kF64, {3, 500}, 1, SortTestComparator("f64", "GT", "TOTALORDER", 0), true,
           "f64 total order");
  SortRows("f32", ElementType::kF32, {1, 5000}, 1, kJaxComparator, true, "past the crossover");
  for (int64_t k : {int64_t{1}, int64_t{16}, int64_t{3000}}) {
    TopK("f32", ElementType::kF32, {3, 3000}, k, true);
    TopK("s32", ElementType::kS32, {3, 3000}, k, false);
  }
  TopK("f32", ElementType::kF32, {2, 5}, 0, true);  // nothing to write
}

}  // namespace
}  // namespace kiln::vulkan
