// map in both modes (core/autodiff/map_rules.cc): its body differentiated
// as an elementwise function, against f64 central differences, reverse
// against forward mode (<w, J v> == <J^T w, v>), on the interpreter and cpu,
// and the refusal of a body that is not elementwise.
#include <random>
#include <string>
#include <vector>

#include "core/autodiff/jvp.h"
#include "core/hlo_parser.h"
#include "tests/unit/autodiff_gradient_check.h"
#include "tests/unit/autodiff_jvp_check.h"

namespace kiln {
namespace {

using testing::BuildModule;
using testing::F64;
using testing::RandomF64;

const Shape kScalar = Shape::Scalar(ElementType::kF64);

// (a, b) -> a * a * b, a computation for a nested map.
std::unique_ptr<Module> SquareTimes() {
  Builder builder("square_times");
  Op a = builder.Parameter(0, kScalar, "a");
  Op b = builder.Parameter(1, kScalar, "b");
  auto module = builder.Build(builder.Mul(builder.Mul(a, a), b));
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// (a, b, n) -> sin(a) * b + (a > b ? exp(0.5 a) : b * f64(n)) + a^2 b (the
// last through a nested map): elementwise math, a constant, a compare and
// select, a convert and an integer operand that gets no gradient.
std::unique_ptr<Module> Body(const Module& nested) {
  Builder builder("body");
  Op a = builder.Parameter(0, kScalar, "a");
  Op b = builder.Parameter(1, kScalar, "b");
  Op n = builder.Parameter(2, Shape::Scalar(ElementType::kS32), "n");
  Op chosen = builder.Select(builder.Gt(a, b), builder.Exp(builder.Mul(builder.ConstantR0<double>(0.5), a)),
                             builder.Mul(b, builder.ConvertElementType(n, ElementType::kF64)));
  const Op pair[] = {a, b};
  Op nested_result = builder.Map(pair, nested, {});
  auto module =
      builder.Build(builder.Add(builder.Add(builder.Mul(builder.Sin(a), b), chosen), nested_result));
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// map(body) over [2, 3] arrays, multiplied by a third parameter after.
std::unique_ptr<Module> Mapped() {
  auto nested = SquareTimes();
  auto body = Body(*nested);
  if (body == nullptr) return nullptr;
  const Shape shape = F64({2, 3});
  return BuildModule({shape, shape, Shape(ElementType::kS32, {2, 3}), shape},
                     [&](Builder& b, const std::vector<Op>& p) {
                       const Op operands[] = {p[0], p[1], p[2]};
                       const int64_t dimensions[] = {0, 1};
                       return b.Mul(b.Map(operands, *body, dimensions), p[3]);
                     });
}

std::vector<Literal> Inputs(uint32_t seed) {
  std::mt19937 random(seed);
  Literal counts(Shape(ElementType::kS32, {2, 3}));
  for (int32_t i = 0; i < 6; ++i) counts.data<int32_t>()[static_cast<size_t>(i)] = i - 2;
  return {RandomF64(F64({2, 3}), random), RandomF64(F64({2, 3}), random), std::move(counts),
          RandomF64(F64({2, 3}), random)};
}

TEST(AutodiffMapTest, ReverseModeDifferentiatesTheBodyElementwise) {
  auto module = Mapped();
  ASSERT_NE(module, nullptr);
  testing::ExpectGradientsMatchFiniteDifferences(*module, {0, 1, 3}, Inputs(1), 2);
}

TEST(AutodiffMapTest, ForwardModeAgreesWithDifferencesAndReverseMode) {
  auto module = Mapped();
  ASSERT_NE(module, nullptr);
  testing::ExpectJvpMatches(*module, {0, 1, 3}, Inputs(3), 4);
  testing::ExpectJvpMatches(*module, {1}, Inputs(5), 6);
}

// Grad of grad: the gradient module calls the lifted body's derivative, and
// that is differentiated again.
TEST(AutodiffMapTest, SecondDerivatives) {
  auto nested = SquareTimes();
  ASSERT_NE(nested, nullptr);
  auto module = BuildModule({F64({4}), F64({4})}, [&](Builder& b, const std::vector<Op>& p) {
    const Op operands[] = {p[0], p[1]};
    const int64_t dimensions[] = {0};
    return b.Map(operands, *nested, dimensions);
  });
  ASSERT_NE(module, nullptr);
  KILN_ASSERT_OK_AND_ASSIGN(auto gradient, autodiff::BuildVjp(*module, std::vector<int64_t>{0}));
  // Its parameters: the two operands and the map result's cotangent.
  std::mt19937 random(8);
  std::vector<Literal> inputs;
  for (int i = 0; i < 3; ++i) inputs.push_back(RandomF64(F64({4}), random));
  testing::ExpectGradientsMatchFiniteDifferences(*gradient, {0, 1}, std::move(inputs));
}

// A map in a while loop whose trip count is data: reverse mode recomputes
// and differentiates the map in the backward loop, forward mode carries its
// tangent in the loop state.
TEST(AutodiffMapTest, InsideAWhileLoop) {
  auto module = ParseHloModule(R"(HloModule looped_map
sine_times {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  s = f64[] sine(a)
  ROOT r = f64[] multiply(s, b)
}

body {
  state = (f64[3], f64[3], f64[]) parameter(0)
  x = f64[3] get-tuple-element(state), index=0
  w = f64[3] get-tuple-element(state), index=1
  t = f64[] get-tuple-element(state), index=2
  y = f64[3] map(x, w), dimensions={0}, to_apply=sine_times
  one = f64[] constant(1)
  next = f64[] add(t, one)
  ROOT r = (f64[3], f64[3], f64[]) tuple(y, w, next)
}

cond {
  state = (f64[3], f64[3], f64[]) parameter(0)
  t = f64[] get-tuple-element(state), index=2
  x = f64[3] get-tuple-element(state), index=0
  zero = f64[] constant(0)
  first = f64[1] slice(x), slice={[0:1]}
  first_value = f64[] reshape(first)
  limit = f64[] constant(3)
  more = pred[] compare(t, limit), direction=LT
  positive = pred[] compare(first_value, zero), direction=NE
  ROOT go = pred[] and(more, positive)
}

ENTRY main {
  x = f64[3] parameter(0)
  w = f64[3] parameter(1)
  zero = f64[] constant(0)
  init = (f64[3], f64[3], f64[]) tuple(x, w, zero)
  loop = (f64[3], f64[3], f64[]) while(init), condition=cond, body=body
  ROOT result = f64[3] get-tuple-element(loop), index=0
}
)");
  KILN_ASSERT_OK(module.status());
  std::mt19937 random(9);
  const std::vector<Literal> inputs = {RandomF64(F64({3}), random), RandomF64(F64({3}), random)};
  testing::ExpectGradientsMatchFiniteDifferences(**module, {0, 1}, inputs, 10);
  testing::ExpectJvpMatches(**module, {0, 1}, inputs, 11);
}

TEST(AutodiffMapTest, ABodyThatIsNotElementwiseIsRefusedByName) {
  Builder body_builder("opaque_body");
  Op a = body_builder.Parameter(0, kScalar, "a");
  const Op operands[] = {a};
  auto body = body_builder.Build(body_builder.CustomCall("my_target", operands, kScalar));
  KILN_ASSERT_OK(body.status());
  auto module = BuildModule({F64({3})}, [&](Builder& b, const std::vector<Op>& p) {
    const Op mapped[] = {p[0]};
    const int64_t dimensions[] = {0};
    return b.Map(mapped, **body, dimensions);
  });
  ASSERT_NE(module, nullptr);
  for (const bool reverse : {true, false}) {
    const Status status = reverse ? autodiff::BuildVjp(*module, std::vector<int64_t>{0}).status()
                                  : autodiff::BuildJvp(*module, std::vector<int64_t>{0}).status();
    EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
    EXPECT_NE(status.message().find("the body of map '"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("applies 'custom-call'"), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace kiln
