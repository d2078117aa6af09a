// rng-bit-generator on the CPU backend: a native "rng-bit-generator" thunk
// (no library thunk) whose bits and new state are the interpreter's, byte for
// byte, for Threefry and Philox, every integer width, shapes that take each
// of XLA's element layouts (word streams, split rows, odd extents, scalars,
// empty arrays), counters about to wrap, outputs large enough to be split
// over threads, on 1 and 2 threads, and with the ciphers of every
// instruction set this CPU runs (baseline, AVX2, AVX-512).
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/rng_bit_generator_thunk.h"
#include "backends/cpu/thread_pool.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

struct RngCase {
  std::string algorithm;  // rng_three_fry, rng_philox or rng_default
  std::string bits;       // the bits' shape, e.g. "u32[3,5]"
  std::vector<uint64_t> state;
};

std::string ModuleText(const RngCase& c) {
  std::ostringstream text;
  text << "HloModule m\nENTRY e {\n  s = u64[" << c.state.size() << "] parameter(0)\n  ROOT r = (u64["
       << c.state.size() << "], " << c.bits << ") rng-bit-generator(s), algorithm=" << c.algorithm << "\n}\n";
  return text.str();
}

std::string Describe(const RngCase& c) {
  std::ostringstream text;
  text << c.algorithm << " " << c.bits << " state {";
  for (uint64_t word : c.state) text << " " << word;
  text << " }";
  return text.str();
}

StatusOr<std::vector<Literal>> RunCpu(const Module& module, const Literal& state, int threads) {
  CpuBackend cpu;
  CompileOptions options;
  options.num_threads = threads;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, cpu.Compile(module, options));
  const auto& thunks = static_cast<const CpuExecutable&>(*executable).program().statistics.thunks;
  if (thunks.count("rng-bit-generator") != 1 || thunks.count("library") != 0) {
    return Internal("expected one rng-bit-generator thunk and no library thunk");
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer, cpu.BufferFromLiteral(state, nullptr));
  std::vector<DeviceBuffer*> buffers = {buffer.get()};
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results, executable->Execute(buffers, {}));
  std::vector<Literal> leaves;
  for (const auto& result : results) {
    KILN_ASSIGN_OR_RETURN(Literal leaf, result->ToLiteral());
    leaves.push_back(std::move(leaf));
  }
  return leaves;
}

void ExpectBytesEqual(std::span<const uint8_t> want, std::span<const uint8_t> got, const std::string& what,
                      const char* part) {
  ASSERT_EQ(want.size(), got.size()) << what << ", " << part;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i], got[i]) << what << ", " << part << ": byte " << i << " of " << want.size();
  }
}

void ExpectInterpreterBits(const RngCase& c) {
  const std::string what = Describe(c);
  std::unique_ptr<Module> module = testing::ParseOrDie(ModuleText(c));
  ASSERT_NE(module, nullptr) << what;
  const Literal state = Literal::FromVector<uint64_t>(c.state);
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, testing::RunOn(reference, *module, {state}));
  ASSERT_EQ(want.size(), 2u) << what;
  for (int threads : {1, 2}) {
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, RunCpu(*module, state, threads));
    ASSERT_EQ(got.size(), 2u) << what;
    std::ostringstream run_text;
    run_text << what << ", " << threads << " threads";
    const std::string run = run_text.str();
    ExpectBytesEqual(want[0].raw(), got[0].raw(), run, "state");
    ExpectBytesEqual(want[1].raw(), got[1].raw(), run, "bits");
  }
  // Each instruction set's ciphers, on the calling thread and on two threads.
  std::optional<RngBitPlan> plan = PlanRngBitGenerator(*module->entry()->root());
  ASSERT_TRUE(plan.has_value()) << what;
  IntraOpThreadPool pool(2);
  for (RngVectorIsa isa : SupportedRngVectorIsas()) {
    const IntraOpThreadPool* const pools[] = {nullptr, &pool};
    for (const IntraOpThreadPool* threads : pools) {
      std::vector<uint8_t> bits(want[1].raw().size(), 0xA5);
      std::vector<uint64_t> new_state(c.state.size());
      GenerateRngBits(*plan, c.state.data(), new_state.data(), bits.data(), isa, threads);
      std::ostringstream run_text;
      run_text << what << ", isa " << static_cast<int>(isa)
               << (threads == nullptr ? ", caller only" : ", pool of 2");
      const std::string run = run_text.str();
      ExpectBytesEqual(want[1].raw(), bits, run, "bits");
      ExpectBytesEqual(want[0].raw(),
                       std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(new_state.data()),
                                                new_state.size() * sizeof(uint64_t)),
                       run, "state");
    }
  }
}

constexpr uint64_t kKey = 0x9E3779B97F4A7C15ull;
// Counters whose low word (Threefry: the whole 64-bit counter) wraps within
// the first blocks.
constexpr uint64_t kNearWrap = 0xFFFFFFFFFFFFFFF0ull;

TEST(RuntimeRngBitGeneratorTest, ThreefryEveryLayoutAndWidth) {
  const char* shapes[] = {
      "u32[]",        "u32[1]",       "u32[2]",      "u32[7]",     "u32[131073]",  // 1-D: a word stream
      "u32[5,7]",     "u32[3,5]",     "u8[9,33]",    "u16[4,6]",   "s32[6,4]",     // stride 1, odd extents
      "u32[3,70001]", "u32[70001,3]", "u8[2,65537]", "u16[5,4,3]", "s8[3,3,2,5]",  // split rows
      "u64[1]",       "u64[33333]",   "s64[3,7]",    "u32[0,4]",   "u64[0]"};
  for (const char* shape : shapes) {
    for (uint64_t counter : {uint64_t{0}, uint64_t{12345}, kNearWrap}) {
      ExpectInterpreterBits({"rng_three_fry", shape, {kKey, counter}});
      if (HasFatalFailure()) return;
    }
  }
}

TEST(RuntimeRngBitGeneratorTest, PhiloxEveryWidthAndStateSize) {
  const char* shapes[] = {"u32[]",      "u32[3]",    "u32[4]",     "u32[5,7]",    "u32[3,70001]",
                          "u8[130001]", "u16[9,11]", "s16[2,3,5]", "u64[1]",      "u64[3]",
                          "u64[66667]", "s64[4,5]",  "u8[0]",      "u32[70001,2]"};
  for (const char* shape : shapes) {
    for (uint64_t counter : {uint64_t{0}, uint64_t{777}, kNearWrap}) {
      ExpectInterpreterBits({"rng_philox", shape, {kKey, counter}});
      if (HasFatalFailure()) return;
      // A third word is the counter's high word; its carry is kept.
      ExpectInterpreterBits({"rng_philox", shape, {kKey, counter, ~uint64_t{0} - 1}});
      if (HasFatalFailure()) return;
    }
  }
  ExpectInterpreterBits({"rng_default", "u32[4099]", {kKey, 5}});
}

TEST(RuntimeRngBitGeneratorTest, ManyKeys) {
  uint64_t key = 1;
  for (int i = 0; i < 24; ++i, key = key * 0x5851F42D4C957F2Dull + 1442695040888963407ull) {
    ExpectInterpreterBits({"rng_three_fry", "u32[257]", {key, key >> 3}});
    ExpectInterpreterBits({"rng_philox", "u32[257]", {key, key >> 5}});
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace kiln::cpu
