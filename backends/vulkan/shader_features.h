// What a Vulkan device can do that the GLSL code generator needs to know: the
// optional element types (as shader arithmetic and as storage-buffer
// elements) and the sizes that shape kernels. The runtime fills it from the
// device's features and properties; the code generator refuses, by name, a
// kernel that needs something the device lacks instead of emitting code the
// device would reject or run wrongly.
#pragma once

#include <cstdint>

namespace kiln::vulkan {

struct ShaderFeatures {
  bool f16 = false;        // shaderFloat16: float16_t arithmetic
  bool f64 = false;        // shaderFloat64: double arithmetic
  bool i8 = false;         // shaderInt8: int8_t arithmetic
  bool i16 = false;        // shaderInt16: int16_t arithmetic
  bool i64 = false;        // shaderInt64: int64_t arithmetic
  bool storage8 = false;   // storageBuffer8BitAccess: 8-bit buffer elements
  bool storage16 = false;  // storageBuffer16BitAccess: 16-bit buffer elements
  // Per float width, whether shaders may declare SignedZeroInfNanPreserve
  // (Vulkan's float controls); every kernel declares it for the widths it
  // uses where the device allows, since HLO's compares and selects rely on
  // IEEE NaN and infinities.
  bool preserves_nan_f16 = false;
  bool preserves_nan_f32 = false;
  bool preserves_nan_f64 = false;
  // Per float width, whether shaders may declare DenormPreserve; every
  // kernel does for the widths it uses where the device allows, so that
  // subnormals are kept as on the interpreter and cpu.
  bool preserves_denormals_f16 = false;
  bool preserves_denormals_f32 = false;
  bool preserves_denormals_f64 = false;
  int subgroup_size = 0;
  // subgroupShuffleXor in compute shaders: reductions whose kernel is the
  // reduce take a subgroup per output element.
  bool subgroup_shuffle = false;
  // shaderBufferFloat32AtomicAdd (VK_EXT_shader_atomic_float): a scatter
  // that adds f32 uses atomicAdd, not a compare-and-swap loop
  // (glsl_atomic_scatter.h).
  bool float32_atomic_add = false;
  int max_workgroup_size = 0;  // maxComputeWorkGroupSize[0] (and invocations)
  // maxComputeSharedMemorySize: what one workgroup's `shared` arrays may
  // take (the sort's tiles are sized by it); 0: unknown (small tiles).
  int64_t max_shared_memory_bytes = 0;
  // The most storage buffers one dispatch binds (maxPerStageDescriptorStorage-
  // Buffers, and maxPushDescriptors where Kiln pushes them); 0: unlimited.
  // Every buffer of a kernel is one: its inputs, outputs and scratch.
  int max_storage_buffers = 0;
  // The most loop iterations (all loops together) one shader invocation may
  // run; 0: unlimited. Mesa's lavapipe silently ends an invocation after
  // 65535, so a longer loop would come out short.
  int64_t max_loop_iterations = 0;
  // A CPU device (VkPhysicalDeviceType CPU: lavapipe): its invocations are
  // a few SIMD lanes on a few cores, so a short row's sort is cheaper as one
  // invocation's merge sort than as the bitonic network (glsl_serial_sort.h).
  bool cpu_device = false;

  // The two limits above, or where unknown (0) what the Vulkan
  // specification requires of every device (maxComputeSharedMemorySize
  // 16384, maxComputeWorkGroupInvocations 128).
  int64_t SharedMemoryBytesOrMinimum() const {
    return max_shared_memory_bytes > 0 ? max_shared_memory_bytes : 16384;
  }
  int64_t WorkgroupInvocationsOrMinimum() const { return max_workgroup_size > 0 ? max_workgroup_size : 128; }
};

// Everything on: what the code-generation tests assume (lavapipe has all of it).
inline ShaderFeatures AllShaderFeatures() {
  ShaderFeatures features;
  features.f16 = features.f64 = features.i8 = features.i16 = features.i64 = true;
  features.storage8 = features.storage16 = true;
  features.preserves_nan_f16 = features.preserves_nan_f32 = features.preserves_nan_f64 = true;
  features.subgroup_size = 8;
  features.subgroup_shuffle = true;
  features.float32_atomic_add = true;
  features.max_workgroup_size = 1024;
  features.max_shared_memory_bytes = 32768;
  return features;
}

}  // namespace kiln::vulkan
