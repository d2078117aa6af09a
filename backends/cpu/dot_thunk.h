// dot (DotGeneral) on f32/f64/c64/c128 as batched GEMM with Eigen's tensor
// contraction on the intra-op thread pool. Each operand must be in memory as
// [batch, rows, columns] in one of the two orders the contraction reads
// directly; the planner inserts a transpose when it is not. Large f32
// products run on oneDNN's matmul instead when the build has it (see
// onednn_matmul.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/ir.h"

namespace kiln::cpu {

struct DotGeometry {
  ElementType type = ElementType::kF32;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool lhs_contracting_first = false;  // lhs is [batch, K, M] (else [batch, M, K])
  bool rhs_contracting_last = false;   // rhs is [batch, N, K] (else [batch, K, N])
};

struct DotPlan {
  DotGeometry geometry;
  // Transposes to apply to an operand first (output dimension d = operand
  // dimension permutation[d]); empty when the operand is used as it is.
  std::vector<int64_t> lhs_permutation;
  std::vector<int64_t> rhs_permutation;
};

// A plan for `dot`, or nothing when the dot thunk does not handle it (element
// types other than f32/f64/c64/c128, or mixed operand and result types).
std::optional<DotPlan> PlanDot(const Instruction& dot);

class OneDnnMatmul;

class DotThunk : public Thunk {
 public:
  DotThunk(int lhs, int rhs, int output, DotGeometry geometry);
  ~DotThunk() override;
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "dot"; }
  // Whether Run goes through oneDNN.
  bool uses_onednn() const { return onednn_ != nullptr; }

 private:
  DotGeometry geometry_;
  std::unique_ptr<OneDnnMatmul> onednn_;
};

}  // namespace kiln::cpu
