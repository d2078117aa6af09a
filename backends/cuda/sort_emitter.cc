#include "backends/cuda/sort_emitter.h"

#include <functional>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/cuda_target_hooks.h"
#include "backends/cuda/gpu_entry.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/emittable.h"
#include "backends/llvm/loop_ir.h"

namespace kiln::cuda {
namespace {

using llvm_ir::ElementalEmitter;
using llvm_ir::EmitCountedLoop;
using llvm_ir::IrValues;
using llvm_ir::LoadElement;
using llvm_ir::StorageType;

using Compare = std::function<StatusOr<llvm::Value*>(llvm::Value*, llvm::Value*)>;

struct SortGeometry {
  int64_t outer = 1;   // product of the dimensions before the sort dimension
  int64_t length = 1;  // the sort dimension
  int64_t inner = 1;   // product of the dimensions after it
};

SortGeometry Geometry(const Instruction& sort) {
  const Shape& shape = sort.operand(0)->shape;
  const int64_t rank = shape.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  SortGeometry geometry;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dimension) geometry.outer *= shape.dimensions(d);
    if (d == dimension) geometry.length = shape.dimensions(d);
    if (d > dimension) geometry.inner *= shape.dimensions(d);
  }
  return geometry;
}

// Sorts the element numbers 0..length-1 of one row into the order
// `compare(x, y)` (x strictly before y) defines, stably, by bottom-up merge
// passes between `order` and `spare` (i32 arrays of `length`). Returns the
// array holding the final order.
StatusOr<llvm::Value*> EmitMergeSort(llvm::IRBuilder<>& b, llvm::Function* function, llvm::Value* order,
                                     llvm::Value* spare, llvm::Value* length, const Compare& compare) {
  llvm::LLVMContext& context = b.getContext();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  auto block = [&](const char* label) { return llvm::BasicBlock::Create(context, label, function); };
  // A[k] = k.
  KILN_RETURN_IF_ERROR(EmitCountedLoop(b, b.getInt64(0), length, "init", [&](llvm::Value* k) -> Status {
    b.CreateStore(b.CreateTrunc(k, i32), b.CreateInBoundsGEP(i32, order, k));
    return OkStatus();
  }));
  // Bottom-up merge passes, ping-ponging between the halves of the scratch.
  llvm::BasicBlock* pass_head = block("pass.head");
  llvm::BasicBlock* pass_body = block("pass.body");
  llvm::BasicBlock* pass_done = block("pass.done");
  llvm::BasicBlock* before_passes = b.GetInsertBlock();
  b.CreateBr(pass_head);
  b.SetInsertPoint(pass_head);
  llvm::PHINode* width = b.CreatePHI(i64, 2);
  llvm::PHINode* from = b.CreatePHI(b.getPtrTy(), 2);
  llvm::PHINode* to = b.CreatePHI(b.getPtrTy(), 2);
  width->addIncoming(b.getInt64(1), before_passes);
  from->addIncoming(order, before_passes);
  to->addIncoming(spare, before_passes);
  b.CreateCondBr(b.CreateICmpULT(width, length), pass_body, pass_done);
  b.SetInsertPoint(pass_body);
  {
    // For each pair of runs [lo, mid) and [mid, hi).
    llvm::BasicBlock* run_head = block("run.head");
    llvm::BasicBlock* run_body = block("run.body");
    llvm::BasicBlock* run_done = block("run.done");
    llvm::BasicBlock* before_runs = b.GetInsertBlock();
    b.CreateBr(run_head);
    b.SetInsertPoint(run_head);
    llvm::PHINode* lo = b.CreatePHI(i64, 2);
    lo->addIncoming(b.getInt64(0), before_runs);
    b.CreateCondBr(b.CreateICmpULT(lo, length), run_body, run_done);
    b.SetInsertPoint(run_body);
    auto min = [&](llvm::Value* a, llvm::Value* c) { return b.CreateSelect(b.CreateICmpULT(a, c), a, c); };
    llvm::Value* mid = min(b.CreateAdd(lo, width), length);
    llvm::Value* hi = min(b.CreateAdd(lo, b.CreateMul(width, b.getInt64(2))), length);
    // Merge: out position o from left i or right j.
    llvm::BasicBlock* merge_head = block("merge.head");
    llvm::BasicBlock* merge_body = block("merge.body");
    llvm::BasicBlock* compare_block = block("merge.compare");
    llvm::BasicBlock* pick = block("merge.pick");
    llvm::BasicBlock* merge_done = block("merge.done");
    llvm::BasicBlock* before_merge = b.GetInsertBlock();
    b.CreateBr(merge_head);
    b.SetInsertPoint(merge_head);
    llvm::PHINode* o = b.CreatePHI(i64, 2);
    llvm::PHINode* i = b.CreatePHI(i64, 2);
    llvm::PHINode* j = b.CreatePHI(i64, 2);
    o->addIncoming(lo, before_merge);
    i->addIncoming(lo, before_merge);
    j->addIncoming(mid, before_merge);
    b.CreateCondBr(b.CreateICmpULT(o, hi), merge_body, merge_done);
    b.SetInsertPoint(merge_body);
    llvm::Value* left_left = b.CreateICmpULT(i, mid);
    llvm::Value* right_left = b.CreateICmpULT(j, hi);
    llvm::Value* left_empty = b.CreateNot(left_left);
    // Both runs have elements: compare; else take whichever is left.
    b.CreateCondBr(b.CreateAnd(left_left, right_left), compare_block, pick);
    b.SetInsertPoint(compare_block);
    llvm::Value* left_element = b.CreateLoad(i32, b.CreateInBoundsGEP(i32, from, i));
    llvm::Value* right_element = b.CreateLoad(i32, b.CreateInBoundsGEP(i32, from, j));
    // Stable: the right element goes first only when strictly before.
    KILN_ASSIGN_OR_RETURN(llvm::Value * right_first, compare(right_element, left_element));
    llvm::BasicBlock* compare_end = b.GetInsertBlock();
    b.CreateBr(pick);
    b.SetInsertPoint(pick);
    llvm::PHINode* take_right = b.CreatePHI(b.getInt1Ty(), 2);
    take_right->addIncoming(right_first, compare_end);
    take_right->addIncoming(left_empty, merge_body);
    llvm::Value* source = b.CreateSelect(take_right, j, i);
    llvm::Value* chosen = b.CreateLoad(i32, b.CreateInBoundsGEP(i32, from, source));
    b.CreateStore(chosen, b.CreateInBoundsGEP(i32, to, o));
    llvm::Value* next_i = b.CreateSelect(take_right, i, b.CreateAdd(i, b.getInt64(1)));
    llvm::Value* next_j = b.CreateSelect(take_right, b.CreateAdd(j, b.getInt64(1)), j);
    o->addIncoming(b.CreateAdd(o, b.getInt64(1)), pick);
    i->addIncoming(next_i, pick);
    j->addIncoming(next_j, pick);
    b.CreateBr(merge_head);
    b.SetInsertPoint(merge_done);
    lo->addIncoming(hi, merge_done);
    b.CreateBr(run_head);
    b.SetInsertPoint(run_done);
    width->addIncoming(b.CreateMul(width, b.getInt64(2)), run_done);
    from->addIncoming(to, run_done);
    to->addIncoming(from, run_done);
    b.CreateBr(pass_head);
  }
  b.SetInsertPoint(pass_done);
  return from;
}

}  // namespace

Status CheckSortEmittable(const Instruction& sort) {
  if (sort.opcode != Opcode::kSort || sort.operands.empty() || sort.called.size() != 1)
    return Unimplemented("cuda: sort needs operands and one comparator");
  const Shape& first = sort.operand(0)->shape;
  for (const Instruction* operand : sort.operands) {
    if (!operand->shape.IsArray() || operand->shape.dimensions() != first.dimensions() ||
        IsComplex(operand->shape.element_type())) {
      return Unimplemented("cuda: sort operands must be real arrays of one shape");
    }
  }
  const int64_t rank = first.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) return Unimplemented("cuda: bad sort dimension");
  if (first.element_count() > 0 && Geometry(sort).length > (int64_t{1} << 30))
    return Unimplemented("cuda: sort rows longer than 2^30 elements");
  const Computation& comparator = *sort.called[0];
  const auto& parameters = comparator.parameters();
  if (parameters.size() != 2 * sort.operands.size() || comparator.root() == nullptr)
    return Unimplemented("cuda: the sort comparator must take two scalars per operand");
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Shape& shape = parameters[i]->shape;
    if (!shape.IsArray() || shape.rank() != 0 ||
        shape.element_type() != sort.operand(i / 2)->shape.element_type())
      return Unimplemented("cuda: the sort comparator's parameters must be scalars of the operand types");
  }
  const Shape& root = comparator.root()->shape;
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != ElementType::kPred)
    return Unimplemented("cuda: the sort comparator must return pred[]");
  return llvm_ir::CheckEmittable(comparator);
}

int64_t SortScratchBytes(const Instruction& sort) {
  return 2 * sort.operand(0)->shape.element_count() * static_cast<int64_t>(sizeof(int32_t));
}

StatusOr<int64_t> EmitSortKernel(llvm::Module& module, const Instruction& sort, const std::string& name) {
  KILN_RETURN_IF_ERROR(CheckSortEmittable(sort));
  llvm::LLVMContext& context = module.getContext();
  const SortGeometry geometry = Geometry(sort);
  const int64_t rows = geometry.outer * geometry.inner;
  const size_t count = sort.operands.size();
  const int buffer_count = static_cast<int>(2 * count + 1);
  GpuEntry entry = BeginGpuEntry(module, name, buffer_count);
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  auto buffer = [&](size_t i) { return entry.function->getArg(static_cast<unsigned>(i)); };
  llvm::Value* row = entry.thread;
  // Element k of this row is at base + k * inner.
  llvm::Value* outer = b.CreateUDiv(row, b.getInt64(geometry.inner));
  llvm::Value* inner = b.CreateURem(row, b.getInt64(geometry.inner));
  llvm::Value* base = b.CreateAdd(b.CreateMul(outer, b.getInt64(geometry.length * geometry.inner)), inner);
  auto element_offset = [&](llvm::Value* k) {
    return b.CreateAdd(base, b.CreateMul(k, b.getInt64(geometry.inner)));
  };
  llvm::Value* scratch = buffer(2 * count);
  llvm::Value* length = b.getInt64(geometry.length);
  llvm::Value* row_scratch =
      b.CreateInBoundsGEP(i32, scratch, b.CreateMul(row, b.getInt64(2 * geometry.length)));
  llvm::Value* second_half = b.CreateInBoundsGEP(i32, row_scratch, length);

  const CudaTargetHooks target;
  ElementalEmitter emitter(b, target, entry.entry_block, {});
  // comp(x, y): element numbers x, y of this row -> i1.
  auto compare = [&](llvm::Value* x, llvm::Value* y) -> StatusOr<llvm::Value*> {
    IrValues arguments;
    for (size_t j = 0; j < count; ++j) {
      const ElementType type = sort.operand(j)->shape.element_type();
      llvm::Type* storage = StorageType(context, type);
      for (llvm::Value* k : {x, y}) {
        llvm::Value* address = b.CreateInBoundsGEP(storage, buffer(j), element_offset(b.CreateZExt(k, i64)));
        arguments.push_back(LoadElement(b, type, address));
      }
    }
    emitter.PushScope();
    StatusOr<IrValues> result = emitter.EmitScalarCall(*sort.called[0], arguments);
    emitter.PopScope();
    KILN_RETURN_IF_ERROR(result.status());
    return (*result)[0];
  };

  KILN_ASSIGN_OR_RETURN(llvm::Value * from,
                        EmitMergeSort(b, entry.function, row_scratch, second_half, length, compare));
  // Gather: out_j[k] = op_j[order[k]], `from` holding the final order.
  KILN_RETURN_IF_ERROR(EmitCountedLoop(b, b.getInt64(0), length, "gather", [&](llvm::Value* k) -> Status {
    llvm::Value* source = b.CreateZExt(b.CreateLoad(i32, b.CreateInBoundsGEP(i32, from, k)), i64);
    for (size_t j = 0; j < count; ++j) {
      const ElementType type = sort.operand(j)->shape.element_type();
      llvm::Type* storage = StorageType(context, type);
      llvm::Value* value =
          b.CreateLoad(storage, b.CreateInBoundsGEP(storage, buffer(j), element_offset(source)));
      b.CreateStore(value, b.CreateInBoundsGEP(storage, buffer(count + j), element_offset(k)));
    }
    return OkStatus();
  }));
  FinishGpuEntry(entry);
  return rows;
}

}  // namespace kiln::cuda

namespace kiln::cuda {

Status CheckTopKEmittable(const Instruction& top_k) {
  if (top_k.opcode != Opcode::kTopK || top_k.operands.size() != 1)
    return Unimplemented("cuda: topk needs one operand");
  const Shape& operand = top_k.operand(0)->shape;
  const Shape& shape = top_k.shape;
  const bool fits = operand.IsArray() && operand.rank() >= 1 && !IsComplex(operand.element_type()) &&
                    operand.element_type() != ElementType::kPred && shape.IsTuple() &&
                    shape.tuple_shapes().size() == 2 && shape.tuple_shapes(0).IsArray() &&
                    shape.tuple_shapes(1).IsArray() &&
                    shape.tuple_shapes(1).element_type() == ElementType::kS32 && top_k.attrs.top_k >= 0 &&
                    top_k.attrs.top_k <= operand.dimensions().back();
  if (!fits) return Unimplemented("cuda: topk needs a real array operand and (values, s32 indices) results");
  if (operand.dimensions().back() > (int64_t{1} << 30))
    return Unimplemented("cuda: topk rows longer than 2^30");
  return OkStatus();
}

StatusOr<int64_t> EmitTopKKernel(llvm::Module& module, const Instruction& top_k, const std::string& name) {
  KILN_RETURN_IF_ERROR(CheckTopKEmittable(top_k));
  llvm::LLVMContext& context = module.getContext();
  const Shape& operand = top_k.operand(0)->shape;
  const ElementType type = operand.element_type();
  const int64_t length = operand.dimensions().back();
  const int64_t rows = length == 0 ? 0 : operand.element_count() / length;
  const int64_t k = top_k.attrs.top_k;
  const bool largest = top_k.attrs.largest;
  GpuEntry entry = BeginGpuEntry(module, name, 4);
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* function = entry.function;
  llvm::Type* storage = StorageType(context, type);
  llvm::Value* row = entry.thread;
  llvm::Value* base = b.CreateMul(row, b.getInt64(length));
  llvm::Value* order =
      b.CreateInBoundsGEP(i32, function->getArg(3), b.CreateMul(row, b.getInt64(2 * length)));
  llvm::Value* spare = b.CreateInBoundsGEP(i32, order, b.getInt64(length));
  // A signed key whose order is the element order (floats: TOTALORDER).
  auto key = [&](llvm::Value* element) -> llvm::Value* {
    llvm::Value* value = LoadElement(
        b, type,
        b.CreateInBoundsGEP(storage, function->getArg(0), b.CreateAdd(base, b.CreateZExt(element, i64))));
    if (IsFloating(type)) {
      llvm::Value* bits = b.CreateBitCast(b.CreateFPExt(value, b.getDoubleTy()), i64);
      return b.CreateSelect(b.CreateICmpSLT(bits, b.getInt64(0)), b.CreateXor(bits, b.getInt64(INT64_MAX)),
                            bits);
    }
    return IsSignedIntegral(type) ? b.CreateSExt(value, i64) : b.CreateZExt(value, i64);
  };
  const bool unsigned_keys = !IsFloating(type) && !IsSignedIntegral(type);
  auto compare = [&](llvm::Value* x, llvm::Value* y) -> StatusOr<llvm::Value*> {
    llvm::Value* kx = key(x);
    llvm::Value* ky = key(y);
    if (unsigned_keys) return largest ? b.CreateICmpUGT(kx, ky) : b.CreateICmpULT(kx, ky);
    return largest ? b.CreateICmpSGT(kx, ky) : b.CreateICmpSLT(kx, ky);
  };
  KILN_ASSIGN_OR_RETURN(llvm::Value * sorted,
                        EmitMergeSort(b, function, order, spare, b.getInt64(length), compare));
  // values[row, i] = operand[row, sorted[i]]; indices[row, i] = sorted[i].
  KILN_RETURN_IF_ERROR(
      EmitCountedLoop(b, b.getInt64(0), b.getInt64(k), "take", [&](llvm::Value* i) -> Status {
        llvm::Value* element = b.CreateLoad(i32, b.CreateInBoundsGEP(i32, sorted, i));
        llvm::Value* out = b.CreateAdd(b.CreateMul(row, b.getInt64(k)), i);
        llvm::Value* value = b.CreateLoad(
            storage,
            b.CreateInBoundsGEP(storage, function->getArg(0), b.CreateAdd(base, b.CreateZExt(element, i64))));
        b.CreateStore(value, b.CreateInBoundsGEP(storage, function->getArg(1), out));
        b.CreateStore(element, b.CreateInBoundsGEP(i32, function->getArg(2), out));
        return OkStatus();
      }));
  FinishGpuEntry(entry);
  return rows;
}

}  // namespace kiln::cuda
