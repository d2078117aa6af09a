#include "backends/cuda/rng_emitter.h"

#include <numbers>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/gpu_entry.h"
#include "backends/llvm/element_ir.h"
#include "core/lowering/rng_key.h"

namespace kiln::cuda {
namespace {

using llvm_ir::LoadElement;
using llvm_ir::RoundToType;
using llvm_ir::StorageType;
using llvm_ir::StoreElement;

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// The same mixing in IR.
llvm::Value* Mix(llvm::IRBuilder<>& b, llvm::Value* x) {
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, 30)), b.getInt64(0xBF58476D1CE4E5B9ull));
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, 27)), b.getInt64(0x94D049BB133111EBull));
  return b.CreateXor(x, b.CreateLShr(x, 31));
}

// A double in [0, 1) from the top 53 bits.
llvm::Value* Unit(llvm::IRBuilder<>& b, llvm::Value* bits) {
  return b.CreateFMul(b.CreateUIToFP(b.CreateLShr(bits, 11), b.getDoubleTy()),
                      llvm::ConstantFP::get(b.getDoubleTy(), 0x1.0p-53));
}

}  // namespace

Status CheckRngEmittable(const Instruction& rng) {
  if (rng.opcode != Opcode::kRng || rng.operands.size() != 2 || !rng.shape.IsArray())
    return Unimplemented("cuda: rng needs two scalar operands and an array result");
  for (const Instruction* operand : rng.operands) {
    if (!operand->shape.IsArray() || operand->shape.element_count() != 1 ||
        operand->shape.element_type() != rng.shape.element_type())
      return Unimplemented("cuda: rng operands must be scalars of the result's type");
  }
  const ElementType type = rng.shape.element_type();
  const bool normal = rng.attrs.rng_distribution == RngDistribution::kNormal;
  if (IsComplex(type) || (normal && !IsFloating(type)))
    return Unimplemented("cuda: rng of ", rng.shape.ToString(), " is not supported");
  return OkStatus();
}

StatusOr<int64_t> EmitRngKernel(llvm::Module& module, const Instruction& rng, const std::string& name) {
  KILN_RETURN_IF_ERROR(CheckRngEmittable(rng));
  llvm::LLVMContext& context = module.getContext();
  const ElementType type = rng.shape.element_type();
  const bool normal = rng.attrs.rng_distribution == RngDistribution::kNormal;
  GpuEntry entry = BeginGpuEntry(module, name, 3, /*extra_i64_params=*/1);
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Function* function = entry.function;
  llvm::Type* storage = StorageType(context, type);
  llvm::Value* key = function->getArg(4);
  llvm::Value* a = LoadElement(b, type, function->getArg(0));
  llvm::Value* high = LoadElement(b, type, function->getArg(1));
  llvm::Value* counter = b.CreateAdd(key, b.CreateMul(entry.thread, b.getInt64(2 * kGolden)));
  llvm::Value* first = Mix(b, counter);
  llvm::Value* address = b.CreateInBoundsGEP(storage, function->getArg(2), entry.thread);
  if (IsFloating(type)) {
    llvm::Type* dbl = b.getDoubleTy();
    llvm::Value* low = type == ElementType::kF64 ? a : b.CreateFPExt(a, dbl);
    llvm::Value* top = type == ElementType::kF64 ? high : b.CreateFPExt(high, dbl);
    llvm::Value* sample = nullptr;
    if (normal) {
      llvm::Value* second = Mix(b, b.CreateAdd(counter, b.getInt64(kGolden)));
      llvm::Value* u1 = b.CreateFSub(llvm::ConstantFP::get(dbl, 1.0), Unit(b, first));
      llvm::Value* u2 = Unit(b, second);
      llvm::Value* radius =
          b.CreateIntrinsic(llvm::Intrinsic::sqrt, {dbl},
                            {b.CreateFMul(llvm::ConstantFP::get(dbl, -2.0),
                                          b.CreateIntrinsic(llvm::Intrinsic::log, {dbl}, {u1}))});
      llvm::Value* angle = b.CreateFMul(llvm::ConstantFP::get(dbl, 2.0 * std::numbers::pi), u2);
      sample = b.CreateFAdd(
          low,
          b.CreateFMul(top, b.CreateFMul(radius, b.CreateIntrinsic(llvm::Intrinsic::cos, {dbl}, {angle}))));
    } else {
      sample = b.CreateFAdd(low, b.CreateFMul(b.CreateFSub(top, low), Unit(b, first)));
    }
    llvm::Value* value =
        type == ElementType::kF64 ? sample : RoundToType(b, type, b.CreateFPTrunc(sample, b.getFloatTy()));
    if (!normal) {
      // Rounding to the type can reach `b`; the interval stays half-open.
      llvm::Value* widened = type == ElementType::kF64 ? value : b.CreateFPExt(value, dbl);
      llvm::Value* reached = b.CreateAnd(b.CreateFCmpOGE(widened, top), b.CreateFCmpOGT(top, low));
      value = b.CreateSelect(reached, a, value);
    }
    StoreElement(b, type, value, address);
  } else {
    llvm::Type* i64 = b.getInt64Ty();
    auto widen = [&](llvm::Value* v) {
      return IsSignedIntegral(type) ? b.CreateSExt(v, i64) : b.CreateZExt(v, i64);
    };
    llvm::Value* low = widen(a);
    llvm::Value* top = widen(high);
    llvm::Value* span = b.CreateSelect(b.CreateICmpSGT(top, low), b.CreateSub(top, low), b.getInt64(0));
    llvm::Value* offset = b.CreateSelect(
        b.CreateICmpEQ(span, b.getInt64(0)), b.getInt64(0),
        b.CreateURem(first, b.CreateSelect(b.CreateICmpEQ(span, b.getInt64(0)), b.getInt64(1), span)));
    llvm::Value* value = b.CreateTrunc(b.CreateAdd(low, offset), a->getType());
    StoreElement(b, type, value, address);
  }
  FinishGpuEntry(entry);
  return rng.shape.element_count();
}

}  // namespace kiln::cuda
