// `rng` on the CPU backend: a native "rng" thunk (no library thunk) whose
// uniform floats and integers are the interpreter's numbers bit for bit and
// whose normal samples are the interpreter's within a stated bound (its
// Box-Muller on the same draws, with Highway's vector log and cos instead
// of libm's): f32, f64, bf16 and f16, integers of every width (wide, narrow,
// negative and empty ranges), odd and empty shapes, several rng ops and an
// rng in a loop sharing the execution's stream, 1, 2 and 4 threads giving
// identical bytes, and the lane loops of every instruction set this CPU runs
// (baseline, AVX2, AVX-512).
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/rng_thunk.h"
#include "backends/cpu/thread_pool.h"
#include "core/interpreter/kernels.h"
#include "core/rng_stream.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

struct RngOpCase {
  std::string type;  // "f32", "s8", ...
  std::string dims;  // "[3,5]"
  std::string low;   // the bounds' literals (mean and deviation for normal)
  std::string high;
  bool normal = false;
};

std::string RngOpText(const RngOpCase& c) {
  std::ostringstream text;
  text << "HloModule m\nENTRY e {\n  a = " << c.type << "[] constant(" << c.low << ")\n  b = " << c.type
       << "[] constant(" << c.high << ")\n  ROOT r = " << c.type << c.dims
       << " rng(a, b), distribution=" << (c.normal ? "rng_normal" : "rng_uniform") << "\n}\n";
  return text.str();
}

// Runs `module` (no parameters) once with `seed` on `threads` threads (0:
// the backend's default); its result leaves.
StatusOr<std::vector<Literal>> RunSeeded(Backend& backend, const Module& module, uint64_t seed, int threads) {
  CompileOptions options;
  options.num_threads = threads;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable, backend.Compile(module, options));
  ExecuteOptions execute;
  execute.rng_seed = seed;
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results, executable->Execute({}, execute));
  std::vector<Literal> leaves;
  for (const auto& result : results) {
    KILN_ASSIGN_OR_RETURN(Literal leaf, result->ToLiteral());
    leaves.push_back(std::move(leaf));
  }
  return leaves;
}

void ExpectSameRngBytes(std::span<const uint8_t> want, std::span<const uint8_t> got,
                        const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(want[i], got[i]) << what << ": byte " << i;
}

// How far a normal sample of type `type` may be from the interpreter's.
// Highway's log and cos are within 4 and 3 ulp of the exact values, libm's
// within 1, so the deviate deviation * radius * cos of the two differs by
// about 10 ulp of double at most; allowed: 2^-44 of it (64 ulp), the mean
// added as the interpreter adds it, then one rounding step of `type`.
double NormalTolerance(ElementType type, double mean, double want, double got) {
  const double deviate = std::fabs(want - mean);
  const double magnitude = std::max(std::fabs(want), std::fabs(got));
  const double type_step = std::ldexp(magnitude, -MantissaBits(type));
  const double smallest = type == ElementType::kF64   ? 0x1p-1074
                          : type == ElementType::kF32 ? 0x1p-149
                          : type == ElementType::kF16 ? 0x1p-24
                                                      : 0x1p-133;  // bf16
  return std::ldexp(deviate, -44) + type_step + smallest;
}

// Normal samples: every element within NormalTolerance, and for types
// narrower than f64 (where rounding hides the last bits of the double) at
// most one element in a hundred not equal.
void ExpectNormalClose(const Literal& want, const Literal& got, double mean, const std::string& what) {
  ASSERT_EQ(want.element_count(), got.element_count()) << what;
  const ElementType type = want.shape().element_type();
  int64_t unequal = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double a = want.GetAsDouble(i);
    const double b = got.GetAsDouble(i);
    ASSERT_TRUE(std::isfinite(a) && std::isfinite(b)) << what << ": element " << i << " " << a << " vs " << b;
    ASSERT_LE(std::fabs(a - b), NormalTolerance(type, mean, a, b))
        << what << ": element " << i << " " << a << " vs " << b;
    if (a != b) ++unequal;
  }
  if (type != ElementType::kF64) {
    EXPECT_LE(unequal * 100, want.element_count()) << what;
  }
}

// The cpu's results of `text` are the interpreter's (byte for byte, or for
// the leaves in `normal_leaves`, samples of mean `mean`, within
// ExpectNormalClose's bound), the same bytes on 1, 2 and 4 threads, and the
// cpu program runs its `rng_ops` rng ops natively.
void ExpectInterpreterNumbers(const std::string& text, int rng_ops, uint64_t seed,
                              const std::vector<size_t>& normal_leaves = {}, double mean = 0) {
  std::unique_ptr<Module> module = testing::ParseOrDie(text);
  ASSERT_NE(module, nullptr) << text;
  EXPECT_EQ(testing::CountThunks(text, "rng"), rng_ops) << text;
  EXPECT_EQ(testing::CountThunks(text, "library"), 0) << text;
  interpreter::InterpreterBackend reference;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> want, RunSeeded(reference, *module, seed, 0));
  std::vector<Literal> one_thread;
  for (int threads : {1, 2, 4}) {
    CpuBackend cpu;
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> got, RunSeeded(cpu, *module, seed, threads));
    ASSERT_EQ(got.size(), want.size()) << text;
    for (size_t leaf = 0; leaf < want.size(); ++leaf) {
      std::ostringstream what;
      what << text << "seed " << seed << ", " << threads << " threads, result " << leaf;
      if (std::find(normal_leaves.begin(), normal_leaves.end(), leaf) != normal_leaves.end()) {
        ExpectNormalClose(want[leaf], got[leaf], mean, what.str());
      } else {
        ExpectSameRngBytes(want[leaf].raw(), got[leaf].raw(), what.str());
      }
      if (threads == 1) continue;
      ExpectSameRngBytes(one_thread[leaf].raw(), got[leaf].raw(), what.str() + " against 1 thread");
    }
    if (threads == 1) one_thread = std::move(got);
  }
}

const char* const kOddDims[] = {"[]", "[1]", "[7]", "[3,5]", "[2,3,43]", "[0]", "[4,0]", "[100003]"};

TEST(RuntimeRngTest, UniformFloatsAreTheInterpreters) {
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (const char* dims : kOddDims) {
      ExpectInterpreterNumbers(RngOpText({type, dims, "-1.5", "2.25"}), 1, 42);
      if (HasFatalFailure()) return;
    }
    // The unit interval, a degenerate one and a reversed one.
    ExpectInterpreterNumbers(RngOpText({type, "[999]", "0", "1"}), 1, 7);
    ExpectInterpreterNumbers(RngOpText({type, "[999]", "3", "3"}), 1, 7);
    ExpectInterpreterNumbers(RngOpText({type, "[999]", "2", "-2"}), 1, 7);
    if (HasFatalFailure()) return;
  }
}

TEST(RuntimeRngTest, NormalFloatsAreCloseToTheInterpreters) {
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (const char* dims : kOddDims) {
      ExpectInterpreterNumbers(RngOpText({type, dims, "0.5", "3", true}), 1, 1234, {0}, 0.5);
      if (HasFatalFailure()) return;
    }
    ExpectInterpreterNumbers(RngOpText({type, "[4097]", "0", "1", true}), 1, 0, {0}, 0);
    // Far from zero: the mean dominates.
    ExpectInterpreterNumbers(RngOpText({type, "[999]", "-100", "0.125", true}), 1, 5, {0}, -100);
    if (HasFatalFailure()) return;
  }
}

TEST(RuntimeRngTest, UniformIntegersAreTheInterpreters) {
  for (const char* type : {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}) {
    for (const char* dims : {"[]", "[9]", "[5,7]", "[70001]"}) {
      ExpectInterpreterNumbers(RngOpText({type, dims, "3", "100"}), 1, 99);
      if (HasFatalFailure()) return;
    }
    // An empty range takes no draw: every element is the low bound.
    ExpectInterpreterNumbers(RngOpText({type, "[33]", "5", "5"}), 1, 99);
    if (HasFatalFailure()) return;
  }
  ExpectInterpreterNumbers(RngOpText({"s32", "[1001]", "-2000000000", "2000000000"}), 1, 3);
  ExpectInterpreterNumbers(RngOpText({"s64", "[1001]", "-9000000000000000000", "9000000000000000000"}), 1, 3);
  ExpectInterpreterNumbers(RngOpText({"u64", "[1001]", "1", "18446744073709551615"}), 1, 3);
  ExpectInterpreterNumbers(RngOpText({"s8", "[1001]", "-128", "127"}), 1, 3);
}

// Three rng ops and a loop whose body draws each trip: every op continues
// the stream where the previous one left it, as in the interpreter.
TEST(RuntimeRngTest, OpsOfOneExecutionShareItsStream) {
  const std::string text = R"(HloModule m
body {
  p = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  draw = f32[5] rng(lo, hi), distribution=rng_uniform
  sum = f32[5] get-tuple-element(p), index=1
  more = f32[5] add(sum, draw)
  ROOT t = (s32[], f32[5]) tuple(next, more)
}
cond {
  p = (s32[], f32[5]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  trips = s32[] constant(3)
  ROOT lt = pred[] compare(i, trips), direction=LT
}
ENTRY e {
  lo = f32[] constant(-2)
  hi = f32[] constant(3)
  u = f32[1000] rng(lo, hi), distribution=rng_uniform
  mean = f64[] constant(1)
  deviation = f64[] constant(0.5)
  n = f64[333] rng(mean, deviation), distribution=rng_normal
  low = s32[] constant(0)
  high = s32[] constant(10)
  k = s32[77] rng(low, high), distribution=rng_uniform
  zero = s32[] constant(0)
  zeros = f32[5] broadcast(lo), dimensions={}
  init = (s32[], f32[5]) tuple(zero, zeros)
  w = (s32[], f32[5]) while(init), condition=cond, body=body
  sums = f32[5] get-tuple-element(w), index=1
  ROOT out = (f32[1000], f64[333], s32[77], f32[5]) tuple(u, n, k, sums)
}
)";
  for (uint64_t seed : {0ull, 5ull, 0xFFFFFFFFFFFFFFFFull}) {
    ExpectInterpreterNumbers(text, 4, seed, {1}, 1.0);
    if (HasFatalFailure()) return;
  }
}

// GenerateRng itself: every instruction set's lane loops, on the calling
// thread and on pools of 1, 2 and 4 threads, from a stream that has already
// been drawn from, give the interpreter's numbers (normal: within the bound,
// and the same bytes whatever the pool) and count its draws.
TEST(RuntimeRngTest, EveryIsaAndThreadCountGiveTheSameNumbers) {
  struct Case {
    RngOpCase op;
    uint64_t draws_per_element;
  };
  const Case cases[] = {
      {{"f32", "[50001]", "-1", "1"}, 1},         {{"f64", "[50001]", "2", "0.25", true}, 2},
      {{"f32", "[20011]", "0", "1", true}, 2},    {{"bf16", "[20011]", "-4", "4"}, 1},
      {{"f16", "[20011]", "1", "2", true}, 2},    {{"u32", "[40009]", "7", "70000"}, 1},
      {{"s64", "[40009]", "-5", "1000000007"}, 1}};
  constexpr uint64_t kSeed = 0x0123456789ABCDEFull;
  constexpr uint64_t kDrawnBefore = 12345;  // an earlier op's draws
  IntraOpThreadPool one(1), two(2), four(4);
  const IntraOpThreadPool* const pools[] = {nullptr, &one, &two, &four};
  for (const Case& c : cases) {
    const std::string text = RngOpText(c.op);
    std::unique_ptr<Module> module = testing::ParseOrDie(text);
    ASSERT_NE(module, nullptr);
    const Instruction& rng = *module->entry()->root();
    std::optional<RngPlan> plan = PlanRng(rng);
    ASSERT_TRUE(plan.has_value()) << text;
    // The interpreter's stream, advanced as an earlier op would have.
    interpreter::RngStream stream{kSeed, 0};
    for (uint64_t i = 0; i < kDrawnBefore; ++i) stream.Next();
    ASSERT_TRUE(rng.operand(0)->literal.has_value() && rng.operand(1)->literal.has_value()) << text;
    const Literal& low = *rng.operand(0)->literal;
    const Literal& high = *rng.operand(1)->literal;
    // The interpreter's numbers for the same stream position: run the op
    // on an interpreter whose stream starts kDrawnBefore draws in.
    std::vector<uint8_t> want;
    Literal want_values;
    {
      interpreter::RngStream reference = stream;
      interpreter::EvalContext context;
      context.rng = &reference;
      const Literal* const bounds[] = {&low, &high};
      KILN_ASSERT_OK_AND_ASSIGN(Literal values, interpreter::EvaluateRng(rng, bounds, context));
      want.assign(values.raw().begin(), values.raw().end());
      want_values = values;
      ASSERT_EQ(static_cast<int64_t>(want.size()), plan->element_count * ByteWidth(plan->type)) << text;
      EXPECT_EQ(reference.counter - stream.counter,
                c.draws_per_element * static_cast<uint64_t>(plan->element_count))
          << text;
    }
    for (RngVectorIsa isa : SupportedRngVectorIsas()) {
      std::vector<uint8_t> caller_only;  // this ISA's bytes on the calling thread
      for (const IntraOpThreadPool* pool : pools) {
        std::vector<uint8_t> got(want.size(), 0xA5);
        const uint64_t draws = GenerateRng(*plan, low.raw().data(), high.raw().data(), stream.key,
                                           stream.counter, got.data(), isa, pool);
        std::ostringstream what;
        what << text << "isa " << static_cast<int>(isa) << ", " << (pool == nullptr ? 0 : pool->num_threads())
             << " pool threads";
        EXPECT_EQ(draws, c.draws_per_element * static_cast<uint64_t>(plan->element_count)) << what.str();
        if (plan->normal) {
          KILN_ASSERT_OK_AND_ASSIGN(Literal values, Literal::FromBytes(rng.shape, got));
          ExpectNormalClose(want_values, values, low.GetAsDouble(0), what.str());
          if (pool == nullptr) caller_only = got;
          ExpectSameRngBytes(caller_only, got, what.str() + " against the calling thread alone");
        } else {
          ExpectSameRngBytes(want, got, what.str());
        }
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(RuntimeRngTest, VectorUnitIntervalIsTheSharedOne) {
  std::vector<uint64_t> draws = {0,
                                 1,
                                 (uint64_t{1} << 11) - 1,
                                 uint64_t{1} << 11,
                                 uint64_t{1} << 43,
                                 (uint64_t{1} << 43) - 1,
                                 uint64_t{1} << 63,
                                 ~uint64_t{0},
                                 ~uint64_t{0} << 11,
                                 0x8000000000000800ull,
                                 0x00000FFFFFFFF800ull};
  for (uint64_t i = 1; i <= 100000; ++i) draws.push_back(RngStreamDraw(0x5EED, i));
  for (uint64_t draw : draws) {
    const double want = RngUnitInterval(draw);
    const double got = RngVectorUnitInterval(draw);
    ASSERT_EQ(std::memcmp(&want, &got, sizeof(double)), 0)
        << "draw " << draw << ": " << want << " vs " << got;
  }
}

}  // namespace
}  // namespace kiln::cpu
