// The devices of a host backend (cpu, interpreter): the machine presented as
// one or more devices that share its cores and memory, so that programs
// written for several devices (and their tests) run in one process.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.h"

namespace kiln {

class HostDevices {
 public:
  // `count` devices numbered 0..count-1, described by describe(i).
  HostDevices(Backend* backend, int count, const std::function<std::string(int)>& describe);

  // The count BackendOptions ask of a host backend: 1 for 0, else
  // 1..BackendOptions::kMaxHostDevices (INVALID_ARGUMENT naming `backend`).
  static StatusOr<int> Count(std::string_view backend, const BackendOptions& options);

  // The ops of `module` a host backend cannot run, for Backend::UnsupportedOps:
  // send and recv (and their done ops), which pair two devices within one
  // program, while a host backend runs each program on one device.
  static std::vector<std::string> UnsupportedOps(const Module& module);

  std::span<Device* const> list() const { return list_; }
  Device* first() const { return list_.front(); }
  bool Contains(const Device* device) const;

  // The device `options` runs on (its device, else the first argument's,
  // else the first), after checking that it is one of these and that every
  // argument lives on it. Errors are INVALID_ARGUMENT naming `backend`.
  StatusOr<Device*> ExecutionDevice(std::string_view backend, std::span<DeviceBuffer* const> arguments,
                                    const ExecuteOptions& options) const;
  // `device`, or the first device when null, after checking it is one of these.
  StatusOr<Device*> Resolve(std::string_view backend, Device* device) const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> list_;
};

}  // namespace kiln
