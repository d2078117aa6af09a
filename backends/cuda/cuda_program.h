// A compiled CUDA program: step sequences (kernel launches, copies, loops
// and branches whose predicates are read back to the host) over slots,
// each slot one array in device memory. Immutable once built, so one
// program serves concurrent executions.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cuda/ptx_compiler.h"
#include "core/ir.h"
#include "core/literal.h"

namespace kiln::cuda {

enum class SlotKind {
  kTemporary,  // at `offset` in the execution's scratch block
  kConstant,   // the program's uploaded constant `index`
  kParameter,  // argument leaf `index`
  kBound,      // a nested computation's parameter, set while it runs
};

struct Slot {
  SlotKind kind = SlotKind::kTemporary;
  int64_t bytes = 0;
  int64_t index = 0;
  int64_t offset = 0;
};

struct StepSequence;

struct Step {
  enum class Kind { kLaunch, kCopy, kWhile, kConditional, kInfeed, kOutfeed };
  Kind kind = Kind::kLaunch;
  std::string name;  // the instruction it comes from, for errors

  // kLaunch: kernel `kernel` on `buffers` (inputs then outputs).
  int kernel = -1;
  std::vector<int> buffers;

  // kCopy: `sources[i]` -> `targets[i]` (`bytes[i]` each).
  std::vector<int> sources, targets;
  std::vector<int64_t> bytes;

  // kWhile: `targets` hold the loop state (initialised from `sources`);
  // `nested[0]` is the condition and `nested[1]` the body, both bound to
  // the state. kConditional: `selector` picks `nested[b]`, bound to
  // `branch_operands[b]`; its results are copied to `targets`.
  int selector = -1;
  ElementType selector_type = ElementType::kPred;
  std::vector<std::vector<int>> branch_operands;
  std::vector<int> nested;  // sequence indices

  // kInfeed: the next literal of the host's infeed queue (of `shape`) goes
  // to `targets`. kOutfeed: `sources` (an array or tuple of `shape`) go to
  // the host's outfeed queue.
  Shape shape;
};

struct StepSequence {
  std::vector<Step> steps;
  std::vector<int> parameters;  // bound slots, in parameter-leaf order
  std::vector<int> results;     // result leaves' slots (never a bound slot)
};

struct CudaProgram {
  std::unique_ptr<Module> module;       // the optimised clone the kernels come from
  std::deque<Literal> constants;        // uploaded once per executable
  std::vector<StepSequence> sequences;  // [0] is the entry
  std::vector<Slot> slots;
  std::vector<Shape> parameter_leaves;
  std::vector<Shape> result_leaves;
  int64_t scratch_bytes = 0;
  PtxModule ptx;  // every kernel; ptx.kernels[step.kernel]
};

// Lowers an optimised module (after the pass pipeline) and compiles its
// kernels for `target`. UNIMPLEMENTED names the first op that cannot run.
StatusOr<std::unique_ptr<CudaProgram>> LowerForCuda(std::unique_ptr<Module> module, const PtxTarget& target,
                                                    const std::string& dump_ir_dir = "",
                                                    const std::string& dump_stem = "");

// Whether `instruction` needs host machinery this backend lacks: its traits
// say it has side effects, keeps state, runs host code or asks where it
// runs, or it is get-dimension-size. Infeed, outfeed and after-all have
// steps of their own and rng a kernel, so they are not. The lowering
// refuses these by name and Backend::UnsupportedOps lists them.
bool RefusedOnCuda(const Instruction& instruction);

// The module pipeline the CUDA backend runs before lowering (the core
// passes, fusing what CheckPtxEmittable accepts).
Status RunCudaPasses(Module& module, int optimization_level);

}  // namespace kiln::cuda
