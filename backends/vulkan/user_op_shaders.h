// Registered ops on vulkan: a call of an op with a SPIR-V kernel
// (kiln_user_op_register_device_kernel) is a library-call step of the
// shared device lowering, dispatched as the user's compute shader with the
// frame kiln.h documents: a storage buffer per argument then per result at
// set 0, push constants holding each buffer's element count and then the
// op's int and bool attributes (only for a shader that declares push
// constants), the device call frame (user_op_device_frame.h) as a storage
// buffer after the results' (only for a shader that declares that
// binding), the workgroup size as specialization constant 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_buffer.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_kernel.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::vulkan {

// Invocations per workgroup when the kernel does not give its own.
constexpr uint32_t kUserOpWorkgroupSize = 64;

struct UserOpDispatch {
  KernelSpec spec;                        // the user's SPIR-V, entry point, buffers, push bytes
  std::vector<std::byte> push_constants;  // the frame's counts and attributes
  std::vector<uint64_t> frame;            // the device call frame, bound after the results; empty: unused
  uint32_t groups = 1;
};

// Whether `instruction` calls a registered op with a vulkan kernel for its
// element type (the lowering's library-call rule).
bool RunsAsUserOpShader(const Instruction& instruction);

// The dispatch of `call`: the SPIR-V validated for Vulkan 1.2, its bindings
// checked against the op's buffers and the frame built. INVALID_ARGUMENT
// naming the op when the validator refuses the code, the shader uses a
// binding that is not the frame's (another set, a binding past the frame
// buffer, an image or uniform buffer), or, for a shader with push
// constants, a count or attribute does not fit 32 bits or the push
// constants pass 128 bytes.
StatusOr<UserOpDispatch> PlanUserOpDispatch(const Instruction& call);

// The pipeline of `dispatch` on `device`; INVALID_ARGUMENT naming the op
// when its workgroups pass the device's limit (or the pipeline's limits,
// Kernel::Create).
StatusOr<std::shared_ptr<Kernel>> CreateUserOpKernel(std::shared_ptr<Device> device,
                                                     const UserOpDispatch& dispatch);

// The storage buffer holding `dispatch`'s call frame, uploaded; null when
// the shader does not read it. INVALID_ARGUMENT naming the op when the
// frame passes the device's storage buffer range.
StatusOr<std::shared_ptr<Buffer>> CreateUserOpFrame(std::shared_ptr<Device> device,
                                                    const UserOpDispatch& dispatch);

}  // namespace kiln::vulkan
