// f32 dots large enough for the oneDNN matmul path, against the interpreter,
// with each operand plain or transposed and with a batch dimension, plus dots
// that stay on Eigen. In a build without oneDNN the same comparisons check the
// Eigen path and the routing checks expect Eigen (OneDnnMatmul::Available()).
#include <memory>
#include <string>

#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/onednn_matmul.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

using testing::ExpectMatchesInterpreter;
using testing::ParseOrDie;

// Whether the dot thunk made for the root of `text` runs on oneDNN (the
// root's operands must already be in an order PlanDot takes as it is).
bool RootUsesOneDnn(const std::string& text) {
  std::unique_ptr<Module> module = ParseOrDie(text);
  if (module == nullptr) return false;
  std::optional<DotPlan> plan = PlanDot(*module->entry()->root());
  EXPECT_TRUE(plan.has_value());
  if (!plan.has_value()) return false;
  EXPECT_TRUE(plan->lhs_permutation.empty() && plan->rhs_permutation.empty());
  DotThunk thunk(0, 1, 2, plan->geometry);
  return thunk.uses_onednn();
}

void ExpectMatchesOnPath(const std::string& text, bool onednn_can_run_it, double tolerance = 1e-3) {
  ExpectMatchesInterpreter(text, tolerance);
  EXPECT_EQ(RootUsesOneDnn(text), onednn_can_run_it && OneDnnMatmul::Available())
      << "oneDNN in this build: " << OneDnnMatmul::Available();
}

TEST(RuntimeOneDnnMatmulTest, PlainProduct) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[70,96] parameter(0)
  b = f32[96,80] parameter(1)
  ROOT d = f32[70,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      true);
}

TEST(RuntimeOneDnnMatmulTest, TransposedOperands) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[96,70] parameter(0)
  b = f32[80,96] parameter(1)
  ROOT d = f32[70,80] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})",
                      true);
}

TEST(RuntimeOneDnnMatmulTest, BatchedProduct) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[3,64,72] parameter(0)
  b = f32[3,72,66] parameter(1)
  ROOT d = f32[3,64,66] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
                      true);
}

// Large enough that a two-thread backend splits it among its threads.
TEST(RuntimeOneDnnMatmulTest, ProductThatRunsOnSeveralThreads) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[256,384] parameter(0)
  b = f32[384,512] parameter(1)
  ROOT d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      true, 1e-2);
}

TEST(RuntimeOneDnnMatmulTest, SmallProductStaysOnEigen) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      false);
}

TEST(RuntimeOneDnnMatmulTest, DoubleStaysOnEigen) {
  ExpectMatchesOnPath(R"(HloModule m
ENTRY e {
  a = f64[70,96] parameter(0)
  b = f64[96,80] parameter(1)
  ROOT d = f64[70,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                      false);
}

}  // namespace
}  // namespace kiln::cpu
