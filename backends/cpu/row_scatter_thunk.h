// Scatter of whole rows, the form JAX's x.at[idx].add(u) and x.at[idx].set(u)
// take: operand [N, ...], indices [U] or [U, 1], updates [U, ...] whose
// update i is combined into row idx[i]. The generic kernel walks the updates
// one element at a time on one thread; this thunk takes one of two paths.
//
// The one pass: each thread owns an equal stretch of the destination rows:
// it copies the operand's rows there and applies, in update order, the
// updates whose indices name them, whole rows at a time with the rows ahead
// prefetched (row_scatter_rows.h), with no sorting and no scratch. A table
// that stays in cache gets one thread (RowScatterThreads). Every row thus
// sees its updates in XLA's order (update 0 first), so the results equal
// the sequential scatter's bit for bit, with repeated indices too.
//
// The segments (row_scatter_segments.h): an add of many updates into a
// table that stays in cache is split along the updates instead, each
// segment added into a table of its own by its own thread and the tables
// summed after (RowScatterSegments decides from the shapes). Integer sums
// are the sequential scatter's; float sums of an element that updates of
// both segments name may differ from it in the last bits (XLA leaves their
// order unspecified), and are the same whatever the thread count. Assign
// (set) always takes the one pass.
//
// Out-of-range indices (negative or >= N) name no row and are skipped on
// both paths, as XLA skips an update window that does not fit. JAX wraps
// negative indices first (i < 0 ? i + N : i), a kernel of its own over the
// indices; the cpu lowering drops that kernel and the thunk wraps them as it
// reads them (WrapsNegativeRowScatterIndices), so the indices are read once.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/cpu/thunk.h"
#include "core/element_type.h"
#include "core/ir.h"

namespace kiln::cpu {

enum class RowScatterCombiner { kAdd, kAssign };

struct RowScatterPlan {
  ElementType type = ElementType::kF32;        // f32, f64, bf16, f16, s32, s64, u32 or u64
  ElementType index_type = ElementType::kS32;  // s32, s64, u32 or u64
  RowScatterCombiner combiner = RowScatterCombiner::kAdd;
  int64_t rows = 0;          // the operand's first dimension
  int64_t row_elements = 1;  // product of its other dimensions
  int64_t updates = 0;       // update rows (and indices)
  // An index i < 0 names row i + rows (JAX's wrap, folded in); one still
  // outside the rows after that is skipped like any other.
  bool wrap_negative_indices = false;
};

// The plan of `scatter` when it is a row scatter: one operand; indices
// [U] or [U, 1] with index_vector_dim 1 naming operand dimension 0
// (inserted_window_dims = {0}, no batching dimensions); updates [U, rest of
// the operand's dimensions] with update_window_dims = {1, ..., rank - 1};
// a combiner that is add of its two parameters or returns the update
// (parameter 1). Anything else keeps the generic path.
std::optional<RowScatterPlan> PlanRowScatter(const Instruction& scatter);

// The threads a row scatter runs on, of a pool of `pool_threads`: one per
// stretch of rows, each of which reads every index and update, so only as
// many as have enough updates each and a share of the destination table
// too large to stay in cache (row_scatter_thunk.cc).
int RowScatterThreads(const RowScatterPlan& plan, int pool_threads);

// Whether `kernel` (a fusion's computation) computes the indices of a row
// scatter planned as `plan` from its one parameter as JAX's x.at[i] does
// before scattering: select(i < 0, i + rows, i) of a signed index type,
// reshaped or not to the scatter's indices shape. The thunk can then read
// the parameter instead and wrap the indices itself.
bool WrapsNegativeRowScatterIndices(const Computation& kernel, const RowScatterPlan& plan);

class RowScatterThunk : public Thunk {
 public:
  // `scratch` is a slot of RowScatterScratchBytes(plan) bytes
  // (row_scatter_segments.h), or -1 when that is 0.
  RowScatterThunk(int operand, int indices, int updates, int output, int scratch, RowScatterPlan plan);

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "row-scatter"; }

 private:
  RowScatterPlan plan_;
  int scratch_;
};

}  // namespace kiln::cpu
