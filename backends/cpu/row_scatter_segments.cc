#include "backends/cpu/row_scatter_segments.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Segments an add is split into when it is split: one per core of the
// machines measured. The result does not depend on the threads that run
// them, so more cores do not change it.
constexpr int64_t kRowScatterSegmentCount = 2;
// The largest table split: up to it the result and the scratch table (two
// copies) stay in or near the last-level cache (32 MiB of L3 on the AMD
// EPYC measured) while the updates stream past, so the extra passes over
// them (filling the scratch, adding it in) are cheap even on one thread.
// The row split (RowScatterThreads) starts here too. On 2 threads, best of
// several quiet runs against the one pass: 1M updates of 64 bytes into
// 6.4 MB 4.27 -> 2.62 ms and into 12.2 MB 5.34 -> 3.95 ms, 512K of 128
// bytes into 12.8 MB 4.47 -> 3.61 ms. Larger tables split faster than by
// rows too (19.2 MB 8.40 -> 5.26 ms, 32 MB 9.77 -> 9.01 ms), but the
// passes over them then cost a single thread memory bandwidth.
constexpr int64_t kRowScatterSegmentedTableBytes = 16 << 20;
// At least this many updates: 16K of 64 bytes into a 64 KB table took 43
// us in one pass and 23 us split.
constexpr int64_t kRowScatterSegmentedMinUpdates = 16 * 1024;
// Update bytes per table byte at least, for the two extra passes over the
// table: 2 (200K updates of 64 bytes into 6.4 MB) took 0.89 -> 0.75 ms
// split, 1 (100K) 0.44 -> 0.43 ms.
constexpr int64_t kRowScatterSegmentedUpdatesPerTableByte = 2;
// Cache lines per range of the final sum that a thread claims at least.
constexpr int64_t kRowScatterSumGrainLines = 1024;
constexpr int64_t kRowScatterSumLineBytes = 64;

int64_t RowScatterTableBytes(const RowScatterPlan& plan) {
  return plan.rows * plan.row_elements * ByteWidth(plan.type);
}

// Fills `count` elements of `type` with its additive identity: -0 for the
// floats (-0 + x is x for every x, +0 and -0 included; +0 + -0 would be
// +0), 0 for the integers.
void FillRowScatterIdentity(ElementType type, void* table, int64_t count) {
  switch (type) {
    case ElementType::kF32: std::fill_n(static_cast<uint32_t*>(table), count, uint32_t{1} << 31); break;
    case ElementType::kF64: std::fill_n(static_cast<uint64_t*>(table), count, uint64_t{1} << 63); break;
    case ElementType::kBF16:
    case ElementType::kF16:
      std::fill_n(static_cast<uint16_t*>(table), count, static_cast<uint16_t>(1u << 15));
      break;
    default: std::memset(table, 0, static_cast<size_t>(count * ByteWidth(type))); break;
  }
}

}  // namespace

int64_t RowScatterSegments(const RowScatterPlan& plan) {
  const int64_t table_bytes = RowScatterTableBytes(plan);
  const int64_t update_bytes = plan.updates * plan.row_elements * ByteWidth(plan.type);
  const bool split = plan.combiner == RowScatterCombiner::kAdd && table_bytes > 0 &&
                     table_bytes <= kRowScatterSegmentedTableBytes &&
                     plan.updates >= kRowScatterSegmentedMinUpdates &&
                     update_bytes / table_bytes >= kRowScatterSegmentedUpdatesPerTableByte;
  return split ? kRowScatterSegmentCount : 1;
}

int64_t RowScatterScratchBytes(const RowScatterPlan& plan) {
  return (RowScatterSegments(plan) - 1) * RowScatterTableBytes(plan);
}

void RunSegmentedRowScatter(const RowScatterPlan& plan, const void* operand, const RowScatterArrays& arrays,
                            void* scratch, const IntraOpThreadPool* pool, RowScatterLanes lanes) {
  const int64_t segments = RowScatterSegments(plan);
  const int64_t table_bytes = RowScatterTableBytes(plan);
  const int64_t table_elements = plan.rows * plan.row_elements;
  const int64_t row_bytes = plan.row_elements * ByteWidth(plan.type);
  const int64_t index_bytes = ByteWidth(plan.index_type);
  auto* output = static_cast<std::byte*>(arrays.output);
  auto* scratch_tables = static_cast<std::byte*>(scratch);
  // Segment 0 adds into the result, segment s > 0 into scratch table s - 1.
  auto table_of = [&](int64_t segment) {
    return segment == 0 ? output : scratch_tables + (segment - 1) * table_bytes;
  };
  auto run_segments = [&](int64_t first, int64_t last) {
    for (int64_t segment = first; segment < last; ++segment) {
      std::byte* table = table_of(segment);
      if (segment > 0) {
        FillRowScatterIdentity(plan.type, table, table_elements);
      } else if (output != operand) {
        std::memcpy(output, operand, static_cast<size_t>(table_bytes));
      }
      const int64_t begin = plan.updates * segment / segments;
      RowScatterPlan part = plan;
      part.updates = plan.updates * (segment + 1) / segments - begin;
      const RowScatterArrays part_arrays{static_cast<const std::byte*>(arrays.indices) + begin * index_bytes,
                                         static_cast<const std::byte*>(arrays.updates) + begin * row_bytes,
                                         table};
      ApplyRowScatterUpdates(part, part_arrays, 0, plan.rows, lanes);
    }
  };
  // The scratch tables added into the result in segment order, a stretch of
  // cache lines at a time.
  const int64_t element_bytes = ByteWidth(plan.type);
  const int64_t lines = (table_bytes + kRowScatterSumLineBytes - 1) / kRowScatterSumLineBytes;
  auto sum_tables = [&](int64_t first_line, int64_t last_line) {
    const int64_t begin = first_line * kRowScatterSumLineBytes / element_bytes;
    const int64_t end = std::min(table_elements, last_line * kRowScatterSumLineBytes / element_bytes);
    for (int64_t segment = 1; segment < segments; ++segment) {
      AddRowScatterElements(plan.type, output + begin * element_bytes,
                            table_of(segment) + begin * element_bytes, end - begin, lanes);
    }
  };
  if (pool == nullptr) {
    run_segments(0, segments);
    sum_tables(0, lines);
    return;
  }
  pool->ParallelFor(segments, 1, run_segments);
  pool->ParallelFor(lines, kRowScatterSumGrainLines, sum_tables);
}

}  // namespace kiln::cpu
