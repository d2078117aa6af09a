// The reference interpreter backend: evaluates the IR on host literals. It is
// the oracle every other backend is tested against, so it favours clarity;
// the contraction kernels are still written to run real sizes in seconds.
#pragma once

#include <memory>
#include <vector>

#include "core/backend.h"
#include "core/interpreter/eval_context.h"
#include "core/interpreter/evaluator.h"
#include "core/runtime/host_devices.h"

namespace kiln::interpreter {

// A "device" buffer of the interpreter: a host literal.
class LiteralBuffer : public DeviceBuffer {
 public:
  LiteralBuffer(Literal literal, Device* device);
  const Literal& literal() const { return literal_; }
  StatusOr<Literal> ToLiteral() const override { return literal_; }
  const void* host_data() const override { return literal_.raw().data(); }

 private:
  Literal literal_;
};

class InterpreterExecutable : public Executable {
 public:
  InterpreterExecutable(std::unique_ptr<Module> module, std::shared_ptr<const HostDevices> devices,
                        std::shared_ptr<HostQueues> queues);

  const std::vector<Shape>& parameter_leaves() const override { return parameter_leaves_; }
  const std::vector<Shape>& result_leaves() const override { return result_leaves_; }
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> Execute(std::span<DeviceBuffer* const> arguments,
                                                               const ExecuteOptions& options) override;

 private:
  std::unique_ptr<Module> module_;
  ModulePlan plan_;
  std::shared_ptr<const HostDevices> devices_;
  std::shared_ptr<HostQueues> queues_;
  std::vector<Shape> parameter_shapes_;  // entry parameters (possibly tuples)
  std::vector<Shape> parameter_leaves_;
  std::vector<Shape> result_leaves_;
};

class InterpreterBackend : public Backend {
 public:
  // `num_devices` host devices (see HostDevices).
  explicit InterpreterBackend(int num_devices = 1);

  std::string_view name() const override { return "interpreter"; }
  std::span<Device* const> devices() const override { return devices_->list(); }
  bool SupportsElementType(ElementType type) const override;
  std::vector<std::string> UnsupportedOps(const Module& module) const override;
  int64_t max_buffer_bytes() const override;
  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module, const CompileOptions& options) override;
  StatusOr<std::unique_ptr<DeviceBuffer>> BufferFromLiteral(const Literal& literal, Device* device) override;
  Status TransferToInfeed(const Literal& literal) override;
  StatusOr<Literal> TransferFromOutfeed() override;

 private:
  std::shared_ptr<const HostDevices> devices_;
  std::shared_ptr<HostQueues> queues_;
};

}  // namespace kiln::interpreter
