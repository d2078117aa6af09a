#include "core/interpreter/interpreter_backend.h"

#include "core/dump_file.h"
#include "core/hlo_printer.h"
#include "core/op_registry.h"
#include "core/verifier.h"

namespace kiln::interpreter {
namespace {

// Leaves that carry data: arrays, in order; tokens carry none.
void FlattenLeaves(Literal literal, std::vector<Literal>& leaves) {
  if (literal.shape().IsTuple()) {
    for (Literal& element : literal.mutable_tuple_elements()) FlattenLeaves(std::move(element), leaves);
  } else if (literal.shape().IsArray()) {
    leaves.push_back(std::move(literal));
  }
}

std::vector<Shape> ArrayLeaves(const Shape& shape) {
  std::vector<Shape> leaves;
  for (Shape& leaf : shape.Leaves()) {
    if (leaf.IsArray()) leaves.push_back(std::move(leaf));
  }
  return leaves;
}

// Rebuilds a (possibly tuple) parameter from consecutive argument leaves.
Literal Assemble(const Shape& shape, std::span<DeviceBuffer* const> arguments, size_t& next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) elements.push_back(Assemble(element, arguments, next));
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  return static_cast<const LiteralBuffer*>(arguments[next++])->literal();
}

}  // namespace

LiteralBuffer::LiteralBuffer(Literal literal, Device* device)
    : DeviceBuffer(literal.shape(), device), literal_(std::move(literal)) {}

InterpreterExecutable::InterpreterExecutable(std::unique_ptr<Module> module,
                                             std::shared_ptr<const HostDevices> devices,
                                             std::shared_ptr<HostQueues> queues)
    : module_(std::move(module)),
      plan_(ModulePlan::Build(*module_)),
      devices_(std::move(devices)),
      queues_(std::move(queues)) {
  const ProgramShape signature = module_->entry()->program_shape();
  parameter_shapes_ = signature.parameters;
  Shape result = signature.result;
  // Entry layouts are metadata only; they are reported on the leaves.
  if (module_->entry_layout().has_value() &&
      module_->entry_layout()->parameters.size() == parameter_shapes_.size()) {
    for (size_t i = 0; i < parameter_shapes_.size(); ++i) {
      if (module_->entry_layout()->parameters[i].Compatible(parameter_shapes_[i])) {
        parameter_shapes_[i] = module_->entry_layout()->parameters[i];
      }
    }
    if (module_->entry_layout()->result.Compatible(result)) result = module_->entry_layout()->result;
  }
  for (const Shape& parameter : parameter_shapes_) {
    for (Shape& leaf : ArrayLeaves(parameter)) parameter_leaves_.push_back(std::move(leaf));
  }
  result_leaves_ = ArrayLeaves(result);
}

StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> InterpreterExecutable::Execute(
    std::span<DeviceBuffer* const> arguments, const ExecuteOptions& options) {
  if (arguments.size() != parameter_leaves_.size()) {
    return InvalidArgument("interpreter: the computation takes ", parameter_leaves_.size(),
                           " argument buffers, got ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const DeviceBuffer* argument = arguments[i];
    if (argument == nullptr) return InvalidArgument("interpreter: argument ", i, " is null");
    if (dynamic_cast<const LiteralBuffer*>(argument) == nullptr) {
      return InvalidArgument("interpreter: argument ", i, " is not a buffer of the interpreter backend");
    }
    if (!argument->shape().Compatible(parameter_leaves_[i])) {
      return InvalidArgument("interpreter: parameter ", i, " expects ", parameter_leaves_[i].ToString(),
                             ", got ", argument->shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Device* const device, devices_->ExecutionDevice("interpreter", arguments, options));
  std::vector<Literal> parameters;
  size_t next = 0;
  for (const Shape& shape : parameter_shapes_) parameters.push_back(Assemble(shape, arguments, next));
  std::vector<const Literal*> pointers;
  for (const Literal& parameter : parameters) pointers.push_back(&parameter);

  KILN_RETURN_IF_ERROR(options.stop.Check());
  Evaluator evaluator(plan_, queues_.get(), options.rng_seed, options.stop);
  StatusOr<Literal> evaluated = evaluator.Run(*module_->entry(), pointers);
  // The evaluator's messages do not say which backend runs it (the cpu
  // backend runs it too); this one is the interpreter.
  if (!evaluated.ok()) return evaluated.status().WithContext("interpreter");
  Literal result = std::move(evaluated).value();
  std::vector<Literal> leaves;
  FlattenLeaves(std::move(result), leaves);
  if (leaves.size() != result_leaves_.size()) {
    return Internal("interpreter: produced ", leaves.size(), " result leaves, expected ",
                    result_leaves_.size());
  }
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (size_t i = 0; i < leaves.size(); ++i) {
    leaves[i].set_layout(result_leaves_[i].layout());
    buffers.push_back(std::make_unique<LiteralBuffer>(std::move(leaves[i]), device));
  }
  return buffers;
}

InterpreterBackend::InterpreterBackend(int num_devices)
    : devices_(std::make_shared<HostDevices>(
          this, num_devices, [](int i) { return "interpreter:" + std::to_string(i) + " (host reference)"; })),
      queues_(std::make_shared<HostQueues>()) {}

bool InterpreterBackend::SupportsElementType(ElementType type) const {
  return IsArrayType(type) || type == ElementType::kTuple || type == ElementType::kToken;
}

std::vector<std::string> InterpreterBackend::UnsupportedOps(const Module& module) const {
  return HostDevices::UnsupportedOps(module);
}

int64_t InterpreterBackend::max_buffer_bytes() const { return int64_t{1} << 40; }

StatusOr<std::unique_ptr<Executable>> InterpreterBackend::Compile(const Module& module,
                                                                  const CompileOptions& options) {
  if (module.entry() == nullptr)
    return InvalidArgument("interpreter: module '", module.name(), "' has no entry");
  KILN_RETURN_IF_ERROR(VerifyModule(module));
  const std::vector<std::string> unsupported = UnsupportedOps(module);
  if (!unsupported.empty()) {
    std::string names;
    for (const std::string& name : unsupported) names += (names.empty() ? "" : ", ") + name;
    return Unimplemented("interpreter backend does not support op(s): ", names);
  }
  KILN_RETURN_IF_ERROR(CheckRegisteredOps(module, name()));
  KILN_RETURN_IF_ERROR(CheckCustomCallTargetsRegistered(module, name()));
  if (!options.dump_ir_dir.empty()) {
    return Unimplemented("interpreter: there is no LLVM IR to dump; the interpreter compiles none");
  }
  if (!options.dump_hlo_dir.empty()) {
    // The interpreter runs no passes: the module it runs is the one it got.
    const std::string text = PrintModule(module);
    const std::string stem = DumpFileStem(module.name());
    KILN_RETURN_IF_ERROR(WriteDumpFile(options.dump_hlo_dir, stem + ".before_passes.hlo", text));
    KILN_RETURN_IF_ERROR(WriteDumpFile(options.dump_hlo_dir, stem + ".after_passes.hlo", text));
  }
  return std::unique_ptr<Executable>(
      std::make_unique<InterpreterExecutable>(module.Clone(), devices_, queues_));
}

StatusOr<std::unique_ptr<DeviceBuffer>> InterpreterBackend::BufferFromLiteral(const Literal& literal,
                                                                              Device* device) {
  KILN_ASSIGN_OR_RETURN(device, devices_->Resolve("interpreter", device));
  if (!literal.shape().IsArray()) {
    return InvalidArgument("interpreter: a buffer holds one array, got ", literal.shape().ToString());
  }
  if (literal.shape().byte_size() > max_buffer_bytes()) {
    return ResourceExhausted("interpreter: buffer of ", literal.shape().byte_size(),
                             " bytes exceeds the limit");
  }
  return std::unique_ptr<DeviceBuffer>(std::make_unique<LiteralBuffer>(literal, device));
}

Status InterpreterBackend::TransferToInfeed(const Literal& literal) {
  std::lock_guard<std::mutex> lock(queues_->mutex);
  queues_->infeed.push_back(literal);
  return OkStatus();
}

StatusOr<Literal> InterpreterBackend::TransferFromOutfeed() {
  std::lock_guard<std::mutex> lock(queues_->mutex);
  if (queues_->outfeed.empty()) return FailedPrecondition("interpreter: the outfeed queue is empty");
  Literal literal = std::move(queues_->outfeed.front());
  queues_->outfeed.pop_front();
  return literal;
}

}  // namespace kiln::interpreter
