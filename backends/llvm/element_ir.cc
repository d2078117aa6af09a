#include "backends/llvm/element_ir.h"

#include <algorithm>
#include <cstring>

#include <llvm/IR/Constants.h>

namespace kiln::llvm_ir {
namespace {

// BF16 from the bits of a float: round to nearest even, NaN becomes the
// canonical quiet NaN keeping its sign (what Eigen::bfloat16 does). Done on
// integers so no __truncsfbf2 libcall is needed and the loop vectorises.
llvm::Value* FloatToBf16Bits(llvm::IRBuilder<>& b, llvm::Value* value) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* bits = b.CreateBitCast(value, i32);
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7FFF))), 16);
  llvm::Value* nan = b.CreateOr(b.CreateAnd(b.CreateLShr(bits, 16), 0x8000), 0x7FC0);
  llvm::Value* is_nan = b.CreateFCmpUNO(value, value);
  return b.CreateTrunc(b.CreateSelect(is_nan, nan, rounded), b.getInt16Ty());
}

llvm::Value* Bf16BitsToFloat(llvm::IRBuilder<>& b, llvm::Value* bits) {
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(bits, b.getInt32Ty()), 16), b.getFloatTy());
}

// Float constants from their bits, so NaN payloads survive.
llvm::Constant* FloatConstant(llvm::LLVMContext& context, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return llvm::ConstantFP::get(context, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, bits)));
}

}  // namespace

llvm::Type* ComputeType(llvm::LLVMContext& context, ElementType type) {
  switch (type) {
    case ElementType::kPred: return llvm::Type::getInt1Ty(context);
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32: return llvm::Type::getFloatTy(context);
    case ElementType::kF64: return llvm::Type::getDoubleTy(context);
    // Real and imaginary parts side by side, as std::complex lays them out.
    case ElementType::kC64: return llvm::FixedVectorType::get(llvm::Type::getFloatTy(context), 2);
    case ElementType::kC128: return llvm::FixedVectorType::get(llvm::Type::getDoubleTy(context), 2);
    default: return llvm::Type::getIntNTy(context, static_cast<unsigned>(BitWidth(type)));
  }
}

llvm::Type* StorageType(llvm::LLVMContext& context, ElementType type) {
  switch (type) {
    case ElementType::kPred: return llvm::Type::getInt8Ty(context);
    case ElementType::kF16: return llvm::Type::getHalfTy(context);
    case ElementType::kBF16: return llvm::Type::getInt16Ty(context);
    default: return ComputeType(context, type);
  }
}

namespace {

// Complex elements are aligned only to their parts (8 bytes for c128), not
// to the 16 bytes a <2 x double> would assume.
llvm::Align ElementAlign(ElementType type) {
  if (IsComplex(type)) return llvm::Align(static_cast<uint64_t>(ByteWidth(type) / 2));
  return llvm::Align(static_cast<uint64_t>(std::max<int64_t>(1, ByteWidth(type))));
}

}  // namespace

bool IsLowFloat(ElementType type) { return type == ElementType::kF16 || type == ElementType::kBF16; }

llvm::Value* LoadElement(llvm::IRBuilder<>& b, ElementType type, llvm::Value* address) {
  llvm::Value* stored = b.CreateAlignedLoad(StorageType(b.getContext(), type), address, ElementAlign(type));
  switch (type) {
    case ElementType::kPred: return b.CreateICmpNE(stored, b.getInt8(0));
    case ElementType::kF16: return b.CreateFPExt(stored, b.getFloatTy());
    case ElementType::kBF16: return Bf16BitsToFloat(b, stored);
    default: return stored;
  }
}

void StoreElement(llvm::IRBuilder<>& b, ElementType type, llvm::Value* value, llvm::Value* address) {
  llvm::Value* stored = value;
  switch (type) {
    case ElementType::kPred: stored = b.CreateZExt(value, b.getInt8Ty()); break;
    case ElementType::kF16: stored = b.CreateFPTrunc(value, b.getHalfTy()); break;
    case ElementType::kBF16: stored = FloatToBf16Bits(b, value); break;
    default: break;
  }
  b.CreateAlignedStore(stored, address, ElementAlign(type));
}

llvm::Value* RoundToType(llvm::IRBuilder<>& b, ElementType type, llvm::Value* value) {
  switch (type) {
    case ElementType::kF16: return b.CreateFPExt(b.CreateFPTrunc(value, b.getHalfTy()), b.getFloatTy());
    case ElementType::kBF16: return Bf16BitsToFloat(b, FloatToBf16Bits(b, value));
    default: return value;
  }
}

llvm::Value* ToBits(llvm::IRBuilder<>& b, ElementType type, llvm::Value* value) {
  switch (type) {
    case ElementType::kPred: return b.CreateZExt(value, b.getInt8Ty());
    case ElementType::kF16: return b.CreateBitCast(b.CreateFPTrunc(value, b.getHalfTy()), b.getInt16Ty());
    case ElementType::kBF16: return FloatToBf16Bits(b, value);
    case ElementType::kF32: return b.CreateBitCast(value, b.getInt32Ty());
    case ElementType::kF64: return b.CreateBitCast(value, b.getInt64Ty());
    default: return value;
  }
}

llvm::Value* FromBits(llvm::IRBuilder<>& b, ElementType type, llvm::Value* bits) {
  switch (type) {
    case ElementType::kPred: return b.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0));
    case ElementType::kF16: return b.CreateFPExt(b.CreateBitCast(bits, b.getHalfTy()), b.getFloatTy());
    case ElementType::kBF16: return Bf16BitsToFloat(b, bits);
    case ElementType::kF32: return b.CreateBitCast(bits, b.getFloatTy());
    case ElementType::kF64: return b.CreateBitCast(bits, b.getDoubleTy());
    default: return bits;
  }
}

llvm::Constant* ConstantFromBytes(llvm::LLVMContext& context, ElementType type, const uint8_t* bytes) {
  if (IsComplex(type)) {
    const ElementType part = ComplexComponentType(type);
    const auto width = static_cast<size_t>(ByteWidth(part));
    return llvm::ConstantVector::get(
        {ConstantFromBytes(context, part, bytes), ConstantFromBytes(context, part, bytes + width)});
  }
  uint64_t raw = 0;
  std::memcpy(&raw, bytes, static_cast<size_t>(ByteWidth(type)));
  switch (type) {
    case ElementType::kPred: return llvm::ConstantInt::get(llvm::Type::getInt1Ty(context), raw != 0);
    case ElementType::kF16: {
      half value;
      std::memcpy(&value, bytes, sizeof(value));
      return FloatConstant(context, static_cast<float>(value));
    }
    case ElementType::kBF16: {
      bfloat16 value;
      std::memcpy(&value, bytes, sizeof(value));
      return FloatConstant(context, static_cast<float>(value));
    }
    case ElementType::kF32:
      return llvm::ConstantFP::get(context, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, raw)));
    case ElementType::kF64:
      return llvm::ConstantFP::get(context, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, raw)));
    default: return llvm::ConstantInt::get(ComputeType(context, type), raw);
  }
}

}  // namespace kiln::llvm_ir
