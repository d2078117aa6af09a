// Gathers fused into their producers' and consumers' kernels on the CPU
// (FusionOptions::fuse_gathers): JAX's take_along_axis (index
// normalisation, gather, bounds check) is one kernel, and a sum of gathered
// embedding rows reads the rows inside its reduction. Results are checked
// against values computed here and against the interpreter, for indices in
// range, negative (wrapped by the program) and out of range (clamped by the
// gather, then replaced by NaN by the bounds check), s32 and s64 indices,
// and f32, bf16 and f64 data.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

struct TakeAlongCase {
  const char* data_type;
  const char* index_type;
  int64_t rows, columns, picks;
};

// What jax.numpy.take_along_axis(x, indices, axis=1) exports (modes as in
// benchmarks/workloads/full/take_along_rows_f32.hlo): negative indices
// count from the end, and an index outside the row after that reads NaN.
std::string TakeAlongModule(const TakeAlongCase& c) {
  const std::string t = c.data_type, i = c.index_type;
  const std::string rp = std::to_string(c.rows) + "," + std::to_string(c.picks);
  const std::string x = t + "[" + std::to_string(c.rows) + "," + std::to_string(c.columns) + "]";
  return "HloModule take_along\n"
         "and_rows {\n"
         "  a = pred[] parameter(0)\n"
         "  b = pred[] parameter(1)\n"
         "  ROOT r = pred[] and(a, b)\n"
         "}\n"
         "ENTRY e {\n"
         "  x = " +
         x +
         " parameter(0)\n"
         "  i = " +
         i + "[" + rp +
         "] parameter(1)\n"
         "  zero = " +
         i +
         "[] constant(0)\n"
         "  zeros = " +
         i + "[" + rp +
         "] broadcast(zero), dimensions={}\n"
         "  negative = pred[" +
         rp +
         "] compare(i, zeros), direction=LT\n"
         "  width = " +
         i + "[] constant(" + std::to_string(c.columns) +
         ")\n"
         "  widths = " +
         i + "[" + rp +
         "] broadcast(width), dimensions={}\n"
         "  wrapped = " +
         i + "[" + rp +
         "] add(i, widths)\n"
         "  normalised = " +
         i + "[" + rp +
         "] select(negative, wrapped, i)\n"
         "  starts = " +
         i + "[" + rp +
         ",1] reshape(normalised)\n"
         "  zeros3 = " +
         i + "[" + rp +
         ",1] broadcast(zero), dimensions={}\n"
         "  above = pred[" +
         rp +
         ",1] compare(starts, zeros3), direction=GE\n"
         "  last = " +
         i + "[] constant(" + std::to_string(c.columns - 1) +
         ")\n"
         "  lasts = " +
         i + "[" + rp +
         ",1] broadcast(last), dimensions={}\n"
         "  below = pred[" +
         rp +
         ",1] compare(starts, lasts), direction=LE\n"
         "  inside3 = pred[" +
         rp +
         ",1] and(above, below)\n"
         "  yes = pred[] constant(true)\n"
         "  inside = pred[" +
         rp +
         "] reduce(inside3, yes), dimensions={2}, to_apply=and_rows\n"
         "  g = " +
         t + "[" + rp +
         "] gather(x, starts), offset_dims={}, collapsed_slice_dims={1}, "
         "start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, "
         "index_vector_dim=2, "
         "slice_sizes={1,1}\n"
         "  nan = " +
         t +
         "[] constant(nan)\n"
         "  nans = " +
         t + "[" + rp +
         "] broadcast(nan), dimensions={}\n"
         "  ROOT r = " +
         t + "[" + rp +
         "] select(inside, g, nans)\n"
         "}\n";
}

// Indices of every kind: in range, negative in range, past either end, and
// far past it (beyond s32 for s64 indices).
std::vector<int64_t> MixedIndices(int64_t count, int64_t columns, bool wide) {
  std::vector<int64_t> indices;
  const int64_t far = wide ? int64_t{1} << 40 : int64_t{1} << 30;
  for (int64_t k = 0; k < count; ++k) {
    int64_t index = (k * 37 + k / 5) % (3 * columns) - 3 * columns / 2;
    if (k % 11 == 4) index = far;
    if (k % 13 == 6) index = -far;
    indices.push_back(index);
  }
  return indices;
}

Literal IndicesLiteral(const std::vector<int64_t>& values, std::vector<int64_t> dims,
                       const std::string& type) {
  if (type == "s64") return Literal::FromVector<int64_t>(values, std::move(dims));
  std::vector<int32_t> narrow(values.begin(), values.end());
  return Literal::FromVector<int32_t>(narrow, std::move(dims));
}

// Values that differ along rows and columns, whose sums of a few hundred
// are exact in f32: quarters below 250. bf16 takes small integers, whose
// sums of a few are exact in its 8 significant bits.
Literal DataLiteral(int64_t rows, int64_t columns, const std::string& type) {
  std::vector<double> values;
  for (int64_t k = 0; k < rows * columns; ++k) {
    values.push_back(type == "bf16" ? static_cast<double>(k % 61 - 30) : static_cast<double>(k % 997) * 0.25);
  }
  Literal wide = Literal::FromVector<double>(values, {rows, columns});
  StatusOr<Literal> converted = wide.Convert(*ElementTypeFromName(type));
  EXPECT_TRUE(converted.ok()) << converted.status().ToString();
  return converted.ok() ? std::move(converted).value() : Literal();
}

bool SameValue(double got, double want) { return std::isnan(want) ? std::isnan(got) : got == want; }

void ExpectEqualValues(const Literal& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.element_count(), static_cast<int64_t>(want.size())) << what;
  for (int64_t k = 0; k < got.element_count(); ++k) {
    ASSERT_TRUE(SameValue(got.GetAsDouble(k), want[static_cast<size_t>(k)]))
        << what << " element " << k << ": " << got.GetAsDouble(k) << " vs " << want[static_cast<size_t>(k)];
  }
}

// The CPU's and the interpreter's results of `text` on `arguments`, each
// compared with `want`.
void ExpectCpuAndInterpreterGive(const std::string& text, const std::vector<Literal>& arguments,
                                 const std::vector<double>& want, const std::string& what) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::RunOn(cpu, *module, arguments));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> interpreted, testing::RunOn(reference, *module, arguments));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(interpreted.size(), 1u);
  ExpectEqualValues(interpreted[0], want, what + " (interpreter)");
  ExpectEqualValues(got[0], want, what + " (cpu)");
}

TEST(RuntimeFusedGatherTest, TakeAlongRowsIsOneKernelAndMatchesForEveryIndexKind) {
  // 300 rows make the kernel run on several threads; 35 picks leave a
  // remainder after the vector loop.
  for (const TakeAlongCase& c :
       {TakeAlongCase{"f32", "s32", 300, 100, 35}, TakeAlongCase{"f32", "s64", 7, 64, 64},
        TakeAlongCase{"bf16", "s32", 9, 40, 19}, TakeAlongCase{"f64", "s64", 300, 33, 35},
        TakeAlongCase{"f64", "s32", 5, 1000, 8}}) {
    const std::string what = std::string(c.data_type) + " data, " + c.index_type + " indices";
    const std::string text = TakeAlongModule(c);
    // The normalisation, the gather and the bounds check: three kernels
    // when the gather is not fused.
    EXPECT_EQ(testing::CountThunks(text, "kernel"), 1) << what;
    EXPECT_EQ(testing::CountThunks(text, "library"), 0) << what;
    const Literal x = DataLiteral(c.rows, c.columns, c.data_type);
    const std::vector<int64_t> indices =
        MixedIndices(c.rows * c.picks, c.columns, std::string(c.index_type) == "s64");
    std::vector<double> want;
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t p = 0; p < c.picks; ++p) {
        int64_t index = indices[static_cast<size_t>(r * c.picks + p)];
        if (index < 0) index += c.columns;
        want.push_back(index >= 0 && index < c.columns ? x.GetAsDouble(r * c.columns + index) : NAN);
      }
    }
    ExpectCpuAndInterpreterGive(text, {x, IndicesLiteral(indices, {c.rows, c.picks}, c.index_type)}, want,
                                what);
  }
}

// Rows of a table gathered and summed over the rows, as
// jnp.take(table, indices, axis=0).sum(0) exports, with or without the
// bounds check (without it an out-of-range index reads the clamped row).
std::string EmbeddingSumModule(const std::string& t, const std::string& i, int64_t vocabulary, int64_t width,
                               int64_t lookups, bool bounds_check) {
  const std::string n = std::to_string(lookups), w = std::to_string(width);
  const std::string nw = n + "," + w;
  std::string text =
      "HloModule embedding_sum\n"
      "and_rows {\n"
      "  a = pred[] parameter(0)\n"
      "  b = pred[] parameter(1)\n"
      "  ROOT r = pred[] and(a, b)\n"
      "}\n"
      "add {\n"
      "  a = " +
      t +
      "[] parameter(0)\n"
      "  b = " +
      t +
      "[] parameter(1)\n"
      "  ROOT r = " +
      t +
      "[] add(a, b)\n"
      "}\n"
      "ENTRY e {\n"
      "  table = " +
      t + "[" + std::to_string(vocabulary) + "," + w +
      "] parameter(0)\n"
      "  i = " +
      i + "[" + n +
      "] parameter(1)\n"
      "  zero = " +
      i +
      "[] constant(0)\n"
      "  zeros = " +
      i + "[" + n +
      "] broadcast(zero), dimensions={}\n"
      "  negative = pred[" +
      n +
      "] compare(i, zeros), direction=LT\n"
      "  size = " +
      i + "[] constant(" + std::to_string(vocabulary) +
      ")\n"
      "  sizes = " +
      i + "[" + n +
      "] broadcast(size), dimensions={}\n"
      "  wrapped = " +
      i + "[" + n +
      "] add(i, sizes)\n"
      "  normalised = " +
      i + "[" + n +
      "] select(negative, wrapped, i)\n"
      "  starts = " +
      i + "[" + n +
      ",1] reshape(normalised)\n"
      "  g = " +
      t + "[" + nw +
      "] gather(table, starts), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1," +
      w + "}\n";
  std::string summed = "g";
  if (bounds_check) {
    text += "  zeros2 = " + i + "[" + n +
            ",1] broadcast(zero), dimensions={}\n"
            "  above = pred[" +
            n +
            ",1] compare(starts, zeros2), direction=GE\n"
            "  last = " +
            i + "[] constant(" + std::to_string(vocabulary - 1) +
            ")\n"
            "  lasts = " +
            i + "[" + n +
            ",1] broadcast(last), dimensions={}\n"
            "  below = pred[" +
            n +
            ",1] compare(starts, lasts), direction=LE\n"
            "  inside2 = pred[" +
            n +
            ",1] and(above, below)\n"
            "  yes = pred[] constant(true)\n"
            "  inside = pred[" +
            n +
            "] reduce(inside2, yes), dimensions={1}, to_apply=and_rows\n"
            "  insides = pred[" +
            nw +
            "] broadcast(inside), dimensions={0}\n"
            "  nan = " +
            t +
            "[] constant(nan)\n"
            "  nans = " +
            t + "[" + nw +
            "] broadcast(nan), dimensions={}\n"
            "  picked = " +
            t + "[" + nw + "] select(insides, g, nans)\n";
    summed = "picked";
  }
  text += "  origin = " + t +
          "[] constant(0)\n"
          "  ROOT s = " +
          t + "[" + w + "] reduce(" + summed +
          ", origin), dimensions={0}, to_apply=add\n"
          "}\n";
  return text;
}

TEST(RuntimeFusedGatherTest, EmbeddingRowsAreSummedWhereTheyAreGathered) {
  struct Case {
    const char* data_type;
    const char* index_type;
    int64_t vocabulary, width, lookups;
    bool bounds_check;
  };
  // bf16 sums three rows of integers below 31 in magnitude: exact.
  for (const Case& c : {Case{"f32", "s32", 500, 256, 300, true}, Case{"f32", "s64", 50, 24, 77, false},
                        Case{"bf16", "s32", 30, 40, 3, true}, Case{"f64", "s64", 200, 129, 64, true},
                        Case{"f64", "s32", 20, 7, 40, false}}) {
    const std::string what = std::string(c.data_type) + " data, " + c.index_type + " indices" +
                             (c.bounds_check ? ", bounds checked" : ", clamped");
    const std::string text =
        EmbeddingSumModule(c.data_type, c.index_type, c.vocabulary, c.width, c.lookups, c.bounds_check);
    // Unfused: the index normalisation, the gather, the sum and the bounds
    // check's reduce-and. Fused, the sum reads the gathered rows; without
    // the bounds check, whose reduce-and reads the normalised indices too,
    // the normalisation joins it as well.
    EXPECT_EQ(testing::CountThunks(text, "kernel"), c.bounds_check ? 3 : 1) << what;
    const Literal table = DataLiteral(c.vocabulary, c.width, c.data_type);
    std::vector<int64_t> indices;
    for (int64_t k = 0; k < c.lookups; ++k) {
      // In range, from either end, and (unchecked only) past either end.
      const int64_t span = c.bounds_check ? 2 * c.vocabulary : 3 * c.vocabulary;
      indices.push_back((k * 7919 + 3) % span - span / 2);
    }
    std::vector<double> want(static_cast<size_t>(c.width), 0.0);
    for (int64_t index : indices) {
      if (index < 0) index += c.vocabulary;
      index = std::clamp<int64_t>(index, 0, c.vocabulary - 1);
      for (int64_t j = 0; j < c.width; ++j)
        want[static_cast<size_t>(j)] += table.GetAsDouble(index * c.width + j);
    }
    ExpectCpuAndInterpreterGive(text, {table, IndicesLiteral(indices, {c.lookups}, c.index_type)}, want,
                                what);
  }
}

// A gather whose result has another reader besides its consumer's kernel
// is computed once, in a kernel of its own with its index producers.
TEST(RuntimeFusedGatherTest, AGatherReadTwiceIsComputedOnce) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[50,8] parameter(0)
  i = s32[20] parameter(1)
  one = s32[] constant(1)
  ones = s32[20] broadcast(one), dimensions={}
  shifted = s32[20] add(i, ones)
  starts = s32[20,1] reshape(shifted)
  g = f32[20,8] gather(x, starts), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  e = f32[20,8] exponential(g)
  n = f32[20,8] negate(g)
  ROOT t = (f32[20,8], f32[20,8]) tuple(e, n)
})";
  // The gather with its index producers, then the two consumers.
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 3);
  testing::ExpectMatchesInterpreter(text, 1e-5);
}

}  // namespace
}  // namespace kiln::cpu
