// Ops no device kernel runs, rewritten into ops device kernels do run, so a
// program that uses them still runs whole on `vulkan` and `cuda` instead of
// being refused: the LAPACK custom calls JAX emits for jnp.linalg (as XLA's
// GPU compiler expands Cholesky, triangular solves, QR and eigh into loops of
// HLO) and fft. The cpu backend keeps its library calls; only the device
// lowering runs DeviceOpExpander.
//
// One table, DeviceOpExpansions(), says what can be expanded; each row's
// function builds the replacement as a module of its own (core/builder.h)
// whose entry takes the instruction's operands as parameters, in order and
// with their shapes, and returns the instruction's result shape. The pass
// imports that entry, calls it in the instruction's place and inlines it.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/pass.h"
#include "core/status.h"

namespace kiln {

struct DeviceOpExpansion {
  std::string_view name;  // what the row expands, e.g. "potrf (Cholesky)"
  bool (*matches)(const Instruction& instruction);
  // The replacement module, or an error naming what this expansion cannot
  // do for this instruction (the device backend then refuses the op).
  StatusOr<std::unique_ptr<Module>> (*expand)(const Instruction& instruction);
};

// Every expansion, one row per op family.
const std::vector<DeviceOpExpansion>& DeviceOpExpansions();

// The row that matches `instruction`, or nullptr.
const DeviceOpExpansion* FindDeviceOpExpansion(const Instruction& instruction);

// True when a row matches `instruction` and its expansion succeeds.
bool ExpandsForDevices(const Instruction& instruction);

// Replaces every instruction a row matches (and whose expansion succeeds)
// with its expansion, inlined. An instruction whose expansion fails is left
// as it was, for the device backend to refuse by name.
class DeviceOpExpander : public Pass {
 public:
  std::string_view name() const override { return "device-op-expander"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
