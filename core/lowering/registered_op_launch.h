// A call of a registered op (core/op_registry.h) that runs as its device
// kernel on vulkan or cuda: the shared device lowering makes it a library
// call step of its own, and the backend launches the user's code with what
// this plans at compile time, the frame documented in kiln.h
// (kiln_user_op_register_device_kernel): one buffer per argument then per
// result, each buffer's element count, then the op's int and bool
// attributes in definition order; and the device call frame
// (user_op_device_frame.h) for kernels that take it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/op_registry.h"
#include "core/status.h"

namespace kiln {

struct RegisteredOpLaunch {
  std::string op;           // the registered op, for messages
  std::string instruction;  // the call's name, for messages
  std::shared_ptr<const OpDeviceKernel> kernel;
  std::vector<int64_t> element_counts;  // per argument, then per result
  std::vector<int64_t> scalar_attrs;    // int and bool attributes (bool 0/1), definition order
  size_t num_args = 0;
  size_t num_results = 0;
  std::vector<uint64_t> frame;  // the device call frame's cells (BuildUserOpDeviceFrame)
  uint32_t block_size = 0;      // the kernel's, else the backend's default
  uint64_t grid_size = 0;       // the kernel's, else ceil(result 0's elements / block_size), >= 1
};

// Whether `instruction` is a custom-call of a registered op with a device
// kernel for `backend` and the call's element type.
bool CallsRegisteredDeviceKernel(const Instruction& instruction, std::string_view backend);

// The launch of `call` on `backend` (whose default block size is
// `default_block_size`); the call is checked against the op's definition.
// UNIMPLEMENTED naming op, backend and type when there is no kernel.
StatusOr<RegisteredOpLaunch> PlanRegisteredOpLaunch(const Instruction& call, std::string_view backend,
                                                    uint32_t default_block_size);

}  // namespace kiln
