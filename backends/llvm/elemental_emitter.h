// The elemental emitter: generates the value of any instruction at an output
// index from its operands' values at mapped indices, so a whole computation
// becomes straight-line code inside ONE loop nest over its output. Reduce and
// reduce-window emit their own inner loops; map and reducers are inlined as
// scalar code.
#pragma once

#include <functional>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "backends/llvm/target_hooks.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::llvm_ir {

using IrIndex = std::vector<llvm::Value*>;   // one i64 per dimension
using IrValues = std::vector<llvm::Value*>;  // one per array leaf

// A GPU's way to reduce a row with several threads: `lanes` threads (a
// warp) each take the row's elements lane, lane + lanes, ...; then
// `shuffle_xor(b, value, offset)` returns the value of the thread whose
// lane differs by `offset` (a butterfly step), combining the partial
// results until every lane holds the row's total. The threads of a group
// must all reach the combination together.
struct CooperativeRows {
  llvm::Value* lane = nullptr;  // i64 in [0, lanes)
  int64_t lanes = 1;            // a power of two
  std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Value*, int64_t)> shuffle_xor;
};

class ElementalEmitter {
 public:
  // `parameter_buffers[i]` points at parameter i of the emitted computation
  // (storage type, dense row-major). Allocas go to the start of `entry`.
  // What differs per target comes from `target`, which must outlive this.
  ElementalEmitter(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::BasicBlock* entry,
                   std::vector<llvm::Value*> parameter_buffers);

  // Values of `instruction` at `index`: one per array leaf, in compute type.
  StatusOr<IrValues> Emit(const Instruction& instruction, const IrIndex& index);

  // Emits, at `row_index`, every row reduction (core/passes/fusion.h) that
  // `consumer` reads through its operands and whose result has dimensions
  // `row_dims`, producers first, into the current scope. Loops over a row's
  // elements then reuse each row's value from the cache instead of
  // recomputing the reduction for every element.
  Status EmitRowReductions(const Instruction& consumer, const IrIndex& row_index,
                           const std::vector<int64_t>& row_dims);

  // Row buffers keep a row of `instruction` (a floating-point value over the
  // row being emitted, read both by the row's reductions and by the loop
  // over its elements, like softmax's exp(x - max)) on the stack, so it is
  // computed once per element: while the row's reductions are emitted, each
  // value computed at `row_index` is also stored; after FinishRowBuffers,
  // reads at `row_index` load it. `length` is the row length.
  void AddRowBuffer(const Instruction& instruction, const IrIndex& row_index, int64_t length);
  void FinishRowBuffers();
  void ClearRowBuffers() { row_buffers_.clear(); }

  // With `rows` set, row reductions emitted while cooperative emission is
  // on (SetCooperating) are split across the group's lanes (see
  // CooperativeRows); everything else is emitted per thread. The kernel
  // emitter turns it on only where all lanes of a group run together.
  void SetCooperativeRows(CooperativeRows rows) { cooperative_ = std::move(rows); }
  void SetCooperating(bool on) { cooperating_ = on && cooperative_.lane != nullptr; }
  bool cooperating() const { return cooperating_; }

  // Values generated inside a scope are forgotten when it is popped, so code
  // in a loop body or a branch is never reused where it does not dominate.
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }

  // Row-major linear index of `index` in an array of `dims`.
  llvm::Value* Linearize(const IrIndex& index, const std::vector<int64_t>& dims);
  // The index in an array of `dims` of row-major position `linear`.
  IrIndex Delinearize(llvm::Value* linear, const std::vector<int64_t>& dims);

  // Inlines a scalar computation in order (no reassociation: scatter
  // combiners may not be associative or commutative).
  StatusOr<IrValues> EmitScalarCall(const Computation& computation, const IrValues& arguments) {
    return EmitCall(computation, arguments, /*reassociate=*/false);
  }
  // An index value of integer `type` as i64; u64 values past INT64_MAX become
  // INT64_MAX so that later clamping still treats them as too large.
  llvm::Value* IndexToS64(llvm::Value* value, ElementType type);
  // The block that holds allocas.
  llvm::BasicBlock* entry() const { return entry_; }
  const TargetHooks& target() const { return target_; }

 private:
  using CacheKey = std::pair<const Instruction*, IrIndex>;

  StatusOr<IrValues> EmitUncached(const Instruction& instruction, const IrIndex& index);
  StatusOr<llvm::Value*> EmitOne(const Instruction& instruction, const IrIndex& index);
  // The index of an elementwise operand: itself, or {} for a scalar operand
  // broadcast implicitly.
  IrIndex OperandIndex(const Instruction& operand, const IrIndex& index) const;

  StatusOr<llvm::Value*> EmitParameter(const Instruction& instruction, const IrIndex& index);
  llvm::Value* EmitConstant(const Instruction& instruction, const IrIndex& index);
  StatusOr<llvm::Value*> EmitReshape(const Instruction& instruction, const IrIndex& index);
  StatusOr<llvm::Value*> EmitConcatenate(const Instruction& instruction, const IrIndex& index);
  StatusOr<llvm::Value*> EmitPad(const Instruction& instruction, const IrIndex& index);
  StatusOr<llvm::Value*> EmitDynamicSlice(const Instruction& instruction, const IrIndex& index);
  // The update's element where `index` lies in the (clamped) update window,
  // else the operand's: dynamic-update-slice computed for every element.
  StatusOr<llvm::Value*> EmitDynamicUpdateSlice(const Instruction& instruction, const IrIndex& index);
  StatusOr<llvm::Value*> EmitGather(const Instruction& instruction, const IrIndex& index);
  StatusOr<IrValues> EmitReduce(const Instruction& instruction, const IrIndex& index);
  // A row reduction split across the lanes of CooperativeRows, starting
  // from the initial value in `accumulators[0]`.
  StatusOr<IrValues> EmitCooperativeRowReduction(const Instruction& instruction, const IrIndex& index,
                                                 const std::vector<llvm::AllocaInst*>& accumulators);
  StatusOr<IrValues> EmitReduceWindow(const Instruction& instruction, const IrIndex& index);
  // Inlines a scalar computation on argument values.
  StatusOr<IrValues> EmitCall(const Computation& computation, const IrValues& arguments, bool reassociate);
  // Emits a branch: `then` when `condition`, `otherwise` else; joins with phis.
  StatusOr<llvm::Value*> EmitIf(llvm::Value* condition, const std::function<StatusOr<llvm::Value*>()>& then,
                                llvm::Value* otherwise);

  struct RowBuffer {
    llvm::Type* element = nullptr;  // compute type of one element
    llvm::AllocaInst* data = nullptr;
    IrIndex row_index;
    bool filled = false;
  };
  // The row buffer of `instruction` when `index` lies in its row, else null.
  RowBuffer* RowBufferAt(const Instruction& instruction, const IrIndex& index);

  llvm::IRBuilder<>& b_;
  const TargetHooks& target_;
  llvm::BasicBlock* entry_;
  std::unordered_map<const Instruction*, RowBuffer> row_buffers_;
  std::vector<llvm::Value*> parameter_buffers_;
  std::vector<std::map<CacheKey, IrValues>> scopes_;
  // Parameters of inlined computations bound to values.
  std::unordered_map<const Instruction*, llvm::Value*> bound_parameters_;
  std::unordered_map<const Instruction*, llvm::GlobalVariable*> constant_globals_;
  CooperativeRows cooperative_;
  bool cooperating_ = false;
};

}  // namespace kiln::llvm_ir
