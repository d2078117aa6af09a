// Constant folding: an instruction whose operands are all constants is
// evaluated at compile time with the reference interpreter's kernels and
// replaced by a constant. Skipped: results over a size limit, ops that only
// make data bigger (broadcast, iota: cheaper to compute than to load), ops
// with side effects or state (rng, infeed, custom-call...) and control flow.
#pragma once

#include <cstdint>

#include "core/pass.h"

namespace kiln {

class ConstantFolding : public Pass {
 public:
  explicit ConstantFolding(int64_t max_result_bytes = int64_t{1} << 20)
      : max_result_bytes_(max_result_bytes) {}
  std::string_view name() const override { return "constant-folding"; }
  StatusOr<bool> Run(Module& module) override;

 private:
  int64_t max_result_bytes_;
};

}  // namespace kiln
