// The add row scatter of many updates into a table that stays in cache,
// split along the UPDATES so that two cores share it. One core's pass
// (row_scatter_rows.h) is bound by streaming the updates and by the random
// read-modify-writes of the table's rows; splitting the destination rows
// between threads saves neither, as each thread still reads every update
// line (row_scatter_thunk.cc). Here segment 0 of the updates (the first
// half, in update order) is added into the result after the operand's
// copy, while segment 1 is added into a scratch table filled with -0 (the
// additive identity of IEEE addition, so a row no update names ends with
// its bytes unchanged); then the scratch table is added into the result,
// element by element. Each element thus gets (operand + its segment-0
// updates in order) + (its segment-1 updates in order): for floats with
// repeated indices that may differ from the one-pass order in the last
// bits (XLA leaves the order of the updates to one element unspecified),
// for integers it is the same. The segments and the element sums depend on
// the shapes only, never on the thread count: one thread runs the segments
// one after the other and gives the same bytes.
#pragma once

#include <cstdint>

#include "backends/cpu/row_scatter_rows.h"
#include "backends/cpu/row_scatter_thunk.h"

namespace kiln::cpu {

class IntraOpThreadPool;

// Segments of the updates `plan` is added in: 2 for an add whose table
// stays in or near the last-level cache and whose updates are many and
// larger than the table (row_scatter_segments.cc), else 1 (the one pass). Segment
// s of S holds updates [U s / S, U (s + 1) / S), U = plan.updates.
int64_t RowScatterSegments(const RowScatterPlan& plan);

// Scratch bytes a run of `plan` takes: a table for each segment after the
// first (0 for one segment).
int64_t RowScatterScratchBytes(const RowScatterPlan& plan);

// Runs `plan`, of RowScatterSegments(plan) > 1 segments, on the threads of
// `pool` (one when null): `operand` is copied into `arrays.output` (unless
// they are one buffer) and every update is added into it, using
// RowScatterScratchBytes(plan) bytes at `scratch` (whatever they hold). `lanes` chooses the row loop as
// ApplyRowScatterUpdates's does.
void RunSegmentedRowScatter(const RowScatterPlan& plan, const void* operand, const RowScatterArrays& arrays,
                            void* scratch, const IntraOpThreadPool* pool,
                            RowScatterLanes lanes = RowScatterLanes::kWidest);

}  // namespace kiln::cpu
