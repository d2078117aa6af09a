// What a Vulkan device can run, as the code generator needs to know it: a
// plain struct with no Vulkan types, so that code which chooses kernel
// variants can include it without the Vulkan headers. Every optional feature
// listed here is enabled on the logical device when the device has it, so
// `true` means "a shader may use it".
#pragma once

#include <cstdint>

namespace kiln::vulkan {

struct DeviceFeatures {
  // Arithmetic types in shaders (shaderFloat16, shaderFloat64, shaderInt8,
  // shaderInt16, shaderInt64).
  bool f16 = false;
  bool f64 = false;
  bool i8 = false;
  bool i16 = false;
  bool i64 = false;
  // 8- and 16-bit types in storage buffers (storageBuffer8BitAccess,
  // storageBuffer16BitAccess).
  bool storage8 = false;
  bool storage16 = false;
  // Atomics on storage buffers beyond 32-bit integers.
  bool int64_atomics = false;       // shaderBufferInt64Atomics
  bool float32_atomic_add = false;  // VK_EXT_shader_atomic_float
  bool float64_atomic_add = false;  // VK_EXT_shader_atomic_float

  // Subgroup operations usable in compute shaders (GL_KHR_shader_subgroup_*).
  bool subgroup_basic = false;
  bool subgroup_vote = false;
  bool subgroup_arithmetic = false;
  bool subgroup_ballot = false;
  bool subgroup_shuffle = false;
  bool subgroup_shuffle_relative = false;
  bool subgroup_clustered = false;
  bool subgroup_quad = false;
  // The device's subgroup size (never assume 32: lavapipe has 8, AMD 64).
  uint32_t subgroup_size = 0;

  // Float controls (shaderSignedZeroInfNanPreserveFloat16/32/64): a shader
  // may ask the device to keep NaN, infinities and the sign of zero exactly.
  // Without it a driver may assume no NaN: NVIDIA's folded `x != x` to false.
  bool preserves_nan_f16 = false;
  bool preserves_nan_f32 = false;
  bool preserves_nan_f64 = false;
  // Float controls (shaderDenormPreserveFloat16/32/64): a shader may ask the
  // device to keep subnormal values (DenormPreserve), and Kiln's kernels do
  // for the widths they use; set only where the device lets that width's
  // denormal mode be chosen alone (denormBehaviorIndependence), since a
  // kernel may use f32 alone (ReadFloatControls). Without it the device
  // may flush them to zero, in operands and results: lavapipe (Mesa 22.3)
  // has none, yet keeps them in its arithmetic (not in its exp, log and pow
  // builtins, which Kiln's f32 helpers work around: glsl_f32_exp_log.h).
  bool preserves_denormals_f16 = false;
  bool preserves_denormals_f32 = false;
  bool preserves_denormals_f64 = false;

  bool timeline_semaphore = false;
  bool maintenance4 = false;      // lets SPIR-V 1.6 LocalSizeId pass validation
  bool push_descriptors = false;  // VK_KHR_push_descriptor (and Kiln uses it)

  // Limits.
  uint32_t max_workgroup_size[3] = {0, 0, 0};
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  uint32_t max_shared_memory_bytes = 0;
  uint32_t max_push_constant_bytes = 0;
  uint32_t max_storage_buffers_per_stage = 0;
  uint64_t max_storage_buffer_range = 0;  // bytes one binding may cover
  uint64_t max_allocation_bytes = 0;      // maxMemoryAllocationSize
  uint64_t min_storage_buffer_offset_alignment = 0;
};

}  // namespace kiln::vulkan
