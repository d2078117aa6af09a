// The row scatter's loops over every update of a table (one stretch of all
// its rows, backends/cpu/row_scatter_rows.h): the general one and, for an
// add of rows of 1, 2 or 4 whole 64-byte vectors, one with the width known
// at compile time. Each prefetches the destination row of the update 32 on
// and the update row RowScatterUpdatePrefetchRows on. Here: rows of every
// such width and others, in both row loops, with JAX's wrapped indices and
// without, for update counts about those distances, so that the last
// updates, whose rows nothing prefetches, are applied too and no index is
// read past the end of its array (which ASan sees); and the distance in
// rows for each row size.
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

// `updates` rows of `width` elements of `type` added into `rows` rows,
// indices [U, 1] s32.
std::string PrefetchTestAddModule(const std::string& type, int64_t rows, int64_t width, int64_t updates) {
  const std::string row = "," + std::to_string(width) + "]";
  const std::string table = type + "[" + std::to_string(rows) + row;
  return "HloModule m\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] add(a, b)\n}\nENTRY e {\n  x = " + table +
         " parameter(0)\n  i = s32[" + std::to_string(updates) + ",1] parameter(1)\n  u = " + type + "[" +
         std::to_string(updates) + row + " parameter(2)\n  ROOT s = " + table +
         " scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

// Applies the scatter of `text` (whose indices are parameter 1, wrapped as
// JAX does where `wrap`) with ApplyRowScatterUpdates over all `rows` rows in
// each row loop, the indices from `lowest` to rows + 2 in an order that
// jumps about, and expects the interpreter's bytes.
void ExpectPrefetchedRowLoopGivesTheInterpretersBytes(const std::string& text, int64_t rows, int64_t lowest,
                                                      bool wrap) {
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  std::optional<RowScatterPlan> plan = PlanRowScatter(*module->entry()->root());
  ASSERT_TRUE(plan.has_value());
  plan->wrap_negative_indices = wrap;
  std::vector<Literal> arguments = RandomArguments(*module);
  int64_t u = 0;
  for (int32_t& index : arguments[1].data<int32_t>()) {
    index = static_cast<int32_t>((u * 7919) % (rows + 3 - lowest) + lowest);
    ++u;
  }
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 1u);
  for (RowScatterLanes lanes : {RowScatterLanes::kWidest, RowScatterLanes::kPortable}) {
    Literal got = arguments[0];
    ApplyRowScatterUpdates(*plan, {arguments[1].raw().data(), arguments[2].raw().data(), got.raw().data()}, 0,
                           rows, lanes);
    const int64_t at = FirstByteDifference(got, want[0]);
    EXPECT_EQ(at, -1) << "element " << at << (lanes == RowScatterLanes::kPortable ? ", portable" : ", widest")
                      << " lanes";
  }
}

// Rows of 1, 2 and 4 whole vectors of each 4- and 8-byte type, of 3
// vectors and of none (the general loop); update counts just under, at and
// over the update rows' distance (32 rows of 64 bytes, 16 of 128, 8 of
// 256, 30 of 68, 1 of 2800), the destination rows' (32) and both together.
TEST(RuntimeRowScatterPrefetchTest, UpdatesAboutThePrefetchDistancesAllLand) {
  constexpr int64_t kRows = 40;
  const struct {
    const char* type;
    int64_t width;
  } kRowShapes[] = {{"f32", 16},  {"f32", 32}, {"f32", 64}, {"f32", 48}, {"f32", 17},
                    {"f32", 700}, {"s32", 16}, {"u32", 32}, {"f64", 8},  {"f64", 16},
                    {"f64", 32},  {"s64", 8},  {"u64", 32}, {"f64", 9},  {"bf16", 32}};
  for (const auto& shape : kRowShapes) {
    const std::string type = shape.type;
    const int64_t lead = RowScatterUpdatePrefetchRows(shape.width * ByteWidth(*ElementTypeFromName(type)));
    for (int64_t updates : {lead - 1, lead, lead + 1, int64_t{31}, int64_t{32}, int64_t{33}, lead + 33}) {
      ExpectPrefetchedRowLoopGivesTheInterpretersBytes(
          PrefetchTestAddModule(type, kRows, shape.width, updates), kRows, -3, /*wrap=*/false);
      if (type == "f32") {
        ExpectPrefetchedRowLoopGivesTheInterpretersBytes(
            testing::JaxScatterAddModule("s32", kRows, kRows, shape.width, updates), kRows, -2 * kRows - 3,
            /*wrap=*/true);
      }
    }
  }
}

// About 2 KiB of the update stream ahead, a row at least, rows of no bytes
// included.
TEST(RuntimeRowScatterPrefetchTest, TheUpdateRowsArePrefetchedAboutTwoKibAhead) {
  EXPECT_EQ(RowScatterUpdatePrefetchRows(64), 32);
  EXPECT_EQ(RowScatterUpdatePrefetchRows(68), 30);
  EXPECT_EQ(RowScatterUpdatePrefetchRows(2048), 1);
  EXPECT_EQ(RowScatterUpdatePrefetchRows(2800), 1);
  EXPECT_EQ(RowScatterUpdatePrefetchRows(1 << 20), 1);
  EXPECT_GE(RowScatterUpdatePrefetchRows(0), 1);
}

}  // namespace
}  // namespace kiln::cpu
