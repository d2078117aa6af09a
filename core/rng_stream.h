// The generator of the `rng` op (distribution=rng_uniform / rng_normal): one
// counter-based stream per execution, keyed by ExecuteOptions::rng_seed.
// Draw number c (1, 2, ...) of an execution is SplitMix64's output for
// key + c * 0x9e37...15, a pure function of (key, c): a range of draws can be
// computed on any thread, in any order, and gives the same numbers.
//
// The reference interpreter takes the draws one after another
// (interpreter::RngStream); the cpu backend's rng thunk computes an op's
// whole range at once, over threads and vector lanes. Both turn draws into
// units and uniform elements with the functions here, so those are equal
// bit for bit (the files that call them are compiled with
// -ffp-contract=off: a multiply-add fused in one and not in the other would
// round differently). Normal elements follow RngNormalFromUnits on the same
// units; the cpu's vector log and cos may differ from libm's in the last
// bits (backends/cpu/rng_normal_lanes.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "core/literal_convert.h"

namespace kiln {

// Draw number `counter` (the first is 1) of the stream keyed `key`.
inline uint64_t RngStreamDraw(uint64_t key, uint64_t counter) {
  uint64_t z = key + 0x9e3779b97f4a7c15ULL * counter;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A double in [0, 1) from the top 53 bits of a draw.
inline double RngUnitInterval(uint64_t draw) { return static_cast<double>(draw >> 11) * 0x1.0p-53; }

// An element of a uniform float rng over [low, high) from one draw's unit:
// low + (high - low) * unit rounded to T, but `low` where that rounding
// reaches `high` (the interval stays half-open). Vector loops check
// `high > low` once and then apply the two steps themselves.
template <typename T>
T RngUniformRounded(double low, double high, double unit) {
  return static_cast<T>(low + (high - low) * unit);
}
template <typename T>
bool RngReachesHigh(T value, double high) {
  return ConvertElement<double>(value) >= high;
}
template <typename T>
T RngUniformFloat(double low, double high, double unit) {
  const T value = RngUniformRounded<T>(low, high, unit);
  return high > low && RngReachesHigh(value, high) ? static_cast<T>(low) : value;
}

// An element of a normal rng (Box-Muller) with mean `mean` and standard
// deviation `deviation`, from the units of its two draws in order.
inline double RngNormalFromUnits(double mean, double deviation, double first_unit, double second_unit) {
  const double u1 = 1.0 - first_unit;  // in (0, 1]: log(u1) is finite
  return mean + deviation * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * second_unit);
}

// The span of a uniform integer rng over [low, high); 0 when empty, and an
// empty span takes no draw (every element is `low`).
inline uint64_t RngIntegerSpan(int64_t low, int64_t high) {
  return high > low ? static_cast<uint64_t>(high) - static_cast<uint64_t>(low) : 0;
}

// An element of a uniform integer rng with a non-zero span from one draw.
template <typename T>
T RngUniformInteger(int64_t low, uint64_t span, uint64_t draw) {
  return static_cast<T>(static_cast<uint64_t>(low) + draw % span);
}

}  // namespace kiln
