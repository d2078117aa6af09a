#include "backends/vulkan/glsl_f32_exp_log.h"

#include "backends/vulkan/glsl_trig.h"
#include "backends/vulkan/glsl_typed_helper.h"

namespace kiln::vulkan {
namespace {

// exp and log, Kiln's own: Vulkan bounds GLSL's exp only to 3 + 2|x| ulps
// and log to 2^-21 absolute in [0.5, 2] (log(1 + 1e-4) may be 0.5% off).
// exp(x) = exp(r) 2^n, x = n ln 2 + r, |r| <= ln 2 / 2: ln 2 in two parts,
// the first of 16 bits, so that n times it (|n| <= 150) and x less that are
// exact; Taylor's series to r^8 (the next term is under 2e-10 of the
// result); 2^n as two products with normal powers of two (their bits), so
// a subnormal result is rounded once (GLSL's ldexp may flush it; lavapipe's
// exp gave exp(-100) = 0, not 3.8e-44). k_expr(r, k) is exp(r) 2^k.
constexpr const char* kF32Exp = R"($T k_expr_$N($T r, int k) {
  $T p = 1.0 + r * (1.0 + r * (0.5 + r * (0.166666672 + r * (0.0416666679 + r * (0.00833333377 +
         r * (0.00138888892 + r * (1.98412701e-4 + r * 2.48015876e-5)))))));
  int half_k = k / 2;
  precise $T scaled = p * uintBitsToFloat(uint(half_k + 127) << 23);
  return scaled * uintBitsToFloat(uint(k - half_k + 127) << 23);
}
$T k_exp_$N($T x) {
  if (isnan(x)) return x;
  if (x > 88.7228317) return $INF;
  if (x < -104.0) return $Z;
  $T n = roundEven(x * 1.44269502);
  precise $T r = (x - n * 0.693145752) - n * 1.42860677e-6;
  return k_expr_$N(r, int(n));
}
)";
// x = 2^e m with m in [sqrt(1/2), sqrt(2)), for a finite x > 0 given by
// its bits (log and pow's common first step); a subnormal x is read as an
// integer, exactly whether or not the device flushes subnormals.
constexpr const char* kF32SplitExponent = R"(void k_split_exponent_$N(uint bits, out int e, out $T m) {
  e = int(bits >> 23) - 127;
  if (e == -127) {
    bits = floatBitsToUint(float(bits & 0x7fffffu));
    e = int(bits >> 23) - 127 - 149;
  }
  m = uintBitsToFloat((bits & 0x7fffffu) | 0x3f800000u);
  if (m > 1.41421354) {
    m *= 0.5;
    e += 1;
  }
}
)";
// log x = e ln 2 + log(1 + f), x = 2^e (1 + f), 1 + f in [sqrt(1/2),
// sqrt(2)); a subnormal x is read from its bits as an integer (exactly,
// whether or not the device flushes). With s = f / (2 + f), log(1 + f) =
// 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R)), R = 2s^2/3 + 2s^4/5 + ... (to
// s^10; |s| <= 0.172, the next term is under 5e-11 of the result): s's
// rounding touches only the small term. C's answers for 0, negatives and
// infinities; zero is told by its bits (a flushing device's subnormal
// compares equal to 0).
constexpr const char* kF32Log = R"($T k_log_$N($T x) {
  uint bits = floatBitsToUint(x);
  if (isnan(x)) return x;
  if ((bits & 0x7fffffffu) == 0u) return -$INF;
  if ((bits & 0x80000000u) != 0u) return $NAN;
  if (isinf(x)) return x;
  int e;
  $T m;
  k_split_exponent_$N(bits, e, m);
  $T f = m - 1.0;
  $T s = f / (2.0 + f);
  $T z = s * s;
  $T big_r = z * (0.666666687 + z * (0.400000006 + z * (0.285714298 + z * (0.222222224 + z * 0.181818187))));
  $T half_f2 = 0.5 * f * f;
  $T de = $T(e);
  precise $T small = s * (half_f2 + big_r) + de * 1.42860677e-6;
  precise $T result = de * 0.693145752 - ((half_f2 - small) - f);
  return result;
}
)";
// expm1 and log1p by their series near 0, where exp(x) - 1 and log(1 + x)
// lose x's digits: GLSL's exp and log are not exact enough near 1 (lavapipe's
// err by about 1e-7 absolute) for the usual (u - 1) x / log(u) correction.
// Taylor's series below 1/2; log1p as 2 atanh(s), s = x / (2 + x) (|s| <
// 1/7), below 1/4, and x itself below 2^-24 (x^2 / 2 is under half an ulp
// of x there), where x / (2 + x) would round a subnormal x first
// (log1p(1.4e-45) gave 0).
constexpr const char* kF32Expm1 = R"($T k_expm1_$N($T x) {
  if (abs(x) < 0.5) {
    return x * (1.0 + x * (0.5 + x * (0.16666667 + x * (0.041666668 + x * (0.0083333338 + x * (0.0013888889 +
           x * (1.9841270e-4 + x * (2.4801587e-5 + x * 2.7557319e-6))))))));
  }
  $T u = k_exp_$N(x);
  return isinf(u) ? u : u - $ONE;
}
)";
constexpr const char* kF32Log1p = R"($T k_log1p_$N($T x) {
  if (abs(x) < 5.9604645e-8) return x;
  if (abs(x) < 0.25) {
    $T s = x / (2.0 + x);
    $T s2 = s * s;
    return 2.0 * s * (1.0 + s2 * (0.33333334 + s2 * (0.2 + s2 * (0.14285715 + s2 * (0.11111111 +
           s2 * 0.09090909)))));
  }
  return k_log_$N($ONE + x);
}
)";
// pow(a, y) for finite a > 0 and y != 0 as exp(y log a), not GLSL's pow
// (Vulkan's bound is exp2's of y log2(a), which grows with the result's
// exponent: lavapipe's was 149 ulps off). log a as a pair hi + lo good to
// about 2^-45 (kF32Log's terms summed with their rounding errors: Knuth's
// TwoSum, f^2 by Veltkamp's split and Dekker's product), y times it as a
// pair (the same product), and exp of the pair through k_expr. A subnormal
// a is read from its bits as an integer, as in kF32Log.
constexpr const char* kF32PowPositive = R"(void k_two_sum_$N($T a, $T b, out $T s, out $T err) {
  precise $T sum = a + b;
  precise $T b_part = sum - a;
  precise $T e = (a - (sum - b_part)) + (b - b_part);
  s = sum;
  err = e;
}
void k_two_product_$N($T a, $T b, out $T p, out $T err) {
  precise $T product = a * b;
  p = product;
  err = k_fproduct_error(a, b, product);
}
$T k_powpos_$N($T a, $T y) {
  uint bits = floatBitsToUint(a);
  int e;
  $T m;
  k_split_exponent_$N(bits, e, m);
  $T f = m - 1.0;
  // s = f / (2 + f) and what its roundings left out, s_lo.
  precise $T d = 2.0 + f;
  precise $T d_lo = (2.0 - d) + f;
  $T s = f / d;
  $T sd, sd_lo;
  k_two_product_$N(s, d, sd, sd_lo);
  precise $T s_lo = (((f - sd) - sd_lo) - s * d_lo) / d;
  $T z = s * s;
  $T big_r = z * (0.666666687 + z * (0.400000006 + z * (0.285714298 + z * (0.222222224 + z * 0.181818187))));
  $T de = $T(e);
  $T sq, sq_lo, t1, e1, t2, e2, tail, tail_lo;
  k_two_product_$N(f, f, sq, sq_lo);
  k_two_product_$N(s, 0.5 * sq + big_r, tail, tail_lo);
  k_two_sum_$N(f, -0.5 * sq, t1, e1);
  k_two_sum_$N(de * 0.693145752, t1, t2, e2);
  $T t3, e3;
  k_two_sum_$N(t2, tail, t3, e3);
  precise $T small = ((e1 + e2) + e3 - 0.5 * sq_lo) +
                     (((tail_lo + s_lo * (0.5 * sq + big_r)) + s * 0.5 * sq_lo) + de * 1.42860677e-6);
  precise $T log_hi = t3 + small;
  precise $T log_lo = small - (log_hi - t3);
  $T p = y * log_hi;
  if (p > 89.0) return $INF;
  if (p < -104.0) return $Z;
  $T p_lo;
  k_two_product_$N(y, log_hi, p, p_lo);
  $T n = roundEven(p * 1.44269502);
  precise $T r = ((p - n * 0.693145752) - n * 1.42860677e-6) + (p_lo + y * log_lo);
  return k_expr_$N(r, int(n));
}
)";
// C's pow: defined for negative bases with integer exponents, 0 and inf bases.
constexpr const char* kF32Pow = R"($T k_pow_$N($T x, $T y) {
  if (y == $Z || x == $ONE) return $ONE;
  if (isnan(x) || isnan(y)) return x + y;
  $T ax = abs(x);
  if (isinf(y)) {
    if (ax == $ONE) return $ONE;
    return ((ax > $ONE) == (y > $Z)) ? $INF : $Z;
  }
  bool y_int = floor(y) == y;
  bool y_odd = y_int && abs(y) < 16777216.0 && mod(y, 2.0) == 1.0;
  bool negative = (floatBitsToUint(x) & 0x80000000u) != 0u;
  if (ax == $Z || isinf(x)) {
    $T r = ((ax == $Z) == (y < $Z)) ? $INF : $Z;
    return (negative && y_odd) ? -r : r;
  }
  if (negative && !y_int) return $NAN;
  $T r = k_powpos_$N(ax, y);
  return (negative && y_odd) ? -r : r;
}
)";

}  // namespace

std::string F32ExpCall(GlslPrelude& prelude, ElementType type, const std::string& args) {
  return TypedHelperCall(prelude, "k_exp_$N", type, kF32Exp, args);
}

std::string F32Expm1Call(GlslPrelude& prelude, ElementType type, const std::string& args) {
  F32ExpCall(prelude, type, "x");
  return TypedHelperCall(prelude, "k_expm1_$N", type, kF32Expm1, args);
}

std::string F32LogCall(GlslPrelude& prelude, ElementType type, const std::string& args) {
  TypedHelperCall(prelude, "k_split_exponent_$N", type, kF32SplitExponent, "");
  return TypedHelperCall(prelude, "k_log_$N", type, kF32Log, args);
}

std::string F32Log1pCall(GlslPrelude& prelude, ElementType type, const std::string& args) {
  F32LogCall(prelude, type, "x");
  return TypedHelperCall(prelude, "k_log1p_$N", type, kF32Log1p, args);
}

std::string F32PowCall(GlslPrelude& prelude, ElementType type, const std::string& args) {
  F32ExpCall(prelude, type, "x");
  TypedHelperCall(prelude, "k_split_exponent_$N", type, kF32SplitExponent, "");
  NeedF32ProductError(prelude);
  TypedHelperCall(prelude, "k_powpos_$N", type, kF32PowPositive, "a, y");
  return TypedHelperCall(prelude, "k_pow_$N", type, kF32Pow, args);
}

}  // namespace kiln::vulkan
