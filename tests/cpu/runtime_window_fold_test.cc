// Max, min, sum and product pooling of f32 and f64 whose lanes fill a
// vector fold each window (one or two positions at a time) in AVX-512
// registers
// (backends/cpu/window_fold_vectors.h): the fold gives the interpreter's
// MaximumOp/MinimumOp/AddOp/MultiplyOp fold bit for bit (NaN payloads and
// signs for max and min, signed zeros, infinities, every tail length), with
// an epilogue the interpreter's op after it, and reduce-windows that take
// it give the interpreter's bytes on 1, 2 and 4 threads, with results
// stored through the caches or past them. Select-and-scatter's result rows
// are copied whole either way (StoreWindowResultRow) and its ring rows
// filled with their initial value (FillWindowRow).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/window_fold_vectors.h"
#include "core/interpreter/scalar_ops.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

bool HostHasAvx512F() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

// Values whose fold order shows in the bytes: NaNs of both signs with
// their own payloads, zeros of both signs, infinities and ordinary numbers
// that often tie.
template <typename T>
std::vector<T> TrickyValues(int64_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<T> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    T& value = values[static_cast<size_t>(i)];
    switch (random() % 8) {
      case 0: {
        value = std::numeric_limits<T>::quiet_NaN();
        // A payload and a sign of its own, so which NaN wins is visible.
        using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
        Bits bits;
        std::memcpy(&bits, &value, sizeof(T));
        bits |= static_cast<Bits>(i + 1);
        if (random() % 2) bits |= Bits{1} << (8 * sizeof(T) - 1);
        std::memcpy(&value, &bits, sizeof(T));
        break;
      }
      case 1: value = T(0); break;
      case 2: value = -T(0); break;
      case 3:
        value = random() % 2 ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
        break;
      default: value = static_cast<T>(static_cast<int>(random() % 5) - 2);  // ties
    }
  }
  return values;
}

template <typename T>
T InterpreterStep(Opcode op, T a, T b) {
  switch (op) {
    case Opcode::kMaximum: return interpreter::MaximumOp(a, b);
    case Opcode::kMinimum: return interpreter::MinimumOp(a, b);
    case Opcode::kAdd: return interpreter::AddOp(a, b);
    case Opcode::kSubtract: return interpreter::SubtractOp(a, b);
    case Opcode::kMultiply: return interpreter::MultiplyOp(a, b);
    default: return interpreter::DivideOp(a, b);
  }
}

// The same bytes; for sums, products and epilogues two NaNs of any payload
// (x86 returns the first operand's NaN and compilers may swap the operands
// of a commutative add, so neither XLA nor the interpreter fixes which).
template <typename T>
bool SameFoldResult(T got, T want, bool any_nan) {
  if (any_nan && std::isnan(got) && std::isnan(want)) return true;
  return std::memcmp(&got, &want, sizeof(T)) == 0;
}

template <typename T>
void ExpectFoldIsTheInterpreters(Opcode reducer, bool stream_stores,
                                 const WindowFoldEpilogue<T>& epilogue = {}) {
  SCOPED_TRACE(
      std::string(OpcodeName(reducer)) + (stream_stores ? ", streaming stores" : ", stores") +
      (epilogue.op ? std::string(", then ") + std::string(OpcodeName(*epilogue.op)) : std::string()));
  const WindowFoldRows<T> fold = FindWindowFoldRows<T>(reducer, stream_stores);
  ASSERT_NE(fold, nullptr) << "the host has AVX-512F, so the vector fold must be found";
  const T initial = reducer == Opcode::kMaximum ? -std::numeric_limits<T>::infinity() : T(0.5);
  const bool any_nan = reducer == Opcode::kAdd || reducer == Opcode::kMultiply || epilogue.op.has_value();
  for (size_t positions : {1u, 2u}) {
    for (int64_t n : {1, 7, 8, 15, 16, 17, 63, 64, 65, 70, 130}) {
      for (size_t taps : {0u, 1u, 2u, 4u, 9u, 25u}) {
        // Each position's own rows, one position's after the other's.
        std::vector<std::vector<T>> rows;
        std::vector<const T*> pointers;
        for (size_t k = 0; k < positions * taps; ++k) {
          rows.push_back(TrickyValues<T>(n, static_cast<uint32_t>(n * 100 + static_cast<int64_t>(k))));
          pointers.push_back(rows.back().data());
        }
        // At a 64-byte boundary (streamed stores need one), one past the
        // end must stay.
        const size_t count = positions * static_cast<size_t>(n);
        std::vector<T> buffer(count + 1 + 64 / sizeof(T), T(7));
        T* aligned = buffer.data();
        while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
        std::span<T> got(aligned, count + 1);
        T* const outs[2] = {got.data(), got.data() + n};
        fold(pointers.data(), taps, positions, initial, n, outs, epilogue);
        FenceStreamedWindowStores();
        for (size_t p = 0; p < positions; ++p) {
          for (int64_t c = 0; c < n; ++c) {
            T want = initial;
            for (size_t k = 0; k < taps; ++k)
              want = InterpreterStep(reducer, want, rows[p * taps + k][static_cast<size_t>(c)]);
            if (epilogue.op) want = InterpreterStep(*epilogue.op, want, epilogue.scalar);
            const T value = got[p * static_cast<size_t>(n) + static_cast<size_t>(c)];
            EXPECT_TRUE(SameFoldResult(value, want, any_nan))
                << positions << " positions, n " << n << ", " << taps << " taps, position " << p << " lane "
                << c << ": " << value << " vs " << want;
          }
        }
        EXPECT_EQ(got[count], T(7)) << "n " << n << ": stored past the lanes";
      }
    }
  }
}

TEST(RuntimeWindowFoldTest, VectorFoldIsTheInterpretersFoldBitForBit) {
  if (!HostHasAvx512F()) GTEST_SKIP() << "this CPU has no AVX-512F; the scalar row loop runs instead";
  for (bool stream_stores : {false, true}) {
    for (Opcode reducer : {Opcode::kMaximum, Opcode::kMinimum, Opcode::kAdd, Opcode::kMultiply}) {
      ExpectFoldIsTheInterpreters<float>(reducer, stream_stores);
      ExpectFoldIsTheInterpreters<double>(reducer, stream_stores);
    }
  }
}

TEST(RuntimeWindowFoldTest, TheEpilogueIsTheInterpretersOpAfterTheFold) {
  if (!HostHasAvx512F()) GTEST_SKIP() << "this CPU has no AVX-512F; the scalar row loop runs instead";
  for (bool stream_stores : {false, true}) {
    // Average pooling's divide, and each other op, after a sum or a max.
    ExpectFoldIsTheInterpreters<float>(Opcode::kAdd, stream_stores, {Opcode::kDivide, 9.0f});
    ExpectFoldIsTheInterpreters<float>(Opcode::kAdd, stream_stores, {Opcode::kDivide, 0.0f});
    ExpectFoldIsTheInterpreters<float>(Opcode::kMaximum, stream_stores, {Opcode::kMultiply, 0.1f});
    ExpectFoldIsTheInterpreters<double>(Opcode::kAdd, stream_stores, {Opcode::kSubtract, 0.75});
    ExpectFoldIsTheInterpreters<double>(Opcode::kMinimum, stream_stores, {Opcode::kAdd, -3.0});
  }
}

TEST(RuntimeWindowFoldTest, OnlyPoolingReducersHaveAVectorFold) {
  for (Opcode reducer : {Opcode::kSubtract, Opcode::kDivide, Opcode::kAnd}) {
    EXPECT_EQ(FindWindowFoldRows<float>(reducer), nullptr) << OpcodeName(reducer);
    EXPECT_EQ(FindWindowFoldRows<double>(reducer), nullptr) << OpcodeName(reducer);
  }
}

// reduce-window(x, init) with `reducer` over `type` on the CPU backend and
// the interpreter, x full of TrickyValues; the same bytes on 1, 2, 4 threads.
template <typename T>
void ExpectPoolingBytesOfTheInterpreter(const std::string& type, const std::string& in,
                                        const std::string& out, const std::string& reducer,
                                        const std::string& init, const std::string& window) {
  const std::string text = "HloModule m\nr {\n  a = " + type + "[] parameter(0)\n  b = " + type +
                           "[] parameter(1)\n  ROOT c = " + type + "[] " + reducer +
                           "(a, b)\n}\nENTRY e {\n  x = " + type + in + " parameter(0)\n  i = " + type +
                           "[] constant(" + init + ")\n  ROOT w = " + type + out +
                           " reduce-window(x, i), window={" + window + "}, to_apply=r\n}\n";
  SCOPED_TRACE(text);
  EXPECT_EQ(testing::CountThunks(text, "reduce-window"), 1);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> arguments = testing::RandomArguments(*module);
  auto x = arguments[0].data<T>();
  const std::vector<T> values = TrickyValues<T>(static_cast<int64_t>(x.size()), 11);
  std::copy(values.begin(), values.end(), x.begin());
  testing::ExpectSameBytesOnThreads(*module, arguments,
                                    /*any_nan_payload=*/reducer == "add" || reducer == "multiply");
}

TEST(RuntimeWindowFoldTest, ResultRowsAreCopiedWholeThroughTheCachesOrPastThem) {
  // Every start within a cache line and lengths around whole lines: the
  // bytes copied, none before or after them touched.
  std::mt19937 random(7);
  std::vector<unsigned char> from(1024), to(1024 + 128);
  for (unsigned char& byte : from) byte = static_cast<unsigned char>(random());
  for (const bool stream : {false, true}) {
    for (size_t start = 0; start < 64; ++start) {
      for (const size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{200},
                                 size_t{640}, size_t{1000}}) {
        std::fill(to.begin(), to.end(), 0xa5);
        // The destination's start `start` bytes past a 64-byte boundary.
        unsigned char* base = to.data() + (64 - reinterpret_cast<uintptr_t>(to.data()) % 64) % 64;
        StoreWindowResultRow(base + start, from.data() + 3, bytes, stream);
        FenceStreamedWindowStores();
        SCOPED_TRACE(::testing::Message() << "stream " << stream << " start " << start << " bytes " << bytes);
        for (size_t i = 0; i < to.size(); ++i) {
          const unsigned char* at = to.data() + i;
          const bool inside = at >= base + start && at < base + start + bytes;
          ASSERT_EQ(to[i], inside ? from[static_cast<size_t>(at - (base + start)) + 3] : 0xa5)
              << "byte " << i;
        }
      }
    }
  }
}

TEST(RuntimeWindowFoldTest, RowsAreFilledWithTheirElementAndNothingElse) {
  // Elements of 1, 2, 4 and 8 bytes, rows shorter and longer than a line,
  // starting anywhere in one.
  const unsigned char element[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  std::vector<unsigned char> to(1024 + 128);
  for (const size_t element_bytes : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    for (size_t start = 0; start < 64; start += element_bytes) {
      for (const size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{100}}) {
        std::fill(to.begin(), to.end(), 0xa5);
        unsigned char* base = to.data() + (64 - reinterpret_cast<uintptr_t>(to.data()) % 64) % 64 + start;
        FillWindowRow(base, element, element_bytes, count);
        SCOPED_TRACE(::testing::Message()
                     << element_bytes << "-byte elements, start " << start << ", " << count);
        for (size_t i = 0; i < to.size(); ++i) {
          const unsigned char* at = to.data() + i;
          const bool inside = at >= base && at < base + count * element_bytes;
          ASSERT_EQ(to[i], inside ? element[static_cast<size_t>(at - base) % element_bytes] : 0xa5)
              << "byte " << i;
        }
      }
    }
  }
}

TEST(RuntimeWindowFoldTest, VectorPoolingGivesTheInterpretersBytes) {
  // JAX's max-pool 3x3 stride 2 SAME, NHWC, channels: four whole vectors
  // and a tail (80), a tail alone (70), exactly one vector (16).
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,9,10,80]", "[2,5,5,80]", "maximum", "-inf",
                                            "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[3,7,8,70]", "[3,7,8,70]", "minimum", "inf",
                                            "size=1x3x3x1 pad=0_0x1_1x1_1x0_0");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,9,9,16]", "[2,4,4,16]", "maximum", "-inf",
                                            "size=1x3x3x1 stride=1x2x2x1");
  // An initial value that is not the identity, window and base dilation,
  // a window wider than the input, all-padding windows.
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,9,9,32]", "[2,5,5,32]", "maximum", "0.5",
                                            "size=1x3x3x1 rhs_dilate=1x2x2x1");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,5,5,20]", "[2,10,10,20]", "minimum", "-0.25",
                                            "size=1x2x2x1 pad=0_0x1_1x1_1x0_0 lhs_dilate=1x2x2x1");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[3,4,24]", "[3,3,24]", "maximum", "-inf",
                                            "size=1x6x1 stride=1x4x1 pad=0_0x6_6x0_0");
  // A result over 4 MiB, stored past the caches.
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[4,66,66,64]", "[4,66,66,64]", "maximum", "-inf",
                                            "size=1x3x3x1 pad=0_0x1_1x1_1x0_0");
  // f64: eight lanes to a register.
  ExpectPoolingBytesOfTheInterpreter<double>("f64", "[2,9,10,37]", "[2,5,5,37]", "maximum", "-inf",
                                             "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0");
  ExpectPoolingBytesOfTheInterpreter<double>("f64", "[2,6,6,8]", "[2,6,6,8]", "minimum", "inf",
                                             "size=1x3x3x1 pad=0_0x1_1x1_1x0_0");
  // 3-D pooling (three window axes) and 1-D pooling (one), strided and padded.
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,6,7,5,32]", "[2,3,4,3,32]", "maximum", "-inf",
                                            "size=1x3x3x3x1 stride=1x2x2x2x1 pad=0_0x1_1x1_1x1_1x0_0");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[3,11,48]", "[3,6,48]", "add", "0",
                                            "size=1x3x1 stride=1x2x1 pad=0_0x1_1x0_0");
  // Sum and product pooling: JAX's avg_pool sum (SAME, NHWC) with a tail,
  // one past 4 MiB, a product, f64.
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,9,10,80]", "[2,5,5,80]", "add", "0",
                                            "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[4,66,66,64]", "[4,66,66,64]", "add", "0",
                                            "size=1x3x3x1 pad=0_0x1_1x1_1x0_0");
  ExpectPoolingBytesOfTheInterpreter<float>("f32", "[2,7,7,24]", "[2,6,6,24]", "multiply", "1",
                                            "size=1x2x2x1");
  ExpectPoolingBytesOfTheInterpreter<double>("f64", "[2,9,10,37]", "[2,5,5,37]", "add", "1.5",
                                             "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x0_1x0_0");
}

}  // namespace
}  // namespace kiln::cpu
