// dot (DotGeneral) on f32/f64/c64/c128 as batched GEMM with Eigen's tensor
// contraction on the intra-op thread pool, and s8 x s8 -> s32 (JAX's
// preferred_element_type=int32) exactly in integers. Each operand must be in
// memory as [batch, rows, columns] in one of the two orders the contraction
// reads directly; the planner inserts a transpose when it is not. Large f32
// and s8 products run on oneDNN's matmul instead when the build has it (see
// onednn_matmul.h); where its int8 kernels are not exact (no VNNI), s8
// products of up to kExactF32Depth terms widen to f32 and run on its f32
// matmul, exactly; the rest run on a plain integer loop.
//
// bf16 x bf16 -> f32 and f16 x f16 -> f32 (JAX's preferred_element_type=f32)
// run on oneDNN's matmul where its implementation uses the CPU's
// instructions for the type (onednn_matmul.h); elsewhere the operands widen
// to f32 for the f32 path. The optimising pipeline sends only the first
// kind here (RunsLowPrecisionDotAsIs); the rest it runs in f32 with the
// converts fused into the operands' producers (contraction_upcast.h), so the
// widening here serves unoptimised programs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/ir.h"

namespace kiln::cpu {

struct DotGeometry {
  ElementType type = ElementType::kF32;          // of the result
  ElementType operand_type = ElementType::kF32;  // of both operands (s8 for s32, or f16/bf16 for f32)
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
// types other than f32/f64/c64/c128, s8 x s8 -> s32 or f16/bf16 x the same
// -> f32, or other mixed operand and result types).
std::optional<DotPlan> PlanDot(const Instruction& dot);

// Whether `dot`, of f16 or bf16 operands and an f32 result, runs on the
// CPU's instructions for its operand type (oneDNN, onednn_matmul.h), so
// the pipeline should leave its operands as they are rather than widen them
// to f32 (PipelineOptions::keep_low_precision_contraction).
bool RunsLowPrecisionDotAsIs(const Instruction& dot);

class OneDnnMatmul;

class DotThunk : public Thunk {
 public:
  DotThunk(int lhs, int rhs, int output, DotGeometry geometry);
  ~DotThunk() override;
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "dot"; }
  // Whether Run goes through oneDNN in the dot's own types.
  bool uses_onednn() const { return onednn_ != nullptr; }
  // Whether Run widens the operands to f32 for the f32 path: an s8 product
  // for oneDNN's f32 matmul (where its int8 kernels are not exact, see
  // onednn_matmul.h), an f16/bf16 one for oneDNN's or Eigen's.
  bool widens_to_f32() const { return widens_; }

  // The longest s8 contraction an f32 product computes exactly: every
  // partial sum is an integer of at most 1024 * 128 * 128 = 2^24 in
  // magnitude, which f32 holds exactly.
  static constexpr int64_t kExactF32Depth = 1024;

 private:
  Status RunWidened(ExecutionContext& context) const;

  DotGeometry geometry_;
  std::unique_ptr<OneDnnMatmul> onednn_;
  std::unique_ptr<OneDnnMatmul> widened_;  // null: Eigen runs the widened product
  bool widens_ = false;
};

}  // namespace kiln::cpu
