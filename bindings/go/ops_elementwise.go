// Wrappers of the elementwise ops of kiln.h, written by a one-off script;
// keep them in step with the header.
package kiln

/*
#include <kiln/kiln.h>
*/
import "C"

// Elementwise binary ops. broadcastDims maps the lower-rank operand's dimensions
// into the higher-rank one's; none means equal shapes or a scalar operand.

// Add is elementwise add.
func (b *Builder) Add(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_add(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Sub is elementwise sub.
func (b *Builder) Sub(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_sub(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Mul is elementwise mul.
func (b *Builder) Mul(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_mul(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Div is elementwise div.
func (b *Builder) Div(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_div(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Rem is elementwise rem (the result has the sign of the dividend).
func (b *Builder) Rem(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_rem(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Max is elementwise max.
func (b *Builder) Max(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_max(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Min is elementwise min.
func (b *Builder) Min(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_min(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Pow is elementwise pow.
func (b *Builder) Pow(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_pow(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Atan2 is elementwise atan2.
func (b *Builder) Atan2(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_atan2(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// And is elementwise and.
func (b *Builder) And(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_and(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Or is elementwise or.
func (b *Builder) Or(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_or(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Xor is elementwise xor.
func (b *Builder) Xor(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_xor(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// ShiftLeft is elementwise shift_left.
func (b *Builder) ShiftLeft(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_shift_left(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// ShiftRightArithmetic is elementwise shift_right_arithmetic.
func (b *Builder) ShiftRightArithmetic(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_shift_right_arithmetic(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// ShiftRightLogical is elementwise shift_right_logical.
func (b *Builder) ShiftRightLogical(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_shift_right_logical(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Complex is elementwise complex (real, imaginary) -> complex.
func (b *Builder) Complex(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_complex(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Eq is elementwise eq (result PRED).
func (b *Builder) Eq(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_eq(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Ne is elementwise ne (result PRED).
func (b *Builder) Ne(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_ne(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Ge is elementwise ge (result PRED).
func (b *Builder) Ge(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_ge(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Gt is elementwise gt (result PRED).
func (b *Builder) Gt(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_gt(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Le is elementwise le (result PRED).
func (b *Builder) Le(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_le(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Lt is elementwise lt (result PRED).
func (b *Builder) Lt(lhs, rhs Op, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_lt(b.h, lhs.id, rhs.id, i64(broadcastDims), size(len(broadcastDims))))
}

// Elementwise unary ops.

// Abs is elementwise abs.
func (b *Builder) Abs(x Op) Op { return b.op(C.kiln_op_abs(b.h, x.id)) }

// Neg is elementwise neg.
func (b *Builder) Neg(x Op) Op { return b.op(C.kiln_op_neg(b.h, x.id)) }

// Not is elementwise not.
func (b *Builder) Not(x Op) Op { return b.op(C.kiln_op_not(b.h, x.id)) }

// Sign is elementwise sign.
func (b *Builder) Sign(x Op) Op { return b.op(C.kiln_op_sign(b.h, x.id)) }

// Floor is elementwise floor.
func (b *Builder) Floor(x Op) Op { return b.op(C.kiln_op_floor(b.h, x.id)) }

// Ceil is elementwise ceil.
func (b *Builder) Ceil(x Op) Op { return b.op(C.kiln_op_ceil(b.h, x.id)) }

// Round is elementwise round (half away from zero).
func (b *Builder) Round(x Op) Op { return b.op(C.kiln_op_round(b.h, x.id)) }

// RoundNearestEven is elementwise round_nearest_even.
func (b *Builder) RoundNearestEven(x Op) Op { return b.op(C.kiln_op_round_nearest_even(b.h, x.id)) }

// Exp is elementwise exp.
func (b *Builder) Exp(x Op) Op { return b.op(C.kiln_op_exp(b.h, x.id)) }

// Expm1 is elementwise expm1.
func (b *Builder) Expm1(x Op) Op { return b.op(C.kiln_op_expm1(b.h, x.id)) }

// Log is elementwise log.
func (b *Builder) Log(x Op) Op { return b.op(C.kiln_op_log(b.h, x.id)) }

// Log1p is elementwise log1p.
func (b *Builder) Log1p(x Op) Op { return b.op(C.kiln_op_log1p(b.h, x.id)) }

// Logistic is elementwise logistic.
func (b *Builder) Logistic(x Op) Op { return b.op(C.kiln_op_logistic(b.h, x.id)) }

// Sqrt is elementwise sqrt.
func (b *Builder) Sqrt(x Op) Op { return b.op(C.kiln_op_sqrt(b.h, x.id)) }

// Rsqrt is elementwise rsqrt.
func (b *Builder) Rsqrt(x Op) Op { return b.op(C.kiln_op_rsqrt(b.h, x.id)) }

// Cbrt is elementwise cbrt.
func (b *Builder) Cbrt(x Op) Op { return b.op(C.kiln_op_cbrt(b.h, x.id)) }

// Sin is elementwise sin.
func (b *Builder) Sin(x Op) Op { return b.op(C.kiln_op_sin(b.h, x.id)) }

// Cos is elementwise cos.
func (b *Builder) Cos(x Op) Op { return b.op(C.kiln_op_cos(b.h, x.id)) }

// Tan is elementwise tan.
func (b *Builder) Tan(x Op) Op { return b.op(C.kiln_op_tan(b.h, x.id)) }

// Tanh is elementwise tanh.
func (b *Builder) Tanh(x Op) Op { return b.op(C.kiln_op_tanh(b.h, x.id)) }

// Erf is elementwise erf.
func (b *Builder) Erf(x Op) Op { return b.op(C.kiln_op_erf(b.h, x.id)) }

// IsFinite is elementwise is_finite.
func (b *Builder) IsFinite(x Op) Op { return b.op(C.kiln_op_is_finite(b.h, x.id)) }

// Clz is elementwise clz.
func (b *Builder) Clz(x Op) Op { return b.op(C.kiln_op_clz(b.h, x.id)) }

// Popcnt is elementwise popcnt.
func (b *Builder) Popcnt(x Op) Op { return b.op(C.kiln_op_popcnt(b.h, x.id)) }

// Real is elementwise real.
func (b *Builder) Real(x Op) Op { return b.op(C.kiln_op_real(b.h, x.id)) }

// Imag is elementwise imag.
func (b *Builder) Imag(x Op) Op { return b.op(C.kiln_op_imag(b.h, x.id)) }

// Copy is elementwise copy.
func (b *Builder) Copy(x Op) Op { return b.op(C.kiln_op_copy(b.h, x.id)) }

// CrossReplicaSum is elementwise cross_replica_sum (sum across replicas).
func (b *Builder) CrossReplicaSum(x Op) Op { return b.op(C.kiln_op_cross_replica_sum(b.h, x.id)) }

// OptimizationBarrier is elementwise optimization_barrier (passes its operand, possibly a tuple, through).
func (b *Builder) OptimizationBarrier(x Op) Op {
	return b.op(C.kiln_op_optimization_barrier(b.h, x.id))
}
