#include "backends/vulkan/glsl_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

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

Status NoDouble(Opcode opcode, ElementType type) {
  return Unimplemented(OpcodeName(opcode), " of ", Name(type),
                       ": GLSL has no double-precision version of this function");
}

// Functions GLSL leaves undefined outside their domain, made total the way C's are.
constexpr const char* kLog = "$T k_log_$N($T x) { return x < $Z ? $NAN : (x == $Z ? -$INF : log(x)); }\n";
constexpr const char* kSqrt = "$T k_sqrt_$N($T x) { return x < $Z ? $NAN : sqrt(x); }\n";
constexpr const char* kExpm1 = R"($T k_expm1_$N($T x) {
  $T u = exp(x);
  if (u == $ONE) return x;
  $T um1 = u - $ONE;
  if (um1 == -$ONE) return -$ONE;
  if (isinf(u)) return u;
  return um1 * x / log(u);
}
)";
constexpr const char* kLog1p = R"($T k_log1p_$N($T x) {
  $T u = $ONE + x;
  if (u == $ONE) return x;
  if (isinf(u) || u <= $Z) return k_log_$N(u);
  return log(u) * x / (u - $ONE);
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
constexpr const char* kCbrt = R"($T k_cbrt_$N($T x) {
  if (x == $Z || isnan(x) || isinf(x)) return x;
  $T r = pow(abs(x), 1.0 / 3.0);
  r = r - (r * r * r - abs(x)) / (3.0 * r * r);
  return x < $Z ? -r : r;
}
)";
// erf as a rational function on [-4, 4] (beyond, erf is +-1 in f32), the
// approximation XLA's and Eigen's f32 erf use.
constexpr const char* kErf = R"($T k_erf_$N($T x) {
  if (isnan(x)) return x;
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
  $T r = pow(ax, y);
  return (negative && y_odd) ? -r : r;
}
)";
constexpr const char* kAtan2 = R"($T k_atan2_$N($T y, $T x) {
  if (isnan(x) || isnan(y)) return x + y;
  bool x_negative = (floatBitsToUint(x) & 0x80000000u) != 0u;
  if (y == $Z) return x_negative ? (y < $Z || (floatBitsToUint(y) & 0x80000000u) != 0u ? -3.14159265358979323846 : 3.14159265358979323846) : y;
  if (isinf(x) && isinf(y)) return (x > $Z ? 0.78539816339744830962 : 2.35619449019234492885) * sign(y);
  return atan(y, x);
}
)";
// C's fmod, exactly: subtract the divisor scaled to the remainder's exponent
// (each step is exact), instead of x - y * trunc(x / y), which is not.
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
  return x < $Z ? -r : r;
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
constexpr const char* kRoundEven = R"($T k_round_even_$N($T x) {
  $T r = roundEven(x);
  return r == $Z ? x * $Z : r;
}
)";
constexpr const char* kSignF = "$T k_sign_$N($T x) { return (isnan(x) || x == $Z) ? x : sign(x); }\n";

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
constexpr const char* kCExp =
    "$T k_cexp_$N($T z) { $R e = exp(z.x); return z.y == $R(0) ? $T(e, z.y) : $T(e * cos(z.y), e * "
    "sin(z.y)); }\n";
constexpr const char* kCLog = "$T k_clog_$N($T z) { return $T(log(k_cabs_$N(z)), atan(z.y, z.x)); }\n";
constexpr const char* kCSign =
    "$T k_csign_$N($T z) { $R m = k_cabs_$N(z); return m == $R(0) ? z : z / m; }\n";

std::string CAbs(ElementType type, const std::string& x, GlslPrelude& prelude) {
  return Call(prelude, "k_cabs_$N", type, kCAbs, x);
}

StatusOr<std::string> ComplexUnary(Opcode opcode, ElementType type, const std::string& x,
                                   GlslPrelude& prelude) {
  switch (opcode) {
    case Opcode::kCopy: return x;
    case Opcode::kNegate: return "(-" + x + ")";
    case Opcode::kAbs: return CAbs(type, x, prelude);
    case Opcode::kSign: CAbs(type, "z", prelude); return Call(prelude, "k_csign_$N", type, kCSign, x);
    case Opcode::kExp:
      if (IsDouble(type)) return NoDouble(opcode, type);
      return Call(prelude, "k_cexp_$N", type, kCExp, x);
    case Opcode::kLog:
      if (IsDouble(type)) return NoDouble(opcode, type);
      CAbs(type, "z", prelude);
      return Call(prelude, "k_clog_$N", type, kCLog, x);
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
    case Opcode::kSign: return Call(prelude, "k_sign_$N", type, kSignF, x);
    case Opcode::kFloor: return "floor(" + x + ")";
    case Opcode::kCeil: return "ceil(" + x + ")";
    case Opcode::kRoundNearestAfz: return Call(prelude, "k_round_afz_$N", type, kRoundAfz, x);
    case Opcode::kRoundNearestEven: return Call(prelude, "k_round_even_$N", type, kRoundEven, x);
    case Opcode::kSqrt: return Call(prelude, "k_sqrt_$N", type, kSqrt, x);
    case Opcode::kRsqrt:
      return "(" + FloatLiteral(type, 1.0) + " / " + Call(prelude, "k_sqrt_$N", type, kSqrt, x) + ")";
    default: break;
  }
  // The rest have no double-precision GLSL built-ins.
  if (is_double) return NoDouble(opcode, type);
  switch (opcode) {
    case Opcode::kExp: return "exp(" + x + ")";
    case Opcode::kLog: return Call(prelude, "k_log_$N", type, kLog, x);
    case Opcode::kExpm1: return Call(prelude, "k_expm1_$N", type, kExpm1, x);
    case Opcode::kLog1p:
      Call(prelude, "k_log_$N", type, kLog, "x");
      return Call(prelude, "k_log1p_$N", type, kLog1p, x);
    case Opcode::kLogistic: return "(1.0 / (1.0 + exp(-" + x + ")))";
    case Opcode::kSin: return "sin(" + x + ")";
    case Opcode::kCos: return "cos(" + x + ")";
    case Opcode::kTan: return "tan(" + x + ")";
    case Opcode::kTanh:
      Call(prelude, "k_expm1_$N", type, kExpm1, "x");
      return Call(prelude, "k_tanh_$N", type, kTanh, x);
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
    case Opcode::kRemainder: return Call(prelude, "k_fmod_$N", type, kFmod, args);
    default: break;
  }
  if (IsDouble(type)) return NoDouble(opcode, type);
  switch (opcode) {
    case Opcode::kPower: return Call(prelude, "k_pow_$N", type, kPowF, args);
    case Opcode::kAtan2: return Call(prelude, "k_atan2_$N", type, kAtan2, args);
    default: return NotDefined(opcode, type);
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
