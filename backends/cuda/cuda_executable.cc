#include "backends/cuda/cuda_executable.h"

#include <algorithm>
#include <cstring>

#include "backends/cuda/rng_emitter.h"

namespace kiln::cuda {
namespace {

constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr size_t kJitLogBytes = 16384;

}  // namespace

// What one execution has: the address of every slot, its scratch block and
// the stream its work goes to.
struct CudaExecutable::Frame {
  std::vector<CUdeviceptr> addresses;
  CUstream stream = nullptr;
  const ExecuteOptions* options = nullptr;
  uint64_t rng_launches = 0;  // rng kernels launched so far (rng_emitter.h)
};

StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Load(
    std::shared_ptr<const CudaProgram> program, Device* device, std::shared_ptr<DeviceMemory> memory,
    std::shared_ptr<interpreter::HostQueues> queues) {
  std::unique_ptr<CudaExecutable> executable(new CudaExecutable(program, device, memory, std::move(queues)));
  const Driver& driver = memory->driver();
  KILN_RETURN_IF_ERROR(memory->MakeCurrent());
  if (!program->ptx.kernels.empty()) {
    std::vector<char> error_log(kJitLogBytes, 0);
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size()))};
    const CUresult loaded =
        driver.api().ModuleLoadDataEx(&executable->module_, program->ptx.ptx.c_str(), 2, keys, values);
    if (loaded != CUDA_SUCCESS) {
      executable->module_ = nullptr;
      Status status = driver.Check(loaded, "cuModuleLoadDataEx (loading the kernels' PTX)");
      error_log.back() = 0;
      return Status(status.code(), status.message() + "; the driver's JIT log: " +
                                       (error_log[0] != 0 ? std::string(error_log.data()) : "(empty)"));
    }
    for (const PtxKernel& kernel : program->ptx.kernels) {
      CUfunction function = nullptr;
      KILN_RETURN_IF_ERROR(
          driver.Check(driver.api().ModuleGetFunction(&function, executable->module_, kernel.name.c_str()),
                       "cuModuleGetFunction(" + kernel.name + ")"));
      executable->functions_.push_back(function);
    }
  }
  for (const Literal& constant : program->constants) {
    const int64_t bytes = static_cast<int64_t>(constant.raw().size());
    DeviceBlock block;
    if (bytes > 0) {
      KILN_ASSIGN_OR_RETURN(block, DeviceBlock::Allocate(memory, bytes));
      KILN_RETURN_IF_ERROR(driver.Check(
          driver.api().MemcpyHtoD(block.address(), constant.raw().data(), static_cast<size_t>(bytes)),
          "cuMemcpyHtoD"));
    }
    executable->constants_.push_back(std::move(block));
  }
  return executable;
}

CudaExecutable::~CudaExecutable() {
  constants_.clear();
  if (module_ != nullptr && memory_->MakeCurrent().ok()) memory_->driver().api().ModuleUnload(module_);
}

StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> CudaExecutable::Execute(
    std::span<DeviceBuffer* const> arguments, const ExecuteOptions& options) {
  const CudaProgram& program = *program_;
  if (arguments.size() != program.parameter_leaves.size()) {
    return InvalidArgument("cuda: the computation takes ", program.parameter_leaves.size(),
                           " argument buffers, got ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const DeviceBuffer* argument = arguments[i];
    if (argument == nullptr) return InvalidArgument("cuda: argument ", i, " is null");
    if (argument->device() != device_ || dynamic_cast<const CudaBuffer*>(argument) == nullptr)
      return InvalidArgument("cuda: argument ", i, " is not a buffer of this GPU (", device_->description(),
                             ")");
    if (!argument->shape().Compatible(program.parameter_leaves[i])) {
      return InvalidArgument("cuda: parameter ", i, " expects ", program.parameter_leaves[i].ToString(),
                             ", got ", argument->shape().ToString());
    }
  }
  KILN_RETURN_IF_ERROR(options.stop.Check());
  const Driver& driver = memory_->driver();
  KILN_RETURN_IF_ERROR(memory_->MakeCurrent());
  Frame frame;
  frame.options = &options;
  frame.addresses.assign(program.slots.size(), 0);
  DeviceBlock scratch;
  if (program.scratch_bytes > 0) {
    KILN_ASSIGN_OR_RETURN(scratch, DeviceBlock::Allocate(memory_, program.scratch_bytes));
  }
  for (size_t i = 0; i < program.slots.size(); ++i) {
    const Slot& slot = program.slots[i];
    switch (slot.kind) {
      case SlotKind::kTemporary:
        frame.addresses[i] = scratch.address() + static_cast<CUdeviceptr>(slot.offset);
        break;
      case SlotKind::kConstant:
        frame.addresses[i] = constants_[static_cast<size_t>(slot.index)].address();
        break;
      case SlotKind::kParameter:
        frame.addresses[i] =
            static_cast<const CudaBuffer*>(arguments[static_cast<size_t>(slot.index)])->address();
        break;
      case SlotKind::kBound: break;
    }
  }
  KILN_RETURN_IF_ERROR(
      driver.Check(driver.api().StreamCreate(&frame.stream, kStreamNonBlocking), "cuStreamCreate"));
  Status status = RunSequence(0, frame);
  // Results: each in a block of its own that the caller owns.
  std::vector<std::unique_ptr<DeviceBuffer>> results;
  if (status.ok()) {
    const std::vector<int>& sources = program.sequences[0].results;
    for (size_t i = 0; i < sources.size() && status.ok(); ++i) {
      const int64_t bytes = DenseBytes(program.result_leaves[i]);
      DeviceBlock block;
      if (bytes > 0) {
        StatusOr<DeviceBlock> allocated = DeviceBlock::Allocate(memory_, bytes);
        if (!allocated.ok()) {
          status = allocated.status();
          break;
        }
        block = std::move(allocated).value();
        status = driver.Check(
            driver.api().MemcpyDtoDAsync(block.address(), frame.addresses[static_cast<size_t>(sources[i])],
                                         static_cast<size_t>(bytes), frame.stream),
            "cuMemcpyDtoDAsync (result " + std::to_string(i) + ")");
      }
      results.push_back(
          std::make_unique<CudaBuffer>(program.result_leaves[i], device_, memory_, std::move(block)));
    }
  }
  // Everything queued must finish before the scratch block is reused.
  const Status synchronized =
      driver.Check(driver.api().StreamSynchronize(frame.stream), "cuStreamSynchronize");
  driver.api().StreamDestroy(frame.stream);
  KILN_RETURN_IF_ERROR(status);
  KILN_RETURN_IF_ERROR(synchronized);
  return results;
}

Status CudaExecutable::RunSequence(int sequence, Frame& frame) const {
  for (const Step& step : program_->sequences[static_cast<size_t>(sequence)].steps) {
    KILN_RETURN_IF_ERROR(frame.options->stop.Check());
    Status status = RunStep(step, frame);
    if (!status.ok()) return status.WithContext("running '" + step.name + "'");
  }
  return OkStatus();
}

Status CudaExecutable::RunStep(const Step& step, Frame& frame) const {
  switch (step.kind) {
    case Step::Kind::kLaunch: return Launch(step, frame);
    case Step::Kind::kCopy: return Copy(step.sources, step.targets, step.bytes, frame);
    case Step::Kind::kWhile: {
      KILN_RETURN_IF_ERROR(Copy(step.sources, step.targets, step.bytes, frame));
      const StepSequence& condition = program_->sequences[static_cast<size_t>(step.nested[0])];
      const StepSequence& body = program_->sequences[static_cast<size_t>(step.nested[1])];
      // A stop inside the loop names it and how far it got.
      for (int64_t iterations = 0;; ++iterations) {
        for (size_t i = 0; i < step.targets.size(); ++i) {
          frame.addresses[static_cast<size_t>(condition.parameters[i])] =
              frame.addresses[static_cast<size_t>(step.targets[i])];
          frame.addresses[static_cast<size_t>(body.parameters[i])] =
              frame.addresses[static_cast<size_t>(step.targets[i])];
        }
        Status status = RunSequence(step.nested[0], frame);
        StatusOr<int64_t> go_on = status.ok()
                                      ? ReadScalar(frame.addresses[static_cast<size_t>(condition.results[0])],
                                                   ElementType::kPred, frame)
                                      : StatusOr<int64_t>(status);
        if (!go_on.ok()) return StoppedInLoop(go_on.status(), step.name, iterations);
        if (*go_on == 0) return OkStatus();
        status = frame.options->stop.Check();
        if (status.ok()) status = RunSequence(step.nested[1], frame);
        if (status.ok()) status = Copy(body.results, step.targets, step.bytes, frame);
        if (!status.ok()) return StoppedInLoop(status, step.name, iterations);
      }
    }
    case Step::Kind::kConditional: {
      KILN_ASSIGN_OR_RETURN(int64_t selected, ReadScalar(frame.addresses[static_cast<size_t>(step.selector)],
                                                         step.selector_type, frame));
      const auto branches = static_cast<int64_t>(step.nested.size());
      // pred: true runs branch 0; an index out of range runs the last branch.
      if (step.selector_type == ElementType::kPred) {
        selected = selected != 0 ? 0 : 1;
      } else if (selected < 0 || selected >= branches) {
        selected = branches - 1;
      }
      const auto branch = static_cast<size_t>(selected);
      const StepSequence& lowered = program_->sequences[static_cast<size_t>(step.nested[branch])];
      for (size_t i = 0; i < lowered.parameters.size(); ++i) {
        frame.addresses[static_cast<size_t>(lowered.parameters[i])] =
            frame.addresses[static_cast<size_t>(step.branch_operands[branch][i])];
      }
      KILN_RETURN_IF_ERROR(RunSequence(step.nested[branch], frame));
      return Copy(lowered.results, step.targets, step.bytes, frame);
    }
    case Step::Kind::kInfeed: return Infeed(step, frame);
    case Step::Kind::kOutfeed: return Outfeed(step, frame);
  }
  return Internal("cuda: unknown step kind");
}

Status CudaExecutable::Infeed(const Step& step, Frame& frame) const {
  // An empty tuple reads nothing (as the interpreter has it).
  if (step.shape.IsTuple() && step.shape.tuple_shapes().empty()) return OkStatus();
  Literal data;
  {
    std::lock_guard<std::mutex> lock(queues_->mutex);
    if (queues_->infeed.empty()) {
      return FailedPrecondition(
          "cuda: infeed of ", step.shape.ToString(),
          " found the infeed queue empty; queue an array with kiln_client_transfer_to_infeed first");
    }
    if (!queues_->infeed.front().shape().Compatible(step.shape)) {
      return InvalidArgument("cuda: infeed expects ", step.shape.ToString(), " but the queue holds ",
                             queues_->infeed.front().shape().ToString());
    }
    data = std::move(queues_->infeed.front());
    queues_->infeed.pop_front();
  }
  const Driver& driver = memory_->driver();
  // The targets may still be read by earlier work of this stream (a loop's
  // previous iteration): wait for it, then copy synchronously.
  KILN_RETURN_IF_ERROR(driver.Check(driver.api().StreamSynchronize(frame.stream), "cuStreamSynchronize"));
  std::vector<Literal> leaves;
  if (data.shape().IsArray()) {
    leaves.push_back(std::move(data));
  } else {
    for (Literal& leaf : data.Leaves()) {
      if (leaf.shape().IsArray()) leaves.push_back(std::move(leaf));
    }
  }
  if (leaves.size() != step.targets.size())
    return Internal("cuda: infeed has ", leaves.size(), " arrays for ", step.targets.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (step.bytes[i] == 0) continue;
    KILN_RETURN_IF_ERROR(
        driver.Check(driver.api().MemcpyHtoD(frame.addresses[static_cast<size_t>(step.targets[i])],
                                             leaves[i].raw().data(), static_cast<size_t>(step.bytes[i])),
                     "cuMemcpyHtoD (infeed)"));
  }
  return OkStatus();
}

namespace {

// A literal of `shape` from its array leaves in order (consumed from `next`).
StatusOr<Literal> Assemble(const Shape& shape, std::vector<Literal>& leaves, size_t& next) {
  if (shape.IsArray()) {
    if (next >= leaves.size()) return Internal("cuda: outfeed ran out of arrays");
    return std::move(leaves[next++]);
  }
  if (!shape.IsTuple()) return Literal(shape);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) {
    KILN_ASSIGN_OR_RETURN(Literal part, Assemble(element, leaves, next));
    elements.push_back(std::move(part));
  }
  return Literal::Tuple(std::move(elements));
}

}  // namespace

Status CudaExecutable::Outfeed(const Step& step, Frame& frame) const {
  const Driver& driver = memory_->driver();
  KILN_RETURN_IF_ERROR(driver.Check(driver.api().StreamSynchronize(frame.stream), "cuStreamSynchronize"));
  std::vector<Literal> leaves;
  std::vector<Shape> shapes;
  for (Shape& leaf : step.shape.Leaves()) {
    if (leaf.IsArray()) shapes.push_back(std::move(leaf));
  }
  if (shapes.size() != step.sources.size())
    return Internal("cuda: outfeed has ", step.sources.size(), " arrays for ", shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    Literal leaf(shapes[i]);
    if (step.bytes[i] > 0) {
      KILN_RETURN_IF_ERROR(driver.Check(
          driver.api().MemcpyDtoH(leaf.raw().data(), frame.addresses[static_cast<size_t>(step.sources[i])],
                                  static_cast<size_t>(step.bytes[i])),
          "cuMemcpyDtoH (outfeed)"));
    }
    leaves.push_back(std::move(leaf));
  }
  size_t next = 0;
  KILN_ASSIGN_OR_RETURN(Literal value, Assemble(step.shape, leaves, next));
  std::lock_guard<std::mutex> lock(queues_->mutex);
  queues_->outfeed.push_back(std::move(value));
  return OkStatus();
}

Status CudaExecutable::Launch(const Step& step, Frame& frame) const {
  const PtxKernel& kernel = program_->ptx.kernels[static_cast<size_t>(step.kernel)];
  std::vector<CUdeviceptr> pointers;
  pointers.reserve(step.buffers.size());
  for (int slot : step.buffers) pointers.push_back(frame.addresses[static_cast<size_t>(slot)]);
  int64_t extent = kernel.parallel_extent;
  std::vector<void*> parameters;
  for (CUdeviceptr& pointer : pointers) parameters.push_back(&pointer);
  parameters.push_back(&extent);
  // Each rng launch draws from a new stream of the execution's seed.
  uint64_t key = kernel.takes_rng_key ? RngLaunchKey(frame.options->rng_seed, frame.rng_launches++) : 0;
  if (kernel.takes_rng_key) parameters.push_back(&key);
  const int64_t blocks = std::max<int64_t>(1, (extent + kThreadsPerBlock - 1) / kThreadsPerBlock);
  if (blocks > 0x7fffffff)
    return ResourceExhausted("cuda: kernel ", kernel.name, " needs ", blocks, " blocks");
  const Driver& driver = memory_->driver();
  return driver.Check(
      driver.api().LaunchKernel(functions_[static_cast<size_t>(step.kernel)], static_cast<unsigned>(blocks),
                                1, 1, kThreadsPerBlock, 1, 1, 0, frame.stream, parameters.data(), nullptr),
      "cuLaunchKernel(" + kernel.name + ")");
}

Status CudaExecutable::Copy(const std::vector<int>& sources, const std::vector<int>& targets,
                            const std::vector<int64_t>& bytes, Frame& frame) const {
  const Driver& driver = memory_->driver();
  for (size_t i = 0; i < sources.size(); ++i) {
    const CUdeviceptr from = frame.addresses[static_cast<size_t>(sources[i])];
    const CUdeviceptr to = frame.addresses[static_cast<size_t>(targets[i])];
    if (from == to || bytes[i] == 0) continue;
    KILN_RETURN_IF_ERROR(
        driver.Check(driver.api().MemcpyDtoDAsync(to, from, static_cast<size_t>(bytes[i]), frame.stream),
                     "cuMemcpyDtoDAsync"));
  }
  return OkStatus();
}

StatusOr<int64_t> CudaExecutable::ReadScalar(CUdeviceptr address, ElementType type, Frame& frame) const {
  const Driver& driver = memory_->driver();
  const int64_t width = ByteWidth(type);
  uint8_t bytes[8] = {};
  KILN_RETURN_IF_ERROR(
      driver.Check(driver.api().MemcpyDtoHAsync(bytes, address, static_cast<size_t>(width), frame.stream),
                   "cuMemcpyDtoHAsync"));
  KILN_RETURN_IF_ERROR(driver.Check(driver.api().StreamSynchronize(frame.stream), "cuStreamSynchronize"));
  switch (type) {
    case ElementType::kPred:
    case ElementType::kU8: return int64_t{bytes[0]};
    case ElementType::kS8: return int64_t{static_cast<int8_t>(bytes[0])};
    case ElementType::kS32: {
      int32_t value = 0;
      std::memcpy(&value, bytes, sizeof(value));
      return int64_t{value};
    }
    case ElementType::kU32: {
      uint32_t value = 0;
      std::memcpy(&value, bytes, sizeof(value));
      return int64_t{value};
    }
    case ElementType::kS64: {
      int64_t value = 0;
      std::memcpy(&value, bytes, sizeof(value));
      return value;
    }
    default: return InvalidArgument("cuda: a selector of type ", ElementTypeName(type), " is not supported");
  }
}

}  // namespace kiln::cuda
