// The Vulkan code generator without a device: kernels of each op family
// become GLSL that glslang compiles and SPIRV-Tools validates; what cannot be
// emitted is refused by name (op, type, missing feature); a bad shader comes
// back as an error with the source's numbered lines.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/library_kernels.h"
#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"

namespace kiln::vulkan {
namespace {

constexpr FloatControls kEveryWidth = kAllFloatControls;

struct Compiled {
  GlslKernel kernel;
  std::vector<uint32_t> spirv;
};

// Parses HLO text and emits its entry as one kernel, then compiles it.
StatusOr<Compiled> Compile(const std::string& text, const ShaderFeatures& features = AllShaderFeatures()) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  const Computation& entry = *(*module)->entry();
  Status check = CheckGlslEmittable(entry, features);
  StatusOr<GlslKernel> kernel = EmitGlslKernel(entry, features, "test_kernel");
  if (!kernel.ok()) {
    EXPECT_EQ(check.code(), kernel.status().code()) << "CheckGlslEmittable disagrees with EmitGlslKernel";
    return kernel.status();
  }
  EXPECT_TRUE(check.ok()) << check.ToString();
  StatusOr<std::vector<uint32_t>> spirv = CompileGlslToSpirv(kernel->source, kernel->name, kEveryWidth);
  if (!spirv.ok()) return spirv.status();
  return Compiled{*kernel, *spirv};
}

void ExpectCompiles(const std::string& text, int bindings, int64_t invocations) {
  StatusOr<Compiled> compiled = Compile(text);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(compiled->kernel.binding_count, bindings) << compiled->kernel.source;
  EXPECT_EQ(compiled->kernel.invocations, invocations) << compiled->kernel.source;
  ASSERT_GT(compiled->spirv.size(), 5u);
  EXPECT_EQ(compiled->spirv[0], 0x07230203u);  // the SPIR-V magic number
}

std::string EmitterTestModule(const std::string& body, const std::string& extra = "") {
  return "HloModule m\n" + extra + "ENTRY main {\n" + body + "\n}\n";
}

// "(f32[7], f32[7], ...)" with `count` elements.
std::string TupleShape(const std::string& element, int count) {
  std::string shape = "(";
  for (int i = 0; i < count; ++i) shape += (i == 0 ? "" : ", ") + element;
  return shape + ")";
}

TEST(GlslEmitterTest, ElementwiseUnaryOpsOfEachTypeCompile) {
  const char* float_ops[] = {"abs",
                             "negate",
                             "sign",
                             "floor",
                             "ceil",
                             "round-nearest-afz",
                             "round-nearest-even",
                             "sqrt",
                             "rsqrt",
                             "exponential",
                             "exponential-minus-one",
                             "log",
                             "log-plus-one",
                             "logistic",
                             "sine",
                             "cosine",
                             "tan",
                             "tanh",
                             "cbrt",
                             "erf",
                             "copy"};
  // f64 with Kiln's own double-precision functions (GLSL has none).
  for (const char* type : {"f32", "f16", "bf16", "f64"}) {
    std::string body = "  p = " + std::string(type) + "[7] parameter(0)\n";
    std::string tuple;
    int n = 0;
    for (const char* op : float_ops) {
      body += "  u" + std::to_string(n) + " = " + type + "[7] " + op + "(p)\n";
      tuple += (n == 0 ? "" : ", ") + std::string("u") + std::to_string(n);
      ++n;
    }
    body += "  ROOT t = " + TupleShape(std::string(type) + "[7]", n) + " tuple(" + tuple + ")";
    SCOPED_TRACE(type);
    ExpectCompiles(EmitterTestModule(body), 1 + n, 7);
  }
  for (const char* type : {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}) {
    std::string body = "  p = " + std::string(type) + "[5] parameter(0)\n";
    std::string tuple;
    int n = 0;
    const bool is_signed = type[0] == 's';
    for (const char* op : {"abs", "negate", "sign", "not", "popcnt", "count-leading-zeros", "copy"}) {
      const std::string name = op;
      if (!is_signed && (name == "abs" || name == "negate" || name == "sign")) continue;
      body += "  u" + std::to_string(n) + " = " + type + "[5] " + op + "(p)\n";
      tuple += (n == 0 ? "" : ", ") + std::string("u") + std::to_string(n);
      ++n;
    }
    body += "  ROOT t = " + TupleShape(std::string(type) + "[5]", n) + " tuple(" + tuple + ")";
    SCOPED_TRACE(type);
    ExpectCompiles(EmitterTestModule(body), 1 + n, 5);
  }
}

TEST(GlslEmitterTest, ElementwiseBinaryOpsOfEachTypeCompile) {
  auto binary = [](const char* type, std::initializer_list<const char*> ops) {
    std::string body =
        "  a = " + std::string(type) + "[3,4] parameter(0)\n  b = " + type + "[3,4] parameter(1)\n";
    std::string tuple;
    int n = 0;
    for (const char* op : ops) {
      body += "  r" + std::to_string(n) + " = " + type + "[3,4] " + op + "(a, b)\n";
      tuple += (n == 0 ? "" : ", ") + std::string("r") + std::to_string(n);
      ++n;
    }
    body += "  ROOT t = " + TupleShape(std::string(type) + "[3,4]", n) + " tuple(" + tuple + ")";
    SCOPED_TRACE(type);
    ExpectCompiles(EmitterTestModule(body), 2 + n, 12);
  };
  for (const char* type : {"f32", "f16", "bf16"})
    binary(type,
           {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2"});
  binary("f64",
         {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2"});
  for (const char* type : {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}) {
    binary(type, {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "and",
                  "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic"});
  }
  binary("pred", {"and", "or", "xor", "maximum", "minimum"});
  binary("c64", {"add", "subtract", "multiply", "divide", "power"});
  binary("c128", {"add", "subtract", "multiply", "divide", "power"});
}

// A float op whose operand is a compile-time constant that may be zero
// takes glsl_ops' constant-operand helper (lavapipe folds x * 0 and the
// like to wrong values); operands known only at run time and constants
// without a zero keep the plain op. Each kernel compiles.
TEST(GlslEmitterTest, ConstantOperandsThatMayBeZeroTakeTheExplicitForm) {
  struct Case {
    const char* what;
    std::string body;
    const char* helper;  // nullptr: no constant-operand helper at all
  };
  auto with_constant = [](const std::string& type, const std::string& value, const std::string& op) {
    return "  x = " + type + "[8] parameter(0)\n  k = " + type + "[] constant(" + value + ")\n  c = " + type +
           "[8] broadcast(k), dimensions={}\n  ROOT r = " + type + "[8] " + op;
  };
  const Case cases[] = {
      {"x * 0", with_constant("f32", "0", "multiply(x, c)"), "k_mulc_f32("},
      {"0 * x in f64", with_constant("f64", "0", "multiply(c, x)"), "k_mulc_f64("},
      {"x * 0 in f16", with_constant("f16", "0", "multiply(x, c)"), "k_mulc_f16("},
      {"x / 0", with_constant("f32", "0", "divide(x, c)"), "k_divc_f32("},
      {"0 / x", with_constant("f32", "0", "divide(c, x)"), "k_cdivx_f32("},
      {"x + 0", with_constant("f32", "0", "add(x, c)"), "k_addc_f32("},
      {"0 - x", with_constant("f32", "0", "subtract(c, x)"), "k_addc_f32("},
      {"x * -0", with_constant("f32", "-0", "multiply(x, c)"), "k_mulc_f32("},
      {"complex x * 0", with_constant("c64", "(0, 0)", "multiply(x, c)"), "k_cmulc_c64("},
      {"complex 0 - x", with_constant("c128", "(0, 0)", "subtract(c, x)"), "k_addc_f64("},
      {"complex x / 2", with_constant("c64", "(2, 0)", "divide(x, c)"), "k_cdivc_c64("},
      {"complex 0 / x", with_constant("c128", "(0, 0)", "divide(c, x)"), "k_cconstdiv_c128("},
      {"x * a constant array holding a zero",
       "  x = f32[4] parameter(0)\n  c = f32[4] constant({1, 0, 2, 3})\n  ROOT r = f32[4] multiply(x, c)",
       "k_mulc_f32("},
      {"x * (0 + 0)",
       "  x = f32[8] parameter(0)\n  k = f32[] constant(0)\n  s = f32[] add(k, k)\n"
       "  c = f32[8] broadcast(s), dimensions={}\n  ROOT r = f32[8] multiply(x, c)",
       "k_mulc_f32("},
      {"x * y", "  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n  ROOT r = f32[8] multiply(x, y)",
       nullptr},
      {"x * 2", with_constant("f32", "2", "multiply(x, c)"), nullptr},
      {"x + a constant array without a zero",
       "  x = f32[4] parameter(0)\n  c = f32[4] constant({1, -1, 2, 3})\n  ROOT r = f32[4] add(x, c)",
       nullptr},
      {"x * iota",
       "  x = f32[8] parameter(0)\n  i = f32[8] iota(), iota_dimension=0\n  ROOT r = f32[8] multiply(x, i)",
       nullptr},
      {"integer x * 0", with_constant("s32", "0", "multiply(x, c)"), nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    StatusOr<Compiled> compiled = Compile(EmitterTestModule(c.body));
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    const std::string& source = compiled->kernel.source;
    if (c.helper != nullptr) {
      EXPECT_NE(source.find(c.helper), std::string::npos) << source;
    } else {
      for (const char* helper : {"k_mulc_", "k_divc_", "k_cdivx_", "k_addc_", "k_cmulc_", "k_cdivc_"})
        EXPECT_EQ(source.find(helper), std::string::npos) << helper << " in\n" << source;
    }
  }
}

// Large f32 dots run the library dot (library_dot.h); the rest stay
// elemental.
TEST(GlslEmitterTest, LargeF32DotsRunTheLibraryDot) {
  struct Case {
    std::string body;
    int64_t groups;               // batch x 64-row tiles x 64-column tiles
    std::vector<uint32_t> along;  // specialization constants 6 and 7
    std::vector<uint32_t> shape;  // 8-14: m, n, k, lhs m and k strides, rhs n and k strides
  };
  const Case cases[] = {
      {"a = f32[70,45] parameter(0)\nb = f32[45,100] parameter(1)\n"
       "ROOT d = f32[70,100] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
       2 * 2,
       {1, 1},
       {70, 100, 45, 45, 1, 1, 100}},
      {"a = f32[45,64] parameter(0)\nb = f32[128,45] parameter(1)\n"
       "ROOT d = f32[64,128] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}",
       1 * 2,
       {0, 0},
       {64, 128, 45, 1, 64, 45, 1}},
      {"a = f32[40,3,33] parameter(0)\nb = f32[3,33,66] parameter(1)\nROOT d = f32[3,40,66] dot(a, b), "
       "lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
       3 * 1 * 2,
       {1, 1},
       {40, 66, 33, 99, 1, 1, 66}},
  };
  for (const Case& c : cases) {
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(EmitterTestModule(c.body));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    const std::optional<LibraryKernel> kernel =
        PlanLibraryKernel(*(*module)->entry(), AllShaderFeatures(), "d");
    ASSERT_TRUE(kernel.has_value()) << c.body;
    EXPECT_EQ(kernel->shader, LibraryShader::kTiledDot) << c.body;
    ASSERT_EQ(kernel->description.launches.size(), 1u);
    EXPECT_EQ(kernel->description.launches[0].grid.workgroups[0], c.groups) << c.body;
    ASSERT_EQ(kernel->specialization.size(), 14u);
    EXPECT_EQ(std::vector<uint32_t>(kernel->specialization.begin() + 5, kernel->specialization.begin() + 7),
              c.along)
        << c.body;
    EXPECT_EQ(std::vector<uint32_t>(kernel->specialization.begin() + 7, kernel->specialization.end()),
              c.shape)
        << c.body;
  }
}

TEST(GlslEmitterTest, SmallOrNonF32OrFusedDotsStayElemental) {
  const std::string bodies[] = {
      "a = f32[16,45] parameter(0)\nb = f32[45,100] parameter(1)\n"
      "ROOT d = f32[16,100] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f64[70,45] parameter(0)\nb = f64[45,100] parameter(1)\n"
      "ROOT d = f64[70,100] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f32[70,45] parameter(0)\nb = f32[45] parameter(1)\n"
      "ROOT d = f32[70] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      "a = f32[70,45] parameter(0)\nn = f32[70,45] negate(a)\nb = f32[45,100] parameter(1)\n"
      "ROOT d = f32[70,100] dot(n, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
  };
  for (const std::string& body : bodies) {
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(EmitterTestModule(body));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    EXPECT_FALSE(PlanLibraryKernel(*(*module)->entry(), AllShaderFeatures(), "d").has_value()) << body;
    StatusOr<Compiled> compiled = Compile(EmitterTestModule(body));
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  }
}

constexpr char kSum[] =
    "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

TEST(GlslEmitterTest, RowReductionsTakeASubgroupPerOutputElement) {
  const ShaderFeatures features = AllShaderFeatures();  // subgroups of 8
  StatusOr<Compiled> rows =
      Compile(EmitterTestModule("a = f32[30,100] parameter(0)\nz = f32[] constant(0)\n"
                                "ROOT r = f32[30] reduce(a, z), dimensions={1}, to_apply=sum",
                                kSum),
              features);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_NE(rows->kernel.source.find("subgroupShuffleXor"), std::string::npos) << rows->kernel.source;
  EXPECT_NE(rows->kernel.source.find("gl_SubgroupID"), std::string::npos) << rows->kernel.source;
  EXPECT_EQ(rows->kernel.invocations, 30 * features.subgroup_size);

  // A column reduction, a short row, a device without shuffles and f64
  // values stay one invocation per output element.
  const std::string elemental[] = {
      "a = f32[100,30] parameter(0)\nz = f32[] constant(0)\n"
      "ROOT r = f32[30] reduce(a, z), dimensions={0}, to_apply=sum",
      "a = f32[30,20] parameter(0)\nz = f32[] constant(0)\n"
      "ROOT r = f32[30] reduce(a, z), dimensions={1}, to_apply=sum",
  };
  for (const std::string& body : elemental) {
    StatusOr<Compiled> compiled = Compile(EmitterTestModule(body, kSum), features);
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    EXPECT_EQ(compiled->kernel.source.find("subgroupShuffleXor"), std::string::npos) << body;
    EXPECT_EQ(compiled->kernel.invocations, 30) << body;
  }
  ShaderFeatures no_shuffle = features;
  no_shuffle.subgroup_shuffle = false;
  StatusOr<Compiled> plain =
      Compile(EmitterTestModule("a = f32[30,100] parameter(0)\nz = f32[] constant(0)\n"
                                "ROOT r = f32[30] reduce(a, z), dimensions={1}, to_apply=sum",
                                kSum),
              no_shuffle);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->kernel.source.find("subgroupShuffleXor"), std::string::npos);
  StatusOr<Compiled> wide = Compile(
      EmitterTestModule(
          "a = f64[30,100] parameter(0)\nz = f64[] constant(0)\n"
          "ROOT r = f64[30] reduce(a, z), dimensions={1}, to_apply=sum",
          "sum {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n  ROOT s = f64[] add(a, b)\n}\n"),
      features);
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(wide->kernel.source.find("subgroupShuffleXor"), std::string::npos);
}

TEST(GlslEmitterTest, CompareSelectClampConvertAndBitcastCompile) {
  ExpectCompiles(EmitterTestModule(R"(  a = f32[6] parameter(0)
  b = f32[6] parameter(1)
  lt = pred[6] compare(a, b), direction=LT
  ne = pred[6] compare(a, b), direction=NE
  tot = pred[6] compare(a, b), direction=LT, type=TOTALORDER
  s = f32[6] select(lt, a, b)
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  c = f32[6] clamp(lo, s, hi)
  i = s32[6] convert(c)
  u8 = u8[6] convert(a)
  h = f16[6] convert(a)
  d = f64[6] convert(h)
  bits = s32[6] bitcast-convert(a)
  hb = s16[6] bitcast-convert(h)
  z = c64[6] complex(a, b)
  za = f32[6] abs(z)
  zeq = pred[6] compare(z, z), direction=EQ
  fin = pred[6] is-finite(a)
  rp = f32[6] reduce-precision(a), exponent_bits=5, mantissa_bits=10
  ROOT t = (pred[6], pred[6], pred[6], s32[6], u8[6], f64[6], s32[6], s16[6], f32[6], pred[6], pred[6], f32[6]) tuple(lt, ne, tot, i, u8, d, bits, hb, za, zeq, fin, rp))"),
                 14, 6);
}

TEST(GlslEmitterTest, ShapeOpsCompile) {
  ExpectCompiles(EmitterTestModule(R"(  a = f32[2,3] parameter(0)
  b = f32[3] parameter(1)
  bb = f32[2,3] broadcast(b), dimensions={1}
  s = f32[2,3] add(a, bb)
  t = f32[3,2] transpose(s), dimensions={1,0}
  r = f32[6] reshape(t)
  rv = f32[6] reverse(r), dimensions={0}
  sl = f32[3] slice(rv), slice={[1:6:2]}
  c = f32[9] concatenate(rv, sl), dimensions={0}
  z = f32[] constant(0)
  p = f32[12] pad(c, z), padding=2_1_0
  pi = f32[25] pad(c, z), padding=1_-1_2
  i = s32[12] iota(), iota_dimension=0
  k = f32[4] constant({1, 2, 3, 4})
  kb = f32[4,13] broadcast(k), dimensions={0}
  ROOT out = (f32[12], s32[12], f32[25], f32[4,13]) tuple(p, i, pi, kb))"),
                 6, 52);
}

TEST(GlslEmitterTest, ReductionsDotsAndWindowsCompile) {
  const std::string sum =
      "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";
  ExpectCompiles(EmitterTestModule(R"(  a = f32[4,5,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce(a, z), dimensions={0,2}, to_apply=add)",
                                   sum),
                 2, 5);
  const std::string argmax = R"(argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  m = f32[] select(gt, a, b)
  mi = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(m, mi)
}
)";
  ExpectCompiles(EmitterTestModule(R"(  a = f32[4,6] parameter(0)
  i = s32[4,6] iota(), iota_dimension=1
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[4], s32[4]) reduce(a, i, z, zi), dimensions={1}, to_apply=argmax)",
                                   argmax),
                 3, 4);
  ExpectCompiles(EmitterTestModule(R"(  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1})"),
                 3, 30);
  ExpectCompiles(EmitterTestModule(R"(  a = s8[3,4] parameter(0)
  b = s8[4] parameter(1)
  ROOT d = s32[3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})"),
                 3, 3);
  ExpectCompiles(EmitterTestModule(R"(  a = f32[1,8,8,1] parameter(0)
  z = f32[] constant(0)
  ROOT w = f32[1,4,4,1] reduce-window(a, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add)",
                                   sum),
                 2, 16);
}

TEST(GlslEmitterTest, ConvolutionsCompile) {
  // NHWC with padding and strides, grouped (depthwise), batch groups, lhs and
  // rhs dilation, and an integer convolution.
  ExpectCompiles(EmitterTestModule(R"(  x = f32[1,8,8,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  ROOT c = f32[1,4,4,4] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f)"),
                 3, 64);
  ExpectCompiles(EmitterTestModule(R"(  x = f32[2,4,6,6] parameter(0)
  w = f32[4,1,3,3] parameter(1)
  ROOT c = f32[2,4,4,4] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=4)"),
                 3, 128);
  ExpectCompiles(EmitterTestModule(R"(  x = f32[4,5,5,3] parameter(0)
  w = f32[2,2,3,4] parameter(1)
  ROOT c = f32[2,4,4,4] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2)"),
                 3, 128);
  ExpectCompiles(EmitterTestModule(R"(  x = f32[1,5,2] parameter(0)
  w = f32[3,2,2] parameter(1)
  ROOT c = f32[1,11,2] convolution(x, w), window={size=3 pad=2_2 lhs_dilate=2 rhs_dilate=1}, dim_labels=b0f_0io->b0f)"),
                 3, 22);
  ExpectCompiles(EmitterTestModule(R"(  x = s8[1,6,2] parameter(0)
  w = s8[2,2,3] parameter(1)
  ROOT c = s32[1,4,3] convolution(x, w), window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f)"),
                 3, 12);
}

TEST(GlslEmitterTest, DynamicSlicesAndGatherCompile) {
  ExpectCompiles(EmitterTestModule(R"(  a = f32[8,6] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT s = f32[3,2] dynamic-slice(a, i, j), dynamic_slice_sizes={3,2})"),
                 4, 6);
  ExpectCompiles(EmitterTestModule(R"(  a = f32[8,6] parameter(0)
  u = f32[2,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT s = f32[8,6] dynamic-update-slice(a, u, i, j))"),
                 5, 48);
  ExpectCompiles(EmitterTestModule(R"(  table = f32[10,4] parameter(0)
  ids = s32[3] parameter(1)
  ROOT g = f32[3,4] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4})"),
                 3, 12);
}

// Sort and topk: the bitonic network's passes and the gather, each a
// dispatch of one shader, one invocation per output element in the
// gather, with one scratch binding after the outputs of
// GlslKernelScratchBytes bytes (each row's element numbers, padded to a
// power of two).
void ExpectSortKernel(const std::string& text, int bindings, int64_t outputs, int64_t scratch_bytes,
                      size_t dispatches) {
  SCOPED_TRACE(text);
  ExpectCompiles(text, bindings, outputs);
  StatusOr<std::unique_ptr<kiln::Module>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(GlslKernelScratchBytes(*(*module)->entry()->root(), AllShaderFeatures()), scratch_bytes);
  StatusOr<GlslKernel> kernel = EmitGlslKernel(*(*module)->entry(), AllShaderFeatures(), "k");
  ASSERT_TRUE(kernel.ok());
  EXPECT_TRUE(kernel->has_scratch);
  EXPECT_EQ(kernel->binding_count, kernel->input_count + kernel->output_count + 1);
  EXPECT_EQ(kernel->launches.size(), dispatches);
  EXPECT_EQ(kernel->push_constant_bytes, 12);
}

TEST(GlslEmitterTest, SortsAndTopKCompileWithScratch) {
  const std::string lt =
      "lt {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(x, y), direction=LT\n}\n";
  // Rows of 6 padded to 8, within one tile: the tile sort and the gather.
  ExpectSortKernel(
      EmitterTestModule("  a = f32[4,6] parameter(0)\n  ROOT s = f32[4,6] sort(a), dimensions={1}, "
                        "to_apply=lt",
                        lt),
      1 + 1 + 1, 24, 4 * 8 * 4, 2);
  // Along a leading dimension, two operands, a comparator over both keys.
  const std::string two_keys = R"(cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f64[] parameter(2)
  d = f64[] parameter(3)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  gt = pred[] compare(c, d), direction=GT, type=TOTALORDER
  tie = pred[] and(eq, gt)
  ROOT r = pred[] or(lt, tie)
}
)";
  ExpectSortKernel(
      EmitterTestModule("  a = s32[5,3] parameter(0)\n  b = f64[5,3] parameter(1)\n"
                        "  ROOT s = (s32[5,3], f64[5,3]) sort(a, b), dimensions={0}, is_stable=true, "
                        "to_apply=cmp",
                        two_keys),
      2 + 2 + 1, 15, 3 * 8 * 4, 2);
  ExpectSortKernel(
      EmitterTestModule("  a = f32[4,10] parameter(0)\n  ROOT t = (f32[4,3], s32[4,3]) topk(a), k=3, "
                        "largest=true"),
      1 + 2 + 1, 12, 4 * 16 * 4, 2);
  ExpectSortKernel(
      EmitterTestModule("  a = u16[2,7] parameter(0)\n  ROOT t = (u16[2,2], s32[2,2]) topk(a), k=2, "
                        "largest=false"),
      1 + 2 + 1, 4, 2 * 8 * 4, 2);
  // A row of 2^20 in tiles of 2048 (1024 invocations): the tile sort, 45
  // passes across tiles, 9 within them, the gather.
  ExpectSortKernel(
      EmitterTestModule("  a = f32[1048576] parameter(0)\n  ROOT s = f32[1048576] sort(a), dimensions={0}, "
                        "to_apply=lt",
                        lt),
      1 + 1 + 1, 1048576, 1048576 * 4, 1 + 45 + 9 + 1);
}

// A CPU device (lavapipe) sorts rows up to the crossover one invocation's
// merge sort each (glsl_serial_sort.h: the sort's dispatch and the gather,
// two regions of element numbers per row); a GPU, a longer row, or a row
// whose merge sort would pass the device's loop limit, takes the bitonic
// network. Either kernel compiles and validates.
TEST(GlslEmitterTest, SortsFollowTheDeviceTypeAndRowLength) {
  const std::string lt =
      "lt {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(x, y), direction=LT\n}\n";
  const auto sort_of = [&](int64_t rows, int64_t length) {
    const std::string shape = "f32[" + std::to_string(rows) + "," + std::to_string(length) + "]";
    return EmitterTestModule(
        "  a = " + shape + " parameter(0)\n  ROOT s = " + shape + " sort(a), dimensions={1}, to_apply=lt",
        lt);
  };
  ShaderFeatures gpu = AllShaderFeatures();
  ShaderFeatures cpu = AllShaderFeatures();
  cpu.cpu_device = true;
  cpu.max_loop_iterations = 65535;  // lavapipe's
  struct Case {
    std::string text;
    const ShaderFeatures* features;
    bool serial;
    int64_t scratch_bytes;
  };
  ShaderFeatures cpu_short_loops = cpu;
  cpu_short_loops.max_loop_iterations = 2000;
  const std::vector<Case> cases = {
      {sort_of(64, 2048), &cpu, true, 2 * 64 * 2048 * 4},
      {sort_of(64, 2048), &gpu, false, 64 * 2048 * 4},
      {sort_of(3, 6), &cpu, true, 2 * 3 * 6 * 4},
      {sort_of(3, 6), &gpu, false, 3 * 8 * 4},
      // Past the crossover.
      {sort_of(2, 5000), &cpu, false, 2 * 8192 * 4},
      // 300 elements' merge sort is ~3000 loop iterations.
      {sort_of(2, 300), &cpu_short_loops, false, 2 * 512 * 4},
      {sort_of(2, 100), &cpu_short_loops, true, 2 * 2 * 100 * 4},
      {EmitterTestModule(
           "  a = f32[4,10] parameter(0)\n  ROOT t = (f32[4,3], s32[4,3]) topk(a), k=3, largest=true"),
       &cpu, true, 2 * 4 * 10 * 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text.substr(c.text.find("ENTRY")) +
                 (c.features->cpu_device ? " on a CPU device" : " on a GPU"));
    StatusOr<std::unique_ptr<kiln::Module>> module = ParseHloModule(c.text);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    EXPECT_EQ(GlslKernelScratchBytes(*(*module)->entry()->root(), *c.features), c.scratch_bytes);
    StatusOr<Compiled> compiled = Compile(c.text, *c.features);
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    const GlslKernel& kernel = compiled->kernel;
    EXPECT_EQ(kernel.source.find("k_sort_row(") != std::string::npos, c.serial);
    EXPECT_EQ(kernel.push_constant_bytes, c.serial ? 4 : 12);
    if (c.serial) {
      EXPECT_EQ(kernel.launches.size(), 2u);
      EXPECT_EQ(kernel.workgroup_size, c.features->subgroup_size);
    }
    if (c.features->max_loop_iterations > 0) {
      EXPECT_LE(kernel.max_loop_iterations, c.features->max_loop_iterations);
    }
  }
}

// The optimiser's trimmed pass list (shader_compiler.cc) still inlines
// every function into main and takes function-scope scalars to SSA: a sort
// kernel's GLSL has helper functions (k_hi_first, k_swap, k_sorted) and
// locals; its SPIR-V keeps one function, no call and no Function-storage
// variable.
TEST(GlslEmitterTest, OptimisedSpirvIsInlinedIntoMainWithoutLocalVariables) {
  const std::string lt =
      "lt {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(x, y), direction=LT\n}\n";
  StatusOr<Compiled> compiled = Compile(EmitterTestModule(
      "  a = f32[4,600] parameter(0)\n  ROOT s = f32[4,600] sort(a), dimensions={1}, to_apply=lt", lt));
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  ASSERT_NE(compiled->kernel.source.find("bool k_hi_first("), std::string::npos);
  constexpr uint32_t kOpFunction = 54, kOpFunctionCall = 57, kOpVariable = 59, kStorageClassFunction = 7;
  int functions = 0, calls = 0, locals = 0;
  const std::vector<uint32_t>& words = compiled->spirv;
  for (size_t at = 5; at < words.size();) {
    const uint32_t opcode = words[at] & 0xffffu;
    const uint32_t count = words[at] >> 16;
    ASSERT_GT(count, 0u);
    if (opcode == kOpFunction) ++functions;
    if (opcode == kOpFunctionCall) ++calls;
    if (opcode == kOpVariable && at + 3 < words.size() && words[at + 3] == kStorageClassFunction) ++locals;
    at += count;
  }
  EXPECT_EQ(functions, 1);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(locals, 0);
}

// How many Function-storage variables of array type (local arrays, which
// stay in memory) a SPIR-V module has.
int CountLocalArrays(const std::vector<uint32_t>& words) {
  constexpr uint32_t kOpTypeArray = 28, kOpTypePointer = 32, kOpVariable = 59, kStorageClassFunction = 7;
  std::set<uint32_t> arrays, local_array_pointers;
  int local_arrays = 0;
  for (size_t at = 5; at < words.size();) {
    const uint32_t opcode = words[at] & 0xffffu;
    const uint32_t count = words[at] >> 16;
    if (count == 0 || at + count > words.size()) {
      ADD_FAILURE() << "a malformed SPIR-V instruction at word " << at;
      break;
    }
    if (opcode == kOpTypeArray) arrays.insert(words[at + 1]);
    if (opcode == kOpTypePointer && words[at + 2] == kStorageClassFunction && arrays.count(words[at + 3]))
      local_array_pointers.insert(words[at + 1]);
    if (opcode == kOpVariable && local_array_pointers.count(words[at + 1])) ++local_arrays;
    at += count;
  }
  return local_arrays;
}

// Sine, cosine and tangent reduce their argument with bits of 2/pi chosen
// by its exponent (glsl_trig.h), read through a tree of selects: a const
// array read at a variable index stays a local array in the SPIR-V, which
// lavapipe took 5 s to compile for one f64 sine. Their kernels declare no
// array and their SPIR-V keeps none.
TEST(GlslEmitterTest, TrigKernelsReadTheBitsOfTwoOverPiWithoutALocalArray) {
  for (const char* type : {"f32", "f64", "c64", "c128"}) {
    for (const char* op : {"sine", "cosine", "tan"}) {
      SCOPED_TRACE(std::string(op) + " of " + type);
      StatusOr<Compiled> compiled = Compile(EmitterTestModule(
          std::string("  a = ") + type + "[8] parameter(0)\n  ROOT r = " + type + "[8] " + op + "(a)"));
      ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
      EXPECT_NE(compiled->kernel.source.find("opi_window("), std::string::npos) << compiled->kernel.source;
      EXPECT_EQ(compiled->kernel.source.find("const uint"), std::string::npos) << compiled->kernel.source;
      EXPECT_EQ(CountLocalArrays(compiled->spirv), 0);
    }
  }
}

// (Scatters of one f32 array by add run as the atomic scatter, two launches
// covering the outputs and the updates: atomic_scatter_glsl_test.cc; two
// arrays scattered together, one invocation per output element.)
TEST(GlslEmitterTest, ScattersCompileAndCoverTheirOutputs) {
  const std::string add =
      "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";
  // Rows of updates (window dims last): the loop runs over index vectors.
  ExpectCompiles(EmitterTestModule(R"(  a = f32[10,4] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6,4] parameter(2)
  ROOT s = f32[10,4] scatter(a, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add)",
                                   add),
                 4, 40);
  // A window dim before the batch dim, s64 indices, a 2-D index vector.
  ExpectCompiles(EmitterTestModule(R"(  a = f32[5,6] parameter(0)
  i = s64[3,2] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[5,6] scatter(a, i, u), update_window_dims={0}, inserted_window_dims={1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add)",
                                   add),
                 4, 30);
  // Two operands scattered together.
  const std::string pair = R"(pair {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  m = s32[] maximum(a, c)
  n = f32[] multiply(b, d)
  ROOT t = (s32[], f32[]) tuple(m, n)
}
)";
  ExpectCompiles(EmitterTestModule(R"(  a = s32[8] parameter(0)
  b = f32[8] parameter(1)
  i = u32[4] parameter(2)
  u = s32[4] parameter(3)
  v = f32[4] parameter(4)
  ROOT s = (s32[8], f32[8]) scatter(a, b, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair)",
                                   pair),
                 7, 8);
  const std::string ge =
      "ge {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(x, y), direction=GE\n}\n";
  ExpectCompiles(EmitterTestModule(R"(  a = f32[2,6,6,4] parameter(0)
  s = f32[2,3,3,4] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[2,6,6,4] select-and-scatter(a, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add)",
                                   ge + add),
                 3, 288);
}

TEST(GlslEmitterTest, RngKernelsTakeAKeyInPushConstants) {
  for (const std::string& text :
       {EmitterTestModule("  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT r = f32[4,5] rng(a, b), distribution=rng_uniform"),
        EmitterTestModule("  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
                          "  ROOT r = bf16[7] rng(a, b), distribution=rng_normal"),
        EmitterTestModule("  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n"
                          "  ROOT r = s8[9] rng(a, b), distribution=rng_uniform"),
        EmitterTestModule("  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n"
                          "  ROOT r = f64[3] rng(a, b), distribution=rng_uniform")}) {
    SCOPED_TRACE(text);
    StatusOr<Compiled> compiled = Compile(text);
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    EXPECT_TRUE(compiled->kernel.takes_rng_key);
    EXPECT_EQ(compiled->kernel.push_constant_bytes, 8);
    EXPECT_NE(compiled->kernel.source.find("push_constant"), std::string::npos);
  }
  StatusOr<Compiled> plain =
      Compile(EmitterTestModule("  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)"));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->kernel.takes_rng_key);
  EXPECT_EQ(plain->kernel.push_constant_bytes, 0);
}

TEST(GlslEmitterTest, RefusesTypesTheDeviceLacksByOpTypeAndFeature) {
  ShaderFeatures no_f64 = AllShaderFeatures();
  no_f64.f64 = false;
  const std::string text = EmitterTestModule("  a = f64[4] parameter(0)\n  ROOT n = f64[4] negate(a)");
  StatusOr<Compiled> refused = Compile(text, no_f64);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  for (const char* word : {"negate", "f64", "shaderFloat64"})
    EXPECT_NE(refused.status().message().find(word), std::string::npos) << refused.status().message();
  ASSERT_TRUE(Compile(text).ok());

  ShaderFeatures no_storage8 = AllShaderFeatures();
  no_storage8.storage8 = false;
  const Status pred = Compile(EmitterTestModule("  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                                                "  ROOT c = pred[4] compare(a, b), direction=LT"),
                              no_storage8)
                          .status();
  EXPECT_EQ(pred.code(), StatusCode::kUnimplemented);
  EXPECT_NE(pred.message().find("storageBuffer8BitAccess"), std::string::npos) << pred.message();

  ShaderFeatures no_i64 = AllShaderFeatures();
  no_i64.i64 = false;
  const Status s64 =
      Compile(EmitterTestModule("  a = s64[4] parameter(0)\n  ROOT c = s64[4] add(a, a)"), no_i64).status();
  EXPECT_NE(s64.message().find("shaderInt64"), std::string::npos) << s64.message();
}

TEST(GlslEmitterTest, ComplexTranscendentalsCompile) {
  for (const char* type : {"c64", "c128"}) {
    std::string body = "  p = " + std::string(type) + "[5] parameter(0)\n";
    std::string tuple;
    int n = 0;
    for (const char* op : {"exponential", "log", "sine", "cosine", "tanh", "abs", "sign",
                           "exponential-minus-one", "sqrt", "rsqrt", "log-plus-one", "logistic", "tan"}) {
      const std::string shape =
          std::string(op) == "abs" ? (type == std::string("c64") ? "f32" : "f64") : type;
      body += "  u" + std::to_string(n) + " = " + shape + "[5] " + op + "(p)\n";
      tuple += (n == 0 ? "" : ", ") + std::string("u") + std::to_string(n);
      ++n;
    }
    std::string shapes = "(";
    for (int i = 0; i < n; ++i)
      shapes += std::string(i == 0 ? "" : ", ") +
                (i == 5 ? (type == std::string("c64") ? "f32" : "f64") : type) + "[5]";
    body += "  ROOT t = " + shapes + ") tuple(" + tuple + ")";
    SCOPED_TRACE(type);
    ExpectCompiles(EmitterTestModule(body), 1 + n, 5);
  }
}

TEST(GlslEmitterTest, BitcastConvertBetweenWidthsCompiles) {
  ExpectCompiles(EmitterTestModule("  d = f64[3] parameter(0)\n  a = u8[3,8] bitcast-convert(d)\n"
                                   "  i = s8[5,4] parameter(1)\n  w = f32[5] bitcast-convert(i)\n"
                                   "  ROOT t = (u8[3,8], f32[5]) tuple(a, w)"),
                 4, 24);
  ShaderFeatures no_i64 = AllShaderFeatures();
  no_i64.i64 = false;
  const Status refused =
      Compile(EmitterTestModule("  d = u32[3,2] parameter(0)\n  ROOT a = s64[3] bitcast-convert(d)"), no_i64)
          .status();
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented);
}

TEST(GlslEmitterTest, RefusesWhatItDoesNotDoByName) {
  const Status cbrt128 =
      Compile(EmitterTestModule("  a = c128[4] parameter(0)\n  ROOT e = c128[4] cbrt(a)")).status();
  EXPECT_EQ(cbrt128.code(), StatusCode::kUnimplemented);
  EXPECT_NE(cbrt128.message().find("cbrt"), std::string::npos) << cbrt128.message();
}

TEST(GlslEmitterTest, RngBitGeneratorCompilesAndNeedsInt64) {
  ExpectCompiles(EmitterTestModule("  s = u64[2] parameter(0)\n"
                                   "  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default"),
                 3, 8);
  ExpectCompiles(EmitterTestModule("  s = u64[3] parameter(0)\n"
                                   "  ROOT r = (u64[3], u8[3,5]) rng-bit-generator(s), algorithm=rng_philox"),
                 3, 15);
  ShaderFeatures no_i64 = AllShaderFeatures();
  no_i64.i64 = false;
  const Status bits =
      Compile(EmitterTestModule("  s = u64[2] parameter(0)\n"
                                "  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default"),
              no_i64)
          .status();
  EXPECT_EQ(bits.code(), StatusCode::kUnimplemented);
}

TEST(ShaderCompilerTest, ABadShaderIsAnErrorWithNumberedLines) {
  const std::string source =
      "#version 450\nlayout(local_size_x_id = 0) in;\nvoid main() {\n  undeclared = 1;\n}\n";
  StatusOr<std::vector<uint32_t>> spirv = CompileGlslToSpirv(source, "broken", kEveryWidth);
  ASSERT_FALSE(spirv.ok());
  EXPECT_EQ(spirv.status().code(), StatusCode::kInternal);
  EXPECT_NE(spirv.status().message().find("broken"), std::string::npos);
  EXPECT_NE(spirv.status().message().find("undeclared"), std::string::npos) << spirv.status().message();
  EXPECT_NE(spirv.status().message().find("4:   undeclared = 1;"), std::string::npos)
      << spirv.status().message();
}

TEST(ShaderCompilerTest, CompilesAMinimalKernel) {
  const std::string source =
      "#version 450\nlayout(local_size_x_id = 0) in;\n"
      "layout(std430, set = 0, binding = 0) buffer B { float d[]; } b;\n"
      "void main() { b.d[gl_GlobalInvocationID.x] *= 2.0; }\n";
  StatusOr<std::vector<uint32_t>> spirv = CompileGlslToSpirv(source, "double", kEveryWidth);
  ASSERT_TRUE(spirv.ok()) << spirv.status().ToString();
  EXPECT_EQ((*spirv)[0], 0x07230203u);
}

}  // namespace
}  // namespace kiln::vulkan

namespace kiln::vulkan {
namespace {

constexpr char kAdd[] =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

// Lavapipe folds `+0 + x` to x where it sees a constant initial value meet
// an element (a short loop unrolled, the subgroup's last fold), and -0 came
// out where XLA's +0 + -0 is +0: a reduce takes the constant-operand
// helper for that first step, before its loop, and not in it; a dot or a
// convolution adds +0 through it after its loop. Initial values that are
// not constants, or hold no zero, keep the plain op.
TEST(GlslEmitterTest, ConstantInitialValuesMeetTheFirstElementThroughTheHelpers) {
  ShaderFeatures serial = AllShaderFeatures();
  serial.subgroup_shuffle = false;
  auto source = [](const std::string& text, const ShaderFeatures& features) {
    StatusOr<Compiled> compiled = Compile(text, features);
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
    return compiled.ok() ? compiled->kernel.source : std::string();
  };
  auto reduce = [](const std::string& init, const std::string& combiner) {
    return EmitterTestModule(
        "x = f32[7,300] parameter(0)\n" + init +
            "\nROOT r = f32[7] reduce(x, z), dimensions={1}, to_apply=" + combiner,
        std::string(kAdd) +
            "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] "
            "multiply(a, b)\n}\n");
  };
  // Serial: the helper's call before the loop, which starts at 1.
  const std::string from_zero = source(reduce("z = f32[] constant(0)", "add"), serial);
  const size_t loop = from_zero.find("for (int r");
  ASSERT_NE(loop, std::string::npos) << from_zero;
  EXPECT_NE(from_zero.rfind("k_addc_f32(", loop), std::string::npos) << from_zero;
  EXPECT_EQ(from_zero.find("k_addc_f32(", loop), std::string::npos) << from_zero;
  const std::string header = from_zero.substr(loop, from_zero.find(';', loop) - loop);
  EXPECT_EQ(header.substr(header.size() - 4), " = 1") << header;
  // From -0 too (its fold is right, but the helper cannot tell).
  EXPECT_NE(source(reduce("z = f32[] constant(-0)", "add"), serial).find("k_addc_f32("), std::string::npos);
  // A subgroup per row: the last fold, after the shuffles.
  const std::string lanes = source(reduce("z = f32[] constant(0)", "add"), AllShaderFeatures());
  ASSERT_NE(lanes.find("subgroupShuffleXor"), std::string::npos) << lanes;
  EXPECT_NE(lanes.find("k_addc_f32(", lanes.rfind("subgroupShuffleXor")), std::string::npos) << lanes;
  // An initial value read from a buffer, and a product from 1: plain ops.
  for (const std::string& text :
       {reduce("z = f32[] parameter(1)", "add"), reduce("z = f32[] constant(1)", "mul")}) {
    for (const ShaderFeatures& features : {serial, AllShaderFeatures()}) {
      const std::string plain = source(text, features);
      EXPECT_EQ(plain.find("k_addc_"), std::string::npos) << plain;
      EXPECT_EQ(plain.find("k_mulc_"), std::string::npos) << plain;
    }
  }
  // A dot and a convolution (f64: the generated kernel): after the loop.
  const std::string dot = source(
      EmitterTestModule("x = f32[4,50] parameter(0)\nw = f32[50,3] parameter(1)\n"
                        "ROOT d = f32[4,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      serial);
  ASSERT_NE(dot.find("for (int c"), std::string::npos) << dot;
  EXPECT_NE(dot.find("k_addc_f32(", dot.find("for (int c")), std::string::npos) << dot;
  const std::string complex_dot = source(
      EmitterTestModule("x = c64[4,5] parameter(0)\nw = c64[5,3] parameter(1)\n"
                        "ROOT d = c64[4,3] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      serial);
  ASSERT_NE(complex_dot.find("for (int c"), std::string::npos) << complex_dot;
  EXPECT_NE(complex_dot.find("k_addc_f32(", complex_dot.find("for (int c")), std::string::npos)
      << complex_dot;
  const std::string convolution = source(
      EmitterTestModule("x = f64[2,9,3] parameter(0)\nw = f64[3,3,4] parameter(1)\n"
                        "ROOT c = f64[2,7,4] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f"),
      serial);
  ASSERT_NE(convolution.find("for (int t"), std::string::npos) << convolution;
  EXPECT_NE(convolution.find("k_addc_f64(", convolution.find("for (int t")), std::string::npos)
      << convolution;
}

// Mesa's lavapipe stops an invocation after 65535 loop iterations, all
// loops together: a sum of 100000 ones came back as 65535. The kernel's
// bound counts every loop (nested loops multiply, the grid-stride loop
// adds its passes), and a device with a limit refuses a longer kernel by
// name instead of running it short.
TEST(GlslEmitterTest, MaxLoopIterationsBoundsEveryLoopAndRefusesPastTheLimit) {
  // Serial reductions (no subgroup shuffles): every loop as written.
  ShaderFeatures serial = AllShaderFeatures();
  serial.subgroup_shuffle = false;
  auto iterations = [](const std::string& text, const ShaderFeatures& features) -> int64_t {
    StatusOr<Compiled> compiled = Compile(text, features);
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
    return compiled.ok() ? compiled->kernel.max_loop_iterations : -1;
  };
  const std::string sum = EmitterTestModule(
      "x = f32[100000] parameter(0)\nz = f32[] constant(0)\n"
      "ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add",
      kAdd);
  const std::string rows = EmitterTestModule(
      "x = f32[7,300] parameter(0)\nz = f32[] constant(0)\n"
      "ROOT r = f32[7] reduce(x, z), dimensions={1}, to_apply=add",
      kAdd);
  // One pass of the grid loop, 99999 of the reduce's (the initial value
  // meets the first element before the loop).
  EXPECT_EQ(iterations(sum, serial), 100000);
  // Rows of 300: still one grid pass per invocation.
  EXPECT_EQ(iterations(rows, serial), 300);
  // With a subgroup of 8 per output element each lane folds an eighth.
  EXPECT_EQ(iterations(sum, AllShaderFeatures()), 1 + 12500);
  EXPECT_EQ(iterations(rows, AllShaderFeatures()), 1 + 38);
  // A dot contracting 50 of a reduce over 30: 50 + 50 * 29 inside one pass.
  EXPECT_EQ(iterations(EmitterTestModule(
                           "x = f32[4,50,30] parameter(0)\nz = f32[] constant(0)\n"
                           "r = f32[4,50] reduce(x, z), dimensions={2}, to_apply=add\n"
                           "w = f32[50,3] parameter(1)\n"
                           "ROOT d = f32[4,3] dot(r, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                           kAdd),
                       serial),
            1 + 50 + 50 * 29);
  // More elements than the grid's invocations: the grid loop runs 3 passes.
  const int64_t big = 2 * kGlslMaxGridInvocations + 1;
  EXPECT_EQ(iterations(EmitterTestModule("x = f32[" + std::to_string(big) + "] parameter(0)\nROOT n = f32[" +
                                         std::to_string(big) + "] negate(x)"),
                       serial),
            3);

  ShaderFeatures lavapipe = serial;
  lavapipe.max_loop_iterations = 65535;
  StatusOr<std::unique_ptr<kiln::Module>> module = ParseHloModule(sum);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Status refused = CheckGlslEmittable(*(*module)->entry(), lavapipe);
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented) << refused.ToString();
  for (const char* part : {"reduce f32[] (r)", "100000", "65535", "cpu backend"})
    EXPECT_NE(refused.message().find(part), std::string::npos) << part << " not in " << refused.message();
  // Unlimited (0), a limit it fits, and lanes that share the sum take it.
  EXPECT_TRUE(CheckGlslEmittable(*(*module)->entry(), serial).ok());
  lavapipe.max_loop_iterations = 100000;
  EXPECT_TRUE(CheckGlslEmittable(*(*module)->entry(), lavapipe).ok());
  ShaderFeatures lavapipe_with_lanes = AllShaderFeatures();
  lavapipe_with_lanes.max_loop_iterations = 65535;
  EXPECT_TRUE(CheckGlslEmittable(*(*module)->entry(), lavapipe_with_lanes).ok());
}

}  // namespace
}  // namespace kiln::vulkan

namespace kiln::vulkan {
namespace {

// Each kernel description of a compiled program gets VulkanKernelGrid's
// grid: workgroups of the shaders' local size over the kernel's
// invocations, at most kGlslMaxWorkgroups of them.
TEST(VulkanKernelGridTest, ProgramKernelsAreWorkgroupsOfTheLocalSize) {
  StatusOr<std::unique_ptr<kiln::Module>> module = ParseHloModule(EmitterTestModule(R"(
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  s = f32[1000] add(a, b)
  ROOT e = f32[1000] exponential(s))"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  StatusOr<std::unique_ptr<VulkanProgram>> program =
      CompileForVulkan(**module, AllShaderFeatures(), 256, /*optimization_level=*/2);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ((*program)->kernels.size(), 1u);
  const KernelGrid& grid = (*program)->kernels[0].grid;
  EXPECT_EQ(grid.iterations, 1000);
  EXPECT_EQ(grid.workgroup_size[0], kGlslWorkgroupSize);
  EXPECT_EQ(grid.workgroups[0], (1000 + kGlslWorkgroupSize - 1) / kGlslWorkgroupSize);

  GlslKernel huge;
  huge.invocations = kGlslMaxGridInvocations * 3;
  EXPECT_EQ(VulkanKernelGrid(huge).workgroups[0], kGlslMaxWorkgroups);  // the shader strides
}

}  // namespace
}  // namespace kiln::vulkan
