#include "backends/cuda/sort_emitter.h"

#include <algorithm>
#include <functional>
#include <memory>

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/cuda_target_hooks.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/emittable.h"
#include "backends/llvm/loop_ir.h"
#include "core/int_math.h"
#include "core/lowering/bitonic_sort.h"

namespace kiln::cuda {
namespace {

using llvm_ir::ElementalEmitter;
using llvm_ir::EmitCountedLoop;
using llvm_ir::IrValues;
using llvm_ir::LoadElement;
using llvm_ir::StorageType;

struct SortRowGeometry {
  int64_t outer = 1;   // product of the dimensions before the sort dimension
  int64_t length = 1;  // the sort dimension
  int64_t inner = 1;   // product of the dimensions after it
  int64_t rows() const { return outer * inner; }
};

SortRowGeometry SortRowsOf(const Instruction& sort) {
  const Shape& shape = sort.operand(0)->shape;
  const int64_t rank = shape.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  SortRowGeometry geometry;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dimension) geometry.outer *= shape.dimensions(d);
    if (d == dimension) geometry.length = shape.dimensions(d);
    if (d > dimension) geometry.inner *= shape.dimensions(d);
  }
  return geometry;
}

// topk's rows: the last dimension, the others folded into `outer`.
SortRowGeometry TopKRowsOf(const Instruction& top_k) {
  const Shape& operand = top_k.operand(0)->shape;
  SortRowGeometry geometry;
  geometry.length = operand.dimensions().back();
  geometry.outer = geometry.length == 0 ? 0 : operand.element_count() / geometry.length;
  return geometry;
}

// The padded length of the rows a kernel's finish reads (1: nothing sorted).
int64_t SortedRowStride(int64_t rows, int64_t length) {
  return rows > 0 && length > 1 ? BitonicPaddedLength(length) : 1;
}

// What a bitonic kernel needs beyond the network.
struct BitonicKernelSpec {
  int64_t rows = 0;
  int64_t length = 0;        // elements of a row; element numbers >= length are padding
  int64_t tile = kSortTile;  // elements one block sorts in shared memory (BitonicTile caps it)
  int buffer_count = 0;
  int scratch_buffer = 0;  // the parameter holding the element numbers
  // i1: real element number `later` goes before real element number
  // `earlier` (< later) of row `row` (i64 values, the numbers zero-extended).
  std::function<StatusOr<llvm::Value*>(llvm::Value* row, llvm::Value* later, llvm::Value* earlier)>
      later_first;
  // Output element `q` (i64, < finish_threads) of the gather or take; the
  // rows' sorted element numbers are at `order` (i32, row r at r * padded),
  // `padded` == 1 meaning there was nothing to sort (element k is k).
  int64_t finish_threads = 0;
  std::function<Status(llvm::Value* q, llvm::Value* order)> finish;
};

// The element numbers at `first_at` and `second_at` (i32 pointers, any
// address space) put in order: the one that goes first at `first_at` when
// `ascending`, at `second_at` otherwise. One comparator call, only when
// both are real: the later number goes first only when the comparator puts
// it strictly before the earlier one, so ties keep the element order.
Status EmitBitonicCompareExchange(llvm::IRBuilder<>& b, const BitonicKernelSpec& spec, llvm::Value* row,
                                  llvm::Value* first_at, llvm::Value* second_at, llvm::Value* ascending) {
  llvm::LLVMContext& context = b.getContext();
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* x = b.CreateLoad(i32, first_at);
  llvm::Value* y = b.CreateLoad(i32, second_at);
  llvm::Value* x_earlier = b.CreateICmpULT(x, y);
  llvm::Value* earlier = b.CreateSelect(x_earlier, x, y);
  llvm::Value* later = b.CreateSelect(x_earlier, y, x);
  // Padding (>= length) has the larger number whenever one of the two is
  // padding, and stays after: no comparator call, no values loaded.
  llvm::Value* both_real = b.CreateICmpULT(later, b.getInt32(static_cast<uint32_t>(spec.length)));
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::BasicBlock* compare = llvm::BasicBlock::Create(context, "pair.compare", function);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(context, "pair.join", function);
  b.CreateCondBr(both_real, compare, join);
  b.SetInsertPoint(compare);
  KILN_ASSIGN_OR_RETURN(llvm::Value * compared, spec.later_first(row, b.CreateZExt(later, b.getInt64Ty()),
                                                                 b.CreateZExt(earlier, b.getInt64Ty())));
  llvm::BasicBlock* compared_end = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode* later_goes_first = b.CreatePHI(b.getInt1Ty(), 2, "later_first");
  later_goes_first->addIncoming(b.getFalse(), before);
  later_goes_first->addIncoming(compared, compared_end);
  llvm::Value* first = b.CreateSelect(later_goes_first, later, earlier);
  llvm::Value* second = b.CreateSelect(later_goes_first, earlier, later);
  b.CreateStore(b.CreateSelect(ascending, first, second), first_at);
  b.CreateStore(b.CreateSelect(ascending, second, first), second_at);
  return OkStatus();
}

// The entry `name(ptr b0..bN-1, i64 mode, i64 block, i64 stride)`, its
// builder at the end of its first block (which holds the allocas).
struct BitonicEntry {
  llvm::Function* function = nullptr;
  llvm::BasicBlock* entry_block = nullptr;
  std::unique_ptr<llvm::IRBuilder<>> builder;
};

BitonicEntry BeginBitonicEntry(llvm::Module& module, const std::string& name, int buffer_count) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  std::vector<llvm::Type*> params(static_cast<size_t>(buffer_count), ptr);
  params.insert(params.end(), {i64, i64, i64});
  BitonicEntry entry;
  entry.function =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false),
                             llvm::GlobalValue::ExternalLinkage, name, module);
  entry.function->addFnAttr(llvm::Attribute::NoUnwind);
  entry.entry_block = llvm::BasicBlock::Create(context, "entry", entry.function);
  entry.builder = std::make_unique<llvm::IRBuilder<>>(entry.entry_block);
  return entry;
}

// Fills the entry with the modes BitonicLaunchMode names, the first i64
// argument choosing one per launch, and marks it a kernel.
Status EmitBitonicModes(llvm::Module& module, BitonicEntry& entry, const std::string& name,
                        const BitonicKernelSpec& spec) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Function* function = entry.function;
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Value* scratch = function->getArg(static_cast<unsigned>(spec.scratch_buffer));
  llvm::Value* mode = function->getArg(static_cast<unsigned>(spec.buffer_count));
  llvm::Value* merge_block = function->getArg(static_cast<unsigned>(spec.buffer_count + 1));
  llvm::Value* merge_stride = function->getArg(static_cast<unsigned>(spec.buffer_count + 2));

  const int64_t padded = SortedRowStride(spec.rows, spec.length);
  const int64_t tile = BitonicTile(padded, spec.tile);
  const int64_t half_tile = tile / 2;
  const int64_t tiles_per_row = padded / tile;  // 0 when there is nothing to sort

  auto block = [&](const char* label) { return llvm::BasicBlock::Create(context, label, function); };
  llvm::BasicBlock* done = block("done");
  b.SetInsertPoint(entry.entry_block);
  auto special = [&](llvm::Intrinsic::ID id) { return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), i64); };
  llvm::Value* block_id = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* thread = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* global_thread =
      b.CreateAdd(b.CreateMul(block_id, special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)), thread);
  llvm::BasicBlock* sort_tiles = block("sort_tiles");
  llvm::BasicBlock* across = block("merge_across_tiles");
  llvm::BasicBlock* within = block("merge_within_tiles");
  llvm::BasicBlock* finish = block("finish");
  llvm::SwitchInst* modes = b.CreateSwitch(mode, done, 4);
  auto mode_value = [&](BitonicLaunchMode m) { return b.getInt64(static_cast<int64_t>(m)); };
  modes->addCase(mode_value(BitonicLaunchMode::kSortTiles), sort_tiles);
  modes->addCase(mode_value(BitonicLaunchMode::kMergeAcrossTiles), across);
  modes->addCase(mode_value(BitonicLaunchMode::kMergeWithinTiles), within);
  modes->addCase(mode_value(BitonicLaunchMode::kFinish), finish);
  auto row_order = [&](llvm::Value* row) {
    return b.CreateInBoundsGEP(i32, scratch, b.CreateMul(row, b.getInt64(padded)));
  };

  // The tile modes: block g sorts or merges tile g % tiles_per_row of row
  // g / tiles_per_row in shared memory, thread t comparing one pair per step
  // with a barrier after each step.
  auto* tile_type = llvm::ArrayType::get(i32, static_cast<uint64_t>(tile));
  auto* shared = new llvm::GlobalVariable(
      module, tile_type, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
      llvm::UndefValue::get(tile_type), name + ".tile", nullptr, llvm::GlobalValue::NotThreadLocal,
      /*AddressSpace=*/3);
  shared->setAlignment(llvm::Align(4));
  auto barrier = [&] { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); };
  auto emit_tile_mode = [&](bool sort) -> Status {
    if (tiles_per_row == 0) return OkStatus();  // never launched
    llvm::Value* row = b.CreateUDiv(block_id, b.getInt64(tiles_per_row));
    llvm::Value* tile_start =
        b.CreateMul(b.CreateURem(block_id, b.getInt64(tiles_per_row)), b.getInt64(tile));
    llvm::Value* order = row_order(row);
    for (llvm::Value* h : {thread, b.CreateAdd(thread, b.getInt64(half_tile))}) {
      llvm::Value* position = b.CreateAdd(tile_start, h);
      llvm::Value* number =
          sort ? b.CreateTrunc(position, i32)
               : static_cast<llvm::Value*>(b.CreateLoad(i32, b.CreateInBoundsGEP(i32, order, position)));
      b.CreateStore(number, b.CreateInBoundsGEP(i32, shared, h));
    }
    barrier();
    // Thread t compares tile element i = 2t - t % stride with i + stride,
    // ascending where its position in the row has no `block` bit.
    auto step = [&](llvm::Value* block_size, llvm::Value* stride) -> Status {
      llvm::Value* i =
          b.CreateSub(b.CreateShl(thread, 1), b.CreateAnd(thread, b.CreateSub(stride, b.getInt64(1))));
      llvm::Value* ascending =
          b.CreateICmpEQ(b.CreateAnd(b.CreateAdd(tile_start, i), block_size), b.getInt64(0));
      KILN_RETURN_IF_ERROR(
          EmitBitonicCompareExchange(b, spec, row, b.CreateInBoundsGEP(i32, shared, i),
                                     b.CreateInBoundsGEP(i32, shared, b.CreateAdd(i, stride)), ascending));
      barrier();
      return OkStatus();
    };
    const int64_t log_tile = CeilLog2(tile);
    if (sort) {
      // block = 2^e for e = 1 .. log2(tile); stride = block / 2 .. 1.
      KILN_RETURN_IF_ERROR(EmitCountedLoop(
          b, b.getInt64(1), b.getInt64(log_tile + 1), "tile.merge", [&](llvm::Value* e) -> Status {
            llvm::Value* block_size = b.CreateShl(b.getInt64(1), e);
            return EmitCountedLoop(b, b.getInt64(0), e, "tile.step", [&](llvm::Value* s) -> Status {
              return step(block_size, b.CreateLShr(block_size, b.CreateAdd(s, b.getInt64(1))));
            });
          }));
    } else {
      // The given merge size; stride = tile / 2 .. 1.
      KILN_RETURN_IF_ERROR(
          EmitCountedLoop(b, b.getInt64(0), b.getInt64(log_tile), "tile.step", [&](llvm::Value* s) -> Status {
            return step(merge_block, b.CreateLShr(b.getInt64(half_tile), s));
          }));
    }
    for (llvm::Value* h : {thread, b.CreateAdd(thread, b.getInt64(half_tile))}) {
      b.CreateStore(b.CreateLoad(i32, b.CreateInBoundsGEP(i32, shared, h)),
                    b.CreateInBoundsGEP(i32, order, b.CreateAdd(tile_start, h)));
    }
    return OkStatus();
  };
  b.SetInsertPoint(sort_tiles);
  KILN_RETURN_IF_ERROR(emit_tile_mode(/*sort=*/true));
  b.CreateBr(done);
  b.SetInsertPoint(within);
  KILN_RETURN_IF_ERROR(emit_tile_mode(/*sort=*/false));
  b.CreateBr(done);

  // Across tiles: thread q compares element i = 2p - p % stride of row q /
  // (padded / 2) with i + stride (p = q % (padded / 2)) in global memory.
  b.SetInsertPoint(across);
  if (tiles_per_row > 0) {
    const int64_t half_row = padded / 2;
    llvm::BasicBlock* pair = block("across.pair");
    b.CreateCondBr(b.CreateICmpULT(global_thread, b.getInt64(spec.rows * half_row)), pair, done);
    b.SetInsertPoint(pair);
    llvm::Value* row = b.CreateUDiv(global_thread, b.getInt64(half_row));
    llvm::Value* p = b.CreateURem(global_thread, b.getInt64(half_row));
    llvm::Value* i = b.CreateSub(b.CreateShl(p, 1), b.CreateAnd(p, b.CreateSub(merge_stride, b.getInt64(1))));
    llvm::Value* ascending = b.CreateICmpEQ(b.CreateAnd(i, merge_block), b.getInt64(0));
    llvm::Value* order = row_order(row);
    KILN_RETURN_IF_ERROR(
        EmitBitonicCompareExchange(b, spec, row, b.CreateInBoundsGEP(i32, order, i),
                                   b.CreateInBoundsGEP(i32, order, b.CreateAdd(i, merge_stride)), ascending));
  }
  b.CreateBr(done);

  b.SetInsertPoint(finish);
  if (spec.finish_threads > 0) {
    llvm::BasicBlock* write = block("finish.write");
    b.CreateCondBr(b.CreateICmpULT(global_thread, b.getInt64(spec.finish_threads)), write, done);
    b.SetInsertPoint(write);
    KILN_RETURN_IF_ERROR(spec.finish(global_thread, scratch));
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();

  // A kernel for NVPTX, with the largest block it is launched with.
  llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, int64_t value) {
    annotations->addOperand(llvm::MDNode::get(
        context, {llvm::ValueAsMetadata::get(function), llvm::MDString::get(context, key),
                  llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, static_cast<uint64_t>(value)))}));
  };
  annotate("kernel", 1);
  annotate("maxntidx", std::max<int64_t>(half_tile, kSortGlobalThreads));
  return OkStatus();
}

// The kernel's launches: the tile passes a block per tile of tile / 2
// threads, the rest blocks of kSortGlobalThreads, as many as it takes.
std::vector<KernelLaunch> CudaBitonicLaunches(int64_t rows, int64_t length, int64_t finish_threads,
                                              int64_t tile) {
  BitonicLaunchPlan plan;
  plan.rows = rows;
  plan.length = length;
  plan.finish_iterations = finish_threads;
  plan.tile = tile;
  plan.group_size = kSortGlobalThreads;
  return BitonicSortLaunches(plan);
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
  if (first.element_count() > 0 && SortRowsOf(sort).length > (int64_t{1} << 30))
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
  if (sort.operand(0)->shape.element_count() == 0) return 0;
  const SortRowGeometry geometry = sort.opcode == Opcode::kTopK ? TopKRowsOf(sort) : SortRowsOf(sort);
  return geometry.rows() * SortedRowStride(geometry.rows(), geometry.length) *
         static_cast<int64_t>(sizeof(int32_t));
}

StatusOr<PtxKernel> EmitSortKernel(llvm::Module& module, const Instruction& sort, const std::string& name,
                                   int64_t tile) {
  KILN_RETURN_IF_ERROR(CheckSortEmittable(sort));
  llvm::LLVMContext& context = module.getContext();
  const SortRowGeometry geometry = SortRowsOf(sort);
  const int64_t rows = sort.operand(0)->shape.element_count() == 0 ? 0 : geometry.rows();
  const int64_t row_stride = SortedRowStride(rows, geometry.length);
  const size_t count = sort.operands.size();
  const int buffer_count = static_cast<int>(2 * count + 1);
  BitonicEntry entry = BeginBitonicEntry(module, name, buffer_count);
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  auto buffer = [&](size_t i) { return entry.function->getArg(static_cast<unsigned>(i)); };
  // Element k of row `row` is at (row / inner) * length * inner + row % inner + k * inner.
  auto element_offset = [&](llvm::Value* row, llvm::Value* k) {
    llvm::Value* outer = b.CreateUDiv(row, b.getInt64(geometry.inner));
    llvm::Value* inner = b.CreateURem(row, b.getInt64(geometry.inner));
    llvm::Value* base = b.CreateAdd(b.CreateMul(outer, b.getInt64(geometry.length * geometry.inner)), inner);
    return b.CreateAdd(base, b.CreateMul(k, b.getInt64(geometry.inner)));
  };
  const CudaTargetHooks target;
  ElementalEmitter emitter(b, target, entry.entry_block, {});

  BitonicKernelSpec spec;
  spec.rows = rows;
  spec.length = geometry.length;
  spec.tile = tile;
  spec.buffer_count = buffer_count;
  spec.scratch_buffer = static_cast<int>(2 * count);
  // comp(values at later, values at earlier): the comparator's parameters
  // 2j and 2j + 1 are operand j's values at its left and right element.
  spec.later_first = [&](llvm::Value* row, llvm::Value* later,
                         llvm::Value* earlier) -> StatusOr<llvm::Value*> {
    IrValues arguments;
    for (size_t j = 0; j < count; ++j) {
      const ElementType type = sort.operand(j)->shape.element_type();
      llvm::Type* storage = StorageType(context, type);
      for (llvm::Value* k : {later, earlier})
        arguments.push_back(
            LoadElement(b, type, b.CreateInBoundsGEP(storage, buffer(j), element_offset(row, k))));
    }
    emitter.PushScope();
    StatusOr<IrValues> result = emitter.EmitScalarCall(*sort.called[0], arguments);
    emitter.PopScope();
    KILN_RETURN_IF_ERROR(result.status());
    return (*result)[0];
  };
  // out_j[row, k] = op_j[row, order[row, k]] for q = row * length + k.
  spec.finish_threads = rows * geometry.length;
  spec.finish = [&](llvm::Value* q, llvm::Value* order) -> Status {
    llvm::Value* row = b.CreateUDiv(q, b.getInt64(geometry.length));
    llvm::Value* k = b.CreateURem(q, b.getInt64(geometry.length));
    llvm::Value* source =
        row_stride == 1
            ? k
            : b.CreateZExt(b.CreateLoad(i32, b.CreateInBoundsGEP(
                                                 i32, order,
                                                 b.CreateAdd(b.CreateMul(row, b.getInt64(row_stride)), k))),
                           i64);
    for (size_t j = 0; j < count; ++j) {
      const ElementType type = sort.operand(j)->shape.element_type();
      llvm::Type* storage = StorageType(context, type);
      llvm::Value* value =
          b.CreateLoad(storage, b.CreateInBoundsGEP(storage, buffer(j), element_offset(row, source)));
      b.CreateStore(value, b.CreateInBoundsGEP(storage, buffer(count + j), element_offset(row, k)));
    }
    return OkStatus();
  };
  KILN_RETURN_IF_ERROR(EmitBitonicModes(module, entry, name, spec));
  PtxKernel kernel;
  kernel.name = name;
  kernel.parallel_extent = spec.finish_threads;
  kernel.buffer_count = buffer_count;
  kernel.launches = CudaBitonicLaunches(rows, geometry.length, spec.finish_threads, tile);
  return kernel;
}

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

StatusOr<PtxKernel> EmitTopKKernel(llvm::Module& module, const Instruction& top_k, const std::string& name,
                                   int64_t tile) {
  KILN_RETURN_IF_ERROR(CheckTopKEmittable(top_k));
  llvm::LLVMContext& context = module.getContext();
  const ElementType type = top_k.operand(0)->shape.element_type();
  const SortRowGeometry geometry = TopKRowsOf(top_k);
  const int64_t length = geometry.length;
  const int64_t rows = geometry.rows();
  const int64_t row_stride = SortedRowStride(rows, length);
  const int64_t k = top_k.attrs.top_k;
  const bool largest = top_k.attrs.largest;
  constexpr int kBuffers = 4;  // operand, values, indices, scratch
  BitonicEntry entry = BeginBitonicEntry(module, name, kBuffers);
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* function = entry.function;
  llvm::Type* storage = StorageType(context, type);
  auto operand_at = [&](llvm::Value* row, llvm::Value* element) {
    return b.CreateInBoundsGEP(storage, function->getArg(0),
                               b.CreateAdd(b.CreateMul(row, b.getInt64(length)), element));
  };
  // A signed key whose order is the element order (floats: TOTALORDER).
  auto key = [&](llvm::Value* row, llvm::Value* element) -> llvm::Value* {
    llvm::Value* value = LoadElement(b, type, operand_at(row, element));
    if (IsFloating(type)) {
      llvm::Value* bits = b.CreateBitCast(b.CreateFPExt(value, b.getDoubleTy()), i64);
      return b.CreateSelect(b.CreateICmpSLT(bits, b.getInt64(0)), b.CreateXor(bits, b.getInt64(INT64_MAX)),
                            bits);
    }
    return IsSignedIntegral(type) ? b.CreateSExt(value, i64) : b.CreateZExt(value, i64);
  };
  const bool unsigned_keys = !IsFloating(type) && !IsSignedIntegral(type);

  BitonicKernelSpec spec;
  spec.rows = rows;
  spec.length = length;
  spec.tile = tile;
  spec.buffer_count = kBuffers;
  spec.scratch_buffer = 3;
  // The later element goes first only when its key is strictly larger
  // (smaller with largest=false): ties by index.
  spec.later_first = [&](llvm::Value* row, llvm::Value* later,
                         llvm::Value* earlier) -> StatusOr<llvm::Value*> {
    llvm::Value* later_key = key(row, later);
    llvm::Value* earlier_key = key(row, earlier);
    if (unsigned_keys)
      return largest ? b.CreateICmpUGT(later_key, earlier_key) : b.CreateICmpULT(later_key, earlier_key);
    return largest ? b.CreateICmpSGT(later_key, earlier_key) : b.CreateICmpSLT(later_key, earlier_key);
  };
  // values[row, i] = operand[row, order[row, i]]; indices[row, i] = order[row, i]
  // for q = row * k + i.
  spec.finish_threads = rows * k;
  spec.finish = [&](llvm::Value* q, llvm::Value* order) -> Status {
    llvm::Value* row = b.CreateUDiv(q, b.getInt64(k));
    llvm::Value* i = b.CreateURem(q, b.getInt64(k));
    llvm::Value* element =
        row_stride == 1
            ? b.CreateTrunc(i, i32)
            : static_cast<llvm::Value*>(b.CreateLoad(
                  i32,
                  b.CreateInBoundsGEP(i32, order, b.CreateAdd(b.CreateMul(row, b.getInt64(row_stride)), i))));
    llvm::Value* value = b.CreateLoad(storage, operand_at(row, b.CreateZExt(element, i64)));
    b.CreateStore(value, b.CreateInBoundsGEP(storage, function->getArg(1), q));
    b.CreateStore(element, b.CreateInBoundsGEP(i32, function->getArg(2), q));
    return OkStatus();
  };
  KILN_RETURN_IF_ERROR(EmitBitonicModes(module, entry, name, spec));
  PtxKernel kernel;
  kernel.name = name;
  kernel.parallel_extent = spec.finish_threads;
  kernel.buffer_count = kBuffers;
  kernel.launches = CudaBitonicLaunches(rows, length, spec.finish_threads, tile);
  return kernel;
}

}  // namespace kiln::cuda
