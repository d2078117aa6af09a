// The Builder: implicit broadcasts, sticky errors, nested computation import,
// parameter numbering, and the seed-level ops that expand into several HLO
// instructions.
#include "core/builder.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/verifier.h"

namespace kiln {
namespace {

using ET = ElementType;

Shape F32(std::vector<int64_t> dims) { return Shape(ET::kF32, std::move(dims)); }
Shape S32(std::vector<int64_t> dims) { return Shape(ET::kS32, std::move(dims)); }

std::unique_ptr<Module> BuildOrDie(Builder& builder, Op root = Op()) {
  StatusOr<std::unique_ptr<Module>> module = builder.Build(root);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

// A scalar (T, T) -> T computation: add, max...
std::unique_ptr<Module> ScalarBinary(const std::string& name, ET type, Opcode opcode) {
  Builder builder(name);
  builder.BinaryOp(opcode, builder.Parameter(0, Shape::Scalar(type), "a"),
                   builder.Parameter(1, Shape::Scalar(type), "b"));
  return BuildOrDie(builder);
}

std::unique_ptr<Module> ScalarGe(ET type) {
  Builder builder("ge");
  builder.Ge(builder.Parameter(0, Shape::Scalar(type), "a"), builder.Parameter(1, Shape::Scalar(type), "b"));
  return BuildOrDie(builder);
}

int CountOpcode(const Computation& computation, Opcode opcode) {
  int count = 0;
  for (const auto& instruction : computation.instructions()) count += instruction->opcode == opcode;
  return count;
}

Shape ShapeOf(Builder& builder, Op op) {
  StatusOr<Shape> shape = builder.GetShape(op);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  return shape.ok() ? *shape : Shape();
}

TEST(BuilderTest, BroadcastDimensionsInsertExplicitBroadcast) {
  Builder builder("bcast");
  Op matrix = builder.Parameter(0, F32({2, 3}), "m");
  Op row = builder.Parameter(1, F32({3}), "v");
  const int64_t dims[] = {1};
  Op sum = builder.Add(matrix, row, dims);
  EXPECT_TRUE(ShapeOf(builder, sum).Compatible(F32({2, 3})));
  auto module = BuildOrDie(builder);
  ASSERT_NE(module, nullptr);
  const Computation& entry = *module->entry();
  ASSERT_EQ(CountOpcode(entry, Opcode::kBroadcast), 1);
  for (const auto& instruction : entry.instructions()) {
    if (instruction->opcode == Opcode::kBroadcast) {
      EXPECT_EQ(instruction->attrs.dimensions, std::vector<int64_t>{1});
      EXPECT_TRUE(instruction->shape.Compatible(F32({2, 3})));
    }
  }
  // The lower-rank operand may also come first.
  const int64_t col_dims[] = {0};
  Op column = builder.Parameter(2, F32({2}), "c");
  EXPECT_TRUE(ShapeOf(builder, builder.Sub(column, matrix, col_dims)).Compatible(F32({2, 3})));
}

TEST(BuilderTest, ScalarAndDegenerateBroadcast) {
  Builder builder("implicit");
  Op matrix = builder.Parameter(0, F32({2, 3}), "m");
  Op scalar = builder.ConstantR0<float>(2.0f);
  EXPECT_TRUE(ShapeOf(builder, builder.Mul(scalar, matrix)).Compatible(F32({2, 3})));
  Op column = builder.Parameter(1, F32({2, 1}), "c");
  EXPECT_TRUE(ShapeOf(builder, builder.Add(matrix, column)).Compatible(F32({2, 3})));
  // [1,3] against [2,1] broadcasts both to [2,3].
  Op row = builder.Parameter(2, F32({1, 3}), "r");
  EXPECT_TRUE(ShapeOf(builder, builder.Max(row, column)).Compatible(F32({2, 3})));
  EXPECT_TRUE(ShapeOf(builder, builder.Lt(matrix, scalar)).Compatible(Shape(ET::kPred, {2, 3})));
  auto module = BuildOrDie(builder);
  ASSERT_NE(module, nullptr);
  EXPECT_GE(CountOpcode(*module->entry(), Opcode::kReshape), 1);
}

TEST(BuilderTest, IncompatibleShapesFailWithOpName) {
  Builder builder("bad");
  Op matrix = builder.Parameter(0, F32({2, 3}), "m");
  Op row = builder.Parameter(1, F32({3}), "v");
  Op sum = builder.Add(matrix, row);
  EXPECT_FALSE(sum.valid());
  EXPECT_EQ(builder.first_error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(builder.first_error().message().find("add: shapes f32[2,3] and f32[3] are not compatible; "
                                                 "expected equal shapes (use broadcast_dimensions)"),
            std::string::npos)
      << builder.first_error().message();
  const int64_t wrong[] = {0};
  Builder other("bad2");
  Op m2 = other.Parameter(0, F32({2, 3}), "m");
  other.Add(m2, other.Parameter(1, F32({3}), "v"), wrong);
  EXPECT_NE(other.first_error().message().find("does not match"), std::string::npos)
      << other.first_error().message();
}

TEST(BuilderTest, FirstErrorIsSticky) {
  Builder builder("sticky");
  Op x = builder.Parameter(0, F32({2}), "x");
  builder.Exp(builder.ConstantR0<int32_t>(1));  // exp of an integer fails
  const std::string first = builder.first_error().message();
  ASSERT_NE(first.find("exponential:"), std::string::npos) << first;
  EXPECT_FALSE(builder.Neg(x).valid());
  builder.Transpose(x, std::vector<int64_t>{5});
  EXPECT_EQ(builder.first_error().message(), first);
  StatusOr<std::unique_ptr<Module>> module = builder.Build();
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(), first);
}

TEST(BuilderTest, OpsFromAnotherBuilderAreRefused) {
  Builder a("a");
  Builder b("b");
  Op x = a.Parameter(0, F32({2}), "x");
  Op y = b.Parameter(0, F32({2}), "y");
  EXPECT_FALSE(b.Add(x, y).valid());
  EXPECT_NE(b.first_error().message().find("builder 'a'"), std::string::npos) << b.first_error().message();
  Builder c("c");
  EXPECT_FALSE(c.Neg(Op()).valid());
  EXPECT_NE(c.first_error().message().find("invalid op"), std::string::npos);
  EXPECT_FALSE(c.GetShape(x).ok());
}

TEST(BuilderTest, NestedComputationsAreImported) {
  Builder builder("sum_rows");
  Op x = builder.Parameter(0, F32({2, 3}), "x");
  {
    auto add = ScalarBinary("add", ET::kF32, Opcode::kAdd);
    const int64_t dims[] = {1};
    builder.Reduce(x, builder.ConstantR0<float>(0.0f), *add, dims);
    // `add` is destroyed here; the builder holds its own copy.
  }
  auto add_again = ScalarBinary("add", ET::kF32, Opcode::kAdd);
  const int64_t dims0[] = {0};
  Op total = builder.Reduce(x, builder.ConstantR0<float>(0.0f), *add_again, dims0);
  Op both = builder.Add(builder.Reduce(total, builder.ConstantR0<float>(0.0f), *add_again, dims0),
                        builder.ConstantR0<float>(1.0f));
  auto module = BuildOrDie(builder, both);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "sum_rows");
  EXPECT_GE(module->computations().size(), 2u);
  EXPECT_TRUE(VerifyModule(*module).ok());
  for (const auto& instruction : module->entry()->instructions()) {
    for (const Computation* callee : instruction->called) {
      EXPECT_EQ(module->FindComputation(callee->name()), callee);
    }
  }
}

TEST(BuilderTest, NestedComputationNamedLikeTheBuilder) {
  auto add = ScalarBinary("main", ET::kF32, Opcode::kAdd);
  Builder builder("main");
  Op x = builder.Parameter(0, F32({4}), "x");
  const int64_t dims[] = {0};
  builder.Reduce(x, builder.ConstantR0<float>(0.0f), *add, dims);
  auto module = BuildOrDie(builder);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "main");
  EXPECT_EQ(module->FindComputation("main"), module->entry());
}

TEST(BuilderTest, ParameterNumbering) {
  Builder duplicate("dup");
  duplicate.Parameter(0, F32({}), "a");
  EXPECT_FALSE(duplicate.Parameter(0, F32({}), "b").valid());
  EXPECT_NE(duplicate.first_error().message().find("already used"), std::string::npos);

  Builder gap("gap");
  gap.Add(gap.Parameter(0, F32({}), "a"), gap.Parameter(2, F32({}), "c"));
  StatusOr<std::unique_ptr<Module>> module = gap.Build();
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("parameter 1 is missing"), std::string::npos)
      << module.status().message();

  Builder negative("negative");
  EXPECT_FALSE(negative.Parameter(-1, F32({}), "n").valid());
  EXPECT_FALSE(negative.first_error().ok());
}

TEST(BuilderTest, NamesAreUniqueAndBuilderIsReusable) {
  Builder builder("reuse");
  Op x = builder.Parameter(0, F32({2}), "x");
  Op y = builder.Add(x, x);
  builder.Add(y, builder.Parameter(1, F32({2}), "add.1"));
  auto first = BuildOrDie(builder);
  ASSERT_NE(first, nullptr);
  std::set<std::string> names;
  for (const auto& instruction : first->entry()->instructions()) {
    EXPECT_TRUE(names.insert(instruction->name).second) << instruction->name;
  }
  builder.Neg(y);
  auto second = BuildOrDie(builder);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->entry()->root()->opcode, Opcode::kNegate);
  EXPECT_EQ(first->entry()->root()->opcode, Opcode::kAdd);
  auto third = BuildOrDie(builder, y);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->entry()->root()->opcode, Opcode::kAdd);
  Builder empty("empty");
  EXPECT_FALSE(empty.Build().ok());
}

TEST(BuilderTest, DotFillsDimensionNumbers) {
  Builder builder("dot");
  Op m = builder.Parameter(0, F32({2, 3}), "m");
  Op v = builder.Parameter(1, F32({3}), "v");
  Op mv = builder.Dot(m, v);
  EXPECT_TRUE(ShapeOf(builder, mv).Compatible(F32({2})));
  Op vv = builder.Dot(v, v);
  EXPECT_TRUE(ShapeOf(builder, vv).Compatible(F32({})));
  Op mm = builder.Dot(m, builder.Parameter(2, F32({3, 4}), "n"));
  EXPECT_TRUE(ShapeOf(builder, mm).Compatible(F32({2, 4})));
  builder.Dot(builder.Parameter(3, F32({2, 2, 2}), "t"), m);
  EXPECT_NE(builder.first_error().message().find("DotGeneral"), std::string::npos);
}

TEST(BuilderTest, ReshapeCollapseBroadcast) {
  Builder builder("reshape");
  Op x = builder.Parameter(0, F32({2, 3, 4}), "x");
  const int64_t perm[] = {2, 0, 1};
  const int64_t sizes[] = {4, 6};
  Op r = builder.Reshape(x, perm, sizes);
  EXPECT_TRUE(ShapeOf(builder, r).Compatible(F32({4, 6})));
  const int64_t collapse[] = {1, 2};
  EXPECT_TRUE(ShapeOf(builder, builder.Collapse(x, collapse)).Compatible(F32({2, 12})));
  const int64_t prepend[] = {5};
  EXPECT_TRUE(ShapeOf(builder, builder.Broadcast(x, prepend)).Compatible(F32({5, 2, 3, 4})));
  auto module = BuildOrDie(builder, r);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(CountOpcode(*module->entry(), Opcode::kTranspose), 1);

  Builder bad("collapse");
  const int64_t gap[] = {0, 2};
  bad.Collapse(bad.Parameter(0, F32({2, 3, 4}), "x"), gap);
  EXPECT_NE(bad.first_error().message().find("collapse:"), std::string::npos);
}

TEST(BuilderTest, DynamicSliceWithIndexArray) {
  Builder builder("dynamic");
  Op x = builder.Parameter(0, F32({4, 5}), "x");
  Op starts = builder.ConstantR1<int32_t>({1, 2});
  const int64_t sizes[] = {2, 2};
  Op slice = builder.DynamicSlice(x, starts, sizes);
  EXPECT_TRUE(ShapeOf(builder, slice).Compatible(F32({2, 2})));
  Op updated = builder.DynamicUpdateSlice(x, slice, starts);
  EXPECT_TRUE(ShapeOf(builder, updated).Compatible(F32({4, 5})));
  ASSERT_NE(BuildOrDie(builder), nullptr);

  Builder bad("dynamic_bad");
  bad.DynamicSlice(bad.Parameter(0, F32({4, 5}), "x"), bad.ConstantR1<int32_t>({1}), sizes);
  EXPECT_NE(bad.first_error().message().find("dynamic-slice:"), std::string::npos)
      << bad.first_error().message();
}

TEST(BuilderTest, SortBuildsComparator) {
  Builder builder("sort");
  Op x = builder.Parameter(0, F32({3, 4}), "x");
  Op sorted = builder.Sort(x);
  EXPECT_TRUE(ShapeOf(builder, sorted).Compatible(F32({3, 4})));
  auto module = BuildOrDie(builder);
  ASSERT_NE(module, nullptr);
  const Instruction* root = module->entry()->root();
  ASSERT_EQ(root->opcode, Opcode::kSort);
  EXPECT_EQ(root->attrs.dimensions, std::vector<int64_t>{1});
  ASSERT_EQ(root->called.size(), 1u);
  EXPECT_TRUE(root->called[0]->program_shape().result.Compatible(Shape::Scalar(ET::kPred)));

  Builder variadic("sort2");
  auto comparator = [] {
    Builder c("cmp");
    Op a = c.Parameter(0, F32({}), "a");
    c.Parameter(1, F32({}), "b");
    c.Parameter(2, S32({}), "c");
    c.Parameter(3, S32({}), "d");
    c.Lt(a, c.ConstantR0<float>(0.0f));
    return BuildOrDie(c);
  }();
  const Op operands[] = {variadic.Parameter(0, F32({5}), "k"), variadic.Parameter(1, S32({5}), "v")};
  Op pair = variadic.Sort(operands, *comparator, 0, true);
  EXPECT_TRUE(ShapeOf(variadic, pair).Compatible(Shape::Tuple({F32({5}), S32({5})})));
  variadic.Sort(operands, *comparator, 3);
  EXPECT_NE(variadic.first_error().message().find("sort"), std::string::npos);
}

TEST(BuilderTest, ConvolutionPaddingModes) {
  const int64_t in[] = {5, 6};
  const int64_t window[] = {3, 3};
  const int64_t strides[] = {1, 2};
  auto same = MakePadding(in, window, strides, Padding::kSame);
  ASSERT_EQ(same.size(), 2u);
  EXPECT_EQ(same[0], std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(same[1], std::make_pair(int64_t{0}, int64_t{1}));
  auto valid = MakePadding(in, window, strides, Padding::kValid);
  EXPECT_EQ(valid[1], std::make_pair(int64_t{0}, int64_t{0}));

  Builder builder("conv");
  Op input = builder.Parameter(0, F32({1, 2, 5, 6}), "input");
  Op kernel = builder.Parameter(1, F32({4, 2, 3, 3}), "kernel");
  EXPECT_TRUE(
      ShapeOf(builder, builder.Conv(input, kernel, strides, Padding::kSame)).Compatible(F32({1, 4, 5, 3})));
  EXPECT_TRUE(
      ShapeOf(builder, builder.Conv(input, kernel, strides, Padding::kValid)).Compatible(F32({1, 4, 3, 2})));
  const std::pair<int64_t, int64_t> pads[] = {{0, 0}, {1, 1}};
  const int64_t ones[] = {1, 1};
  const int64_t two[] = {2, 2};
  Op dilated = builder.ConvGeneralDilated(input, kernel, ones, pads, two, ones,
                                          Builder::DefaultConvDimensionNumbers(2));
  // lhs dilation 2: spatial 9 x 11, pad -> 9 x 13, window 3 -> 7 x 11.
  EXPECT_TRUE(ShapeOf(builder, dilated).Compatible(F32({1, 4, 7, 11})));
  ASSERT_NE(BuildOrDie(builder), nullptr);

  Builder bad("conv_bad");
  bad.Conv(bad.Parameter(0, F32({1, 3, 5, 6}), "i"), bad.Parameter(1, F32({4, 2, 3, 3}), "k"), strides,
           Padding::kSame);
  EXPECT_NE(bad.first_error().message().find("convolution:"), std::string::npos);
}

TEST(BuilderTest, ReductionsAndWindows) {
  auto add = ScalarBinary("add", ET::kF32, Opcode::kAdd);
  auto max = ScalarBinary("max", ET::kF32, Opcode::kMaximum);
  auto ge = ScalarGe(ET::kF32);
  Builder builder("windows");
  Op x = builder.Parameter(0, F32({4, 6}), "x");
  Op zero = builder.ConstantR0<float>(0.0f);
  const int64_t window[] = {2, 3};
  const int64_t strides[] = {2, 3};
  Op pooled = builder.ReduceWindow(x, zero, *max, window, strides, Padding::kValid);
  EXPECT_TRUE(ShapeOf(builder, pooled).Compatible(F32({2, 2})));
  Op scattered = builder.SelectAndScatter(x, *ge, window, strides, Padding::kValid, pooled, zero, *add);
  EXPECT_TRUE(ShapeOf(builder, scattered).Compatible(F32({4, 6})));
  const Op operands[] = {x};
  const Op inits[] = {zero};
  const int64_t base_dilation[] = {2, 1};
  const int64_t window_dilation[] = {1, 2};
  const std::pair<int64_t, int64_t> pads[] = {{1, 0}, {0, 0}};
  Op dilated = builder.ReduceWindowWithGeneralPadding(operands, inits, *add, window, strides, base_dilation,
                                                      window_dilation, pads);
  // dim0: (4-1)*2+1 = 7, +1 pad = 8, window 2 stride 2 -> 4; dim1: 6, window (3-1)*2+1 = 5, stride 3 -> 1.
  EXPECT_TRUE(ShapeOf(builder, dilated).Compatible(F32({4, 1})));
  Op mapped = builder.Map(std::vector<Op>{x, x}, *add, std::vector<int64_t>{0, 1});
  EXPECT_TRUE(ShapeOf(builder, mapped).Compatible(F32({4, 6})));
  EXPECT_TRUE(ShapeOf(builder, builder.CrossReplicaSum(x)).Compatible(F32({4, 6})));
  ASSERT_NE(BuildOrDie(builder), nullptr);

  Builder bad("reduce_bad");
  const int64_t dims[] = {0};
  bad.Reduce(bad.Parameter(0, F32({3}), "x"), bad.ConstantR0<float>(0.0f), *ge, dims);
  EXPECT_NE(bad.first_error().message().find("reduce:"), std::string::npos) << bad.first_error().message();
}

TEST(BuilderTest, ControlFlow) {
  const Shape state = Shape::Tuple({S32({}), F32({2})});
  auto condition = [&] {
    Builder c("cond");
    Op s = c.Parameter(0, state, "s");
    c.Lt(c.GetTupleElement(s, 0), c.ConstantR0<int32_t>(10));
    return BuildOrDie(c);
  }();
  auto body = [&] {
    Builder b("body");
    Op s = b.Parameter(0, state, "s");
    b.Tuple(
        std::vector<Op>{b.Add(b.GetTupleElement(s, 0), b.ConstantR0<int32_t>(1)), b.GetTupleElement(s, 1)});
    return BuildOrDie(b);
  }();
  auto negate = [] {
    Builder n("negate");
    n.Neg(n.Parameter(0, F32({2}), "x"));
    return BuildOrDie(n);
  }();
  Builder builder("control");
  Op x = builder.Parameter(0, F32({2}), "x");
  Op loop =
      builder.While(*condition, *body, builder.Tuple(std::vector<Op>{builder.ConstantR0<int32_t>(0), x}));
  EXPECT_TRUE(ShapeOf(builder, loop).Compatible(state));
  Op branch = builder.Conditional(builder.ConstantR0<bool>(true), x, *negate, x, *negate);
  EXPECT_TRUE(ShapeOf(builder, branch).Compatible(F32({2})));
  const Module* branches[] = {negate.get(), negate.get(), negate.get()};
  Op indexed = builder.Conditional(builder.ConstantR0<int32_t>(1), branches, std::vector<Op>{x, x, x});
  EXPECT_TRUE(ShapeOf(builder, indexed).Compatible(F32({2})));
  EXPECT_TRUE(ShapeOf(builder, builder.Call(*negate, std::vector<Op>{x})).Compatible(F32({2})));
  EXPECT_TRUE(ShapeOf(builder, builder.OptimizationBarrier(loop)).Compatible(state));
  ASSERT_NE(BuildOrDie(builder), nullptr);

  Builder bad("while_bad");
  bad.While(*body, *body,
            bad.Tuple(std::vector<Op>{bad.ConstantR0<int32_t>(0), bad.Parameter(0, F32({2}), "x")}));
  EXPECT_NE(bad.first_error().message().find("while: condition"), std::string::npos)
      << bad.first_error().message();
}

TEST(BuilderTest, GatherScatterBatchNorm) {
  auto add = ScalarBinary("add", ET::kF32, Opcode::kAdd);
  Builder builder("gs");
  Op table = builder.Parameter(0, F32({5, 4}), "table");
  Op indices = builder.ConstantR1<int32_t>({0, 2, 4});
  GatherDimensionNumbers gather;
  gather.offset_dims = {1};
  gather.collapsed_slice_dims = {0};
  gather.start_index_map = {0};
  gather.index_vector_dim = 1;
  Op rows = builder.Gather(table, indices, gather, std::vector<int64_t>{1, 4});
  EXPECT_TRUE(ShapeOf(builder, rows).Compatible(F32({3, 4})));
  ScatterDimensionNumbers scatter;
  scatter.update_window_dims = {1};
  scatter.inserted_window_dims = {0};
  scatter.scatter_dims_to_operand_dims = {0};
  scatter.index_vector_dim = 1;
  EXPECT_TRUE(ShapeOf(builder, builder.Scatter(table, indices, rows, *add, scatter)).Compatible(F32({5, 4})));
  Op scale = builder.Parameter(1, F32({4}), "scale");
  Op trained = builder.BatchNormTraining(table, scale, scale, 1e-3f, 1);
  EXPECT_TRUE(ShapeOf(builder, trained).Compatible(Shape::Tuple({F32({5, 4}), F32({4}), F32({4})})));
  EXPECT_TRUE(ShapeOf(builder, builder.BatchNormInference(table, scale, scale, scale, scale, 1e-3f, 1))
                  .Compatible(F32({5, 4})));
  EXPECT_TRUE(ShapeOf(builder, builder.BatchNormGrad(table, scale, scale, scale, table, 1e-3f, 1))
                  .Compatible(Shape::Tuple({F32({5, 4}), F32({4}), F32({4})})));
  ASSERT_NE(BuildOrDie(builder), nullptr);
}

TEST(BuilderTest, RandomHostAndMiscOps) {
  Builder builder("misc");
  Op p = builder.ConstantR0<float>(0.25f);
  Op bernoulli = builder.RngBernoulli(p, S32({3, 2}));
  EXPECT_TRUE(ShapeOf(builder, bernoulli).Compatible(S32({3, 2})));
  Op uniform = builder.RngUniform(builder.ConstantR0<float>(0.0f), builder.ConstantR0<float>(1.0f), F32({4}));
  EXPECT_TRUE(ShapeOf(builder, uniform).Compatible(F32({4})));
  Op state = builder.ConstantR1<uint64_t>({1, 2});
  Op bits = builder.RngBitGenerator(RngAlgorithm::kThreeFry, state, Shape(ET::kU32, {8}));
  EXPECT_TRUE(ShapeOf(builder, bits).Compatible(Shape::Tuple({Shape(ET::kU64, {2}), Shape(ET::kU32, {8})})));
  Op fed = builder.Infeed(F32({2, 2}));
  EXPECT_TRUE(ShapeOf(builder, fed).Compatible(F32({2, 2})));
  EXPECT_TRUE(ShapeOf(builder, builder.Outfeed(fed)).IsToken());
  Op custom = builder.CustomCall("myfunc", std::vector<Op>{fed}, F32({7}), "opaque");
  EXPECT_TRUE(ShapeOf(builder, custom).Compatible(F32({7})));
  EXPECT_TRUE(ShapeOf(builder, builder.Iota(S32({3, 2}), 1)).Compatible(S32({3, 2})));
  EXPECT_TRUE(ShapeOf(builder, builder.GetDimensionSize(fed, 1)).Compatible(S32({})));
  EXPECT_TRUE(
      ShapeOf(builder, builder.BitcastConvertType(uniform, ET::kU8)).Compatible(Shape(ET::kU8, {4, 4})));
  EXPECT_TRUE(ShapeOf(builder, builder.ConvertElementType(uniform, ET::kS32)).Compatible(S32({4})));
  EXPECT_TRUE(ShapeOf(builder, builder.ReducePrecision(uniform, 5, 10)).Compatible(F32({4})));
  EXPECT_TRUE(ShapeOf(builder, builder.Complex(uniform, uniform)).Compatible(Shape(ET::kC64, {4})));
  EXPECT_TRUE(ShapeOf(builder, builder.Clamp(p, uniform, p)).Compatible(F32({4})));
  ASSERT_NE(BuildOrDie(builder, custom), nullptr);

  Builder bad("custom_bad");
  bad.CustomCall("", {}, F32({}));
  EXPECT_NE(bad.first_error().message().find("custom-call:"), std::string::npos);
}

TEST(BuilderTest, ShapeOpsAndSlices) {
  Builder builder("shape_ops");
  Op x = builder.Parameter(0, F32({4, 6}), "x");
  EXPECT_TRUE(ShapeOf(builder, builder.SliceInDim(x, 1, 5, 2, 1)).Compatible(F32({4, 2})));
  EXPECT_TRUE(ShapeOf(builder, builder.ConcatInDim(std::vector<Op>{x, x}, 0)).Compatible(F32({8, 6})));
  const PaddingDimension padding[] = {{1, 1, 0}, {0, 0, 1}};
  EXPECT_TRUE(
      ShapeOf(builder, builder.Pad(x, builder.ConstantR0<float>(0.0f), padding)).Compatible(F32({6, 11})));
  EXPECT_TRUE(ShapeOf(builder, builder.Rev(x, std::vector<int64_t>{0})).Compatible(F32({4, 6})));
  EXPECT_TRUE(ShapeOf(builder, builder.Transpose(x, std::vector<int64_t>{1, 0})).Compatible(F32({6, 4})));
  ASSERT_NE(BuildOrDie(builder), nullptr);
  builder.SliceInDim(x, 0, 7, 1, 1);
  EXPECT_NE(builder.first_error().message().find("slice:"), std::string::npos);
}

}  // namespace
}  // namespace kiln
