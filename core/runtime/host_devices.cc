#include "core/runtime/host_devices.h"

#include <algorithm>
#include <set>

namespace kiln {

HostDevices::HostDevices(Backend* backend, int count, const std::function<std::string(int)>& describe) {
  for (int i = 0; i < count; ++i) {
    devices_.push_back(std::make_unique<Device>(backend, i, describe(i)));
    list_.push_back(devices_.back().get());
  }
}

StatusOr<int> HostDevices::Count(std::string_view backend, const BackendOptions& options) {
  if (options.num_devices == 0) return 1;
  if (options.num_devices < 0 || options.num_devices > BackendOptions::kMaxHostDevices) {
    return InvalidArgument(backend, ": num_devices must be 0 (one device) or 1..",
                           BackendOptions::kMaxHostDevices, ", got ", options.num_devices);
  }
  return options.num_devices;
}

std::vector<std::string> HostDevices::UnsupportedOps(const Module& module) {
  std::set<std::string> unsupported;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      switch (instruction->opcode) {
        case Opcode::kSend:
        case Opcode::kSendDone:
        case Opcode::kRecv:
        case Opcode::kRecvDone: unsupported.insert(std::string(OpcodeName(instruction->opcode))); break;
        default: break;
      }
    }
  }
  return {unsupported.begin(), unsupported.end()};
}

bool HostDevices::Contains(const Device* device) const {
  return std::find(list_.begin(), list_.end(), device) != list_.end();
}

StatusOr<Device*> HostDevices::Resolve(std::string_view backend, Device* device) const {
  if (device == nullptr) return first();
  if (!Contains(device)) return InvalidArgument(backend, ": the device is not one of this backend's");
  return device;
}

StatusOr<Device*> HostDevices::ExecutionDevice(std::string_view backend,
                                               std::span<DeviceBuffer* const> arguments,
                                               const ExecuteOptions& options) const {
  Device* device = options.device;
  if (device == nullptr)
    device = arguments.empty() || arguments[0] == nullptr ? first() : arguments[0]->device();
  if (!Contains(device))
    return InvalidArgument(backend, ": the execution's device is not one of this backend's");
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] != nullptr && arguments[i]->device() != device) {
      return InvalidArgument(
          backend, ": argument ", i, " lives on ",
          arguments[i]->device() == nullptr ? "no device" : arguments[i]->device()->description(),
          " but the execution runs on ", device->description());
    }
  }
  return device;
}

}  // namespace kiln
