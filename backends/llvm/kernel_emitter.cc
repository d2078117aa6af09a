#include "backends/llvm/kernel_emitter.h"

#include <algorithm>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/column_reduction_emitter.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/loop_ir.h"
#include "backends/llvm/row_reduction_plan.h"
#include "backends/llvm/scatter_emitter.h"
#include "core/passes/fusion.h"

namespace kiln::llvm_ir {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= dims[i];
  return product;
}

// Pieces a large CPU column reduction keeps at least (see IterationBlock).
constexpr int64_t kMinColumnPieces = 4;

// Elements of the innermost output dimension (of `inner`, in each of `rows`
// rows) one parallel iteration covers: enough work to amortise an iteration,
// whole rows when row reductions are computed once per row, and no more than
// a column reduction accumulates on the stack. On a CPU a column reduction
// takes the widest block, so each input row is read a page-sized stretch at a
// time, which the prefetchers follow (blocks of 16 columns, one cache line
// per row, made f32[4096,4096] summed over its rows 2-3x slower); the block
// halves only while a large reduction would have fewer than kMinColumnPieces
// pieces to share among threads.
int64_t IterationBlock(int64_t rows, int64_t inner, int64_t work_per_element, bool per_row_reductions,
                       bool column_reduction, int64_t work_per_iteration, bool cpu) {
  const int64_t row = std::max<int64_t>(inner, 1);
  if (per_row_reductions && !column_reduction) return row;
  const int64_t wanted = std::max<int64_t>(1, work_per_iteration) / work_per_element;
  if (column_reduction) {
    const int64_t most = std::min<int64_t>(row, kMaxColumnBlock);
    const int64_t least = std::min<int64_t>(16, most);
    if (!cpu) return std::clamp<int64_t>(wanted, least, most);
    const int64_t work = std::max<int64_t>(rows, 1) * row * work_per_element;
    int64_t block = most;
    while (block / 2 >= least &&
           std::max<int64_t>(rows, 1) * ((row + block - 1) / block) < kMinColumnPieces &&
           work >= kMinColumnPieces * work_per_iteration) {
      block /= 2;
    }
    return block;
  }
  return std::clamp<int64_t>(wanted, 1, row);
}

}  // namespace

StatusOr<KernelLayout> EmitKernel(llvm::Module& module, const Computation& computation,
                                  const std::string& name, const TargetHooks& target,
                                  int64_t work_per_iteration, const CooperativeRows* cooperative) {
  llvm::LLVMContext& context = module.getContext();
  const std::vector<Shape> leaves = computation.root()->shape.Leaves();
  if (leaves.empty()) return InvalidArgument("cpu codegen: ", computation.name(), " has no array output");
  const bool column_reduction = IsColumnReduction(*computation.root());
  // A CPU column reduction iterates its trailing output dimensions as one
  // (ColumnReductionTailDims): `dims` then has them as one dimension.
  const int64_t column_tail =
      column_reduction && cooperative == nullptr ? ColumnReductionTailDims(*computation.root()) : 1;
  const std::vector<int64_t> dims = [&] {
    std::vector<int64_t> shape = leaves[0].dimensions();
    if (column_tail == 1) return shape;
    const size_t kept = shape.size() - static_cast<size_t>(column_tail);
    const int64_t tail = Product(shape, kept, shape.size());
    shape.resize(kept);
    shape.push_back(tail);
    return shape;
  }();
  const size_t rank = dims.size();
  const size_t parameter_count = computation.parameters().size();

  // Parallel split: rows of the outer dimensions times blocks of the inner one.
  const int64_t output_count = Product(dims, 0, rank);
  const int64_t inner = rank == 0 ? 1 : dims[rank - 1];
  const int64_t rows = rank <= 1 ? 1 : Product(dims, 0, rank - 1);
  int64_t input_count = 1, input_bytes = 0, output_bytes = 0;
  for (const Instruction* parameter : computation.parameters()) {
    input_count = std::max(input_count, parameter->shape.element_count());
    input_bytes += ByteWidth(parameter->shape.element_type());
  }
  for (const Shape& leaf : leaves) output_bytes += ByteWidth(leaf.element_type());
  const int64_t work_per_element = std::max<int64_t>(1, output_count == 0 ? 1 : input_count / output_count);
  // Row reductions read by the outputs are computed once per row before the
  // loop over the row (fusion.h), so an iteration must cover whole rows.
  const std::vector<int64_t> row_dims(dims.begin(), dims.begin() + (rank == 0 ? 0 : rank - 1));
  const bool per_row_reductions = rank >= 2 && HasRowReductionOf(computation, row_dims);
  const bool serial = IsScatterLike(*computation.root());
  // Lanes (a GPU's warp) share a row: its reductions, then its outputs
  // (lanes_rows); or the lanes share one output that is a row reduction
  // (lanes_root).
  const bool lanes_rows = cooperative != nullptr && per_row_reductions && !column_reduction && !serial;
  const bool lanes_root = cooperative != nullptr && !lanes_rows && !serial && leaves.size() == 1 &&
                          IsRowReduction(*computation.root());
  const int64_t lanes = lanes_rows || lanes_root ? cooperative->lanes : 1;
  // Row buffers hold a whole row on one thread's stack: not with lanes.
  const std::vector<const Instruction*> shared_row_values =
      per_row_reductions && !lanes_rows ? SharedRowValues(computation, row_dims, inner)
                                        : std::vector<const Instruction*>{};
  int64_t block =
      IterationBlock(rows, inner, work_per_element, per_row_reductions, column_reduction, work_per_iteration,
                     /*cpu=*/cooperative == nullptr);
  // Whole rows of the innermost output dimension (EmitColumnReduction).
  if (column_tail > 1) {
    const int64_t line = leaves[0].dimensions().back();
    block = std::max(line, block / line * line);
  }
  const int64_t blocks_per_row = inner == 0 ? 1 : (inner + block - 1) / block;
  // Rows split into blocks of which the last is shorter (outputs only).
  const bool ragged_blocks = blocks_per_row > 1 && inner % block != 0 && !column_reduction;
  KernelLayout layout;
  layout.parallel_extent = output_count == 0 || serial ? 1 : rows * blocks_per_row;
  if (lanes_root && output_count > 0) layout.parallel_extent = output_count * lanes;
  if (lanes_rows && output_count > 0) layout.parallel_extent *= lanes;
  layout.bytes_per_iteration = block * (work_per_element * input_bytes + output_bytes);

  // The exported entry point unpacks `buffers` and calls an always-inlined
  // body whose buffer pointers are noalias, so loops need no alias checks.
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Type* void_type = llvm::Type::getVoidTy(context);
  const size_t buffer_count = parameter_count + leaves.size();
  std::vector<llvm::Type*> body_params(buffer_count, ptr);
  body_params.push_back(i64);
  body_params.push_back(i64);
  llvm::Function* body = llvm::Function::Create(llvm::FunctionType::get(void_type, body_params, false),
                                                llvm::GlobalValue::InternalLinkage, name + ".body", module);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < buffer_count; ++i)
    body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);

  llvm::Function* kernel = llvm::Function::Create(llvm::FunctionType::get(void_type, {ptr, i64, i64}, false),
                                                  llvm::GlobalValue::ExternalLinkage, name, module);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  // A CPU target's own width choice (jit.cc) leaves this one in place.
  if (cooperative == nullptr && IsStreamingRowReduction(computation))
    kernel->addFnAttr("prefer-vector-width", kStreamingRowReductionVectorBits);
  {
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", kernel));
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < buffer_count; ++i) {
      llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, kernel->getArg(0), i);
      args.push_back(b.CreateLoad(ptr, slot));
    }
    args.push_back(kernel->getArg(1));
    args.push_back(kernel->getArg(2));
    b.CreateCall(body, args);
    b.CreateRetVoid();
  }

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", body);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(context, "start", body);
  llvm::IRBuilder<> b(start);
  std::vector<llvm::Value*> parameter_buffers;
  for (size_t i = 0; i < parameter_count; ++i)
    parameter_buffers.push_back(body->getArg(static_cast<unsigned>(i)));
  ElementalEmitter emitter(b, target, entry, parameter_buffers);
  llvm::Value* begin = body->getArg(static_cast<unsigned>(buffer_count));
  llvm::Value* end = body->getArg(static_cast<unsigned>(buffer_count + 1));

  auto store_outputs = [&](const IrIndex& index) -> Status {
    emitter.PushScope();
    StatusOr<IrValues> values = emitter.Emit(*computation.root(), index);
    if (values.ok() && values->size() != leaves.size()) {
      values = Internal("cpu codegen: ", computation.name(), " produced ", values->size(), " values for ",
                        leaves.size(), " outputs");
    }
    if (values.ok()) {
      llvm::Value* linear = emitter.Linearize(index, dims);
      for (size_t k = 0; k < leaves.size(); ++k) {
        const ElementType type = leaves[k].element_type();
        llvm::Value* address = b.CreateInBoundsGEP(
            StorageType(context, type), body->getArg(static_cast<unsigned>(parameter_count + k)), linear);
        StoreElement(b, type, (*values)[k], address);
      }
    }
    emitter.PopScope();
    return values.status();
  };

  Status status = OkStatus();
  if (serial) {
    // One iteration does everything, in update order.
    std::vector<llvm::Value*> outputs;
    for (size_t k = 0; k < leaves.size(); ++k)
      outputs.push_back(body->getArg(static_cast<unsigned>(parameter_count + k)));
    status = EmitCountedLoop(b, begin, end, "serial", [&](llvm::Value*) -> Status {
      return EmitScatterLike(b, emitter, *computation.root(), outputs);
    });
  } else if (lanes_root && output_count > 0) {
    // Iteration p: lane p % lanes of output element p / lanes; lane 0 stores.
    status = EmitCountedLoop(b, begin, end, "parallel", [&](llvm::Value* p) -> Status {
      CooperativeRows rows_of_lanes = *cooperative;
      rows_of_lanes.lane = b.CreateURem(p, b.getInt64(lanes));
      emitter.SetCooperativeRows(rows_of_lanes);
      llvm::Value* element = b.CreateUDiv(p, b.getInt64(lanes));
      const IrIndex index = rank == 0 ? IrIndex{} : emitter.Delinearize(element, dims);
      emitter.PushScope();
      emitter.SetCooperating(true);
      StatusOr<IrValues> values = emitter.Emit(*computation.root(), index);
      emitter.SetCooperating(false);
      if (values.ok()) {
        llvm::Function* function = b.GetInsertBlock()->getParent();
        llvm::BasicBlock* store = llvm::BasicBlock::Create(context, "lane0.store", function);
        llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "lane0.done", function);
        b.CreateCondBr(b.CreateICmpEQ(rows_of_lanes.lane, b.getInt64(0)), store, done);
        b.SetInsertPoint(store);
        llvm::Value* address =
            b.CreateInBoundsGEP(StorageType(context, leaves[0].element_type()),
                                body->getArg(static_cast<unsigned>(parameter_count)), element);
        StoreElement(b, leaves[0].element_type(), (*values)[0], address);
        b.CreateBr(done);
        b.SetInsertPoint(done);
      }
      emitter.PopScope();
      return values.status();
    });
  } else if (output_count > 0) {
    status = EmitCountedLoop(b, begin, end, "parallel", [&](llvm::Value* p) -> Status {
      llvm::Value* lane = nullptr;
      if (lanes_rows) {
        // Iteration p: lane p % lanes of row p / lanes.
        CooperativeRows rows_of_lanes = *cooperative;
        lane = rows_of_lanes.lane = b.CreateURem(p, b.getInt64(lanes));
        emitter.SetCooperativeRows(rows_of_lanes);
        p = b.CreateUDiv(p, b.getInt64(lanes));
      }
      llvm::Value* row = p;
      llvm::Value* block_index = b.getInt64(0);
      if (blocks_per_row > 1) {
        row = b.CreateUDiv(p, b.getInt64(blocks_per_row));
        block_index = b.CreateURem(p, b.getInt64(blocks_per_row));
      }
      if (rank == 0) return store_outputs({});
      IrIndex index(rank);
      for (size_t d = rank - 1; d-- > 0;) {
        index[d] = d == 0 ? row : b.CreateURem(row, b.getInt64(dims[d]));
        if (d > 0) row = b.CreateUDiv(row, b.getInt64(dims[d]));
      }
      llvm::Value* inner_begin = b.CreateMul(block_index, b.getInt64(block));
      llvm::Value* inner_end =
          blocks_per_row > 1
              ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(inner_begin, b.getInt64(block)),
                                        b.getInt64(inner))
              : b.getInt64(inner);
      const IrIndex row_index(index.begin(), index.end() - 1);
      // This iteration's stretch [inner_begin, inner_end) of one row.
      auto emit_stretch = [&]() -> Status {
        if (column_reduction) {
          return EmitColumnReduction(b, emitter, *computation.root(), row_index, inner_begin, inner_end,
                                     body->getArg(static_cast<unsigned>(parameter_count)), dims, column_tail);
        }
        if (per_row_reductions) {
          for (const Instruction* shared : shared_row_values) emitter.AddRowBuffer(*shared, row_index, inner);
          emitter.SetCooperating(lanes_rows);
          const Status reductions = emitter.EmitRowReductions(*computation.root(), row_index, row_dims);
          emitter.SetCooperating(false);
          KILN_RETURN_IF_ERROR(reductions);
          emitter.FinishRowBuffers();
        }
        if (lanes_rows) {
          // This lane's outputs of the row: lane, lane + lanes, ...
          llvm::Value* trips =
              b.CreateUDiv(b.CreateSub(b.getInt64(inner + lanes - 1), lane), b.getInt64(lanes));
          return EmitCountedLoop(b, b.getInt64(0), trips, "inner.lane", [&](llvm::Value* j) -> Status {
            index[rank - 1] = b.CreateAdd(b.CreateMul(j, b.getInt64(lanes)), lane);
            return store_outputs(index);
          });
        }
        // Loops over [from, to) + offset: a loop from 0 to a constant has a
        // trip count LLVM's vectoriser sees even where `offset` defeats its
        // reasoning (a multiple of a remainder).
        auto output_loop = [&](llvm::Value* offset, llvm::Value* from, llvm::Value* to, const char* loop_name,
                               LoopKind kind) {
          return EmitCountedLoop(
              b, from, to, loop_name,
              [&](llvm::Value* j) -> Status {
                index[rank - 1] =
                    offset == nullptr ? j : b.CreateAdd(offset, j, "", /*HasNUW=*/true, /*HasNSW=*/true);
                return store_outputs(index);
              },
              kind);
        };
        if (!ragged_blocks) return output_loop(nullptr, inner_begin, inner_end, "inner", LoopKind::kPlain);
        // Every block of a row but its last is full: that loop runs the
        // constant `block` times, so it vectorises without remainder loops;
        // the last block's loop is masked (LoopKind::kPlainTail).
        llvm::Function* function = b.GetInsertBlock()->getParent();
        llvm::BasicBlock* full_block = llvm::BasicBlock::Create(context, "block.full", function);
        llvm::BasicBlock* tail_block = llvm::BasicBlock::Create(context, "block.tail", function);
        llvm::BasicBlock* done_block = llvm::BasicBlock::Create(context, "block.done", function);
        b.CreateCondBr(b.CreateICmpEQ(b.CreateSub(inner_end, inner_begin), b.getInt64(block)), full_block,
                       tail_block);
        b.SetInsertPoint(full_block);
        KILN_RETURN_IF_ERROR(
            output_loop(inner_begin, b.getInt64(0), b.getInt64(block), "inner", LoopKind::kPlain));
        b.CreateBr(done_block);
        b.SetInsertPoint(tail_block);
        KILN_RETURN_IF_ERROR(output_loop(nullptr, inner_begin, inner_end, "tail", LoopKind::kPlainTail));
        b.CreateBr(done_block);
        b.SetInsertPoint(done_block);
        return OkStatus();
      };
      emitter.PushScope();
      const Status stretch_status = emit_stretch();
      emitter.PopScope();
      emitter.ClearRowBuffers();
      return stretch_status;
    });
  }
  b.CreateRetVoid();
  // Allocas first, then the code.
  llvm::IRBuilder<>(entry).CreateBr(start);
  KILN_RETURN_IF_ERROR(status);
  return layout;
}

}  // namespace kiln::llvm_ir
