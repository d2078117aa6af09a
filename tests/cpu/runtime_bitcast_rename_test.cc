// On the CPU backend a bitcast-convert between element types of one width
// is no kernel: its result is its operand's buffer read as the other type
// (StepLoweringRules::bitcasts_rename_their_operand), so JAX's uniform
// numbers (random bits shifted, or-ed with 1.0's exponent, bitcast to f32)
// no longer copy the bits once more. The results stay the interpreter's,
// bit for bit, wherever the renamed value goes: into a kernel, out as the
// entry's result, from a parameter or a constant, through a loop.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

// Runs `text` on the CPU backend (1, 2 and 4 threads) and the interpreter
// and expects the same bytes in every result.
void ExpectTheInterpretersBytes(const std::string& text) {
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> arguments = testing::RandomArguments(*module);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, arguments));
  for (int threads : {1, 2, 4}) {
    CpuBackend cpu;
    CompileOptions options;
    options.num_threads = threads;
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, options));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, testing::RunExecutable(cpu, *executable, arguments));
    ASSERT_EQ(got.size(), want.size());
    for (size_t r = 0; r < want.size(); ++r) {
      ASSERT_TRUE(got[r].shape().Compatible(want[r].shape())) << "result " << r;
      const std::span<const uint8_t> got_bytes = got[r].raw(), want_bytes = want[r].raw();
      EXPECT_TRUE(std::equal(got_bytes.begin(), got_bytes.end(), want_bytes.begin(), want_bytes.end()))
          << threads << " threads, result " << r;
    }
  }
}

TEST(RuntimeBitcastRenameTest, JaxsUniformBitsAreNotCopiedAgain) {
  // The bits, the float made of them, and the float used: two kernels, the
  // bitcast between them none.
  const std::string text = R"(HloModule m
ENTRY e {
  bits = u32[5000] parameter(0)
  nine = u32[] constant(9)
  nines = u32[5000] broadcast(nine), dimensions={}
  shifted = u32[5000] shift-right-logical(bits, nines)
  one = u32[] constant(1065353216)
  ones = u32[5000] broadcast(one), dimensions={}
  mantissa = u32[5000] or(shifted, ones)
  floats = f32[5000] bitcast-convert(mantissa)
  e = f32[] constant(1)
  es = f32[5000] broadcast(e), dimensions={}
  ROOT uniform = f32[5000] subtract(floats, es)
})";
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 2);
  ExpectTheInterpretersBytes(text);
}

TEST(RuntimeBitcastRenameTest, RenamedValuesGoWhereverTheOperandsWould) {
  // A parameter out as the entry's result, read again by a kernel, and a
  // constant; s64 <-> f64 and s16 <-> f16 too.
  ExpectTheInterpretersBytes(R"(HloModule m
ENTRY e {
  x = f32[7,3] parameter(0)
  bits = s32[7,3] bitcast-convert(x)
  one = s32[] constant(1)
  ones = s32[7,3] broadcast(one), dimensions={}
  next = s32[7,3] add(bits, ones)
  c = u32[4] constant({1065353216, 0, 2143289344, 2147483648})
  cf = f32[4] bitcast-convert(c)
  d = f64[5] parameter(1)
  dbits = s64[5] bitcast-convert(d)
  h = f16[6] parameter(2)
  hbits = s16[6] bitcast-convert(h)
  ROOT t = (s32[7,3], s32[7,3], f32[4], s64[5], s16[6]) tuple(bits, next, cf, dbits, hbits)
})");
  // Through a loop: the body's new state a bitcast of the old read back.
  ExpectTheInterpretersBytes(R"(HloModule m
cond {
  p = (s32[], f32[300]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[300]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(1)
  next = s32[] add(i, k)
  x = f32[300] get-tuple-element(p), index=1
  bits = u32[300] bitcast-convert(x)
  three = u32[] constant(3)
  threes = u32[300] broadcast(three), dimensions={}
  rotated = u32[300] xor(bits, threes)
  back = f32[300] bitcast-convert(rotated)
  ROOT t = (s32[], f32[300]) tuple(next, back)
}
ENTRY e {
  x = f32[300] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[300]) tuple(zero, x)
  w = (s32[], f32[300]) while(init), condition=cond, body=body
  y = f32[300] get-tuple-element(w), index=1
  ROOT b = u32[300] bitcast-convert(y)
})");
}

TEST(RuntimeBitcastRenameTest, WidthChangingBitcastsStayKernels) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  ROOT pieces = u16[6,2] bitcast-convert(x)
})";
  EXPECT_EQ(testing::CountThunks(text, "kernel"), 1);
  ExpectTheInterpretersBytes(text);
}

}  // namespace
}  // namespace kiln::cpu
