// The add row scatter in segments of its updates
// (backends/cpu/row_scatter_segments.h): which shapes take it, and that its
// result is, byte for byte, the sum of its segments' scatters as the
// interpreter computes them (the first into the operand, each other into a
// table of -0, added element by element in segment order) on 1, 2 and 4
// threads, in both row loops, whatever the scratch held before; and within
// rounding of the one-pass scatter (exactly it for integers).
#include <cstring>
#include <functional>
#include <string>

#include "backends/cpu/row_scatter_segments.h"
#include "backends/cpu/thread_pool.h"
#include "tests/cpu/jax_row_scatter_module.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::AbsDifference;
using testing::CountThunks;
using testing::FirstByteDifference;
using testing::ParseOrDie;
using testing::RandomArguments;
using testing::RunExecutable;
using testing::RunOn;

// A module of `updates` scatter rows, for a number of updates.
using SegmentsModule = std::function<std::string(int64_t updates)>;

// An add scatter of rows of `width` elements of `type` into `rows` rows,
// indices [U, 1] of `index_type`.
SegmentsModule SegmentsAddModule(const std::string& type, int64_t rows, int64_t width,
                                 const std::string& index_type) {
  return [=](int64_t updates) {
    const std::string row = "," + std::to_string(width) + "]";
    const std::string table = type + "[" + std::to_string(rows) + row;
    return "HloModule m\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
           "[] parameter(1)\n  ROOT c = " + type + "[] add(a, b)\n}\nENTRY e {\n  x = " + table +
           " parameter(0)\n  i = " + index_type + "[" + std::to_string(updates) +
           ",1] parameter(1)\n  u = " + type + "[" + std::to_string(updates) + row +
           " parameter(2)\n  ROOT s = " + table +
           " scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
           "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
  };
}

// JAX's x.at[i].add(u) of f32 rows, negative indices wrapped first.
SegmentsModule SegmentsJaxModule(const std::string& index_type, int64_t rows, int64_t width) {
  return
      [=](int64_t updates) { return testing::JaxScatterAddModule(index_type, rows, rows, width, updates); };
}

// Indices from `lowest` to rows + 9, in an order that jumps about, so that
// rows repeat within each segment and across them and some indices name no
// row (before JAX's wrap, or after it for those below -rows).
void FillSegmentsIndices(Literal& indices, int64_t rows, int64_t lowest) {
  const int64_t span = rows + 10 - lowest;
  DispatchElementType(indices.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      int64_t u = 0;
      for (T& index : indices.data<T>()) {
        index = static_cast<T>((u * 7919) % span + lowest);
        ++u;
      }
    }
  });
}

StatusOr<Literal> InterpretSegmentsModule(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return Internal("the test's module does not parse");
  interpreter::InterpreterBackend reference;
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> results, RunOn(reference, *module, arguments));
  if (results.size() != 1) return Internal("expected one result, got ", results.size());
  return std::move(results[0]);
}

// Rows [first, first + count) of `array`.
Literal SegmentRows(const Literal& array, int64_t first, int64_t count) {
  std::vector<int64_t> dimensions;
  for (int64_t d = 0; d < array.shape().rank(); ++d) dimensions.push_back(array.shape().dimensions(d));
  const int64_t row_bytes = static_cast<int64_t>(array.raw().size()) / dimensions[0];
  dimensions[0] = count;
  Literal rows(Shape(array.shape().element_type(), dimensions));
  std::memcpy(rows.raw().data(), array.raw().data() + first * row_bytes,
              static_cast<size_t>(count * row_bytes));
  return rows;
}

// An array of `shape` whose elements are -0 (floats) or 0 (integers).
Literal NegativeZeros(const Shape& shape) {
  Literal zeros(shape);
  DispatchElementType(shape.element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      for (T& value : zeros.data<T>()) value = T{0};
    } else if constexpr (!std::is_same_v<T, complex64> && !std::is_same_v<T, complex128>) {
      for (T& value : zeros.data<T>()) value = static_cast<T>(-0.0f);
    }
  });
  return zeros;
}

// What the segmented scatter should give, from the interpreter: segment s
// of S holds updates [U s / S, U (s + 1) / S); segment 0 is scattered into
// the operand, each other into -0s, and the segments' tables are added up
// in order.
StatusOr<Literal> SegmentedScatterModel(const SegmentsModule& module, const std::vector<Literal>& arguments,
                                        int64_t segments) {
  const int64_t updates = arguments[1].shape().dimensions(0);
  const std::string table = arguments[0].shape().ToString();
  const std::string add = "HloModule add\nENTRY e {\n  a = " + table + " parameter(0)\n  b = " + table +
                          " parameter(1)\n  ROOT c = " + table + " add(a, b)\n}\n";
  Literal sum;
  for (int64_t segment = 0; segment < segments; ++segment) {
    const int64_t begin = updates * segment / segments;
    const int64_t count = updates * (segment + 1) / segments - begin;
    std::vector<Literal> part = {segment == 0 ? arguments[0] : NegativeZeros(arguments[0].shape()),
                                 SegmentRows(arguments[1], begin, count),
                                 SegmentRows(arguments[2], begin, count)};
    KILN_ASSIGN_OR_RETURN(Literal scattered, InterpretSegmentsModule(module(count), part));
    if (segment == 0) {
      sum = std::move(scattered);
    } else {
      KILN_ASSIGN_OR_RETURN(sum, InterpretSegmentsModule(add, {sum, scattered}));
    }
  }
  return sum;
}

// The largest difference between `got` and `want`, element by element.
double LargestSegmentsDifference(const Literal& got, const Literal& want) {
  double largest = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) largest = std::max(largest, AbsDifference(got, want, i));
  return largest;
}

// One case: the module of `updates` updates, its arguments (indices from
// `lowest_index`), the one-pass result and the segments' model.
struct SegmentsCase {
  std::string text;
  RowScatterPlan plan;
  std::vector<Literal> arguments;
  Literal one_pass;
  Literal model;
};

void MakeSegmentsCase(const SegmentsModule& module, int64_t rows, int64_t updates, int64_t lowest_index,
                      SegmentsCase& result) {
  result.text = module(updates);
  std::unique_ptr<Module> parsed = ParseOrDie(result.text);
  ASSERT_NE(parsed, nullptr);
  const std::optional<RowScatterPlan> plan = PlanRowScatter(*parsed->entry()->root());
  ASSERT_TRUE(plan.has_value()) << result.text;
  result.plan = *plan;
  ASSERT_EQ(RowScatterSegments(result.plan), 2) << result.text;
  result.arguments = RandomArguments(*parsed);
  FillSegmentsIndices(result.arguments[1], rows, lowest_index);
  KILN_ASSERT_OK_AND_ASSIGN(result.one_pass, InterpretSegmentsModule(result.text, result.arguments));
  KILN_ASSERT_OK_AND_ASSIGN(result.model, SegmentedScatterModel(module, result.arguments, 2));
}

// Compiles the case's module (one row-scatter thunk) on 1, 2 and 4 threads
// and runs each executable twice (the second run finds the first one's
// scratch in its arena): the model's bytes every time, within `tolerance`
// of the one-pass scatter (its bytes when `tolerance` is 0).
void ExpectSegmentedScatter(const SegmentsModule& module, int64_t rows, int64_t updates, double tolerance,
                            int64_t lowest_index = -10) {
  SegmentsCase segments;
  MakeSegmentsCase(module, rows, updates, lowest_index, segments);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(CountThunks(segments.text, "row-scatter"), 1) << segments.text;
  if (tolerance == 0) {
    ASSERT_EQ(FirstByteDifference(segments.model, segments.one_pass), -1) << segments.text;
  } else {
    ASSERT_LE(LargestSegmentsDifference(segments.model, segments.one_pass), tolerance) << segments.text;
  }
  std::unique_ptr<Module> parsed = ParseOrDie(segments.text);
  ASSERT_NE(parsed, nullptr);
  for (int threads : {1, 2, 4}) {
    CpuBackend cpu;
    CompileOptions options;
    options.num_threads = threads;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*parsed, options));
    for (int run = 0; run < 2; ++run) {
      KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got,
                                RunExecutable(cpu, *executable, segments.arguments));
      ASSERT_EQ(got.size(), 1u);
      const int64_t at = FirstByteDifference(got[0], segments.model);
      ASSERT_EQ(at, -1) << threads << " threads, run " << run << ", element " << at << "\n" << segments.text;
    }
  }
}

TEST(RuntimeRowScatterSegmentsTest, TheSplitTakesAddsOfManyUpdatesIntoTablesThatStayInCache) {
  RowScatterPlan plan;
  plan.type = ElementType::kF32;
  plan.row_elements = 16;
  plan.rows = 100000;  // 6.4 MB, 64 MiB of updates: JAX's benchmark row
  plan.updates = 1 << 20;
  EXPECT_EQ(RowScatterSegments(plan), 2);
  EXPECT_EQ(RowScatterScratchBytes(plan), 6400000);
  plan.combiner = RowScatterCombiner::kAssign;  // the last update wins: one pass
  EXPECT_EQ(RowScatterSegments(plan), 1);
  EXPECT_EQ(RowScatterScratchBytes(plan), 0);
  plan.combiner = RowScatterCombiner::kAdd;
  plan.updates = 199999;  // less than 2 update bytes per table byte
  EXPECT_EQ(RowScatterSegments(plan), 1);
  plan.updates = 200000;
  EXPECT_EQ(RowScatterSegments(plan), 2);
  plan.rows = 1000;  // a small table: 16384 updates at least
  plan.updates = 16383;
  EXPECT_EQ(RowScatterSegments(plan), 1);
  plan.updates = 16384;
  EXPECT_EQ(RowScatterSegments(plan), 2);
  plan.rows = 262144;  // 16 MiB, the largest table split
  plan.updates = 2 * plan.rows;
  EXPECT_EQ(RowScatterSegments(plan), 2);
  plan.rows = 262145;
  plan.updates = 2 * plan.rows;
  EXPECT_EQ(RowScatterSegments(plan), 1);
  plan.rows = 0;
  EXPECT_EQ(RowScatterSegments(plan), 1);
}

TEST(RuntimeRowScatterSegmentsTest, FloatRowsSumEachSegmentInUpdateOrder) {
  ExpectSegmentedScatter(SegmentsAddModule("f32", 1000, 16, "s32"), 1000, 40000, 1e-4);
}

// Rows of whole AVX-512 vectors and of a part vector, and tables that end
// inside a cache line (1000 rows of 17 or 33 f32), which the final sum
// reaches too.
TEST(RuntimeRowScatterSegmentsTest, OddWidthsAndTablesEndingInsideACacheLine) {
  for (int64_t width : {1, 15, 17, 33})
    ExpectSegmentedScatter(SegmentsAddModule("f32", 1000, width, "s32"), 1000, 40000, 1e-4);
  for (int64_t width : {7, 9})
    ExpectSegmentedScatter(SegmentsAddModule("f64", 1000, width, "s64"), 1000, 40000, 1e-12);
}

TEST(RuntimeRowScatterSegmentsTest, IntegerSumsAreTheOnePassScatters) {
  ExpectSegmentedScatter(SegmentsAddModule("s32", 1000, 17, "u32"), 1000, 40000, 0);
  ExpectSegmentedScatter(SegmentsAddModule("s64", 1000, 9, "s64"), 1000, 40000, 0);
  ExpectSegmentedScatter(SegmentsAddModule("u64", 1000, 7, "u64"), 1000, 40000, 0);
  ExpectSegmentedScatter(SegmentsAddModule("u32", 1000, 16, "s32"), 1000, 40000, 0);
}

// Each segment's sums rounded to the type add by add, as the interpreter
// rounds, and the two tables' sum rounded once.
TEST(RuntimeRowScatterSegmentsTest, TwoByteFloatsRoundEachSegmentsSumsToTheirType) {
  for (const char* type : {"bf16", "f16"})
    ExpectSegmentedScatter(SegmentsAddModule(type, 8000, 17, "s32"), 8000, 40000, 0.25);
}

// JAX's wrap runs in both segments: indices from -2 rows - 10 on, those from
// -rows on naming rows from the end, those below and past the rows dropped.
TEST(RuntimeRowScatterSegmentsTest, JaxsWrappedAndOutOfRangeIndices) {
  for (const char* index_type : {"s32", "s64"}) {
    for (int64_t width : {16, 17})
      ExpectSegmentedScatter(SegmentsJaxModule(index_type, 1000, width), 1000, 40000, 1e-4, -2010);
  }
}

// -0 + -0 is -0 but +0 + -0 is +0: a table of -0s and updates of -0 keep
// their sign, in rows that either segment names or neither does.
TEST(RuntimeRowScatterSegmentsTest, NegativeZerosKeepTheirSign) {
  const SegmentsModule module = SegmentsAddModule("f32", 1000, 17, "s32");
  std::unique_ptr<Module> parsed = ParseOrDie(module(40000));
  ASSERT_NE(parsed, nullptr);
  const std::optional<RowScatterPlan> plan = PlanRowScatter(*parsed->entry()->root());
  ASSERT_TRUE(plan.has_value() && RowScatterSegments(*plan) == 2);
  std::vector<Literal> arguments = RandomArguments(*parsed);
  arguments[0] = NegativeZeros(arguments[0].shape());
  arguments[2] = NegativeZeros(arguments[2].shape());
  FillSegmentsIndices(arguments[1], 1000, -10);
  for (int threads : {1, 2}) {
    KILN_ASSERT_OK_AND_ASSIGN(Literal got, testing::RunWithThreads(*parsed, arguments, threads));
    const int64_t at = FirstByteDifference(got, arguments[0]);
    EXPECT_EQ(at, -1) << threads << " threads, element " << at;
  }
}

// RunSegmentedRowScatter called directly, with scratch full of 0xff bytes
// (NaNs, or -1): both row loops, no pool and pools of 1, 2 and 4 threads,
// into another buffer or the operand's own, give the model's bytes.
TEST(RuntimeRowScatterSegmentsTest, AnyScratchAnyPoolEitherRowLoopTheSameBytes) {
  struct Case {
    SegmentsModule module;
    int64_t rows;
    bool wrap;
    int64_t lowest_index;
  };
  const Case cases[] = {{SegmentsAddModule("f32", 1000, 17, "s32"), 1000, false, -10},
                        {SegmentsAddModule("bf16", 8000, 17, "s32"), 8000, false, -10},
                        {SegmentsAddModule("s64", 1000, 9, "u64"), 1000, false, -10},
                        {SegmentsJaxModule("s32", 1000, 16), 1000, true, -2010}};
  for (const Case& test : cases) {
    SegmentsCase segments;
    MakeSegmentsCase(test.module, test.rows, 40000, test.lowest_index, segments);
    if (HasFatalFailure()) return;
    segments.plan.wrap_negative_indices = test.wrap;
    for (RowScatterLanes lanes : {RowScatterLanes::kWidest, RowScatterLanes::kPortable}) {
      for (int threads : {0, 1, 2, 4}) {
        for (bool in_place : {false, true}) {
          std::vector<std::byte> scratch(static_cast<size_t>(RowScatterScratchBytes(segments.plan)),
                                         std::byte{0xff});
          IntraOpThreadPool pool(std::max(threads, 1));
          Literal got = in_place ? segments.arguments[0] : NegativeZeros(segments.arguments[0].shape());
          const void* operand = in_place ? got.raw().data() : segments.arguments[0].raw().data();
          RunSegmentedRowScatter(
              segments.plan, operand,
              {segments.arguments[1].raw().data(), segments.arguments[2].raw().data(), got.raw().data()},
              scratch.data(), threads == 0 ? nullptr : &pool, lanes);
          const int64_t at = FirstByteDifference(got, segments.model);
          EXPECT_EQ(at, -1) << "element " << at << ", " << threads << " threads"
                            << (lanes == RowScatterLanes::kPortable ? ", portable" : "")
                            << (in_place ? ", in place" : "") << "\n"
                            << segments.text;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::cpu
