// When and how a kernel runs the library scatter-add
// (shaders/scatter_add.comp): a kernel that is one scatter of its three
// parameters adding rows, jnp's x.at[i].add(u) on the leading dimension:
// an f32 (where the device adds floats atomically,
// shaderBufferFloat32AtomicAdd), s32 or u32 operand of rank >= 1, s32 or
// u32 indices of one component (index_vector_dim last and of extent 1, or
// past the indices' dimensions), each index picking a whole row
// (inserted_window_dims and scatter_dims_to_operand_dims {0}, the updates'
// window dimensions the operand's others, whole). Every other scatter
// (other combiners, element and index types, windows and batching
// dimensions) keeps the generated scatter (glsl_atomic_scatter.h), whose
// combiners are inlined into the GLSL.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/vulkan/library_shaders.h"
#include "backends/vulkan/shader_features.h"
#include "core/compiler/kernel_description.h"
#include "core/ir.h"

namespace kiln::vulkan {

// Specialization constants 1 on of shaders/scatter_add.comp, in order (its
// push constant is each launch's mode).
struct ScatterAddShape {
  uint32_t outputs = 0;
  uint32_t updates = 0;
  uint32_t window = 1;
  uint32_t rows = 0;

  std::vector<uint32_t> Words() const;
};

struct ScatterAddPlan {
  LibraryShader shader = LibraryShader::kScatterAddI32;
  ScatterAddShape shape;
  // Invocations a workgroup (specialization constant 0): as many as the
  // device allows up to 256, whole subgroups where it can.
  uint32_t workgroup_size = 64;
  // The copy, then the adds; parameters {mode}.
  std::vector<KernelLaunch> launches;
  // Loop iterations of one invocation in either launch (lavapipe's limit).
  int64_t loop_iterations = 0;
};

// The plan for `scatter` on a device with `features`; nullopt for every
// other scatter (see above) and arrays of 2^31 elements or more.
std::optional<ScatterAddPlan> PlanScatterAdd(const Instruction& scatter, const ShaderFeatures& features);

// PlanScatterAdd for a kernel whose root is a scatter of its three
// parameters in order; nullopt for every other kernel.
std::optional<ScatterAddPlan> PlanKernelScatterAdd(const Computation& kernel, const ShaderFeatures& features);

}  // namespace kiln::vulkan
