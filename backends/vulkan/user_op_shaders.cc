#include "backends/vulkan/user_op_shaders.h"

#include <climits>
#include <cstring>
#include <string>

#include <spirv-tools/libspirv.hpp>

#include "backends/vulkan/spirv_interface.h"
#include "core/element_type.h"
#include "core/lowering/registered_op_launch.h"
#include "core/lowering/user_op_device_frame.h"

namespace kiln::vulkan {
namespace {

// Every Vulkan device takes at least 128 bytes of push constants.
constexpr size_t kMaxFrameBytes = 128;

void AppendWord(std::vector<std::byte>& bytes, uint32_t word) {
  const size_t at = bytes.size();
  bytes.resize(at + sizeof word);
  std::memcpy(bytes.data() + at, &word, sizeof word);
}

// Whether the shader reads the call frame (binding num_args + num_results),
// after checking that every binding it uses is one the launch binds: a
// storage buffer of set 0, an argument's, a result's or the frame's.
StatusOr<bool> UsesFrameBinding(const std::string& label, const SpirvInterface& interface, size_t num_args,
                                size_t num_results) {
  const size_t buffers = num_args + num_results;
  const std::string frame = std::to_string(num_args) + " argument(s) at bindings 0.., " +
                            std::to_string(num_results) +
                            " result(s) after them, the call frame at binding " + std::to_string(buffers) +
                            ", all storage buffers of set 0";
  bool uses_frame = false;
  for (const SpirvBinding& binding : interface.bindings) {
    const std::string where =
        "(set " + std::to_string(binding.set) + ", binding " + std::to_string(binding.binding) + ")";
    if (binding.set != 0 || binding.binding > buffers)
      return InvalidArgument(label, ": its shader uses ", where, ", which the op's frame does not have (",
                             frame, ")");
    if (!binding.storage_buffer)
      return InvalidArgument(label, ": its shader declares ", where,
                             " as something other than a storage buffer (", frame, ")");
    uses_frame = uses_frame || binding.binding == buffers;
  }
  return uses_frame;
}

// Whether an array of `scalar` can hold a buffer of `type`'s elements: a
// float array only the float type of its width (a complex type: its
// parts'), since a float read of integer bits is a value, not a bit cast;
// an integer array holds any data as bits (uint words[] reading f32 through
// uintBitsToFloat, s64 as word pairs or bytes packed four to a word are
// common), so it is not checked.
bool ArrayHolds(const SpirvScalar& scalar, ElementType type) {
  if (scalar.kind != SpirvScalar::Kind::kFloat) return true;
  const int bits = BitWidth(type);
  if (IsComplex(type)) return static_cast<int>(scalar.bits) * 2 == bits;
  return IsFloating(type) && type != ElementType::kBF16 && static_cast<int>(scalar.bits) == bits;
}

// GLSL's name of `scalar` (float, double, int, uint, int64_t, uint64_t, ...).
std::string ScalarName(const SpirvScalar& scalar) {
  if (scalar.kind == SpirvScalar::Kind::kFloat)
    return scalar.bits == 32   ? "float"
           : scalar.bits == 64 ? "double"
                               : "float" + std::to_string(scalar.bits) + "_t";
  const std::string base = scalar.is_signed ? "int" : "uint";
  return scalar.bits == 32 ? base : base + std::to_string(scalar.bits) + "_t";
}

// Each argument's and result's binding, where the shader's block ends in
// an array of scalars, can hold its buffer (ArrayHolds): a float array
// bound to an s32 argument reads garbage, so it is an error naming the
// binding. The buffers' element types are the frame's records.
Status CheckBufferElementTypes(const std::string& label, const SpirvInterface& interface,
                               const RegisteredOpLaunch& launch) {
  const size_t buffers = launch.num_args + launch.num_results;
  for (const SpirvBinding& binding : interface.bindings) {
    if (binding.binding >= buffers || binding.element.kind == SpirvScalar::Kind::kUnknown) continue;
    const size_t record = kUserOpDeviceFrameHeaderCells + binding.binding * kUserOpDeviceFrameRecordCells;
    if (record >= launch.frame.size()) continue;
    const auto type = static_cast<ElementType>(launch.frame[record]);
    if (!ArrayHolds(binding.element, type)) {
      const bool argument = binding.binding < launch.num_args;
      const size_t index = argument ? binding.binding : binding.binding - launch.num_args;
      return InvalidArgument(label, ": its shader's binding ", binding.binding, " is an array of ",
                             ScalarName(binding.element), ", but ", argument ? "argument " : "result ", index,
                             " bound there is ", ElementTypeName(type));
    }
  }
  return OkStatus();
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
  StatusOr<SpirvInterface> interface = ReflectSpirvInterface(dispatch.spec.spirv, launch.kernel->entry);
  if (!interface.ok()) return InvalidArgument(label, ": ", interface.status().message());
  KILN_ASSIGN_OR_RETURN(const bool uses_frame,
                        UsesFrameBinding(label, *interface, launch.num_args, launch.num_results));
  dispatch.spec.buffer_count = static_cast<uint32_t>(launch.element_counts.size() + (uses_frame ? 1 : 0));
  if (uses_frame) dispatch.frame = launch.frame;
  dispatch.spec.workgroup_size_x = launch.block_size;
  if (launch.grid_size > UINT32_MAX)
    return InvalidArgument(label, ": ", launch.grid_size, " workgroups do not fit a dispatch");
  dispatch.groups = static_cast<uint32_t>(launch.grid_size);
  // Nothing to push when the shader has no push constants: it reads the frame buffer, if anything.
  if (!interface->push_constants) {
    KILN_RETURN_IF_ERROR(CheckBufferElementTypes(label, *interface, launch));
    return dispatch;
  }
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
        " bytes of push constants (a count per buffer, then the int and bool attributes); the limit is ",
        kMaxFrameBytes, "; read them from the call frame at binding ", launch.element_counts.size(),
        " and declare no push constants");
  }
  dispatch.spec.push_constant_bytes = static_cast<uint32_t>(dispatch.push_constants.size());
  KILN_RETURN_IF_ERROR(CheckBufferElementTypes(label, *interface, launch));
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

StatusOr<std::shared_ptr<Buffer>> CreateUserOpFrame(std::shared_ptr<Device> device,
                                                    const UserOpDispatch& dispatch) {
  if (dispatch.frame.empty()) return std::shared_ptr<Buffer>();
  const uint64_t bytes = dispatch.frame.size() * sizeof(uint64_t);
  const uint64_t range = device->features().max_storage_buffer_range;
  if (bytes > range) {
    return InvalidArgument("vulkan: kernel of ", dispatch.spec.name, ": its call frame takes ", bytes,
                           " bytes, past the device's storage buffer range of ", range);
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> frame, Buffer::Create(std::move(device), bytes));
  KILN_RETURN_IF_ERROR(frame->Upload(dispatch.frame.data(), bytes));
  return frame;
}

}  // namespace kiln::vulkan
