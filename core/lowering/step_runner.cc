#include "core/lowering/step_runner.h"

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "core/lowering/step_feeds.h"
#include "core/lowering/step_tapes.h"
#include "core/stop_condition.h"

namespace kiln {
namespace {

class SequenceRunner {
 public:
  SequenceRunner(const StepProgram& program, ProgramStepExecutor& executor, const ExecuteOptions& options,
                 interpreter::HostQueues& queues, const std::string& backend)
      : program_(program),
        executor_(executor),
        options_(options),
        queues_(queues),
        backend_(backend),
        tapes_(executor, backend) {}

  Status Run(int sequence) {
    for (const ProgramStep& step : program_.sequences[static_cast<size_t>(sequence)].steps) {
      KILN_RETURN_IF_ERROR(options_.stop.Check());
      Status status = RunStep(step);
      if (!status.ok()) return status.WithContext("running '" + step.name + "'");
    }
    return OkStatus();
  }

 private:
  const StepSequence& Sequence(int index) const { return program_.sequences[static_cast<size_t>(index)]; }

  Status CopyAll(const std::vector<int>& sources, const std::vector<int>& targets,
                 const std::vector<int64_t>& bytes) {
    for (size_t i = 0; i < sources.size(); ++i) {
      if (bytes[i] > 0) KILN_RETURN_IF_ERROR(executor_.Copy(sources[i], targets[i], bytes[i]));
    }
    return OkStatus();
  }

  Status RunStep(const ProgramStep& step) {
    switch (step.kind) {
      case ProgramStep::Kind::kLaunch: return executor_.Launch(step);
      case ProgramStep::Kind::kLibraryCall: return executor_.CallLibrary(step);
      case ProgramStep::Kind::kCopy: return CopyAll(step.sources, step.targets, step.bytes);
      case ProgramStep::Kind::kWhile: return RunWhile(step);
      case ProgramStep::Kind::kConditional: return RunConditional(step);
      case ProgramStep::Kind::kInfeed: return Infeed(step);
      case ProgramStep::Kind::kOutfeed: return Outfeed(step);
      case ProgramStep::Kind::kTapePush: return tapes_.Push(step);
      case ProgramStep::Kind::kTapePop: return tapes_.Pop(step);
    }
    return Internal(backend_, ": unknown step kind");
  }

  Status RunWhile(const ProgramStep& step) {
    KILN_RETURN_IF_ERROR(CopyAll(step.sources, step.targets, step.bytes));
    const StepSequence& condition = Sequence(step.nested[0]);
    const StepSequence& body = Sequence(step.nested[1]);
    for (size_t i = 0; i < step.targets.size(); ++i) {
      executor_.Bind(condition.parameters[i], step.targets[i]);
      executor_.Bind(body.parameters[i], step.targets[i]);
    }
    if (executor_.RunsLoopWhole(step)) return RunWholeLoop(step);
    // A stop inside the loop names it and how far it got.
    for (int64_t iterations = 0;; ++iterations) {
      Status status = Run(step.nested[0]);
      StatusOr<int64_t> go_on =
          status.ok() ? ReadScalar(condition.results[0], ElementType::kPred) : StatusOr<int64_t>(status);
      if (!go_on.ok()) return StoppedInLoop(go_on.status(), step.name, iterations);
      if (*go_on == 0) return OkStatus();
      status = options_.stop.Check();
      if (status.ok()) status = Run(step.nested[1]);
      if (status.ok()) status = CopyAll(body.results, step.targets, step.bytes);
      if (!status.ok()) return StoppedInLoop(status, step.name, iterations);
    }
  }

  // A loop the device runs whole, a budget of trips at a time: a stop is
  // seen between runs, and names the loop and the trips run so far.
  Status RunWholeLoop(const ProgramStep& step) {
    for (int64_t iterations = 0;;) {
      Status status = options_.stop.Check();
      StatusOr<StepLoopTrips> ran =
          status.ok() ? executor_.RunLoopTrips(step) : StatusOr<StepLoopTrips>(status);
      if (!ran.ok()) return StoppedInLoop(ran.status(), step.name, iterations);
      iterations += ran->trips;
      if (ran->finished) return OkStatus();
    }
  }

  Status RunConditional(const ProgramStep& step) {
    KILN_ASSIGN_OR_RETURN(int64_t selected, ReadScalar(step.selector, step.selector_type));
    const auto branches = static_cast<int64_t>(step.nested.size());
    // pred: true runs branch 0; an index out of range runs the last branch.
    if (step.selector_type == ElementType::kPred) {
      selected = selected != 0 ? 0 : 1;
    } else if (selected < 0 || selected >= branches) {
      selected = branches - 1;
    }
    const auto branch = static_cast<size_t>(selected);
    const StepSequence& lowered = Sequence(step.nested[branch]);
    for (size_t i = 0; i < lowered.parameters.size(); ++i)
      executor_.Bind(lowered.parameters[i], step.branch_operands[branch][i]);
    KILN_RETURN_IF_ERROR(Run(step.nested[branch]));
    return CopyAll(lowered.results, step.targets, step.bytes);
  }

  // The scalar of `type` in `slot`, read back to the host.
  StatusOr<int64_t> ReadScalar(int slot, ElementType type) {
    const int64_t width = ByteWidth(type);
    uint8_t bytes[8] = {};
    KILN_RETURN_IF_ERROR(executor_.ReadToHost(slot, bytes, width));
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
      default:
        return InvalidArgument(backend_, ": a selector of type ", ElementTypeName(type), " is not supported");
    }
  }

  Status Infeed(const ProgramStep& step) {
    KILN_ASSIGN_OR_RETURN(std::vector<Literal> arrays,
                          TakeInfeedArrays(queues_, step.shape, step.targets.size(), backend_));
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (step.bytes[i] == 0) continue;
      KILN_RETURN_IF_ERROR(executor_.WriteFromHost(step.targets[i], arrays[i].raw().data(), step.bytes[i]));
    }
    return OkStatus();
  }

  Status Outfeed(const ProgramStep& step) {
    const std::vector<Shape> shapes = FeedArrayShapes(step.shape);
    if (shapes.size() != step.sources.size())
      return Internal(backend_, ": outfeed has ", step.sources.size(), " arrays for ", shapes.size());
    std::vector<Literal> arrays;
    for (size_t i = 0; i < shapes.size(); ++i) {
      Literal array(shapes[i]);
      if (step.bytes[i] > 0)
        KILN_RETURN_IF_ERROR(executor_.ReadToHost(step.sources[i], array.raw().data(), step.bytes[i]));
      arrays.push_back(std::move(array));
    }
    return PutOutfeedValue(queues_, step.shape, std::move(arrays), backend_);
  }

  const StepProgram& program_;
  ProgramStepExecutor& executor_;
  const ExecuteOptions& options_;
  interpreter::HostQueues& queues_;
  const std::string& backend_;
  StepTapes tapes_;  // this execution's, released when it ends
};

}  // namespace

Status ProgramStepExecutor::CallLibrary(const ProgramStep& step) {
  return Internal("library call '", step.name, "' on a device executor that makes none");
}

Status ProgramStepExecutor::CopyRange(int source, int64_t, int target, int64_t, int64_t) {
  return Internal("a copy between parts of slots ", source, " and ", target,
                  " on a device executor that has none (tape steps need it)");
}

StatusOr<int> ProgramStepExecutor::AddSlot(int64_t bytes) {
  return Internal("a slot of ", bytes,
                  " bytes added on a device executor that adds none (tape steps need it)");
}

void ProgramStepExecutor::ReleaseSlot(int) {}

bool ProgramStepExecutor::RunsLoopWhole(const ProgramStep&) const { return false; }

StatusOr<StepLoopTrips> ProgramStepExecutor::RunLoopTrips(const ProgramStep& step) {
  return Internal("loop '", step.name, "' run whole on a device executor that runs no loop whole");
}

Status CheckDeviceArguments(std::span<DeviceBuffer* const> arguments,
                            const std::vector<Shape>& parameter_leaves, const Device* device,
                            bool (*is_own)(const DeviceBuffer&), const std::string& backend,
                            const Device* requested) {
  if (requested != nullptr && requested != device) {
    return InvalidArgument(backend, ": the execution's device is not this executable's device (",
                           device->description(), ")");
  }
  if (arguments.size() != parameter_leaves.size()) {
    return InvalidArgument(backend, ": the computation takes ", parameter_leaves.size(),
                           " argument buffers, got ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const DeviceBuffer* argument = arguments[i];
    if (argument == nullptr) return InvalidArgument(backend, ": argument ", i, " is null");
    if (argument->device() != device || !is_own(*argument))
      return InvalidArgument(backend, ": argument ", i, " is not a buffer of this device (",
                             device->description(), ")");
    if (!argument->shape().Compatible(parameter_leaves[i])) {
      return InvalidArgument(backend, ": parameter ", i, " expects ", parameter_leaves[i].ToString(),
                             ", got ", argument->shape().ToString());
    }
  }
  return OkStatus();
}

Status PushInfeed(interpreter::HostQueues& queues, const Literal& literal) {
  std::lock_guard<std::mutex> lock(queues.mutex);
  queues.infeed.push_back(literal);
  return OkStatus();
}

StatusOr<Literal> PopOutfeed(interpreter::HostQueues& queues, const std::string& backend) {
  std::lock_guard<std::mutex> lock(queues.mutex);
  if (queues.outfeed.empty()) return FailedPrecondition(backend, ": the outfeed queue is empty");
  Literal literal = std::move(queues.outfeed.front());
  queues.outfeed.pop_front();
  return literal;
}

Status RunStepSequence(const StepProgram& program, int sequence, ProgramStepExecutor& executor,
                       const ExecuteOptions& options, interpreter::HostQueues& queues,
                       const std::string& backend) {
  if (sequence < 0 || static_cast<size_t>(sequence) >= program.sequences.size())
    return Internal(backend, ": no step sequence ", sequence);
  return SequenceRunner(program, executor, options, queues, backend).Run(sequence);
}

}  // namespace kiln
