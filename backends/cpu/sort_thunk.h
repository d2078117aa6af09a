// sort without the interpreter: each 1-D slice along the sort dimension is
// ordered by an index permutation, comparing elements with the comparator
// computation compiled as a one-element kernel (its 2N scalar parameters are
// the two elements of each operand, its output one pred). Slices are sorted
// in parallel; every slice uses a stable merge sort, which is also a valid
// result when stability was not asked for and matches the interpreter.
//
// The common comparators take a fast path instead (a "key_sort" thunk): one
// operand's two elements compared with LT or GT, plainly (integers, floats
// under the partial order), with XLA's TOTALORDER comparison, or with the
// total order after the canonicalisation jnp.sort / jnp.argsort export
// (NaN -> one NaN, -0 -> +0), with any number of passenger operands. Each
// element's key becomes an unsigned integer whose order is the comparator's,
// and keys of every width are sorted with Highway's vectorised quicksort
// (vector_sort.h): a lone operand's keys by themselves (1-byte keys widened
// to 2), decoded back into the output (where equal keys stand for different
// bits, +0/-0 or NaNs under the canonical order, their run is rewritten in
// input order), otherwise (key, position) pairs packed into one wider
// integer (32 bits for 1- and 2-byte keys of short slices, 64 for 4-byte
// keys, 128 for 8-byte ones), whose positions gather every operand. Rows are
// sorted in parallel; one long slice spreads its passes over the threads
// and is split around sampled keys into one part per thread. Either way the
// result equals the stable merge sort's, bit for bit. A slice with a NaN
// key under the partial order (no strict weak order) is sorted by the
// comparator.
//
// An argsort's positions need no kernel either: where an operand is an iota
// along the sort dimension that only the sort reads, the lowering drops the
// iota's launch (SortGeometry::generated_positions) and the key path writes
// the sorted positions straight from its (key, position) words; the paths
// that read operands (the comparator's, the interpreter's) write the iota
// into the operand's slot first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/library_thunk.h"
#include "core/ir.h"
#include "core/lowering/sort_key_comparator.h"

namespace kiln::cpu {

// The single-key comparators the key path takes (core/lowering/sort_key_comparator.h).
using kiln::MatchSortKeyComparator;
using kiln::SortKeyPlan;

// Whether `kernel` (a kernel's computation, no parameters) computes an array
// of `shape` (s32, u32, s64 or u64) that holds each element's position along
// `dimension`: an iota along it, or a broadcast of an iota that puts the
// iota's dimension there (JAX's argsort of rows).
bool ComputesPositionsAlong(const Computation& kernel, const Shape& shape, int64_t dimension);

struct SortGeometry {
  std::vector<int64_t> dimensions;  // shared by all operands
  int64_t sort_dimension = 0;
  std::vector<int> element_bytes;  // per operand
  // Per operand (empty: none): a 4- or 8-byte integer operand, not the key,
  // whose slot nothing computes because it is an iota along the sort
  // dimension (ComputesPositionsAlong); the thunk writes its positions.
  // Only with a key plan.
  std::vector<bool> generated_positions;
};

class SortThunk : public Thunk {
 public:
  // `fallback` sorts the same operands with the interpreter until (or unless)
  // the comparator is compiled.
  SortThunk(std::vector<int> inputs, std::vector<int> outputs, SortGeometry geometry,
            std::unique_ptr<LibraryThunk> fallback);
  void SetComparator(const KernelInfo& comparator) { comparator_ = comparator.function; }
  // Sorts by `plan` instead of calling the comparator where it can.
  void SetKeyPlan(const SortKeyPlan& plan) { key_plan_ = plan; }
  bool compiled() const { return comparator_ != nullptr; }
  // Bytes the radix sort of one slice takes besides the slice (0: none):
  // lowering gives them an arena slot (SetRadixScratch), so that a run of a
  // long slice allocates none; slices sorted in parallel allocate their own.
  int64_t RadixScratchBytes() const;
  void SetRadixScratch(int slot) { radix_scratch_ = slot; }

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override {
    if (KeyPathReady()) return "key_sort";
    return comparator_ != nullptr ? "sort" : "library";
  }

 private:
  // The key path runs (a partial-order float plan needs the comparator for
  // slices with NaNs).
  bool KeyPathReady() const {
    return key_plan_.has_value() &&
           (key_plan_->order != SortKeyPlan::Order::kFloat || comparator_ != nullptr);
  }
  // Sorts slices [begin, end) of `length` elements `inner` apart.
  void SortSlices(void* const* slots, int64_t begin, int64_t end) const;
  // Writes 0, 1, ... length - 1 along slices [begin, end) of every operand
  // whose positions no kernel computed, for the paths that read them.
  void WritePositions(void* const* slots, int64_t begin, int64_t end) const;
  // The same by key_plan_; `pool`, where not null, spreads a large slice's
  // work over its threads.
  // `radix_scratch`, where not null, holds RadixScratchBytes() for slices
  // sorted one at a time.
  void SortSlicesByKey(void* const* slots, int64_t begin, int64_t end, const IntraOpThreadPool* pool,
                       uint32_t* radix_scratch) const;

  SortGeometry geometry_;
  int64_t length_ = 1;  // elements per slice
  int64_t inner_ = 1;   // stride between neighbours of a slice
  int64_t slices_ = 1;
  KernelFunction comparator_ = nullptr;
  std::optional<SortKeyPlan> key_plan_;
  int radix_scratch_ = -1;  // a slot of RadixScratchBytes(), or none
  std::unique_ptr<LibraryThunk> fallback_;
};

}  // namespace kiln::cpu
