// What the Vulkan backend's GLSL emitter can run as a kernel of one
// instruction on a device with `features`, declared per opcode
// (core/compiler/emittable_table.h): the fusion pass and UnsupportedOps read
// it; it answers as CheckGlslEmittable on the instruction's own computation
// would, and only ops whose answer depends on the instance (loops that may
// pass the device's limit, attributes, constants' sizes) are emitted, in
// place (CheckGlslInstructionEmittable). A kernel binds at most the device's
// storage buffers (ShaderFeatures::max_storage_buffers), so fusion never
// builds one that the device could not bind.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/vulkan/shader_features.h"
#include "core/compiler/emittable_table.h"

namespace kiln::vulkan {

// Building the table emits a line of GLSL per unary and binary op and
// element type: a backend builds it once per device and keeps it.
std::shared_ptr<const compiler::EmittableTable> MakeGlslEmittableTable(const ShaderFeatures& features);

// How many tables MakeGlslEmittableTable has built in this process (for tests).
int64_t GlslEmittableTablesMade();

}  // namespace kiln::vulkan
