// Shape ops, fused chains, reductions and windows, compiled as one kernel
// each and compared with the interpreter.
#include <string>
#include <vector>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

Literal Input(const std::string& type, std::vector<int64_t> dims, uint64_t seed) {
  return MakeInput(Shape(*ElementTypeFromName(type), std::move(dims)), seed);
}

const char* kAddF32 =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
const char* kMaxF32 =
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n";

TEST(CodegenFusion, BroadcastTransposeElementwiseChain) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  x = f32[6,40] parameter(0)
  v = f32[40] parameter(1)
  t = f32[40,6] parameter(2)
  bv = f32[6,40] broadcast(v), dimensions={1}
  tt = f32[6,40] transpose(t), dimensions={1,0}
  m = f32[6,40] multiply(x, bv)
  s = f32[6,40] add(m, tt)
  c = f32[] constant(0.5)
  bc = f32[6,40] broadcast(c), dimensions={}
  th = f32[6,40] tanh(s)
  ROOT r = f32[6,40] multiply(th, bc)
})";
  CompareWithInterpreter(hlo, {Input("f32", {6, 40}, 1), Input("f32", {40}, 2), Input("f32", {40, 6}, 3)},
                         "chain");
}

TEST(CodegenFusion, ReshapeSliceReverseIota) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  x = s32[4,6,10] parameter(0)
  r = s32[24,10] reshape(x)
  r2 = s32[10,24] reshape(r)
  s = s32[5,12] slice(r2), slice={[1:10:2], [0:24:2]}
  v = s32[5,12] reverse(s), dimensions={0,1}
  i = s32[5,12] iota(), iota_dimension=1
  ROOT o = s32[5,12] add(v, i)
})";
  CompareWithInterpreter(hlo, {Input("s32", {4, 6, 10}, 4)}, "reshape/slice/reverse/iota");
}

TEST(CodegenFusion, IotaOfEveryType) {
  for (const char* type : {"s8", "u16", "s64", "f16", "bf16", "f32", "f64"}) {
    const std::string hlo =
        std::string("HloModule m\nENTRY e {\n  ROOT i = ") + type + "[3,300] iota(), iota_dimension=1\n}\n";
    CompareWithInterpreter(hlo, {}, type);
  }
}

TEST(CodegenFusion, ConcatenateAndArrayConstant) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  a = f64[3,2] parameter(0)
  b = f64[3,5] parameter(1)
  c = f64[3,1] constant({{1.5}, {-2}, {7}})
  ROOT r = f64[3,8] concatenate(a, b, c), dimensions={1}
})";
  CompareWithInterpreter(hlo, {Input("f64", {3, 2}, 5), Input("f64", {3, 5}, 6)}, "concatenate");
}

TEST(CodegenFusion, PadNegativeAndInterior) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  x = bf16[5,7] parameter(0)
  z = bf16[] parameter(1)
  ROOT p = bf16[11,18] pad(x, z), padding=2_0_1x-2_1_2
})";
  CompareWithInterpreter(hlo, {Input("bf16", {5, 7}, 7), Input("bf16", {}, 8)}, "pad");
}

TEST(CodegenFusion, DynamicSliceClampsStarts) {
  for (int start : {-3, 1, 9}) {
    const std::string hlo = R"(HloModule m
ENTRY e {
  x = u8[8,9] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = u8[3,4] dynamic-slice(x, i, j), dynamic_slice_sizes={3,4}
})";
    CompareWithInterpreter(
        hlo, {Input("u8", {8, 9}, 9), Literal::Scalar<int32_t>(start), Literal::Scalar<int32_t>(2 - start)},
        "dynamic-slice " + std::to_string(start));
  }
}

TEST(CodegenFusion, MapInlinesComputation) {
  const std::string hlo = R"(HloModule m
f {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  m = f16[] multiply(a, b)
  ROOT s = f16[] subtract(m, a)
}
ENTRY e {
  x = f16[4,33] parameter(0)
  y = f16[4,33] parameter(1)
  ROOT r = f16[4,33] map(x, y), dimensions={0,1}, to_apply=f
})";
  CompareWithInterpreter(hlo, {Input("f16", {4, 33}, 10), Input("f16", {4, 33}, 11)}, "map");
}

TEST(CodegenFusion, MultiOutputTuple) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  x = f32[9,20] parameter(0)
  e = f32[9,20] exponential(x)
  c = s32[9,20] convert(x)
  g = pred[9,20] compare(x, e), direction=LT
  ROOT t = (f32[9,20], s32[9,20], pred[9,20]) tuple(e, c, g)
})";
  CompareWithInterpreter(hlo, {Input("f32", {9, 20}, 12)}, "tuple");
}

TEST(CodegenFusion, ReduceRowsColumnsAndAll) {
  for (const char* dims : {"{1}", "{0}", "{0,1}", "{}"}) {
    const std::string out = std::string(dims) == "{1}"   ? "f32[33]"
                            : std::string(dims) == "{0}" ? "f32[70]"
                            : std::string(dims) == "{}"  ? "f32[33,70]"
                                                         : "f32[]";
    const std::string hlo = std::string("HloModule m\n") + kAddF32 +
                            "ENTRY e {\n  x = f32[33,70] parameter(0)\n"
                            "  z = f32[] constant(0)\n  ROOT r = " +
                            out + " reduce(x, z), dimensions=" + dims + ", to_apply=add\n}\n";
    // Vectorised sums add in another order than the interpreter: up to 70
    // terms of magnitude <= 4 differ by about 70 * 4 * 2^-24 = 1.7e-5.
    CompareWithInterpreter(hlo, {Input("f32", {33, 70}, 13)}, std::string("reduce ") + dims, 5e-5);
  }
}

TEST(CodegenFusion, IntegerReduceMiddleDimension) {
  const std::string hlo = R"(HloModule m
mul {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT s = s64[] multiply(a, b)
}
ENTRY e {
  x = s64[4,5,6] parameter(0)
  one = s64[] constant(1)
  ROOT r = s64[4,6] reduce(x, one), dimensions={1}, to_apply=mul
})";
  CompareWithInterpreter(hlo, {Input("s64", {4, 5, 6}, 14)}, "product");
}

TEST(CodegenFusion, SoftmaxStyleReduceOfFusedInputs) {
  const std::string hlo = std::string("HloModule m\n") + kAddF32 + kMaxF32 + R"(ENTRY e {
  x = f32[16,300] parameter(0)
  mx = f32[16] parameter(1)
  b = f32[16,300] broadcast(mx), dimensions={0}
  d = f32[16,300] subtract(x, b)
  ex = f32[16,300] exponential(d)
  z = f32[] constant(0)
  s = f32[16] reduce(ex, z), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  m2 = f32[16] reduce(x, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[16], f32[16]) tuple(s, m2)
})";
  CompareWithInterpreter(hlo, {Input("f32", {16, 300}, 15), Input("f32", {16}, 16)}, "softmax");
}

TEST(CodegenFusion, SoftmaxNormalisationReadsReducedValues) {
  const std::string hlo = std::string("HloModule m\n") + kAddF32 + R"(ENTRY e {
  x = f32[8,50] parameter(0)
  ex = f32[8,50] exponential(x)
  z = f32[] constant(0)
  s = f32[8] reduce(ex, z), dimensions={1}, to_apply=add
  bs = f32[8,50] broadcast(s), dimensions={0}
  ROOT r = f32[8,50] divide(ex, bs)
})";
  CompareWithInterpreter(hlo, {Input("f32", {8, 50}, 17)}, "softmax normalisation");
}

TEST(CodegenFusion, ArgmaxVariadicReduce) {
  const std::string hlo = R"(HloModule m
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  nan = pred[] compare(a, a), direction=NE
  keep = pred[] or(gt, nan)
  v = f32[] select(keep, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  k2 = pred[] or(keep, tie)
  i = s32[] select(k2, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[12,31] parameter(0)
  io = s32[12,31] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[12], s32[12]) reduce(x, io, ninf, zero), dimensions={1}, to_apply=argmax
  ROOT i = s32[12] get-tuple-element(r), index=1
})";
  Literal x = Input("f32", {12, 31}, 18);
  x.data<float>()[40] = 100.0f;  // a clear maximum in row 1
  CompareWithInterpreter(hlo, {x}, "argmax");
}

TEST(CodegenFusion, ReduceWindowWithDilationAndPadding) {
  const std::string hlo = std::string("HloModule m\n") + kMaxF32 + R"(ENTRY e {
  x = f32[2,9,11] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT r = f32[2,9,6] reduce-window(x, ninf), window={size=1x3x3 stride=1x1x2 pad=0_0x1_1x1_1 lhs_dilate=1x1x1 rhs_dilate=1x1x1}, to_apply=max
})";
  CompareWithInterpreter(hlo, {Input("f32", {2, 9, 11}, 19)}, "max pool");
  const std::string dilated = std::string("HloModule m\n") + kAddF32 + R"(ENTRY e {
  x = f32[7,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[7,7] reduce-window(x, z), window={size=3x2 stride=2x2 pad=2_1x1_0 lhs_dilate=2x2 rhs_dilate=1x2}, to_apply=add
})";
  CompareWithInterpreter(dilated, {Input("f32", {7, 8}, 20)}, "dilated sum window");
}

}  // namespace
}  // namespace kiln::cpu::testing
