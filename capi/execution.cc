// Running executables: synchronously on the caller's thread, or
// asynchronously on the library's workers with result buffers that fill in
// later. Both check their arguments the same way before anything runs.
#include <algorithm>
#include <chrono>

#include "capi/internal.h"
#include "capi/struct_versions.h"
#include "core/runtime/work_queue.h"

using kiln::Status;
using kiln::StatusOr;
using kiln::capi::BufferSlot;
using kiln::capi::Guard;

namespace {

StatusOr<kiln::StopCondition> StopConditionOf(const char* function, const kiln_execute_options_t& options,
                                              kiln::StopCondition::Clock::time_point called_at) {
  using Clock = kiln::StopCondition::Clock;
  auto deadline = Clock::time_point::max();
  if (options.timeout_ns < 0) {
    return kiln::InvalidArgument(function, ": timeout_ns must be >= 0 (0 = no deadline), got ",
                                 options.timeout_ns);
  }
  if (options.timeout_ns > 0) {
    const Clock::duration timeout =
        std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(options.timeout_ns));
    // Centuries away counts as never rather than overflowing the clock.
    if (timeout < Clock::time_point::max() - called_at) deadline = called_at + timeout;
  }
  std::shared_ptr<const kiln::CancellationFlag> flag;
  if (options.cancellation != nullptr) flag = options.cancellation->flag;
  return kiln::StopCondition(std::move(flag), deadline);
}

// A stop names what stopped the execution and the option or call behind it.
Status ExplainStop(const char* function, const Status& status, int64_t timeout_ns) {
  switch (status.code()) {
    case kiln::StatusCode::kCancelled:
      return Status(status.code(),
                    kiln::internal::StrCat(function, ": ", status.message(),
                                           " (kiln_cancellation_cancel was called on the "
                                           "kiln_execute_options_t.cancellation it was given)"));
    case kiln::StatusCode::kDeadlineExceeded:
      return Status(status.code(),
                    kiln::internal::StrCat(function, ": ", status.message(),
                                           " (kiln_execute_options_t.timeout_ns = ", timeout_ns, ")"));
    default: return status;
  }
}

// Everything one execution needs, checked and owned, so that it can run on
// another thread after the caller's handles are gone.
struct Execution {
  const char* function = nullptr;
  std::shared_ptr<kiln::Backend> backend;  // first: outlives the buffers below
  std::shared_ptr<kiln::Executable> executable;
  std::vector<std::shared_ptr<BufferSlot>> arguments;
  std::vector<bool> donated;
  kiln::ExecuteOptions options;
  int64_t timeout_ns = 0;
};

// Checks a call's arguments and options (nothing has run when this fails,
// and no argument was donated yet).
StatusOr<Execution> Prepare(const char* function, kiln_executable_t* executable,
                            kiln_buffer_t* const* arguments, size_t num_arguments,
                            const kiln_execute_options_t* options, kiln_buffer_t** results,
                            size_t results_capacity, kiln::StopCondition::Clock::time_point called_at) {
  Execution execution;
  execution.function = function;
  execution.backend = executable->backend;
  execution.executable = executable->executable;
  kiln_execute_options_t given = KILN_EXECUTE_OPTIONS_INIT;
  if (options != nullptr) {
    KILN_ASSIGN_OR_RETURN(given, kiln::capi::ReadStruct(function, options));
    execution.options.rng_seed = given.rng_seed;
    KILN_ASSIGN_OR_RETURN(execution.options.stop, StopConditionOf(function, given, called_at));
    execution.timeout_ns = given.timeout_ns;
  }
  const std::vector<kiln::Shape>& parameters = executable->executable->parameter_leaves();
  if (num_arguments != parameters.size()) {
    return kiln::InvalidArgument(function, ": the executable takes ", parameters.size(), " arguments, got ",
                                 num_arguments);
  }
  if (num_arguments != 0 && arguments == nullptr) return kiln::capi::NullArgument(function, "arguments");
  for (size_t i = 0; i < num_arguments; ++i) {
    if (arguments[i] == nullptr) return kiln::InvalidArgument(function, ": argument ", i, " is NULL");
    if (arguments[i]->backend != executable->backend) {
      return kiln::InvalidArgument(function, ": argument ", i,
                                   " was made by another client than the executable");
    }
    StatusOr<std::shared_ptr<BufferSlot>> slot = arguments[i]->Slot(function);
    if (!slot.ok()) return slot.status().WithContext(kiln::internal::StrCat("argument ", i));
    const kiln::Shape& shape = (*slot)->shape;
    if (!shape.Compatible(parameters[i])) {
      return kiln::InvalidArgument(function, ": argument ", i, " is ", shape.ToString(), " but parameter ", i,
                                   " expects ", parameters[i].ToString());
    }
    execution.arguments.push_back(*std::move(slot));
  }

  // The device: the option, else the first argument's, else the first one.
  const kiln::capi::ClientDevices& devices = *executable->devices;
  if (given.device != nullptr) {
    if (given.device->owner != &devices) {
      return kiln::InvalidArgument(function,
                                   ": kiln_execute_options_t.device belongs to another client than the "
                                   "executable (take it from kiln_client_device of the executable's client)");
    }
    execution.options.device = given.device->device;
  } else {
    execution.options.device =
        execution.arguments.empty() ? devices.handles.front()->device : execution.arguments.front()->device;
  }
  for (size_t i = 0; i < execution.arguments.size(); ++i) {
    if (execution.arguments[i]->device != execution.options.device) {
      return kiln::InvalidArgument(function, ": argument ", i, " lives on ",
                                   execution.arguments[i]->device->description(),
                                   " but the execution runs on ", execution.options.device->description(),
                                   " (kiln_execute_options_t.device, or the first argument's device); "
                                   "kiln_buffer_copy_to_device moves it");
    }
  }

  execution.donated.assign(num_arguments, false);
  if (given.num_donated_arguments != 0 && given.donated_arguments == nullptr)
    return kiln::capi::NullArgument(function, "kiln_execute_options_t.donated_arguments");
  for (size_t k = 0; k < given.num_donated_arguments; ++k) {
    const size_t index = given.donated_arguments[k];
    if (index >= num_arguments) {
      return kiln::InvalidArgument(function, ": kiln_execute_options_t.donated_arguments[", k, "] is ", index,
                                   " but the executable takes ", num_arguments, " arguments");
    }
    if (execution.donated[index]) {
      return kiln::InvalidArgument(function, ": kiln_execute_options_t.donated_arguments names argument ",
                                   index, " twice");
    }
    execution.donated[index] = true;
  }

  const size_t num_results = executable->executable->result_leaves().size();
  if (results_capacity < num_results) {
    return kiln::InvalidArgument(function, ": results_capacity is ", results_capacity,
                                 " but the executable returns ", num_results, " results");
  }
  if (num_results != 0 && results == nullptr) return kiln::capi::NullArgument(function, "results");
  return execution;
}

// Hands the donated arguments' slots to the execution: their handles refuse
// every later use but destroy.
void Donate(const Execution& execution, kiln_buffer_t* const* arguments) {
  for (size_t i = 0; i < execution.donated.size(); ++i) {
    if (execution.donated[i]) arguments[i]->Donate();
  }
}

// Runs a prepared execution on this thread once its arguments are ready.
StatusOr<std::vector<std::unique_ptr<kiln::DeviceBuffer>>> Run(Execution& execution) {
  std::vector<kiln::DeviceBuffer*> device_arguments;
  device_arguments.reserve(execution.arguments.size());
  for (size_t i = 0; i < execution.arguments.size(); ++i) {
    const BufferSlot& slot = *execution.arguments[i];
    if (Status filled = slot.ready.Await(); !filled.ok()) {
      return Status(filled.code(), kiln::internal::StrCat(execution.function, ": argument ", i,
                                                          " holds no data because the execution that was to "
                                                          "fill it failed: ",
                                                          filled.message()));
    }
    device_arguments.push_back(slot.buffer.get());
  }
  StatusOr<std::vector<std::unique_ptr<kiln::DeviceBuffer>>> executed =
      execution.executable->Execute(device_arguments, execution.options);
  // Donated arguments are let go now: their memory returns unless another
  // execution still reads them.
  for (size_t i = 0; i < execution.arguments.size(); ++i) {
    if (execution.donated[i]) execution.arguments[i].reset();
  }
  if (!executed.ok()) return ExplainStop(execution.function, executed.status(), execution.timeout_ns);
  const size_t expected = execution.executable->result_leaves().size();
  if (executed->size() != expected) {
    return kiln::Internal(execution.function, ": the backend returned ", executed->size(),
                          " results, expected ", expected);
  }
  return executed;
}

std::unique_ptr<kiln_buffer_t> NewHandle(const kiln_executable_t& executable,
                                         std::shared_ptr<BufferSlot> slot) {
  auto handle = std::make_unique<kiln_buffer_t>();
  handle->backend = executable.backend;
  handle->devices = executable.devices;
  handle->slot = std::move(slot);
  return handle;
}

}  // namespace

extern "C" {

kiln_status_t* kiln_executable_execute(kiln_executable_t* executable, kiln_buffer_t* const* arguments,
                                       size_t num_arguments, const kiln_execute_options_t* options,
                                       kiln_buffer_t** results, size_t results_capacity,
                                       size_t* out_num_results) {
  // The deadline counts from the call, before anything is checked.
  const auto called_at = kiln::StopCondition::Clock::now();
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(executable);
    KILN_CAPI_CHECK_NOT_NULL(out_num_results);
    KILN_ASSIGN_OR_RETURN(Execution execution,
                          Prepare(kiln_capi_function, executable, arguments, num_arguments, options, results,
                                  results_capacity, called_at));
    Donate(execution, arguments);
    KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<kiln::DeviceBuffer>> outputs, Run(execution));
    // Wrap everything first so that a failure part-way leaks nothing and
    // leaves `results` untouched.
    std::vector<std::unique_ptr<kiln_buffer_t>> wrapped;
    wrapped.reserve(outputs.size());
    for (std::unique_ptr<kiln::DeviceBuffer>& output : outputs) {
      wrapped.push_back(kiln::capi::WrapReadyBuffer(executable->devices, std::move(output)));
    }
    for (size_t i = 0; i < wrapped.size(); ++i) results[i] = wrapped[i].release();
    *out_num_results = wrapped.size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_executable_execute_async(kiln_executable_t* executable, kiln_buffer_t* const* arguments,
                                             size_t num_arguments, const kiln_execute_options_t* options,
                                             kiln_buffer_t** results, size_t results_capacity,
                                             size_t* out_num_results, kiln_event_t** out_event) {
  const auto called_at = kiln::StopCondition::Clock::now();
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(executable);
    KILN_CAPI_CHECK_NOT_NULL(out_num_results);
    KILN_CAPI_CHECK_NOT_NULL(out_event);
    KILN_ASSIGN_OR_RETURN(Execution execution,
                          Prepare(kiln_capi_function, executable, arguments, num_arguments, options, results,
                                  results_capacity, called_at));
    // The results exist now, empty; the execution fills them and then makes
    // the one event they share ready.
    struct Job {
      Execution execution;
      kiln::Promise done;
      std::vector<std::shared_ptr<BufferSlot>> results;
    };
    auto job = std::make_shared<Job>();
    const std::vector<kiln::Shape>& leaves = executable->executable->result_leaves();
    std::vector<std::unique_ptr<kiln_buffer_t>> handles;
    for (const kiln::Shape& leaf : leaves) {
      auto slot = std::make_shared<BufferSlot>(leaf, execution.options.device, job->done.event());
      job->results.push_back(slot);
      handles.push_back(NewHandle(*executable, std::move(slot)));
    }
    auto event = std::make_unique<kiln_event_t>(kiln_event_t{job->done.event()});
    std::vector<kiln::Event> inputs;
    for (const std::shared_ptr<BufferSlot>& argument : execution.arguments) inputs.push_back(argument->ready);
    job->execution = std::move(execution);

    // Nothing below can fail: hand out the results, then start.
    Donate(job->execution, arguments);
    for (size_t i = 0; i < handles.size(); ++i) results[i] = handles[i].release();
    *out_num_results = leaves.size();
    *out_event = event.release();
    kiln::AllReady(inputs).OnReady([job](const Status&) {
      kiln::RunInBackground([job]() noexcept {
        Status outcome = kiln::OkStatus();
        try {
          StatusOr<std::vector<std::unique_ptr<kiln::DeviceBuffer>>> outputs = Run(job->execution);
          if (outputs.ok()) {
            for (size_t i = 0; i < job->results.size(); ++i)
              job->results[i]->buffer = std::move((*outputs)[i]);
          } else {
            outcome = outputs.status();
          }
        } catch (const std::bad_alloc&) {
          outcome = kiln::ResourceExhausted(job->execution.function, ": out of memory");
        } catch (...) {
          outcome = kiln::Internal(job->execution.function, ": unexpected internal error");
        }
        // Drop the arguments and the executable before waking waiters, so that
        // whoever waits sees the memory already returned.
        job->execution.arguments.clear();
        job->done.Set(std::move(outcome));
      });
    });
    return kiln::OkStatus();
  });
}

}  // extern "C"
