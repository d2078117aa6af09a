// Op handles of the C builder. A kiln_op_t is (builder tag << 32) | index:
// the tag is unique to one live builder, so an op of another builder, of a
// destroyed builder, or a made-up value is refused by name instead of being
// read as an index into the wrong builder's ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "capi/include/kiln/kiln.h"
#include "core/status.h"

namespace kiln::capi {

// Ops one builder may hold: the index must fit in a handle's low 32 bits.
inline constexpr size_t kMaxOpsPerBuilder = (size_t{1} << 32) - 1;

// Gives a new builder named `name` a tag no live builder has (never 0, below
// 2^31, so every handle is positive) and records its name for the messages
// of other builders. Thread-safe. Throws std::bad_alloc only.
uint32_t AcquireBuilderTag(const std::string& name);
// Forgets a destroyed builder's tag. Thread-safe; never throws.
void ReleaseBuilderTag(uint32_t tag) noexcept;

inline kiln_op_t OpHandle(uint32_t tag, size_t index) {
  return static_cast<kiln_op_t>((static_cast<uint64_t>(tag) << 32) | static_cast<uint64_t>(index));
}

// The index of `handle` among the ops of the builder (`tag`, `name`, holding
// `num_ops` ops), or INVALID_ARGUMENT from `function` naming `what` (such as
// "operand 'lhs'"), the handle and, for an op of another live builder, that
// builder.
StatusOr<size_t> OpIndex(const char* function, std::string_view what, kiln_op_t handle, uint32_t tag,
                         const std::string& name, size_t num_ops);

}  // namespace kiln::capi
