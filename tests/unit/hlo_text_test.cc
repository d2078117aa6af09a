// Parsing realistic HLO text (as XLA prints it and as JAX emits it),
// constants of every element type, and error reporting with line/column.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/hlo_printer.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

std::unique_ptr<Module> ParseOrDie(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  if (!module.ok()) return nullptr;
  return std::move(module).value();
}

const Instruction* Find(const Computation& computation, const std::string& name) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->name == name) return instruction.get();
  }
  return nullptr;
}

// Expects INVALID_ARGUMENT (or `code`) whose message contains every fragment.
void ExpectError(const std::string& text, std::initializer_list<std::string> fragments,
                 StatusCode code = StatusCode::kInvalidArgument) {
  auto module = ParseHloModule(text);
  ASSERT_FALSE(module.ok()) << "parsed unexpectedly:\n" << text;
  EXPECT_EQ(module.status().code(), code) << module.status().ToString();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(module.status().message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << module.status().message();
  }
}

TEST(HloTextTest, ParsesJaxMlpForward) {
  const std::string text =
      R"(HloModule jit_mlp, entry_computation_layout={(f32[4,3]{1,0}, f32[3,5]{1,0}, f32[5]{0})->f32[4,5]{1,0}}

ENTRY main.10 {
  Arg_0.1 = f32[4,3]{1,0} parameter(0)
  Arg_1.2 = f32[3,5]{1,0} parameter(1)
  dot.4 = f32[4,5]{1,0} dot(Arg_0.1, Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  Arg_2.3 = f32[5]{0} parameter(2)
  broadcast.5 = f32[4,5]{1,0} broadcast(Arg_2.3), dimensions={1}
  add.6 = f32[4,5]{1,0} add(dot.4, broadcast.5)
  constant.7 = f32[] constant(0)
  broadcast.8 = f32[4,5]{1,0} broadcast(constant.7), dimensions={}
  ROOT maximum.9 = f32[4,5]{1,0} maximum(add.6, broadcast.8)
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "jit_mlp");
  ASSERT_NE(module->entry(), nullptr);
  EXPECT_EQ(module->entry()->name(), "main.10");
  EXPECT_EQ(module->entry()->root()->opcode, Opcode::kMaximum);
  EXPECT_EQ(module->entry()->parameters().size(), 3u);
  ASSERT_TRUE(module->entry_layout().has_value());
  EXPECT_EQ(module->entry_layout()->parameters.size(), 3u);
  EXPECT_EQ(module->entry_layout()->result, Shape(ElementType::kF32, {4, 5}));
  const Instruction* dot = Find(*module->entry(), "dot.4");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->attrs.dot->lhs_contracting_dimensions, std::vector<int64_t>{1});
  EXPECT_EQ(dot->attrs.dot->rhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(Find(*module->entry(), "broadcast.5")->attrs.dimensions, std::vector<int64_t>{1});
}

TEST(HloTextTest, ParsesXlaLongFormWhileWithTupleState) {
  const std::string text =
      R"(HloModule while_loop, is_scheduled=true, entry_computation_layout={(s32[], f32[2]{0})->(s32[], f32[2]{0})}

%body.v3 (state: (s32[], f32[2])) -> (s32[], f32[2]) {
  %state = (s32[], f32[2]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[2]{0}) %state), index=0
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %i, s32[] %one)
  %x = f32[2]{0} get-tuple-element((s32[], /*index=1*/f32[2]{0}) %state), index=1
  %doubled = f32[2]{0} add(f32[2]{0} %x, f32[2]{0} %x)
  ROOT %tuple = (s32[], f32[2]{0}) tuple(s32[] %next, f32[2]{0} %doubled)
}

%condition.v3 (state: (s32[], f32[2])) -> pred[] {
  %state = (s32[], f32[2]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[2]{0}) %state), index=0
  %limit = s32[] constant(10)
  ROOT %less = pred[] compare(s32[] %i, s32[] %limit), direction=LT
}

ENTRY %main (n: s32[], v: f32[2]) -> (s32[], f32[2]) {
  %n = s32[] parameter(0)
  %v = f32[2]{0} parameter(1)
  %init = (s32[], f32[2]{0}) tuple(s32[] %n, f32[2]{0} %v)
  ROOT %while = (s32[], f32[2]{0}) while((s32[], f32[2]{0}) %init), condition=%condition.v3, body=%body.v3
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Instruction* loop = module->entry()->root();
  ASSERT_EQ(loop->opcode, Opcode::kWhile);
  ASSERT_EQ(loop->called.size(), 2u);
  EXPECT_EQ(loop->called[0]->name(), "condition.v3");
  EXPECT_EQ(loop->called[1]->name(), "body.v3");
  // Callees come before their callers in the module.
  EXPECT_EQ(module->computations().back().get(), module->entry());
}

TEST(HloTextTest, ParsesConditionalInBothForms) {
  const std::string text = R"(HloModule cond
negate_branch {
  x = f32[2] parameter(0)
  ROOT r = f32[2] negate(x)
}
exp_branch {
  x = f32[2] parameter(0)
  ROOT r = f32[2] exponential(x)
}
copy_branch {
  x = f32[2] parameter(0)
  ROOT r = f32[2] copy(x)
}
ENTRY main {
  p = pred[] parameter(0)
  i = s32[] parameter(1)
  x = f32[2] parameter(2)
  by_pred = f32[2] conditional(p, x, x), true_computation=negate_branch, false_computation=exp_branch
  ROOT by_index = f32[2] conditional(i, by_pred, by_pred, by_pred), branch_computations={negate_branch, exp_branch, copy_branch}
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Instruction* by_pred = Find(*module->entry(), "by_pred");
  ASSERT_EQ(by_pred->called.size(), 2u);
  EXPECT_EQ(by_pred->called[0]->name(), "negate_branch");
  EXPECT_EQ(by_pred->called[1]->name(), "exp_branch");
  const Instruction* by_index = module->entry()->root();
  ASSERT_EQ(by_index->called.size(), 3u);
  EXPECT_EQ(by_index->called[2]->name(), "copy_branch");
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("true_computation=negate_branch, false_computation=exp_branch"), std::string::npos);
  EXPECT_NE(printed.find("branch_computations={negate_branch, exp_branch, copy_branch}"), std::string::npos);
}

TEST(HloTextTest, ReduceMayReferToAComputationDefinedLater) {
  const std::string text = R"(HloModule reduce_sum
ENTRY main {
  x = f32[2,3] parameter(0)
  zero = f32[] constant(0)
  ROOT sum = f32[2] reduce(x, zero), dimensions={1}, to_apply=add_f32
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "main");
  EXPECT_EQ(module->entry()->root()->called[0]->name(), "add_f32");
  EXPECT_EQ(module->entry()->root()->attrs.dimensions, std::vector<int64_t>{1});
  // Printed callees first, ENTRY last.
  const std::string printed = PrintModule(*module);
  EXPECT_LT(printed.find("add_f32 ("), printed.find("ENTRY main"));
}

TEST(HloTextTest, ParsesConvolutionWithDimLabelsAndWindow) {
  const std::string text = R"(HloModule conv
ENTRY main {
  input = f32[1,5,5,2]{3,2,1,0} parameter(0)
  kernel = f32[3,3,2,4]{3,2,1,0} parameter(1)
  ROOT conv = f32[1,3,3,4]{3,2,1,0} convolution(input, kernel), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, metadata={op_name="jit(f)/conv" source_file="x.py" source_line=7}
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Attributes& attrs = module->entry()->root()->attrs;
  ASSERT_EQ(attrs.window->dimensions.size(), 2u);
  EXPECT_EQ(attrs.window->dimensions[0].size, 3);
  EXPECT_EQ(attrs.window->dimensions[1].stride, 2);
  EXPECT_EQ(attrs.window->dimensions[0].padding_low, 1);
  EXPECT_EQ(attrs.window->dimensions[1].padding_high, 1);
  EXPECT_EQ(attrs.conv->input_batch_dimension, 0);
  EXPECT_EQ(attrs.conv->input_feature_dimension, 3);
  EXPECT_EQ(attrs.conv->input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(attrs.conv->kernel_input_feature_dimension, 2);
  EXPECT_EQ(attrs.conv->kernel_output_feature_dimension, 3);
  EXPECT_EQ(attrs.conv->kernel_spatial_dimensions, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(attrs.conv->output_feature_dimension, 3);
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
            std::string::npos)
      << printed;
}

TEST(HloTextTest, ParsesGatherAndScatter) {
  const std::string text = R"(HloModule gather_scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  operand = f32[3,3] parameter(0)
  indices = s32[2] parameter(1)
  updates = f32[2,3] parameter(2)
  gathered = f32[2,3] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true
  ROOT scattered = f32[3,3] scatter(operand, indices, gathered), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Instruction* gather = Find(*module->entry(), "gathered");
  EXPECT_EQ(gather->attrs.gather->offset_dims, std::vector<int64_t>{1});
  EXPECT_EQ(gather->attrs.gather->index_vector_dim, 1);
  EXPECT_EQ(gather->attrs.gather_slice_sizes, (std::vector<int64_t>{1, 3}));
  EXPECT_TRUE(gather->attrs.indices_are_sorted);
  const Instruction* scatter = module->entry()->root();
  EXPECT_EQ(scatter->attrs.scatter->update_window_dims, std::vector<int64_t>{1});
  EXPECT_EQ(scatter->attrs.scatter->scatter_dims_to_operand_dims, std::vector<int64_t>{0});
  EXPECT_EQ(scatter->attrs.scatter->index_vector_dim, 1);
  EXPECT_TRUE(scatter->attrs.unique_indices);
  EXPECT_FALSE(scatter->attrs.indices_are_sorted);
  EXPECT_EQ(scatter->called[0]->name(), "add");
}

TEST(HloTextTest, ParsesSortWithComparator) {
  const std::string text = R"(HloModule sort
compare {
  a.lhs = f32[] parameter(0)
  a.rhs = f32[] parameter(1)
  b.lhs = s32[] parameter(2)
  b.rhs = s32[] parameter(3)
  ROOT lt = pred[] compare(a.lhs, a.rhs), direction=LT, type=TOTALORDER
}
ENTRY main {
  keys = f32[8] parameter(0)
  values = s32[8] parameter(1)
  ROOT sorted = (f32[8], s32[8]) sort(keys, values), dimensions={0}, is_stable=true, to_apply=compare
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Instruction* sort = module->entry()->root();
  EXPECT_TRUE(sort->attrs.is_stable);
  EXPECT_EQ(sort->called[0]->name(), "compare");
  const Instruction* lt = module->computations().front()->root();
  EXPECT_EQ(lt->attrs.comparison_direction, ComparisonDirection::kLt);
  EXPECT_EQ(lt->attrs.comparison_type, ComparisonType::kTotalOrder);
}

TEST(HloTextTest, ToleratesHeaderAndIgnoredAttributes) {
  const std::string text =
      R"(HloModule jit_f, input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, is_scheduled=true, replica_count=1, num_partitions=1, allow_spmd_sharding_propagation_to_parameters={false,true}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[]>}"}, entry_computation_layout={(f32[2]{0:T(128)}, f32[2]{0})->f32[2]{0}}

ENTRY main.4 {
  Arg_0.1 = f32[2]{0} parameter(0), sharding={replicated}, parameter_replication={false}
  Arg_1.2 = f32[2]{0} parameter(1), frontend_attributes={_xla_compute_type="host"}
  ROOT add.3 = f32[2]{0} add(Arg_0.1, Arg_1.2), metadata={op_name="jit(f)/jit(main)/add" source_file="/x.py" source_line=3}, backend_config={"flag":{"nested":[1,2]}}, origin={{"a"}}, statistics={visualizing_index=1,stat-index-1=0.5}
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->root()->opcode, Opcode::kAdd);
}

TEST(HloTextTest, ParsesConstantsOfEveryElementType) {
  const std::string text = R"(HloModule constants
ENTRY main {
  p = pred[2,3]{1,0} constant({ { 0, 1, 0 }, { true, false, true } })
  s8 = s8[2] constant({-128, 127})
  s16 = s16[] constant(-32768)
  s32 = s32[3] constant({1, 2, 3})
  s64 = s64[2] constant({-9223372036854775808, 9223372036854775807})
  u8 = u8[] constant(255)
  u16 = u16[] constant(65535)
  u32 = u32[] constant(4294967295)
  u64 = u64[] constant(18446744073709551615)
  f16 = f16[3] constant({0.1, -2.5, 65504})
  bf16 = bf16[2] constant({1.5, -inf})
  f32 = f32[5] constant({nan, -nan, inf, -inf, 1e-45})
  f64 = f64[2] constant({0.1, 1.7976931348623157e+308})
  c64 = c64[2] constant({(1, 2), (-0.5, inf)})
  c128 = c128[] constant((0.25, -3))
  empty = f32[0,3] constant({})
  tuple = (s32[], f32[2]) constant((7, {1, 2}))
  ROOT t = (pred[2,3], s8[2]) tuple(p, s8)
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Computation& entry = *module->entry();
  const Literal& pred = *Find(entry, "p")->literal;
  EXPECT_EQ(pred.data<bool>()[1], true);
  EXPECT_EQ(pred.data<bool>()[4], false);
  EXPECT_EQ(Find(entry, "s8")->literal->data<int8_t>()[0], -128);
  EXPECT_EQ(Find(entry, "s64")->literal->data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Find(entry, "s64")->literal->data<int64_t>()[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Find(entry, "u64")->literal->data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Find(entry, "u32")->literal->data<uint32_t>()[0], 4294967295u);
  EXPECT_EQ(static_cast<float>(Find(entry, "f16")->literal->data<half>()[2]), 65504.0f);
  EXPECT_EQ(Find(entry, "f16")->literal->data<half>()[0], half(0.1f));
  EXPECT_TRUE(std::isinf(static_cast<float>(Find(entry, "bf16")->literal->data<bfloat16>()[1])));
  const auto f32 = Find(entry, "f32")->literal->data<float>();
  EXPECT_TRUE(std::isnan(f32[0]));
  EXPECT_FALSE(std::signbit(f32[0]));
  EXPECT_TRUE(std::isnan(f32[1]));
  EXPECT_TRUE(std::signbit(f32[1]));
  EXPECT_EQ(f32[3], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f32[4], std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(Find(entry, "f64")->literal->data<double>()[1], std::numeric_limits<double>::max());
  EXPECT_EQ(Find(entry, "c64")->literal->data<complex64>()[0], complex64(1, 2));
  EXPECT_EQ(Find(entry, "c128")->literal->data<complex128>()[0], complex128(0.25, -3));
  EXPECT_EQ(Find(entry, "empty")->literal->element_count(), 0);
  const Literal& tuple = *Find(entry, "tuple")->literal;
  ASSERT_EQ(tuple.tuple_elements().size(), 2u);
  EXPECT_EQ(tuple.tuple_elements()[0].data<int32_t>()[0], 7);
  EXPECT_EQ(tuple.tuple_elements()[1].data<float>()[1], 2.0f);
}

TEST(HloTextTest, FloatConstantsPrintExactlyAndShortest) {
  const std::string text = R"(HloModule floats
ENTRY main {
  a = f32[4] constant({0.1, 1, 3.4028235e+38, nan(0x1234)})
  b = f64[2] constant({0.1, -0})
  c = f16[2] constant({0.1, 6.1e-05})
  ROOT d = bf16[2] constant({0.1, 3.14})
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("constant({0.1, 1, 3.4028235e+38, nan(0x1234)})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant({0.1, -0})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("f16[2]{0} constant({0.1, 6.1e-05})"), std::string::npos) << printed;
  EXPECT_NE(printed.find("bf16[2]{0} constant({0.1, 3.14})"), std::string::npos) << printed;
  uint32_t bits = 0;
  const float payload_nan = Find(*module->entry(), "a")->literal->data<float>()[3];
  std::memcpy(&bits, &payload_nan, sizeof(bits));
  EXPECT_EQ(bits, 0x7f801234u);
}

TEST(HloTextTest, IgnoresLayoutTilingAndKeepsLayouts) {
  const std::string text = R"(HloModule layouts
ENTRY main {
  x = f32[8,128]{0,1:T(8,128)(2,1)E(32)S(1)} parameter(0)
  ROOT y = f32[8,128]{1,0} copy(x)
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->parameter(0)->shape.layout().minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_NE(PrintModule(*module).find("x = f32[8,128]{0,1} parameter(0)"), std::string::npos);
}

TEST(HloTextTest, ParsesSliceWindowPaddingAndMoreAttributes) {
  const std::string text = R"(HloModule attrs
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[4,6] parameter(0)
  zero = f32[] constant(0)
  s = f32[2,2] slice(x), slice={[0:4:2], [1:3]}
  p = f32[3,2] pad(s, zero), padding=1_-1_1x0_0
  ds = f32[2,2] dynamic-slice(x, zero.i, zero.i), dynamic_slice_sizes={2,2}
  zero.i = s32[] constant(0)
  ROOT w = f32[2,2] reduce-window(x, zero), window={size=2x3 stride=2x3}, to_apply=max
}
)";
  // zero.i is used before its definition: a clear error.
  ExpectError(text, {"line 12, column 34", "unknown operand 'zero.i'"});
  std::string fixed = text;
  const std::string ds_line = "  ds = f32[2,2] dynamic-slice(x, zero.i, zero.i), dynamic_slice_sizes={2,2}\n";
  fixed.erase(fixed.find(ds_line), ds_line.size());
  fixed.insert(fixed.find("  ROOT w"), ds_line);
  auto module = ParseOrDie(fixed);
  ASSERT_NE(module, nullptr);
  const Instruction* slice = Find(*module->entry(), "s");
  EXPECT_EQ(slice->attrs.slice_starts, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(slice->attrs.slice_limits, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(slice->attrs.slice_strides, (std::vector<int64_t>{2, 1}));
  const Instruction* pad = Find(*module->entry(), "p");
  ASSERT_EQ(pad->attrs.padding.size(), 2u);
  EXPECT_EQ(pad->attrs.padding[0].low, 1);
  EXPECT_EQ(pad->attrs.padding[0].high, -1);
  EXPECT_EQ(pad->attrs.padding[0].interior, 1);
  EXPECT_EQ(Find(*module->entry(), "ds")->attrs.dynamic_slice_sizes, (std::vector<int64_t>{2, 2}));
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("slice={[0:4:2], [1:3]}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("padding=1_-1_1x0_0_0"), std::string::npos) << printed;
}

TEST(HloTextTest, PrintsShortAndLongForms) {
  const std::string text = R"(HloModule forms
ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(x)
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(PrintModule(*module),
            "HloModule forms, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n"
            "ENTRY main (x: f32[2,3]{1,0}) -> f32[2,3]{1,0} {\n"
            "  x = f32[2,3]{1,0} parameter(0)\n"
            "  ROOT n = f32[2,3]{1,0} negate(f32[2,3]{1,0} x)\n"
            "}\n");
  PrintOptions short_form;
  short_form.print_layouts = false;
  short_form.print_operand_shapes = false;
  EXPECT_EQ(PrintModule(*module, short_form),
            "HloModule forms, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n"
            "ENTRY main {\n"
            "  x = f32[2,3] parameter(0)\n"
            "  ROOT n = f32[2,3] negate(x)\n"
            "}\n");
  EXPECT_EQ(module->entry()->root()->ToString(), "n = f32[2,3]{1,0} negate(f32[2,3]{1,0} x)");
}

TEST(HloTextTest, LastComputationIsTheEntryWithoutMarker) {
  auto module = ParseOrDie(
      "HloModule m\nfirst {\n  ROOT c = f32[] constant(1)\n}\nsecond {\n  ROOT c = s32[] constant(2)\n}\n");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "second");
}

TEST(HloTextTest, CustomCallAttributes) {
  const std::string text = R"(HloModule cc
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(x), custom_call_target="my\"func", api_version=API_VERSION_STATUS_RETURNING, custom_call_has_side_effect=true, backend_config="{\"k\": 1}\n", operand_layout_constraints={f32[4]{0}}, output_to_operand_aliasing={{}: (0, {})}
}
)";
  auto module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Attributes& attrs = module->entry()->root()->attrs;
  EXPECT_EQ(attrs.custom_call_target, "my\"func");
  EXPECT_TRUE(attrs.custom_call_has_side_effect);
  EXPECT_EQ(attrs.backend_config, "{\"k\": 1}\n");
  EXPECT_NE(
      PrintModule(*module).find(
          R"(custom_call_target="my\"func", custom_call_has_side_effect=true, backend_config="{\"k\": 1}\n")"),
      std::string::npos);
}

// ---- Errors ----

TEST(HloTextErrorTest, UnknownOpcodeIsAnUnsupportedOpNamedWithItsPlace) {
  ExpectError("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] frobnicate(x)\n}\n",
              {"line 4, column 18", "unsupported op 'frobnicate'", "kiln_register_custom_call"},
              StatusCode::kUnimplemented);
}

TEST(HloTextTest, CompositeCallParsesAsACallOfItsDecomposition) {
  // lax.composite as JAX 0.10 prints it: the attribute and the composite's
  // frontend attributes are accepted; the call runs the decomposition.
  const std::string text =
      "HloModule m\n\nmy.tanh.1 {\n  a = f32[4] parameter(0)\n  ROOT t = f32[4] tanh(a)\n}\n\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = f32[4] call(x), to_apply=my.tanh.1, "
      "is_composite=true, "
      "frontend_attributes={composite.attributes={},composite.name=\"my.tanh\",composite.version=\"0\"}\n}\n";
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  const Literal x = Literal::FromVector<float>({-1.0f, 0.0f, 0.5f, 2.0f});
  KILN_ASSERT_OK_AND_ASSIGN(Literal result, testing::Run(*module, std::vector<Literal>{x}));
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(result.data<float>()[i], std::tanh(x.data<float>()[i])) << i;
  }
}

TEST(HloTextErrorTest, UnknownAttributeNamesIt) {
  ExpectError(
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x), colour=blue\n}\n",
      {"line 4, column 30", "unknown attribute 'colour'", "negate"});
  // A known attribute on the wrong op is just as unknown.
  ExpectError(
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x), dimensions={0}\n}\n",
      {"unknown attribute 'dimensions'"});
}

TEST(HloTextErrorTest, MissingHeader) {
  ExpectError("ENTRY e {\n ROOT c = f32[] constant(1)\n}\n",
              {"line 1, column 1", "expected 'HloModule' but got 'ENTRY'"});
  ExpectError("", {"line 1, column 1", "but got end of input"});
}

TEST(HloTextErrorTest, TruncatedInputs) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  ROOT y = f32[3,2]{1,0} transpose(x), dimensions={1,0}, metadata={op_name="t"}
}
)";
  ASSERT_TRUE(ParseHloModule(text).ok());
  for (size_t length = 0; length + 2 < text.size(); ++length) {
    auto module = ParseHloModule(text.substr(0, length));
    EXPECT_FALSE(module.ok()) << "prefix of length " << length << " parsed";
    EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument) << module.status().ToString();
    EXPECT_NE(module.status().message().find("line "), std::string::npos) << module.status().message();
  }
}

TEST(HloTextErrorTest, DeclaredShapeMustMatchInference) {
  ExpectError("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[3] negate(x)\n}\n",
              {"line 4, column 19", "'y' is declared as f32[3]", "f32[2]"});
  ExpectError("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] add(x, s32[2] x)\n}\n",
              {"operand 'x' is written as s32[2] but has shape f32[2]"});
}

TEST(HloTextErrorTest, ShapeInferenceErrorsCarryPosition) {
  ExpectError(
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = s32[2] parameter(1)\n  ROOT z = f32[2] "
      "add(x, y)\n}\n",
      {"line 5, column 19", "'z'"});
}

TEST(HloTextErrorTest, BadShapes) {
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f33[2] parameter(0)\n}\n",
              {"line 3, column 12", "unknown element type 'f33'"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f32[2,-1] parameter(0)\n}\n",
              {"line 3, column 18", "non-negative"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f32[2]{0,1} parameter(0)\n}\n",
              {"line 3, column 18", "layout"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f32[<=4] parameter(0)\n}\n",
              {"line 3, column 16", "bounded dynamic"}, StatusCode::kUnimplemented);
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f32[4294967296,4294967296] parameter(0)\n}\n",
              {"too many elements"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f32[99999999999999999999] parameter(0)\n}\n",
              {"line 3, column 16"});
}

TEST(HloTextErrorTest, BadConstants) {
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n",
              {"line 3, column 28", "has 2 elements, expected 3"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[1] constant({1, 2})\n}\n", {"more than 1 elements"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = u8[] constant(256)\n}\n",
              {"line 3, column 26", "out of range for u8"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = u64[] constant(-1)\n}\n", {"u64"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = s64[] constant(9223372036854775808)\n}\n",
              {"out of range for s64"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}\n", {"invalid s32 value '1.5'"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1e39)\n}\n",
              {"'1e39' is out of range for f32"});
  EXPECT_TRUE(ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1e-50)\n}\n").ok());
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(banana)\n}\n",
              {"expected a f32 value but got 'banana'"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = pred[] constant(2)\n}\n", {"pred value"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[1000000000000] constant({1})\n}\n",
              {"expected 1000000000000"});
}

TEST(HloTextErrorTest, UnterminatedStringAndComment) {
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"abc\n}\n",
              {"line 3, column 52", "unterminated string"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1) /* never closed\n}\n", {"end of input"});
}

TEST(HloTextErrorTest, NamesMustResolve) {
  ExpectError("HloModule m\nENTRY e {\n  ROOT y = f32[2] negate(nope)\n}\n",
              {"line 3, column 26", "unknown operand 'nope'"});
  ExpectError(
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT y = f32[] reduce(x, z), dimensions={0}, to_apply=missing\n}\n",
      {"line 5, column 57", "unknown computation 'missing'"});
  ExpectError("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  x = f32[2] negate(x)\n}\n",
              {"line 4, column 3", "'x' is defined twice"});
  ExpectError("HloModule m\nc {\n  ROOT x = f32[] constant(0)\n}\nc {\n  ROOT x = f32[] constant(0)\n}\n",
              {"line 5, column 1", "'c' is defined twice"});
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(1)\n}\n", {"parameter number 1"});
  ExpectError("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] map(x)\n}\n",
              {"needs attribute 'to_apply'"});
}

TEST(HloTextErrorTest, RecursionIsRejected) {
  ExpectError(R"(HloModule m
a {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=b
}
b {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=a
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=a
}
)",
              {"recursion"});
}

TEST(HloTextErrorTest, BadAttributeValues) {
  const std::string prefix = "HloModule m\nENTRY e {\n  x = f32[2,2] parameter(0)\n";
  ExpectError(prefix + "  ROOT y = f32[2,2] transpose(x), dimensions={1,}\n}\n",
              {"line 4, column 49", "expected an integer (64-bit) but got '}'"});
  ExpectError(prefix + "  ROOT y = f32[2,2] transpose(x), dimensions={99999999999999999999,0}\n}\n",
              {"line 4, column 47", "'99999999999999999999'"});
  ExpectError(prefix + "  ROOT y = pred[2,2] compare(x, x), direction=SIDEWAYS\n}\n",
              {"unknown comparison direction 'SIDEWAYS'"});
  ExpectError(prefix + "  ROOT y = f32[1,1] slice(x), slice={[0:1], [0:1:}\n}\n", {"line 4, column 50"});
  ExpectError(prefix + "  ROOT y = f32[2,2] transpose(x), dimensions={1,0}, dimensions={1,0}\n}\n",
              {"given twice"});
}

TEST(HloTextTest, OperandPrecisionOfDotsAndConvolutionsIsKept) {
  auto module = ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[1,2,5,5] parameter(0)
  k = f32[3,2,3,3] parameter(1)
  c = f32[1,3,3,3] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01, operand_precision={default,highest}
  a = f32[2,3] parameter(2)
  b = f32[3,4] parameter(3)
  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={high,default}
  ROOT t = (f32[1,3,3,3], f32[2,4]) tuple(c, d)
})");
  ASSERT_NE(module, nullptr);
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0)->attrs.operand_precision,
            (std::vector<OperandPrecision>{OperandPrecision::kDefault, OperandPrecision::kHighest}));
  EXPECT_EQ(root->operand(1)->attrs.operand_precision,
            (std::vector<OperandPrecision>{OperandPrecision::kHigh, OperandPrecision::kDefault}));
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("operand_precision={default,highest}"), std::string::npos) << printed;
  EXPECT_NE(printed.find("operand_precision={high,default}"), std::string::npos) << printed;
  // Elsewhere it means nothing to Kiln and is skipped, as XLA may print it.
  auto add = ParseOrDie(
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] add(x, x), "
      "operand_precision={highest,highest}\n}\n");
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->entry()->root()->attrs.operand_precision.empty());
}

TEST(HloTextErrorTest, BadOperandPrecision) {
  const std::string prefix =
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n"
      "  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ";
  ExpectError(prefix + "operand_precision={highest}\n}\n",
              {"line 5", "needs one entry per operand (2), got 1"});
  ExpectError(prefix + "operand_precision={highest,fastest}\n}\n",
              {"unknown operand precision 'fastest'", "default, high or highest"});
  ExpectError(prefix + "operand_precision=highest\n}\n", {"'{' starting operand_precision"});
}

TEST(HloTextErrorTest, DeepNestingIsRejectedWithoutCrashing) {
  const std::string deep_shape(100000, '(');
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = " + deep_shape + " parameter(0)\n}\n",
              {"nested at most 64"});
  // Ignored attribute values are skipped iteratively, however deep.
  const std::string deep_braces = std::string(100000, '{') + std::string(100000, '}');
  EXPECT_TRUE(ParseHloModule(
                  "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), metadata=" + deep_braces + "\n}\n")
                  .ok());
  ExpectError(
      "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), metadata=" + std::string(100000, '{') + "\n}\n",
      {"line 3, column 41", "unterminated attribute value"});
  std::string high_rank = "f32[";
  for (int i = 0; i < 100; ++i) high_rank += i ? ",1" : "1";
  ExpectError("HloModule m\nENTRY e {\n  ROOT x = " + high_rank + "] constant(" + std::string(100, '{') +
                  "1" + std::string(100, '}') + ")\n}\n",
              {"rank at most 64"});
}

}  // namespace
}  // namespace kiln
