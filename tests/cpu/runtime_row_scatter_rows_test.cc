// The row scatter's inner loop (backends/cpu/row_scatter_rows.h) called
// directly: both row loops (AVX-512 vectors and element by element), over
// the destination rows in one stretch or split into several as threads
// split them, give the interpreter's bytes for rows of odd widths, with
// repeated and out-of-range indices.
#include <cstring>
#include <initializer_list>
#include <string>

#include "backends/cpu/row_scatter_rows.h"
#include "tests/cpu/jax_row_scatter_module.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::FirstByteDifference;
using testing::ParseOrDie;
using testing::RandomArguments;
using testing::RunOn;

// A scatter of `updates` rows of `width` elements of `type` into `rows`
// rows, indices [U, 1] of `index_type`, combined by `combine`.
std::string RowScatterRowsModule(const std::string& type, int64_t rows, int64_t width, int64_t updates,
                                 const std::string& index_type, const std::string& combine) {
  const std::string operand = type + "[" + std::to_string(rows) + "," + std::to_string(width) + "]";
  const std::string update = type + "[" + std::to_string(updates) + "," + std::to_string(width) + "]";
  const std::string root = combine == "set"
                               ? "ROOT b = " + type + "[] parameter(1)"
                               : "b = " + type + "[] parameter(1)\n  ROOT c = " + type + "[] add(a, b)";
  return "HloModule m\ncombine {\n  a = " + type + "[] parameter(0)\n  " + root +
         "\n}\nENTRY e {\n  x = " + operand + " parameter(0)\n  i = " + index_type + "[" +
         std::to_string(updates) + ",1] parameter(1)\n  u = " + update +
         " parameter(2)\n  ROOT s = " + operand +
         " scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

// Indices from `lowest` to rows + 2, each row named about updates / rows
// times, in an order that jumps about.
void FillRowScatterRowsIndices(Literal& indices, int64_t rows, int64_t lowest) {
  DispatchElementType(indices.shape().element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      int64_t u = 0;
      for (T& index : indices.data<T>()) {
        index = static_cast<T>((u * 104729) % (rows + 3 - lowest) + lowest);
        ++u;
      }
    }
  });
}

// Whether `scatter`'s combiner keeps the update (`set`: ROOT b = parameter(1)).
bool RowScatterOverwrites(const Instruction& scatter) {
  const Instruction& root = *scatter.called[0]->root();
  return root.opcode == Opcode::kParameter && root.attrs.parameter_number == 1;
}

// The interpreter's bytes for a row scatter (RowScatterRowsModule) whose
// combiner keeps the update, without calling the combiner per element as
// the interpreter does (most of this file's time, far more under ASan):
// the updates in order, each that names a row in range overwriting it, so
// a row holds the last update that names it. arguments: the table, the
// [U, 1] indices, the updates. OverwritingUpdatesInOrderGiveTheInterpretersBytes
// checks it against the interpreter.
Literal RowsOverwrittenInUpdateOrder(const std::vector<Literal>& arguments) {
  const Literal& indices = arguments[1];
  const Literal& updates = arguments[2];
  Literal table = arguments[0];
  const int64_t rows = table.shape().dimensions()[0];
  const auto row_bytes =
      static_cast<size_t>(table.shape().dimensions()[1] * ByteWidth(table.shape().element_type()));
  for (int64_t u = 0; u < indices.element_count(); ++u) {
    const int64_t row = indices.GetAsInt64(u);
    if (row < 0 || row >= rows) continue;
    std::memcpy(table.raw().data() + static_cast<size_t>(row) * row_bytes,
                updates.raw().data() + static_cast<size_t>(u) * row_bytes, row_bytes);
  }
  return table;
}

// Overwriting scatters of 2-, 4- and 8-byte rows of widths 1 and 17, with
// repeated and out-of-range indices: the reference above gives the
// interpreter's bytes.
TEST(RuntimeRowScatterRowsTest, OverwritingUpdatesInOrderGiveTheInterpretersBytes) {
  for (const char* type : {"f16", "f32", "u64"}) {
    for (int64_t width : {1, 17}) {
      const std::string text = RowScatterRowsModule(type, 40, width, 300, "s32", "set");
      SCOPED_TRACE(text);
      std::unique_ptr<Module> module = ParseOrDie(text);
      ASSERT_NE(module, nullptr);
      ASSERT_TRUE(RowScatterOverwrites(*module->entry()->root()));
      std::vector<Literal> arguments = RandomArguments(*module);
      FillRowScatterRowsIndices(arguments[1], 40, -3);
      interpreter::InterpreterBackend reference;
      KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, *module, arguments));
      const int64_t at = FirstByteDifference(RowsOverwrittenInUpdateOrder(arguments), want[0]);
      EXPECT_EQ(at, -1) << "element " << at;
    }
  }
}

// Runs the scatter of `text` through ApplyRowScatterUpdates with each row
// loop (lanes), its rows split into each count of `stretch_counts` equal
// stretches applied one after another, and expects the interpreter's bytes
// (RowsOverwrittenInUpdateOrder's where the combiner keeps the update),
// computed once for them all. With `wrap`, the scatter's indices are JAX's
// wrap of parameter 1 (jax_row_scatter_module.h), which the rows loop is
// given instead and wraps itself; the indices start at -2 rows - 3.
void ExpectRowLoopsGiveTheInterpretersBytes(const std::string& text, int64_t rows,
                                            std::initializer_list<int64_t> stretch_counts,
                                            bool wrap = false) {
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Instruction* scatter = module->entry()->root();
  std::optional<RowScatterPlan> plan = PlanRowScatter(*scatter);
  ASSERT_TRUE(plan.has_value());
  plan->wrap_negative_indices = wrap;
  std::vector<Literal> arguments = RandomArguments(*module);
  FillRowScatterRowsIndices(arguments[1], rows, wrap ? -2 * rows - 3 : -3);
  std::vector<Literal> want;
  if (RowScatterOverwrites(*scatter)) {
    want.push_back(RowsOverwrittenInUpdateOrder(arguments));
  } else {
    interpreter::InterpreterBackend reference;
    KILN_ASSERT_OK_AND_ASSIGN(want, RunOn(reference, *module, arguments));
  }
  ASSERT_EQ(want.size(), 1u);
  for (RowScatterLanes lanes : {RowScatterLanes::kWidest, RowScatterLanes::kPortable}) {
    for (int64_t stretches : stretch_counts) {
      Literal got = arguments[0];
      const RowScatterArrays arrays{arguments[1].raw().data(), arguments[2].raw().data(), got.raw().data()};
      for (int64_t stretch = 0; stretch < stretches; ++stretch)
        ApplyRowScatterUpdates(*plan, arrays, rows * stretch / stretches, rows * (stretch + 1) / stretches,
                               lanes);
      const int64_t at = FirstByteDifference(got, want[0]);
      EXPECT_EQ(at, -1) << "element " << at << ", " << stretches << " stretches, "
                        << (lanes == RowScatterLanes::kPortable ? "portable" : "widest") << " lanes";
    }
  }
}

// Widths of whole vectors, less, more and neither, of 2-, 4- and 8-byte
// elements; more updates than one listed block (1024) and not a multiple.
TEST(RuntimeRowScatterRowsTest, BothRowLoopsGiveTheInterpretersBytesForOddWidths) {
  for (const char* type : {"f32", "f64", "bf16", "f16", "s32", "u64"}) {
    for (int64_t width : {1, 7, 8, 9, 15, 16, 17, 33}) {
      for (const char* combine : {"add", "set"}) {
        ExpectRowLoopsGiveTheInterpretersBytes(RowScatterRowsModule(type, 300, width, 2500, "s32", combine),
                                               300, {1, 3});
      }
    }
  }
}

TEST(RuntimeRowScatterRowsTest, EveryIndexTypeFindsItsStretch) {
  for (const char* index_type : {"s32", "s64", "u32", "u64"}) {
    ExpectRowLoopsGiveTheInterpretersBytes(RowScatterRowsModule("f32", 1000, 16, 3000, index_type, "add"),
                                           1000, {4});
  }
}

// JAX's negative indices wrapped in both row loops, in one stretch (every
// update in turn) and in three (each listing its own): those from -rows on
// name rows from the end, those below are dropped.
TEST(RuntimeRowScatterRowsTest, WrappedNegativeIndicesNameRowsFromTheEnd) {
  for (const char* index_type : {"s32", "s64"}) {
    for (int64_t width : {16, 17}) {
      ExpectRowLoopsGiveTheInterpretersBytes(testing::JaxScatterAddModule(index_type, 300, 300, width, 2500),
                                             300, {1, 3}, /*wrap=*/true);
    }
  }
}

// Fewer updates than the prefetch distance, and none at all.
TEST(RuntimeRowScatterRowsTest, AFewUpdatesOrNone) {
  for (int64_t updates : {0, 1, 5}) {
    ExpectRowLoopsGiveTheInterpretersBytes(RowScatterRowsModule("f32", 40, 16, updates, "s32", "add"), 40,
                                           {2});
  }
}

// Sums that overflow, infinities that cancel (a NaN) and, in bf16, NaNs
// with payloads: each lane rounds as Eigen's conversions do (bf16: the quiet
// NaN 0x7fc0 with the sign). An f16 NaN's payload is the hardware's, so f16
// gets only the NaNs the sums make.
TEST(RuntimeRowScatterRowsTest, TwoByteFloatsRoundInfinitiesAndNaNsAsTheInterpreter) {
  for (const char* type : {"bf16", "f16"}) {
    const std::string text = RowScatterRowsModule(type, 8, 33, 64, "s32", "add");
    std::unique_ptr<Module> module = ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    std::vector<Literal> arguments = RandomArguments(*module);
    const bool bf16 = std::string(type) == "bf16";
    // Raw bits: +inf, -inf, the largest finite, and (bf16) a NaN with a payload.
    const uint16_t inf = bf16 ? 0x7f80 : 0x7c00;
    const uint16_t largest = bf16 ? 0x7f7f : 0x7bff;
    const std::vector<uint16_t> specials = {inf, static_cast<uint16_t>(inf | 0x8000), largest,
                                            bf16 ? uint16_t{0xff81} : largest};
    auto set_bits = [](Literal& literal, int64_t i, uint16_t bits) {
      std::memcpy(literal.raw().data() + 2 * i, &bits, 2);
    };
    for (int64_t i = 0; i < arguments[0].element_count(); i += 3)
      set_bits(arguments[0], i, specials[static_cast<size_t>(i / 3 % 4)]);
    for (int64_t i = 0; i < arguments[2].element_count(); i += 2)
      set_bits(arguments[2], i, specials[static_cast<size_t>((i / 2 + 1) % 4)]);
    for (int64_t u = 0; u < 64; ++u)
      arguments[1].data<int32_t>()[static_cast<size_t>(u)] = static_cast<int32_t>(u % 8);
    interpreter::InterpreterBackend reference;
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, *module, arguments));
    const std::optional<RowScatterPlan> plan = PlanRowScatter(*module->entry()->root());
    ASSERT_TRUE(plan.has_value());
    for (RowScatterLanes lanes : {RowScatterLanes::kWidest, RowScatterLanes::kPortable}) {
      Literal got = arguments[0];
      ApplyRowScatterUpdates(*plan, {arguments[1].raw().data(), arguments[2].raw().data(), got.raw().data()},
                             0, 8, lanes);
      const int64_t at = FirstByteDifference(got, want[0]);
      EXPECT_EQ(at, -1) << type << ": element " << at
                        << (lanes == RowScatterLanes::kPortable ? ", portable" : "");
    }
  }
}

// A thread per 8 MiB of destination rows and per 16384 updates, as many
// as the pool has, one at least.
TEST(RuntimeRowScatterRowsTest, ThreadsOnlyForTablesLargerThanTheCacheAndManyUpdates) {
  RowScatterPlan plan;
  plan.type = ElementType::kF32;
  plan.row_elements = 16;
  plan.rows = 100000;  // 6.4 MB: stays in cache, one thread
  plan.updates = 1 << 20;
  EXPECT_EQ(RowScatterThreads(plan, 2), 1);
  plan.rows = 1000000;  // 64 MB: seven threads' worth
  EXPECT_EQ(RowScatterThreads(plan, 1), 1);
  EXPECT_EQ(RowScatterThreads(plan, 2), 2);
  EXPECT_EQ(RowScatterThreads(plan, 16), 7);
  plan.type = ElementType::kF64;  // 128 MB
  EXPECT_EQ(RowScatterThreads(plan, 16), 15);
  plan.updates = 40000;  // two threads' worth of updates
  EXPECT_EQ(RowScatterThreads(plan, 4), 2);
  plan.updates = 100;
  EXPECT_EQ(RowScatterThreads(plan, 4), 1);
  plan.updates = 1 << 20;
  plan.rows = 3;  // a thread per row at most
  plan.row_elements = 1 << 22;
  EXPECT_EQ(RowScatterThreads(plan, 4), 3);
  plan.rows = 0;
  EXPECT_EQ(RowScatterThreads(plan, 4), 1);
}

}  // namespace
}  // namespace kiln::cpu
