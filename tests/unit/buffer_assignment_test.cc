// The backend-neutral buffer assignment (core/compiler/buffer_assignment.h):
// lifetimes from steps, reuse of dead buffers' bytes, in-place updates,
// results written into the caller's buffers, regions side by side and
// views (backing) that keep what they point to alive.
#include "core/compiler/buffer_assignment.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

// Whether buffers a and b share any byte.
bool BytesOverlap(const BufferAssignment& assignment, const BufferAssignmentProblem& problem, int a, int b) {
  const int64_t a_begin = assignment.offset[static_cast<size_t>(a)];
  const int64_t b_begin = assignment.offset[static_cast<size_t>(b)];
  return a_begin < b_begin + problem.buffers[static_cast<size_t>(b)].bytes &&
         b_begin < a_begin + problem.buffers[static_cast<size_t>(a)].bytes;
}

// buffer 0 is an argument; 1..n arena buffers of `bytes`, step i reading
// i and writing i + 1.
BufferAssignmentProblem ChainOfSteps(int n, int64_t bytes) {
  BufferAssignmentProblem problem;
  problem.buffers.push_back({bytes, /*in_arena=*/false, 0, {}});
  for (int i = 1; i <= n; ++i) problem.buffers.push_back({bytes, true, 0, {}});
  problem.regions.emplace_back();
  for (int i = 0; i < n; ++i) problem.regions[0].push_back({{i}, {i + 1}, false});
  problem.region_results = {{n}};
  return problem;
}

TEST(BufferAssignmentTest, AChainOfTemporariesNeedsTwoBuffersOfBytes) {
  const BufferAssignmentProblem problem = ChainOfSteps(6, 100);
  const BufferAssignment assignment = AssignBuffers(problem);
  EXPECT_EQ(assignment.arena_bytes, 2 * 128);  // 100 rounded up to 64s, twice
  EXPECT_EQ(assignment.arena_bytes_without_reuse, 6 * 128);
  EXPECT_EQ(assignment.offset[0], -1) << "an argument is not in the arena";
  for (int i = 1; i < 6; ++i) {
    EXPECT_FALSE(BytesOverlap(assignment, problem, i, i + 1)) << "a step's input and output share bytes";
    EXPECT_EQ(assignment.offset[static_cast<size_t>(i)] % 64, 0);
  }
}

TEST(BufferAssignmentTest, EntryResultsAreWrittenIntoTheCallersBuffersOnce) {
  BufferAssignmentProblem problem = ChainOfSteps(3, 64);
  problem.entry_results = {3, 2};
  BufferAssignment assignment = AssignBuffers(problem);
  EXPECT_EQ(assignment.result[3], 0);
  EXPECT_EQ(assignment.offset[3], -1);
  EXPECT_EQ(assignment.result[2], 1);
  EXPECT_EQ(assignment.arena_bytes, 64);  // only buffer 1 is left
  // Returned twice: neither result takes it, it stays in the arena.
  problem.entry_results = {3, 3};
  assignment = AssignBuffers(problem);
  EXPECT_EQ(assignment.result[3], -1);
  EXPECT_GE(assignment.offset[3], 0);
}

TEST(BufferAssignmentTest, AnUpdateWritesOverItsOperandWhenTheOperandDiesThere) {
  BufferAssignmentProblem problem;
  problem.buffers = {{64, false, 0, {}}, {256, true, 0, {}}, {64, true, 0, {}}, {256, true, 0, {}}};
  problem.regions = {{{{0}, {1}, false}, {{0}, {2}, false}, {{1, 2}, {3}, /*updates_first_input=*/true}}};
  problem.region_results = {{3}};
  BufferAssignment assignment = AssignBuffers(problem);
  EXPECT_EQ(assignment.in_place_updates, 1);
  EXPECT_EQ(assignment.offset[3], assignment.offset[1]);
  // Read again after the update: the update needs bytes of its own.
  problem.regions[0].push_back({{1}, {2}, false});
  assignment = AssignBuffers(problem);
  EXPECT_EQ(assignment.in_place_updates, 0);
  EXPECT_FALSE(BytesOverlap(assignment, problem, 1, 3));
}

TEST(BufferAssignmentTest, RegionsAreLaidOutOneAfterAnother) {
  BufferAssignmentProblem problem;
  problem.buffers = {{64, true, 0, {}}, {64, true, 1, {}}};
  problem.regions = {{{{}, {0}, false}}, {{{}, {1}, false}}};
  problem.region_results = {{}, {}};
  const BufferAssignment assignment = AssignBuffers(problem);
  EXPECT_EQ(assignment.arena_bytes, 128);
  EXPECT_FALSE(BytesOverlap(assignment, problem, 0, 1))
      << "a loop body's buffers must not share the caller's";
}

TEST(BufferAssignmentTest, AViewKeepsWhatItPointsToAlive) {
  // Buffer 2 is a view of buffer 1, read at step 2; buffer 3 is written
  // at step 2 and must not take buffer 1's bytes.
  BufferAssignmentProblem problem;
  problem.buffers = {{64, false, 0, {}}, {64, true, 0, {}}, {64, false, 0, {1}}, {64, true, 0, {}}};
  problem.regions = {{{{0}, {1}, false}, {{0}, {}, false}, {{2}, {3}, false}}};
  problem.region_results = {{3}};
  const BufferAssignment assignment = AssignBuffers(problem);
  EXPECT_FALSE(BytesOverlap(assignment, problem, 1, 3));
}

}  // namespace
}  // namespace kiln::compiler
