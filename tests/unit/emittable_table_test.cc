// The emittable table's own rules (core/compiler/emittable_table.h): rows
// that never, always or by a check accept an instruction, element types,
// tuple results, array sizes, and a kChecked row without a check.
#include "core/compiler/emittable_table.h"

#include <gtest/gtest.h>

#include "core/hlo_parser.h"

namespace kiln::compiler {
namespace {

const Instruction& InstructionNamed(const Module& module, const std::string& name) {
  for (const auto& instruction : module.entry()->instructions()) {
    if (instruction->name == name) return *instruction;
  }
  ADD_FAILURE() << "no instruction " << name;
  return *module.entry()->root();
}

class EmittableTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto parsed = ParseHloModule(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[8] parameter(0)
  i = s32[8] parameter(1)
  big = f32[100] parameter(2)
  n = f32[8] negate(a)
  m = s32[8] negate(i)
  c = f32[100] negate(big)
  zero = f32[] constant(0)
  r = f32[] reduce(a, zero), dimensions={0}, to_apply=add
  t = (f32[8], s32[8]) tuple(n, m)
  s = f32[8] sine(a)
  ROOT out = (f32[8], s32[8], f32[100], f32[], (f32[8], s32[8]), f32[8]) tuple(n, m, c, r, t, s)
})");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    module_ = std::move(parsed).value();
  }
  std::unique_ptr<Module> module_;
};

TEST_F(EmittableTableTest, RowsSayNeverAlwaysOrAskTheCheck) {
  int checked = 0;
  EmittableTable table(
      "testdevice",
      {{Opcode::kNegate, Emittability::kAlways, {ElementType::kF32}},
       {Opcode::kReduce, Emittability::kChecked}},
      [&checked](const Instruction& instruction) {
        ++checked;
        return instruction.name == "r" ? OkStatus() : Unimplemented("no");
      },
      /*max_elements=*/64);
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "n")).ok());
  const Status integer = table.Check(InstructionNamed(*module_, "m"));
  EXPECT_EQ(integer.code(), StatusCode::kUnimplemented);
  EXPECT_NE(integer.message().find("testdevice: cannot emit negate s32[8] (m): not for element type s32"),
            std::string::npos)
      << integer.ToString();
  const Status large = table.Check(InstructionNamed(*module_, "c"));
  EXPECT_NE(large.message().find("more than 64 elements"), std::string::npos) << large.ToString();
  EXPECT_EQ(checked, 0);  // the kAlways row and the refusals asked nothing
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "r")).ok());
  EXPECT_EQ(checked, 1);
  const Status sort = table.Check(InstructionNamed(*module_, "s"));
  EXPECT_NE(sort.message().find("no kernel of this backend computes it"), std::string::npos)
      << sort.ToString();
  EXPECT_EQ(checked, 1);
}

TEST_F(EmittableTableTest, TupleResultsOnlyWhereTheRowAllowsThem) {
  EmittableTable without("testdevice", {{Opcode::kTuple, Emittability::kAlways}});
  EXPECT_EQ(without.Check(InstructionNamed(*module_, "t")).code(), StatusCode::kUnimplemented);
  EmittableTable with("testdevice", {{Opcode::kTuple, Emittability::kAlways, ElementTypeSet::All(), true}});
  EXPECT_TRUE(with.Check(InstructionNamed(*module_, "t")).ok());
  // A tuple operand is never a kernel's argument.
  EXPECT_EQ(with.Check(*module_->entry()->root()).code(), StatusCode::kUnimplemented);
}

TEST_F(EmittableTableTest, OverrideRestrictAndAMissingCheck) {
  EmittableTable table("testdevice", {{Opcode::kNegate, Emittability::kAlways}});
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "m")).ok());
  table.Restrict({ElementType::kF32});
  EXPECT_FALSE(table.Check(InstructionNamed(*module_, "m")).ok());
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "n")).ok());
  table.Override({{Opcode::kNegate, Emittability::kChecked}});
  EXPECT_EQ(table.Check(InstructionNamed(*module_, "n")).code(), StatusCode::kInternal);
  EXPECT_TRUE(ElementTypeSet::All().Contains(ElementType::kC128));
  EXPECT_FALSE(ElementTypeSet::All().Contains(ElementType::kTuple));
}

TEST_F(EmittableTableTest, AnInstructionBindsAtMostTheKernelBufferLimit) {
  EmittableTable table("testdevice", {{Opcode::kNegate, Emittability::kAlways},
                                      {Opcode::kTuple, Emittability::kAlways, ElementTypeSet::All(), true}});
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "t")).ok());  // unbounded by default
  table.set_max_kernel_buffers(4);  // the tuple of two binds 2 operands and 2 results
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "t")).ok());
  table.set_max_kernel_buffers(3);
  const Status over = table.Check(InstructionNamed(*module_, "t"));
  EXPECT_EQ(over.code(), StatusCode::kUnimplemented);
  EXPECT_NE(
      over.message().find("would bind 4 buffers (one per operand and result); this backend binds at most 3"),
      std::string::npos)
      << over.ToString();
  table.set_max_kernel_buffers(2);  // negate: one operand, one result
  EXPECT_TRUE(table.Check(InstructionNamed(*module_, "n")).ok());
  table.set_max_kernel_buffers(1);
  EXPECT_EQ(table.Check(InstructionNamed(*module_, "n")).code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace kiln::compiler
