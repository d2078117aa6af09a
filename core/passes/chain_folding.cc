#include "core/passes/chain_folding.h"

#include <utility>

#include "core/ir_edit.h"

namespace kiln {

std::unique_ptr<Computation> MakeChainComputation(const std::string& name,
                                                  const std::vector<Instruction*>& inputs,
                                                  std::vector<Instruction*>& parameters) {
  auto fused = std::make_unique<Computation>(name);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Attributes attrs;
    attrs.parameter_number = static_cast<int64_t>(i);
    Instruction* parameter =
        fused->AddInstruction(MakeInstruction(Opcode::kParameter, inputs[i]->shape, {}, attrs));
    parameter->name = "param_" + std::to_string(i);
    parameters.push_back(parameter);
  }
  return fused;
}

std::unique_ptr<Instruction> MakeChainFusion(const Shape& shape, const std::vector<Instruction*>& inputs,
                                             Computation* fused) {
  Attributes attrs;
  attrs.fusion_kind = FusionKind::kOutput;
  auto fusion = MakeInstruction(Opcode::kFusion, shape, inputs, attrs);
  fusion->called = {fused};
  return fusion;
}

bool OnlyUserIs(const UserMap& users, const Instruction* value, const Instruction* user) {
  const auto found = users.find(value);
  return found != users.end() && found->second.size() == 1 && found->second[0] == user;
}

bool ReplaceChainsWithFusions(Module& module, Computation& computation, std::vector<ChainFusion> fusions,
                              const std::function<bool(const Instruction& fusion)>& accepts) {
  NameUniquer names(computation);
  UseReplacer replacer(computation);
  bool folded = false;
  for (ChainFusion& chain : fusions) {
    if (!accepts(*chain.fusion)) continue;
    Computation* called = module.AddComputation(std::move(chain.fused));
    chain.fusion->called = {called};
    Instruction* added =
        AddNamedInstruction(computation, names, std::move(chain.fusion), chain.replaced->name + ".fusion");
    replacer.Replace(chain.replaced, added);
    folded = true;
  }
  if (!folded || !replacer.Apply()) return false;
  computation.SortTopologically();
  computation.RemoveDeadInstructions();
  return true;
}

bool FoldEachComputation(Module& module, const std::function<bool(Computation&)>& fold) {
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  bool changed = false;
  for (Computation* computation : computations) changed = fold(*computation) || changed;
  return changed;
}

}  // namespace kiln
