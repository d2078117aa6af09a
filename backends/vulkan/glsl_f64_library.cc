#include "backends/vulkan/glsl_f64_library.h"

#include <cmath>
#include <string>
#include <vector>

#include "backends/vulkan/glsl_trig.h"

namespace kiln::vulkan {
namespace {

std::string F64Literal(double value) { return FloatLiteral(ElementType::kF64, value); }

// c[0] + v * (c[1] + v * (... c[n-1])).
std::string F64Horner(const std::string& v, const std::vector<long double>& c) {
  std::string text = F64Literal(static_cast<double>(c.back()));
  for (size_t i = c.size() - 1; i-- > 0;)
    text = F64Literal(static_cast<double>(c[i])) + " + " + v + " * (" + text + ")";
  return text;
}

long double F64Factorial(int n) {
  long double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

const std::string& F64LibraryText() {
  static const std::string library = [] {
    const double inf = INFINITY;
    const std::string INF = F64Literal(inf), NAN_ = F64Literal(std::nan(""));
    const std::string LN2HI = F64Literal(6.93147180369123816490e-01),
                      LN2LO = F64Literal(1.90821492927058770002e-10);
    const std::string LOG2E = F64Literal(1.44269504088896338700e+00);
    const std::string PIO2_1 = F64Literal(1.57079632673412561417e+00),
                      PIO2_2 = F64Literal(6.07710050630396597660e-11),
                      PIO2_3 = F64Literal(2.02226624879595063154e-21);
    const std::string PIO2 = F64Literal(1.57079632679489655800e+00),
                      PIO2LO = F64Literal(6.12323399573676603587e-17);
    const std::string PI = F64Literal(3.14159265358979311600e+00),
                      PILO = F64Literal(1.22464679914735317723e-16);
    const std::string PIO4 = F64Literal(7.85398163397448278999e-01);
    const std::string TINY = F64Literal(2.2250738585072014e-308), TWO54 = F64Literal(18014398509481984.0);
    std::vector<long double> exp_c, expm1_c, log_c, sin_c, cos_c, atan_c, erf_c;
    for (int k = 0; k <= 13; ++k) exp_c.push_back(1 / F64Factorial(k));
    for (int k = 0; k <= 16; ++k) expm1_c.push_back(1 / F64Factorial(k + 1));
    for (int k = 0; k <= 11; ++k) log_c.push_back(1.0L / (2 * k + 1));
    for (int k = 1; k <= 8; ++k) sin_c.push_back((k % 2 ? -1 : 1) / F64Factorial(2 * k + 1));
    for (int k = 1; k <= 9; ++k) cos_c.push_back((k % 2 ? -1 : 1) / F64Factorial(2 * k));
    for (int k = 0; k <= 12; ++k) atan_c.push_back((k % 2 ? -1.0L : 1.0L) / (2 * k + 1));
    for (int k = 0; k <= 40; ++k) erf_c.push_back((k % 2 ? -1 : 1) / (F64Factorial(k) * (2 * k + 1)));
    std::string text;
    text += "double k_dscale(double x, int n) { return ldexp(ldexp(x, n / 2), n - n / 2); }\n";
    text += "double k_dexp(double x) {\n  if (isnan(x)) return x;\n  if (x > 709.782712893384lf) return " +
            INF + ";\n  if (x < -745.2lf) return 0.0lf;\n  double n = roundEven(x * " + LOG2E +
            ");\n  precise double r = (x - n * " + LN2HI + ") - n * " + LN2LO + ";\n  return k_dscale(" +
            F64Horner("r", exp_c) + ", int(n));\n}\n";
    text +=
        "double k_dexpm1(double x) {\n  if (isnan(x) || x == 0.0lf) return x;\n  if (x > 40.0lf) return "
        "k_dexp(x);\n  if (x < -40.0lf) return -1.0lf;\n  if (abs(x) < 0.34657359027997264lf) return x * (" +
        F64Horner("x", expm1_c) + ");\n  double n = roundEven(x * " + LOG2E +
        ");\n  precise double r = (x - n * " + LN2HI + ") - n * " + LN2LO + ";\n  double q = r * (" +
        F64Horner("r", expm1_c) +
        ");\n  precise double one = k_dscale(1.0lf, int(n)) - 1.0lf;\n  precise double result = k_dscale(q, "
        "int(n)) + one;\n  return result;\n}\n";
    text +=
        "double k_dlogx(double x, out double lo) {\n  int adjust = 0;\n  if (x < " + TINY +
        ") { x *= " + TWO54 +
        "; adjust = -54; }\n  int e;\n  double m = frexp(x, e);\n  if (m < 0.70710678118654752lf) { m *= "
        "2.0lf; e -= 1; }\n  double de = double(e + adjust);\n  precise double f = (m - 1.0lf) / (m + "
        "1.0lf);\n"
        "  double f2 = f * f;\n  precise double a = de * " +
        LN2HI + ";\n  precise double b = de * " + LN2LO + " + 2.0lf * f * (" + F64Horner("f2", log_c) +
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
    // k_2opi_window: NeedTwoOverPiBits (NeedF64Library adds it).
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
        "  int first = e + 62;\n  uint w0, w1, w2, w3;\n  k_2opi_window(first, w0, w1, w2, w3);\n"
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
    text += "double k_dsinr(double r) { double r2 = r * r; return r + r * r2 * (" + F64Horner("r2", sin_c) +
            "); }\n";
    text += "double k_dcosr(double r) { double r2 = r * r; return 1.0lf + r2 * (" + F64Horner("r2", cos_c) +
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
    for (int k = 40; k >= 1; --k) cf += "  t = a + " + F64Literal(k / 2.0) + " / t;\n";
    text +=
        "double k_derf(double x) {\n  if (isnan(x) || x == 0.0lf) return x;\n  double a = abs(x);\n"
        "  double r = 1.0lf;\n  if (a < 2.0lf) {\n    double a2 = a * a;\n    r = " +
        F64Literal(1.12837916709551257390e+00) + " * a * (" + F64Horner("a2", erf_c) +
        ");\n  } else if (a < 6.0lf) {\n  double t = a;\n" + cf + "  r = 1.0lf - k_dexp(-a * a) * " +
        F64Literal(5.64189583547756286948e-01) + " / t;\n  }\n  return x < 0.0lf ? -r : r;\n}\n";
    // atan on [-1, 1]: past tan(pi/8) by pi/4 + atan((a-1)/(a+1)), then
    // halved (atan a = 2 atan(a / (1 + sqrt(1 + a^2)))) and its series.
    text +=
        "double k_datanu(double t) {\n  double a = abs(t);\n  double base = 0.0lf;\n"
        "  if (a > 0.41421356237309503lf) { a = (a - 1.0lf) / (a + 1.0lf); base = " +
        PIO4 +
        "; }\n  double h = a / (1.0lf + sqrt(1.0lf + a * a));\n  double h2 = h * h;\n"
        "  double r = base + 2.0lf * h * (" +
        F64Horner("h2", atan_c) + ");\n  return t < 0.0lf ? -r : r;\n}\n";
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
        F64Literal(2.35619449019234492885e+00) + " : -" + PIO4 + ") : (xneg ? " +
        F64Literal(2.35619449019234492885e+00) + " : " + PIO4 + ");\n    if (xneg) return yneg ? -" + PI +
        " : " + PI + ";\n    return y / x;\n  }\n  if (isinf(y)) return yneg ? -" + PIO2 + " : " + PIO2 +
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

}  // namespace

void NeedF64Library(GlslPrelude& prelude) {
  NeedTwoOverPiBits(prelude);
  prelude.Helper("k_dmath", F64LibraryText());
}

}  // namespace kiln::vulkan
