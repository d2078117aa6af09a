// The one op registry: every HLO opcode Kiln knows, its HLO text name and its
// kind. Adding an op starts here (see docs in README "Adding an op").
#pragma once

#include <optional>
#include <string_view>

namespace kiln {

// Kinds drive generic handling: elementwise unary/binary/ternary ops share
// shape inference and fusion rules; kOther ops have their own.
enum class OpKind { kUnary, kBinary, kTernary, kOther };

// V(enum name, HLO text name, kind). Keep sorted by HLO name.
#define KILN_OPCODE_LIST(V)                                   \
  V(kAbs, "abs", kUnary)                                      \
  V(kAdd, "add", kBinary)                                     \
  V(kAfterAll, "after-all", kOther)                           \
  V(kAllReduce, "all-reduce", kOther)                         \
  V(kAnd, "and", kBinary)                                     \
  V(kAtan2, "atan2", kBinary)                                 \
  V(kBatchNormGrad, "batch-norm-grad", kOther)                \
  V(kBatchNormInference, "batch-norm-inference", kOther)      \
  V(kBatchNormTraining, "batch-norm-training", kOther)        \
  V(kBitcastConvert, "bitcast-convert", kOther)               \
  V(kBroadcast, "broadcast", kOther)                          \
  V(kCall, "call", kOther)                                    \
  V(kCbrt, "cbrt", kUnary)                                    \
  V(kCeil, "ceil", kUnary)                                    \
  V(kClamp, "clamp", kTernary)                                \
  V(kClz, "count-leading-zeros", kUnary)                      \
  V(kCompare, "compare", kOther)                              \
  V(kComplex, "complex", kOther)                              \
  V(kConcatenate, "concatenate", kOther)                      \
  V(kConditional, "conditional", kOther)                      \
  V(kConstant, "constant", kOther)                            \
  V(kConvert, "convert", kOther)                              \
  V(kConvolution, "convolution", kOther)                      \
  V(kCopy, "copy", kUnary)                                    \
  V(kCos, "cosine", kUnary)                                   \
  V(kCustomCall, "custom-call", kOther)                       \
  V(kDivide, "divide", kBinary)                               \
  V(kDot, "dot", kOther)                                      \
  V(kDynamicSlice, "dynamic-slice", kOther)                   \
  V(kDynamicUpdateSlice, "dynamic-update-slice", kOther)      \
  V(kErf, "erf", kUnary)                                      \
  V(kExp, "exponential", kUnary)                              \
  V(kExpm1, "exponential-minus-one", kUnary)                  \
  V(kFloor, "floor", kUnary)                                  \
  V(kFusion, "fusion", kOther)                                \
  V(kGather, "gather", kOther)                                \
  V(kGetDimensionSize, "get-dimension-size", kOther)          \
  V(kGetTupleElement, "get-tuple-element", kOther)            \
  V(kImag, "imag", kOther)                                    \
  V(kInfeed, "infeed", kOther)                                \
  V(kIota, "iota", kOther)                                    \
  V(kIsFinite, "is-finite", kOther)                           \
  V(kLog, "log", kUnary)                                      \
  V(kLog1p, "log-plus-one", kUnary)                           \
  V(kLogistic, "logistic", kUnary)                            \
  V(kMap, "map", kOther)                                      \
  V(kMaximum, "maximum", kBinary)                             \
  V(kMinimum, "minimum", kBinary)                             \
  V(kMultiply, "multiply", kBinary)                           \
  V(kNegate, "negate", kUnary)                                \
  V(kNot, "not", kUnary)                                      \
  V(kOptimizationBarrier, "opt-barrier", kOther)              \
  V(kOr, "or", kBinary)                                       \
  V(kOutfeed, "outfeed", kOther)                              \
  V(kPad, "pad", kOther)                                      \
  V(kParameter, "parameter", kOther)                          \
  V(kPartitionId, "partition-id", kOther)                     \
  V(kPopcnt, "popcnt", kUnary)                                \
  V(kPower, "power", kBinary)                                 \
  V(kReal, "real", kOther)                                    \
  V(kRecv, "recv", kOther)                                    \
  V(kRecvDone, "recv-done", kOther)                           \
  V(kReduce, "reduce", kOther)                                \
  V(kReducePrecision, "reduce-precision", kOther)             \
  V(kReduceWindow, "reduce-window", kOther)                   \
  V(kRemainder, "remainder", kBinary)                         \
  V(kReplicaId, "replica-id", kOther)                         \
  V(kReshape, "reshape", kOther)                              \
  V(kReverse, "reverse", kOther)                              \
  V(kRng, "rng", kOther)                                      \
  V(kRngBitGenerator, "rng-bit-generator", kOther)            \
  V(kRoundNearestAfz, "round-nearest-afz", kUnary)            \
  V(kRoundNearestEven, "round-nearest-even", kUnary)          \
  V(kRsqrt, "rsqrt", kUnary)                                  \
  V(kScatter, "scatter", kOther)                              \
  V(kSelect, "select", kTernary)                              \
  V(kSelectAndScatter, "select-and-scatter", kOther)          \
  V(kSend, "send", kOther)                                    \
  V(kSendDone, "send-done", kOther)                           \
  V(kShiftLeft, "shift-left", kBinary)                        \
  V(kShiftRightArithmetic, "shift-right-arithmetic", kBinary) \
  V(kShiftRightLogical, "shift-right-logical", kBinary)       \
  V(kSign, "sign", kUnary)                                    \
  V(kSin, "sine", kUnary)                                     \
  V(kSlice, "slice", kOther)                                  \
  V(kSort, "sort", kOther)                                    \
  V(kSqrt, "sqrt", kUnary)                                    \
  V(kSubtract, "subtract", kBinary)                           \
  V(kTan, "tan", kUnary)                                      \
  V(kTanh, "tanh", kUnary)                                    \
  V(kTopK, "topk", kOther)                                    \
  V(kTranspose, "transpose", kOther)                          \
  V(kTuple, "tuple", kOther)                                  \
  V(kWhile, "while", kOther)                                  \
  V(kXor, "xor", kBinary)

enum class Opcode : int {
#define KILN_OPCODE_ENUM(e, name, kind) e,
  KILN_OPCODE_LIST(KILN_OPCODE_ENUM)
#undef KILN_OPCODE_ENUM
      kOpcodeCount
};

std::string_view OpcodeName(Opcode opcode);
OpKind OpcodeKind(Opcode opcode);
std::optional<Opcode> OpcodeFromName(std::string_view name);

// Elementwise ops: unary, binary, ternary kinds plus compare, convert,
// bitcast-convert (same width), complex/real/imag, is-finite, reduce-precision.
bool IsElementwise(Opcode opcode);

// exp, expm1, log, log1p, logistic, sqrt, rsqrt, sin, cos, tan, tanh: the
// unary functions defined for real floats and for complex numbers.
bool IsElementaryFunction(Opcode opcode);

}  // namespace kiln
