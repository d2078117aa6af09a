// Liveness-based placement of an execution's temporary arrays in one arena:
// arrays whose lifetimes do not overlap may share bytes. Backend-neutral:
// the CPU backend's buffer assignment plans its arena with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::compiler {

// One temporary: its size and the steps (inclusive) between which it must
// keep its contents, from the step that writes it to the last that reads it.
struct BufferInterval {
  int64_t bytes = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
};

struct ArenaPlan {
  std::vector<int64_t> offsets;  // per interval, multiples of the alignment
  int64_t total_bytes = 0;
};

// Up to this many arrays, PlanArena places the biggest first, each at the
// lowest aligned offset that no placed array with an overlapping lifetime
// occupies (first-fit by size: tight, but each placement looks at every
// placed array). Beyond it, in the order they are written, each in the
// smallest free block that holds it (best fit in time order, O(n log n)), so
// that planning a program of 100k kernels stays a fraction of its compile.
inline constexpr size_t kMaxIntervalsPlacedBySize = 4096;

ArenaPlan PlanArena(std::span<const BufferInterval> intervals, int64_t alignment = 64);

}  // namespace kiln::compiler
