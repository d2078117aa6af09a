// How Kiln element types live in LLVM IR. Every value is held in its
// *compute* type while a kernel works on it (PRED as i1, integers as iN,
// F16/BF16/F32 as float, F64 as double) and in its *storage* type in memory
// (PRED as i8, F16 as half, BF16 as the i16 bit pattern). F16 and BF16 values
// are always kept rounded to their type, so every op rounds once, as the
// interpreter does.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "core/element_type.h"

namespace kiln::llvm_ir {

llvm::Type* ComputeType(llvm::LLVMContext& context, ElementType type);
llvm::Type* StorageType(llvm::LLVMContext& context, ElementType type);

bool IsLowFloat(ElementType type);  // F16 or BF16

// Loads one element at `address` and widens it to the compute type.
llvm::Value* LoadElement(llvm::IRBuilder<>& b, ElementType type, llvm::Value* address);
// Narrows a compute value to the storage type and stores it.
void StoreElement(llvm::IRBuilder<>& b, ElementType type, llvm::Value* value, llvm::Value* address);

// Rounds a float value to F16/BF16 precision (round to nearest even) and
// back; identity for every other type. Applied to the result of each op.
llvm::Value* RoundToType(llvm::IRBuilder<>& b, ElementType type, llvm::Value* value);

// The bits of a value as stored (an iN of the type's bit width, i8 for PRED),
// and back.
llvm::Value* ToBits(llvm::IRBuilder<>& b, ElementType type, llvm::Value* value);
llvm::Value* FromBits(llvm::IRBuilder<>& b, ElementType type, llvm::Value* bits);

// A compile-time element value (from a constant literal's raw bytes) as an
// IR constant of the compute type.
llvm::Constant* ConstantFromBytes(llvm::LLVMContext& context, ElementType type, const uint8_t* bytes);

}  // namespace kiln::llvm_ir
