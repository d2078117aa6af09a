// The shared emitters (backends/llvm) reach the target only through the
// hooks they are given (target_hooks.h): each elementary function, complex
// helper and float maximum/minimum of a kernel is the hooks' answer.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "backends/cpu/codegen/cpu_target_hooks.h"
#include "backends/llvm/kernel_emitter.h"
#include "backends/llvm/target_hooks.h"
#include "core/hlo_parser.h"

namespace kiln::cpu::testing {
namespace {

// Answers every hook with a call of a function named after the question,
// so the emitted module shows which hooks were asked and for what.
class MarkingHooks final : public llvm_ir::TargetHooks {
 public:
  StatusOr<llvm::Value*> EmitUnaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* x) const override {
    if (opcode == refused_) return Unimplemented("no ", OpcodeName(opcode), " on this target");
    return Marker(b, "unary." + std::string(OpcodeName(opcode)), {x});
  }
  StatusOr<llvm::Value*> EmitBinaryMath(llvm::IRBuilder<>& b, Opcode opcode, llvm::Value* lhs,
                                        llvm::Value* rhs) const override {
    return Marker(b, "binary." + std::string(OpcodeName(opcode)), {lhs, rhs});
  }
  llvm::Value* EmitComplexCall(llvm::IRBuilder<>& b, llvm_ir::ComplexCall call,
                               const std::vector<llvm::Value*>& arguments) const override {
    const bool double_parts = arguments[0]->getType()->getScalarType()->isDoubleTy();
    return Marker(b, std::string("complex.") + llvm_ir::ComplexCallCName(call, double_parts), arguments);
  }
  llvm::Value* EmitHypot(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) const override {
    return Marker(b, "complex.hypot", {x, y});
  }
  llvm::Value* EmitFloatMinMax(llvm::IRBuilder<>& b, bool maximum, llvm::Value* lhs,
                               llvm::Value* rhs) const override {
    return Marker(b, maximum ? "float.maximum" : "float.minimum", {lhs, rhs});
  }

  void Refuse(Opcode opcode) { refused_ = opcode; }

 private:
  static llvm::Value* Marker(llvm::IRBuilder<>& b, const std::string& name, std::vector<llvm::Value*> args) {
    llvm::Type* type = args[0]->getType();
    std::vector<llvm::Type*> params(args.size(), type);
    llvm::FunctionCallee callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(
        name, llvm::FunctionType::get(type, params, false));
    return b.CreateCall(callee, args);
  }

  Opcode refused_ = Opcode::kParameter;  // none
};

// The names of the functions the kernel of `hlo`'s entry calls.
StatusOr<std::set<std::string>> CalledFunctions(const std::string& hlo, const MarkingHooks& hooks) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(hlo));
  llvm::LLVMContext context;
  llvm::Module llvm_module("hooks", context);
  KILN_RETURN_IF_ERROR(llvm_ir::EmitKernel(llvm_module, *module->entry(), "kernel", hooks).status());
  std::set<std::string> called;
  for (llvm::Function& function : llvm_module) {
    for (llvm::BasicBlock& block : function) {
      for (llvm::Instruction& instruction : block) {
        const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
        if (call != nullptr && call->getCalledFunction() != nullptr)
          called.insert(call->getCalledFunction()->getName().str());
      }
    }
  }
  return called;
}

TEST(CodegenTargetHooks, ElementaryFunctionsAndMinMaxComeFromTheTarget) {
  const MarkingHooks hooks;
  const StatusOr<std::set<std::string>> called = CalledFunctions(R"(
HloModule m
ENTRY e {
  x = f32[64] parameter(0)
  y = f64[64] parameter(1)
  lo = f32[] parameter(2)
  hi = f32[] parameter(3)
  ex = f32[64] exponential(x)
  th = f32[64] tanh(ex)
  yc = f32[64] convert(y)
  at = f32[64] atan2(th, yc)
  lg = f64[64] log(y)
  pw = f64[64] power(lg, y)
  pc = f32[64] convert(pw)
  s = f32[64] add(at, pc)
  ROOT c = f32[64] clamp(lo, s, hi)
})",
                                                                 hooks);
  ASSERT_TRUE(called.ok()) << called.status().ToString();
  for (const char* asked : {"unary.exponential", "unary.tanh", "binary.atan2", "unary.log", "binary.power",
                            "float.maximum", "float.minimum"}) {
    EXPECT_TRUE(called->count(asked)) << asked;
  }
  // Nothing of the CPU's own: no C library, no LLVM math intrinsics.
  for (const std::string& name : *called) {
    for (const char* cpu_only : {"expf", "tanhf", "atan2f", "llvm.exp.", "llvm.log.", "llvm.pow.",
                                 "llvm.maximum.", "llvm.minimum.", "kiln_expf"}) {
      EXPECT_EQ(name.rfind(cpu_only, 0), std::string::npos) << name;
    }
  }
}

TEST(CodegenTargetHooks, ComplexFunctionsComeFromTheTarget) {
  const MarkingHooks hooks;
  const StatusOr<std::set<std::string>> called = CalledFunctions(R"(
HloModule m
ENTRY e {
  x = c64[8] parameter(0)
  y = c64[8] parameter(1)
  ex = c64[8] exponential(x)
  q = c64[8] divide(ex, y)
  m = c64[8] multiply(q, x)
  a = f32[8] abs(m)
  ROOT r = c64[8] convert(a)
})",
                                                                 hooks);
  ASSERT_TRUE(called.ok()) << called.status().ToString();
  for (const char* asked : {"complex.cexpf", "complex.__divsc3", "complex.__mulsc3", "complex.hypot"})
    EXPECT_TRUE(called->count(asked)) << asked;
  for (const char* host : {"cexpf", "__divsc3", "__mulsc3", "hypotf"})
    EXPECT_FALSE(called->count(host)) << host;
}

// The type of every function the kernel of `hlo`'s entry declares, as LLVM prints it.
StatusOr<std::map<std::string, std::string>> DeclaredFunctionTypes(const std::string& hlo,
                                                                   const llvm_ir::TargetHooks& hooks) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(hlo));
  llvm::LLVMContext context;
  llvm::Module llvm_module("hooks", context);
  KILN_RETURN_IF_ERROR(llvm_ir::EmitKernel(llvm_module, *module->entry(), "kernel", hooks).status());
  std::map<std::string, std::string> types;
  for (llvm::Function& function : llvm_module) {
    if (!function.isDeclaration()) continue;
    std::string printed;
    llvm::raw_string_ostream stream(printed);
    function.getFunctionType()->print(stream);
    types[function.getName().str()] = stream.str();
  }
  return types;
}

// exp, multiply and divide of c64 and c128, and abs (hypot) of each.
constexpr char kComplexCalls[] = R"(
HloModule m
ENTRY e {
  x = c64[8] parameter(0)
  y = c128[8] parameter(1)
  ex = c64[8] exponential(x)
  mx = c64[8] multiply(ex, x)
  ey = c128[8] exponential(y)
  my = c128[8] multiply(ey, y)
  dy = c128[8] divide(my, y)
  ay = f64[8] abs(dy)
  ax = f32[8] abs(mx)
  ROOT r = (f32[8], f64[8]) tuple(ax, ay)
})";

void ExpectDeclarations(const codegen::CpuTargetHooks& hooks,
                        const std::map<std::string, std::string>& want) {
  const StatusOr<std::map<std::string, std::string>> types = DeclaredFunctionTypes(kComplexCalls, hooks);
  ASSERT_TRUE(types.ok()) << types.status().ToString();
  for (const auto& [name, type] : want) {
    const auto found = types->find(name);
    ASSERT_NE(found, types->end()) << name << " is not called";
    EXPECT_EQ(found->second, type) << name;
  }
}

TEST(CodegenTargetHooks, TheCpuCallsComplexFunctionsInTheX86_64SystemVAbi) {
  // A float complex in one vector register; a double complex as two
  // doubles in and a pair out; libgcc's helpers take the parts.
  ExpectDeclarations(codegen::CpuTargetHooks(llvm::Triple("x86_64-pc-linux-gnu")),
                     {
                         {"cexpf", "<2 x float> (<2 x float>)"},
                         {"cexp", "{ double, double } (double, double)"},
                         {"__mulsc3", "<2 x float> (float, float, float, float)"},
                         {"__muldc3", "{ double, double } (double, double, double, double)"},
                         {"__divdc3", "{ double, double } (double, double, double, double)"},
                         {"hypotf", "float (float, float)"},
                         {"hypot", "double (double, double)"},
                     });
}

// What clang 19 declares for the same C calls with -target aarch64-linux-gnu:
// each complex number an aggregate of its parts, [2 x T] in and {T, T} out.
TEST(CodegenTargetHooks, TheCpuCallsComplexFunctionsInAArch64sAapcs64) {
  ExpectDeclarations(codegen::CpuTargetHooks(llvm::Triple("aarch64-unknown-linux-gnu")),
                     {
                         {"cexpf", "{ float, float } ([2 x float])"},
                         {"cexp", "{ double, double } ([2 x double])"},
                         {"__mulsc3", "{ float, float } (float, float, float, float)"},
                         {"__muldc3", "{ double, double } (double, double, double, double)"},
                         {"__divdc3", "{ double, double } (double, double, double, double)"},
                         {"hypotf", "float (float, float)"},
                         {"hypot", "double (double, double)"},
                     });
}

// The default hooks follow the process's own CPU.
TEST(CodegenTargetHooks, TheDefaultHooksAreTheHostsConvention) {
  const llvm::Triple host(llvm::sys::getProcessTriple());
  const StatusOr<std::map<std::string, std::string>> host_types =
      DeclaredFunctionTypes(kComplexCalls, codegen::CpuTargetHooks());
  const StatusOr<std::map<std::string, std::string>> triple_types =
      DeclaredFunctionTypes(kComplexCalls, codegen::CpuTargetHooks(host));
  ASSERT_TRUE(host_types.ok() && triple_types.ok());
  EXPECT_EQ(*host_types, *triple_types) << host.str();
}

TEST(CodegenTargetHooks, AFunctionTheTargetLacksFailsTheKernelByName) {
  MarkingHooks hooks;
  hooks.Refuse(Opcode::kTanh);
  const Status status = CalledFunctions(R"(
HloModule m
ENTRY e {
  x = f32[16] parameter(0)
  ROOT t = f32[16] tanh(x)
})",
                                        hooks)
                            .status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("no tanh on this target"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace kiln::cpu::testing
