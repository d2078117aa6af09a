// Elementwise ops: binary (with broadcast_dimensions), comparisons, unary,
// ternary and element-type changes.
#include "capi/builder_internal.h"

using kiln::Op;
using kiln::capi::BuildOp;
using kiln::capi::OpContext;

namespace {

using BinaryMethod = Op (kiln::Builder::*)(Op, Op, std::span<const int64_t>);
using UnaryMethod = Op (kiln::Builder::*)(Op);

kiln_op_t Binary(kiln_builder_t* builder, const char* function, BinaryMethod method, kiln_op_t lhs,
                 kiln_op_t rhs, const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return BuildOp(builder, function, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::span<const int64_t> dims =
        c.ints(broadcast_dimensions, num_broadcast_dimensions, "broadcast_dimensions");
    if (!c.ok()) return Op();
    return (c.builder().*method)(l, r, dims);
  });
}

kiln_op_t Unary(kiln_builder_t* builder, const char* function, UnaryMethod method, kiln_op_t x) {
  return BuildOp(builder, function, [&](OpContext& c) {
    Op operand = c.op(x, "x");
    if (!c.ok()) return Op();
    return (c.builder().*method)(operand);
  });
}

}  // namespace

extern "C" {

kiln_op_t kiln_op_add(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Add, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_sub(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Sub, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_mul(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Mul, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_div(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Div, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_rem(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Rem, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_max(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Max, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_min(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Min, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_pow(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Pow, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_atan2(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                        const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Atan2, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_and(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::And, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_or(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Or, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_xor(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Xor, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_shift_left(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                             const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::ShiftLeft, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_shift_right_arithmetic(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                         const int64_t* broadcast_dimensions,
                                         size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::ShiftRightArithmetic, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_shift_right_logical(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::ShiftRightLogical, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_complex(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                          const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Complex, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_eq(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Eq, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_ne(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Ne, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_ge(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Ge, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_gt(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Gt, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_le(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Le, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_lt(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                     const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return Binary(builder, __func__, &kiln::Builder::Lt, lhs, rhs, broadcast_dimensions,
                num_broadcast_dimensions);
}

kiln_op_t kiln_op_abs(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Abs, x);
}

kiln_op_t kiln_op_neg(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Neg, x);
}

kiln_op_t kiln_op_not(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Not, x);
}

kiln_op_t kiln_op_sign(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Sign, x);
}

kiln_op_t kiln_op_floor(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Floor, x);
}

kiln_op_t kiln_op_ceil(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Ceil, x);
}

kiln_op_t kiln_op_round(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Round, x);
}

kiln_op_t kiln_op_round_nearest_even(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::RoundNearestEven, x);
}

kiln_op_t kiln_op_exp(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Exp, x);
}

kiln_op_t kiln_op_expm1(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Expm1, x);
}

kiln_op_t kiln_op_log(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Log, x);
}

kiln_op_t kiln_op_log1p(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Log1p, x);
}

kiln_op_t kiln_op_logistic(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Logistic, x);
}

kiln_op_t kiln_op_sqrt(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Sqrt, x);
}

kiln_op_t kiln_op_rsqrt(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Rsqrt, x);
}

kiln_op_t kiln_op_cbrt(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Cbrt, x);
}

kiln_op_t kiln_op_sin(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Sin, x);
}

kiln_op_t kiln_op_cos(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Cos, x);
}

kiln_op_t kiln_op_tan(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Tan, x);
}

kiln_op_t kiln_op_tanh(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Tanh, x);
}

kiln_op_t kiln_op_erf(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Erf, x);
}

kiln_op_t kiln_op_is_finite(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::IsFinite, x);
}

kiln_op_t kiln_op_clz(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Clz, x);
}

kiln_op_t kiln_op_popcnt(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Popcnt, x);
}

kiln_op_t kiln_op_real(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Real, x);
}

kiln_op_t kiln_op_imag(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Imag, x);
}

kiln_op_t kiln_op_copy(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::Copy, x);
}

kiln_op_t kiln_op_cross_replica_sum(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::CrossReplicaSum, x);
}

kiln_op_t kiln_op_optimization_barrier(kiln_builder_t* builder, kiln_op_t x) {
  return Unary(builder, __func__, &kiln::Builder::OptimizationBarrier, x);
}

kiln_op_t kiln_op_compare(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                          kiln_comparison_direction_t direction, kiln_comparison_type_t type,
                          const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op l = c.op(lhs, "lhs");
    Op r = c.op(rhs, "rhs");
    std::span<const int64_t> dims =
        c.ints(broadcast_dimensions, num_broadcast_dimensions, "broadcast_dimensions");
    if (direction < KILN_COMPARE_EQ || direction > KILN_COMPARE_LT) {
      c.Fail(
          kiln::InvalidArgument(c.function(), ": direction ", direction, " is not a KILN_COMPARE_* value"));
    }
    if (type < KILN_COMPARISON_TYPE_DEFAULT || type > KILN_COMPARISON_TYPE_UNSIGNED) {
      c.Fail(kiln::InvalidArgument(c.function(), ": type ", type, " is not a KILN_COMPARISON_TYPE_* value"));
    }
    if (!c.ok()) return Op();
    return c.builder().Compare(l, r, static_cast<kiln::ComparisonDirection>(direction),
                               static_cast<kiln::ComparisonType>(type), dims);
  });
}

kiln_op_t kiln_op_select(kiln_builder_t* builder, kiln_op_t pred, kiln_op_t on_true, kiln_op_t on_false) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op p = c.op(pred, "pred");
    Op t = c.op(on_true, "on_true");
    Op f = c.op(on_false, "on_false");
    if (!c.ok()) return Op();
    return c.builder().Select(p, t, f);
  });
}

kiln_op_t kiln_op_clamp(kiln_builder_t* builder, kiln_op_t min, kiln_op_t operand, kiln_op_t max) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op lo = c.op(min, "min");
    Op x = c.op(operand, "operand");
    Op hi = c.op(max, "max");
    if (!c.ok()) return Op();
    return c.builder().Clamp(lo, x, hi);
  });
}

kiln_op_t kiln_op_convert(kiln_builder_t* builder, kiln_op_t operand, kiln_element_type_t new_type) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    kiln::ElementType type = c.element_type(new_type, "new_type");
    if (!c.ok()) return Op();
    return c.builder().ConvertElementType(x, type);
  });
}

kiln_op_t kiln_op_bitcast_convert(kiln_builder_t* builder, kiln_op_t operand, kiln_element_type_t new_type) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    kiln::ElementType type = c.element_type(new_type, "new_type");
    if (!c.ok()) return Op();
    return c.builder().BitcastConvertType(x, type);
  });
}

kiln_op_t kiln_op_reduce_precision(kiln_builder_t* builder, kiln_op_t operand, int64_t exponent_bits,
                                   int64_t mantissa_bits) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    if (!c.ok()) return Op();
    return c.builder().ReducePrecision(x, exponent_bits, mantissa_bits);
  });
}

}  // extern "C"
