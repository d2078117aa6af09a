#include "core/passes/select_and_scatter_folding.h"

#include <memory>
#include <string>
#include <vector>

#include "core/ir_edit.h"
#include "core/passes/chain_folding.h"

namespace kiln {
namespace {

// The chain a fold replaces: slice(select-and-scatter(pad(x, v), s, i)),
// with `broadcast` the source s when it is a broadcast of a scalar that only
// the select-and-scatter reads (null otherwise).
struct PaddedSelectAndScatter {
  Instruction* slice;
  Instruction* select_and_scatter;
  Instruction* pad;
  Instruction* broadcast = nullptr;
};

// Whether `source` is a broadcast of a scalar (a sum's gradient: ones).
bool IsScalarBroadcast(const Instruction* source) {
  return source->opcode == Opcode::kBroadcast && source->operands.size() == 1 &&
         source->operand(0)->shape.IsArray() && source->operand(0)->shape.rank() == 0;
}

// The fusion of `chain` over (x, v, s, i), its computation owned by `fused`;
// with a broadcast source, over its scalar instead of s.
std::unique_ptr<Instruction> FuseSelectAndScatterChain(const PaddedSelectAndScatter& chain,
                                                       std::unique_ptr<Computation>& fused) {
  Instruction* source = chain.select_and_scatter->operand(1);
  const std::vector<Instruction*> inputs = {chain.pad->operand(0), chain.pad->operand(1),
                                            chain.broadcast != nullptr ? chain.broadcast->operand(0) : source,
                                            chain.select_and_scatter->operand(2)};
  std::vector<Instruction*> parameters;
  fused = MakeChainComputation("fused_" + chain.slice->name, inputs, parameters);
  Instruction* pad =
      CloneInstructionInto(*chain.pad, *fused, {parameters[0], parameters[1]}, chain.pad->name);
  Instruction* fused_source =
      chain.broadcast != nullptr
          ? CloneInstructionInto(*chain.broadcast, *fused, {parameters[2]}, chain.broadcast->name)
          : parameters[2];
  Instruction* select_and_scatter = CloneInstructionInto(
      *chain.select_and_scatter, *fused, {pad, fused_source, parameters[3]}, chain.select_and_scatter->name);
  fused->set_root(CloneInstructionInto(*chain.slice, *fused, {select_and_scatter}, chain.slice->name));
  return MakeChainFusion(chain.slice->shape, inputs, fused.get());
}

bool FoldSelectAndScatterChains(Module& module, Computation& computation,
                                const std::function<bool(const Instruction& fusion)>& accepts) {
  std::vector<PaddedSelectAndScatter> candidates;
  for (const auto& owned : computation.instructions()) {
    Instruction* slice = owned.get();
    if (slice->opcode != Opcode::kSlice || slice->operands.size() != 1) continue;
    Instruction* select_and_scatter = slice->operand(0);
    if (select_and_scatter->opcode != Opcode::kSelectAndScatter || select_and_scatter->operands.size() != 3 ||
        select_and_scatter == computation.root())
      continue;
    Instruction* pad = select_and_scatter->operand(0);
    if (pad->opcode != Opcode::kPad || pad->operands.size() != 2 || pad == computation.root() ||
        select_and_scatter->operand(1) == pad || select_and_scatter->operand(2) == pad)
      continue;
    candidates.push_back({slice, select_and_scatter, pad});
  }
  // Most computations have none: the user map is made only for those that do.
  if (candidates.empty()) return false;
  const UserMap users = ComputeUsers(computation);
  std::vector<ChainFusion> fusions;
  for (PaddedSelectAndScatter& chain : candidates) {
    if (!OnlyUserIs(users, chain.select_and_scatter, chain.slice) ||
        !OnlyUserIs(users, chain.pad, chain.select_and_scatter))
      continue;
    Instruction* source = chain.select_and_scatter->operand(1);
    if (IsScalarBroadcast(source) && source != chain.select_and_scatter->operand(2) &&
        OnlyUserIs(users, source, chain.select_and_scatter))
      chain.broadcast = source;
    ChainFusion fold;
    fold.replaced = chain.slice;
    fold.fusion = FuseSelectAndScatterChain(chain, fold.fused);
    fusions.push_back(std::move(fold));
  }
  return ReplaceChainsWithFusions(module, computation, std::move(fusions), accepts);
}

}  // namespace

StatusOr<bool> SelectAndScatterFolding::Run(Module& module) {
  if (!accepts_) return false;
  return FoldEachComputation(module, [&](Computation& computation) {
    return FoldSelectAndScatterChains(module, computation, accepts_);
  });
}

}  // namespace kiln
