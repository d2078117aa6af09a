// The Vulkan backend: the device Instance::ChooseDevice picks (a discrete
// GPU before an integrated one, before a CPU device such as lavapipe;
// KILN_VULKAN_DEVICE overrides). Compiling runs the core passes, lowers the
// module through the shared device lowering and renders each kernel as a
// GLSL compute shader compiled to SPIR-V (vulkan_program.h); executing
// records the steps into command lists (vulkan_executable.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backends/vulkan/shader_features.h"
#include "backends/vulkan/vulkan_device_features.h"
#include "core/backend.h"

namespace kiln::vulkan {

// UNAVAILABLE, with the reason, when there is no Vulkan loader, driver or
// usable device.
StatusOr<std::unique_ptr<Backend>> CreateVulkanBackend();

// Test hook: `edit` changes the shader features of every vulkan backend
// created after this call (so lavapipe can play a device without, say,
// float controls); an empty function restores the device's own. Thread-safe.
void SetShaderFeaturesOverrideForTesting(std::function<void(ShaderFeatures&)> edit);

// The optional features as `kiln info` lists them, e.g. "f16 f64 i8 i16 i64
// int64-atomics subgroup-arithmetic".
std::string FeatureList(const DeviceFeatures& features);

// What the device does with subnormal floats, per width Kiln computes in:
// "f32 denormals: preserved" where kernels ask it to keep them
// (DenormPreserve, DeviceFeatures::preserves_denormals_f32), "f32
// denormals: may flush" where it does not promise to; f64 likewise where the device has f64. f16 and bf16
// compute in f32: f16's subnormals are normal f32 values, bf16's are f32's.
std::string DenormalBehaviour(const DeviceFeatures& features);

}  // namespace kiln::vulkan
