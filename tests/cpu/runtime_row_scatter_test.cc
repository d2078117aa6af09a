// Row scatters (JAX's x.at[idx].add(u) and .set(u)) on the CPU backend's
// row-scatter thunk: equal to the interpreter bit for bit (each row gets its
// updates in update order), with repeated and out-of-range indices, on 1, 2
// and 4 threads; scatters of other forms keep the generic kernel. No shape
// here is an add that is split into segments of its updates; those are
// runtime_row_scatter_segments_test.cc's.
#include <algorithm>
#include <string>

#include "backends/cpu/row_scatter_segments.h"
#include "backends/cpu/row_scatter_thunk.h"
#include "tests/cpu/jax_row_scatter_module.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::AbsDifference;
using testing::CountThunks;
using testing::FirstByteDifference;
using testing::ParseOrDie;
using testing::RandomArguments;
using testing::RunOn;
using testing::RunWithThreads;

// A scatter of `updates` rows of `row` (e.g. "32" or "4,3") into `rows`
// rows of type `type`, with indices of `index_type` shaped [U] or [U, 1] and
// a combiner whose root is `combine` (over parameters a and b).
std::string RowScatter(const std::string& type, int64_t rows, const std::string& row, int64_t updates,
                       const std::string& index_type, bool index_vector, const std::string& combine) {
  const std::string operand = type + "[" + std::to_string(rows) + (row.empty() ? "" : "," + row) + "]";
  const std::string update = type + "[" + std::to_string(updates) + (row.empty() ? "" : "," + row) + "]";
  const std::string indices = index_type + "[" + std::to_string(updates) + (index_vector ? ",1]" : "]");
  int64_t rank = 1;
  for (char c : row) rank += c == ',' ? 1 : 0;
  if (row.empty()) rank = 0;
  std::string window_dims;
  for (int64_t d = 1; d <= rank; ++d) window_dims += (d > 1 ? "," : "") + std::to_string(d);
  // Set (JAX's .set) returns the update: its root is parameter 1 itself.
  const std::string combiner =
      combine == "parameter(1)"
          ? "  a = " + type + "[] parameter(0)\n  ROOT b = " + type + "[] parameter(1)\n"
          : "  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n  ROOT c = " + type +
                "[] " + combine + "\n";
  return "HloModule m\ncombine {\n" + combiner + "}\nENTRY e {\n  x = " + operand +
         " parameter(0)\n  i = " + indices + " parameter(1)\n  u = " + update +
         " parameter(2)\n  ROOT s = " + operand + " scatter(x, i, u), update_window_dims={" + window_dims +
         "}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
         "to_apply=combine\n}\n";
}

// Indices that repeat (each value about four times, or once per row where
// there are fewer updates) spread over the rows and stray out of range on
// both sides: from `lowest` to rows + 9 (negative ones are huge unsigned).
void FillIndices(Literal& indices, int64_t rows, int64_t lowest) {
  const int64_t span = rows + 10 - lowest;
  const int64_t values = std::clamp<int64_t>(indices.element_count() / 4, 1, span);
  DispatchElementType(indices.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      int64_t u = 0;
      for (T& index : indices.data<T>()) {
        index = static_cast<T>((u * 7919) % values * span / values + lowest);
        ++u;
      }
    }
  });
}

// Compiles `text`, expects `row_scatters` row-scatter thunks, and compares
// the results on 1, 2 and 4 threads with the interpreter's (byte for byte
// when `tolerance` is 0), the indices from `lowest_index` to rows + 9.
void ExpectRowScatterMatches(const std::string& text, int64_t rows, int64_t row_scatters,
                             double tolerance = 0, int64_t lowest_index = -10) {
  EXPECT_EQ(CountThunks(text, "row-scatter"), row_scatters) << text;
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  // The one pass: an add split into segments may round otherwise.
  if (const std::optional<RowScatterPlan> plan = PlanRowScatter(*module->entry()->root())) {
    ASSERT_EQ(RowScatterSegments(*plan), 1) << text;
  }
  std::vector<Literal> arguments = RandomArguments(*module);
  FillIndices(arguments[1], rows, lowest_index);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 1u);
  for (int threads : {1, 2, 4}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, RunWithThreads(*module, arguments, threads));
    ASSERT_TRUE(got.shape().Compatible(want[0].shape()));
    if (tolerance == 0) {
      const int64_t at = FirstByteDifference(got, want[0]);
      ASSERT_EQ(at, -1) << threads << " threads, element " << at << "\n" << text;
      continue;
    }
    for (int64_t i = 0; i < want[0].element_count(); ++i) {
      ASSERT_LE(AbsDifference(got, want[0], i), tolerance) << threads << " threads, element " << i << "\n"
                                                           << text;
    }
  }
}

TEST(RuntimeRowScatterTest, JaxScatterAddOfFloatRowsIsExactWithRepeatedAndOutOfRangeIndices) {
  ExpectRowScatterMatches(RowScatter("f32", 300, "16", 1200, "s32", true, "add(a, b)"), 300, 1);
}

// Rows of whole AVX-512 vectors, of less than one, and of a part vector
// after whole ones, of 4- and 8-byte elements; bf16 sums rounded one by one.
// 12000 updates: fewer than an add needs to be split into segments.
TEST(RuntimeRowScatterTest, OddWidthsKeepTheUpdateOrderOfEachRow) {
  for (const char* width : {"1", "15", "16", "17", "33"}) {
    ExpectRowScatterMatches(RowScatter("f32", 3000, width, 12000, "s32", true, "add(a, b)"), 3000, 1);
  }
  for (const char* width : {"1", "17", "33"}) {
    ExpectRowScatterMatches(RowScatter("bf16", 3000, width, 12000, "s32", true, "add(a, b)"), 3000, 1);
  }
  for (const char* width : {"7", "9"}) {
    ExpectRowScatterMatches(RowScatter("f64", 3000, width, 12000, "s64", true, "add(a, b)"), 3000, 1);
    ExpectRowScatterMatches(RowScatter("s32", 3000, width, 12000, "u32", true, "add(a, b)"), 3000, 1);
  }
  ExpectRowScatterMatches(RowScatter("f32", 3000, "17", 12000, "s32", true, "parameter(1)"), 3000, 1);
}

// 540000 rows of 64 bytes (34.6 MB) and 70000 updates are enough for four
// threads (RowScatterThreads), so on 2 and 4 threads each owns a stretch of
// the rows, of uneven sizes.
TEST(RuntimeRowScatterTest, ThreadsOfALargeTableEachKeepTheUpdateOrderOfTheirRows) {
  const std::string text = RowScatter("f32", 540000, "16", 70000, "s32", true, "add(a, b)");
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::optional<RowScatterPlan> plan = PlanRowScatter(*module->entry()->root());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(RowScatterThreads(*plan, 4), 4);
  ExpectRowScatterMatches(text, 540000, 1);
}

TEST(RuntimeRowScatterTest, EveryAcceptedElementAndIndexType) {
  for (const char* type : {"f32", "f64", "bf16", "f16", "s32", "s64", "u32", "u64"}) {
    for (const char* index_type : {"s32", "s64", "u32", "u64"}) {
      ExpectRowScatterMatches(RowScatter(type, 9000, "8", 3000, index_type, true, "add(a, b)"), 9000, 1);
    }
  }
}

TEST(RuntimeRowScatterTest, ImplicitIndexVectorRowsOfSeveralDimensionsAndScalarRows) {
  ExpectRowScatterMatches(RowScatter("f32", 400, "", 2000, "s32", false, "add(b, a)"), 400, 1);
  ExpectRowScatterMatches(RowScatter("f64", 200, "4,3", 900, "s64", false, "add(a, b)"), 200, 1);
}

TEST(RuntimeRowScatterTest, SetKeepsTheLastUpdateOfARow) {
  ExpectRowScatterMatches(RowScatter("f32", 5000, "64", 20000, "s32", true, "parameter(1)"), 5000, 1);
  ExpectRowScatterMatches(RowScatter("s32", 300, "16", 1200, "u32", true, "parameter(1)"), 300, 1);
}

TEST(RuntimeRowScatterTest, IntegerAddWrapsAround) {
  const std::string text = RowScatter("s32", 4, "2", 3, "s32", true, "add(a, b)");
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments = RandomArguments(*module);
  for (int32_t& value : arguments[0].data<int32_t>()) value = 2147483647;
  for (int32_t& value : arguments[1].data<int32_t>()) value = 1;
  for (int32_t& value : arguments[2].data<int32_t>()) value = 1;
  for (int threads : {1, 2}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, RunWithThreads(*module, arguments, threads));
    EXPECT_EQ(got.data<int32_t>()[2], -2147483646) << threads << " threads";  // max + 3 wraps
    EXPECT_EQ(got.data<int32_t>()[0], 2147483647) << threads << " threads";
  }
}

// JAX's wrap of negative indices (i < 0 ? i + rows : i) runs in the row
// scatter, which reads the indices once: no kernel is left. The indices go
// from -2 rows - 10 to rows + 9: those from -rows on name rows from the
// end; those below stay negative and, like those past the rows, are dropped.
TEST(RuntimeRowScatterTest, JaxsWrapOfNegativeIndicesRunsInTheScatter) {
  for (const char* index_type : {"s32", "s64"}) {
    for (int64_t width : {16, 17}) {
      const std::string text = testing::JaxScatterAddModule(index_type, 300, 300, width, 1200);
      EXPECT_EQ(CountThunks(text, "kernel"), 0) << text;
      ExpectRowScatterMatches(text, 300, 1, 0, -610);
    }
  }
  // A table large enough for four threads (34.6 MB), each listing the
  // updates of its own rows.
  ExpectRowScatterMatches(testing::JaxScatterAddModule("s32", 540000, 540000, 16, 70000), 540000, 1, 0,
                          -1080010);
}

// A wrap by another count than the table's rows, and wrapped indices that
// another scatter reads too, stay kernels of their own.
TEST(RuntimeRowScatterTest, OtherIndexComputationsStayKernels) {
  const std::string other_count = testing::JaxScatterAddModule("s32", 300, 299, 16, 1200);
  EXPECT_EQ(CountThunks(other_count, "kernel"), 1) << other_count;
  ExpectRowScatterMatches(other_count, 300, 1, 0, -610);
  std::string twice = testing::JaxScatterAddModule("s32", 300, 300, 16, 1200);
  const std::string first = "ROOT s = f32[300,16] scatter(x, column, u)";
  ASSERT_NE(twice.find(first), std::string::npos);
  twice.replace(twice.find(first), 4, "");  // s is no longer the root
  twice.insert(twice.rfind('}'),
               "  ROOT t = f32[300,16] scatter(s, column, u), update_window_dims={1}, "
               "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
               "index_vector_dim=1, to_apply=combine\n");
  EXPECT_EQ(CountThunks(twice, "kernel"), 1) << twice;
  ExpectRowScatterMatches(twice, 300, 2, 0, -610);
}

TEST(RuntimeRowScatterTest, OtherScattersKeepTheGenericKernel) {
  // A combiner other than add or set.
  ExpectRowScatterMatches(RowScatter("f32", 300, "16", 1200, "s32", true, "multiply(a, b)"), 300, 0);
  // An element type the thunk does not take.
  ExpectRowScatterMatches(RowScatter("s16", 300, "16", 1200, "s32", true, "add(a, b)"), 300, 0);
  // An update window narrower than the operand's row.
  ExpectRowScatterMatches(R"(HloModule m
combine {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[50,8] parameter(0)
  i = s32[40,1] parameter(1)
  u = f32[40,4] parameter(2)
  ROOT s = f32[50,8] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
})",
                          50, 0);
}

}  // namespace
}  // namespace kiln::cpu
