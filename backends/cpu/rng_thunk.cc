#include "backends/cpu/rng_thunk.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <type_traits>

#include "backends/cpu/library_thunk.h"
#include "backends/cpu/rng_normal_lanes.h"
#include "backends/cpu/thread_pool.h"
#include "core/rng_stream.h"

namespace kiln::cpu {
namespace {

// Elements computed together: their draws (or units) sit in an array this
// long on the stack, filled by whole vector registers.
constexpr int64_t kRngChunk = 256;

// Elements one task of the thread pool takes at least (tens of
// microseconds each: a uniform element costs about a nanosecond, a normal
// one a few).
constexpr int64_t kRngUniformElementsPerTask = 16384;
constexpr int64_t kRngNormalElementsPerTask = 4096;

constexpr uint64_t kRngTwoTo52Bits = 0x4330000000000000ull;  // 2^52 as a double's bits

[[gnu::always_inline]] inline double VectorUnit(uint64_t draw) {
  const uint64_t bits = draw >> 11;  // 53 bits
  // 2^52 + n has n in its low mantissa bits for n < 2^52; subtracting 2^52
  // leaves n exactly. (high * 2^32 + low) < 2^53 is exact, as is * 2^-53.
  const double high = std::bit_cast<double>(kRngTwoTo52Bits | (bits >> 32)) - 0x1p52;
  const double low = std::bit_cast<double>(kRngTwoTo52Bits | (bits & 0xffffffffull)) - 0x1p52;
  return (high * 0x1p32 + low) * 0x1p-53;
}

// The lane loops, compiled once per instruction set below: draws number
// first .. first + count - 1 of the stream, as draws, as units, or mapped
// to uniform f32 / f64 elements.
[[gnu::always_inline]] inline void DrawLanes(uint64_t key, uint64_t first, int64_t count,
                                             uint64_t* __restrict draws) {
  for (int64_t i = 0; i < count; ++i) draws[i] = RngStreamDraw(key, first + static_cast<uint64_t>(i));
}

[[gnu::always_inline]] inline void UnitLanes(uint64_t key, uint64_t first, int64_t count,
                                             double* __restrict units) {
  for (int64_t i = 0; i < count; ++i)
    units[i] = VectorUnit(RngStreamDraw(key, first + static_cast<uint64_t>(i)));
}

// The units of normal elements 0 .. count - 1 whose draws start at `first`:
// element i's first and second draws are first + 2i and first + 2i + 1.
[[gnu::always_inline]] inline void NormalUnitLanes(uint64_t key, uint64_t first, int64_t count,
                                                   double* __restrict first_units,
                                                   double* __restrict second_units) {
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t draw = first + 2 * static_cast<uint64_t>(i);
    first_units[i] = VectorUnit(RngStreamDraw(key, draw));
    second_units[i] = VectorUnit(RngStreamDraw(key, draw + 1));
  }
}

// RngUniformFloat's two steps, with `high > low` checked once: a loop with
// that check inside stays scalar.
template <typename T>
[[gnu::always_inline]] inline void UniformLanes(uint64_t key, uint64_t first, int64_t count, double low,
                                                double high, T* __restrict out) {
  if (high > low) {
    const T replacement = static_cast<T>(low);
    for (int64_t i = 0; i < count; ++i) {
      const T value =
          RngUniformRounded<T>(low, high, VectorUnit(RngStreamDraw(key, first + static_cast<uint64_t>(i))));
      out[i] = RngReachesHigh(value, high) ? replacement : value;
    }
  } else {
    for (int64_t i = 0; i < count; ++i)
      out[i] =
          RngUniformRounded<T>(low, high, VectorUnit(RngStreamDraw(key, first + static_cast<uint64_t>(i))));
  }
}

struct RngLaneKernels {
  void (*draws)(uint64_t, uint64_t, int64_t, uint64_t*);
  void (*units)(uint64_t, uint64_t, int64_t, double*);
  void (*normal_units)(uint64_t, uint64_t, int64_t, double*, double*);
  void (*uniform_f32)(uint64_t, uint64_t, int64_t, double, double, float*);
  void (*uniform_f64)(uint64_t, uint64_t, int64_t, double, double, double*);
};

// One set of lane loops per instruction set: the same source, compiled for it.
#define KILN_RNG_LANE_KERNELS(SUFFIX, TARGET)                                                             \
  TARGET void RngDraws##SUFFIX(uint64_t key, uint64_t first, int64_t count, uint64_t* draws) {            \
    DrawLanes(key, first, count, draws);                                                                  \
  }                                                                                                       \
  TARGET void RngUnits##SUFFIX(uint64_t key, uint64_t first, int64_t count, double* units) {              \
    UnitLanes(key, first, count, units);                                                                  \
  }                                                                                                       \
  TARGET void RngNormalUnits##SUFFIX(uint64_t key, uint64_t first, int64_t count, double* first_units,    \
                                     double* second_units) {                                              \
    NormalUnitLanes(key, first, count, first_units, second_units);                                        \
  }                                                                                                       \
  TARGET void RngUniformF32##SUFFIX(uint64_t key, uint64_t first, int64_t count, double low, double high, \
                                    float* out) {                                                         \
    UniformLanes<float>(key, first, count, low, high, out);                                               \
  }                                                                                                       \
  TARGET void RngUniformF64##SUFFIX(uint64_t key, uint64_t first, int64_t count, double low, double high, \
                                    double* out) {                                                        \
    UniformLanes<double>(key, first, count, low, high, out);                                              \
  }

KILN_RNG_LANE_KERNELS(Baseline, )
#if defined(__x86_64__)
KILN_RNG_LANE_KERNELS(Avx2, __attribute__((target("avx2"))))
KILN_RNG_LANE_KERNELS(Avx512, __attribute__((target("avx512f,avx512vl,avx512dq"))))
#endif
#undef KILN_RNG_LANE_KERNELS

RngLaneKernels RngKernelsFor(RngVectorIsa isa) {
#if defined(__x86_64__)
  if (isa == RngVectorIsa::kAvx512)
    return {RngDrawsAvx512, RngUnitsAvx512, RngNormalUnitsAvx512, RngUniformF32Avx512, RngUniformF64Avx512};
  if (isa == RngVectorIsa::kAvx2)
    return {RngDrawsAvx2, RngUnitsAvx2, RngNormalUnitsAvx2, RngUniformF32Avx2, RngUniformF64Avx2};
#endif
  (void)isa;
  return {RngDrawsBaseline, RngUnitsBaseline, RngNormalUnitsBaseline, RngUniformF32Baseline,
          RngUniformF64Baseline};
}

// A bound as the interpreter reads it (Literal::GetAsDouble / GetAsInt64).
template <typename T>
double RngBoundAsDouble(const void* bound) {
  return ConvertElement<double>(*static_cast<const T*>(bound));
}
template <typename T>
int64_t RngBoundAsInt64(const void* bound) {
  const T value = *static_cast<const T*>(bound);
  if constexpr (std::is_same_v<T, uint64_t>) {
    return static_cast<int64_t>(value);
  } else {
    return ConvertElement<int64_t>(value);
  }
}

// Elements [begin, end) of a float rng whose element 0 takes draw `first`
// (and `first + 1` when normal).
template <typename T>
void GenerateFloatRange(const RngLaneKernels& kernels, RngBoxMullerFunction box_muller, bool normal,
                        uint64_t key, uint64_t first, double low, double high, T* out, int64_t begin,
                        int64_t end) {
  double units[kRngChunk];
  double second_units[kRngChunk];
  double samples[kRngChunk];
  for (int64_t chunk = begin; chunk < end; chunk += kRngChunk) {
    const int64_t count = std::min(kRngChunk, end - chunk);
    T* chunk_out = out + chunk;
    if (normal) {
      kernels.normal_units(key, first + 2 * static_cast<uint64_t>(chunk), count, units, second_units);
      box_muller(units, second_units, count, low, high, samples);
      for (int64_t i = 0; i < count; ++i) chunk_out[i] = static_cast<T>(samples[i]);
    } else if constexpr (std::is_same_v<T, float>) {
      kernels.uniform_f32(key, first + static_cast<uint64_t>(chunk), count, low, high, chunk_out);
    } else if constexpr (std::is_same_v<T, double>) {
      kernels.uniform_f64(key, first + static_cast<uint64_t>(chunk), count, low, high, chunk_out);
    } else {
      kernels.units(key, first + static_cast<uint64_t>(chunk), count, units);
      for (int64_t i = 0; i < count; ++i) chunk_out[i] = RngUniformFloat<T>(low, high, units[i]);
    }
  }
}

template <typename T>
void GenerateIntegerRange(const RngLaneKernels& kernels, uint64_t key, uint64_t first, int64_t low,
                          uint64_t span, T* out, int64_t begin, int64_t end) {
  uint64_t draws[kRngChunk];
  for (int64_t chunk = begin; chunk < end; chunk += kRngChunk) {
    const int64_t count = std::min(kRngChunk, end - chunk);
    kernels.draws(key, first + static_cast<uint64_t>(chunk), count, draws);
    for (int64_t i = 0; i < count; ++i) out[chunk + i] = RngUniformInteger<T>(low, span, draws[i]);
  }
}

void RunRanges(int64_t count, int64_t grain, const IntraOpThreadPool* pool,
               const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  if (pool == nullptr || pool->num_threads() == 1 || count <= grain) {
    body(0, count);
  } else {
    pool->ParallelFor(count, grain, body);
  }
}

}  // namespace

double RngVectorUnitInterval(uint64_t draw) { return VectorUnit(draw); }

std::optional<RngPlan> PlanRng(const Instruction& rng) {
  if (rng.opcode != Opcode::kRng || rng.operands.size() != 2 || !rng.shape.IsArray()) return std::nullopt;
  const ElementType type = rng.shape.element_type();
  for (const Instruction* bound : rng.operands) {
    if (!bound->shape.IsArray() || bound->shape.element_count() != 1 || bound->shape.element_type() != type)
      return std::nullopt;
  }
  RngPlan plan;
  plan.type = type;
  plan.normal = rng.attrs.rng_distribution == RngDistribution::kNormal;
  plan.element_count = rng.shape.element_count();
  if (!(IsFloating(type) || (IsIntegral(type) && !plan.normal))) return std::nullopt;
  return plan;
}

uint64_t GenerateRng(const RngPlan& plan, const void* low, const void* high, uint64_t key, uint64_t counter,
                     void* out, RngVectorIsa isa, const IntraOpThreadPool* pool) {
  const RngLaneKernels kernels = RngKernelsFor(isa);
  const RngBoxMullerFunction box_muller = plan.normal ? RngBoxMullerFor(isa) : nullptr;
  const uint64_t first = counter + 1;  // draws are numbered from 1
  const int64_t count = plan.element_count;
  return DispatchElementType(plan.type, [&](auto tag) -> uint64_t {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      const double a = RngBoundAsDouble<T>(low);
      const double b = RngBoundAsDouble<T>(high);
      RunRanges(count, plan.normal ? kRngNormalElementsPerTask : kRngUniformElementsPerTask, pool,
                [&](int64_t begin, int64_t end) {
                  GenerateFloatRange<T>(kernels, box_muller, plan.normal, key, first, a, b,
                                        static_cast<T*>(out), begin, end);
                });
      return static_cast<uint64_t>(count) * (plan.normal ? 2 : 1);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const int64_t a = RngBoundAsInt64<T>(low);
      const uint64_t span = RngIntegerSpan(a, RngBoundAsInt64<T>(high));
      auto* elements = static_cast<T*>(out);
      if (span == 0) {
        // An empty range: every element is `low`, and no draw is taken.
        for (int64_t i = 0; i < count; ++i) elements[i] = static_cast<T>(static_cast<uint64_t>(a));
        return 0;
      }
      RunRanges(count, kRngUniformElementsPerTask, pool, [&](int64_t begin, int64_t end) {
        GenerateIntegerRange<T>(kernels, key, first, a, span, elements, begin, end);
      });
      return static_cast<uint64_t>(count);
    } else {
      return 0;  // PlanRng takes no other type
    }
  });
}

Status RngThunk::Run(ExecutionContext& context) const {
  static const RngVectorIsa best = SupportedRngVectorIsas().back();
  interpreter::RngStream& stream = context.library->evaluator().rng_stream();
  stream.counter += GenerateRng(plan_, context.slots[inputs_[0]], context.slots[inputs_[1]], stream.key,
                                stream.counter, context.slots[outputs_[0]], best, context.pool);
  return OkStatus();
}

}  // namespace kiln::cpu
