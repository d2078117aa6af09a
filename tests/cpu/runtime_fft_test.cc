// fft on the CPU backend: its own thunk on the slots (no library thunk), the
// lines spread over the intra-op threads, the same values as the naive DFT
// and as the interpreter for every fft_type and both precisions. The cases
// reach each path of Kiln's FFT: full and partly filled vectors of lines
// and single lines, rows (the last dimension) and columns (the others), a
// few long lines transformed as matrices, radix 2, 3, 4, 5 and larger prime
// passes, Bluestein's algorithm for large primes, the half-length real
// transforms (even n) and the full ones (odd n).
#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"
#include "tests/unit/fft_reference.h"

namespace kiln::cpu {
namespace {

using fft_reference::CheckAgainstNaiveDft;

Backend& Cpu() {
  static CpuBackend backend;
  return backend;
}

TEST(RuntimeFftTest, OneDimensionalLengthsMatchTheNaiveDft) {
  // 13 lines: a full vector of f32 lines and a partly filled one (f64: three
  // full and a single line); 1 line: the one-line path. 61 is the largest
  // direct radix; 67, 127, 509, 1009 go through Bluestein, 134 and 183 mix
  // a large factor with small ones.
  for (int64_t n : {1,  2,  3,  4,  5,  6,  7,   8,   9,   11,  12,  13,  16,  25,  27,   30,   31,
                    32, 49, 61, 64, 67, 97, 100, 127, 128, 134, 183, 210, 256, 509, 1000, 1009, 1024}) {
    for (FftType type : fft_reference::kEveryFftType) {
      for (bool f64 : {false, true}) {
        CheckAgainstNaiveDft({type, f64, {13}, {n}}, Cpu());
        if (n % 8 == 1 || n < 8) CheckAgainstNaiveDft({type, f64, {1}, {n}}, Cpu());
      }
    }
  }
}

TEST(RuntimeFftTest, FewLongLinesMatchTheNaiveDft) {
  // One or two lines of 4096 points (64 x 64), 4087 (61 x 67, the row
  // transforms through Bluestein's algorithm) and 6000 (75 x 80, the last
  // column vector partly filled): too few lines for the lanes, so each line
  // is transformed as a matrix.
  for (int64_t n : {4096, 4087, 6000}) {
    for (FftType type : {FftType::kFft, FftType::kIfft}) {
      for (bool f64 : {false, true}) {
        CheckAgainstNaiveDft({type, f64, {1}, {n}}, Cpu());
        CheckAgainstNaiveDft({type, f64, {2}, {n}}, Cpu());
      }
    }
  }
}

TEST(RuntimeFftTest, TwoAndThreeDimensionsMatchTheNaiveDft) {
  // Columns of 13 (f32: a full and a partly filled vector) and 7 (f64: the
  // same), 9 and 10 (a vector and single columns), a Bluestein column (67).
  for (std::vector<int64_t> lengths : std::vector<std::vector<int64_t>>{
           {6, 10}, {7, 9}, {16, 16}, {5, 13}, {4, 7}, {67, 5}, {12, 67}, {1, 5}, {5, 1}}) {
    for (FftType type : fft_reference::kEveryFftType) {
      for (bool f64 : {false, true}) CheckAgainstNaiveDft({type, f64, {3}, lengths}, Cpu());
    }
  }
  for (std::vector<int64_t> lengths :
       std::vector<std::vector<int64_t>>{{3, 4, 5}, {2, 6, 7}, {4, 4, 4}, {5, 3, 2}, {9, 17, 12}}) {
    for (FftType type : fft_reference::kEveryFftType) {
      for (bool f64 : {false, true}) {
        CheckAgainstNaiveDft({type, f64, {}, lengths}, Cpu());
        CheckAgainstNaiveDft({type, f64, {2, 3}, lengths}, Cpu());
      }
    }
  }
}

TEST(RuntimeFftTest, RunsAsItsOwnThunk) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[4,16] parameter(0)
  r = c64[4,9] fft(x), fft_type=RFFT, fft_length={16}
  ROOT n = c64[4,9] negate(r)
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const auto& thunks = static_cast<const CpuExecutable&>(*executable).program().statistics.thunks;
  EXPECT_EQ(thunks.count("fft"), 1u);
  EXPECT_EQ(thunks.count("library"), 0u);
}

TEST(RuntimeFftTest, EveryTypeMatchesTheInterpreter) {
  for (const char* text : {
           R"(HloModule m
ENTRY e {
  x = c64[3,40,24] parameter(0)
  ROOT f = c64[3,40,24] fft(x), fft_type=FFT, fft_length={40,24}
})",
           R"(HloModule m
ENTRY e {
  x = c128[2,6,10,7] parameter(0)
  ROOT f = c128[2,6,10,7] fft(x), fft_type=IFFT, fft_length={6,10,7}
})",
           R"(HloModule m
ENTRY e {
  x = f32[5,12,33] parameter(0)
  ROOT f = c64[5,12,17] fft(x), fft_type=RFFT, fft_length={12,33}
})",
           R"(HloModule m
ENTRY e {
  x = c128[4,9,11] parameter(0)
  ROOT f = f64[4,9,20] fft(x), fft_type=IRFFT, fft_length={9,20}
})",
       }) {
    SCOPED_TRACE(text);
    testing::ExpectMatchesInterpreter(text, 1e-4);
  }
}

TEST(RuntimeFftTest, ThreadCountsAgree) {
  // Enough lines along both dimensions for several tasks per pass.
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  x = c64[256,192] parameter(0)
  ROOT f = c64[256,192] fft(x), fft_type=FFT, fft_length={256,192}
})");
  ASSERT_NE(module, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*module, {1, 2, 4}, 1e-3);
  std::unique_ptr<Module> real = testing::ParseOrDie(R"(HloModule m
ENTRY e {
  x = c64[64,96,51] parameter(0)
  ROOT f = f32[64,96,100] fft(x), fft_type=IRFFT, fft_length={96,100}
})");
  ASSERT_NE(real, nullptr);
  testing::ExpectMatchesInterpreterOnThreads(*real, {1, 3}, 1e-4);
}

}  // namespace
}  // namespace kiln::cpu
