// A while loop compiled whole (fused_loop_emitter.h emits it): its
// condition kernels, the predicate test, its body kernels and the back-edge
// in one function, so a trip of a loop over a few scalars is a few
// instructions instead of a call per kernel per trip.
//
// The runtime (backends/cpu/control_flow_thunks) keeps a loop's state in two
// buffers per leaf, so each kernel's buffer pointers take one of three sets
// of values: the first trip, every odd trip, every even trip after the
// first ("trip kinds" 0, 1, 2). It passes the three sets as one table of
// 3 x stride pointers: per kind, the predicate's address, then each
// kernel's buffers (kernel_compiler.h's ABI: parameters, then result
// leaves) in run order, so stride is one more than the kernels' buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir.h"

namespace kiln::cpu {

// What to compile: the kernels the condition runs (in order; after them the
// predicate lies where the table's first pointer says) and those the body
// runs, each named by its index among the kernel requests of the same
// Compile call (kernel_compiler.h): the loop calls those kernels, emitted
// once in the loops' module, and LLVM inlines them there.
struct FusedLoopRequest {
  std::string name;  // the function's symbol, unique within one Compile call
  std::vector<size_t> condition;
  std::vector<size_t> body;
};

// The compiled loop. Runs trips from trip kind `kind` (0, 1 or 2) until the
// predicate is false (returns 1) or `max_trips` bodies have run (returns 0),
// and stores how many bodies ran in `*trips`. After t bodies from kind k the
// next trip's kind is FusedLoopKindAfter(k, t).
using FusedLoopFunction = int64_t (*)(void* const* trip_tables, int64_t kind, int64_t max_trips,
                                      int64_t* trips);

inline int64_t FusedLoopKindAfter(int64_t kind, int64_t trips) {
  if (trips == 0) return kind;
  if (kind == 0) return trips % 2 == 1 ? 1 : 2;
  return trips % 2 == 1 ? 3 - kind : kind;
}

// A kernel's buffers: its parameters, then its result's array leaves.
inline size_t FusedLoopKernelBuffers(const Computation& computation) {
  return computation.parameters().size() + computation.root()->shape.Leaves().size();
}

}  // namespace kiln::cpu
