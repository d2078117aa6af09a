// What the shared emitters leave to the target they write IR for: the
// elementary functions (exp, log, tanh, erf, sin, ... and atan2, pow), the
// functions complex arithmetic calls (and how complex values reach them:
// a calling convention is the target's), and NaN-propagating float min/max.
// Everything else the emitters write is plain LLVM IR that any target
// compiles. The CPU implements these hooks with its vectorisable math and
// the C library (backends/cpu/codegen/cpu_target_hooks.h), CUDA with
// libdevice and IR of its own (backends/cuda/cuda_target_hooks.h). Thread
// and workgroup ids, address spaces and warp shuffles live in each
// backend's kernel entry (the shared kernel ABI is a range of parallel
// iterations, kernel_emitter.h), and a GPU's row reductions across a warp
// in CooperativeRows (elemental_emitter.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "core/opcode.h"
#include "core/status.h"

namespace kiln::llvm_ir {

// A target marks with this function attribute the functions whose call
// stands for a long vector math body (the CPU's vectorisable exp), so that
// the loops calling them are interleaved as such (loop_ir.h).
inline constexpr const char* kVectorMathAttribute = "kiln-vector-math";

// What complex arithmetic (complex_ir.h) computes out of line: C99's
// complex elementary functions (cexp, clog, csqrt, csin, ccos, ctan, ctanh,
// cpow) and C Annex G's careful product and quotient (libgcc's __mulsc3,
// __divsc3 and their double versions).
enum class ComplexCall : uint8_t { kMultiply, kDivide, kExp, kLog, kSqrt, kSin, kCos, kTan, kTanh, kPower };

// The C library's (or libgcc's) name of `call` on float parts or, with
// `double_parts`, on double parts: "cexpf" / "cexp", "__mulsc3" / "__muldc3".
const char* ComplexCallCName(ComplexCall call, bool double_parts);
// How many complex arguments `call` takes: two for multiply, divide and
// power, else one.
int ComplexCallArity(ComplexCall call);

class TargetHooks {
 public:
  virtual ~TargetHooks() = default;

  // Unary `opcode` of `x`, a float or double value, for the elementary
  // functions: cbrt, erf, exp, expm1, log, log1p, logistic, sin, cos, tan,
  // tanh. F16 and BF16 values arrive as float; the caller rounds back.
  // UNIMPLEMENTED when the target has no such function.
  virtual StatusOr<llvm::Value*> EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* x) const = 0;
  // Binary `opcode` (atan2, power) of float or double values.
  virtual StatusOr<llvm::Value*> EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                                llvm::Value* rhs) const = 0;

  // `call` of `arguments` (ComplexCallArity of them), each a complex value
  // as the emitters hold it: <2 x float> or <2 x double>, real part first
  // (complex_ir.h); the result comes back the same way. Multiply is asked
  // only when the naive product is NaN in both parts. Which code computes
  // it and how the values travel there (a C ABI's lowering of complex
  // types, or a function of the target's own) is the target's alone.
  virtual llvm::Value* EmitComplexCall(llvm::IRBuilder<>& b, ComplexCall call,
                                       const std::vector<llvm::Value*>& arguments) const = 0;
  // hypot(x, y) of two float or two double values: |z| of a complex number.
  virtual llvm::Value* EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const = 0;

  // XLA's maximum or minimum of two float or double values: NaN in either
  // gives NaN; which zero max(-0, +0) returns is left open.
  virtual llvm::Value* EmitFloatMinMax(llvm::IRBuilder<>& b, bool maximum, llvm::Value* lhs,
                                       llvm::Value* rhs) const;
};

// Helpers for implementations: a call of the C library function `name`
// ("f" appended for float values) that reads and writes no memory, and a
// call of an overloaded LLVM intrinsic on the type of its first argument.
llvm::Value* CallMathFunction(llvm::IRBuilder<>& b, const std::string& name,
                              std::initializer_list<llvm::Value*> args);
llvm::Value* CallIntrinsic(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id,
                           std::initializer_list<llvm::Value*> args);

}  // namespace kiln::llvm_ir
