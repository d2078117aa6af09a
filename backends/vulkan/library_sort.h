// When and how a kernel runs the library sort (shaders/bitonic_sort.comp):
// a kernel that is one sort of its parameters whose comparator orders by
// one key (core/lowering/sort_key_comparator.h: jnp.sort, jnp.argsort,
// lax.sort with LT or GT) under an order that is total: integers, or
// floats under TOTALORDER, with or without jnp's canonicalisation of NaNs
// and zeros. The key is operand 0, of 1, 2, 4 or 8 bytes (each a variant,
// 1 and 2 where the device stores such elements), with at most one
// passenger operand of 4 or 8 bytes (argsort's positions). The generated
// sort (glsl_bitonic_sort.h) inlines the comparator and loads both keys
// from memory at every compare; this one encodes each key once per pass as
// an integer in the comparator's order and keeps it beside its element
// number in shared memory. Other comparators (several keys, the partial
// float order, whose NaNs are no strict weak order), more operands and the
// rows a CPU device sorts serially (glsl_serial_sort.h) stay generated.
// Either way the result is the stable merge sort's, bit for bit: the gather
// copies elements, and equal keys (both zeros and every NaN after the
// canonicalisation) keep their order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/glsl_bitonic_sort.h"
#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "core/ir.h"

namespace kiln::vulkan {

// How the shader turns a key's bits into an unsigned integer in the
// comparator's order (its ORDER_* numbers).
enum class SortKeyOrder : uint32_t { kUnsigned = 0, kSigned = 1, kTotal = 2, kCanonicalTotal = 3 };

// Specialization constants 2 on of shaders/bitonic_sort.comp, in order:
// the sort's shape and order, fixed for the kernel (its push constants are
// each launch's mode, block and stride: BitonicSortDispatches').
struct SortKeyShape {
  uint32_t rows = 0;
  uint32_t row_length = 0;
  uint32_t padded_log2 = 0;
  uint32_t tile = 2;
  uint32_t inner = 1;
  uint32_t outputs = 0;
  SortKeyOrder order = SortKeyOrder::kUnsigned;
  uint32_t descending = 0;
  uint32_t exponent = 0;  // a 64-bit float's: the high word's
  uint64_t nan_bits = 0;
  uint64_t zero_bits = 0;
  uint32_t passenger_words = 0;

  std::vector<uint32_t> Words() const;
};

struct SortPlan {
  LibraryShader shader = LibraryShader::kBitonicSort32;  // by key width and passenger
  BitonicSortLayout layout;
  SortKeyShape shape;
  // Every pass of the network and the gather (BitonicSortDispatches),
  // parameters {mode, block, stride}.
  std::vector<KernelLaunch> launches;
  int operands = 1;  // the key, and the passenger if any
  // Loop iterations of one invocation in any launch (lavapipe's limit).
  int64_t loop_iterations = 0;
  // Specialization constants 1 on: the chunk of element numbers a tile
  // pass's workgroup holds, then shape.Words().
  std::vector<uint32_t> specialization() const;
};

// The plan for `sort` on a device with `features`; nullopt for every other
// sort (see above), and where the rows padded to a power of two pass 2^31
// elements.
std::optional<SortPlan> PlanSort(const Instruction& sort, const ShaderFeatures& features);

// PlanSort for a kernel whose root is a sort of its parameters in order;
// nullopt for every other kernel.
std::optional<SortPlan> PlanKernelSort(const Computation& kernel, const ShaderFeatures& features);

}  // namespace kiln::vulkan
