#include "backends/cuda/user_op_kernels.h"

#include "backends/cuda/ptx_entry_parameters.h"
#include "core/lowering/registered_op_launch.h"

namespace kiln::cuda {
namespace {

constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint64_t kMaxBlocks = 0x7fffffff;  // gridDim.x
constexpr size_t kJitLogBytes = 16384;

// Whether the kernel takes the frame pointer, after checking that its
// parameters are the frame's: every one 8 bytes, as many as the buffers'
// pointers, their counts and the int and bool attributes, or one more.
StatusOr<bool> TakesFramePointer(const std::string& label, const std::string& ptx, const std::string& entry,
                                 size_t buffers, size_t scalar_attrs) {
  StatusOr<std::vector<PtxEntryParameter>> parameters = ReadPtxEntryParameters(ptx, entry);
  if (!parameters.ok()) return InvalidArgument(label, ": ", parameters.status().message());
  const size_t expected = 2 * buffers + scalar_attrs;
  const std::string frame = std::to_string(buffers) + " buffer pointer(s), " + std::to_string(buffers) +
                            " element count(s), " + std::to_string(scalar_attrs) +
                            " int/bool attribute(s), then optionally the call frame's pointer, each 8 bytes";
  if (parameters->size() != expected && parameters->size() != expected + 1)
    return InvalidArgument(label, ": its PTX entry '", entry, "' declares ", parameters->size(),
                           " parameter(s); the op's frame has ", expected, " or ", expected + 1, " (", frame,
                           ")");
  for (size_t k = 0; k < parameters->size(); ++k) {
    const PtxEntryParameter& parameter = (*parameters)[k];
    if (parameter.bytes != 8)
      return InvalidArgument(label, ": parameter ", k, " ('", parameter.name, "') of its PTX entry '", entry,
                             "' is ", parameter.bytes, " bytes; every parameter of the frame is 8 (", frame,
                             ")");
  }
  return parameters->size() == expected + 1;
}

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
  KILN_ASSIGN_OR_RETURN(const bool takes_frame,
                        TakesFramePointer(launch.label, launch.ptx, launch.entry,
                                          planned.element_counts.size(), planned.scalar_attrs.size()));
  if (takes_frame) launch.frame = planned.frame;
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
  CUdeviceptr frame = loaded.frame;
  if (!launch.frame.empty()) parameters.push_back(&frame);
  return driver.Check(driver.api().LaunchKernel(loaded.function, launch.grid, 1, 1, launch.block, 1, 1, 0,
                                                stream, parameters.data(), nullptr),
                      "cuLaunchKernel(" + launch.entry + ") of " + launch.label);
}

}  // namespace kiln::cuda
