// Select-and-scatter's inner block with an add scatter in AVX-512 registers,
// for the element types whose comparison and addition the vector unit does
// exactly as the interpreter's scalar ops do: f32 and f64 (IEEE compare and
// add), 32- and 64-bit integers (signed or unsigned compare, wrapping
// add), and bf16 widened to f32 (its compare is f32's, and each add is an
// f32 add rounded to bf16 at once, to nearest even with NaNs made the quiet
// NaN of their sign, as Eigen's bf16 add that the interpreter runs). One
// block is one source position over n lanes: per lane, the first
// of `taps` window rows (`in`) that the select's comparison does not keep
// over a later one, then the source value added into the same lane of the
// matching row of `out`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/attributes.h"
#include "core/element_type.h"

namespace kiln::cpu {

template <typename T>
using SelectAndAddBlock = void (*)(const T* const* in, T* const* out, size_t taps, const T* values,
                                   int64_t n);

template <typename T>
constexpr bool kHasSelectAndAddVectors =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, uint32_t> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
    std::is_same_v<T, bfloat16>;

// The block for `direction`, or null where the CPU has no AVX-512 (F, BW and
// VL).
template <typename T>
SelectAndAddBlock<T> FindSelectAndAddBlock(ComparisonDirection direction);

extern template SelectAndAddBlock<float> FindSelectAndAddBlock<float>(ComparisonDirection);
extern template SelectAndAddBlock<double> FindSelectAndAddBlock<double>(ComparisonDirection);
extern template SelectAndAddBlock<int32_t> FindSelectAndAddBlock<int32_t>(ComparisonDirection);
extern template SelectAndAddBlock<uint32_t> FindSelectAndAddBlock<uint32_t>(ComparisonDirection);
extern template SelectAndAddBlock<int64_t> FindSelectAndAddBlock<int64_t>(ComparisonDirection);
extern template SelectAndAddBlock<uint64_t> FindSelectAndAddBlock<uint64_t>(ComparisonDirection);
extern template SelectAndAddBlock<bfloat16> FindSelectAndAddBlock<bfloat16>(ComparisonDirection);

}  // namespace kiln::cpu
