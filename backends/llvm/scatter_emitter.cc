#include "backends/llvm/scatter_emitter.h"

#include <algorithm>

#include "backends/llvm/element_ir.h"
#include "backends/llvm/loop_ir.h"
#include "backends/llvm/window_ir.h"

namespace kiln::llvm_ir {
namespace {

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t product = 1;
  for (int64_t dim : dims) product *= dim;
  return product;
}

// Runs `body` only when `condition` holds; the builder ends after the branch.
Status EmitWhen(llvm::IRBuilder<>& b, ElementalEmitter& emitter, llvm::Value* condition, const char* name,
                const std::function<Status()>& body) {
  llvm::Function* function = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then = llvm::BasicBlock::Create(b.getContext(), name, function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), std::string(name) + ".done", function);
  b.CreateCondBr(condition, then, done);
  b.SetInsertPoint(then);
  emitter.PushScope();  // values made here do not dominate `done`
  Status status = body();
  emitter.PopScope();
  b.CreateBr(done);
  b.SetInsertPoint(done);
  return status;
}

// Loops over every element of an array of `dims` in row-major order, with a
// fresh emitter scope per iteration.
Status EmitForEachIndex(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const std::vector<int64_t>& dims,
                        const char* name, const std::function<Status(const IrIndex&, llvm::Value*)>& body) {
  const int64_t count = Product(dims);
  if (count == 0) return OkStatus();
  return EmitCountedLoop(b, b.getInt64(0), b.getInt64(count), name, [&](llvm::Value* linear) -> Status {
    emitter.PushScope();
    Status status = body(emitter.Delinearize(linear, dims), linear);
    emitter.PopScope();
    return status;
  });
}

llvm::Value* ElementAddress(llvm::IRBuilder<>& b, ElementType type, llvm::Value* buffer,
                            llvm::Value* linear) {
  return b.CreateInBoundsGEP(StorageType(b.getContext(), type), buffer, linear);
}

Status EmitScatter(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& scatter,
                   const std::vector<llvm::Value*>& outputs) {
  const size_t count = outputs.size();
  std::vector<ElementType> types;
  for (size_t k = 0; k < count; ++k) types.push_back(scatter.operand(k)->shape.element_type());
  KILN_RETURN_IF_ERROR(EmitForEachIndex(b, emitter, scatter.operand(0)->shape.dimensions(), "scatter.copy",
                                        [&](const IrIndex& index, llvm::Value* linear) {
                                          return EmitScatterOperandCopy(b, emitter, scatter, outputs, index,
                                                                        linear);
                                        }));
  // The updates in row-major order, each combined by the nested computation.
  const ScatterCombine combine = [&](llvm::Value* target_linear, const IrValues& updates) -> Status {
    IrValues arguments;
    for (size_t k = 0; k < count; ++k) {
      arguments.push_back(LoadElement(b, types[k], ElementAddress(b, types[k], outputs[k], target_linear)));
    }
    arguments.insert(arguments.end(), updates.begin(), updates.end());
    KILN_ASSIGN_OR_RETURN(IrValues combined, emitter.EmitScalarCall(*scatter.called[0], arguments));
    if (combined.size() != count) return Internal("cpu codegen: scatter combiner returned the wrong arity");
    for (size_t k = 0; k < count; ++k) {
      StoreElement(b, types[k], combined[k], ElementAddress(b, types[k], outputs[k], target_linear));
    }
    return OkStatus();
  };
  return EmitForEachIndex(b, emitter, scatter.operand(count + 1)->shape.dimensions(), "scatter.update",
                          [&](const IrIndex& update_index, llvm::Value*) {
                            return EmitScatterUpdate(b, emitter, scatter, update_index, combine);
                          });
}

Status EmitSelectAndScatter(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& instruction,
                            llvm::Value* output) {
  const Instruction& operand = *instruction.operand(0);
  const Instruction& source = *instruction.operand(1);
  const ElementType type = operand.shape.element_type();
  const std::vector<int64_t>& dims = operand.shape.dimensions();
  const Window& window = instruction.attrs.window;
  std::vector<int64_t> window_dims;
  for (const WindowDimension& w : window.dimensions) window_dims.push_back(w.size);

  KILN_ASSIGN_OR_RETURN(IrValues init, emitter.Emit(*instruction.operand(2), {}));
  KILN_RETURN_IF_ERROR(
      EmitForEachIndex(b, emitter, dims, "sas.init", [&](const IrIndex&, llvm::Value* linear) {
        StoreElement(b, type, init[0], ElementAddress(b, type, output, linear));
        return OkStatus();
      }));

  // The selection so far in one window, in allocas that mem2reg promotes.
  llvm::IRBuilder<> entry(emitter.entry(), emitter.entry()->begin());
  llvm::Type* value_type = ComputeType(b.getContext(), type);
  llvm::AllocaInst* has_selection = entry.CreateAlloca(b.getInt1Ty(), nullptr, "has_selection");
  llvm::AllocaInst* selected_linear = entry.CreateAlloca(b.getInt64Ty(), nullptr, "selected_linear");
  llvm::AllocaInst* selected_value = entry.CreateAlloca(value_type, nullptr, "selected_value");

  return EmitForEachIndex(
      b, emitter, source.shape.dimensions(), "sas.source",
      [&](const IrIndex& source_index, llvm::Value*) -> Status {
        b.CreateStore(b.getFalse(), has_selection);
        b.CreateStore(b.getInt64(0), selected_linear);
        b.CreateStore(llvm::Constant::getNullValue(value_type), selected_value);
        // Window elements in row-major order; the first in-bounds one is
        // selected unless `select(selected, candidate)` is false for a later one.
        KILN_RETURN_IF_ERROR(EmitForEachIndex(
            b, emitter, window_dims, "sas.window", [&](const IrIndex& window_index, llvm::Value*) -> Status {
              llvm::Value* inside = b.getTrue();
              IrIndex in_index(dims.size());
              for (size_t d = 0; d < dims.size(); ++d) {
                in_index[d] = EmitWindowInputPosition(b, window.dimensions[d], dims[d], source_index[d],
                                                      window_index[d], &inside);
              }
              return EmitWhen(b, emitter, inside, "sas.inside", [&]() -> Status {
                KILN_ASSIGN_OR_RETURN(IrValues candidate, emitter.Emit(operand, in_index));
                llvm::Value* had = b.CreateLoad(b.getInt1Ty(), has_selection);
                // Without a selection yet, `select` sees the candidate twice and its
                // answer is ignored.
                llvm::Value* current =
                    b.CreateSelect(had, b.CreateLoad(value_type, selected_value), candidate[0]);
                KILN_ASSIGN_OR_RETURN(
                    IrValues keep, emitter.EmitScalarCall(*instruction.called[0], {current, candidate[0]}));
                llvm::Value* take = b.CreateOr(b.CreateNot(had), b.CreateNot(keep[0]));
                llvm::Value* candidate_linear = emitter.Linearize(in_index, dims);
                b.CreateStore(b.getTrue(), has_selection);
                b.CreateStore(
                    b.CreateSelect(take, candidate_linear, b.CreateLoad(b.getInt64Ty(), selected_linear)),
                    selected_linear);
                b.CreateStore(b.CreateSelect(take, candidate[0], current), selected_value);
                return OkStatus();
              });
            }));
        return EmitWhen(
            b, emitter, b.CreateLoad(b.getInt1Ty(), has_selection), "sas.scatter", [&]() -> Status {
              llvm::Value* address =
                  ElementAddress(b, type, output, b.CreateLoad(b.getInt64Ty(), selected_linear));
              KILN_ASSIGN_OR_RETURN(IrValues value, emitter.Emit(source, source_index));
              KILN_ASSIGN_OR_RETURN(
                  IrValues combined,
                  emitter.EmitScalarCall(*instruction.called[1], {LoadElement(b, type, address), value[0]}));
              StoreElement(b, type, combined[0], address);
              return OkStatus();
            });
      });
}

}  // namespace

Status EmitScatterOperandCopy(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& scatter,
                              const std::vector<llvm::Value*>& outputs, const IrIndex& index,
                              llvm::Value* linear) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ElementType type = scatter.operand(k)->shape.element_type();
    KILN_ASSIGN_OR_RETURN(IrValues value, emitter.Emit(*scatter.operand(k), index));
    StoreElement(b, type, value[0], ElementAddress(b, type, outputs[k], linear));
  }
  return OkStatus();
}

Status EmitScatterUpdate(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& scatter,
                         const IrIndex& update_index, const ScatterCombine& combine) {
  const size_t count = scatter.operands.size() / 2;
  const Instruction& indices = *scatter.operand(count);
  const ScatterDimensionNumbers& numbers = scatter.attrs.scatter;
  const std::vector<int64_t>& operand_dims = scatter.operand(0)->shape.dimensions();
  const std::vector<int64_t>& update_dims = scatter.operand(count + 1)->shape.dimensions();
  // Operand dimensions the update window spans, and the window's extent.
  std::vector<int64_t> window_operand_dims;
  std::vector<int64_t> window_size(operand_dims.size(), 1);
  for (int64_t d = 0; d < static_cast<int64_t>(operand_dims.size()); ++d) {
    if (!Contains(numbers.inserted_window_dims, d) && !Contains(numbers.input_batching_dims, d)) {
      window_size[static_cast<size_t>(d)] =
          update_dims[static_cast<size_t>(numbers.update_window_dims[window_operand_dims.size()])];
      window_operand_dims.push_back(d);
    }
  }
  IrIndex batch_index;
  for (size_t d = 0; d < update_index.size(); ++d) {
    if (!Contains(numbers.update_window_dims, static_cast<int64_t>(d)))
      batch_index.push_back(update_index[d]);
  }
  IrIndex start(operand_dims.size(), b.getInt64(0));
  for (size_t k = 0; k < numbers.scatter_dims_to_operand_dims.size(); ++k) {
    IrIndex at;
    for (int64_t d = 0, i = 0; d < indices.shape.rank(); ++d) {
      at.push_back(d == numbers.index_vector_dim ? b.getInt64(static_cast<int64_t>(k))
                                                 : batch_index[static_cast<size_t>(i++)]);
    }
    KILN_ASSIGN_OR_RETURN(IrValues component, emitter.Emit(indices, at));
    start[static_cast<size_t>(numbers.scatter_dims_to_operand_dims[k])] =
        emitter.IndexToS64(component[0], indices.shape.element_type());
  }
  for (size_t i = 0; i < numbers.input_batching_dims.size(); ++i) {
    int64_t position = numbers.scatter_indices_batching_dims[i];
    if (position > numbers.index_vector_dim) --position;
    start[static_cast<size_t>(numbers.input_batching_dims[i])] = batch_index[static_cast<size_t>(position)];
  }
  // The whole window must fit, else this update is skipped.
  llvm::Value* fits = b.getTrue();
  IrIndex target(operand_dims.size());
  for (size_t d = 0; d < operand_dims.size(); ++d) {
    const int64_t limit = operand_dims[d] - window_size[d];
    fits = b.CreateAnd(fits, b.CreateAnd(b.CreateICmpSGE(start[d], b.getInt64(0)),
                                         b.CreateICmpSLE(start[d], b.getInt64(limit))));
    target[d] = start[d];
  }
  for (size_t w = 0; w < window_operand_dims.size(); ++w) {
    const auto d = static_cast<size_t>(window_operand_dims[w]);
    target[d] = b.CreateAdd(target[d], update_index[static_cast<size_t>(numbers.update_window_dims[w])]);
  }
  return EmitWhen(b, emitter, fits, "scatter.fits", [&]() -> Status {
    IrValues updates;
    for (size_t k = 0; k < count; ++k) {
      KILN_ASSIGN_OR_RETURN(IrValues update, emitter.Emit(*scatter.operand(count + 1 + k), update_index));
      updates.push_back(update[0]);
    }
    return combine(emitter.Linearize(target, operand_dims), updates);
  });
}

bool IsScatterLike(const Instruction& instruction) {
  return instruction.opcode == Opcode::kScatter || instruction.opcode == Opcode::kSelectAndScatter;
}

Status EmitScatterLike(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& root,
                       const std::vector<llvm::Value*>& outputs) {
  if (root.opcode == Opcode::kScatter) return EmitScatter(b, emitter, root, outputs);
  if (root.opcode == Opcode::kSelectAndScatter && outputs.size() == 1) {
    return EmitSelectAndScatter(b, emitter, root, outputs[0]);
  }
  return Internal("cpu codegen: ", root.name, " is not a scatter");
}

}  // namespace kiln::llvm_ir
