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
  const std::string type = input.substr(0, input.find('['));
  return "HloModule column\nadd {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT s = " + type + "[] add(a, b)\n}\nENTRY main {\n  x = " + input +
         " parameter(0)\n  zero = " + type + "[] constant(0)\n  ROOT out = " + output +
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
      // Trailing output dimensions taken as one (ColumnReductionTailDims):
      {"f32[6,8,40]", "f32[8,40]", "0"},        // one block of all 8 rows of 40
      {"f32[20,64,200]", "f32[64,200]", "0"},   // blocks of 5 rows of 200, the last of 4
      {"f32[3,4,5,6]", "f32[5,6]", "0,1"},      // two reduced dimensions
      {"f32[5,4,3,100]", "f32[5,3,100]", "1"},  // a kept dimension before the reduced one
      {"f32[17,3,5,7]", "f32[3,5,7]", "0"},     // a tail of three dimensions
      {"f64[19,9,33]", "f64[9,33]", "0"},       // other types
      {"bf16[21,10,24]", "bf16[10,24]", "0"},
      {"f32[5,3,0]", "f32[3,0]", "0"},  // no outputs
      {"f32[5,0,8]", "f32[0,8]", "0"},
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
