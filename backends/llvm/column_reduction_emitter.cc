#include "backends/llvm/column_reduction_emitter.h"

#include <algorithm>
#include <functional>

#include "backends/llvm/element_ir.h"
#include "backends/llvm/loop_ir.h"

namespace kiln::llvm_ir {

bool IsColumnReduction(const Instruction& instruction) {
  if (instruction.opcode != Opcode::kReduce || instruction.operands.size() != 2 ||
      !instruction.shape.IsArray())
    return false;
  const Shape& input = instruction.operand(0)->shape;
  if (!input.IsArray() || input.rank() < 2 || instruction.attrs.dimensions.empty()) return false;
  for (int64_t d : instruction.attrs.dimensions) {
    if (d == input.rank() - 1) return false;
  }
  return true;
}

int64_t ColumnReductionTailDims(const Instruction& reduce) {
  const std::vector<int64_t>& out_dims = reduce.shape.dimensions();
  const int64_t in_rank = reduce.operand(0)->shape.rank();
  int64_t last_reduced = 0;
  for (int64_t d : reduce.attrs.dimensions) last_reduced = std::max(last_reduced, d);
  const int64_t tail = in_rank - 1 - last_reduced;
  if (tail < 2 || out_dims.empty() || out_dims.back() < 1 || 2 * out_dims.back() > kMaxColumnBlock) return 1;
  return tail;
}

Status EmitColumnReduction(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& reduce,
                           const IrIndex& row_index, llvm::Value* begin, llvm::Value* end,
                           llvm::Value* output, const std::vector<int64_t>& output_dims, int64_t tail_dims) {
  llvm::LLVMContext& context = b.getContext();
  const ElementType type = reduce.shape.element_type();
  llvm::Type* compute = ComputeType(context, type);
  llvm::AllocaInst* block =
      llvm::IRBuilder<>(emitter.entry(), emitter.entry()->begin())
          .CreateAlloca(llvm::ArrayType::get(compute, kMaxColumnBlock), nullptr, "columns");
  auto slot = [&](llvm::Value* j) { return b.CreateInBoundsGEP(compute, block, b.CreateSub(j, begin)); };

  KILN_ASSIGN_OR_RETURN(IrValues initial, emitter.Emit(*reduce.operand(1), {}));
  KILN_RETURN_IF_ERROR(EmitCountedLoop(b, begin, end, "column.init", [&](llvm::Value* j) -> Status {
    b.CreateStore(initial[0], slot(j));
    return OkStatus();
  }));

  const std::vector<int64_t>& in_dims = reduce.operand(0)->shape.dimensions();
  std::vector<bool> reduced(in_dims.size(), false);
  for (int64_t d : reduce.attrs.dimensions) reduced[static_cast<size_t>(d)] = true;
  IrIndex input_index(in_dims.size());
  const auto tail = static_cast<size_t>(tail_dims);
  for (size_t d = 0, k = 0; d + tail < in_dims.size(); ++d) {
    if (!reduced[d]) input_index[d] = row_index[k++];
  }
  // Outputs [begin, end) of the tail, in order: `body` gets each one's
  // place j in it, with the tail's input dimensions of input_index set.
  // A tail of several dimensions goes row by row of the innermost one, so
  // that loop has a constant trip count and no division per element.
  const std::vector<int64_t>& out_dims = reduce.shape.dimensions();
  const std::vector<int64_t> tail_rows_dims(out_dims.end() - tail_dims, out_dims.end() - 1);
  auto for_each_column = [&](const char* name, const std::function<Status(llvm::Value*)>& body) -> Status {
    if (tail == 1) {
      return EmitCountedLoop(b, begin, end, name, [&](llvm::Value* j) -> Status {
        input_index.back() = j;
        return body(j);
      });
    }
    llvm::Value* line = b.getInt64(out_dims.back());
    return EmitCountedLoop(
        b, b.CreateUDiv(begin, line), b.CreateUDiv(end, line), "column.lines", [&](llvm::Value* r) -> Status {
          const IrIndex upper = emitter.Delinearize(r, tail_rows_dims);
          for (size_t i = 0; i + 1 < tail; ++i) input_index[in_dims.size() - tail + i] = upper[i];
          llvm::Value* first = b.CreateMul(r, line);
          return EmitCountedLoop(b, b.getInt64(0), line, name, [&](llvm::Value* jj) -> Status {
            input_index.back() = jj;
            return body(b.CreateAdd(first, jj));
          });
        });
  };
  std::vector<size_t> reduced_dims;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    if (reduced[d]) reduced_dims.push_back(d);
  }
  // accumulator combined with the input at input_index.
  auto combine = [&](llvm::Value* accumulator) -> StatusOr<llvm::Value*> {
    emitter.PushScope();
    StatusOr<IrValues> value = emitter.Emit(*reduce.operand(0), input_index);
    StatusOr<IrValues> combined = value.status();
    if (value.ok()) combined = emitter.EmitScalarCall(*reduce.called[0], {accumulator, (*value)[0]});
    emitter.PopScope();
    KILN_RETURN_IF_ERROR(combined.status());
    if (combined->size() != 1) return Internal("cpu codegen: reducer of ", reduce.name, " returns a tuple");
    return (*combined)[0];
  };
  // Reduced dimensions in order, outermost first, then the block of columns.
  // The innermost reduced dimension goes kRowsAtOnce positions at a time:
  // each column's accumulator is loaded once and combined with those rows in
  // order (the same order as one at a time), and the rows are read as
  // several streams at once, which the prefetchers follow where each row's
  // stretch lies far from the next (a sum over the rows of f32[4096,4096],
  // 4 KiB stretches 16 KiB apart: 3.6 ms grouped by four, 6.3-8.7 ms one at
  // a time, one thread of an AMD EPYC; on two threads eight streams a thread
  // read it 20% faster than four, sixteen no faster than eight). Where the block is the whole row and the
  // innermost reduced dimension is the one before it, consecutive rows are
  // one contiguous stream, which grouping only breaks up: a sum over axis 1
  // of f32[256,256,256] took 4.1-6.0 ms one row at a time and 11-17 ms
  // grouped on the same host, so there the rows go one at a time.
  constexpr int64_t kRowsAtOnce = 8;
  const auto* block_begin = llvm::dyn_cast<llvm::ConstantInt>(begin);
  const auto* block_end = llvm::dyn_cast<llvm::ConstantInt>(end);
  const bool one_stream = !reduced_dims.empty() && reduced_dims.back() + 2 == in_dims.size() &&
                          block_begin != nullptr && block_begin->isZero() && block_end != nullptr &&
                          block_end->getSExtValue() == in_dims.back();
  std::function<Status(size_t)> loop = [&](size_t level) -> Status {
    if (level == reduced_dims.size()) {
      return for_each_column("column", [&](llvm::Value* j) -> Status {
        KILN_ASSIGN_OR_RETURN(llvm::Value * combined, combine(b.CreateLoad(compute, slot(j))));
        b.CreateStore(combined, slot(j));
        return OkStatus();
      });
    }
    const size_t d = reduced_dims[level];
    int64_t grouped = 0;
    if (level + 1 == reduced_dims.size() && !one_stream && in_dims[d] >= 2 * kRowsAtOnce) {
      grouped = in_dims[d] / kRowsAtOnce * kRowsAtOnce;
      KILN_RETURN_IF_ERROR(EmitCountedLoop(
          b, b.getInt64(0), b.getInt64(grouped / kRowsAtOnce), "column.rows", [&](llvm::Value* g) -> Status {
            llvm::Value* first = b.CreateMul(g, b.getInt64(kRowsAtOnce));
            return for_each_column("column.group", [&](llvm::Value* j) -> Status {
              llvm::Value* accumulator = b.CreateLoad(compute, slot(j));
              for (int64_t r = 0; r < kRowsAtOnce; ++r) {
                input_index[d] = b.CreateAdd(first, b.getInt64(r));
                KILN_ASSIGN_OR_RETURN(accumulator, combine(accumulator));
              }
              b.CreateStore(accumulator, slot(j));
              return OkStatus();
            });
          }));
      if (grouped == in_dims[d]) return OkStatus();
    }
    return EmitCountedLoop(b, b.getInt64(grouped), b.getInt64(in_dims[d]), "column.reduce",
                           [&](llvm::Value* i) {
                             input_index[d] = i;
                             return loop(level + 1);
                           });
  };
  KILN_RETURN_IF_ERROR(loop(0));

  return EmitCountedLoop(b, begin, end, "column.store", [&](llvm::Value* j) -> Status {
    IrIndex output_index = row_index;
    output_index.push_back(j);
    llvm::Value* address =
        b.CreateInBoundsGEP(StorageType(context, type), output, emitter.Linearize(output_index, output_dims));
    StoreElement(b, type, b.CreateLoad(compute, slot(j)), address);
    return OkStatus();
  });
}

}  // namespace kiln::llvm_ir
