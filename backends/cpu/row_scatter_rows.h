// The inner loop of the row scatter (row_scatter_thunk.h): the updates that
// land in one stretch of destination rows, applied in update order. The
// indices are read in blocks; each block's updates for the stretch are
// listed first (without a branch per update), then applied a whole row at a
// time, AVX-512 vectors where the CPU has them, with the destination and
// update rows of the update a few places further down the list prefetched:
// the destination rows are read in random order, and without the prefetch
// each of them costs a cache miss the core waits for. A stretch of every
// row skips the list (nearly every update lands in it) and prefetches the
// update rows ahead in the stream too; an add of rows of 1, 2 or 4 whole
// vectors there runs a loop with the width known at compile time.
#pragma once

#include <cstdint>

#include "backends/cpu/row_scatter_thunk.h"

namespace kiln::cpu {

// The arrays of one run of a row scatter, as RowScatterThunk's buffers.
struct RowScatterArrays {
  const void* indices = nullptr;
  const void* updates = nullptr;
  void* output = nullptr;  // holds the operand's rows already
};

// Which row loop ApplyRowScatterUpdates uses: the widest the CPU has
// (AVX-512 vectors where HasAvx512Lanes()), or element by element (what
// other CPUs run; tests compare the two).
enum class RowScatterLanes { kWidest, kPortable };

// Combines into rows [row_begin, row_end) of `arrays.output` every update
// whose index names one of them, in update order: each row ends with the
// bytes the sequential scatter gives it. Indices naming other rows, or no
// row (negative or >= plan.rows, after plan.wrap_negative_indices's wrap),
// are passed over.
void ApplyRowScatterUpdates(const RowScatterPlan& plan, const RowScatterArrays& arrays, int64_t row_begin,
                            int64_t row_end, RowScatterLanes lanes = RowScatterLanes::kWidest);

// How many updates ahead the loop over every update of the table (one
// stretch of all the rows) prefetches the update rows, for rows of
// `row_bytes`: about 2 KiB of the stream, one row at least.
int64_t RowScatterUpdatePrefetchRows(int64_t row_bytes);

// Adds `count` elements of `addend` into `destination` (element type
// `type`, one PlanRowScatter accepts) as the row loop adds an update's
// elements: the same addition per element, bf16 and f16 sums rounded to
// the type, integers wrapping around. The sum of two tables of segments
// (row_scatter_segments.h).
void AddRowScatterElements(ElementType type, void* destination, const void* addend, int64_t count,
                           RowScatterLanes lanes = RowScatterLanes::kWidest);

}  // namespace kiln::cpu
