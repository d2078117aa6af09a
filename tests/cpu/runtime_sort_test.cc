// sort on the CPU backend: the comparator is compiled and slices are sorted
// natively (a "sort" thunk, no library thunk), or a single-key comparator
// sorts by key (a "key_sort" thunk), with the interpreter's results, bit for
// bit. Long slices of the key path are checked against sort_model.h's model
// of the interpreter's sort, which the short cases check against the
// interpreter itself.
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/radix_sort.h"
#include "tests/cpu/runtime_test_util.h"
#include "tests/unit/sort_model.h"

namespace kiln::cpu {
namespace {

const CompiledProgram& ProgramOf(const Executable& executable) {
  return static_cast<const CpuExecutable&>(executable).program();
}

// Compiles `text`, expects one native sort and no library thunk, and runs it.
std::vector<Literal> RunNativeSort(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {};
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {};
  const auto& thunks = ProgramOf(**executable).statistics.thunks;
  const auto count = [&](const char* kind) { return thunks.count(kind) ? thunks.at(kind) : 0; };
  EXPECT_EQ(count("sort") + count("key_sort"), 1);
  EXPECT_EQ(thunks.count("library"), 0u);
  StatusOr<std::vector<Literal>> results = testing::RunOn(cpu, *module, arguments);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? std::move(results).value() : std::vector<Literal>{};
}

std::string Comparator(const std::string& type, const std::string& direction, int operands,
                       const std::string& compare_type = "") {
  std::string text = "cmp {\n";
  for (int i = 0; i < 2 * operands; ++i) {
    text += "  p" + std::to_string(i) + " = " + (i < 2 ? type : std::string("s32")) + "[] parameter(" +
            std::to_string(i) + ")\n";
  }
  text += "  ROOT c = pred[] compare(p0, p1), direction=" + direction +
          (compare_type.empty() ? "" : ", type=" + compare_type) + "\n}\n";
  return text;
}

TEST(RuntimeSortTest, SortsEachRowAscending) {
  const std::string text = "HloModule m\n" + Comparator("f32", "LT", 1) + R"(
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT s = f32[2,4] sort(x), dimensions={1}, to_apply=cmp
})";
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<float>({3, 1, 2, 0, -1, 5, -7, 4}, {2, 4})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], Literal::FromVector<float>({0, 1, 2, 3, -7, -1, 4, 5}, {2, 4}));
}

TEST(RuntimeSortTest, DescendingComparatorAlongDimensionZero) {
  const std::string text = "HloModule m\n" + Comparator("s32", "GT", 1) + R"(
ENTRY e {
  x = s32[3,2] parameter(0)
  ROOT s = s32[3,2] sort(x), dimensions={0}, to_apply=cmp
})";
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<int32_t>({1, 9, 7, 2, 4, 5}, {3, 2})});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], Literal::FromVector<int32_t>({7, 9, 4, 5, 1, 2}, {3, 2}));
}

TEST(RuntimeSortTest, StableSortKeepsEqualKeysInOrderAndMovesEveryOperand) {
  const std::string text = "HloModule m\n" + Comparator("s32", "LT", 2) + R"(
ENTRY e {
  k = s32[7] parameter(0)
  v = s32[7] parameter(1)
  ROOT s = (s32[7], s32[7]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
})";
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<int32_t>({2, 1, 2, 0, 1, 2, 0}),
                           Literal::FromVector<int32_t>({0, 1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], Literal::FromVector<int32_t>({0, 0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({3, 6, 1, 4, 0, 2, 5}));
}

TEST(RuntimeSortTest, TotalOrderPutsNegativeZeroFirstAndNanLast) {
  const std::string text = "HloModule m\n" + Comparator("f32", "LT", 1, "TOTALORDER") + R"(
ENTRY e {
  x = f32[6] parameter(0)
  ROOT s = f32[6] sort(x), dimensions={0}, to_apply=cmp
})";
  const float nan = std::nanf("");
  const std::vector<Literal> results =
      RunNativeSort(text, {Literal::FromVector<float>({nan, 0.0f, 1.0f, -0.0f, -INFINITY, -2.0f})});
  ASSERT_EQ(results.size(), 1u);
  const auto values = results[0].data<float>();
  EXPECT_EQ(values[0], -INFINITY);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_TRUE(values[2] == 0.0f && std::signbit(values[2]));
  EXPECT_TRUE(values[3] == 0.0f && !std::signbit(values[3]));
  EXPECT_EQ(values[4], 1.0f);
  EXPECT_TRUE(std::isnan(values[5]));
}

TEST(RuntimeSortTest, ComparatorOnSecondOperandAndMixedTypes) {
  // Sorts by the s32 values, carrying f16 keys along (unstable is allowed).
  const char* text = R"(HloModule m
cmp {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(c, d), direction=LT
}
ENTRY e {
  k = f16[5,3] parameter(0)
  v = s32[5,3] parameter(1)
  ROOT s = (f16[5,3], s32[5,3]) sort(k, v), dimensions={0}, to_apply=cmp
})";
  testing::ExpectMatchesInterpreter(text, 0);
}

TEST(RuntimeSortTest, ManyRowsSortedInParallelMatchTheInterpreter) {
  const std::string text = "HloModule m\n" + Comparator("f32", "LT", 1) + R"(
ENTRY e {
  x = f32[64,1000] parameter(0)
  ROOT s = f32[64,1000] sort(x), dimensions={1}, to_apply=cmp
})";
  testing::ExpectMatchesInterpreter(text, 0, 3);
}

TEST(RuntimeSortTest, ComplexKeysWithACompiledComparator) {
  // Complex operands sort natively too: the comparator (on real parts) is
  // compiled like any other, and ties keep the interpreter's order.
  const char* text = R"(HloModule m
cmp {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ra = f32[] real(a)
  rb = f32[] real(b)
  ROOT lt = pred[] compare(ra, rb), direction=LT
}
ENTRY e {
  x = c64[6] parameter(0)
  ROOT s = c64[6] sort(x), dimensions={0}, to_apply=cmp
})";
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  EXPECT_EQ(ProgramOf(*executable).statistics.thunks.count("sort"), 1u);
  testing::ExpectMatchesInterpreter(text, 0);
}

// --- The key path ------------------------------------------------------------

// How the key is compared: plainly, with TOTALORDER, or with TOTALORDER
// after jnp.sort's canonicalisation (NaN -> NaN, +-0 -> 0).
enum class KeyCompare { kPlain, kTotalOrder, kCanonical };

struct KeySortCase {
  std::string key_type;
  std::string direction = "LT";
  KeyCompare compare = KeyCompare::kPlain;
  std::vector<int64_t> dimensions = {1000};
  int64_t dimension = 0;
  bool key_second = false;  // the key is operand 1 (after an s32 iota)
  bool swapped = false;     // compare(rhs element, lhs element)
  bool passengers = true;   // an s32 iota and an f64 operand ride along
  std::string stable = "true";
};

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dimensions) {
  std::string text = type + "[";
  for (size_t i = 0; i < dimensions.size(); ++i) text += (i ? "," : "") + std::to_string(dimensions[i]);
  return text + "]";
}

// The sort's operand element types, in order: the key, an s32 iota (a
// parameter otherwise) and an f64 parameter.
std::vector<std::string> KeySortOperandTypes(const KeySortCase& c) {
  std::vector<std::string> types;
  if (c.key_second)
    types = {"s32", c.key_type};
  else if (c.passengers)
    types = {c.key_type, "s32", "f64"};
  else
    types = {c.key_type};
  if (c.key_second && c.passengers) types.push_back("f64");
  return types;
}

// The module of one sort as JAX would write it; its root is the sort's tuple.
std::string KeySortModule(const KeySortCase& c) {
  const std::vector<std::string> types = KeySortOperandTypes(c);
  const int key = c.key_second ? 1 : 0;
  std::string text = "HloModule m\ncmp {\n";
  for (size_t i = 0; i < 2 * types.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + types[i / 2] + "[] parameter(" + std::to_string(i) + ")\n";
  }
  std::string lhs = "p" + std::to_string(2 * key), rhs = "p" + std::to_string(2 * key + 1);
  if (c.compare == KeyCompare::kCanonical) {
    const std::string& k = c.key_type;
    text += "  nan = " + k + "[] constant(nan)\n  zero = " + k + "[] constant(0)\n";
    for (std::string* side : {&lhs, &rhs}) {
      const std::string p = *side;
      text += "  ne" + p + " = pred[] compare(" + p + ", " + p + "), direction=NE\n";
      text += "  eq" + p + " = pred[] compare(" + p + ", zero), direction=EQ\n";
      text += "  z" + p + " = " + k + "[] select(eq" + p + ", zero, " + p + ")\n";
      text += "  c" + p + " = " + k + "[] select(ne" + p + ", nan, z" + p + ")\n";
      *side = "c" + p;
    }
  }
  if (c.swapped) std::swap(lhs, rhs);
  text += "  ROOT lt = pred[] compare(" + lhs + ", " + rhs + "), direction=" + c.direction +
          (c.compare == KeyCompare::kPlain ? "" : ", type=TOTALORDER") + "\n}\n";
  text += "ENTRY e {\n";
  std::vector<std::string> names;
  int parameter = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    if (types[i] == "s32") {
      text += "  " + name + " = " + ShapeText("s32", c.dimensions) +
              " iota(), iota_dimension=" + std::to_string(c.dimension) + "\n";
    } else {
      text += "  " + name + " = " + ShapeText(types[i], c.dimensions) + " parameter(" +
              std::to_string(parameter++) + ")\n";
    }
    names.push_back(name);
  }
  std::string tuple = "(", operands;
  for (size_t i = 0; i < types.size(); ++i) {
    tuple += (i ? ", " : "") + ShapeText(types[i], c.dimensions);
    operands += (i ? ", " : "") + names[i];
  }
  tuple = types.size() == 1 ? ShapeText(types[0], c.dimensions) : tuple + ")";
  text += "  ROOT s = " + tuple + " sort(" + operands + "), dimensions={" + std::to_string(c.dimension) +
          "}, is_stable=" + c.stable + ", to_apply=cmp\n}\n";
  return text;
}

// Bit patterns with many ties and, for floats, NaNs of both signs and
// several payloads, signed zeros, infinities and the extremes.
template <typename Bits>
std::vector<Bits> SpecialBits(ElementType type) {
  std::vector<uint64_t> bits;
  switch (type) {
    case ElementType::kF16:
      bits = {0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001};
      break;
    case ElementType::kBF16:
      bits = {0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x7F7F, 0xFF7F, 0x0001, 0x8001};
      break;
    case ElementType::kF32:
      bits = {0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800123, 0x00000000, 0x80000000,
              0x7F800000, 0xFF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001};
      break;
    case ElementType::kF64:
      bits = {0x7FF8000000000000ull,
              0xFFF8000000000000ull,
              0x7FF0000000000001ull,
              0xFFF0000000012345ull,
              0,
              0x8000000000000000ull,
              0x7FF0000000000000ull,
              0xFFF0000000000000ull,
              0x7FEFFFFFFFFFFFFFull,
              0x0000000000000001ull};
      break;
    default: {
      // Integers: 0, -1 / max, the extremes.
      const uint64_t top = uint64_t{1} << (sizeof(Bits) * 8 - 1);
      bits = {0, ~uint64_t{0}, top, top - 1, 1};
    }
  }
  std::vector<Bits> result;
  for (uint64_t b : bits) result.push_back(static_cast<Bits>(b));
  return result;
}

// A float type's bit pattern of a small integer (ties galore), by converting.
template <typename Bits>
Bits SmallValueBits(ElementType type, int value) {
  uint64_t bits = 0;  // little-endian: the low bytes are the value
  switch (type) {
    case ElementType::kF16: {
      const half h(static_cast<float>(value));
      std::memcpy(&bits, &h, 2);
      break;
    }
    case ElementType::kBF16: {
      const bfloat16 b(static_cast<float>(value));
      std::memcpy(&bits, &b, 2);
      break;
    }
    case ElementType::kF32: {
      const auto f = static_cast<float>(value) * 0.25f;
      std::memcpy(&bits, &f, 4);
      break;
    }
    case ElementType::kF64: {
      const double d = value * 0.125;
      std::memcpy(&bits, &d, 8);
      break;
    }
    default: bits = static_cast<uint64_t>(static_cast<int64_t>(value)); break;
  }
  return static_cast<Bits>(bits);
}

template <typename Bits>
void FillKeys(Literal& literal, ElementType type, bool specials, uint64_t seed) {
  std::mt19937_64 random(seed);
  const std::vector<Bits> special = SpecialBits<Bits>(type);
  auto bytes = literal.data<uint8_t>();
  const size_t n = bytes.size() / sizeof(Bits);
  for (size_t i = 0; i < n; ++i) {
    Bits bits;
    if (specials && random() % 4 == 0) {
      bits = special[random() % special.size()];
    } else {
      bits = SmallValueBits<Bits>(type, static_cast<int>(random() % 41) - 20);
    }
    std::memcpy(bytes.data() + i * sizeof(Bits), &bits, sizeof(Bits));
  }
}

std::vector<Literal> KeySortArguments(const Module& module, ElementType key_type, bool specials,
                                      uint64_t seed) {
  std::vector<Literal> arguments;
  for (const Instruction* parameter : module.entry()->parameters()) {
    Literal literal(parameter->shape);
    const ElementType type = parameter->shape.element_type();
    if (type == ElementType::kF64 && key_type != ElementType::kF64) {
      auto values = literal.data<double>();
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) + 0.5;
    } else {
      switch (ByteWidth(type)) {
        case 1: FillKeys<uint8_t>(literal, type, specials, seed); break;
        case 2: FillKeys<uint16_t>(literal, type, specials, seed); break;
        case 4: FillKeys<uint32_t>(literal, type, specials, seed); break;
        default: FillKeys<uint64_t>(literal, type, specials, seed); break;
      }
    }
    arguments.push_back(std::move(literal));
  }
  return arguments;
}

// The interpreter's results of `text` on `arguments`.
std::vector<Literal> InterpreterSortResults(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {};
  interpreter::InterpreterBackend reference;
  StatusOr<std::vector<Literal>> results = testing::RunOn(reference, *module, arguments);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? std::move(results).value() : std::vector<Literal>{};
}

// Compiles the case, expects `kind` ("key_sort" or "sort") as its one sort
// thunk, and compares every result with `want` bit for bit, on 1, 2 and 3
// intra-op threads.
void ExpectSortTextGives(const std::string& text, const std::vector<Literal>& arguments,
                         const std::vector<Literal>& want, const std::string& kind) {
  SCOPED_TRACE(text.size() > 2000 ? text.substr(text.size() - 400) : text);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  ASSERT_FALSE(want.empty());
  for (int threads : {1, 2, 3}) {
    CpuBackend cpu;
    CompileOptions options;
    options.num_threads = threads;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
    const auto& thunks = ProgramOf(*executable).statistics.thunks;
    EXPECT_EQ(thunks.count(kind) ? thunks.at(kind) : 0, 1) << kind;
    EXPECT_EQ(thunks.count("library"), 0u);
    std::vector<std::unique_ptr<DeviceBuffer>> owned;
    std::vector<DeviceBuffer*> buffers;
    for (const Literal& argument : arguments) {
      KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> buffer,
                                cpu.BufferFromLiteral(argument, cpu.devices()[0]));
      buffers.push_back(buffer.get());
      owned.push_back(std::move(buffer));
    }
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                              executable->Execute(buffers, ExecuteOptions{}));
    ASSERT_EQ(results.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) {
      KILN_ASSERT_OK_AND_ASSIGN(Literal got, results[r]->ToLiteral());
      EXPECT_TRUE(got == want[r]) << threads << " threads, result " << r;
    }
  }
}

// The same with the interpreter's results.
void ExpectSortTextMatchesInterpreter(const std::string& text, const std::vector<Literal>& arguments,
                                      const std::string& kind = "key_sort") {
  ExpectSortTextGives(text, arguments, InterpreterSortResults(text, arguments), kind);
}

// The model's results (tests/unit/sort_model.h) for the case's module on
// `arguments`: its s32 operands are iotas along the sorted dimension, the
// others the arguments in order.
std::vector<Literal> KeySortModelResults(const KeySortCase& c, const std::vector<Literal>& arguments) {
  std::vector<Literal> operands;
  size_t argument = 0;
  for (const std::string& type : KeySortOperandTypes(c)) {
    if (type != "s32") {
      operands.push_back(arguments[argument++]);
      continue;
    }
    Literal iota(Shape(ElementType::kS32, c.dimensions));
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(c.dimension) + 1; d < c.dimensions.size(); ++d)
      inner *= c.dimensions[d];
    const int64_t length = c.dimensions[static_cast<size_t>(c.dimension)];
    auto values = iota.data<int32_t>();
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<int32_t>(static_cast<int64_t>(i) / inner % length);
    operands.push_back(std::move(iota));
  }
  using Order = kiln::testing::SortModelComparator::Order;
  kiln::testing::SortModelComparator comparator;
  comparator.key_operand = c.key_second ? 1 : 0;
  comparator.order = c.compare == KeyCompare::kPlain        ? Order::kPlain
                     : c.compare == KeyCompare::kTotalOrder ? Order::kTotalOrder
                                                            : Order::kCanonical;
  comparator.descending = c.direction == "GT";
  comparator.swapped = c.swapped;
  return kiln::testing::SortLikeTheInterpreter(operands, c.dimension, comparator);
}

// Up to this many elements a case is checked against the interpreter itself,
// and the model against it too (each configuration the long cases use has a
// case this short); above it the interpreter's comparator calls cost seconds
// to minutes under the sanitizers, and the model is the reference.
constexpr int64_t kSortInterpreterElements = 256;

void ExpectKeySortArgumentsMatchInterpreter(const KeySortCase& c, const std::vector<Literal>& arguments,
                                            const std::string& kind = "key_sort") {
  const std::string text = KeySortModule(c);
  std::vector<Literal> model = KeySortModelResults(c, arguments);
  int64_t elements = 1;
  for (int64_t d : c.dimensions) elements *= d;
  if (elements <= kSortInterpreterElements) {
    SCOPED_TRACE(text);
    std::vector<Literal> want = InterpreterSortResults(text, arguments);
    ASSERT_EQ(model.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) EXPECT_TRUE(model[r] == want[r]) << "the model's result " << r;
    ExpectSortTextGives(text, arguments, want, kind);
  } else {
    ExpectSortTextGives(text, arguments, model, kind);
  }
}

// The same on keys FillKeys makes (with `specials`: NaNs of both signs,
// signed zeros, infinities, extremes; always many ties).
void ExpectKeySortMatchesInterpreter(const KeySortCase& c, const std::string& kind = "key_sort",
                                     bool specials = true) {
  std::unique_ptr<Module> module = testing::ParseOrDie(KeySortModule(c));
  ASSERT_NE(module, nullptr);
  const ElementType key_type = *ElementTypeFromName(c.key_type);
  ExpectKeySortArgumentsMatchInterpreter(c, KeySortArguments(*module, key_type, specials, 7), kind);
}

const char* const kKeyTypes[] = {"f16", "bf16", "f32", "f64", "s8",  "s16",
                                 "s32", "s64",  "u8",  "u16", "u32", "u64"};

TEST(RuntimeKeySortTest, EveryKeyTypeAscendingAndDescendingMatchesTheInterpreter) {
  for (const char* type : kKeyTypes) {
    for (const char* direction : {"LT", "GT"}) {
      KeySortCase c{type, direction};
      ExpectKeySortMatchesInterpreter(c);
      c.dimensions = {57};  // a short slice (the comparison sort)
      ExpectKeySortMatchesInterpreter(c);
    }
  }
}

TEST(RuntimeKeySortTest, FloatTotalOrdersPlaceNansAndSignedZerosAsTheInterpreter) {
  for (const char* type : {"f16", "bf16", "f32", "f64"}) {
    for (const KeyCompare compare : {KeyCompare::kTotalOrder, KeyCompare::kCanonical}) {
      for (const char* direction : {"LT", "GT"}) {
        KeySortCase c{type, direction, compare};
        ExpectKeySortMatchesInterpreter(c);
        c.dimensions = {40};
        ExpectKeySortMatchesInterpreter(c);
      }
    }
  }
}

TEST(RuntimeKeySortTest, PlainFloatCompareWithoutNansSortsByKey) {
  // -0 and +0 tie under the partial order; with NaNs the slice falls back to
  // the comparator (covered by the other cases, which have NaNs).
  for (const char* type : {"f16", "bf16", "f32", "f64"}) {
    KeySortCase c{type, "LT"};
    c.dimensions = {4, 300};
    c.dimension = 1;
    ExpectKeySortMatchesInterpreter(c, "key_sort", /*specials=*/false);
  }
}

TEST(RuntimeKeySortTest, BatchedAlongEachDimensionAndAcrossThreads) {
  for (const KeyCompare compare : {KeyCompare::kPlain, KeyCompare::kCanonical}) {
    KeySortCase c{"f32", "LT", compare};
    c.dimensions = {70, 300};
    c.dimension = 1;
    ExpectKeySortMatchesInterpreter(c);
    c.dimension = 0;
    ExpectKeySortMatchesInterpreter(c);
    c.dimensions = {3, 200, 5};
    c.dimension = 1;
    ExpectKeySortMatchesInterpreter(c);
  }
  KeySortCase rows{"s32", "GT"};
  rows.dimensions = {200, 100};
  rows.dimension = 1;
  ExpectKeySortMatchesInterpreter(rows);
}

TEST(RuntimeKeySortTest, KeyAfterPassengersSwappedOperandsAndUnstableSorts) {
  KeySortCase c{"f32", "LT", KeyCompare::kCanonical};
  c.key_second = true;
  ExpectKeySortMatchesInterpreter(c);
  c.swapped = true;  // compare(rhs, lhs) LT: descending
  ExpectKeySortMatchesInterpreter(c);
  KeySortCase d{"u16", "GT"};
  d.swapped = true;
  d.stable = "false";
  ExpectKeySortMatchesInterpreter(d);
  KeySortCase alone{"s64", "LT"};
  alone.passengers = false;
  alone.dimensions = {5000};
  ExpectKeySortMatchesInterpreter(alone);
}

TEST(RuntimeKeySortTest, TheModelSortsAsTheInterpreter) {
  // The configurations only the long cases have, short enough that the
  // interpreter checks the model (sort_model.h) as well as the CPU: the key
  // after an iota, with the compare's operands swapped, an unstable sort,
  // the middle dimension of three and the first of two.
  KeySortCase key_second{"f32", "LT", KeyCompare::kCanonical};
  key_second.key_second = true;
  key_second.dimensions = {200};
  ExpectKeySortMatchesInterpreter(key_second);
  key_second.swapped = true;
  ExpectKeySortMatchesInterpreter(key_second);
  KeySortCase unstable{"u16", "GT"};
  unstable.swapped = true;
  unstable.stable = "false";
  unstable.dimensions = {200};
  ExpectKeySortMatchesInterpreter(unstable);
  for (const KeyCompare compare : {KeyCompare::kPlain, KeyCompare::kCanonical}) {
    KeySortCase middle{"f32", "LT", compare};
    middle.dimensions = {3, 20, 4};
    middle.dimension = 1;
    ExpectKeySortMatchesInterpreter(middle);
    KeySortCase first{"f32", "LT", compare};
    first.dimensions = {50, 5};
    first.dimension = 0;
    ExpectKeySortMatchesInterpreter(first);
  }
}

TEST(RuntimeKeySortTest, LargeSlicesOfEveryWidthMatchTheInterpreter) {
  // 1-D slices of 64Ki elements and more spread their passes over the
  // threads; 2-byte keys past 64Ki positions take 64-bit (key, position)
  // words instead of 32-bit ones.
  for (const char* type : {"u16", "s64", "f64"}) {
    KeySortCase c{type, "GT"};
    c.dimensions = {70000};
    ExpectKeySortMatchesInterpreter(c);
  }
  KeySortCase canonical{"f32", "LT", KeyCompare::kCanonical};
  canonical.dimensions = {70000};
  ExpectKeySortMatchesInterpreter(canonical);
  KeySortCase total{"bf16", "LT", KeyCompare::kTotalOrder};
  total.dimensions = {2, 66000};
  total.dimension = 1;
  ExpectKeySortMatchesInterpreter(total);
}

// --- Every key type: Highway's vectorised quicksort ------------------------------

TEST(RuntimeVectorKeySortTest, EveryLengthDirectionAndOrderMatchesTheInterpreter) {
  // Rows of 1, 2, 17, 1024 and 1025 keys of every type (several rows, so
  // slices run in parallel too), alone (the keys are sorted and decoded;
  // 1-byte keys widened to 2) or with passengers ((key, position) words of
  // 32 bits for 1- and 2-byte keys, 64 for 4-byte, 128 for 8-byte), stable
  // and not, on keys with NaNs of both signs, signed zeros and many ties.
  for (const char* type : kKeyTypes) {
    const bool is_float = type[0] == 'f' || type[0] == 'b';
    const std::vector<KeyCompare> compares =
        is_float ? std::vector<KeyCompare>{KeyCompare::kTotalOrder, KeyCompare::kCanonical}
                 : std::vector<KeyCompare>{KeyCompare::kPlain};
    for (const KeyCompare compare : compares) {
      for (const char* direction : {"LT", "GT"}) {
        for (const bool passengers : {false, true}) {
          for (const int64_t length : {1, 2, 17, 1024, 1025}) {
            KeySortCase c{type, direction, compare};
            c.dimensions = {3, length};
            c.dimension = 1;
            c.passengers = passengers;
            c.stable = length == 17 ? "false" : "true";
            ExpectKeySortMatchesInterpreter(c);
          }
        }
      }
    }
  }
}

TEST(RuntimeVectorKeySortTest, StridedSlicesOfEveryKeyTypeMatchTheInterpreter) {
  // Sorting along the first dimension: each slice's elements lie `inner`
  // apart, gathered into the thread's buffer and written back strided.
  for (const char* type : kKeyTypes) {
    const bool is_float = type[0] == 'f' || type[0] == 'b';
    for (const bool passengers : {false, true}) {
      for (const int64_t length : {17, 1025}) {
        KeySortCase c{type, "GT", is_float ? KeyCompare::kCanonical : KeyCompare::kPlain};
        c.dimensions = {length, 3};
        c.dimension = 0;
        c.passengers = passengers;
        ExpectKeySortMatchesInterpreter(c);
      }
    }
  }
}

// Keys with +0 and -0 and no NaN, in a row of `n` (the partial float order
// ties the zeros: they keep their order, as in a stable sort).
template <typename Float>
Literal SignedZeroKeys(const std::string& type, int64_t n) {
  std::vector<Float> values;
  std::mt19937 random(3);
  for (int64_t i = 0; i < n; ++i) {
    switch (random() % 4) {
      case 0: values.push_back(Float(0)); break;
      case 1: values.push_back(-Float(0)); break;
      default: values.push_back(static_cast<Float>(static_cast<int>(random() % 9) - 4)); break;
    }
  }
  Literal literal = Literal::FromVector<Float>(values, {n});
  EXPECT_EQ(literal.shape().element_type(), *ElementTypeFromName(type));
  return literal;
}

TEST(RuntimeVectorKeySortTest, PlainFloatCompareKeepsSignedZerosInTheirOrder) {
  for (const char* type : {"f32", "f64"}) {
    for (const char* direction : {"LT", "GT"}) {
      for (const int64_t n : {17, 1024, 70000}) {
        KeySortCase c{type, direction};
        c.dimensions = {n};
        c.passengers = false;
        const bool f32 = std::string(type) == "f32";
        std::vector<Literal> arguments;
        arguments.push_back(f32 ? SignedZeroKeys<float>(type, n) : SignedZeroKeys<double>(type, n));
        ExpectKeySortArgumentsMatchInterpreter(c, arguments);
      }
    }
  }
}

TEST(RuntimeVectorKeySortTest, LongSlicesMatchTheInterpreter) {
  // One long slice as jnp.sort exports it, and a long argsort (positions
  // gathered over the threads): past 64Ki keys, 4-byte keys alone and
  // 4-byte keys with positions are split into one part per thread before
  // they are sorted. The lengths stay short because the interpreter's
  // comparator sort, the reference, takes about 25 s for 1 << 20 keys (and
  // many times that under the sanitizers).
  KeySortCase sort{"f32", "LT", KeyCompare::kCanonical};
  sort.dimensions = {(1 << 17) + 3};
  sort.passengers = false;
  ExpectKeySortMatchesInterpreter(sort);
  KeySortCase argsort{"f32", "GT", KeyCompare::kCanonical};
  argsort.dimensions = {1 << 16};
  ExpectKeySortMatchesInterpreter(argsort);
  KeySortCase wide{"s64", "LT"};
  wide.dimensions = {70000};
  ExpectKeySortMatchesInterpreter(wide);
  wide.passengers = false;
  ExpectKeySortMatchesInterpreter(wide);
}

// A long slice of `n` keys holding only `values` distinct values (one
// value: nothing to split around).
Literal FewValueKeys(int64_t n, int values) {
  std::vector<uint32_t> keys;
  std::mt19937 random(5);
  for (int64_t i = 0; i < n; ++i) keys.push_back(values == 1 ? 7u : static_cast<uint32_t>(random() % values));
  return Literal::FromVector<uint32_t>(keys, {n});
}

TEST(RuntimeVectorKeySortTest, LongSlicesOfFewValuesSplitOverThreadsMatchTheInterpreter) {
  // A long slice is split around sampled keys into one part per thread;
  // with one value nothing splits, with two the split falls below the
  // pivot, alone and with passengers (1, 2 and 3 threads).
  for (const int values : {1, 2, 3}) {
    for (const bool passengers : {false, true}) {
      KeySortCase c{"u32", "LT"};
      c.dimensions = {70000};
      c.passengers = passengers;
      std::unique_ptr<Module> module = testing::ParseOrDie(KeySortModule(c));
      ASSERT_NE(module, nullptr);
      std::vector<Literal> arguments = KeySortArguments(*module, ElementType::kU32, false, 11);
      arguments[0] = FewValueKeys(70000, values);
      ExpectKeySortArgumentsMatchInterpreter(c, arguments);
    }
  }
}

TEST(RuntimeVectorKeySortTest, SlicesOfFourByteWordsAroundTheRadixThresholdMatchTheInterpreter) {
  // 4-byte keys alone, and 1- and 2-byte keys with positions in 32-bit
  // words, take the radix sort from kRadixSortMinKeys on: just below and
  // above it, in rows sorted in parallel and in one long slice over the
  // threads, ascending and descending, with NaNs of both signs, signed zeros
  // and ties (the plain float order on them falls back to the comparator),
  // strided and contiguous.
  const int64_t threshold = static_cast<int64_t>(kRadixSortMinKeys);
  struct TypeAndCompare {
    const char* type;
    KeyCompare compare;
    bool passengers;
  };
  const TypeAndCompare cases[] = {
      {"f32", KeyCompare::kTotalOrder, false}, {"f32", KeyCompare::kCanonical, false},
      {"f32", KeyCompare::kPlain, false},      {"s32", KeyCompare::kPlain, false},
      {"u32", KeyCompare::kPlain, false},      {"s8", KeyCompare::kPlain, true},
      {"u16", KeyCompare::kPlain, true},       {"bf16", KeyCompare::kTotalOrder, true}};
  for (const TypeAndCompare& t : cases) {
    for (const char* direction : {"LT", "GT"}) {
      for (const std::vector<int64_t>& dimensions :
           {std::vector<int64_t>{2, threshold - 1}, std::vector<int64_t>{3, threshold + 1},
            std::vector<int64_t>{4 * threshold + 3}}) {
        KeySortCase c{t.type, direction, t.compare};
        c.dimensions = dimensions;
        c.dimension = static_cast<int64_t>(dimensions.size()) - 1;
        c.passengers = t.passengers;
        SCOPED_TRACE(std::string(t.type) + " " + direction + " " + std::to_string(dimensions.back()));
        ExpectKeySortMatchesInterpreter(c);
      }
    }
  }
  KeySortCase strided{"u32", "GT"};
  strided.dimensions = {threshold + 5, 2};
  strided.dimension = 0;
  strided.passengers = false;
  ExpectKeySortMatchesInterpreter(strided);
}

// The arena bytes of `c`'s module compiled for the cpu.
int64_t KeySortArenaBytes(const KeySortCase& c) {
  std::unique_ptr<Module> module = testing::ParseOrDie(KeySortModule(c));
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return -1;
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  return executable.ok() ? ProgramOf(**executable).arena_bytes : -1;
}

TEST(RuntimeVectorKeySortTest, TheRadixSortOfALongSliceTakesAnArenaSlot) {
  // A sort of 4-byte words from kRadixSortMinKeys on takes its scratch from
  // the arena (pooled between runs), 4 bytes per key; shorter slices and
  // 8-byte words (an f32 argsort) take none.
  const int64_t threshold = static_cast<int64_t>(kRadixSortMinKeys);
  KeySortCase lone{"f32", "LT", KeyCompare::kTotalOrder};
  lone.passengers = false;
  lone.dimensions = {threshold};
  EXPECT_EQ(KeySortArenaBytes(lone), 4 * threshold);
  lone.dimensions = {threshold - 1};
  EXPECT_EQ(KeySortArenaBytes(lone), 0);
  KeySortCase s8_argsort{"s8", "GT"};
  s8_argsort.key_second = true;
  s8_argsort.passengers = false;
  s8_argsort.dimensions = {3 * threshold};
  const int64_t s8_bytes = KeySortArenaBytes(s8_argsort);
  s8_argsort.key_type = "f32";
  const int64_t f32_bytes = KeySortArenaBytes(s8_argsort);
  EXPECT_EQ(s8_bytes - f32_bytes, 4 * 3 * threshold) << s8_bytes << " and " << f32_bytes << " arena bytes";
}

// Kernel thunks and kernel descriptions (compiled kernels) of `text`.
std::pair<int64_t, size_t> KernelsOf(const std::string& text) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {-1, 0};
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {-1, 0};
  const CompiledProgram& program = ProgramOf(**executable);
  const auto found = program.statistics.thunks.find("kernel");
  return {found == program.statistics.thunks.end() ? 0 : found->second, program.kernel_descriptions.size()};
}

TEST(RuntimeVectorKeySortTest, PassengersThatHoldTheirPositionsOrNearlyMatchTheInterpreter) {
  // Passengers are written from the sorted positions when their slice holds
  // 0, 1, ... n - 1 (4- and 8-byte, along the sorted dimension), gathered
  // otherwise: an iota along the other dimension, and positions with one
  // element changed. The keys are decoded from the sorted words unless tied
  // keys hold other bits (-0 beside +0 here, under the plain float order).
  const char* text = R"(HloModule m
cmp {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  p4 = u64[] parameter(4)
  p5 = u64[] parameter(5)
  p6 = s32[] parameter(6)
  p7 = s32[] parameter(7)
  ROOT lt = pred[] compare(p0, p1), direction=GT
}
ENTRY e {
  k = f32[3,1025] parameter(0)
  near = s32[3,1025] parameter(1)
  positions = u64[3,1025] iota(), iota_dimension=1
  rows = s32[3,1025] iota(), iota_dimension=0
  ROOT s = (f32[3,1025], s32[3,1025], u64[3,1025], s32[3,1025]) sort(k, near, positions, rows), dimensions={1}, is_stable=true, to_apply=cmp
})";
  // The u64 positions along the sorted dimension are written by the sort;
  // the s32 iota along the other one is a kernel (compiled beside the
  // comparator, which slices with NaNs need under the partial order).
  EXPECT_EQ(KernelsOf(text), (std::pair<int64_t, size_t>{1, 2}));
  for (const bool signed_zeros : {false, true}) {
    std::vector<float> keys;
    std::vector<int32_t> near;
    std::mt19937 random(9);
    for (int row = 0; row < 3; ++row) {
      for (int p = 0; p < 1025; ++p) {
        const auto value = static_cast<float>(static_cast<int>(random() % 31) - 15);
        keys.push_back(signed_zeros && value == 0 && random() % 2 == 0 ? -0.0f : value);
        near.push_back(row == 1 && p == 700 ? 3 : p);
      }
    }
    std::vector<Literal> arguments;
    arguments.push_back(Literal::FromVector<float>(keys, {3, 1025}));
    arguments.push_back(Literal::FromVector<int32_t>(near, {3, 1025}));
    ExpectSortTextMatchesInterpreter(text, arguments);
  }
}

// The comparator jnp.argsort exports for f32 keys and s32 positions:
// NaNs and -0.0 canonicalised, then a total-order less-than.
constexpr char kJaxArgsortComparator[] = R"(region_0.1 {
  sort.6 = s32[] parameter(2)
  sort.7 = s32[] parameter(3)
  sort.4 = f32[] parameter(0)
  ne.2 = pred[] compare(sort.4, sort.4), direction=NE
  constant.2 = f32[] constant(nan)
  constant.3 = f32[] constant(0)
  eq.2 = pred[] compare(sort.4, constant.3), direction=EQ
  select_n.4 = f32[] select(eq.2, constant.3, sort.4)
  select_n.5 = f32[] select(ne.2, constant.2, select_n.4)
  sort.5 = f32[] parameter(1)
  ne.3 = pred[] compare(sort.5, sort.5), direction=NE
  eq.3 = pred[] compare(sort.5, constant.3), direction=EQ
  select_n.6 = f32[] select(eq.3, constant.3, sort.5)
  select_n.7 = f32[] select(ne.3, constant.2, select_n.6)
  ROOT lt_to.1 = pred[] compare(select_n.5, select_n.7), direction=LT, type=TOTALORDER
}
)";

TEST(RuntimeKeySortTest, ArgsortAsJaxExportsItUsesTheKeyPath) {
  const std::string text = std::string("HloModule m\n") + kJaxArgsortComparator + R"(ENTRY main.3 {
  x.1 = f32[4096]{0} parameter(0)
  iota.1 = s32[4096]{0} iota(), iota_dimension=0
  sort.11 = (f32[4096]{0}, s32[4096]{0}) sort(x.1, iota.1), dimensions={0}, is_stable=true, to_apply=region_0.1
  ROOT sort.13 = s32[4096]{0} get-tuple-element(sort.11), index=1
})";
  EXPECT_EQ(testing::CountThunks(text, "key_sort"), 1);
  EXPECT_EQ(testing::CountThunks(text, "sort"), 0);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 3}, 0);
}

// --- Argsort's positions: written by the sort, computed by no kernel -----------

// An argsort with a passenger: keys of `key_type` (parameter 0), an s32
// iota along the sorted dimension and f64 values (parameter 1), compared
// as `compare` says. (KeySortModule makes every s32 operand an iota, an
// s32 key too.)
std::string ArgsortModule(const std::string& key_type, KeyCompare compare, const std::string& direction,
                          const std::vector<int64_t>& dimensions, int64_t dimension) {
  const std::string& k = key_type;
  std::string text = "HloModule m\ncmp {\n  a = " + k + "[] parameter(0)\n  b = " + k +
                     "[] parameter(1)\n  p2 = s32[] parameter(2)\n  p3 = s32[] parameter(3)\n"
                     "  p4 = f64[] parameter(4)\n  p5 = f64[] parameter(5)\n";
  std::string lhs = "a", rhs = "b";
  if (compare == KeyCompare::kCanonical) {
    text += "  nan = " + k + "[] constant(nan)\n  zero = " + k + "[] constant(0)\n";
    for (std::string* side : {&lhs, &rhs}) {
      const std::string p = *side;
      text += "  ne" + p + " = pred[] compare(" + p + ", " + p + "), direction=NE\n";
      text += "  eq" + p + " = pred[] compare(" + p + ", zero), direction=EQ\n";
      text += "  z" + p + " = " + k + "[] select(eq" + p + ", zero, " + p + ")\n";
      text += "  c" + p + " = " + k + "[] select(ne" + p + ", nan, z" + p + ")\n";
      *side = "c" + p;
    }
  }
  text += "  ROOT lt = pred[] compare(" + lhs + ", " + rhs + "), direction=" + direction +
          (compare == KeyCompare::kPlain ? "" : ", type=TOTALORDER") + "\n}\n";
  const std::string keys = ShapeText(k, dimensions), positions = ShapeText("s32", dimensions),
                    values = ShapeText("f64", dimensions), along = std::to_string(dimension);
  return text + "ENTRY e {\n  k = " + keys + " parameter(0)\n  i = " + positions +
         " iota(), iota_dimension=" + along + "\n  v = " + values + " parameter(1)\n  ROOT s = (" + keys +
         ", " + positions + ", " + values + ") sort(k, i, v), dimensions={" + along +
         "}, is_stable=true, to_apply=cmp\n}\n";
}

TEST(RuntimeKeySortTest, ArgsortPositionsAreWrittenByTheSortWithoutAnIotaKernel) {
  // The s32 iota beside the keys (and an f64 passenger) is no kernel: the
  // sort writes the sorted positions itself, 1-D, along rows, along the
  // first and a middle dimension (strided slices), both directions, keys
  // with many ties (a stable sort keeps their positions in order) and
  // NaNs, signed zeros, infinities and extremes. Under the partial float
  // order the slices with NaNs are sorted by the comparator, which reads
  // the iota: the sort writes it first (its comparator is then the one
  // kernel compiled).
  struct Geometry {
    std::vector<int64_t> dimensions;
    int64_t dimension;
  };
  const Geometry geometries[] = {{{1000}, 0}, {{6, 300}, 1}, {{300, 6}, 0}, {{3, 40, 5}, 1}};
  uint64_t seed = 1;
  for (const char* type : {"f32", "bf16", "s32"}) {
    const bool is_float = type[0] != 's';
    std::vector<KeyCompare> compares = {is_float ? KeyCompare::kCanonical : KeyCompare::kPlain};
    if (is_float) compares.push_back(KeyCompare::kPlain);
    for (const KeyCompare compare : compares) {
      for (const char* direction : {"LT", "GT"}) {
        for (const Geometry& geometry : geometries) {
          const std::string text =
              ArgsortModule(type, compare, direction, geometry.dimensions, geometry.dimension);
          SCOPED_TRACE(text);
          const auto [kernel_thunks, descriptions] = KernelsOf(text);
          EXPECT_EQ(kernel_thunks, 0);
          EXPECT_EQ(descriptions, is_float && compare == KeyCompare::kPlain ? 1u : 0u);
          std::unique_ptr<Module> module = testing::ParseOrDie(text);
          ASSERT_NE(module, nullptr);
          const std::vector<Literal> arguments =
              KeySortArguments(*module, *ElementTypeFromName(type), /*specials=*/true, seed++);
          ExpectSortTextMatchesInterpreter(text, arguments);
        }
      }
    }
  }
}

TEST(RuntimeKeySortTest, JaxRowArgsortsBroadcastIotaIsNoKernel) {
  // jnp.argsort(x, axis=-1) as JAX exports it: the positions are a
  // broadcast of a 1-D iota along the rows.
  const std::string text = std::string("HloModule jit__lambda\n") + kJaxArgsortComparator + R"(argsort.2 {
  Arg_0.1 = f32[64,256]{1,0} parameter(0)
  iota.2 = s32[256]{0} iota(), iota_dimension=0
  iota.3 = s32[64,256]{1,0} broadcast(iota.2), dimensions={1}
  sort.11 = (f32[64,256]{1,0}, s32[64,256]{1,0}) sort(Arg_0.1, iota.3), dimensions={1}, is_stable=true, to_apply=region_0.1
  ROOT sort.13 = s32[64,256]{1,0} get-tuple-element(sort.11), index=1
}
ENTRY main.3 {
  x.1 = f32[64,256]{1,0} parameter(0)
  ROOT jit_argsort_.1 = s32[64,256]{1,0} call(x.1), to_apply=argsort.2
})";
  EXPECT_EQ(testing::CountThunks(text, "key_sort"), 1);
  EXPECT_EQ(KernelsOf(text), (std::pair<int64_t, size_t>{0, 0}));
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 3}, 0);
}

TEST(RuntimeKeySortTest, IotasTheSortDoesNotOwnKeepTheirKernel) {
  // An iota that is also a result, one along another dimension than the
  // sort's, one that is the key, and one that is the key and a passenger:
  // each is computed by its kernel.
  const std::string comparator = Comparator("f32", "LT", 2);
  const std::string key_and_passenger = R"(HloModule m
cmp {
  p0 = s32[] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  ROOT lt = pred[] compare(p0, p1), direction=GT
}
ENTRY e {
  i = s32[4,50] iota(), iota_dimension=1
  ROOT s = (s32[4,50], s32[4,50]) sort(i, i), dimensions={1}, is_stable=true, to_apply=cmp
})";
  const std::string key_is_iota = R"(HloModule m
cmp {
  p0 = s32[] parameter(0)
  p1 = s32[] parameter(1)
  p2 = f32[] parameter(2)
  p3 = f32[] parameter(3)
  ROOT lt = pred[] compare(p0, p1), direction=GT
}
ENTRY e {
  i = s32[4,50] iota(), iota_dimension=1
  x = f32[4,50] parameter(0)
  ROOT s = (s32[4,50], f32[4,50]) sort(i, x), dimensions={1}, is_stable=true, to_apply=cmp
})";
  const std::string also_a_result = "HloModule m\n" + comparator + R"(ENTRY e {
  x = f32[4,50] parameter(0)
  i = s32[4,50] iota(), iota_dimension=1
  s = (f32[4,50], s32[4,50]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp
  g = s32[4,50] get-tuple-element(s), index=1
  ROOT t = (s32[4,50], s32[4,50]) tuple(g, i)
})";
  const std::string along_rows = "HloModule m\n" + comparator + R"(ENTRY e {
  x = f32[4,50] parameter(0)
  i = s32[4,50] iota(), iota_dimension=0
  ROOT s = (f32[4,50], s32[4,50]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp
})";
  for (const std::string& text : {also_a_result, along_rows, key_is_iota, key_and_passenger}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(KernelsOf(text).first, 1);
    testing::ExpectMatchesInterpreter(text, 0);
  }
}

TEST(RuntimeKeySortTest, OtherComparatorsFallBackToTheCompiledComparator) {
  // Two keys (lexicographic), a non-strict direction, a computed key, and
  // a TOTALORDER compare of canonicalised keys whose NaN test is itself a
  // total-order compare (NaN == NaN there): each keeps the general path.
  const std::string header = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
)";
  const std::string entry = R"(
ENTRY e {
  k = f32[300] parameter(0)
  v = s32[300] parameter(1)
  ROOT s = (f32[300], s32[300]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
})";
  const std::vector<std::string> bodies = {
      "  eq = pred[] compare(a, b), direction=EQ\n  lt = pred[] compare(a, b), direction=LT\n"
      "  lt2 = pred[] compare(c, d), direction=LT\n  ROOT r = pred[] select(eq, lt2, lt)\n}",
      "  ROOT r = pred[] compare(a, b), direction=LE\n}",
      "  aa = f32[] abs(a)\n  ab = f32[] abs(b)\n  ROOT r = pred[] compare(aa, ab), direction=LT\n}",
      "  nan = f32[] constant(nan)\n  zero = f32[] constant(0)\n"
      "  na = pred[] compare(a, a), direction=NE, type=TOTALORDER\n  ea = pred[] compare(a, zero), "
      "direction=EQ\n"
      "  za = f32[] select(ea, zero, a)\n  ca = f32[] select(na, nan, za)\n"
      "  nb = pred[] compare(b, b), direction=NE, type=TOTALORDER\n  eb = pred[] compare(b, zero), "
      "direction=EQ\n"
      "  zb = f32[] select(eb, zero, b)\n  cb = f32[] select(nb, nan, zb)\n"
      "  ROOT r = pred[] compare(ca, cb), direction=LT, type=TOTALORDER\n}",
  };
  for (const std::string& body : bodies) {
    const std::string text = header + body + entry;
    SCOPED_TRACE(text);
    EXPECT_EQ(testing::CountThunks(text, "key_sort"), 0);
    EXPECT_EQ(testing::CountThunks(text, "sort"), 1);
    testing::ExpectMatchesInterpreter(text, 0);
  }
}

}  // namespace
}  // namespace kiln::cpu
