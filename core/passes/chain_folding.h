// What the passes that fold a chain of instructions into one fusion for a
// backend's step share (select_and_scatter_folding.h,
// reduce_window_epilogue_folding.h): the fused computation's parameters,
// the fusion over them, and the walk over a module's computations.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ir.h"
#include "core/ir_edit.h"

namespace kiln {

// A new computation `name` with parameters param_0.. of `inputs`' shapes,
// appended to `parameters` in order.
std::unique_ptr<Computation> MakeChainComputation(const std::string& name,
                                                  const std::vector<Instruction*>& inputs,
                                                  std::vector<Instruction*>& parameters);

// A kOutput fusion of `shape` reading `inputs` that calls `fused`.
std::unique_ptr<Instruction> MakeChainFusion(const Shape& shape, const std::vector<Instruction*>& inputs,
                                             Computation* fused);

// Whether `value` has exactly one user, `user`.
bool OnlyUserIs(const UserMap& users, const Instruction* value, const Instruction* user);

// A fold ready to be made: the fusion of a chain, whose computation is
// `fused`, and the chain's last instruction, which it replaces.
struct ChainFusion {
  Instruction* replaced = nullptr;
  std::unique_ptr<Instruction> fusion;
  std::unique_ptr<Computation> fused;
};

// Puts each of `fusions` that `accepts` takes in place of the instruction
// it replaces (the fused computation added to `module`, the fusion named
// after it), then sorts `computation` and removes what no longer has a
// user; whether any was put.
bool ReplaceChainsWithFusions(Module& module, Computation& computation, std::vector<ChainFusion> fusions,
                              const std::function<bool(const Instruction& fusion)>& accepts);

// Runs `fold` on each computation the module holds now (those a fold adds
// hold no candidate); whether any fold changed one.
bool FoldEachComputation(Module& module, const std::function<bool(Computation&)>& fold);

}  // namespace kiln
