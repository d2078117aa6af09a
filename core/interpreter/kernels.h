// The interpreter's op kernels, one function per op family. Each takes the
// instruction (for its attributes and result shape) and its evaluated operand
// literals, and returns the result literal. Shapes have been verified, but
// kernels still refuse inconsistent inputs with a Status instead of reading
// out of bounds.
#pragma once

#include "core/interpreter/eval_context.h"

namespace kiln::interpreter {

// elementwise.cc: unary and binary arithmetic, logic, shifts.
StatusOr<Literal> EvaluateUnary(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateBinary(const Instruction& instruction, Operands operands);
// elementwise_misc.cc: select, clamp, compare, convert, bitcast-convert,
// complex, real, imag, is-finite, reduce-precision.
StatusOr<Literal> EvaluateSelect(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateClamp(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateCompare(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateConvert(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateBitcastConvert(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateComplex(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateRealImag(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateIsFinite(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateReducePrecision(const Instruction& instruction, Operands operands);

// shape_ops.cc
StatusOr<Literal> EvaluateBroadcast(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateReshape(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateTranspose(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateReverse(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateConcatenate(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluatePad(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateSlice(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateDynamicSlice(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateDynamicUpdateSlice(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateIota(const Instruction& instruction, Operands operands);

// reductions.cc: reduce, reduce-window, select-and-scatter, map, all-reduce.
StatusOr<Literal> EvaluateReduce(const Instruction& instruction, Operands operands, EvalContext& context);
StatusOr<Literal> EvaluateReduceWindow(const Instruction& instruction, Operands operands,
                                       EvalContext& context);
StatusOr<Literal> EvaluateSelectAndScatter(const Instruction& instruction, Operands operands,
                                           EvalContext& context);
StatusOr<Literal> EvaluateMap(const Instruction& instruction, Operands operands, EvalContext& context);

// dot.cc, convolution.cc
StatusOr<Literal> EvaluateDot(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateConvolution(const Instruction& instruction, Operands operands);

// fft.cc: FFT, IFFT, RFFT and IRFFT through Eigen's FFT module (see fft.h).
StatusOr<Literal> EvaluateFft(const Instruction& instruction, Operands operands);

// gather_scatter.cc
StatusOr<Literal> EvaluateGather(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateScatter(const Instruction& instruction, Operands operands, EvalContext& context);

// sort.cc
StatusOr<Literal> EvaluateSort(const Instruction& instruction, Operands operands, EvalContext& context);
StatusOr<Literal> EvaluateTopK(const Instruction& instruction, Operands operands);

// rng.cc
StatusOr<Literal> EvaluateRng(const Instruction& instruction, Operands operands, EvalContext& context);
StatusOr<Literal> EvaluateRngBitGenerator(const Instruction& instruction, Operands operands);

// batch_norm.cc
StatusOr<Literal> EvaluateBatchNormTraining(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateBatchNormInference(const Instruction& instruction, Operands operands);
StatusOr<Literal> EvaluateBatchNormGrad(const Instruction& instruction, Operands operands);

// host_ops.cc: infeed, outfeed, custom-call.
StatusOr<Literal> EvaluateInfeed(const Instruction& instruction, Operands operands, EvalContext& context);
StatusOr<Literal> EvaluateOutfeed(const Instruction& instruction, Operands operands, EvalContext& context);
StatusOr<Literal> EvaluateCustomCall(const Instruction& instruction, Operands operands);

}  // namespace kiln::interpreter
