#include "backends/cpu/codegen/vector_exp_ir.h"

#include <cstdint>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Host.h>

#include "backends/llvm/fast_math_ir.h"
#include "backends/llvm/target_hooks.h"

namespace kiln::cpu::codegen {
namespace {

// How exp applies its final 2^n.
enum class ExpScale : uint8_t {
  kTwoHalves,  // integer exponent arithmetic, in two steps so subnormal results are right
  kScalef512,  // AVX-512 vscalefps on <16 x float>: one rounding, overflow and NaN included
  kScalef256,  // the same on <8 x float> (AVX-512VL)
  kScalef128,  // the same on <4 x float> (AVX-512VL)
};

// exp(x) for a float or a vector of floats.
llvm::Value* ExpOf(llvm::IRBuilder<>& b, llvm::Value* x, ExpScale scale) {
  if (scale == ExpScale::kTwoHalves) return llvm_ir::EmitFastExp(b, x);
  const auto [n, er] = llvm_ir::EmitExpParts(b, x);
  llvm::Value* undefined = llvm::UndefValue::get(x->getType());
  if (scale == ExpScale::kScalef512) {
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                             {er, n, undefined, b.getInt16(0xFFFF), b.getInt32(4)});
  }
  const auto id = scale == ExpScale::kScalef256 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_256
                                                : llvm::Intrinsic::x86_avx512_mask_scalef_ps_128;
  return b.CreateIntrinsic(id, {}, {er, n, undefined, b.getInt8(0xFF)});
}

bool HostHas(const char* feature) {
  static const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto found = features.find(feature);
  return found != features.end() && found->second;
}

// The function `name` of `module`: float(float), or its vector variant of
// `lanes` lanes, computing exp. Defined on first use.
llvm::Function* ExpFunction(llvm::Module& module, const std::string& name, unsigned lanes) {
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* type = llvm::Type::getFloatTy(context);
  if (lanes > 1) type = llvm::FixedVectorType::get(type, lanes);
  auto* function = llvm::Function::Create(llvm::FunctionType::get(type, {type}, false),
                                          llvm::GlobalValue::InternalLinkage, name, module);
  function->setDoesNotThrow();
  function->setWillReturn();
  function->setDoesNotAccessMemory();
  function->addFnAttr(llvm_ir::kVectorMathAttribute);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  ExpScale scale = ExpScale::kTwoHalves;
  if (lanes == 16 && HostHas("avx512f")) scale = ExpScale::kScalef512;
  if (lanes == 8 && HostHas("avx512vl")) scale = ExpScale::kScalef256;
  if (lanes == 4 && HostHas("avx512vl")) scale = ExpScale::kScalef128;
  b.CreateRet(ExpOf(b, function->getArg(0), scale));
  return function;
}

constexpr const char* kExpName = "kiln_expf";
constexpr unsigned kExpVectorLanes[] = {4, 8, 16};

}  // namespace

llvm::Value* EmitVectorizableExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::Function* scalar = ExpFunction(module, kExpName, 1);
  std::string variants;
  for (unsigned lanes : kExpVectorLanes) {
    const std::string vector_name = std::string(kExpName) + "_v" + std::to_string(lanes);
    ExpFunction(module, vector_name, lanes);
    if (!variants.empty()) variants += ",";
    variants += "_ZGV_LLVM_N" + std::to_string(lanes) + "v_" + kExpName + "(" + vector_name + ")";
  }
  llvm::CallInst* call = b.CreateCall(scalar, {x});
  call->addFnAttr(llvm::Attribute::get(module.getContext(), "vector-function-abi-variant", variants));
  return call;
}

bool IsVectorizableMathFunction(const llvm::Function& function) {
  return function.getName().starts_with(kExpName);
}

}  // namespace kiln::cpu::codegen
