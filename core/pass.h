// Passes rewrite a module and report whether they changed it. A pipeline runs
// passes in order with the verifier after each that changed the module, so a
// broken rewrite is caught at the pass that made it.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Returns true when the module changed.
  virtual StatusOr<bool> Run(Module& module) = 0;
};

class PassPipeline {
 public:
  void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  // Runs every pass once, verifying after each that changed the module; true
  // if any did.
  StatusOr<bool> Run(Module& module);

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Removes instructions unreachable from each computation's root.
class DeadCodeElimination : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
