package kiln

/*
#include <kiln/kiln.h>
*/
import "C"

import "runtime"

// Nested computations (reducers, bodies, branches, comparators) are copied by
// the library, so they may be closed right after the op is added.

func comps(s []*Computation) []*C.kiln_computation_t {
	out := make([]*C.kiln_computation_t, len(s)+1) // +1: never pass a nil array
	for i, c := range s {
		out[i] = c.handle()
	}
	return out
}

// --- reductions, windows, maps and sorts ------------------------------------------

// Reduce reduces operand over dimensions with computation, starting at
// initValue.
func (b *Builder) Reduce(operand, initValue Op, computation *Computation, dimensions ...int64) Op {
	op := b.op(C.kiln_op_reduce(b.h, operand.id, initValue.id, computation.handle(), i64(dimensions),
		size(len(dimensions))))
	runtime.KeepAlive(computation)
	return op
}

// ReduceVariadic reduces N operands with N init values; computation maps 2N
// scalars to an N-tuple.
func (b *Builder) ReduceVariadic(operands, initValues []Op, computation *Computation, dimensions ...int64) Op {
	if len(initValues) != len(operands) {
		b.fail("reduce: needs as many init values as operands")
		return InvalidOp
	}
	op := b.op(C.kiln_op_reduce_variadic(b.h, ops(operands), ops(initValues), size(len(operands)),
		computation.handle(), i64(dimensions), size(len(dimensions))))
	runtime.KeepAlive(computation)
	return op
}

// ReduceWindow is the seed ReduceWindow; windowDimensions and windowStrides
// have rank entries.
func (b *Builder) ReduceWindow(operand, initValue Op, computation *Computation, windowDimensions,
	windowStrides []int64, padding Padding) Op {
	if b.lengthsDiffer("reduce-window", len(windowDimensions), windowStrides) {
		return InvalidOp
	}
	op := b.op(C.kiln_op_reduce_window(b.h, operand.id, initValue.id, computation.handle(), i64(windowDimensions),
		i64(windowStrides), size(len(windowDimensions)), C.kiln_padding_t(padding)))
	runtime.KeepAlive(computation)
	return op
}

// Window describes a general reduce-window or select-and-scatter window; every
// list has rank entries and all but Dimensions may be nil (strides, dilations
// 1; paddings 0).
type Window struct {
	Dimensions      []int64
	Strides         []int64
	BaseDilations   []int64
	WindowDilations []int64
	PaddingLow      []int64
	PaddingHigh     []int64
}

// ReduceWindowGeneral is the general ReduceWindow over N operands and N init
// values.
func (b *Builder) ReduceWindowGeneral(operands, initValues []Op, computation *Computation, w Window) Op {
	if len(initValues) != len(operands) {
		b.fail("reduce-window: needs as many init values as operands")
		return InvalidOp
	}
	if b.lengthsDiffer("reduce-window", len(w.Dimensions), w.Strides, w.BaseDilations, w.WindowDilations,
		w.PaddingLow, w.PaddingHigh) {
		return InvalidOp
	}
	op := b.op(C.kiln_op_reduce_window_general(b.h, ops(operands), ops(initValues), size(len(operands)),
		computation.handle(), i64(w.Dimensions), i64(w.Strides), i64(w.BaseDilations), i64(w.WindowDilations),
		i64(w.PaddingLow), i64(w.PaddingHigh), size(len(w.Dimensions))))
	runtime.KeepAlive(computation)
	return op
}

// SelectAndScatter is the seed SelectAndScatter.
func (b *Builder) SelectAndScatter(operand Op, sel *Computation, windowDimensions, windowStrides []int64,
	padding Padding, source, initValue Op, scatter *Computation) Op {
	if b.lengthsDiffer("select-and-scatter", len(windowDimensions), windowStrides) {
		return InvalidOp
	}
	op := b.op(C.kiln_op_select_and_scatter(b.h, operand.id, sel.handle(), i64(windowDimensions),
		i64(windowStrides), size(len(windowDimensions)), C.kiln_padding_t(padding), source.id, initValue.id,
		scatter.handle()))
	runtime.KeepAlive(sel)
	runtime.KeepAlive(scatter)
	return op
}

// SelectAndScatterGeneral is SelectAndScatter with explicit padding (only
// the window's Dimensions, Strides, PaddingLow and PaddingHigh are used).
func (b *Builder) SelectAndScatterGeneral(operand Op, sel *Computation, w Window, source, initValue Op,
	scatter *Computation) Op {
	if b.lengthsDiffer("select-and-scatter", len(w.Dimensions), w.Strides, w.PaddingLow, w.PaddingHigh) {
		return InvalidOp
	}
	op := b.op(C.kiln_op_select_and_scatter_general(b.h, operand.id, sel.handle(), i64(w.Dimensions),
		i64(w.Strides), i64(w.PaddingLow), i64(w.PaddingHigh), size(len(w.Dimensions)), source.id, initValue.id,
		scatter.handle()))
	runtime.KeepAlive(sel)
	runtime.KeepAlive(scatter)
	return op
}

// Map applies computation elementwise over operands along dimensions.
func (b *Builder) Map(operands []Op, computation *Computation, dimensions ...int64) Op {
	op := b.op(C.kiln_op_map(b.h, ops(operands), size(len(operands)), computation.handle(), i64(dimensions),
		size(len(dimensions))))
	runtime.KeepAlive(computation)
	return op
}

// Sort sorts ascending along the last dimension (seed Sort).
func (b *Builder) Sort(operand Op) Op { return b.op(C.kiln_op_sort(b.h, operand.id)) }

// SortVariadic sorts operands by comparator (2N scalars -> pred) along
// dimension.
func (b *Builder) SortVariadic(operands []Op, comparator *Computation, dimension int64, stable bool) Op {
	op := b.op(C.kiln_op_sort_variadic(b.h, ops(operands), size(len(operands)), comparator.handle(),
		C.int64_t(dimension), cbool(stable)))
	runtime.KeepAlive(comparator)
	return op
}

// AllReduce reduces across replicas with computation.
func (b *Builder) AllReduce(operand Op, computation *Computation) Op {
	op := b.op(C.kiln_op_all_reduce(b.h, operand.id, computation.handle()))
	runtime.KeepAlive(computation)
	return op
}

// --- batch normalisation ---------------------------------------------------------

// BatchNormTraining normalises in training mode; returns (output, mean, variance).
func (b *Builder) BatchNormTraining(operand, scale, offset Op, epsilon float32, featureIndex int64) Op {
	return b.op(C.kiln_op_batch_norm_training(b.h, operand.id, scale.id, offset.id, C.float(epsilon),
		C.int64_t(featureIndex)))
}

// BatchNormInference normalises with the given mean and variance.
func (b *Builder) BatchNormInference(operand, scale, offset, mean, variance Op, epsilon float32,
	featureIndex int64) Op {
	return b.op(C.kiln_op_batch_norm_inference(b.h, operand.id, scale.id, offset.id, mean.id, variance.id,
		C.float(epsilon), C.int64_t(featureIndex)))
}

// BatchNormGrad computes the batch-norm gradients.
func (b *Builder) BatchNormGrad(operand, scale, mean, variance, gradOutput Op, epsilon float32,
	featureIndex int64) Op {
	return b.op(C.kiln_op_batch_norm_grad(b.h, operand.id, scale.id, mean.id, variance.id, gradOutput.id,
		C.float(epsilon), C.int64_t(featureIndex)))
}

// --- control flow -------------------------------------------------------------------

// Call calls computation on operands.
func (b *Builder) Call(computation *Computation, operands ...Op) Op {
	op := b.op(C.kiln_op_call(b.h, computation.handle(), ops(operands), size(len(operands))))
	runtime.KeepAlive(computation)
	return op
}

// While runs body while condition holds, starting from init.
func (b *Builder) While(condition, body *Computation, init Op) Op {
	op := b.op(C.kiln_op_while(b.h, condition.handle(), body.handle(), init.id))
	runtime.KeepAlive(condition)
	runtime.KeepAlive(body)
	return op
}

// Conditional runs trueComputation(trueOperand) if predicate holds, else
// falseComputation(falseOperand).
func (b *Builder) Conditional(predicate, trueOperand Op, trueComputation *Computation, falseOperand Op,
	falseComputation *Computation) Op {
	op := b.op(C.kiln_op_conditional(b.h, predicate.id, trueOperand.id, trueComputation.handle(), falseOperand.id,
		falseComputation.handle()))
	runtime.KeepAlive(trueComputation)
	runtime.KeepAlive(falseComputation)
	return op
}

// ConditionalIndexed runs branches[i](operands[i]) for the s32 branchIndex; an
// index out of range runs the last branch.
func (b *Builder) ConditionalIndexed(branchIndex Op, branches []*Computation, operands []Op) Op {
	if len(operands) != len(branches) {
		b.fail("conditional: needs one operand per branch")
		return InvalidOp
	}
	cs := comps(branches)
	op := b.op(C.kiln_op_conditional_indexed(b.h, branchIndex.id, &cs[0], ops(operands), size(len(branches))))
	runtime.KeepAlive(branches)
	return op
}

// --- random numbers ----------------------------------------------------------------

// RNGAlgorithm is the algorithm of RNGBitGenerator.
type RNGAlgorithm int32

// RNG algorithms.
const (
	RNGDefault  RNGAlgorithm = C.KILN_RNG_DEFAULT
	RNGThreeFry RNGAlgorithm = C.KILN_RNG_THREE_FRY
	RNGPhilox   RNGAlgorithm = C.KILN_RNG_PHILOX
)

// RNGUniform draws uniformly from [lo, hi).
func (b *Builder) RNGUniform(lo, hi Op, shape Shape) Op {
	return b.op(C.kiln_op_rng_uniform(b.h, lo.id, hi.id, ty(shape.Type), i64(shape.Dims), size(len(shape.Dims))))
}

// RNGNormal draws from a normal distribution.
func (b *Builder) RNGNormal(mu, sigma Op, shape Shape) Op {
	return b.op(C.kiln_op_rng_normal(b.h, mu.id, sigma.id, ty(shape.Type), i64(shape.Dims), size(len(shape.Dims))))
}

// RNGBernoulli draws from a Bernoulli distribution.
func (b *Builder) RNGBernoulli(p Op, shape Shape) Op {
	return b.op(C.kiln_op_rng_bernoulli(b.h, p.id, ty(shape.Type), i64(shape.Dims), size(len(shape.Dims))))
}

// RNGBitGenerator returns the tuple (new state, bits of shape).
func (b *Builder) RNGBitGenerator(algorithm RNGAlgorithm, initialState Op, shape Shape) Op {
	return b.op(C.kiln_op_rng_bit_generator(b.h, C.kiln_rng_algorithm_t(algorithm), initialState.id,
		ty(shape.Type), i64(shape.Dims), size(len(shape.Dims))))
}

// --- host communication, tokens and extension ------------------------------------

// Infeed reads the next array queued with Client.TransferToInfeed.
func (b *Builder) Infeed(shape Shape, config string) Op {
	cconfig, free := cstr(config)
	defer free()
	return b.op(C.kiln_op_infeed(b.h, ty(shape.Type), i64(shape.Dims), size(len(shape.Dims)), cconfig))
}

// Outfeed sends operand to the host.
func (b *Builder) Outfeed(operand Op, config string) Op {
	cconfig, free := cstr(config)
	defer free()
	return b.op(C.kiln_op_outfeed(b.h, operand.id, cconfig))
}

// CustomCall calls the registered target (see RegisterCustomCall).
func (b *Builder) CustomCall(target string, operands []Op, shape Shape, opaque string, hasSideEffect bool) Op {
	ctarget, free := cstr(target)
	defer free()
	copaque, freeOpaque := cstr(opaque)
	defer freeOpaque()
	return b.op(C.kiln_op_custom_call(b.h, ctarget, ops(operands), size(len(operands)), ty(shape.Type),
		i64(shape.Dims), size(len(shape.Dims)), copaque, cbool(hasSideEffect)))
}

// AfterAll joins tokens.
func (b *Builder) AfterAll(tokens ...Op) Op {
	return b.op(C.kiln_op_after_all(b.h, ops(tokens), size(len(tokens))))
}

// CreateToken makes a token.
func (b *Builder) CreateToken() Op { return b.op(C.kiln_op_create_token(b.h)) }
