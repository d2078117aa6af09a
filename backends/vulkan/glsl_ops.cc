#include "backends/vulkan/glsl_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "backends/vulkan/glsl_f32_exp_log.h"
#include "backends/vulkan/glsl_f64_library.h"
#include "backends/vulkan/glsl_trig.h"
#include "backends/vulkan/glsl_typed_helper.h"

namespace kiln::vulkan {
namespace {

std::string Name(ElementType type) { return std::string(ElementTypeName(type)); }
bool Is64(ElementType type) { return type == ElementType::kS64 || type == ElementType::kU64; }
bool IsDouble(ElementType type) { return type == ElementType::kF64 || type == ElementType::kC128; }
bool IsRealFloat(ElementType type) { return IsFloating(type); }

Status NotDefined(Opcode opcode, ElementType type) {
  return Unimplemented(OpcodeName(opcode), " is not defined for element type ", Name(type));
}

constexpr const char* kSqrt = "$T k_sqrt_$N($T x) { return x < $Z ? $NAN : sqrt(x); }\n";
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
  if (is_double) NeedF64Library(prelude);
  if (!is_double) {
    // The f32 helpers the body names; expm1 and exp always (k_exp_f32
    // keeps subnormal results, where GLSL's exp on lavapipe gave exp(-100 +
    // i) = 0).
    F32Expm1Call(prelude, ElementType::kF32, "x");
    if (body.find("@G") != std::string::npos || body.find("@L") != std::string::npos)
      F32LogCall(prelude, ElementType::kF32, "x");
    if (body.find("@L") != std::string::npos) F32Log1pCall(prelude, ElementType::kF32, "x");
    if (body.find("@A") != std::string::npos) {
      NeedF32Atan(prelude);
      TypedHelperCall(prelude, "k_atan2_$N", ElementType::kF32, kAtan2, "y, x");
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
  return TypedHelperCall(prelude, name, type, body, x);
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
  return TypedHelperCall(prelude, "k_cabs_$N", type, kCAbs, x);
}

// Whether the component's sign bit is set (-0 and -NaN included).
void NeedComplexSignBit(ElementType type, GlslPrelude& prelude) {
  TypedHelperCall(prelude, "k_csignbit_$N", type,
                  IsDouble(type)
                      ? "bool k_csignbit_$N($R s) { return (unpackDouble2x32(s).y & 0x80000000u) != 0u; }\n"
                      : "bool k_csignbit_$N($R s) { return (floatBitsToUint(s) & 0x80000000u) != 0u; }\n",
                  "s");
}

std::string CSqrt(ElementType type, const std::string& x, GlslPrelude& prelude) {
  CAbs(type, "z", prelude);
  NeedComplexSignBit(type, prelude);
  return TypedHelperCall(prelude, "k_csqrt_$N", type, kCSqrt, x);
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
  return TypedHelperCall(prelude, "k_cdiv_$N", type, kCDiv, a + ", " + b);
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
    case Opcode::kSign:
      CAbs(type, "z", prelude);
      return TypedHelperCall(prelude, "k_csign_$N", type, kCSign, x);
    case Opcode::kExp: return CExp(type, x, prelude);
    case Opcode::kExpm1: return ComplexCall(prelude, "k_cexpm1_$N", type, kCExpm1, x);
    case Opcode::kSqrt: return CSqrt(type, x, prelude);
    case Opcode::kRsqrt:
      CSqrt(type, "z", prelude);
      TypedHelperCall(prelude, "k_cdiv_$N", type, kCDiv, "a, b");
      return TypedHelperCall(prelude, "k_crsqrt_$N", type, kCRsqrt, x);
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
      return TypedHelperCall(prelude, "k_ctan_$N", type, kCTan, x);
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
          return TypedHelperCall(
              prelude, "k_clz_$N", type,
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
    case Opcode::kSign: return TypedHelperCall(prelude, "k_sign_$N", type, is_double ? kSignF : kSignF32, x);
    case Opcode::kFloor: return "floor(" + x + ")";
    case Opcode::kCeil: return "ceil(" + x + ")";
    case Opcode::kRoundNearestAfz: return TypedHelperCall(prelude, "k_round_afz_$N", type, kRoundAfz, x);
    case Opcode::kRoundNearestEven:
      TypedHelperCall(prelude, "k_signbit_$N", type, kSignBit, "x");
      return TypedHelperCall(prelude, "k_round_even_$N", type, kRoundEven, x);
    case Opcode::kSqrt: return TypedHelperCall(prelude, "k_sqrt_$N", type, kSqrt, x);
    case Opcode::kRsqrt:
      return "(" + FloatLiteral(type, 1.0) + " / " + TypedHelperCall(prelude, "k_sqrt_$N", type, kSqrt, x) +
             ")";
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
    NeedF64Library(prelude);
    return std::string(name) + "(" + x + ")";
  }
  switch (opcode) {
    case Opcode::kExp: return F32ExpCall(prelude, type, x);
    case Opcode::kLog: return F32LogCall(prelude, type, x);
    case Opcode::kExpm1: return F32Expm1Call(prelude, type, x);
    case Opcode::kLog1p: return F32Log1pCall(prelude, type, x);
    case Opcode::kLogistic: return "(1.0 / (1.0 + " + F32ExpCall(prelude, type, "-" + x) + "))";
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
      // Not GLSL's sin, cos and tan: glsl_trig.h says why.
      NeedF32Trig(prelude);
      return std::string(opcode == Opcode::kSin   ? "k_fsin("
                         : opcode == Opcode::kCos ? "k_fcos("
                                                  : "k_ftan(") +
             x + ")";
    case Opcode::kTanh:
      F32Expm1Call(prelude, type, "x");
      return TypedHelperCall(prelude, "k_tanh_$N", type, kTanh, x);
    case Opcode::kCbrt: return TypedHelperCall(prelude, "k_cbrt_$N", type, kCbrt, x);
    case Opcode::kErf: return TypedHelperCall(prelude, "k_erf_$N", type, kErf, x);
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
      case Opcode::kMultiply: return TypedHelperCall(prelude, "k_cmul_$N", type, kCMul, args);
      case Opcode::kDivide: return TypedHelperCall(prelude, "k_cdiv_$N", type, kCDiv, args);
      case Opcode::kPower: {
        // Defines k_clog and k_cexp, which k_cpow calls.
        KILN_RETURN_IF_ERROR(ComplexUnary(Opcode::kLog, type, "z", prelude).status());
        KILN_RETURN_IF_ERROR(ComplexUnary(Opcode::kExp, type, "z", prelude).status());
        TypedHelperCall(prelude, "k_cmul_$N", type, kCMul, "a, b");
        return TypedHelperCall(prelude, "k_cpow_$N", type, kCPow, args);
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
      case Opcode::kDivide:
        return TypedHelperCall(prelude, "k_div_$N", type, is_signed ? kDivS : kDivU, args);
      case Opcode::kRemainder:
        return TypedHelperCall(prelude, "k_rem_$N", type, is_signed ? kRemS : kRemU, args);
      case Opcode::kMaximum: return "max(" + args + ")";
      case Opcode::kMinimum: return "min(" + args + ")";
      case Opcode::kPower: return TypedHelperCall(prelude, "k_pow_$N", type, kPowI, args);
      case Opcode::kAnd: return "(" + a + " & " + b + ")";
      case Opcode::kOr: return "(" + a + " | " + b + ")";
      case Opcode::kXor: return "(" + a + " ^ " + b + ")";
      // Amounts are read as unsigned of the element's width; past the width
      // everything is shifted out (C and GLSL leave that undefined).
      case Opcode::kShiftLeft:
        return TypedHelperCall(
            prelude, "k_shl_$N", type,
            "$T k_shl_$N($T a, $T b) { return ($U(b) & " + Mask(type) + ") >= $W ? $Z : a << int(b); }\n",
            args);
      case Opcode::kShiftRightLogical:
        return TypedHelperCall(prelude, "k_shrl_$N", type,
                               "$T k_shrl_$N($T a, $T b) { return ($U(b) & " + Mask(type) +
                                   ") >= $W ? $Z : $T(($U(a) & " + Mask(type) + ") >> int(b)); }\n",
                               args);
      case Opcode::kShiftRightArithmetic: {
        // Sign-extend the element's own width first (an unsigned u8 0x80 is negative here).
        const std::string s = Is64(type) ? "int64_t" : "int";
        const std::string extend =
            BitWidth(type) < 32 ? "bitfieldExtract(int(a), 0, " + width + ")" : s + "(a)";
        return TypedHelperCall(prelude, "k_shra_$N", type,
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
    case Opcode::kMaximum: return TypedHelperCall(prelude, "k_max_$N", type, kMaxF, args);
    case Opcode::kMinimum: return TypedHelperCall(prelude, "k_min_$N", type, kMinF, args);
    case Opcode::kRemainder:
      TypedHelperCall(prelude, "k_signbit_$N", type, kSignBit, "x");
      return TypedHelperCall(prelude, "k_fmod_$N", type, kFmod, args);
    default: break;
  }
  if (IsDouble(type)) {
    NeedF64Library(prelude);
    if (opcode == Opcode::kPower) return "k_dpow(" + args + ")";
    if (opcode == Opcode::kAtan2) return "k_datan2(" + args + ")";
    return NotDefined(opcode, type);
  }
  switch (opcode) {
    case Opcode::kPower: return F32PowCall(prelude, type, args);
    case Opcode::kAtan2:
      NeedF32Atan(prelude);
      return TypedHelperCall(prelude, "k_atan2_$N", type, kAtan2, args);
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
    TypedHelperCall(prelude, "k_signbit_$N", real, kSignBit, "x");
    return TypedHelperCall(prelude, name, real, body, args);
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
      return TypedHelperCall(prelude, constant_first ? "k_cconstdiv_$N" : "k_cdivc_$N", type, body,
                             a + ", " + b);
    }
    case Opcode::kMultiply: {
      auto product = [&](const char* xp, const char* cp) {
        return real_call("k_mulc_$N", kMulConstant, std::string("x.") + xp + ", c." + cp);
      };
      return TypedHelperCall(prelude, "k_cmulc_$N", type,
                             "$T k_cmulc_$N($T x, $T c) { return $T(" + product("x", "x") + " - " +
                                 product("y", "y") + ", " + product("x", "y") + " + " + product("y", "x") +
                                 "); }\n",
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
    lhs = TypedHelperCall(prelude, "k_total_key_$N", type, key, a);
    rhs = TypedHelperCall(prelude, "k_total_key_$N", type, key, b);
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
