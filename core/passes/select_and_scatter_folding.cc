#include "core/passes/select_and_scatter_folding.h"

#include <memory>
#include <string>
#include <vector>

#include "core/ir_edit.h"
#include "core/passes/chain_folding.h"

namespace kiln {
namespace {

// The chain a fold replaces: slice(select-and-scatter(pad(x, v), s, i)).
struct PaddedSelectAndScatter {
  Instruction* slice;
  Instruction* select_and_scatter;
  Instruction* pad;
};

bool SelectAndScatterChainUserIs(const UserMap& users, const Instruction* value, const Instruction* user) {
  const auto found = users.find(value);
  return found != users.end() && found->second.size() == 1 && found->second[0] == user;
}

// The fusion of `chain` over (x, v, s, i), its computation owned by `fused`.
std::unique_ptr<Instruction> FuseSelectAndScatterChain(const PaddedSelectAndScatter& chain,
                                                       std::unique_ptr<Computation>& fused) {
  const std::vector<Instruction*> inputs = {chain.pad->operand(0), chain.pad->operand(1),
                                            chain.select_and_scatter->operand(1),
                                            chain.select_and_scatter->operand(2)};
  std::vector<Instruction*> parameters;
  fused = MakeChainComputation("fused_" + chain.slice->name, inputs, parameters);
  Instruction* pad =
      CloneInstructionInto(*chain.pad, *fused, {parameters[0], parameters[1]}, chain.pad->name);
  Instruction* select_and_scatter = CloneInstructionInto(
      *chain.select_and_scatter, *fused, {pad, parameters[2], parameters[3]}, chain.select_and_scatter->name);
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
  NameUniquer names(computation);
  UseReplacer replacer(computation);
  bool folded = false;
  for (const PaddedSelectAndScatter& chain : candidates) {
    if (!SelectAndScatterChainUserIs(users, chain.select_and_scatter, chain.slice) ||
        !SelectAndScatterChainUserIs(users, chain.pad, chain.select_and_scatter))
      continue;
    std::unique_ptr<Computation> fused;
    std::unique_ptr<Instruction> fusion = FuseSelectAndScatterChain(chain, fused);
    if (!accepts(*fusion)) continue;
    Computation* called = module.AddComputation(std::move(fused));
    fusion->called = {called};
    Instruction* added =
        AddNamedInstruction(computation, names, std::move(fusion), chain.slice->name + ".fusion");
    replacer.Replace(chain.slice, added);
    folded = true;
  }
  if (!folded || !replacer.Apply()) return false;
  computation.SortTopologically();
  computation.RemoveDeadInstructions();
  return true;
}

}  // namespace

StatusOr<bool> SelectAndScatterFolding::Run(Module& module) {
  if (!accepts_) return false;
  return FoldEachComputation(module, [&](Computation& computation) {
    return FoldSelectAndScatterChains(module, computation, accepts_);
  });
}

}  // namespace kiln
