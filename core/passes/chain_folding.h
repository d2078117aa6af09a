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

namespace kiln {

// A new computation `name` with parameters param_0.. of `inputs`' shapes,
// appended to `parameters` in order.
std::unique_ptr<Computation> MakeChainComputation(const std::string& name,
                                                  const std::vector<Instruction*>& inputs,
                                                  std::vector<Instruction*>& parameters);

// A kOutput fusion of `shape` reading `inputs` that calls `fused`.
std::unique_ptr<Instruction> MakeChainFusion(const Shape& shape, const std::vector<Instruction*>& inputs,
                                             Computation* fused);

// Runs `fold` on each computation the module holds now (those a fold adds
// hold no candidate); whether any fold changed one.
bool FoldEachComputation(Module& module, const std::function<bool(Computation&)>& fold);

}  // namespace kiln
