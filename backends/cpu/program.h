// A compiled CPU program: the thunk sequences of the entry computation and of
// every loop or branch body, the slots they name, and where each slot lives.
// Immutable once built, so one program serves concurrent executions.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/thunk.h"
#include "core/interpreter/evaluator.h"
#include "core/ir.h"

namespace kiln::cpu {

enum class SlotKind {
  kArena,      // at `index` bytes into the execution's arena
  kConstant,   // the constant's data, `constant`
  kParameter,  // argument leaf `index`
  kResult,     // result buffer `index`
  kBound,      // set during execution by a loop or branch (to `backing` or anything it is given)
};

struct Slot {
  SlotKind kind = SlotKind::kArena;
  int64_t bytes = 0;
  int64_t index = 0;
  const void* constant = nullptr;
  int region = 0;            // the sequence whose steps measure its lifetime
  std::vector<int> backing;  // kBound: arena slots it may point to
};

struct CompiledProgram {
  std::unique_ptr<Module> module;  // the optimised clone the thunks point into
  // One description per distinct kernel, in compile order (kernels->kernels()
  // answers them one for one), each grid the row blocks CpuKernelGrid chose;
  // `kernels` also holds the while loops compiled whole (fused_loops.h).
  std::vector<KernelDescription> kernel_descriptions;
  std::shared_ptr<CompiledKernels> kernels;
  std::unique_ptr<interpreter::ModulePlan> library_plan;
  std::deque<Literal> constant_storage;          // leaves of tuple constants
  std::deque<ThunkSequence> sequences;           // sequences[0] runs the entry
  std::vector<std::vector<int>> region_results;  // per sequence: slots live until its end
  std::vector<Slot> slots;
  std::vector<int> result_sources;      // per result leaf: the slot holding it
  std::vector<Shape> parameter_shapes;  // entry parameters (maybe tuples)
  std::vector<Shape> parameter_leaves;
  std::vector<Shape> result_leaves;
  int64_t arena_bytes = 0;

  // What compilation decided, for tests and tools.
  struct Statistics {
    std::map<std::string, int64_t> thunks;  // by kind, all sequences
    int64_t in_place_updates = 0;           // dynamic-update-slices without a copy
    int64_t arena_bytes_without_reuse = 0;  // sum of all arena arrays
    int64_t distinct_kernels = 0;           // identical computations share one kernel
    // Summed over loops: bytes of state a back-edge copies (leaves the body
    // takes from another leaf, a constant or a repeated value); leaves the
    // body computes are written in place and passed-through leaves stay put.
    int64_t loop_state_bytes_copied_per_iteration = 0;
    // While loops compiled whole (fused_loops.h): their condition and body
    // are a few small kernels.
    int64_t fused_loops = 0;
  } statistics;
};

}  // namespace kiln::cpu
