// A module lowered into steps, for every backend that runs kernels:
// sequences of steps (kernel launches, library calls, copies, loops and
// branches whose predicates are read back to the host, infeed and outfeed,
// and the pushes and pops of reverse-mode loops' tapes) over slots, each slot one dense
// array in the backend's memory. Nothing in it is specific to a backend: the
// cpu, CUDA and Vulkan backends lower through the same rules
// (step_lowering.h) and differ only in how they compile `kernels` and run
// (or, on the cpu, translate) the steps.
// Immutable once built, so one program serves concurrent executions.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/kernel_description.h"
#include "core/ir.h"
#include "core/literal.h"

namespace kiln {

enum class StepSlotKind {
  kTemporary,  // at `offset` in the execution's scratch block
  kConstant,   // the program's uploaded constant `index`
  kParameter,  // argument leaf `index`
  kBound,      // a nested computation's parameter, set while it runs
  kResult,     // entry result leaf `index`: the caller's own buffer, which
               // the steps write directly (no scratch, no copy out)
};

struct StepSlot {
  StepSlotKind kind = StepSlotKind::kTemporary;
  int64_t bytes = 0;
  int64_t index = 0;
  int64_t offset = 0;
  // The sequence whose lowering made it: the region whose steps measure a
  // temporary's lifetime for a backend that places slots itself (the cpu).
  int sequence = 0;
};

struct ProgramStep {
  enum class Kind {
    kLaunch,
    kLibraryCall,
    kCopy,
    kWhile,
    kConditional,
    kInfeed,
    kOutfeed,
    kTapePush,
    kTapePop
  };
  Kind kind = Kind::kLaunch;
  std::string name;  // the instruction it comes from, for errors

  // kLaunch: kernel `kernel` on `buffers` (inputs, then outputs, then the
  // kernel's scratch slot when its description's scratch_bytes is not 0).
  int kernel = -1;
  std::vector<int> buffers;

  // kLibraryCall: library call `call` (e.g. a cuBLAS GEMM) on `buffers`
  // (the array leaves of the instruction's operands, then of its result).
  int call = -1;

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

  // kTapePush: `sources` (`bytes[i]` each) are appended, as one entry, to
  // the execution's tape `tape` (core/tape_custom_calls.h), device to
  // device. kTapePop: the newest entry of tape `tape` is removed into
  // `targets` (`bytes[i]` each). The tape's counter is no part of these
  // steps: a kernel of its own adds 1 or -1 to it.
  int64_t tape = -1;
};

struct StepSequence {
  std::vector<ProgramStep> steps;
  std::vector<int> parameters;  // bound slots, in parameter-leaf order
  std::vector<int> results;     // result leaves' slots (never a bound slot)
};

struct StepProgram {
  std::unique_ptr<Module> module;  // the optimised clone the kernels come from
  // Per constant slot index, its value (uploaded once per executable): an
  // array constant's own literal in `module`, or a leaf of a tuple constant
  // kept in `constant_storage`.
  std::vector<const Literal*> constants;
  std::deque<Literal> constant_storage;
  std::vector<StepSequence> sequences;  // [0] is the entry
  std::vector<StepSlot> slots;
  std::vector<Shape> parameter_leaves;
  std::vector<Shape> result_leaves;
  int64_t scratch_bytes = 0;
  // One description per distinct kernel (core/compiler/kernel_description.h):
  // launches of equal computations share one; step.kernel indexes this.
  // The backend fills in each grid when it compiles the kernels.
  std::vector<KernelDescription> kernels;
  // Instructions the backend runs as library calls (of this program's
  // module), one per kLibraryCall step; step.call indexes this.
  std::vector<const Instruction*> library_calls;
  // Per library call, its instruction alone as a computation of `module`
  // (operands as parameters) when the lowering built one to ask whether it
  // is a kernel, else null: a backend that runs the call through an
  // interpreter (the cpu) takes it rather than building the same again.
  std::vector<const Computation*> library_call_computations;
};

}  // namespace kiln
