#include "backends/vulkan/glsl_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "backends/vulkan/glsl_trig.h"

namespace kiln::vulkan {
namespace {

std::string Name(ElementType type) { return std::string(ElementTypeName(type)); }
bool Is64(ElementType type) { return type == ElementType::kS64 || type == ElementType::kU64; }
bool IsDouble(ElementType type) { return type == ElementType::kF64 || type == ElementType::kC128; }
bool IsRealFloat(ElementType type) { return IsFloating(type); }

// Substitutes $T (value type), $U (unsigned type of the computation width),
// $W (bit width of the element type), $Z/$ONE/$NEG1 (literals of $T),
// $MIN (smallest value of a signed type), $N (name suffix).
std::string Fill(std::string text, ElementType type) {
  const bool wide = Is64(type);
  const bool is_float = IsFloating(type) || IsComplex(type);
  const std::string t = GlslValueType(type);
  const std::string u = wide ? "uint64_t" : "uint";
  std::string min = "0";
  if (IsSignedIntegral(type)) min = wide ? "(-9223372036854775807l - 1l)" : "(-2147483647 - 1)";
  const std::pair<const char*, std::string> substitutions[] = {
      {"$T", t},
      {"$U", u},
      {"$W", std::to_string(BitWidth(type))},
      {"$Z", is_float ? FloatLiteral(type, 0.0) : ZeroValue(type)},
      {"$ONE", is_float ? FloatLiteral(type, 1.0) : OneValue(type)},
      {"$NEG1",
       IsSignedIntegral(type) ? IntLiteral(type, -1) : (wide ? "0xfffffffffffffffful" : "0xffffffffu")},
      {"$MIN", min},
      {"$NAN",
       is_float ? FloatLiteral(type == ElementType::kF64 ? type : ElementType::kF32, std::nan("")) : "0"},
      {"$INF", is_float ? FloatLiteral(type == ElementType::kF64 ? type : ElementType::kF32, INFINITY) : "0"},
      {"$N", Name(type)},
      {"$R", GlslValueType(ComplexComponentType(type))},
  };
  for (const auto& [key, value] : substitutions) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, std::string(key).size(), value);
  }
  return text;
}

std::string Call(GlslPrelude& prelude, const std::string& name, ElementType type, const std::string& body,
                 const std::string& args) {
  const std::string full = Fill(name, type);
  prelude.Helper(full, Fill(body, type));
  return full + "(" + args + ")";
}

Status NotDefined(Opcode opcode, ElementType type) {
  return Unimplemented(OpcodeName(opcode), " is not defined for element type ", Name(type));
}

// exp and log, Kiln's own: Vulkan bounds GLSL's exp only to 3 + 2|x| ulps
// and log to 2^-21 absolute in [0.5, 2] (log(1 + 1e-4) may be 0.5% off).
// exp(x) = exp(r) 2^n, x = n ln 2 + r, |r| <= ln 2 / 2: ln 2 in two parts,
// the first of 16 bits, so that n times it (|n| <= 150) and x less that are
// exact; Taylor's series to r^8 (the next term is under 2e-10 of the
// result); 2^n as two products with normal powers of two (their bits), so
// a subnormal result is rounded once (GLSL's ldexp may flush it; lavapipe's
// exp gave exp(-100) = 0, not 3.8e-44). k_expr(r, k) is exp(r) 2^k.
constexpr const char* kExpF = R"($T k_expr_$N($T r, int k) {
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
constexpr const char* kSplitExponent = R"(void k_split_exponent_$N(uint bits, out int e, out $T m) {
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
constexpr const char* kLog = R"($T k_log_$N($T x) {
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
constexpr const char* kSqrt = "$T k_sqrt_$N($T x) { return x < $Z ? $NAN : sqrt(x); }\n";
// expm1 and log1p by their series near 0, where exp(x) - 1 and log(1 + x)
// lose x's digits: GLSL's exp and log are not exact enough near 1 (lavapipe's
// err by about 1e-7 absolute) for the usual (u - 1) x / log(u) correction.
// Taylor's series below 1/2; log1p as 2 atanh(s), s = x / (2 + x) (|s| <
// 1/7), below 1/4, and x itself below 2^-24 (x^2 / 2 is under half an ulp
// of x there), where x / (2 + x) would round a subnormal x first
// (log1p(1.4e-45) gave 0).
constexpr const char* kExpm1 = R"($T k_expm1_$N($T x) {
  if (abs(x) < 0.5) {
    return x * (1.0 + x * (0.5 + x * (0.16666667 + x * (0.041666668 + x * (0.0083333338 + x * (0.0013888889 +
           x * (1.9841270e-4 + x * (2.4801587e-5 + x * 2.7557319e-6))))))));
  }
  $T u = k_exp_$N(x);
  return isinf(u) ? u : u - $ONE;
}
)";
std::string ExpCall(GlslPrelude& prelude, ElementType type, const std::string& args) {
  return Call(prelude, "k_exp_$N", type, kExpF, args);
}
// expm1 after the exp it calls.
// k_log_$N(args), with the helper it calls.
std::string LogCall(GlslPrelude& prelude, ElementType type, const std::string& args) {
  Call(prelude, "k_split_exponent_$N", type, kSplitExponent, "");
  return Call(prelude, "k_log_$N", type, kLog, args);
}

std::string Expm1Call(GlslPrelude& prelude, ElementType type, const std::string& args) {
  ExpCall(prelude, type, "x");
  return Call(prelude, "k_expm1_$N", type, kExpm1, args);
}
constexpr const char* kLog1p = R"($T k_log1p_$N($T x) {
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
constexpr const char* kTanh = R"($T k_tanh_$N($T x) {
  $T a = abs(x);
  if (isnan(x) || a < 1e-4) return x;
  if (a > 10.0) return x < $Z ? -$ONE : $ONE;
  $T e = k_expm1_$N(2.0 * a);
  $T t = e / (e + 2.0);
  return x < $Z ? -t : t;
}
)";
// Zero and a subnormal x are told by x's bits: a device that flushes
// subnormals compares a subnormal equal to 0 (NVIDIA's gave cbrt(1e-40) =
// 1e-40, x itself). A subnormal |x| = m 2^-149 is read from its bits as the
// integer m, exactly whether or not the device flushes, and cbrt(x) =
// cbrt(2m) 2^-50; lavapipe's pow would misread the subnormal itself (its
// log2 took a subnormal's exponent field for 2^-127).
constexpr const char* kCbrt = R"($T k_cbrt_$N($T x) {
  uint bits = floatBitsToUint(x);
  if ((bits & 0x7fffffffu) == 0u || isnan(x) || isinf(x)) return x;
  bool subnormal = (bits & 0x7f800000u) == 0u;
  $T a = subnormal ? 2.0 * float(bits & 0x7fffffu) : abs(x);
  $T r = pow(a, 1.0 / 3.0);
  r = r - (r * r * r - a) / (3.0 * r * r);
  if (subnormal) r = ldexp(r, -50);
  return (bits & 0x80000000u) != 0u ? -r : r;
}
)";
// erf as a rational function on [-4, 4] (beyond, erf is +-1 in f32), the
// approximation XLA's and Eigen's f32 erf use; below 1e-20 erf(x) is
// 2x / sqrt(pi) (x^2 / 3 is far under an ulp), one rounding where x * p
// (p near -0.016) would be subnormal below 7e-37 and keep few digits
// (erf(1e-40) was 25 subnormal units off).
constexpr const char* kErf = R"($T k_erf_$N($T x) {
  if (isnan(x)) return x;
  if (abs(x) < 1.0e-20) return x * 1.12837917;
  $T c = clamp(x, -4.0, 4.0);
  $T x2 = c * c;
  $T p = -2.72614225801306e-10;
  p = p * x2 + 2.77068142495902e-08;
  p = p * x2 - 2.10102402082508e-06;
  p = p * x2 - 5.69250639462346e-05;
  p = p * x2 - 7.34990630326855e-04;
  p = p * x2 - 2.95459980854025e-03;
  p = p * x2 - 1.60960333262415e-02;
  $T q = -1.45660718464996e-05;
  q = q * x2 - 2.13374055278905e-04;
  q = q * x2 - 1.68282697438203e-03;
  q = q * x2 - 7.37332916720468e-03;
  q = q * x2 - 1.42647390514189e-02;
  return clamp(c * p / q, -1.0, 1.0);
}
)";
// pow(a, y) for finite a > 0 and y != 0 as exp(y log a), not GLSL's pow
// (Vulkan's bound is exp2's of y log2(a), which grows with the result's
// exponent: lavapipe's was 149 ulps off). log a as a pair hi + lo good to
// about 2^-45 (kLog's terms summed with their rounding errors: Knuth's
// TwoSum, f^2 by Veltkamp's split and Dekker's product), y times it as a
// pair (the same product), and exp of the pair through k_expr. A subnormal
// a is read from its bits as an integer, as in kLog.
constexpr const char* kPowPositive = R"(void k_two_sum_$N($T a, $T b, out $T s, out $T err) {
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
constexpr const char* kPowF = R"($T k_pow_$N($T x, $T y) {
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
// atan2 from k_fatanq (glsl_trig.h) of the smaller part over the larger,
// pi/2 and pi in two parts with the small one added first: not GLSL's atan,
// which Vulkan bounds only to 4096 ulps (lavapipe's was 2e-5 relative off
// for tiny quotients). Where y / x is below 1e-20 and x positive, atan2 is
// y / x, one rounding. A zero y is told by its bits (a device that flushes
// compares a subnormal equal to 0: NVIDIA's gave atan2(1e-40, 1.5) = 1e-40,
// y itself), and where both parts are subnormal or zero they are read from
// their bits as integers (both scaled by 2^149, exactly, whether or not the
// device flushes).
constexpr const char* kAtan2 = R"($T k_atan2_$N($T y, $T x) {
  if (isnan(x) || isnan(y)) return x + y;
  uint x_bits = floatBitsToUint(x);
  uint y_bits = floatBitsToUint(y);
  bool x_negative = (x_bits & 0x80000000u) != 0u;
  bool y_negative = (y_bits & 0x80000000u) != 0u;
  if ((y_bits & 0x7fffffffu) == 0u) return x_negative ? (y_negative ? -3.14159265358979323846 : 3.14159265358979323846) : y;
  if ((x_bits & 0x7f800000u) == 0u && (y_bits & 0x7f800000u) == 0u) {
    x = float(x_bits & 0x7fffffu);
    y = float(y_bits & 0x7fffffu);
    if (x_negative) x = -x;
    if (y_negative) y = -y;
  }
  if (x > $Z && abs(y) < 1.0e-20 * x) return y / x;
  if (isinf(x) && isinf(y)) return (x > $Z ? 0.78539816339744830962 : 2.35619449019234492885) * sign(y);
  $T ax = abs(x);
  $T ay = abs(y);
  precise $T r = ay <= ax ? k_fatanq(ay, ax) : 1.57079637 + (-4.37113900e-8 - k_fatanq(ax, ay));
  if (x_negative) r = 3.14159274 + (-8.74227800e-8 - r);
  return y_negative ? -r : r;
}
)";
// C's fmod, exactly: subtract the divisor scaled to the remainder's exponent
// (each step is exact), instead of x - y * trunc(x / y), which is not. The
// result takes x's sign, a zero's too (-1 % 1 is -0).
constexpr const char* kFmod = R"($T k_fmod_$N($T x, $T y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == $Z) return $NAN;
  if (isinf(y)) return x;
  $T r = abs(x);
  $T ay = abs(y);
  int ey;
  frexp(ay, ey);
  for (int i = 0; i < 2200 && r >= ay; ++i) {
    int er;
    frexp(r, er);
    $T d = ldexp(ay, er - ey);
    if (d > r) d = ldexp(ay, er - ey - 1);
    r -= d;
  }
  return k_signbit_$N(x) ? -r : r;
}
)";
constexpr const char* kMaxF =
    "$T k_max_$N($T a, $T b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }\n";
constexpr const char* kMinF =
    "$T k_min_$N($T a, $T b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }\n";
constexpr const char* kRoundAfz = R"($T k_round_afz_$N($T x) {
  $T r = trunc(x);
  if (abs(x - r) >= 0.5) r += sign(x);
  return r;
}
)";
// The sign of any float ($T float or double), zeros and NaN included:
// float(x) keeps a double's.
constexpr const char* kSignBit = "bool k_signbit_$N($T x) { return floatBitsToInt(float(x)) < 0; }\n";
// A zero result takes x's sign (-0.3 rounds to -0), spelled out: lavapipe
// folds x * 0 to +0.
constexpr const char* kRoundEven = R"($T k_round_even_$N($T x) {
  $T r = roundEven(x);
  return r == $Z ? (k_signbit_$N(x) ? -$Z : $Z) : r;
}
)";
constexpr const char* kSignF = "$T k_sign_$N($T x) { return (isnan(x) || x == $Z) ? x : sign(x); }\n";
// f32 (and narrower, computed in f32): a zero told by its bits, since a
// device that flushes subnormals compares one equal to 0 and x itself
// would be neither sign(x) nor the flushed 0.
constexpr const char* kSignF32 =
    "$T k_sign_$N($T x) {\n  if (isnan(x) || (floatBitsToUint(x) & 0x7fffffffu) == 0u) return x;\n"
    "  return (floatBitsToUint(x) & 0x80000000u) != 0u ? -1.0 : 1.0;\n}\n";

// Double-precision elementary functions (GLSL has none): range reduction
// and polynomials in double arithmetic, straight-line code (no loops, which
// lavapipe counts against its per-invocation limit). About 1e-15 relative
// error for normal arguments; sin/cos/tan reduce exactly by pi/2 for
// |x| < 2^20 pi/2 and lose accuracy beyond.
std::string D(double value) { return FloatLiteral(ElementType::kF64, value); }

// c[0] + v * (c[1] + v * (... c[n-1])).
std::string Horner(const std::string& v, const std::vector<long double>& c) {
  std::string text = D(static_cast<double>(c.back()));
  for (size_t i = c.size() - 1; i-- > 0;)
    text = D(static_cast<double>(c[i])) + " + " + v + " * (" + text + ")";
  return text;
}

long double Factorial(int n) {
  long double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

const std::string& DoubleMathLibrary() {
  static const std::string library = [] {
    const double inf = INFINITY;
    const std::string INF = D(inf), NAN_ = D(std::nan(""));
    const std::string LN2HI = D(6.93147180369123816490e-01), LN2LO = D(1.90821492927058770002e-10);
    const std::string LOG2E = D(1.44269504088896338700e+00);
    const std::string PIO2_1 = D(1.57079632673412561417e+00), PIO2_2 = D(6.07710050630396597660e-11),
                      PIO2_3 = D(2.02226624879595063154e-21);
    const std::string PIO2 = D(1.57079632679489655800e+00), PIO2LO = D(6.12323399573676603587e-17);
    const std::string PI = D(3.14159265358979311600e+00), PILO = D(1.22464679914735317723e-16);
    const std::string PIO4 = D(7.85398163397448278999e-01);
    const std::string TINY = D(2.2250738585072014e-308), TWO54 = D(18014398509481984.0);
    std::vector<long double> exp_c, expm1_c, log_c, sin_c, cos_c, atan_c, erf_c;
    for (int k = 0; k <= 13; ++k) exp_c.push_back(1 / Factorial(k));
    for (int k = 0; k <= 16; ++k) expm1_c.push_back(1 / Factorial(k + 1));
    for (int k = 0; k <= 11; ++k) log_c.push_back(1.0L / (2 * k + 1));
    for (int k = 1; k <= 8; ++k) sin_c.push_back((k % 2 ? -1 : 1) / Factorial(2 * k + 1));
    for (int k = 1; k <= 9; ++k) cos_c.push_back((k % 2 ? -1 : 1) / Factorial(2 * k));
    for (int k = 0; k <= 12; ++k) atan_c.push_back((k % 2 ? -1.0L : 1.0L) / (2 * k + 1));
    for (int k = 0; k <= 40; ++k) erf_c.push_back((k % 2 ? -1 : 1) / (Factorial(k) * (2 * k + 1)));
    std::string text;
    text += "double k_dscale(double x, int n) { return ldexp(ldexp(x, n / 2), n - n / 2); }\n";
    text += "double k_dexp(double x) {\n  if (isnan(x)) return x;\n  if (x > 709.782712893384lf) return " +
            INF + ";\n  if (x < -745.2lf) return 0.0lf;\n  double n = roundEven(x * " + LOG2E +
            ");\n  precise double r = (x - n * " + LN2HI + ") - n * " + LN2LO + ";\n  return k_dscale(" +
            Horner("r", exp_c) + ", int(n));\n}\n";
    text +=
        "double k_dexpm1(double x) {\n  if (isnan(x) || x == 0.0lf) return x;\n  if (x > 40.0lf) return "
        "k_dexp(x);\n  if (x < -40.0lf) return -1.0lf;\n  if (abs(x) < 0.34657359027997264lf) return x * (" +
        Horner("x", expm1_c) + ");\n  double n = roundEven(x * " + LOG2E +
        ");\n  precise double r = (x - n * " + LN2HI + ") - n * " + LN2LO + ";\n  double q = r * (" +
        Horner("r", expm1_c) +
        ");\n  precise double one = k_dscale(1.0lf, int(n)) - 1.0lf;\n  precise double result = k_dscale(q, "
        "int(n)) + one;\n  return result;\n}\n";
    text +=
        "double k_dlogx(double x, out double lo) {\n  int adjust = 0;\n  if (x < " + TINY +
        ") { x *= " + TWO54 +
        "; adjust = -54; }\n  int e;\n  double m = frexp(x, e);\n  if (m < 0.70710678118654752lf) { m *= "
        "2.0lf; e -= 1; }\n  double de = double(e + adjust);\n  precise double f = (m - 1.0lf) / (m + "
        "1.0lf);\n"
        "  double f2 = f * f;\n  precise double a = de * " +
        LN2HI + ";\n  precise double b = de * " + LN2LO + " + 2.0lf * f * (" + Horner("f2", log_c) +
        ");\n  precise double hi = a + b;\n"
        "  precise double big = abs(a) >= abs(b) ? a : b;\n  precise double small = abs(a) >= abs(b) ? b : "
        "a;\n"
        "  lo = (big - hi) + small;\n  return hi;\n}\n";
    text +=
        "double k_dlog(double x) {\n  if (isnan(x) || isinf(x) && x > 0.0lf) return x;\n  if (x < 0.0lf) "
        "return " +
        NAN_ + ";\n  if (x == 0.0lf) return -" + INF +
        ";\n  double lo;\n  double hi = k_dlogx(x, lo);\n  return hi + lo;\n}\n";
    text +=
        "double k_dlog1p(double x) {\n  if (isnan(x) || isinf(x) && x > 0.0lf) return x;\n  if (x == -1.0lf) "
        "return -" +
        INF + ";\n  if (x < -1.0lf) return " + NAN_ +
        ";\n  precise double u = 1.0lf + x;\n  if (u == 1.0lf) return x;\n  precise double d = u - 1.0lf;\n"
        "  return k_dlog(u) * (x / d);\n}\n";
    text += "double k_dlogistic(double x) { return 1.0lf / (1.0lf + k_dexp(-x)); }\n";
    // x = n pi/2 + r, |r| <= pi/4; q = n mod 4. Below 1e6 by pi/2 in three
    // parts (n times each is exact); beyond, from the bits of 2/pi that
    // matter at x's exponent: x = M 2^E (M of 53 bits) times the 128 bits of
    // 2/pi from bit E - 1 on gives x 2/pi mod 4 as the low 128 bits of the
    // product over 2^126 (earlier bits add multiples of 4).
    // k_2opi and k_2opi_word: NeedTwoOverPiBits (NeedDoubleMath adds them).
    text +=
        "void k_addw(inout uint a, inout uint b, inout uint c, inout uint d, uint lo, uint hi) {\n"
        "  uint c1, c2, c3, c4;\n  a = uaddCarry(a, lo, c1);\n  b = uaddCarry(b, hi, c2);\n"
        "  b = uaddCarry(b, c1, c3);\n  c = uaddCarry(c, c2 + c3, c4);\n  d += c4;\n}\n"
        "double k_dreduce(double x, out int q) {\n  if (abs(x) < 1.0e6lf) {\n"
        "    double n = roundEven(x * 6.36619772367581382433e-01lf);\n    precise double r = ((x - n * " +
        PIO2_1 + ") - n * " + PIO2_2 + ") - n * " + PIO2_3 +
        ";\n    q = int(n - 4.0lf * floor(n * 0.25lf));\n    return r;\n  }\n"
        "  uvec2 bits = unpackDouble2x32(abs(x));\n  uint ml = bits.x;\n"
        "  uint mh = (bits.y & 0xfffffu) | 0x100000u;\n  int e = int(bits.y >> 20) - 1075;\n"
        "  int first = e + 62;\n  uint w0 = k_2opi_word(first, 0), w1 = k_2opi_word(first, 1);\n"
        "  uint w2 = k_2opi_word(first, 2), w3 = k_2opi_word(first, 3);\n"
        "  uint p0 = 0u, p1 = 0u, p2 = 0u, p3 = 0u, d0 = 0u, d1 = 0u, d2 = 0u, h, l;\n"
        "  umulExtended(ml, w3, h, l); k_addw(p0, p1, p2, p3, l, h);\n"
        "  umulExtended(ml, w2, h, l); k_addw(p1, p2, p3, d0, l, h);\n"
        "  umulExtended(mh, w3, h, l); k_addw(p1, p2, p3, d0, l, h);\n"
        "  umulExtended(ml, w1, h, l); k_addw(p2, p3, d1, d2, l, h);\n"
        "  umulExtended(mh, w2, h, l); k_addw(p2, p3, d1, d2, l, h);\n"
        "  p3 += ml * w0 + mh * w1;\n"
        "  double top = double(p3) * 9.31322574615478515625e-10lf + double(p2) * "
        "2.16840434497100886801e-19lf;\n"
        "  double n = roundEven(top);\n  q = int(n) & 3;\n"
        "  double f = ((double(p3) - n * 1073741824.0lf) * 4294967296.0lf + double(p2)) * "
        "2.16840434497100886801e-19lf + double(p1) * 5.04870979341447555665e-29lf;\n"
        "  double r = f * " +
        PIO2 + " + f * " + PIO2LO +
        ";\n  if (x < 0.0lf) {\n    r = -r;\n    q = (4 - q) & 3;\n  }\n  return r;\n}\n";
    text += "double k_dsinr(double r) { double r2 = r * r; return r + r * r2 * (" + Horner("r2", sin_c) +
            "); }\n";
    text += "double k_dcosr(double r) { double r2 = r * r; return 1.0lf + r2 * (" + Horner("r2", cos_c) +
            "); }\n";
    text += "double k_dsin(double x) {\n  if (isnan(x) || isinf(x)) return " + NAN_ +
            ";\n  if (x == 0.0lf) return x;\n  int q;\n  double r = k_dreduce(x, q);\n  if (q == 0) return "
            "k_dsinr(r);\n  if (q == 1) return "
            "k_dcosr(r);\n  if (q == 2) return -k_dsinr(r);\n  return -k_dcosr(r);\n}\n";
    text +=
        "double k_dcos(double x) {\n  if (isnan(x) || isinf(x)) return " + NAN_ +
        ";\n  int q;\n  double r = k_dreduce(x, q);\n  if (q == 0) return k_dcosr(r);\n  if (q == 1) return "
        "-k_dsinr(r);\n  if (q == 2) return -k_dcosr(r);\n  return k_dsinr(r);\n}\n";
    // Both from one reduction: each reduction inlined is long code, which
    // lavapipe's compiler takes seconds over.
    text +=
        "void k_dsincos(double x, out double s, out double c) {\n  if (isnan(x) || isinf(x)) {\n    s = " +
        NAN_ +
        ";\n    c = s;\n    return;\n  }\n  if (x == 0.0lf) {\n    s = x;\n    c = 1.0lf;\n    return;\n  }\n"
        "  int q;\n  double r = k_dreduce(x, q);\n"
        "  double sr = k_dsinr(r);\n  double cr = k_dcosr(r);\n  s = (q & 1) == 0 ? sr : cr;\n"
        "  c = (q & 1) == 0 ? cr : sr;\n  if (q == 1 || q == 2) c = -c;\n  if (q >= 2) s = -s;\n}\n";
    text += "double k_dtan(double x) {\n  if (isnan(x) || isinf(x)) return " + NAN_ +
            ";\n  if (x == 0.0lf) return x;\n  int q;\n  double r = k_dreduce(x, q);\n  double s = "
            "k_dsinr(r);\n  double c = k_dcosr(r);\n"
            "  return (q & 1) == 0 ? s / c : -c / s;\n}\n";
    text +=
        "double k_dtanh(double x) {\n  if (isnan(x) || x == 0.0lf) return x;\n  double a = abs(x);\n"
        "  if (a > 22.0lf) return sign(x);\n  double e = k_dexpm1(2.0lf * a);\n  double t = e / (e + "
        "2.0lf);\n"
        "  return x < 0.0lf ? -t : t;\n}\n";
    text +=
        "double k_dcbrt(double x) {\n  if (x == 0.0lf || isnan(x) || isinf(x)) return x;\n  double a = "
        "abs(x);\n"
        "  int adjust = 0;\n  if (a < " +
        TINY + ") { a *= " + TWO54 +
        "; adjust = -18; }\n  int e;\n  double m = frexp(a, e);\n  int e3 = e >= 0 ? e / 3 : -((2 - e) / "
        "3);\n"
        "  m = ldexp(m, e - 3 * e3);\n  double g = double(pow(float(m), 0.333333333f));\n"
        "  g = g - (g * g * g - m) / (3.0lf * g * g);\n  g = g - (g * g * g - m) / (3.0lf * g * g);\n"
        "  double r = ldexp(g, e3 + adjust);\n  return x < 0.0lf ? -r : r;\n}\n";
    // erf: its Taylor series below 2, 1 - erfc by a continued fraction
    // (40 terms) from 2 to 6, +-1 beyond.
    std::string cf;
    for (int k = 40; k >= 1; --k) cf += "  t = a + " + D(k / 2.0) + " / t;\n";
    text +=
        "double k_derf(double x) {\n  if (isnan(x) || x == 0.0lf) return x;\n  double a = abs(x);\n"
        "  double r = 1.0lf;\n  if (a < 2.0lf) {\n    double a2 = a * a;\n    r = " +
        D(1.12837916709551257390e+00) + " * a * (" + Horner("a2", erf_c) +
        ");\n  } else if (a < 6.0lf) {\n  double t = a;\n" + cf + "  r = 1.0lf - k_dexp(-a * a) * " +
        D(5.64189583547756286948e-01) + " / t;\n  }\n  return x < 0.0lf ? -r : r;\n}\n";
    // atan on [-1, 1]: past tan(pi/8) by pi/4 + atan((a-1)/(a+1)), then
    // halved (atan a = 2 atan(a / (1 + sqrt(1 + a^2)))) and its series.
    text +=
        "double k_datanu(double t) {\n  double a = abs(t);\n  double base = 0.0lf;\n"
        "  if (a > 0.41421356237309503lf) { a = (a - 1.0lf) / (a + 1.0lf); base = " +
        PIO4 +
        "; }\n  double h = a / (1.0lf + sqrt(1.0lf + a * a));\n  double h2 = h * h;\n"
        "  double r = base + 2.0lf * h * (" +
        Horner("h2", atan_c) + ");\n  return t < 0.0lf ? -r : r;\n}\n";
    text +=
        "double k_datan2(double y, double x) {\n  if (isnan(x) || isnan(y)) return x + y;\n"
        "  bool xneg = (unpackDouble2x32(x).y & 0x80000000u) != 0u;\n"
        "  bool yneg = (unpackDouble2x32(y).y & 0x80000000u) != 0u;\n"
        "  if (y == 0.0lf) return xneg ? (yneg ? -" +
        PI + " : " + PI +
        ") : y;\n"
        "  if (x == 0.0lf) return yneg ? -" +
        PIO2 + " : " + PIO2 +
        ";\n"
        "  if (isinf(x)) {\n    if (isinf(y)) return yneg ? (xneg ? -" +
        D(2.35619449019234492885e+00) + " : -" + PIO4 + ") : (xneg ? " + D(2.35619449019234492885e+00) +
        " : " + PIO4 + ");\n    if (xneg) return yneg ? -" + PI + " : " + PI +
        ";\n    return y / x;\n  }\n  if (isinf(y)) return yneg ? -" + PIO2 + " : " + PIO2 +
        ";\n  double ax = abs(x);\n  double ay = abs(y);\n  double r;\n  if (ay <= ax) {\n    r = "
        "k_datanu(ay / ax);\n"
        "  } else {\n    r = " +
        PIO2 + " - (k_datanu(ax / ay) - " + PIO2LO + ");\n  }\n  if (xneg) r = " + PI + " - (r - " + PILO +
        ");\n  return yneg ? -r : r;\n}\n";
    text +=
        "double k_dpow(double x, double y) {\n  if (y == 0.0lf || x == 1.0lf) return 1.0lf;\n"
        "  if (isnan(x) || isnan(y)) return x + y;\n  double ax = abs(x);\n  if (isinf(y)) {\n"
        "    if (ax == 1.0lf) return 1.0lf;\n    return ((ax > 1.0lf) == (y > 0.0lf)) ? " +
        INF +
        " : 0.0lf;\n  }\n  bool y_int = floor(y) == y;\n"
        "  bool y_odd = y_int && abs(y) < 9007199254740992.0lf && mod(y, 2.0lf) == 1.0lf;\n"
        "  bool negative = (unpackDouble2x32(x).y & 0x80000000u) != 0u;\n"
        "  if (ax == 0.0lf || isinf(x)) {\n    double z = ((ax == 0.0lf) == (y < 0.0lf)) ? " +
        INF + " : 0.0lf;\n    return (negative && y_odd) ? -z : z;\n  }\n  if (negative && !y_int) return " +
        NAN_ +
        ";\n  double lo;\n  double l = k_dlogx(ax, lo);\n  precise double t = y * l;\n  precise double err = "
        "fma(y, l, -t) + y * lo;\n"
        "  double r = k_dexp(t);\n  if (!isinf(r)) r = r + r * err;\n  return (negative && y_odd) ? -r : "
        "r;\n}\n";
    return text;
  }();
  return library;
}

void NeedDoubleMath(GlslPrelude& prelude) {
  NeedTwoOverPiBits(prelude);
  prelude.Helper("k_dmath", DoubleMathLibrary());
}

// Integer helpers. Narrow types compute in 32 bits and are wrapped after.
constexpr const char* kDivS = R"($T k_div_$N($T a, $T b) {
  if (b == $Z) return $NEG1;
  if (a == $MIN && b == $NEG1) return a;
  return a / b;
}
)";
constexpr const char* kDivU = "$T k_div_$N($T a, $T b) { return b == $Z ? $NEG1 : a / b; }\n";
constexpr const char* kRemS = R"($T k_rem_$N($T a, $T b) {
  if (b == $Z) return a;
  if (a == $MIN && b == $NEG1) return $Z;
  return a - (a / b) * b;
}
)";
constexpr const char* kRemU = "$T k_rem_$N($T a, $T b) { return b == $Z ? a : a % b; }\n";
constexpr const char* kPowI = R"($T k_pow_$N($T a, $T b) {
  if (a == $ONE || b == $Z) return $ONE;
  if (b < $Z) return $Z;
  $U r = $U(1);
  $U base = $U(a);
  $U e = $U(b);
  while (e != $U(0)) {
    if ((e & $U(1)) != $U(0)) r *= base;
    base *= base;
    e >>= 1;
  }
  return $T(r);
}
)";

std::string Mask(ElementType type) {
  switch (BitWidth(type)) {
    case 8: return "0xffu";
    case 16: return "0xffffu";
    case 64: return "0xfffffffffffffffful";
    default: return "0xffffffffu";
  }
}

// Complex helpers ($T is vec2 or dvec2, $R its component type).
constexpr const char* kCAbs = R"($R k_cabs_$N($T z) {
  $R m = max(abs(z.x), abs(z.y));
  if (isinf(z.x) || isinf(z.y)) return isinf(z.x) ? abs(z.x) : abs(z.y);
  if (m == $R(0) || isnan(m)) return isnan(z.x) || isnan(z.y) ? z.x + z.y : $R(0);
  $T s = z / m;
  return m * sqrt(dot(s, s));
}
)";
constexpr const char* kCMul =
    "$T k_cmul_$N($T a, $T b) { return $T(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }\n";
// BinaryOpWithConstantExpr's helpers: an op with a constant c, its IEEE
// answer spelled out where c is zero (the driver folds the test). $T is
// float or double.
constexpr const char* kMulConstant = R"($T k_mulc_$N($T x, $T c) {
  if (!(c == $Z)) return x * c;
  if (isnan(x) || isinf(x)) return $NAN;
  return k_signbit_$N(x) != k_signbit_$N(c) ? -$Z : $Z;
}
)";
// x + c: exact for any x but a zero when c is zero.
constexpr const char* kAddConstant = R"($T k_addc_$N($T x, $T c) {
  if (!(c == $Z) || !(x == $Z)) return x + c;
  return k_signbit_$N(x) && k_signbit_$N(c) ? -$Z : $Z;
}
)";
constexpr const char* kDivideByConstant = R"($T k_divc_$N($T x, $T c) {
  if (!(c == $Z)) return x / c;
  if (isnan(x) || x == $Z) return $NAN;
  return k_signbit_$N(x) != k_signbit_$N(c) ? -$INF : $INF;
}
)";
constexpr const char* kConstantDivide = R"($T k_cdivx_$N($T c, $T x) {
  if (!(c == $Z)) return c / x;
  if (isnan(x) || x == $Z) return $NAN;
  return k_signbit_$N(x) != k_signbit_$N(c) ? -$Z : $Z;
}
)";
// k_cdiv with a constant divisor (k_cdivc) or dividend (k_cconstdiv): the
// same steps, each product, sum or quotient with a constant through the
// real helpers (@M k_mulc, @A k_addc, @D k_divc, @Q k_cdivx of $R).
constexpr const char* kCDivByConstant = R"($T k_cdivc_$N($T a, $T b) {
  if (abs(b.x) >= abs(b.y)) {
    if (b.x == $R(0) && b.y == $R(0)) return $T(@D(a.x, abs(b.x)), @D(a.y, abs(b.x)));
    $R r = b.y / b.x;
    $R d = b.x + b.y * r;
    return $T(@D(a.x + @M(a.y, r), d), @D(a.y - @M(a.x, r), d));
  }
  $R r = b.x / b.y;
  $R d = b.x * r + b.y;
  return $T(@D(@M(a.x, r) + a.y, d), @D(@M(a.y, r) - a.x, d));
}
)";
constexpr const char* kCConstantDivide = R"($T k_cconstdiv_$N($T a, $T b) {
  if (abs(b.x) >= abs(b.y)) {
    if (b.x == $R(0) && b.y == $R(0)) return $T(@Q(a.x, abs(b.x)), @Q(a.y, abs(b.x)));
    $R r = b.y / b.x;
    $R d = b.x + b.y * r;
    return $T(@A(@M(r, a.y), a.x) / d, @A(-@M(r, a.x), a.y) / d);
  }
  $R r = b.x / b.y;
  $R d = b.x * r + b.y;
  return $T(@A(@M(r, a.x), a.y) / d, @A(@M(r, a.y), -(a.x)) / d);
}
)";
// Smith's algorithm: scales by the larger part of the divisor, so that
// |b|^2 neither overflows nor underflows.
constexpr const char* kCDiv = R"($T k_cdiv_$N($T a, $T b) {
  if (abs(b.x) >= abs(b.y)) {
    if (b.x == $R(0) && b.y == $R(0)) return $T(a.x / abs(b.x), a.y / abs(b.x));
    $R r = b.y / b.x;
    $R d = b.x + b.y * r;
    return $T((a.x + a.y * r) / d, (a.y - a.x * r) / d);
  }
  $R r = b.x / b.y;
  $R d = b.x * r + b.y;
  return $T((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
)";
// Complex functions over the component type's real ones: @E exp, @M expm1,
// @L log1p, @G log, @A atan2, @P sincos (Kiln's f32 helpers for c64,
// glsl_trig.h's k_fsincos among them, k_d* for c128), and @N the smallest
// normal number.
constexpr const char* kCSinhCosh = R"($R k_csinh_$N($R b) {
  $R a = abs(b);
  if (a < 1.0) {
    $R m = @M(b);
    return 0.5 * m * (m + 2.0) / (m + 1.0);
  }
  $R e = @E(a);
  $R s = 0.5 * (e - 1.0 / e);
  return b < 0.0 ? -s : s;
}
$R k_ccosh_$N($R b) {
  $R e = @E(abs(b));
  return 0.5 * (e + 1.0 / e);
}
)";
// @P(x, s, c) sets s = sin x and c = cos x (one argument reduction for c128).
constexpr const char* kCSin = R"($T k_csin_$N($T z) {
  $R s, c;
  @P(z.x, s, c);
  return $T(s * k_ccosh_$N(z.y), c * k_csinh_$N(z.y));
}
)";
constexpr const char* kCCos = R"($T k_ccos_$N($T z) {
  $R s, c;
  @P(z.x, s, c);
  return $T(c * k_ccosh_$N(z.y), -(s * k_csinh_$N(z.y)));
}
)";
// Kahan's tanh: with t = tan(b), beta = 1 + t^2, s = sinh(a), rho =
// sqrt(1 + s^2): (beta rho s, t) / (1 + beta s^2); for |a| > 20 the real
// part is +-1 and the imaginary part 4 sin(b) cos(b) exp(-2|a|).
constexpr const char* kCTanh = R"($T k_ctanh_$N($T z) {
  $R a = z.x;
  $R b = z.y;
  $R sin_b, cos_b;
  @P(b, sin_b, cos_b);
  if (abs(a) > 20.0) return $T(a > 0.0 ? 1.0 : -1.0, 4.0 * sin_b * cos_b * @E(-2.0 * abs(a)));
  $R t = sin_b / cos_b;
  $R beta = 1.0 + t * t;
  $R s = k_csinh_$N(a);
  $R rho = sqrt(1.0 + s * s);
  $R den = 1.0 + beta * s * s;
  return $T(beta * rho * s / den, t / den);
}
)";
constexpr const char* kCExp = R"($T k_cexp_$N($T z) {
  $R e = @E(z.x);
  if (z.y == $R(0)) return $T(e, z.y);
  $R s, c;
  @P(z.y, s, c);
  return $T(e * c, e * s);
}
)";

// tan z = -i tanh(iz), with iz = (-b, a).
constexpr const char* kCTan =
    "$T k_ctan_$N($T z) { $T t = k_ctanh_$N($T(-z.y, z.x)); return $T(t.y, -t.x); }\n";
// exp(z) - 1 without the cancellation of exp(z) - 1 near z = 0: the real
// part exp(a) cos b - 1 is expm1(a) cos b + (cos b - 1), and cos b - 1 is
// -sin^2 b / (1 + cos b) where cos b > 0 (neither cancels); the imaginary
// part is exp(a) sin b. Non-finite parts give what C's cexp (Annex G)
// gives, less one.
constexpr const char* kCExpm1 = R"($T k_cexpm1_$N($T z) {
  $R a = z.x;
  $R b = z.y;
  if (isnan(a)) return $T(a, b == $R(0) ? b : a);
  bool b_finite = !isinf(b) && !isnan(b);
  if (isinf(a) && a < $R(0) && !b_finite) return $T(-$R(1), $R(0));
  if (isinf(a) && a > $R(0) && b == $R(0)) return $T(a, b);
  if (!b_finite) return $T(isinf(a) ? a : $NAN, $NAN);
  $R s, c;
  @P(b, s, c);
  if (isinf(a)) return a < $R(0) ? $T(-$R(1), $R(0) * s) : $T(a * c, a * s);
  $R cos_minus_one = c > $R(0) ? -s * s / ($R(1) + c) : c - $R(1);
  return $T(@M(a) * c + cos_minus_one, b == $R(0) ? b : @E(a) * s);
}
)";
// C's csqrt (Annex G): sqrt(conj z) = conj sqrt(z), the cut along the
// negative real axis takes the imaginary part's sign (-4 - 0i gives -2i),
// infinities and NaN as the standard lists them. Finite z is scaled by an
// even power of two to |z| near 1 (|a| + |z| cannot overflow, tiny parts
// lose no digits), t = sqrt((|a| + |z|) / 2) is the larger part of the root
// and |b| / 2t, from the unscaled b, the other: neither subtracts.
constexpr const char* kCSqrt = R"($R k_cscale_$N($R x, int n) { return ldexp(ldexp(x, n / 2), n - n / 2); }
$T k_csqrt_$N($T z) {
  $R a = z.x;
  $R b = z.y;
  bool b_negative = k_csignbit_$N(b);
  if (isinf(b)) return $T($INF, b);
  if (isnan(a)) return $T(a, a);
  if (isinf(a)) {
    if (a > $R(0)) return $T(a, isnan(b) ? b : (b_negative ? -$R(0) : $R(0)));
    return $T(isnan(b) ? b : $R(0), b_negative ? -$INF : $INF);
  }
  if (isnan(b)) return $T(b, b);
  if (b == $R(0)) {
    $R r = sqrt(abs(a));
    return a < $R(0) ? $T($R(0), b_negative ? -r : r) : $T(r, b);
  }
  int e;
  frexp(max(abs(a), abs(b)), e);
  e -= e & 1;
  $T s = $T(k_cscale_$N(a, -e), k_cscale_$N(b, -e));
  $R t = k_cscale_$N(sqrt($R(0.5) * (abs(s.x) + k_cabs_$N(s))), e / 2);
  $R other = abs(b) / ($R(2) * t);
  if (a >= $R(0)) return $T(t, b_negative ? -other : other);
  return $T(other, b_negative ? -t : t);
}
)";
// log(1 + z): the imaginary part is atan2(b, 1 + a); the real part
// log|1 + z| is log1p(a (a + 2) + b^2) / 2 near z = 0, where forming 1 + a
// would lose a's digits, and log(hypot(1 + a, b)) elsewhere (no overflow).
constexpr const char* kCLog1p = R"($T k_clog1p_$N($T z) {
  $R a = z.x;
  $R b = z.y;
  $R u = a + $R(1);
  $R im = @A(b, u);
  if (abs(a) < $R(0.5) && abs(b) < $R(0.5)) return $T($R(0.5) * @L(a * (a + $R(2)) + b * b), im);
  return $T(@G(k_cabs_$N($T(u, b))), im);
}
)";

// A complex helper over the component's real functions (see kCSin).
std::string ComplexCall(GlslPrelude& prelude, const std::string& name, ElementType type, std::string body,
                        const std::string& x) {
  const bool is_double = IsDouble(type);
  if (is_double) NeedDoubleMath(prelude);
  if (!is_double) {
    // The f32 helpers the body names; expm1 and exp always (k_exp_f32
    // keeps subnormal results, where GLSL's exp on lavapipe gave exp(-100 +
    // i) = 0).
    Expm1Call(prelude, ElementType::kF32, "x");
    if (body.find("@G") != std::string::npos || body.find("@L") != std::string::npos)
      LogCall(prelude, ElementType::kF32, "x");
    if (body.find("@L") != std::string::npos) Call(prelude, "k_log1p_$N", ElementType::kF32, kLog1p, "x");
    if (body.find("@A") != std::string::npos) {
      NeedF32Atan(prelude);
      Call(prelude, "k_atan2_$N", ElementType::kF32, kAtan2, "y, x");
    }
    if (body.find("@P") != std::string::npos) NeedF32Trig(prelude);
  }
  const std::pair<const char*, const char*> names[] = {
      {"@E", is_double ? "k_dexp" : "k_exp_f32"},
      {"@P", is_double ? "k_dsincos" : "k_fsincos"},
      {"@M", is_double ? "k_dexpm1" : "k_expm1_f32"},
      {"@L", is_double ? "k_dlog1p" : "k_log1p_f32"},
      {"@G", is_double ? "k_dlog" : "k_log_f32"},
      {"@A", is_double ? "k_datan2" : "k_atan2_f32"},
      {"@N", is_double ? "2.2250738585072014e-308lf" : "1.17549435e-38"}};
  for (const auto& [key, value] : names) {
    for (size_t at = body.find(key); at != std::string::npos; at = body.find(key, at))
      body.replace(at, 2, value);
  }
  return Call(prelude, name, type, body, x);
}

// log|z| and arg z through the real helpers: for c64 k_log_f32, which keeps
// a subnormal operand (log(1e-40) gave -88.02), and k_atan2_f32, C's signed
// zeros (atan(0, 0) gave 3pi/4) and tiny quotients. Where the larger part m
// is below the smallest normal number @N, |z| would round as a subnormal
// (|1.4e-45 (1 + i)| is 1.4e-45): log m + log|z / m| instead.
constexpr const char* kCLog = R"($T k_clog_$N($T z) {
  $R m = max(abs(z.x), abs(z.y));
  $R magnitude_log = m > $R(0) && m < @N ? @G(m) + $R(0.5) * @G(dot(z / m, z / m)) : @G(k_cabs_$N(z));
  return $T(magnitude_log, @A(z.y, z.x));
}
)";
constexpr const char* kCSign =
    "$T k_csign_$N($T z) { $R m = k_cabs_$N(z); return m == $R(0) ? z : z / m; }\n";

std::string CAbs(ElementType type, const std::string& x, GlslPrelude& prelude) {
  return Call(prelude, "k_cabs_$N", type, kCAbs, x);
}

// Whether the component's sign bit is set (-0 and -NaN included).
void NeedComplexSignBit(ElementType type, GlslPrelude& prelude) {
  Call(prelude, "k_csignbit_$N", type,
       IsDouble(type) ? "bool k_csignbit_$N($R s) { return (unpackDouble2x32(s).y & 0x80000000u) != 0u; }\n"
                      : "bool k_csignbit_$N($R s) { return (floatBitsToUint(s) & 0x80000000u) != 0u; }\n",
       "s");
}

std::string CSqrt(ElementType type, const std::string& x, GlslPrelude& prelude) {
  CAbs(type, "z", prelude);
  NeedComplexSignBit(type, prelude);
  return Call(prelude, "k_csqrt_$N", type, kCSqrt, x);
}

// 1 / sqrt(z); 1 / 0 is (inf, NaN), as C's complex division has it.
constexpr const char* kCRsqrt = R"($T k_crsqrt_$N($T z) {
  $T r = k_csqrt_$N(z);
  if (r.x == $R(0) && r.y == $R(0)) return $T($INF, $NAN);
  return k_cdiv_$N($T(1, 0), r);
}
)";

// C's cpow, exp(w log z), with the interpreter's 0^0 = 1. A zero base
// gives what C's multiplication makes of w (-inf + i arg z): 0 where Re w > 0,
// (inf, NaN) where Re w < 0, NaN elsewhere.
constexpr const char* kCPow = R"($T k_cpow_$N($T z, $T w) {
  if (z == $T(0)) {
    if (w == $T(0)) return $T(1, 0);
    if (w.x > $R(0)) return $T(0);
    return w.x < $R(0) ? $T($INF, $NAN) : $T($NAN);
  }
  return k_cexp_$N(k_cmul_$N(w, k_clog_$N(z)));
}
)";

std::string CDiv(ElementType type, const std::string& a, const std::string& b, GlslPrelude& prelude) {
  return Call(prelude, "k_cdiv_$N", type, kCDiv, a + ", " + b);
}

std::string CExp(ElementType type, const std::string& x, GlslPrelude& prelude) {
  return ComplexCall(prelude, "k_cexp_$N", type, kCExp, x);
}

StatusOr<std::string> ComplexUnary(Opcode opcode, ElementType type, const std::string& x,
                                   GlslPrelude& prelude) {
  switch (opcode) {
    case Opcode::kCopy: return x;
    case Opcode::kNegate: return "(-" + x + ")";
    case Opcode::kAbs: return CAbs(type, x, prelude);
    case Opcode::kSign: CAbs(type, "z", prelude); return Call(prelude, "k_csign_$N", type, kCSign, x);
    case Opcode::kExp: return CExp(type, x, prelude);
    case Opcode::kExpm1: return ComplexCall(prelude, "k_cexpm1_$N", type, kCExpm1, x);
    case Opcode::kSqrt: return CSqrt(type, x, prelude);
    case Opcode::kRsqrt:
      CSqrt(type, "z", prelude);
      Call(prelude, "k_cdiv_$N", type, kCDiv, "a, b");
      return Call(prelude, "k_crsqrt_$N", type, kCRsqrt, x);
    case Opcode::kLog1p:
      CAbs(type, "z", prelude);
      return ComplexCall(prelude, "k_clog1p_$N", type, kCLog1p, x);
    case Opcode::kLogistic: {
      // 1 / (1 + exp(-z)), as the interpreter has it.
      const std::string one = GlslValueType(type) + "(1, 0)";
      return CDiv(type, one, "(" + one + " + " + CExp(type, "(-" + x + ")", prelude) + ")", prelude);
    }
    case Opcode::kLog: CAbs(type, "z", prelude); return ComplexCall(prelude, "k_clog_$N", type, kCLog, x);
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTanh:
    case Opcode::kTan:
      ComplexCall(prelude, "k_csinh_$N", type, kCSinhCosh, "z");
      if (opcode == Opcode::kSin) return ComplexCall(prelude, "k_csin_$N", type, kCSin, x);
      if (opcode == Opcode::kCos) return ComplexCall(prelude, "k_ccos_$N", type, kCCos, x);
      if (opcode == Opcode::kTanh) return ComplexCall(prelude, "k_ctanh_$N", type, kCTanh, x);
      ComplexCall(prelude, "k_ctanh_$N", type, kCTanh, "z");
      return Call(prelude, "k_ctan_$N", type, kCTan, x);
    default:
      return Unimplemented(OpcodeName(opcode), " of ", Name(type),
                           " is not done yet by the Vulkan code generator");
  }
}

}  // namespace

StatusOr<std::string> UnaryOpExpr(Opcode opcode, ElementType type, const std::string& x,
                                  GlslPrelude& prelude) {
  if (IsComplex(type)) return ComplexUnary(opcode, type, x, prelude);
  if (opcode == Opcode::kCopy) return x;
  if (type == ElementType::kPred) {
    if (opcode == Opcode::kNot) return "(!" + x + ")";
    return NotDefined(opcode, type);
  }
  if (IsIntegral(type)) {
    const bool is_signed = IsSignedIntegral(type);
    const std::string t = GlslValueType(type);
    switch (opcode) {
      case Opcode::kNegate: return "(" + ZeroValue(type) + " - " + x + ")";
      case Opcode::kAbs:
        return is_signed ? "(" + x + " < " + ZeroValue(type) + " ? -" + x + " : " + x + ")" : x;
      case Opcode::kSign:
        return is_signed ? "sign(" + x + ")"
                         : "(" + x + " != " + ZeroValue(type) + " ? " + OneValue(type) + " : " +
                               ZeroValue(type) + ")";
      case Opcode::kNot: return "(~" + x + ")";
      case Opcode::kPopcnt:
        if (Is64(type))
          return t + "(bitCount(uint(uint64_t(" + x + ") >> 32)) + bitCount(uint(uint64_t(" + x + "))))";
        return t + "(bitCount(uint(" + x + ") & " + Mask(type) + "))";
      case Opcode::kClz:
        if (Is64(type)) {
          return Call(prelude, "k_clz_$N", type,
                      "$T k_clz_$N($T a) { uint hi = uint(uint64_t(a) >> 32); uint lo = uint(uint64_t(a)); "
                      "return $T(hi != 0u ? 31 - findMSB(hi) : 63 - findMSB(lo)); }\n",
                      x);
        }
        return t + "(" + std::to_string(BitWidth(type) - 1) + " - findMSB(uint(" + x + ") & " + Mask(type) +
               "))";
      default: return NotDefined(opcode, type);
    }
  }
  if (!IsRealFloat(type)) return NotDefined(opcode, type);
  const bool is_double = IsDouble(type);
  switch (opcode) {
    case Opcode::kNegate: return "(-" + x + ")";
    case Opcode::kAbs: return "abs(" + x + ")";
    case Opcode::kSign: return Call(prelude, "k_sign_$N", type, is_double ? kSignF : kSignF32, x);
    case Opcode::kFloor: return "floor(" + x + ")";
    case Opcode::kCeil: return "ceil(" + x + ")";
    case Opcode::kRoundNearestAfz: return Call(prelude, "k_round_afz_$N", type, kRoundAfz, x);
    case Opcode::kRoundNearestEven:
      Call(prelude, "k_signbit_$N", type, kSignBit, "x");
      return Call(prelude, "k_round_even_$N", type, kRoundEven, x);
    case Opcode::kSqrt: return Call(prelude, "k_sqrt_$N", type, kSqrt, x);
    case Opcode::kRsqrt:
      return "(" + FloatLiteral(type, 1.0) + " / " + Call(prelude, "k_sqrt_$N", type, kSqrt, x) + ")";
    default: break;
  }
  // The rest have no double-precision GLSL built-ins: Kiln's own.
  if (is_double) {
    const char* name = nullptr;
    switch (opcode) {
      case Opcode::kExp: name = "k_dexp"; break;
      case Opcode::kLog: name = "k_dlog"; break;
      case Opcode::kExpm1: name = "k_dexpm1"; break;
      case Opcode::kLog1p: name = "k_dlog1p"; break;
      case Opcode::kLogistic: name = "k_dlogistic"; break;
      case Opcode::kSin: name = "k_dsin"; break;
      case Opcode::kCos: name = "k_dcos"; break;
      case Opcode::kTan: name = "k_dtan"; break;
      case Opcode::kTanh: name = "k_dtanh"; break;
      case Opcode::kCbrt: name = "k_dcbrt"; break;
      case Opcode::kErf: name = "k_derf"; break;
      default: return NotDefined(opcode, type);
    }
    NeedDoubleMath(prelude);
    return std::string(name) + "(" + x + ")";
  }
  switch (opcode) {
    case Opcode::kExp: return ExpCall(prelude, type, x);
    case Opcode::kLog: return LogCall(prelude, type, x);
    case Opcode::kExpm1: return Expm1Call(prelude, type, x);
    case Opcode::kLog1p: LogCall(prelude, type, "x"); return Call(prelude, "k_log1p_$N", type, kLog1p, x);
    case Opcode::kLogistic: return "(1.0 / (1.0 + " + ExpCall(prelude, type, "-" + x) + "))";
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
      // Not GLSL's sin, cos and tan: glsl_trig.h says why.
      NeedF32Trig(prelude);
      return std::string(opcode == Opcode::kSin   ? "k_fsin("
                         : opcode == Opcode::kCos ? "k_fcos("
                                                  : "k_ftan(") +
             x + ")";
    case Opcode::kTanh: Expm1Call(prelude, type, "x"); return Call(prelude, "k_tanh_$N", type, kTanh, x);
    case Opcode::kCbrt: return Call(prelude, "k_cbrt_$N", type, kCbrt, x);
    case Opcode::kErf: return Call(prelude, "k_erf_$N", type, kErf, x);
    default: return NotDefined(opcode, type);
  }
}

StatusOr<std::string> BinaryOpExpr(Opcode opcode, ElementType type, const std::string& a,
                                   const std::string& b, GlslPrelude& prelude) {
  const std::string args = a + ", " + b;
  if (type == ElementType::kPred) {
    switch (opcode) {
      case Opcode::kAnd:
      case Opcode::kMultiply:
      case Opcode::kMinimum: return "(" + a + " && " + b + ")";
      case Opcode::kOr:
      case Opcode::kAdd:
      case Opcode::kMaximum: return "(" + a + " || " + b + ")";
      case Opcode::kXor:
      case Opcode::kSubtract: return "(" + a + " != " + b + ")";
      case Opcode::kDivide: return a;
      case Opcode::kPower: return "(" + a + " || !" + b + ")";
      default: return NotDefined(opcode, type);
    }
  }
  if (IsComplex(type)) {
    switch (opcode) {
      case Opcode::kAdd: return "(" + a + " + " + b + ")";
      case Opcode::kSubtract: return "(" + a + " - " + b + ")";
      case Opcode::kMultiply: return Call(prelude, "k_cmul_$N", type, kCMul, args);
      case Opcode::kDivide: return Call(prelude, "k_cdiv_$N", type, kCDiv, args);
      case Opcode::kPower: {
        // Defines k_clog and k_cexp, which k_cpow calls.
        KILN_RETURN_IF_ERROR(ComplexUnary(Opcode::kLog, type, "z", prelude).status());
        KILN_RETURN_IF_ERROR(ComplexUnary(Opcode::kExp, type, "z", prelude).status());
        Call(prelude, "k_cmul_$N", type, kCMul, "a, b");
        return Call(prelude, "k_cpow_$N", type, kCPow, args);
      }
      case Opcode::kMaximum:
      case Opcode::kMinimum:
      case Opcode::kRemainder:
      case Opcode::kAtan2:
      case Opcode::kAnd:
      case Opcode::kOr:
      case Opcode::kXor:
      case Opcode::kShiftLeft:
      case Opcode::kShiftRightArithmetic:
      case Opcode::kShiftRightLogical: return NotDefined(opcode, type);
      default:
        return Unimplemented(OpcodeName(opcode), " of ", Name(type),
                             " is not done yet by the Vulkan code generator");
    }
  }
  if (IsIntegral(type)) {
    const bool is_signed = IsSignedIntegral(type);
    const std::string t = GlslValueType(type);
    const std::string u = Is64(type) ? "uint64_t" : "uint";
    const std::string width = std::to_string(BitWidth(type));
    switch (opcode) {
      case Opcode::kAdd: return "(" + a + " + " + b + ")";
      case Opcode::kSubtract: return "(" + a + " - " + b + ")";
      case Opcode::kMultiply: return "(" + a + " * " + b + ")";
      case Opcode::kDivide: return Call(prelude, "k_div_$N", type, is_signed ? kDivS : kDivU, args);
      case Opcode::kRemainder: return Call(prelude, "k_rem_$N", type, is_signed ? kRemS : kRemU, args);
      case Opcode::kMaximum: return "max(" + args + ")";
      case Opcode::kMinimum: return "min(" + args + ")";
      case Opcode::kPower: return Call(prelude, "k_pow_$N", type, kPowI, args);
      case Opcode::kAnd: return "(" + a + " & " + b + ")";
      case Opcode::kOr: return "(" + a + " | " + b + ")";
      case Opcode::kXor: return "(" + a + " ^ " + b + ")";
      // Amounts are read as unsigned of the element's width; past the width
      // everything is shifted out (C and GLSL leave that undefined).
      case Opcode::kShiftLeft:
        return Call(
            prelude, "k_shl_$N", type,
            "$T k_shl_$N($T a, $T b) { return ($U(b) & " + Mask(type) + ") >= $W ? $Z : a << int(b); }\n",
            args);
      case Opcode::kShiftRightLogical:
        return Call(prelude, "k_shrl_$N", type,
                    "$T k_shrl_$N($T a, $T b) { return ($U(b) & " + Mask(type) +
                        ") >= $W ? $Z : $T(($U(a) & " + Mask(type) + ") >> int(b)); }\n",
                    args);
      case Opcode::kShiftRightArithmetic: {
        // Sign-extend the element's own width first (an unsigned u8 0x80 is negative here).
        const std::string s = Is64(type) ? "int64_t" : "int";
        const std::string extend =
            BitWidth(type) < 32 ? "bitfieldExtract(int(a), 0, " + width + ")" : s + "(a)";
        return Call(prelude, "k_shra_$N", type,
                    "$T k_shra_$N($T a, $T b) { " + s + " v = " + extend + "; int n = ($U(b) & " +
                        Mask(type) + ") >= $W ? $W - 1 : int(b); return $T(v >> n); }\n",
                    args);
      }
      default: return NotDefined(opcode, type);
    }
  }
  if (!IsRealFloat(type)) return NotDefined(opcode, type);
  switch (opcode) {
    case Opcode::kAdd: return "(" + a + " + " + b + ")";
    case Opcode::kSubtract: return "(" + a + " - " + b + ")";
    case Opcode::kMultiply: return "(" + a + " * " + b + ")";
    case Opcode::kDivide: return "(" + a + " / " + b + ")";
    case Opcode::kMaximum: return Call(prelude, "k_max_$N", type, kMaxF, args);
    case Opcode::kMinimum: return Call(prelude, "k_min_$N", type, kMinF, args);
    case Opcode::kRemainder:
      Call(prelude, "k_signbit_$N", type, kSignBit, "x");
      return Call(prelude, "k_fmod_$N", type, kFmod, args);
    default: break;
  }
  if (IsDouble(type)) {
    NeedDoubleMath(prelude);
    if (opcode == Opcode::kPower) return "k_dpow(" + args + ")";
    if (opcode == Opcode::kAtan2) return "k_datan2(" + args + ")";
    return NotDefined(opcode, type);
  }
  switch (opcode) {
    case Opcode::kPower:
      ExpCall(prelude, type, "x");
      Call(prelude, "k_split_exponent_$N", type, kSplitExponent, "");
      NeedF32ProductError(prelude);
      Call(prelude, "k_powpos_$N", type, kPowPositive, "a, y");
      return Call(prelude, "k_pow_$N", type, kPowF, args);
    case Opcode::kAtan2: NeedF32Atan(prelude); return Call(prelude, "k_atan2_$N", type, kAtan2, args);
    default: return NotDefined(opcode, type);
  }
}

StatusOr<std::string> BinaryOpWithConstantExpr(Opcode opcode, ElementType type, const std::string& a,
                                               const std::string& b, int constant_operand,
                                               GlslPrelude& prelude) {
  const bool complex = IsComplex(type);
  if (!IsRealFloat(type) && !complex) return BinaryOpExpr(opcode, type, a, b, prelude);
  const ElementType real = complex ? ComplexComponentType(type) : type;
  const bool constant_first = constant_operand == 0;
  const std::string& c = constant_first ? a : b;
  const std::string& x = constant_first ? b : a;
  // The real helper `name` (its text `body`, which calls k_signbit) on
  // `args`, defined once with k_signbit before it.
  auto real_call = [&](const char* name, const char* body, const std::string& args) {
    Call(prelude, "k_signbit_$N", real, kSignBit, "x");
    return Call(prelude, name, real, body, args);
  };
  if (!complex) {
    switch (opcode) {
      case Opcode::kMultiply: return real_call("k_mulc_$N", kMulConstant, x + ", " + c);
      case Opcode::kAdd: return real_call("k_addc_$N", kAddConstant, x + ", " + c);
      // x - c is x + (-c) and c - x is -x + c, exactly, zeros included.
      case Opcode::kSubtract:
        return real_call("k_addc_$N", kAddConstant,
                         constant_first ? "-(" + x + "), " + c : x + ", -(" + c + ")");
      case Opcode::kDivide:
        return constant_first ? real_call("k_cdivx_$N", kConstantDivide, c + ", " + x)
                              : real_call("k_divc_$N", kDivideByConstant, x + ", " + c);
      default: return BinaryOpExpr(opcode, type, a, b, prelude);
    }
  }
  // Complex numbers, part by part with the real helpers (the product's
  // four, in k_cmul's order; division in k_cdiv's steps).
  const std::string t = GlslValueType(type);
  switch (opcode) {
    case Opcode::kDivide: {
      std::string body = constant_first ? kCConstantDivide : kCDivByConstant;
      const std::pair<const char*, std::string> helpers[] = {
          {"@M", real_call("k_mulc_$N", kMulConstant, "")},
          {"@A", real_call("k_addc_$N", kAddConstant, "")},
          {"@D", real_call("k_divc_$N", kDivideByConstant, "")},
          {"@Q", real_call("k_cdivx_$N", kConstantDivide, "")},
      };
      for (const auto& [key, call] : helpers) {
        const std::string name = call.substr(0, call.find('('));
        for (size_t at = body.find(key); at != std::string::npos; at = body.find(key, at + name.size()))
          body.replace(at, 2, name);
      }
      return Call(prelude, constant_first ? "k_cconstdiv_$N" : "k_cdivc_$N", type, body, a + ", " + b);
    }
    case Opcode::kMultiply: {
      auto product = [&](const char* xp, const char* cp) {
        return real_call("k_mulc_$N", kMulConstant, std::string("x.") + xp + ", c." + cp);
      };
      return Call(prelude, "k_cmulc_$N", type,
                  "$T k_cmulc_$N($T x, $T c) { return $T(" + product("x", "x") + " - " + product("y", "y") +
                      ", " + product("x", "y") + " + " + product("y", "x") + "); }\n",
                  x + ", " + c);
    }
    case Opcode::kAdd:
    case Opcode::kSubtract: {
      const std::string sign_x = opcode == Opcode::kSubtract && constant_first ? "-" : "";
      const std::string sign_c = opcode == Opcode::kSubtract && !constant_first ? "-" : "";
      auto part = [&](const char* p) {
        return real_call("k_addc_$N", kAddConstant,
                         sign_x + "(" + x + ")." + p + ", " + sign_c + "(" + c + ")." + p);
      };
      return t + "(" + part("x") + ", " + part("y") + ")";
    }
    default: return BinaryOpExpr(opcode, type, a, b, prelude);
  }
}

StatusOr<std::string> CompareExpr(ComparisonDirection direction, ComparisonType comparison, ElementType type,
                                  const std::string& a, const std::string& b, GlslPrelude& prelude) {
  std::string lhs = a, rhs = b;
  if (IsComplex(type)) {
    if (direction == ComparisonDirection::kEq) return "(" + a + " == " + b + ")";
    if (direction == ComparisonDirection::kNe) return "(!(" + a + " == " + b + "))";
    return Unimplemented("compare of ", Name(type), " supports only EQ and NE");
  }
  if (type == ElementType::kPred) {
    lhs = "int(" + a + ")";
    rhs = "int(" + b + ")";
  } else if (IsFloating(type) && comparison == ComparisonType::kTotalOrder) {
    // -NaN < -inf < ... < -0 < +0 < ... < inf < NaN: flip the magnitude bits
    // of negative numbers and compare as signed integers. f16/bf16 values are
    // exact floats, so their order is the float's.
    const bool is_double = type == ElementType::kF64;
    const std::string key =
        is_double
            ? "int64_t k_total_key_$N($T x) { int64_t b = doubleBitsToInt64(x); return b < 0l ? b ^ "
              "0x7fffffffffffffffl : b; }\n"
            : "int k_total_key_$N($T x) { int b = floatBitsToInt(x); return b < 0 ? b ^ 0x7fffffff : b; }\n";
    if (is_double) prelude.NeedExtension("GL_EXT_shader_explicit_arithmetic_types_int64");
    lhs = Call(prelude, "k_total_key_$N", type, key, a);
    rhs = Call(prelude, "k_total_key_$N", type, key, b);
  }
  switch (direction) {
    case ComparisonDirection::kEq: return "(" + lhs + " == " + rhs + ")";
    // Not "!=": NaN != x must be true, and !(a == b) says so whatever the
    // compiler picks for "!=" (ordered or unordered).
    case ComparisonDirection::kNe: return "(!(" + lhs + " == " + rhs + "))";
    case ComparisonDirection::kGe: return "(" + lhs + " >= " + rhs + ")";
    case ComparisonDirection::kGt: return "(" + lhs + " > " + rhs + ")";
    case ComparisonDirection::kLe: return "(" + lhs + " <= " + rhs + ")";
    case ComparisonDirection::kLt: return "(" + lhs + " < " + rhs + ")";
  }
  return Internal("unknown comparison direction");
}

namespace {

// Saturating float -> integer: NaN is 0, out-of-range values clamp.
std::string FloatToInt(ElementType from, ElementType to, const std::string& x, GlslPrelude& prelude) {
  const std::string f = GlslValueType(from);
  const std::string t = GlslValueType(to);
  std::string low, high;
  int64_t low_value = 0;
  uint64_t high_value = 0;
  const int bits = BitWidth(to);
  if (IsSignedIntegral(to)) {
    low_value = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    high_value = bits == 64 ? uint64_t{INT64_MAX} : (uint64_t{1} << (bits - 1)) - 1;
  } else {
    high_value = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  }
  const std::string name = "k_cvt_" + Name(from) + "_" + Name(to);
  const std::string body = t + " " + name + "(" + f + " x) { if (isnan(x)) return " + ZeroValue(to) +
                           "; if (x <= " + f + "(" + IntLiteral(to, low_value) + ")) return " +
                           IntLiteral(to, low_value) + "; if (x >= " + f + "(" + UintLiteral(to, high_value) +
                           ")) return " + UintLiteral(to, high_value) + "; return " + t + "(x); }\n";
  prelude.Helper(name, body);
  return name + "(" + x + ")";
}

}  // namespace

StatusOr<std::string> ConvertExpr(ElementType from, ElementType to, const std::string& x,
                                  GlslPrelude& prelude) {
  if (from == to) return x;
  const std::string t = GlslValueType(to);
  if (to == ElementType::kPred) {
    if (IsComplex(from)) return "(!(" + x + " == " + GlslValueType(from) + "(0)))";
    return "(" + x + " != " + ZeroValue(from) + ")";
  }
  if (IsComplex(to)) {
    if (IsComplex(from)) return t + "(" + x + ")";
    KILN_ASSIGN_OR_RETURN(std::string part, ConvertExpr(from, ComplexComponentType(to), x, prelude));
    return t + "(" + part + ", 0)";
  }
  if (IsComplex(from)) return ConvertExpr(ComplexComponentType(from), to, x + ".x", prelude);
  if (from == ElementType::kPred) return "(" + x + " ? " + OneValue(to) + " : " + ZeroValue(to) + ")";
  if (IsIntegral(to)) {
    if (IsFloating(from)) return Normalize(to, FloatToInt(from, to, x, prelude), prelude);
    // Integer to integer wraps: convert in the wider GLSL type, then wrap.
    return Normalize(to, t + "(" + x + ")", prelude);
  }
  // To a float: integers round to nearest; f16/bf16 round once from float
  // (double -> float -> half, as the interpreter does).
  std::string value = t + "(" + x + ")";
  return Normalize(to, value, prelude);
}

StatusOr<std::string> BitcastExpr(ElementType from, ElementType to, const std::string& x,
                                  GlslPrelude& prelude) {
  if (BitWidth(from) != BitWidth(to))
    return Unimplemented("bitcast-convert between different widths (", Name(from), " to ", Name(to),
                         ") is not done yet by the Vulkan code generator");
  if (IsComplex(from) || IsComplex(to) || from == ElementType::kPred || to == ElementType::kPred)
    return Unimplemented("bitcast-convert is not defined for ", Name(from), " to ", Name(to));
  if (from == to) return x;
  // To the unsigned bits of the width, then to the target.
  std::string bits;
  switch (from) {
    case ElementType::kF32: bits = "floatBitsToUint(" + x + ")"; break;
    case ElementType::kF64: bits = "doubleBitsToUint64(" + x + ")"; break;
    case ElementType::kF16:
      StoreValue(ElementType::kF16, "x", prelude);  // defines k_f2h
      bits = "k_f2h(" + x + ")";
      break;
    case ElementType::kBF16: bits = "(floatBitsToUint(" + x + ") >> 16)"; break;
    default:
      bits = (BitWidth(from) == 64 ? "uint64_t(" : "(uint(") + x +
             (BitWidth(from) == 64 ? ")" : ") & " + Mask(from) + ")");
      break;
  }
  if (from == ElementType::kF64 || to == ElementType::kF64)
    prelude.NeedExtension("GL_EXT_shader_explicit_arithmetic_types_int64");
  switch (to) {
    case ElementType::kF32: return "uintBitsToFloat(" + bits + ")";
    case ElementType::kF64: return "uint64BitsToDouble(" + bits + ")";
    case ElementType::kF16: LoadValue(ElementType::kF16, "x", prelude); return "k_h2f(" + bits + ")";
    case ElementType::kBF16: return "uintBitsToFloat((" + bits + ") << 16)";
    default: return Normalize(to, GlslValueType(to) + "(" + bits + ")", prelude);
  }
}

StatusOr<std::string> ReducePrecisionExpr(ElementType type, int64_t exponent_bits, int64_t mantissa_bits,
                                          const std::string& x, GlslPrelude& prelude) {
  if (!IsFloating(type)) return NotDefined(Opcode::kReducePrecision, type);
  if (exponent_bits < 1 || mantissa_bits < 0)
    return Unimplemented("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  const bool is_double = type == ElementType::kF64;
  if (is_double) prelude.NeedExtension("GL_EXT_shader_explicit_arithmetic_types_int64");
  const int source_mantissa = is_double ? 52 : 23;
  const int source_exponent = is_double ? 11 : 8;
  const int64_t e = std::min<int64_t>(exponent_bits, 64);
  const int64_t m = std::min<int64_t>(mantissa_bits, 64);
  const std::string bt = is_double ? "uint64_t" : "uint";
  const std::string suffix = is_double ? "ul" : "u";
  auto lit = [&](uint64_t v) { return std::to_string(v) + suffix; };
  std::string body = GlslValueType(type) + " k_rp_" + Name(type) + "_" + std::to_string(e) + "_" +
                     std::to_string(m) + "(" + GlslValueType(type) + " value) {\n  " + bt +
                     " bits = " + (is_double ? "doubleBitsToUint64(value);\n" : "floatBitsToUint(value);\n");
  if (m < source_mantissa) {
    const int dropped = static_cast<int>(source_mantissa - m);
    const uint64_t last = uint64_t{1} << dropped;
    body += "  bits = (bits + (((bits & " + lit(last) + ") >> " + std::to_string(dropped) + ") + " +
            lit((last >> 1) - 1) + ")) & " + lit(is_double ? ~(last - 1) : (~(last - 1) & 0xffffffffu)) +
            ";\n";
  }
  if (e < source_exponent) {
    const uint64_t sign = uint64_t{1} << (source_exponent + source_mantissa);
    const uint64_t exponent_mask = ((uint64_t{1} << source_exponent) - 1) << source_mantissa;
    const int64_t bias = (int64_t{1} << (source_exponent - 1)) - 1;
    const int64_t reduced = (int64_t{1} << (e - 1)) - 1;
    const auto max_exponent = static_cast<uint64_t>(bias + reduced) << source_mantissa;
    const auto min_exponent = static_cast<uint64_t>(bias - reduced) << source_mantissa;
    body += "  " + bt + " exponent = bits & " + lit(exponent_mask) + ";\n  " + bt + " signed_zero = bits & " +
            lit(sign) + ";\n  if (exponent > " + lit(max_exponent) + ") bits = signed_zero | " +
            lit(exponent_mask) + ";\n  else if (exponent <= " + lit(min_exponent) + ") bits = signed_zero;\n";
  }
  body += std::string("  ") + GlslValueType(type) +
          " reduced = " + (is_double ? "uint64BitsToDouble(bits);\n" : "uintBitsToFloat(bits);\n");
  body += "  if (isnan(value)) return " +
          (m > 0 ? std::string("value") : FloatLiteral(is_double ? type : ElementType::kF32, INFINITY)) +
          ";\n  return reduced;\n}\n";
  const std::string name = "k_rp_" + Name(type) + "_" + std::to_string(e) + "_" + std::to_string(m);
  prelude.Helper(name, body);
  return Normalize(type, name + "(" + x + ")", prelude);
}

}  // namespace kiln::vulkan
