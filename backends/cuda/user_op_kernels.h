// Registered ops on cuda: a call of an op with a PTX kernel
// (kiln_user_op_register_device_kernel) is a library-call step of the
// shared device lowering, launched as the user's kernel with the frame
// kiln.h documents: a device pointer per argument then per result, an
// int64 element count per argument then per result, then the op's int and
// bool attributes as int64, then (for a kernel that declares one more
// parameter) a pointer to the device call frame (user_op_device_frame.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.h"
#include "core/ir.h"
#include "core/status.h"

namespace kiln::cuda {

// Threads per block when the kernel does not give its own.
constexpr uint32_t kUserOpThreadsPerBlock = 256;

struct UserOpLaunch {
  std::string label;  // "op 'NAME' (instruction 'I')", for messages
  std::string ptx;
  std::string entry;
  std::vector<int64_t> scalars;  // element counts, then the int and bool attributes
  std::vector<uint64_t> frame;   // the device call frame, its pointer last; empty: the kernel takes none
  uint32_t block = 0;
  uint32_t grid = 0;
};

// Whether `instruction` calls a registered op with a cuda kernel for its
// element type (the lowering's library-call rule).
bool RunsAsUserOpKernel(const Instruction& instruction);

// The launch of `call`; INVALID_ARGUMENT naming the op when its block or
// grid passes CUDA's limits (1024 threads, 2^31 - 1 blocks) or its PTX
// entry's parameters are not the frame's (their number, or one that is not
// 8 bytes).
StatusOr<UserOpLaunch> PlanUserOpLaunch(const Instruction& call);

// A user kernel loaded into the current context: its own module, since its
// PTX is the user's.
struct LoadedUserOp {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUdeviceptr frame = 0;  // the call frame in device memory (the executable owns it); 0: none
};
// INVALID_ARGUMENT naming the op, with the JIT's log, when the driver
// refuses the PTX or finds no such entry.
StatusOr<LoadedUserOp> LoadUserOpKernel(const Driver& driver, const UserOpLaunch& launch);

// Queues `launch` on `stream` with `buffers` (arguments, then results).
Status RunUserOpKernel(const Driver& driver, const LoadedUserOp& loaded, const UserOpLaunch& launch,
                       std::span<const CUdeviceptr> buffers, CUstream stream);

}  // namespace kiln::cuda
