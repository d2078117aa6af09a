#include "backends/cpu/vector_sort.h"

#include <hwy/base.h>
#include <hwy/contrib/sort/vqsort.h>

namespace kiln::cpu {
namespace {

static_assert(sizeof(WideKey) == sizeof(hwy::uint128_t) && alignof(WideKey) == alignof(hwy::uint128_t));

// Each thread keeps its Sorter (VQSort's small working buffer), so a sort
// allocates nothing.
const hwy::Sorter& ThreadSorter() {
  thread_local const hwy::Sorter sorter;
  return sorter;
}

}  // namespace

void VectorSortAscending(uint32_t* keys, size_t n) { ThreadSorter()(keys, n, hwy::SortAscending()); }
void VectorSortAscending(uint64_t* keys, size_t n) { ThreadSorter()(keys, n, hwy::SortAscending()); }
void VectorSortAscending(WideKey* keys, size_t n) {
  ThreadSorter()(reinterpret_cast<hwy::uint128_t*>(keys), n, hwy::SortAscending());
}

}  // namespace kiln::cpu
