// What the shared emitters leave to the target they write IR for: the
// elementary functions (exp, log, tanh, erf, sin, ... and atan2, pow), the
// functions complex arithmetic calls, and NaN-propagating float min/max.
// Everything else the emitters write is plain LLVM IR that any target
// compiles. The CPU implements these hooks with its vectorisable math and
// the C library (backends/cpu/codegen/cpu_target_hooks.h), CUDA with
// libdevice and IR of its own (backends/cuda/cuda_target_hooks.h). Thread
// and workgroup ids, address spaces and warp shuffles live in each
// backend's kernel entry (the shared kernel ABI is a range of parallel
// iterations, kernel_emitter.h), and a GPU's row reductions across a warp
// in CooperativeRows (elemental_emitter.h).
#pragma once

#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "core/opcode.h"
#include "core/status.h"

namespace kiln::llvm_ir {

// A target marks with this function attribute the functions whose call
// stands for a long vector math body (the CPU's vectorisable exp), so that
// the loops calling them are interleaved as such (loop_ir.h).
inline constexpr const char* kVectorMathAttribute = "kiln-vector-math";

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

  // The function of C name `name` (C99's cexpf, clog, csqrt, ...; libgcc's
  // __mulsc3, __divdc3, ...; hypot, hypotf) with `type` (complex_ir.h says
  // how complex values travel), which complex arithmetic calls.
  virtual llvm::FunctionCallee ComplexFunction(llvm::Module& module, const std::string& name,
                                               llvm::FunctionType* type) const = 0;

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
