// The device call frame of a registered op's device kernel: everything of
// the host call frame (kiln_op_call_frame_t) a kernel can use on a device,
// as one block of 64-bit little-endian cells that the backend puts in a
// storage buffer (vulkan) or device memory behind a pointer parameter
// (cuda). Its layout is documented in kiln.h
// (kiln_user_op_register_device_kernel): a header, a record per buffer and
// per attribute, then the values the records point at. The block is fixed
// at compile time (shapes and attributes are), so a backend uploads it once
// per executable.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/op_registry.h"
#include "core/shape.h"

namespace kiln {

// The frame's layout version (cell 0).
constexpr uint64_t kUserOpDeviceFrameVersion = 1;
// Cells before the buffer records: version, size in cells, arguments,
// results, attributes.
constexpr size_t kUserOpDeviceFrameHeaderCells = 5;
// Cells of one buffer or attribute record.
constexpr size_t kUserOpDeviceFrameRecordCells = 4;

// The frame of a call with `args` and `results` (array shapes) and the
// op's attributes `attrs` (resolved, definition order): cells as
// kiln.h lays them out. Strings have no device value (count 0); tensors
// have a header each and their elements after every other cell.
std::vector<uint64_t> BuildUserOpDeviceFrame(std::span<const Shape> args, std::span<const Shape> results,
                                             const AttrList& attrs);

}  // namespace kiln
