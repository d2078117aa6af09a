// What a SPIR-V compute entry point asks of its pipeline: the descriptor
// bindings it uses and whether it reads push constants. A registered op's
// shader is checked against the op's frame with this before a pipeline is
// made, so a mismatch is an error naming the op, not a driver fault.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kiln::vulkan {

// The scalar type of a storage buffer's array elements, when the block ends
// in an array of scalars (`buffer B { float x[]; }`); kUnknown otherwise
// (vectors, structs, a block of plain members).
struct SpirvScalar {
  enum class Kind { kUnknown, kFloat, kInt };
  Kind kind = Kind::kUnknown;
  uint32_t bits = 0;
  bool is_signed = false;  // kInt only
};

struct SpirvBinding {
  uint32_t set = 0;
  uint32_t binding = 0;
  bool storage_buffer = false;  // StorageBuffer storage class (else a uniform, image or sampler)
  SpirvScalar element;          // storage buffers only
};

struct SpirvInterface {
  std::vector<SpirvBinding> bindings;  // in the module's order
  bool push_constants = false;
};

// The interface of `entry` in `words`: the variables its OpEntryPoint lists
// (SPIR-V 1.4 and later list every global it uses), else every global of
// the module. INVALID_ARGUMENT when the words are not a SPIR-V module or
// have no such entry point.
StatusOr<SpirvInterface> ReflectSpirvInterface(std::span<const uint32_t> words, std::string_view entry);

}  // namespace kiln::vulkan
