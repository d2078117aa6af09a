#include "backends/cuda/user_op_kernels.h"

#include "core/lowering/registered_op_launch.h"

namespace kiln::cuda {
namespace {

constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint64_t kMaxBlocks = 0x7fffffff;  // gridDim.x
constexpr size_t kJitLogBytes = 16384;

}  // namespace

bool RunsAsUserOpKernel(const Instruction& instruction) {
  return CallsRegisteredDeviceKernel(instruction, "cuda");
}

StatusOr<UserOpLaunch> PlanUserOpLaunch(const Instruction& call) {
  KILN_ASSIGN_OR_RETURN(RegisteredOpLaunch planned,
                        PlanRegisteredOpLaunch(call, "cuda", kUserOpThreadsPerBlock));
  UserOpLaunch launch;
  launch.label = "op '" + planned.op + "' (instruction '" + planned.instruction + "') on cuda";
  launch.ptx.assign(planned.kernel->code.begin(), planned.kernel->code.end());
  launch.entry = planned.kernel->entry;
  launch.scalars = planned.element_counts;
  launch.scalars.insert(launch.scalars.end(), planned.scalar_attrs.begin(), planned.scalar_attrs.end());
  if (planned.block_size > kMaxThreadsPerBlock)
    return InvalidArgument(launch.label, ": ", planned.block_size, " threads per block pass CUDA's limit of ",
                           kMaxThreadsPerBlock);
  if (planned.grid_size > kMaxBlocks)
    return InvalidArgument(launch.label, ": ", planned.grid_size, " blocks pass CUDA's limit of ", kMaxBlocks,
                           "; register it with a larger block size");
  launch.block = planned.block_size;
  launch.grid = static_cast<uint32_t>(planned.grid_size);
  return launch;
}

StatusOr<LoadedUserOp> LoadUserOpKernel(const Driver& driver, const UserOpLaunch& launch) {
  LoadedUserOp loaded;
  std::vector<char> error_log(kJitLogBytes, 0);
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size()))};
  const CUresult result = driver.api().ModuleLoadDataEx(&loaded.module, launch.ptx.c_str(), 2, keys, values);
  if (result != CUDA_SUCCESS) {
    const Status status = driver.Check(result, "cuModuleLoadDataEx");
    error_log.back() = 0;
    return InvalidArgument(launch.label, ": the driver refuses its PTX: ", status.message(),
                           "; the JIT log: ", error_log[0] != 0 ? std::string(error_log.data()) : "(empty)");
  }
  const CUresult found =
      driver.api().ModuleGetFunction(&loaded.function, loaded.module, launch.entry.c_str());
  if (found != CUDA_SUCCESS) {
    const Status status = driver.Check(found, "cuModuleGetFunction(" + launch.entry + ")");
    driver.api().ModuleUnload(loaded.module);
    return InvalidArgument(launch.label, ": ", status.message());
  }
  return loaded;
}

Status RunUserOpKernel(const Driver& driver, const LoadedUserOp& loaded, const UserOpLaunch& launch,
                       std::span<const CUdeviceptr> buffers, CUstream stream) {
  std::vector<CUdeviceptr> pointers(buffers.begin(), buffers.end());
  std::vector<int64_t> scalars = launch.scalars;
  std::vector<void*> parameters;
  for (CUdeviceptr& pointer : pointers) parameters.push_back(&pointer);
  for (int64_t& scalar : scalars) parameters.push_back(&scalar);
  return driver.Check(driver.api().LaunchKernel(loaded.function, launch.grid, 1, 1, launch.block, 1, 1, 0,
                                                stream, parameters.data(), nullptr),
                      "cuLaunchKernel(" + launch.entry + ") of " + launch.label);
}

}  // namespace kiln::cuda
