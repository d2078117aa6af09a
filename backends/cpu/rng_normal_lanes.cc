// Box-Muller in vector lanes for the rng thunk's normal samples, compiled
// here once per x86 target Highway dispatches to (hwy/foreach_target.h).
// It is the interpreter's formula (core/rng_stream.h RngNormalFromUnits),
// operation for operation, with Highway's Log and Cos (at most 4 and 3 ulp
// from the exact values, Highway's stated bounds) in place of libm's, which
// took four fifths of a scalar loop's time: samples can differ from the
// interpreter's in their last bits (runtime_rng_test.cc states the bound).
#include "backends/cpu/rng_normal_lanes.h"

#include <numbers>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/rng_normal_lanes.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// Included on every pass: its per-target guard needs it.
#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace kiln::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE V BoxMullerVector(D d, V first_units, V second_units, V mean, V deviation) {
  const V u1 = hn::Sub(hn::Set(d, 1.0), first_units);  // in (0, 1]
  const V radius = hn::Sqrt(hn::Mul(hn::Set(d, -2.0), hn::Log(d, u1)));
  const V angle = hn::Cos(d, hn::Mul(hn::Set(d, 2.0 * std::numbers::pi), second_units));
  return hn::Add(mean, hn::Mul(hn::Mul(deviation, radius), angle));
}

void KilnRngBoxMullerLanes(const double* first_units, const double* second_units, int64_t count, double mean,
                           double deviation, double* out) {
  const hn::ScalableTag<double> d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto mean_vector = hn::Set(d, mean);
  const auto deviation_vector = hn::Set(d, deviation);
  int64_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const auto sample = BoxMullerVector(d, hn::LoadU(d, first_units + i), hn::LoadU(d, second_units + i),
                                        mean_vector, deviation_vector);
    hn::StoreU(sample, d, out + i);
  }
  if (i == count) return;
  // The last partial vector, through buffers padded with units whose
  // samples are finite and then dropped.
  HWY_ALIGN double first[hn::MaxLanes(d)];
  HWY_ALIGN double second[hn::MaxLanes(d)];
  HWY_ALIGN double samples[hn::MaxLanes(d)];
  for (int64_t lane = 0; lane < lanes; ++lane) {
    first[lane] = i + lane < count ? first_units[i + lane] : 0.5;
    second[lane] = i + lane < count ? second_units[i + lane] : 0.5;
  }
  hn::Store(BoxMullerVector(d, hn::Load(d, first), hn::Load(d, second), mean_vector, deviation_vector), d,
            samples);
  for (int64_t lane = 0; i + lane < count; ++lane) out[i + lane] = samples[lane];
}

}  // namespace HWY_NAMESPACE
}  // namespace kiln::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kiln::cpu {

RngBoxMullerFunction RngBoxMullerFor(RngVectorIsa isa) {
  // The best target compiled here, at most `isa`, that Highway says the CPU
  // runs (its AVX3 and AVX2 need more than AVX-512F/AVX2 alone). Called once
  // per op: SupportedTargets runs CPUID, slow in a virtual machine.
  const int64_t supported = hwy::SupportedTargets();
  (void)supported;
#if HWY_TARGETS & HWY_AVX3
  if (isa == RngVectorIsa::kAvx512 && (supported & HWY_AVX3) != 0) return &N_AVX3::KilnRngBoxMullerLanes;
#endif
#if HWY_TARGETS & HWY_AVX2
  if (isa != RngVectorIsa::kBaseline && (supported & HWY_AVX2) != 0) return &N_AVX2::KilnRngBoxMullerLanes;
#endif
#if HWY_TARGETS & HWY_SSE4
  if (isa != RngVectorIsa::kBaseline && (supported & HWY_SSE4) != 0) return &N_SSE4::KilnRngBoxMullerLanes;
#endif
  return &HWY_STATIC_DISPATCH(KilnRngBoxMullerLanes);
}

}  // namespace kiln::cpu
#endif  // HWY_ONCE
