// fft on the CPU backend: its own thunk on the slots (no library thunk), the
// lines spread over the intra-op threads, the same values as the
// interpreter for every fft_type and both precisions.
#include "backends/cpu/cpu_executable.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

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
