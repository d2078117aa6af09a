// sort without the interpreter: each 1-D slice along the sort dimension is
// ordered by an index permutation, comparing elements with the comparator
// computation compiled as a one-element kernel (its 2N scalar parameters are
// the two elements of each operand, its output one pred). Slices are sorted
// in parallel; every slice uses a stable merge sort, which is also a valid
// result when stability was not asked for and matches the interpreter.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/codegen/kernel_compiler.h"
#include "backends/cpu/library_thunk.h"

namespace kiln::cpu {

struct SortGeometry {
  std::vector<int64_t> dimensions;  // shared by all operands
  int64_t sort_dimension = 0;
  std::vector<int> element_bytes;  // per operand
};

class SortThunk : public Thunk {
 public:
  // `fallback` sorts the same operands with the interpreter until (or unless)
  // the comparator is compiled.
  SortThunk(std::vector<int> inputs, std::vector<int> outputs, SortGeometry geometry,
            std::unique_ptr<LibraryThunk> fallback);
  void SetComparator(const KernelInfo& comparator) { comparator_ = comparator.function; }
  bool compiled() const { return comparator_ != nullptr; }

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return comparator_ != nullptr ? "sort" : "library"; }

 private:
  // Sorts slices [begin, end) of `length` elements `inner` apart.
  void SortSlices(void* const* slots, int64_t begin, int64_t end) const;

  SortGeometry geometry_;
  int64_t length_ = 1;  // elements per slice
  int64_t inner_ = 1;   // stride between neighbours of a slice
  int64_t slices_ = 1;
  KernelFunction comparator_ = nullptr;
  std::unique_ptr<LibraryThunk> fallback_;
};

}  // namespace kiln::cpu
