// Column reductions (backends/llvm/column_reduction_emitter.h) read the
// rows one after another where consecutive rows are one contiguous stream,
// and in groups of eight otherwise; either way each output adds its inputs
// in the interpreter's order, so the bytes are the interpreter's.
#include <string>

#include <gtest/gtest.h>

#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

std::string SumModule(const std::string& input, const std::string& output, const std::string& dimensions) {
  return "HloModule column\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] "
         "add(a, "
         "b)\n}\nENTRY main {\n  x = " +
         input + " parameter(0)\n  zero = f32[] constant(0)\n  ROOT out = " + output +
         " reduce(x, zero), dimensions={" + dimensions + "}, to_apply=add\n}\n";
}

TEST(RuntimeColumnReductionTest, RowsOneAfterAnotherOrInGroupsAddInTheInterpretersOrder) {
  const struct {
    std::string input, output, dimensions;
  } cases[] = {
      {"f32[6,40,48]", "f32[6,48]", "1"},      // whole rows, contiguous: one after another
      {"f32[37,130]", "f32[130]", "0"},        // the same, odd sizes
      {"f32[9,40,1500]", "f32[9,1500]", "1"},  // rows longer than a block: in groups
      {"f32[20,3,70]", "f32[70]", "0,1"},      // two reduced dimensions, whole rows
      {"f32[30,8,16]", "f32[8,16]", "0"},      // rows of a reduced position far apart: in groups
      {"f32[13,5,70]", "f32[5,70]", "0"},      // too few rows for a group: one at a time
      {"f32[50,3,200]", "f32[3,200]", "0"},    // groups, then the rows left over
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input + " over " + c.dimensions);
    std::unique_ptr<Module> module = testing::ParseOrDie(SumModule(c.input, c.output, c.dimensions));
    ASSERT_NE(module, nullptr);
    testing::ExpectSameBytesOnThreads(*module, testing::RandomArguments(*module));
  }
}

}  // namespace
}  // namespace kiln::cpu
