// The one op registry: every HLO opcode Kiln knows, its HLO text name and its
// kind. Adding an op starts here (see docs in README "Adding an op").
#pragma once

#include <optional>
#include <string_view>

namespace kiln {

// Kinds drive generic handling: elementwise unary/binary/ternary ops share
// shape inference and fusion rules; kOther ops have their own.
enum class OpKind { kUnary, kBinary, kTernary, kOther };

// What passes and backends need to know about an opcode, one bit each. The
// table below is the only place that says which opcode has which trait: a
// pass asks through the functions at the end of this file, never keeps a list
// of its own.
enum OpTrait : unsigned {
  kNone = 0,
  // Observable beyond its result (I/O with the host or another device): kept
  // when nothing uses it, never merged, folded or moved across another.
  kSideEffect = 1u << 0,
  // Keeps state from one execution to the next (rng's global generator).
  kStateful = 1u << 1,
  // Produces random bits: each instance stays a separate draw, never merged
  // or computed at compile time.
  kRandom = 1u << 2,
  // Its value depends on where it runs (which replica or partition).
  kPlacement = 1u << 3,
  // Communicates with the other replicas: never merged or folded.
  kCollective = 1u << 4,
  // Runs code Kiln cannot see into (a custom call); it has side effects when
  // its custom_call_has_side_effect attribute says so.
  kOpaque = 1u << 5,
  // Exists to order or fence other ops (tokens, optimisation barriers).
  kOrdering = 1u << 6,
  // Runs other computations as control flow (while, conditional, call).
  kControlFlow = 1u << 7,
  // Cheap to build or forwards values: folding it would only grow the module.
  kNoFoldGain = 1u << 8,
  // Each result element depends on the operand elements at the same index.
  kElementwise = 1u << 9,
  // Defined for real floats and for complex numbers (exp, log, sin...).
  kElementaryFunction = 1u << 10,
  // A shape op a loop fusion computes per element (besides elementwise ops).
  kLoopFusible = 1u << 11,
  // Gradients flow through it to its floating-point operands (possibly zero,
  // as for floor); ops without it have no derivative (integer, bitwise,
  // comparisons, I/O, random numbers).
  kDifferentiable = 1u << 12,
};

constexpr OpTrait operator|(OpTrait a, OpTrait b) { return static_cast<OpTrait>(unsigned{a} | unsigned{b}); }

// V(enum name, HLO text name, kind, traits). Keep sorted by HLO name.
#define KILN_OPCODE_LIST(V)                                                                        \
  V(kAbs, "abs", kUnary, kElementwise | kDifferentiable)                                           \
  V(kAdd, "add", kBinary, kElementwise | kDifferentiable)                                          \
  V(kAfterAll, "after-all", kOther, kOrdering)                                                     \
  V(kAllReduce, "all-reduce", kOther, kCollective | kDifferentiable)                               \
  V(kAnd, "and", kBinary, kElementwise)                                                            \
  V(kAtan2, "atan2", kBinary, kElementwise | kDifferentiable)                                      \
  V(kBatchNormGrad, "batch-norm-grad", kOther, kDifferentiable)                                    \
  V(kBatchNormInference, "batch-norm-inference", kOther, kDifferentiable)                          \
  V(kBatchNormTraining, "batch-norm-training", kOther, kDifferentiable)                            \
  V(kBitcastConvert, "bitcast-convert", kOther, kNone)                                             \
  V(kBroadcast, "broadcast", kOther, kNoFoldGain | kLoopFusible | kDifferentiable)                 \
  V(kCall, "call", kOther, kControlFlow | kDifferentiable)                                         \
  V(kCbrt, "cbrt", kUnary, kElementwise | kDifferentiable)                                         \
  V(kCeil, "ceil", kUnary, kElementwise | kDifferentiable)                                         \
  V(kClamp, "clamp", kTernary, kElementwise | kDifferentiable)                                     \
  V(kClz, "count-leading-zeros", kUnary, kElementwise)                                             \
  V(kCompare, "compare", kOther, kElementwise)                                                     \
  V(kComplex, "complex", kOther, kElementwise | kDifferentiable)                                   \
  V(kConcatenate, "concatenate", kOther, kLoopFusible | kDifferentiable)                           \
  V(kConditional, "conditional", kOther, kControlFlow | kDifferentiable)                           \
  V(kConstant, "constant", kOther, kNoFoldGain | kLoopFusible)                                     \
  V(kConvert, "convert", kOther, kElementwise | kDifferentiable)                                   \
  V(kConvolution, "convolution", kOther, kDifferentiable)                                          \
  V(kCopy, "copy", kUnary, kElementwise | kDifferentiable)                                         \
  V(kCos, "cosine", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                  \
  V(kCustomCall, "custom-call", kOther, kOpaque)                                                   \
  V(kDivide, "divide", kBinary, kElementwise | kDifferentiable)                                    \
  V(kDot, "dot", kOther, kDifferentiable)                                                          \
  V(kDynamicSlice, "dynamic-slice", kOther, kLoopFusible | kDifferentiable)                        \
  V(kDynamicUpdateSlice, "dynamic-update-slice", kOther, kDifferentiable)                          \
  V(kErf, "erf", kUnary, kElementwise | kDifferentiable)                                           \
  V(kExp, "exponential", kUnary, kElementwise | kElementaryFunction | kDifferentiable)             \
  V(kExpm1, "exponential-minus-one", kUnary, kElementwise | kElementaryFunction | kDifferentiable) \
  V(kFft, "fft", kOther, kDifferentiable)                                                          \
  V(kFloor, "floor", kUnary, kElementwise | kDifferentiable)                                       \
  V(kFusion, "fusion", kOther, kDifferentiable)                                                    \
  V(kGather, "gather", kOther, kDifferentiable)                                                    \
  V(kGetDimensionSize, "get-dimension-size", kOther, kNone)                                        \
  V(kGetTupleElement, "get-tuple-element", kOther, kNoFoldGain | kDifferentiable)                  \
  V(kImag, "imag", kOther, kElementwise | kDifferentiable)                                         \
  V(kInfeed, "infeed", kOther, kSideEffect)                                                        \
  V(kIota, "iota", kOther, kNoFoldGain | kLoopFusible)                                             \
  V(kIsFinite, "is-finite", kOther, kElementwise)                                                  \
  V(kLog, "log", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                     \
  V(kLog1p, "log-plus-one", kUnary, kElementwise | kElementaryFunction | kDifferentiable)          \
  V(kLogistic, "logistic", kUnary, kElementwise | kElementaryFunction | kDifferentiable)           \
  V(kMap, "map", kOther, kDifferentiable)                                                          \
  V(kMaximum, "maximum", kBinary, kElementwise | kDifferentiable)                                  \
  V(kMinimum, "minimum", kBinary, kElementwise | kDifferentiable)                                  \
  V(kMultiply, "multiply", kBinary, kElementwise | kDifferentiable)                                \
  V(kNegate, "negate", kUnary, kElementwise | kDifferentiable)                                     \
  V(kNot, "not", kUnary, kElementwise)                                                             \
  V(kOptimizationBarrier, "opt-barrier", kOther, kOrdering | kDifferentiable)                      \
  V(kOr, "or", kBinary, kElementwise)                                                              \
  V(kOutfeed, "outfeed", kOther, kSideEffect)                                                      \
  V(kPad, "pad", kOther, kLoopFusible | kDifferentiable)                                           \
  V(kParameter, "parameter", kOther, kNoFoldGain)                                                  \
  V(kPartitionId, "partition-id", kOther, kPlacement)                                              \
  V(kPopcnt, "popcnt", kUnary, kElementwise)                                                       \
  V(kPower, "power", kBinary, kElementwise | kDifferentiable)                                      \
  V(kReal, "real", kOther, kElementwise | kDifferentiable)                                         \
  V(kRecv, "recv", kOther, kSideEffect)                                                            \
  V(kRecvDone, "recv-done", kOther, kSideEffect)                                                   \
  V(kReduce, "reduce", kOther, kDifferentiable)                                                    \
  V(kReducePrecision, "reduce-precision", kOther, kElementwise | kDifferentiable)                  \
  V(kReduceWindow, "reduce-window", kOther, kDifferentiable)                                       \
  V(kRemainder, "remainder", kBinary, kElementwise | kDifferentiable)                              \
  V(kReplicaId, "replica-id", kOther, kPlacement)                                                  \
  V(kReshape, "reshape", kOther, kLoopFusible | kDifferentiable)                                   \
  V(kReverse, "reverse", kOther, kLoopFusible | kDifferentiable)                                   \
  V(kRng, "rng", kOther, kStateful | kRandom)                                                      \
  V(kRngBitGenerator, "rng-bit-generator", kOther, kRandom)                                        \
  V(kRoundNearestAfz, "round-nearest-afz", kUnary, kElementwise | kDifferentiable)                 \
  V(kRoundNearestEven, "round-nearest-even", kUnary, kElementwise | kDifferentiable)               \
  V(kRsqrt, "rsqrt", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                 \
  V(kScatter, "scatter", kOther, kDifferentiable)                                                  \
  V(kSelect, "select", kTernary, kElementwise | kDifferentiable)                                   \
  V(kSelectAndScatter, "select-and-scatter", kOther, kDifferentiable)                              \
  V(kSend, "send", kOther, kSideEffect)                                                            \
  V(kSendDone, "send-done", kOther, kSideEffect)                                                   \
  V(kShiftLeft, "shift-left", kBinary, kElementwise)                                               \
  V(kShiftRightArithmetic, "shift-right-arithmetic", kBinary, kElementwise)                        \
  V(kShiftRightLogical, "shift-right-logical", kBinary, kElementwise)                              \
  V(kSign, "sign", kUnary, kElementwise | kDifferentiable)                                         \
  V(kSin, "sine", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                    \
  V(kSlice, "slice", kOther, kLoopFusible | kDifferentiable)                                       \
  V(kSort, "sort", kOther, kDifferentiable)                                                        \
  V(kSqrt, "sqrt", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                   \
  V(kSubtract, "subtract", kBinary, kElementwise | kDifferentiable)                                \
  V(kTan, "tan", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                     \
  V(kTanh, "tanh", kUnary, kElementwise | kElementaryFunction | kDifferentiable)                   \
  V(kTopK, "topk", kOther, kDifferentiable)                                                        \
  V(kTranspose, "transpose", kOther, kLoopFusible | kDifferentiable)                               \
  V(kTuple, "tuple", kOther, kNoFoldGain | kDifferentiable)                                        \
  V(kWhile, "while", kOther, kControlFlow | kDifferentiable)                                       \
  V(kXor, "xor", kBinary, kElementwise)

enum class Opcode : int {
#define KILN_OPCODE_ENUM(e, name, kind, traits) e,
  KILN_OPCODE_LIST(KILN_OPCODE_ENUM)
#undef KILN_OPCODE_ENUM
      kOpcodeCount
};

std::string_view OpcodeName(Opcode opcode);
OpKind OpcodeKind(Opcode opcode);
std::optional<Opcode> OpcodeFromName(std::string_view name);

// The opcode's row of traits, and whether it has all of `traits`.
OpTrait OpcodeTraits(Opcode opcode);
bool HasTraits(Opcode opcode, OpTrait traits);

// Elementwise ops: unary, binary, ternary kinds plus compare, convert,
// complex/real/imag, is-finite, reduce-precision.
bool IsElementwise(Opcode opcode);

// exp, expm1, log, log1p, logistic, sqrt, rsqrt, sin, cos, tan, tanh: the
// unary functions defined for real floats and for complex numbers.
bool IsElementaryFunction(Opcode opcode);

// An opcode whose instances may be merged when their operands, attributes
// and shapes agree (common-subexpression elimination). Parameters are never
// merged.
bool MayMerge(Opcode opcode);

// An opcode whose instances may be computed at compile time when their
// operands are constants.
bool MayFold(Opcode opcode);

// Elementwise ops and the shape ops a loop fusion computes per element.
bool IsLoopFusible(Opcode opcode);

bool IsDifferentiable(Opcode opcode);

}  // namespace kiln
