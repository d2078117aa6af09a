#include "core/passes/reduce_window_epilogue_folding.h"

#include <memory>
#include <string>
#include <vector>

#include "core/ir_edit.h"
#include "core/passes/chain_folding.h"

namespace kiln {
namespace {

// The chain a fold replaces: op(reduce-window(x, init), broadcast(s)).
struct WindowEpilogueChain {
  Instruction* op;
  Instruction* reduce_window;
  Instruction* broadcast;
};

bool IsEpilogueOp(Opcode opcode) {
  return opcode == Opcode::kAdd || opcode == Opcode::kSubtract || opcode == Opcode::kMultiply ||
         opcode == Opcode::kDivide;
}

// The fusion of `chain` over (x, init, s), its computation owned by `fused`.
std::unique_ptr<Instruction> FuseWindowEpilogueChain(const WindowEpilogueChain& chain,
                                                     std::unique_ptr<Computation>& fused) {
  const std::vector<Instruction*> inputs = {chain.reduce_window->operand(0), chain.reduce_window->operand(1),
                                            chain.broadcast->operand(0)};
  std::vector<Instruction*> parameters;
  fused = MakeChainComputation("fused_" + chain.op->name, inputs, parameters);
  Instruction* reduce_window = CloneInstructionInto(
      *chain.reduce_window, *fused, {parameters[0], parameters[1]}, chain.reduce_window->name);
  Instruction* broadcast =
      CloneInstructionInto(*chain.broadcast, *fused, {parameters[2]}, chain.broadcast->name);
  fused->set_root(CloneInstructionInto(*chain.op, *fused, {reduce_window, broadcast}, chain.op->name));
  return MakeChainFusion(chain.op->shape, inputs, fused.get());
}

bool FoldWindowEpilogues(Module& module, Computation& computation,
                         const std::function<bool(const Instruction& fusion)>& accepts) {
  std::vector<WindowEpilogueChain> candidates;
  for (const auto& owned : computation.instructions()) {
    Instruction* op = owned.get();
    if (!IsEpilogueOp(op->opcode) || op->operands.size() != 2 || !op->shape.IsArray()) continue;
    Instruction* reduce_window = op->operand(0);
    Instruction* broadcast = op->operand(1);
    if (reduce_window->opcode != Opcode::kReduceWindow || reduce_window->operands.size() != 2 ||
        reduce_window == computation.root() || broadcast->opcode != Opcode::kBroadcast ||
        broadcast->operands.size() != 1 || !broadcast->operand(0)->shape.IsArray() ||
        broadcast->operand(0)->shape.rank() != 0 || broadcast == reduce_window)
      continue;
    candidates.push_back({op, reduce_window, broadcast});
  }
  // Most computations have none: the user map is made only for those that do.
  if (candidates.empty()) return false;
  const UserMap users = ComputeUsers(computation);
  std::vector<ChainFusion> fusions;
  for (const WindowEpilogueChain& chain : candidates) {
    if (!OnlyUserIs(users, chain.reduce_window, chain.op)) continue;
    ChainFusion fold;
    fold.replaced = chain.op;
    fold.fusion = FuseWindowEpilogueChain(chain, fold.fused);
    fusions.push_back(std::move(fold));
  }
  return ReplaceChainsWithFusions(module, computation, std::move(fusions), accepts);
}

}  // namespace

StatusOr<bool> ReduceWindowEpilogueFolding::Run(Module& module) {
  if (!accepts_) return false;
  return FoldEachComputation(
      module, [&](Computation& computation) { return FoldWindowEpilogues(module, computation, accepts_); });
}

}  // namespace kiln
