#include "backends/vulkan/glsl_trig.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>

namespace kiln::vulkan {
namespace {

// The first 1280 bits of 2/pi (computed from Machin's formula for pi).
constexpr uint32_t kTwoOverPiBits[] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
    0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
    0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d};

// Word j of two zero words followed by the first `words` words of 2/pi (0
// past them), for 0 <= j < `slots` (a power of two, at least words + 2), as
// GLSL: a tree of selects on j's bits, from bit `slots` / 2 down.
std::string TwoOverPiWordAt(int first_slot, int slots, int words) {
  if (slots == 1) {
    const int word = first_slot - 2;
    if (word < 0 || word >= words) return "0u";
    char text[16];
    std::snprintf(text, sizeof(text), "0x%08xu", kTwoOverPiBits[word]);
    return text;
  }
  return "((j & " + std::to_string(slots / 2) + ") == 0 ? " + TwoOverPiWordAt(first_slot, slots / 2, words) +
         " : " + TwoOverPiWordAt(first_slot + slots / 2, slots / 2, words) + ")";
}

// GLSL's `uint name_at(int j)`, word j of two zero words and then the first
// `words` words of 2/pi, and `void name_window(int bit, out uint w0, ...,
// out uint w{window - 1})`, the `window` words of 32 bits from bit `bit` of
// those on, each word read once. Not a const array: that stays a local
// array in the SPIR-V, and lavapipe (Mesa 22.3) turns each read of one at a
// variable index into code its LLVM takes long over: a kernel of one f64
// sine (8 reads of the 42 words) took 4.4-5.1 s to compile there, with the
// tree 0.05-0.09 s, an f32 sine (6 reads of 10) 0.27-0.31 s against
// 0.03-0.08 s. The f32 functions take the first 8 words (they read none
// past the tenth slot): a smaller tree.
std::string TwoOverPiWords(const std::string& name, int words, int window) {
  int slots = 1;
  while (slots < words + 2) slots *= 2;
  std::string text = "uint " + name + "_at(int j) {\n  return " + TwoOverPiWordAt(0, slots, words) + ";\n}\n";
  text += "void " + name + "_window(int bit";
  for (int i = 0; i < window; ++i) text += ", out uint w" + std::to_string(i);
  text += ") {\n  int j = bit / 32;\n  int s = bit % 32;\n";
  for (int i = 0; i <= window; ++i)
    text += "  uint a" + std::to_string(i) + " = " + name + "_at(j + " + std::to_string(i) + ");\n";
  for (int i = 0; i < window; ++i) {
    const std::string a = "a" + std::to_string(i), next = "a" + std::to_string(i + 1);
    text += "  w" + std::to_string(i) + " = s == 0 ? " + a + " : (" + a + " << s) | (" + next +
            " >> (32 - s));\n";
  }
  return text + "}\n";
}

std::string TrigF(double value) { return FloatLiteral(ElementType::kF32, value); }

// (-1)^k / n! for the series' k-th term.
double TrigSeriesTerm(int n, int k) {
  double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return (k % 2 ? -1.0 : 1.0) / f;
}

// a b - p exactly, for p = a b rounded (Veltkamp's split into halves of 12
// bits, Dekker's product), where 4097 a and 4097 b are finite and nothing
// underflows: the rounding error of a quotient q = a / b is (a - q b) / b
// to within an ulp of itself, which is how these functions undo what a
// division lost (Vulkan lets it be 2.5 ulps off; lavapipe's is exact).
constexpr const char* kF32ProductError = R"(float k_fproduct_error(float a, float b, float p) {
  precise float a_split = 4097.0 * a;
  precise float a_hi = a_split - (a_split - a);
  precise float a_lo = a - a_hi;
  precise float b_split = 4097.0 * b;
  precise float b_hi = b_split - (b_split - b);
  precise float b_lo = b - b_hi;
  precise float e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
  return e;
}
)";

const std::string& F32TrigLibrary() {
  static const std::string library = [] {
    // Taylor's series to x^9 (sine) and x^10 (cosine): on [-pi/4, pi/4]
    // the first term left out is below 2.5e-9 of the result, 0.04 of an
    // ulp, so a minimax fit would gain nothing measurable.
    std::string sin_poly = TrigF(TrigSeriesTerm(9, 0));
    for (int n = 7; n >= 3; n -= 2)
      sin_poly = TrigF(TrigSeriesTerm(n, (n - 1) / 2)) + " + z * (" + sin_poly + ")";
    std::string cos_poly = TrigF(TrigSeriesTerm(10, 1));
    for (int n = 8; n >= 4; n -= 2) cos_poly = TrigF(TrigSeriesTerm(n, n / 2)) + " + z * (" + cos_poly + ")";
    std::string text;
    // |x| = n pi/2 + r + e, q = n mod 4, for a finite f32 a = |x| above
    // pi/4: a = M 2^E (M of 24 bits) times the 96 bits of 2/pi from bit
    // E - 1 on gives a 2/pi mod 4 as the product's low 96 bits over 2^94
    // (the bits before add multiples of 4; those after, under 2^-70). The
    // fraction, rounded to the nearest integer n and normalised, times
    // pi/4 in 64 bits gives r to about 56 bits, as a float r and the rest e.
    text +=
        "int k_freduce(float a, out float r, out float e) {\n"
        "  uint bits = floatBitsToUint(a);\n"
        "  uint m = (bits & 0x7fffffu) | 0x800000u;\n"
        "  int first = int(bits >> 23) - 150 + 62;\n"
        "  uint w0, w1, w2;\n"
        "  k_f2opi_window(first, w0, w1, w2);\n"
        "  uint p0, p1, p2, h, carry;\n"
        "  umulExtended(m, w2, h, p0);\n"
        "  umulExtended(m, w1, p2, p1);\n"
        "  p1 = uaddCarry(p1, h, carry);\n"
        "  p2 += carry + m * w0;\n"
        "  int q = int((p2 + 0x20000000u) >> 30) & 3;\n"
        "  uint f2 = p2 & 0x3fffffffu;\n"
        "  if ((f2 & 0x20000000u) != 0u) {\n"
        "    // Past one half: n rounds up and the fraction is 1 - f (negated in 94 bits).\n"
        "    p0 = ~p0 + 1u;\n"
        "    uint carry_up = p0 == 0u ? 1u : 0u;\n"
        "    p1 = ~p1 + carry_up;\n"
        "    carry_up = (p1 == 0u && carry_up == 1u) ? 1u : 0u;\n"
        "    f2 = (~f2 + carry_up) & 0x3fffffffu;\n"
        "  }\n"
        "  bool negative = (p2 & 0x20000000u) != 0u;\n"
        "  int scale = -94;\n"
        "  if (f2 == 0u) { f2 = p1; p1 = p0; p0 = 0u; scale -= 32; }\n"
        "  if (f2 == 0u) { f2 = p1; p1 = p0; p0 = 0u; scale -= 32; }\n"
        "  if (f2 == 0u) { r = 0.0; e = 0.0; return q; }\n"
        "  int lz = 31 - findMSB(f2);\n"
        "  uint hi = lz == 0 ? f2 : (f2 << lz) | (p1 >> (32 - lz));\n"
        "  uint lo = lz == 0 ? p1 : (p1 << lz) | (p0 >> (32 - lz));\n"
        "  // The fraction is (hi lo) 2^(scale + 32 - lz); pi/4 is 0xc90fdaa2 2168c235 2^-64.\n"
        "  uint t1, t0, u1, u0, v1, v0, c1, c2;\n"
        "  umulExtended(hi, 0xc90fdaa2u, t1, t0);\n"
        "  umulExtended(hi, 0x2168c235u, u1, u0);\n"
        "  umulExtended(lo, 0xc90fdaa2u, v1, v0);\n"
        "  t0 = uaddCarry(t0, u1, c1);\n"
        "  t0 = uaddCarry(t0, v1, c2);\n"
        "  t1 += c1 + c2;\n"
        "  // r = (t1 t0) 2^(scale + 33 - lz), t1's unit 2^32 of it: t1 >= 2^30, so t1 less its low\n"
        "  // byte is exact in a float.\n"
        "  int exponent = scale + 65 - lz;\n"
        "  float r_hi = ldexp(float(t1 & 0xffffff00u), exponent);\n"
        "  float r_lo = ldexp(float(t1 & 0xffu) + float(t0) * 2.3283064e-10, exponent);\n"
        "  precise float sum = r_hi + r_lo;\n"
        "  precise float rest = (r_hi - sum) + r_lo;\n"
        "  r = negative ? -sum : sum;\n"
        "  e = negative ? -rest : rest;\n"
        "  return q;\n"
        "}\n";
    // sin(r + e) and cos(r + e) for |r| <= pi/4 (a little beyond where
    // n was rounded near a half), e under half an ulp of r: the small
    // terms are summed first and added to r, or to 1 - r^2/2 with that
    // subtraction's rounding error recovered (both steps are exact).
    text += "float k_fsinr(float r, float e) {\n  float z = r * r;\n  precise float tail = r * z * (" +
            sin_poly + ") + e * (1.0 - 0.5 * z);\n  precise float s = r + tail;\n  return s;\n}\n";
    text +=
        "float k_fcosr(float r, float e) {\n  float z = r * r;\n  precise float hz = 0.5 * z;\n"
        "  precise float w = 1.0 - hz;\n  precise float tail = ((1.0 - w) - hz) + (z * z * (" +
        cos_poly + ") - r * e);\n  precise float c = w + tail;\n  return c;\n}\n";
    // Below pi/4 the argument is r itself (n = 0); |x| is reduced and the
    // sign of x put back (sine and tangent are odd).
    text +=
        "int k_freduce_abs(float x, out float r, out float e) {\n"
        "  float a = abs(x);\n"
        "  if (a <= 0.785398163) { r = a; e = 0.0; return 0; }\n"
        "  return k_freduce(a, r, e);\n}\n"
        "float k_fwith_sign_of(float value, float x) {\n"
        "  return uintBitsToFloat(floatBitsToUint(value) ^ (floatBitsToUint(x) & 0x80000000u));\n}\n";
    const std::string nan = TrigF(std::nan(""));
    text += "float k_fsin(float x) {\n  if (isnan(x) || isinf(x)) return " + nan +
            ";\n  float r, e;\n  int q = k_freduce_abs(x, r, e);\n"
            "  float s = (q & 1) == 0 ? k_fsinr(r, e) : k_fcosr(r, e);\n"
            "  return k_fwith_sign_of(q >= 2 ? -s : s, x);\n}\n";
    text += "float k_fcos(float x) {\n  if (isnan(x) || isinf(x)) return " + nan +
            ";\n  float r, e;\n  int q = k_freduce_abs(x, r, e);\n"
            "  float c = (q & 1) == 0 ? k_fcosr(r, e) : k_fsinr(r, e);\n"
            "  return (q == 1 || q == 2) ? -c : c;\n}\n";
    text +=
        "void k_fsincos(float x, out float s, out float c) {\n  if (isnan(x) || isinf(x)) {\n    s = " + nan +
        ";\n    c = s;\n    return;\n  }\n  float r, e;\n  int q = k_freduce_abs(x, r, e);\n"
        "  float sr = k_fsinr(r, e);\n  float cr = k_fcosr(r, e);\n"
        "  s = (q & 1) == 0 ? sr : cr;\n  c = (q & 1) == 0 ? cr : sr;\n"
        "  if (q >= 2) s = -s;\n  if (q == 1 || q == 2) c = -c;\n  s = k_fwith_sign_of(s, x);\n}\n";
    // tan(r + e) = r + r^3 P(r^2) + e (1 + r^2), -1 / that for odd q. P:
    // a least-squares fit of (tan r - r) / r^3 in z = r^2, degree 6, on
    // 400 Chebyshev nodes of [0, (pi/4)^2] weighted by r^3 / tan r (so it
    // fits tan's relative error), its coefficients rounded to f32: tan is
    // then within 1.9e-9 relative (0.03 ulp) of the truth (mpmath, 40
    // digits). Sine over cosine was 2.1 ulps off (two results' errors and
    // a division's); -1 / t without t's rounding error, 1.5.
    std::string tan_poly = TrigF(4.360605963e-03);
    for (const double c : {1.219109326e-04, 1.080989838e-02, 2.129224315e-02, 5.405799299e-02,
                           1.333267987e-01, 3.333334923e-01})
      tan_poly = TrigF(c) + " + z * (" + tan_poly + ")";
    text += "float k_ftan(float x) {\n  if (isnan(x) || isinf(x)) return " + nan +
            ";\n  float r, e;\n  int q = k_freduce_abs(x, r, e);\n  float z = r * r;\n"
            "  precise float tail = r * z * (" +
            tan_poly +
            ") + e * (1.0 + z);\n  precise float t = r + tail;\n"
            "  // -1 / (t + t_lo), t_lo what t's rounding left out: -1/t + t_lo / t^2, -1/t\n"
            "  // as inverse + inverse_lo (what the division left out).\n"
            "  precise float t_lo = tail - (t - r);\n  float inverse = -1.0 / t;\n"
            "  float product = inverse * t;\n"
            "  precise float inverse_lo = ((-1.0 - product) - k_fproduct_error(inverse, t, product)) / t;\n"
            "  precise float cotangent = inverse + (inverse * inverse * t_lo + inverse_lo);\n"
            "  return k_fwith_sign_of((q & 1) == 0 ? t : cotangent, x);\n}\n";
    return text;
  }();
  return library;
}

// atan(n / d) for 0 <= n <= d (n finite): Vulkan bounds GLSL's atan only
// to 4096 ulps (lavapipe's was 2e-5 relative off for tiny quotients). Past
// 1/2 by pi/4 + atan(u), u = (n - d) / (n + d), with n - d exact
// (Sterbenz), so |u| <= 1/2 either way and Taylor's series to u^27 leaves
// out under 1.3e-10 of the result (u^29 / 29 over u); the quotient's and
// n + d's rounding errors are added back through atan's derivative; pi/4
// in two parts, the small one added first. Past tan(pi/8) instead (a
// shorter series), n - d was rounded and atan2 2.01 ulps off; without the
// quotient's correction 1.47.
const std::string& F32AtanLibrary() {
  static const std::string library = [] {
    std::string poly = TrigF(-1.0 / 27);
    for (int k = 12; k >= 1; --k) poly = TrigF((k % 2 ? -1.0 : 1.0) / (2 * k + 1)) + " + z * (" + poly + ")";
    const double pio4 = 0.78539816339744830962;
    const auto pio4_hi = static_cast<float>(pio4);
    return "float k_fatan_series(float u) {\n  float z = u * u;\n  precise float a = u + u * z * (" + poly +
           ");\n  return a;\n}\n"
           "float k_fatanq(float n, float d) {\n  if (isinf(d)) return 0.0;\n"
           "  // Powers of two that keep 4097 d finite and n - q d normal.\n"
           "  if (d > 1.0e30) {\n    n *= " +
           TrigF(std::ldexp(1.0, -64)) + ";\n    d *= " + TrigF(std::ldexp(1.0, -64)) +
           ";\n  } else if (d < 1.0e-18) {\n    n *= " + TrigF(std::ldexp(1.0, 64)) +
           ";\n    d *= " + TrigF(std::ldexp(1.0, 64)) +
           ";\n  }\n"
           "  if (!(n > 0.5 * d)) {\n    float t = n / d;\n    float product = t * d;\n"
           "    precise float t_lo = ((n - product) - k_fproduct_error(t, d, product)) / d;\n"
           "    precise float a = k_fatan_series(t) + t_lo / (1.0 + t * t);\n    return a;\n  }\n"
           "  float num = n - d;\n  precise float den = n + d;\n  precise float den_lo = (d - den) + n;\n"
           "  float u = num / den;\n  float product = u * den;\n"
           "  precise float u_lo = (((num - product) - k_fproduct_error(u, den, product)) - u * den_lo) / "
           "den;\n"
           "  precise float shifted = ((k_fatan_series(u) + u_lo / (1.0 + u * u)) + " +
           TrigF(pio4 - static_cast<double>(pio4_hi)) + ") + " + TrigF(pio4_hi) + ";\n  return shifted;\n}\n";
  }();
  return library;
}

}  // namespace

void NeedTwoOverPiBits(GlslPrelude& prelude) {
  prelude.Helper("k_2opi", TwoOverPiWords("k_2opi", static_cast<int>(std::size(kTwoOverPiBits)), 4));
}

void NeedF32ProductError(GlslPrelude& prelude) { prelude.Helper("k_fproduct_error", kF32ProductError); }

void NeedF32Atan(GlslPrelude& prelude) {
  NeedF32ProductError(prelude);
  prelude.Helper("k_fatanq", F32AtanLibrary());
}

void NeedF32Trig(GlslPrelude& prelude) {
  static const std::string library = TwoOverPiWords("k_f2opi", 8, 3) + F32TrigLibrary();
  NeedF32ProductError(prelude);
  prelude.Helper("k_ftrig", library);
}

}  // namespace kiln::vulkan
