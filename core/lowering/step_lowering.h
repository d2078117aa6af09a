// Lowering an optimised module into a StepProgram, with the rules that a
// backend running kernels on a device supplies: which computations it can
// run as one kernel (its code generator's answer), how its slots are
// aligned, and which kernels need scratch memory. Everything that computes
// becomes a kernel; what the backend's generator cannot emit is refused by
// name (UNIMPLEMENTED) instead of running on the host behind the caller's
// back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/emittable_table.h"
#include "core/lowering/step_program.h"
#include "core/status.h"

namespace kiln {

struct StepLoweringRules {
  std::string backend;  // named in errors, e.g. "cuda"
  // Scratch slots start at multiples of this many bytes.
  int64_t slot_alignment = 256;
  // OK when the backend can run `kernel` (a fusion's computation or one
  // made for a single instruction) as one kernel; else why not.
  std::function<Status(const Computation& kernel)> check_kernel;
  // What each instruction alone can be as a kernel, by opcode and element
  // type (the backend's declaration, core/compiler/emittable_table.h): what
  // fusion may put in a kernel and what UnsupportedDeviceOps names. The
  // lowering needs it.
  std::shared_ptr<const compiler::EmittableTable> emittable;
  // Bytes of scratch a kernel whose root is `root` needs beyond its
  // outputs (e.g. a sort's merge buffers); 0 for none. May be empty.
  std::function<int64_t(const Instruction& root)> kernel_scratch_bytes;
  // Instructions the backend runs as a call into a vendor library (the CUDA
  // backend's dots through cuBLAS) or into a registered op's own kernel
  // (registered_op_launch.h) instead of a kernel of its generator: each
  // becomes a kLibraryCall step of its own. May be empty (everything is a
  // kernel). The fusion pass never fuses dots or custom-calls, so such an
  // instruction stays alone.
  std::function<bool(const Instruction& instruction)> library_call;
  // Whether the backend's kernels compute a row reduction fused into its
  // consumers once per row (FusionOptions::fuse_row_reductions).
  bool fuse_row_reductions = true;

  // What a backend whose runtime runs on the host (the cpu) adds. The
  // device backends leave these at their defaults.
  //
  // Instructions the backend's runtime runs itself, whatever their shapes
  // (tuples, tokens) and traits: asked first for every instruction but
  // parameters, constants, tuples, get-tuple-element, reshapes, copies,
  // barriers, after-all, calls, whiles and conditionals (so also for
  // fusions, infeed, outfeed and tape calls), each claimed one a kLibraryCall
  // step. The cpu's sort, fft, dot, convolution... thunks and its
  // interpreter path. May be empty.
  std::function<bool(const Instruction& instruction)> host_library_call;
  // An instruction that is no kernel (check_kernel refuses it, or it needs
  // the host) becomes a kLibraryCall step instead of being refused.
  bool library_call_when_not_a_kernel = false;
  // A nested sequence's result that is one of its own parameters is copied
  // to a temporary (a kCopy step), so that it never aliases the loop state
  // or branch operand it is copied over. False for a backend whose loops and
  // branches handle a passed-through parameter themselves (the cpu's
  // WhileThunk keeps such a leaf where it is).
  bool copy_bound_results = true;
  // Whether a bitcast-convert between element types of one width (pred and
  // complex types aside) renames its operand's slots, the same bytes read
  // as the other type, instead of being a kernel that copies them: for a
  // backend whose buffers hold every type as its plain bytes (the cpu).
  bool bitcasts_rename_their_operand = false;
};

// Whether the lowering makes `instruction` steps of its own on every backend,
// which move bytes between slots and the host's queues or the execution's
// tapes: infeed (kInfeed), outfeed (kOutfeed) and the tape custom calls of
// reverse-mode loops (core/tape_custom_calls.h: kTapePush / kTapePop beside
// a counter kernel). A backend whose runtime is on the host (the cpu) runs
// those steps rather than claiming the instructions as library calls.
bool LowersToFeedOrTapeSteps(const Instruction& instruction);

// Whether `instruction` needs host machinery that no device lowering has:
// its traits say it has side effects, keeps state, runs host code or asks
// where it runs, or it is get-dimension-size. Infeed, outfeed and after-all
// have steps of their own, rng is left to the backend's kernels and the
// annotation custom calls (core/identity_custom_calls.h) are forwarded by
// RunDevicePasses, so they are not. The lowering refuses these by name, and a backend's
// UnsupportedOps lists them, except the tape custom calls of reverse-mode
// loops (core/tape_custom_calls.h): those become tape steps and a counter
// kernel (step_tapes.h), and being "host" here keeps them out of fusions.
bool NeedsHostOnDevice(const Instruction& instruction);

// The ops of `module` that LowerToStepProgram refuses with `rules`, by HLO name,
// sorted and each once: what needs the host (NeedsHostOnDevice), what is not
// made of arrays, and what `rules.emittable` refuses as a kernel of one
// instruction (ops no kernel emitter of the backend has, such as fft). A
// device backend's UnsupportedOps.
std::vector<std::string> UnsupportedDeviceOps(const Module& module, const StepLoweringRules& rules);

// The module pipeline a device backend runs before lowering: the core
// passes, fusing what `rules.emittable` accepts as a single instruction.
Status RunDevicePasses(Module& module, int optimization_level, const StepLoweringRules& rules);

// Lowers `module` into the steps of `program` without placing any slot:
// every temporary stays kTemporary at offset 0 and scratch_bytes 0, for a
// backend that translates the steps into its own program and places that
// (the cpu: backends/cpu/lowering.cc).
Status LowerToSteps(std::unique_ptr<Module> module, const StepLoweringRules& rules, StepProgram& program);

// Lowers `module` (optimised by RunDevicePasses, or not at all) into
// `program`, whose kernels the backend then compiles: LowerToSteps, then
// entry results written where the caller gets them and temporaries placed
// in the scratch block by the shared buffer assignment.
Status LowerToStepProgram(std::unique_ptr<Module> module, const StepLoweringRules& rules,
                          StepProgram& program);

}  // namespace kiln
