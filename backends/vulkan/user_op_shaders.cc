#include "backends/vulkan/user_op_shaders.h"

#include <climits>
#include <cstring>

#include <spirv-tools/libspirv.hpp>

#include "core/lowering/registered_op_launch.h"

namespace kiln::vulkan {
namespace {

// Every Vulkan device takes at least 128 bytes of push constants.
constexpr size_t kMaxFrameBytes = 128;

void AppendWord(std::vector<std::byte>& bytes, uint32_t word) {
  const size_t at = bytes.size();
  bytes.resize(at + sizeof word);
  std::memcpy(bytes.data() + at, &word, sizeof word);
}

}  // namespace

bool RunsAsUserOpShader(const Instruction& instruction) {
  return CallsRegisteredDeviceKernel(instruction, "vulkan");
}

StatusOr<UserOpDispatch> PlanUserOpDispatch(const Instruction& call) {
  KILN_ASSIGN_OR_RETURN(RegisteredOpLaunch launch,
                        PlanRegisteredOpLaunch(call, "vulkan", kUserOpWorkgroupSize));
  const std::string label = "op '" + launch.op + "' (instruction '" + launch.instruction + "') on vulkan";
  const std::vector<uint8_t>& code = launch.kernel->code;
  UserOpDispatch dispatch;
  dispatch.spec.name = "op '" + launch.op + "' (" + launch.kernel->entry + ")";
  dispatch.spec.spirv.resize(code.size() / sizeof(uint32_t));
  std::memcpy(dispatch.spec.spirv.data(), code.data(), dispatch.spec.spirv.size() * sizeof(uint32_t));
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string messages;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& position, const char* message) {
        messages += "\n  word " + std::to_string(position.index) + ": " + message;
      });
  if (!tools.Validate(dispatch.spec.spirv)) {
    return InvalidArgument(label, ": the SPIR-V validator (Vulkan 1.2) refuses its kernel", messages);
  }
  dispatch.spec.entry_point = launch.kernel->entry;
  dispatch.spec.buffer_count = static_cast<uint32_t>(launch.element_counts.size());
  dispatch.spec.workgroup_size_x = launch.block_size;
  for (size_t i = 0; i < launch.element_counts.size(); ++i) {
    if (launch.element_counts[i] > UINT32_MAX)
      return InvalidArgument(label, ": buffer ", i, " has ", launch.element_counts[i],
                             " elements, more than the frame's 32-bit count holds");
    AppendWord(dispatch.push_constants, static_cast<uint32_t>(launch.element_counts[i]));
  }
  for (size_t i = 0; i < launch.scalar_attrs.size(); ++i) {
    const int64_t value = launch.scalar_attrs[i];
    if (value < INT32_MIN || value > INT32_MAX)
      return InvalidArgument(label, ": int attribute ", i, " (", value,
                             ") does not fit the frame's 32-bit int");
    AppendWord(dispatch.push_constants, static_cast<uint32_t>(static_cast<int32_t>(value)));
  }
  if (dispatch.push_constants.size() > kMaxFrameBytes) {
    return InvalidArgument(
        label, ": its frame takes ", dispatch.push_constants.size(),
        " bytes of push constants (a count per buffer, then the int and bool attributes); ", "the limit is ",
        kMaxFrameBytes);
  }
  dispatch.spec.push_constant_bytes = static_cast<uint32_t>(dispatch.push_constants.size());
  if (launch.grid_size > UINT32_MAX)
    return InvalidArgument(label, ": ", launch.grid_size, " workgroups do not fit a dispatch");
  dispatch.groups = static_cast<uint32_t>(launch.grid_size);
  return dispatch;
}

StatusOr<std::shared_ptr<Kernel>> CreateUserOpKernel(std::shared_ptr<Device> device,
                                                     const UserOpDispatch& dispatch) {
  const uint32_t max_groups = device->features().max_workgroup_count[0];
  if (dispatch.groups > max_groups) {
    return InvalidArgument("vulkan: kernel of ", dispatch.spec.name, ": ", dispatch.groups,
                           " workgroups pass the device's limit of ", max_groups,
                           "; register it with a larger block size");
  }
  return Kernel::Create(std::move(device), dispatch.spec);
}

}  // namespace kiln::vulkan
