// Scatters over several operands whose combiner works component by
// component (core/autodiff/variadic_scatter_rules.cc): both modes against
// f64 central differences on the interpreter and cpu, and against each
// other, with an add and an overwrite component and repeated indices; a
// combiner that mixes components is refused by name.
#include <random>
#include <string>
#include <vector>

#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::F64;
using testing::RandomF64;

// Two scatters in one: `first` combines the operands' first components,
// the second component is overwritten.
std::string TwoScatters(const std::string& first) {
  return R"(HloModule two_scatters
combine {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = f64[] parameter(2)
  d = f64[] parameter(3)
  s = f64[] )" +
         first + R"(
  ROOT r = (f64[], f64[]) tuple(s, d)
}

ENTRY main {
  x = f64[5,2] parameter(0)
  y = f64[5,2] parameter(1)
  u = f64[3,2] parameter(2)
  w = f64[3,2] parameter(3)
  indices = s32[3,1] constant({{1}, {3}, {1}})
  r = (f64[5,2], f64[5,2]) scatter(x, y, indices, u, w), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
  a = f64[5,2] get-tuple-element(r), index=0
  b = f64[5,2] get-tuple-element(r), index=1
  sa = f64[5,2] sine(a)
  bb = f64[5,2] multiply(b, b)
  ROOT out = (f64[5,2], f64[5,2]) tuple(sa, bb)
}
)";
}

std::unique_ptr<Module> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  return module.ok() ? std::move(module).value() : nullptr;
}

TEST(AutodiffVariadicScatterTest, ComponentwiseCombinersInBothModes) {
  auto module = Parse(TwoScatters("add(a, c)"));
  ASSERT_NE(module, nullptr);
  std::mt19937 random(1);
  const std::vector<Literal> inputs = {RandomF64(F64({5, 2}), random), RandomF64(F64({5, 2}), random),
                                       RandomF64(F64({3, 2}), random), RandomF64(F64({3, 2}), random)};
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 2, 3}, inputs, 2);
  testing::ExpectJvpMatches(*module, {0, 1, 2, 3}, inputs, 3);
}

TEST(AutodiffVariadicScatterTest, ACombinerThatMixesComponentsIsRefused) {
  auto module = Parse(TwoScatters("add(a, d)"));
  ASSERT_NE(module, nullptr);
  for (const bool reverse : {true, false}) {
    const Status status = reverse ? autodiff::BuildVjp(*module, std::vector<int64_t>{0}).status()
                                  : autodiff::BuildJvp(*module, std::vector<int64_t>{0}).status();
    EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
    EXPECT_NE(status.message().find("'scatter' over several operands whose combiner's result 0 reads other"),
              std::string::npos)
        << status.message();
  }
}

}  // namespace
}  // namespace kiln
