// topk on the CPU backend: a native "topk" thunk (no library thunk), ties in
// index order and floats in total order, as the interpreter. The thunk scans
// rows of at least k blocks and partially sorts shorter ones; both must give
// the interpreter's bits on 1, 2 and 4 threads.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

std::vector<Literal> RunNativeTopK(const std::string& text, const std::vector<Literal>& arguments) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {};
  CpuBackend cpu;
  StatusOr<std::unique_ptr<Executable>> executable = cpu.Compile(*module, CompileOptions());
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  if (!executable.ok()) return {};
  const auto& thunks = static_cast<const CpuExecutable&>(**executable).program().statistics.thunks;
  EXPECT_EQ(thunks.count("topk"), 1u);
  EXPECT_EQ(thunks.count("library"), 0u);
  StatusOr<std::vector<Literal>> results = testing::RunOn(cpu, *module, arguments);
  EXPECT_TRUE(results.ok()) << results.status().ToString();
  return results.ok() ? std::move(results).value() : std::vector<Literal>{};
}

TEST(RuntimeTopKTest, LargestWithTiesInIndexOrder) {
  const char* text = R"(HloModule m
ENTRY e {
  x = s32[2,5] parameter(0)
  ROOT t = (s32[2,3], s32[2,3]) topk(x), k=3, largest=true
})";
  const std::vector<Literal> results =
      RunNativeTopK(text, {Literal::FromVector<int32_t>({4, 9, 4, 1, 9, 0, -1, 3, 3, 2}, {2, 5})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], Literal::FromVector<int32_t>({9, 9, 4, 3, 3, 2}, {2, 3}));
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({1, 4, 0, 2, 3, 4}, {2, 3}));
}

TEST(RuntimeTopKTest, SmallestFloatsInTotalOrder) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  ROOT t = (f32[3], s32[3]) topk(x), k=3, largest=false
})";
  const std::vector<Literal> results =
      RunNativeTopK(text, {Literal::FromVector<float>({0.0f, std::nanf(""), -0.0f, 2.0f, -INFINITY})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({4, 2, 0}));
  EXPECT_TRUE(std::signbit(results[0].data<float>()[1]));
}

// Every float class in one row, largest first: +NaN, inf, 1, +0, -0, -1,
// -inf, -NaN; the equal ones (two +0s, two 1s) in index order.
TEST(RuntimeTopKTest, LargestFloatsOfEveryClassInTotalOrder) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[10] parameter(0)
  ROOT t = (f32[10], s32[10]) topk(x), k=10, largest=true
})";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Literal> results = RunNativeTopK(
      text,
      {Literal::FromVector<float>({-0.0f, 1.0f, -nan, 0.0f, INFINITY, -1.0f, nan, -INFINITY, 1.0f, 0.0f})});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1], Literal::FromVector<int32_t>({6, 4, 1, 8, 3, 9, 0, 5, 7, 2}));
}

// Bits drawn from a small pool (so rows hold many ties) that has every float
// class: NaNs of both signs, quiet and signalling, +-0, +-inf.
template <typename T>
T PoolValue(uint64_t draw) {
  const int64_t small = static_cast<int64_t>(draw % 9) - 4;
  if constexpr (std::is_integral_v<T>) {
    switch (draw % 13) {
      case 0: return std::numeric_limits<T>::min();
      case 1: return std::numeric_limits<T>::max();
      default: return static_cast<T>(std::is_signed_v<T> ? small : small + 4);
    }
  } else if constexpr (std::is_same_v<T, double>) {
    switch (draw % 13) {
      case 0: return std::bit_cast<double>(uint64_t{0x7ff8000000000000});  // +NaN
      case 1: return std::bit_cast<double>(uint64_t{0xfff8000000000000});  // -NaN
      case 2: return std::bit_cast<double>(uint64_t{0x7ff0000000000001});  // signalling +NaN
      case 3: return std::bit_cast<double>(uint64_t{0x7ff8000000000001});  // its quiet twin
      case 4: return -0.0;
      case 5: return 0.0;
      case 6: return draw % 2 ? INFINITY : -INFINITY;
      default: return static_cast<double>(small) / 4;
    }
  } else {
    uint32_t bits = 0;
    switch (draw % 13) {
      case 0: bits = 0x7fc00000; break;  // +NaN
      case 1: bits = 0xffc00000; break;  // -NaN
      case 2: bits = 0x7f810000; break;  // signalling +NaN (a bf16/f16 one too)
      case 3: bits = 0x7fc10000; break;  // its quiet twin
      case 4: bits = 0xff810000; break;  // signalling -NaN
      case 5: return T(-0.0f);
      case 6: return T(0.0f);
      case 7: return T(draw % 2 ? INFINITY : -INFINITY);
      default: return T(static_cast<float>(small) / 4);
    }
    if constexpr (std::is_same_v<T, float>)
      return std::bit_cast<float>(bits);
    else if constexpr (std::is_same_v<T, bfloat16>)
      return Eigen::numext::bit_cast<bfloat16>(static_cast<uint16_t>(bits >> 16));
    else {
      // half: NaNs with the same sign, quiet bit and payload position.
      const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
      const uint16_t quiet = (bits & 0x00400000) ? 0x0200 : 0;
      const uint16_t payload = (bits & 0x00010000) ? 0x0001 : 0;
      return Eigen::numext::bit_cast<half>(static_cast<uint16_t>(sign | 0x7c00 | quiet | payload));
    }
  }
}

template <typename T>
Literal PoolArgument(const Shape& shape, uint64_t seed) {
  Literal literal(shape);
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 11;
  for (T& value : literal.data<T>()) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    value = PoolValue<T>(state >> 33);
  }
  return literal;
}

// topk of a [rows, length] operand of `type` on the CPU backend with 1, 2 and
// 4 threads, bit for bit against the interpreter.
void ExpectTopKMatchesInterpreter(const std::string& type, int64_t rows, int64_t length, int64_t k,
                                  bool largest) {
  const std::string operand = type + "[" + std::to_string(rows) + "," + std::to_string(length) + "]";
  const std::string dims = "[" + std::to_string(rows) + "," + std::to_string(k) + "]";
  const std::string text = "HloModule m\nENTRY e {\n  x = " + operand + " parameter(0)\n  ROOT t = (" + type +
                           dims + ", s32" + dims + ") topk(x), k=" + std::to_string(k) +
                           ", largest=" + (largest ? "true" : "false") + "\n}";
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const Shape& shape = module->entry()->parameters()[0]->shape;
  std::vector<Literal> arguments;
  DispatchElementType(shape.element_type(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, complex64> &&
                  !std::is_same_v<T, complex128>) {
      arguments.push_back(PoolArgument<T>(shape, static_cast<uint64_t>(rows * 131 + length * 7 + k)));
    }
  });
  ASSERT_EQ(arguments.size(), 1u);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  ASSERT_EQ(want.size(), 2u);
  for (int threads : {1, 2, 4}) {
    CpuBackend cpu;
    CompileOptions options;
    options.num_threads = threads;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
    EXPECT_EQ(static_cast<const CpuExecutable&>(*executable).program().statistics.thunks.count("topk"), 1u);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<DeviceBuffer> input,
                              cpu.BufferFromLiteral(arguments[0], nullptr));
    const std::vector<DeviceBuffer*> inputs = {input.get()};
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                              executable->Execute(inputs, {}));
    ASSERT_EQ(results.size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      KILN_ASSERT_OK_AND_ASSIGN(Literal got, results[r]->ToLiteral());
      EXPECT_EQ(got, want[r]) << threads << " threads, result " << r;
    }
  }
}

// The scan (rows of at least k blocks of 16): k = 1 (on a row of one element
// too), k = the row's block count, a row whose last block is short, rows of
// up to 128 blocks (the k-th greatest block key counted) and of more
// (selected), and rows long enough that they are split over the threads.
TEST(RuntimeTopKTest, ScannedRowsMatchTheInterpreterForEveryType) {
  for (const char* type : {"f32", "bf16", "f16", "f64", "s32", "s8", "u8", "u32", "s64", "u64"}) {
    for (bool largest : {true, false}) {
      ExpectTopKMatchesInterpreter(type, 40, 1, 1, largest);
      ExpectTopKMatchesInterpreter(type, 100, 203, 1, largest);
      ExpectTopKMatchesInterpreter(type, 100, 203, 13, largest);
      ExpectTopKMatchesInterpreter(type, 40, 1024, 16, largest);
      ExpectTopKMatchesInterpreter(type, 40, 1024, 64, largest);
      ExpectTopKMatchesInterpreter(type, 9, 2100, 16, largest);
    }
  }
}

// f32 rows of 2 vectors of sixteen and more (and k up to 128) run in
// AVX-512 registers where the CPU has it: rows whose last chunk is one short
// vector (most of its blocks empty), k = the row length, k = 16 x chunks,
// and the NaNs, signed zeros and ties of the pool.
TEST(RuntimeTopKTest, VectorScannedF32RowsMatchTheInterpreter) {
  for (bool largest : {true, false}) {
    ExpectTopKMatchesInterpreter("f32", 30, 20, 16, largest);
    ExpectTopKMatchesInterpreter("f32", 30, 20, 20, largest);
    ExpectTopKMatchesInterpreter("f32", 30, 50, 16, largest);
    ExpectTopKMatchesInterpreter("f32", 30, 50, 50, largest);
    ExpectTopKMatchesInterpreter("f32", 20, 64, 64, largest);
    ExpectTopKMatchesInterpreter("f32", 20, 300, 128, largest);
    ExpectTopKMatchesInterpreter("f32", 20, 1000, 1, largest);
  }
}

// bf16 and 32-bit integer rows take the same AVX-512 scan as f32 (keys of
// 32 bits), f64 and 64-bit integers too (by their keys' high halves, then
// whole keys), and k above 128 too, with the floor selected among four
// blocks per answer element: k = 129 on a row of 19 vectors (all it has),
// k up to the row's length, the pool's NaNs, signed zeros, extremes and ties.
TEST(RuntimeTopKTest, VectorScannedRowsOfOtherTypesAndLargeKMatchTheInterpreter) {
  for (const char* type : {"f32", "bf16", "s32", "u32", "f64", "s64", "u64"}) {
    for (bool largest : {true, false}) {
      ExpectTopKMatchesInterpreter(type, 30, 50, 16, largest);
      ExpectTopKMatchesInterpreter(type, 20, 300, 128, largest);
      ExpectTopKMatchesInterpreter(type, 20, 300, 129, largest);
      ExpectTopKMatchesInterpreter(type, 6, 4096, 256, largest);
      ExpectTopKMatchesInterpreter(type, 6, 4000, 1000, largest);
      ExpectTopKMatchesInterpreter(type, 4, 2000, 2000, largest);
    }
  }
}

// f16 (keys from its own bits) and 8- and 16-bit integers (widened) take
// the same AVX-512 scan: rows whose last vector is short, k = the row, k
// above 128 (the floor selected), the pool's signalling and quiet NaNs of
// both signs, signed zeros, infinities, extremes and ties.
TEST(RuntimeTopKTest, VectorScannedRowsOfHalvesAndNarrowIntegersMatchTheInterpreter) {
  for (const char* type : {"f16", "s8", "u8", "s16", "u16"}) {
    for (bool largest : {true, false}) {
      ExpectTopKMatchesInterpreter(type, 30, 20, 16, largest);
      ExpectTopKMatchesInterpreter(type, 30, 50, 50, largest);
      ExpectTopKMatchesInterpreter(type, 20, 1000, 1, largest);
      ExpectTopKMatchesInterpreter(type, 40, 1024, 16, largest);
      ExpectTopKMatchesInterpreter(type, 20, 300, 128, largest);
      ExpectTopKMatchesInterpreter(type, 20, 300, 129, largest);
      ExpectTopKMatchesInterpreter(type, 6, 4096, 256, largest);
      ExpectTopKMatchesInterpreter(type, 4, 2000, 2000, largest);
    }
  }
}

// The partial sort (rows of fewer blocks than k): k one past the block count,
// k = row length, and rows shorter than a block.
TEST(RuntimeTopKTest, SortedRowsMatchTheInterpreter) {
  for (const char* type : {"f32", "bf16", "f64", "s32", "u16"}) {
    for (bool largest : {true, false}) {
      ExpectTopKMatchesInterpreter(type, 100, 203, 14, largest);
      ExpectTopKMatchesInterpreter(type, 100, 203, 203, largest);
      ExpectTopKMatchesInterpreter(type, 40, 15, 15, largest);
      ExpectTopKMatchesInterpreter(type, 300, 90, 65, largest);
    }
  }
}

// A row shorter than k has no top k: refused before it reaches the thunk,
// with the message naming k and the row.
TEST(RuntimeTopKTest, KLongerThanTheRowIsRefused) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,6], s32[2,6]) topk(x), k=6, largest=true
})");
  Status status = module.status();
  if (module.ok()) {
    CpuBackend cpu;
    status = cpu.Compile(**module, CompileOptions()).status();
  }
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.ToString().find("k=6 must lie in [0, 5]"), std::string::npos) << status.ToString();
}

TEST(RuntimeTopKTest, ManyRowsMatchTheInterpreter) {
  testing::ExpectMatchesInterpreter(R"(HloModule m
ENTRY e {
  x = bf16[300,200] parameter(0)
  ROOT t = (bf16[300,7], s32[300,7]) topk(x), k=7, largest=true
})",
                                    0);
}

}  // namespace
}  // namespace kiln::cpu
