// What the Vulkan backend's GLSL emitter can run as a kernel of one
// instruction on a device with `features`, declared per opcode
// (core/compiler/emittable_table.h): the fusion pass and UnsupportedOps read
// it; it answers as CheckGlslEmittable on the instruction's own computation
// would, and only ops whose answer depends on the instance (loops that may
// pass the device's limit, attributes, constants' sizes) are emitted, in
// place (CheckGlslInstructionEmittable).
#pragma once

#include <memory>

#include "backends/vulkan/shader_features.h"
#include "core/compiler/emittable_table.h"

namespace kiln::vulkan {

std::shared_ptr<const compiler::EmittableTable> MakeGlslEmittableTable(const ShaderFeatures& features);

}  // namespace kiln::vulkan
