// The dot thunk against the interpreter: batch dimensions, every operand
// orientation, operands that need a transpose, vectors, other float types.
#include "backends/cpu/dot_thunk.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;

TEST(RuntimeDotTest, MatrixMatrix) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[33,70] parameter(0)
  b = f32[70,21] parameter(1)
  ROOT d = f32[33,21] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(RuntimeDotTest, TransposedContractionsOnBothSides) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[70,33] parameter(0)
  b = f32[21,70] parameter(1)
  ROOT d = f32[33,21] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})");
}

TEST(RuntimeDotTest, BatchDimensions) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[2,3,5,8] parameter(0)
  b = f32[2,3,8,4] parameter(1)
  ROOT d = f32[2,3,5,4] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
})");
}

TEST(RuntimeDotTest, BatchDimensionNotLeadingNeedsTranspose) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[5,4,8] parameter(0)
  b = f32[8,4,6] parameter(1)
  ROOT d = f32[4,5,6] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
})");
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  a = f32[5,4,8] parameter(0)
  b = f32[8,4,6] parameter(1)
  ROOT d = f32[4,5,6] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
})");
  std::optional<DotPlan> plan = PlanDot(*module->entry()->root());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->lhs_permutation, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(plan->rhs_permutation, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(plan->geometry.batch, 4);
  EXPECT_EQ(plan->geometry.m, 5);
  EXPECT_EQ(plan->geometry.k, 8);
  EXPECT_EQ(plan->geometry.n, 6);
}

TEST(RuntimeDotTest, SeveralContractingDimensions) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[3,4,5] parameter(0)
  b = f32[4,5,7] parameter(1)
  ROOT d = f32[3,7] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
})");
}

TEST(RuntimeDotTest, VectorMatrixAndMatrixVector) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  v = f32[9] parameter(0)
  m = f32[9,6] parameter(1)
  w = f32[6] parameter(2)
  vm = f32[6] dot(v, m), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  mv = f32[9] dot(m, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vv = f32[] dot(vm, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[6], f32[9], f32[]) tuple(vm, mv, vv)
})");
}

TEST(RuntimeDotTest, LargeProductUsesThePoolAndStaysExact) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[130,200] parameter(0)
  b = f32[200,150] parameter(1)
  ROOT d = f32[130,150] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                           1e-3);
}

TEST(RuntimeDotTest, DoubleAndComplex) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f64[4,6] parameter(0)
  b = f64[6,3] parameter(1)
  c = c64[2,5] parameter(2)
  d = c64[5,3] parameter(3)
  x = f64[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = c64[2,3] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f64[4,3], c64[2,3]) tuple(x, y)
})",
                           1e-5);
}

TEST(RuntimeDotTest, EmptyContractionGivesZeros) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = f32[3,0] parameter(0)
  b = f32[0,2] parameter(1)
  ROOT d = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(RuntimeDotTest, OtherTypesTakeTheGenericPath) {
  ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  a = s32[3,4] parameter(0)
  b = s32[4,2] parameter(1)
  ROOT d = s32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                           0);
}

}  // namespace
}  // namespace kiln::cpu
