#include "backends/cuda/atomic_scatter_compare_swap.h"

#include <algorithm>

#include <llvm/IR/Instructions.h>

#include "backends/llvm/element_ir.h"

namespace kiln::cuda {
namespace {

// The bits of `old_bits` combined with the update (`update` its compute
// value, `update_bits` its bits) as the interpreter's step combines an
// output element with an update (core/interpreter/scalar_ops.h): float
// minimum and maximum take the old element if it is NaN, else the update
// if it is, else the old element only if it is strictly greater (maximum)
// or less (minimum). The interpreter applies them as op(element, update)
// whichever way round the combiner names its parameters, and so does this.
// The bits are chosen, not converted, so a NaN's payload survives f16.
StatusOr<llvm::Value*> CompareSwapCombinedBits(llvm::IRBuilder<>& b, llvm_ir::ElementalEmitter& emitter,
                                               const Computation& combiner, Opcode opcode, ElementType type,
                                               llvm::Value* old_bits, llvm::Value* update,
                                               llvm::Value* update_bits) {
  llvm::Value* old_value = llvm_ir::FromBits(b, type, old_bits);
  if (IsFloating(type) && (opcode == Opcode::kMaximum || opcode == Opcode::kMinimum)) {
    llvm::Value* old_is_nan = b.CreateFCmpUNO(old_value, old_value);
    // False when either is NaN: then a NaN update wins over a number.
    llvm::Value* old_is_beyond =
        opcode == Opcode::kMaximum ? b.CreateFCmpOGT(old_value, update) : b.CreateFCmpOLT(old_value, update);
    return b.CreateSelect(b.CreateOr(old_is_nan, old_is_beyond), old_bits, update_bits);
  }
  KILN_ASSIGN_OR_RETURN(llvm_ir::IrValues combined, emitter.EmitScalarCall(combiner, {old_value, update}));
  if (combined.size() != 1)
    return Internal("cuda: a scatter combiner for compare-and-swap returned ", combined.size(), " values");
  return llvm_ir::ToBits(b, type, combined[0]);
}

}  // namespace

bool CombinesByCompareSwap(Opcode opcode, ElementType type) {
  switch (type) {
    case ElementType::kF32:
    case ElementType::kF64: return opcode == Opcode::kMaximum || opcode == Opcode::kMinimum;
    case ElementType::kF16:
    case ElementType::kBF16:
      return opcode == Opcode::kAdd || opcode == Opcode::kMaximum || opcode == Opcode::kMinimum;
    case ElementType::kS8:
    case ElementType::kU8:
    case ElementType::kS16:
    case ElementType::kU16:
      switch (opcode) {
        case Opcode::kAdd:
        case Opcode::kMultiply:
        case Opcode::kMinimum:
        case Opcode::kMaximum:
        case Opcode::kAnd:
        case Opcode::kOr:
        case Opcode::kXor: return true;
        default: return false;
      }
    case ElementType::kS32:
    case ElementType::kU32:
    case ElementType::kS64:
    case ElementType::kU64: return opcode == Opcode::kMultiply;
    default: return false;
  }
}

Status EmitCompareSwapCombine(llvm::IRBuilder<>& b, llvm_ir::ElementalEmitter& emitter,
                              const Computation& combiner, ElementType type, llvm::Value* address,
                              llvm::Value* update) {
  const Instruction* root = combiner.root();
  if (root == nullptr || !CombinesByCompareSwap(root->opcode, type))
    return Internal("cuda: ", combiner.name(), " does not combine ", ElementTypeName(type),
                    " by compare-and-swap");
  const unsigned element_bits = static_cast<unsigned>(8 * ByteWidth(type));
  // PTX swaps 32- and 64-bit words (16-bit ones only from sm_70).
  const unsigned word_bits = std::max(32u, element_bits);
  llvm::IntegerType* word_type = b.getIntNTy(word_bits);
  const llvm::Align word_align(word_bits / 8);
  llvm::Value* word_address = address;
  llvm::Value* shift = nullptr;      // the element's lowest bit in its word (little-endian)
  llvm::Value* kept_bits = nullptr;  // the neighbours' bits of the word
  if (element_bits < word_bits) {
    llvm::Value* offset =
        b.CreateAnd(b.CreatePtrToInt(address, b.getInt64Ty()), b.getInt64(word_bits / 8 - 1));
    word_address = b.CreateGEP(b.getInt8Ty(), address, b.CreateNeg(offset));
    shift = b.CreateTrunc(b.CreateShl(offset, 3), word_type);
    const llvm::APInt element_mask = llvm::APInt::getLowBitsSet(word_bits, element_bits);
    kept_bits = b.CreateNot(b.CreateShl(llvm::ConstantInt::get(word_type, element_mask), shift));
  }
  llvm::Value* update_bits = llvm_ir::ToBits(b, type, update);
  llvm::LoadInst* first = b.CreateAlignedLoad(word_type, word_address, word_align);
  first->setAtomic(llvm::AtomicOrdering::Monotonic);

  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::Function* function = before->getParent();
  llvm::LLVMContext& context = b.getContext();
  llvm::BasicBlock* combine = llvm::BasicBlock::Create(context, "scatter.cas.combine", function);
  llvm::BasicBlock* swap = llvm::BasicBlock::Create(context, "scatter.cas.swap", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "scatter.cas.done", function);
  b.CreateBr(combine);

  b.SetInsertPoint(combine);
  llvm::PHINode* seen = b.CreatePHI(word_type, 2, "seen");
  seen->addIncoming(first, before);
  llvm::Value* old_bits = seen;
  if (shift != nullptr) old_bits = b.CreateTrunc(b.CreateLShr(seen, shift), b.getIntNTy(element_bits));
  emitter.PushScope();  // the combine is redone on each pass of the loop
  StatusOr<llvm::Value*> combined =
      CompareSwapCombinedBits(b, emitter, combiner, root->opcode, type, old_bits, update, update_bits);
  emitter.PopScope();
  KILN_RETURN_IF_ERROR(combined.status());
  llvm::Value* want = *combined;
  if (shift != nullptr)
    want = b.CreateOr(b.CreateAnd(seen, kept_bits), b.CreateShl(b.CreateZExt(want, word_type), shift));
  // Bits, not values, are compared: a NaN element does not loop forever,
  // and an element the update leaves as it is needs no swap.
  b.CreateCondBr(b.CreateICmpEQ(want, seen), done, swap);

  b.SetInsertPoint(swap);
  llvm::AtomicCmpXchgInst* exchange = b.CreateAtomicCmpXchg(
      word_address, seen, want, word_align, llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  seen->addIncoming(b.CreateExtractValue(exchange, 0), swap);
  b.CreateCondBr(b.CreateExtractValue(exchange, 1), done, combine);
  b.SetInsertPoint(done);
  return OkStatus();
}

}  // namespace kiln::cuda
