// Passes rewrite a module and report whether they changed it. A pipeline runs
// passes in order and checks the module's structure after each that changed
// it (operands, calls, parameters: a broken rewrite is caught at the pass
// that made it), and every instruction's shape once, at the end.
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
  // Re-inferring every shape is most of the verifier's cost, and doing it
  // after each pass that changed the module made it a multiple of the
  // module's size per compile. Run re-infers them once, at its end, when
  // anything changed; a caller that runs several pipelines in a row and
  // verifies the result itself passes false (RunOptimizationPipeline).
  explicit PassPipeline(bool verify_shapes_at_end = true) : verify_shapes_at_end_(verify_shapes_at_end) {}

  void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  // Runs every pass once, checking the structure after each that changed the
  // module and (see above) the shapes at the end; true if any pass changed it.
  StatusOr<bool> Run(Module& module);

 private:
  bool verify_shapes_at_end_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Removes instructions unreachable from each computation's root.
class DeadCodeElimination : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
