// Highway's vectorised quicksort of 2- and 4-byte keys compiled here for each
// x86 target Highway dispatches to at run time (hwy/foreach_target.h),
// instead of through hwy::Sorter: the library's entry point seeds its pivot
// sampler with a getrandom system call on every call, which cost a sort of
// one 1024-key row about 15% (0.45 of 3.2 us) and one of 2 keys almost all
// of its time (0.44 against 0.08 us). Here
// the sampler is seeded from the length; the introsort bound (heap sort
// after 2 log2(n) + 4 levels) still caps the work whatever the keys.
//
// This uses vqsort-inl.h's detail:: entry points of Highway 1.0 (Debian
// bookworm's libhwy-dev 1.0.3: the build defines KILN_HWY_1_0_SORT); other
// Highway versions take the library's public hwy::Sorter instead.
//
// The SSSE3 target is not built: it saves a fifth of this file's compile
// time, and no sort is lost by it: a CPU with SSSE3 but no SSE4 (Core 2 of
// 2006-07 and older) runs the SSE2 baseline build of the same quicksort,
// compiled from the same source; every other x86-64 takes SSE4 or better.
#ifndef HWY_DISABLED_TARGETS            // reason: compile time only, no test or sort skipped (see above)
#define HWY_DISABLED_TARGETS HWY_SSSE3  // reason: SSSE3-only CPUs sort with the SSE2 build
#endif
#include "backends/cpu/vector_sort.h"

#include <algorithm>

#include <hwy/base.h>
#include <hwy/contrib/sort/vqsort.h>

#if defined(KILN_HWY_1_0_SORT)
#define KILN_OWN_VQSORT 1
#else
#define KILN_OWN_VQSORT 0
#endif

#if KILN_OWN_VQSORT
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/vector_sort.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// Included on every pass (their per-target guards need it); VQSORT_ENABLED
// is 0 on the scalar baseline, which sorts with the standard library.
#include <hwy/contrib/sort/traits-inl.h>
#include <hwy/contrib/sort/vqsort-inl.h>

HWY_BEFORE_NAMESPACE();
namespace kiln::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if VQSORT_ENABLED
// A deterministic seed: any value gives a correct sort; the samples only
// steer the pivots.
inline uint64_t KilnSortSeed(size_t n) {
  return 0x9E3779B97F4A7C15ull ^ (uint64_t{n} * 0xBF58476D1CE4E5B9ull);
}

template <class D, class Traits, typename T>
void KilnVectorSort(D d, Traits st, T* keys, size_t lanes) {
  if (lanes <= 1) return;
  HWY_ALIGN T buffer[hwy::SortConstants::BufNum<T>(HWY_LANES(T))];
  hn::detail::Generator random(KilnSortSeed(lanes));
  const size_t max_levels = 2 * hwy::CeilLog2(lanes) + 4;
  hn::detail::Recurse(d, st, keys, keys + lanes, lanes, buffer, random, max_levels);
}

template <typename T>
void KilnSortLanes(T* keys, size_t n) {
  const hn::SortTag<T> d;
  const hn::detail::SharedTraits<hn::detail::TraitsLane<hn::detail::OrderAscending<T>>> st;
  KilnVectorSort(d, st, keys, n);
}

// Moves keys <= pivot to the front of keys[0, n) and returns their count.
template <typename T>
size_t KilnPartitionLanes(T* keys, size_t n, T pivot) {
  const hn::SortTag<T> d;
  const hn::detail::SharedTraits<hn::detail::TraitsLane<hn::detail::OrderAscending<T>>> st;
  // Partition needs more than two vectors; a short range is partitioned
  // plainly.
  if (n <= 4 * hn::Lanes(d)) {
    return static_cast<size_t>(std::partition(keys, keys + n, [pivot](T key) { return key <= pivot; }) -
                               keys);
  }
  HWY_ALIGN T buffer[hwy::SortConstants::BufNum<T>(HWY_LANES(T))];
  return hn::detail::Partition(d, st, keys, n, hn::Set(d, pivot), buffer);
}
#else
template <typename T>
void KilnSortLanes(T* keys, size_t n) {
  std::sort(keys, keys + n);
}

template <typename T>
size_t KilnPartitionLanes(T* keys, size_t n, T pivot) {
  return static_cast<size_t>(std::partition(keys, keys + n, [pivot](T key) { return key <= pivot; }) - keys);
}
#endif

void KilnSortU16(uint16_t* keys, size_t n) { KilnSortLanes(keys, n); }
void KilnSortU32(uint32_t* keys, size_t n) { KilnSortLanes(keys, n); }
size_t KilnPartitionU32(uint32_t* keys, size_t n, uint32_t pivot) {
  return KilnPartitionLanes(keys, n, pivot);
}
size_t KilnPartitionU64(uint64_t* keys, size_t n, uint64_t pivot) {
  return KilnPartitionLanes(keys, n, pivot);
}

}  // namespace HWY_NAMESPACE
}  // namespace kiln::cpu
HWY_AFTER_NAMESPACE();
#endif  // KILN_OWN_VQSORT

#if HWY_ONCE || !KILN_OWN_VQSORT
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

// 8- and 16-byte keys take the library's build: this file's build of the
// same code sorted rows of 1024 (key, position) u64 words about half as
// fast (11.4 against 6.3 us a row, not understood), which outweighs the
// system call.
void VectorSortAscending(uint64_t* keys, size_t n) { ThreadSorter()(keys, n, hwy::SortAscending()); }
void VectorSortAscending(WideKey* keys, size_t n) {
  ThreadSorter()(reinterpret_cast<hwy::uint128_t*>(keys), n, hwy::SortAscending());
}

#if KILN_OWN_VQSORT
HWY_EXPORT(KilnSortU16);
HWY_EXPORT(KilnSortU32);
HWY_EXPORT(KilnPartitionU32);
HWY_EXPORT(KilnPartitionU64);

void VectorSortAscending(uint16_t* keys, size_t n) { HWY_DYNAMIC_DISPATCH(KilnSortU16)(keys, n); }
void VectorSortAscending(uint32_t* keys, size_t n) { HWY_DYNAMIC_DISPATCH(KilnSortU32)(keys, n); }
size_t VectorPartition(uint32_t* keys, size_t n, uint32_t pivot) {
  return HWY_DYNAMIC_DISPATCH(KilnPartitionU32)(keys, n, pivot);
}
size_t VectorPartition(uint64_t* keys, size_t n, uint64_t pivot) {
  return HWY_DYNAMIC_DISPATCH(KilnPartitionU64)(keys, n, pivot);
}
#else
namespace {
template <typename T>
size_t PlainPartition(T* keys, size_t n, T pivot) {
  return static_cast<size_t>(std::partition(keys, keys + n, [pivot](T key) { return key <= pivot; }) - keys);
}
}  // namespace

void VectorSortAscending(uint16_t* keys, size_t n) { ThreadSorter()(keys, n, hwy::SortAscending()); }
void VectorSortAscending(uint32_t* keys, size_t n) { ThreadSorter()(keys, n, hwy::SortAscending()); }
size_t VectorPartition(uint32_t* keys, size_t n, uint32_t pivot) { return PlainPartition(keys, n, pivot); }
size_t VectorPartition(uint64_t* keys, size_t n, uint64_t pivot) { return PlainPartition(keys, n, pivot); }
#endif

}  // namespace kiln::cpu
#endif  // HWY_ONCE
