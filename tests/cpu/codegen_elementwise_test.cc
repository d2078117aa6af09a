// Elementwise ops of every element type they apply to, compiled to native
// code and compared with the interpreter.
#include <string>
#include <vector>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

const std::vector<std::string> kIntegerTypes = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};
const std::vector<std::string> kFloatTypes = {"f16", "bf16", "f32", "f64"};

std::vector<std::string> AllTypes() {
  std::vector<std::string> types = {"pred"};
  types.insert(types.end(), kIntegerTypes.begin(), kIntegerTypes.end());
  types.insert(types.end(), kFloatTypes.begin(), kFloatTypes.end());
  return types;
}

Shape ArrayShape(const std::string& type, std::vector<int64_t> dims) {
  return Shape(*ElementTypeFromName(type), std::move(dims));
}

std::string UnaryModule(const std::string& op, const std::string& in, const std::string& out) {
  return "HloModule m\nENTRY e {\n  p0 = " + in + "[7,37] parameter(0)\n  ROOT r = " + out + "[7,37] " + op +
         "(p0)\n}\n";
}

std::string BinaryModule(const std::string& op, const std::string& type, const std::string& out) {
  return "HloModule m\nENTRY e {\n  p0 = " + type + "[5,41] parameter(0)\n  p1 = " + type +
         "[5,41] parameter(1)\n  ROOT r = " + out + "[5,41] " + op + "(p0, p1)\n}\n";
}

void CheckUnary(const std::string& op, const std::vector<std::string>& types, double low = -4,
                double high = 4) {
  for (const std::string& type : types) {
    Literal input = MakeInput(ArrayShape(type, {7, 37}), 11, low, high);
    AddFloatEdges(input);
    CompareWithInterpreter(UnaryModule(op, type, type), {input}, op + " " + type);
  }
}

TEST(CodegenElementwise, IntegerUnaryOps) {
  for (const char* op : {"negate", "not", "count-leading-zeros", "popcnt", "copy"})
    CheckUnary(op, kIntegerTypes);
  for (const char* op : {"abs", "sign"}) CheckUnary(op, {"s8", "s16", "s32", "s64"});
  CheckUnary("not", {"pred"});
  CheckUnary("copy", {"pred"});
}

TEST(CodegenElementwise, FloatUnaryOps) {
  for (const char* op :
       {"abs", "negate", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even", "cbrt", "erf",
        "exponential", "exponential-minus-one", "logistic", "tanh", "sine", "cosine", "tan", "copy"}) {
    CheckUnary(op, kFloatTypes);
  }
}

TEST(CodegenElementwise, FloatUnaryOpsOnPositiveInputs) {
  for (const char* op : {"log", "log-plus-one", "sqrt", "rsqrt"}) CheckUnary(op, kFloatTypes, 0.0, 50.0);
  // Also negative inputs: NaN both ways.
  for (const char* op : {"log", "sqrt"}) CheckUnary(op, {"f32"}, -3.0, 3.0);
}

// exp where results turn subnormal (below -87.3), vanish (below -103.9) and
// overflow (above 88.72), densely, on an array large enough to be vectorised
// in the optimised tier (whose AVX-512 exp scales with vscalefps).
TEST(CodegenElementwise, ExpNearTheEdgesOfTheFloatRange) {
  constexpr int64_t kCount = 4096;
  Literal input(Shape(ElementType::kF32, {kCount}));
  auto values = input.data<float>();
  for (int64_t i = 0; i < kCount / 2; ++i) values[i] = -105.0f + 19.0f * static_cast<float>(i) / (kCount / 2);
  for (int64_t i = kCount / 2; i < kCount; ++i) {
    values[i] = 88.0f + 1.0f * static_cast<float>(i - kCount / 2) / (kCount / 2);
  }
  AddFloatEdges(input);
  CompareWithInterpreter(
      "HloModule m\nENTRY e {\n  p0 = f32[4096] parameter(0)\n  ROOT r = f32[4096] exponential(p0)\n}\n",
      {input}, "exp near the edges");
}

// exp and logistic are calls to functions with vector variants that the
// optimiser inlines after vectorising: at every LLVM level, and in both
// tiers, the kernel must come out whole and right.
TEST(CodegenElementwise, ExpAndLogisticAtEveryOptimizationLevel) {
  const std::string hlo =
      "HloModule m\nENTRY e {\n  p0 = f32[3000] parameter(0)\n  x = f32[3000] exponential(p0)\n"
      "  ROOT r = f32[3000] logistic(x)\n}\n";
  auto module = ParseHloModule(hlo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  Literal input = MakeInput(Shape(ElementType::kF32, {3000}), 21, -90.0, 5.0);
  AddFloatEdges(input);
  auto expected = RunInterpreter(**module, {input});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  for (int level = 0; level <= 3; ++level) {
    for (int64_t quick_limit : {int64_t{0}, int64_t{1} << 20}) {
      KernelCompilerOptions options;
      options.optimization_level = level;
      options.quick_tier_max_iterations = quick_limit;
      auto compiler = KernelCompiler::Create(options);
      ASSERT_TRUE(compiler.ok()) << compiler.status().ToString();
      KernelDescription request = DescribeKernel(*(*module)->entry(), "exp_logistic");
      auto compiled = (*compiler)->Compile(std::span<const KernelDescription>(&request, 1));
      ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
      ExpectNear((*expected)[0], RunCompiled(**compiled, **module, {input}, 3)[0],
                 "level " + std::to_string(level) + ", quick limit " + std::to_string(quick_limit));
    }
  }
}

TEST(CodegenElementwise, FastMathOverWideRanges) {
  for (const char* op : {"exponential", "logistic", "tanh", "erf"}) CheckUnary(op, {"f32"}, -120.0, 120.0);
  CheckUnary("log", {"f32"}, 0.0, 1e30);
  CheckUnary("log", {"f32"}, 0.0, 1e-30);
}

TEST(CodegenElementwise, IsFinite) {
  for (const std::string& type : kFloatTypes) {
    Literal input = MakeInput(ArrayShape(type, {7, 37}), 3);
    AddFloatEdges(input);
    CompareWithInterpreter(UnaryModule("is-finite", type, "pred"), {input}, "is-finite " + type);
  }
}

TEST(CodegenElementwise, IntegerBinaryOps) {
  for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and",
                         "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
    for (const std::string& type : kIntegerTypes) {
      Literal lhs = MakeInput(ArrayShape(type, {5, 41}), 5);
      Literal rhs = MakeInput(ArrayShape(type, {5, 41}), 6);
      CompareWithInterpreter(BinaryModule(op, type, type), {lhs, rhs}, std::string(op) + " " + type);
    }
  }
}

TEST(CodegenElementwise, IntegerPower) {
  for (const std::string& type : kIntegerTypes) {
    Literal lhs = MakeInput(ArrayShape(type, {5, 41}), 8);
    Literal rhs = MakeInput(ArrayShape(type, {5, 41}), 9);
    // Small exponents too, not only huge ones.
    DispatchElementType(rhs.shape().element_type(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        auto data = rhs.data<T>();
        for (size_t i = 0; i < data.size(); i += 2) data[i] = static_cast<T>(i % 9);
      }
      return 0;
    });
    CompareWithInterpreter(BinaryModule("power", type, type), {lhs, rhs}, "power " + type);
  }
}

TEST(CodegenElementwise, PredBinaryOps) {
  for (const char* op : {"and", "or", "xor", "maximum", "minimum"}) {
    Literal lhs = MakeInput(ArrayShape("pred", {5, 41}), 1);
    Literal rhs = MakeInput(ArrayShape("pred", {5, 41}), 2);
    CompareWithInterpreter(BinaryModule(op, "pred", "pred"), {lhs, rhs}, op);
  }
}

TEST(CodegenElementwise, FloatBinaryOps) {
  for (const char* op :
       {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2"}) {
    for (const std::string& type : kFloatTypes) {
      Literal lhs = MakeInput(ArrayShape(type, {5, 41}), 12);
      Literal rhs = MakeInput(ArrayShape(type, {5, 41}), 13);
      AddFloatEdges(lhs);
      CompareWithInterpreter(BinaryModule(op, type, type), {lhs, rhs}, std::string(op) + " " + type);
    }
  }
}

// Rows longer than one parallel iteration's block whose length is not a
// multiple of it: each row's full blocks run a loop of constant length and
// its last, shorter block a masked one (kernel_emitter.cc). A row vector is
// broadcast along them, for float and integer lanes of every width.
TEST(CodegenElementwise, RowsSplitIntoBlocksWithAShorterLast) {
  for (const std::string type : {"f32", "f64", "f16", "s32", "u8", "s64"}) {
    const bool floating = type[0] == 'f';
    const std::string op = floating ? "tanh" : "negate";
    const std::string hlo = "HloModule m\nENTRY e {\n  x = " + type +
                            "[3,40003] parameter(0)\n  v = " + type + "[40003] parameter(1)\n  vb = " + type +
                            "[3,40003] broadcast(v), dimensions={1}\n  s = " + type +
                            "[3,40003] add(x, vb)\n  ROOT r = " + type + "[3,40003] " + op + "(s)\n}\n";
    CompareWithInterpreter(
        hlo, {MakeInput(ArrayShape(type, {3, 40003}), 51), MakeInput(ArrayShape(type, {40003}), 52)},
        "blocked rows " + type);
  }
}

TEST(CodegenElementwise, CompareAllDirectionsAndTypes) {
  for (const std::string& type : AllTypes()) {
    for (const char* direction : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
      std::vector<std::string> kinds = {""};
      if (type[0] == 'f' || type == "bf16") kinds.push_back(", type=TOTALORDER");
      for (const std::string& kind : kinds) {
        const std::string hlo =
            "HloModule m\nENTRY e {\n  p0 = " + type + "[5,41] parameter(0)\n  p1 = " + type +
            "[5,41] parameter(1)\n  ROOT r = pred[5,41] compare(p0, p1), direction=" + direction + kind +
            "\n}\n";
        Literal lhs = MakeInput(ArrayShape(type, {5, 41}), 21);
        Literal rhs = MakeInput(ArrayShape(type, {5, 41}), 22);
        // Equal elements exercise EQ/GE/LE; edges exercise NaN and zeros.
        std::memcpy(rhs.raw().data(), lhs.raw().data(), lhs.raw().size() / 4);
        AddFloatEdges(lhs);
        CompareWithInterpreter(hlo, {lhs, rhs}, type + " " + direction + kind);
      }
    }
  }
}

TEST(CodegenElementwise, ConvertBetweenAllTypes) {
  for (const std::string& from : AllTypes()) {
    for (const std::string& to : AllTypes()) {
      Literal input = MakeInput(ArrayShape(from, {7, 37}), 31, -300.0, 300.0);
      AddFloatEdges(input);
      CompareWithInterpreter(UnaryModule("convert", from, to), {input}, "convert " + from + " -> " + to);
    }
  }
}

TEST(CodegenElementwise, BitcastConvertSameWidth) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"f32", "s32"}, {"s32", "f32"},  {"f64", "u64"},  {"u64", "f64"}, {"f16", "s16"},
      {"s16", "f16"}, {"bf16", "u16"}, {"u16", "bf16"}, {"s8", "u8"},   {"f16", "bf16"}};
  for (const auto& [from, to] : pairs) {
    Literal input = MakeInput(ArrayShape(from, {7, 37}), 41);
    AddFloatEdges(input);
    CompareWithInterpreter(UnaryModule("bitcast-convert", from, to), {input},
                           "bitcast " + from + " -> " + to);
  }
}

TEST(CodegenElementwise, SelectAndClamp) {
  for (const std::string& type : AllTypes()) {
    const std::string select = "HloModule m\nENTRY e {\n  p = pred[5,41] parameter(0)\n  a = " + type +
                               "[5,41] parameter(1)\n  b = " + type +
                               "[5,41] parameter(2)\n  ROOT r = " + type + "[5,41] select(p, a, b)\n}\n";
    CompareWithInterpreter(select,
                           {MakeInput(ArrayShape("pred", {5, 41}), 1),
                            MakeInput(ArrayShape(type, {5, 41}), 2), MakeInput(ArrayShape(type, {5, 41}), 3)},
                           "select " + type);
    if (type == "pred") continue;
    const std::string clamp = "HloModule m\nENTRY e {\n  lo = " + type + "[] parameter(0)\n  x = " + type +
                              "[5,41] parameter(1)\n  hi = " + type + "[] parameter(2)\n  ROOT r = " + type +
                              "[5,41] clamp(lo, x, hi)\n}\n";
    Literal low = MakeInput(ArrayShape(type, {}), 4, -2, -1);
    Literal high = MakeInput(ArrayShape(type, {}), 5, 1, 2);
    DispatchElementType(low.shape().element_type(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        low.data<T>()[0] = std::is_signed_v<T> ? static_cast<T>(-20) : T(3);
        high.data<T>()[0] = T(50);
      }
      return 0;
    });
    Literal x = MakeInput(ArrayShape(type, {5, 41}), 6);
    AddFloatEdges(x);
    CompareWithInterpreter(clamp, {low, x, high}, "clamp " + type);
  }
}

TEST(CodegenElementwise, ReducePrecision) {
  for (const std::string& type : kFloatTypes) {
    for (const auto& [exponent, mantissa] :
         std::vector<std::pair<int, int>>{{5, 10}, {8, 7}, {4, 3}, {8, 0}}) {
      const std::string hlo = "HloModule m\nENTRY e {\n  p0 = " + type +
                              "[7,37] parameter(0)\n  ROOT r = " + type +
                              "[7,37] reduce-precision(p0), exponent_bits=" + std::to_string(exponent) +
                              ", mantissa_bits=" + std::to_string(mantissa) + "\n}\n";
      Literal input = MakeInput(ArrayShape(type, {7, 37}), 51, -1e5, 1e5);
      AddFloatEdges(input);
      CompareWithInterpreter(hlo, {input}, "reduce-precision " + type);
    }
  }
}

// Low-precision results round to nearest even exactly as the interpreter's
// Eigen types do, so chains of ops agree bit for bit.
TEST(CodegenElementwise, LowPrecisionRoundingIsExact) {
  for (const std::string& type : {std::string("f16"), std::string("bf16")}) {
    const std::string hlo = "HloModule m\nENTRY e {\n  p0 = " + type + "[7,37] parameter(0)\n  p1 = " + type +
                            "[7,37] parameter(1)\n  m = " + type +
                            "[7,37] multiply(p0, p1)\n  ROOT r = " + type + "[7,37] add(m, p0)\n}\n";
    Literal a = MakeInput(ArrayShape(type, {7, 37}), 61);
    Literal b = MakeInput(ArrayShape(type, {7, 37}), 62);
    AddFloatEdges(a);
    auto module = ParseHloModule(hlo);
    ASSERT_TRUE(module.ok());
    auto expected = RunInterpreter(**module, {a, b});
    auto actual = RunKernel(**module, {a, b});
    ASSERT_TRUE(expected.ok() && actual.ok());
    EXPECT_TRUE((*expected)[0] == (*actual)[0]) << (*expected)[0].ToString() << "\n"
                                                << (*actual)[0].ToString();
  }
}

}  // namespace
}  // namespace kiln::cpu::testing
