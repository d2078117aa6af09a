// Compilation and execution.
#include <chrono>

#include "capi/internal.h"
#include "capi/struct_versions.h"
#include "core/resource_limits.h"

using kiln::Status;
using kiln::StatusOr;
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

}  // namespace

extern "C" {

kiln_status_t* kiln_client_compile(kiln_client_t* client, const kiln_computation_t* computation,
                                   const kiln_compile_options_t* options,
                                   kiln_executable_t** out_executable) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(client);
    KILN_CAPI_CHECK_NOT_NULL(computation);
    KILN_CAPI_CHECK_NOT_NULL(out_executable);
    kiln::CompileOptions compile_options;
    if (options != nullptr) {
      KILN_ASSIGN_OR_RETURN(const kiln_compile_options_t given,
                            kiln::capi::ReadStruct(kiln_capi_function, options));
      compile_options.optimization_level = given.optimization_level;
      compile_options.num_threads = given.num_threads;
      KILN_RETURN_IF_ERROR(kiln::CheckCompileOptions(kiln_capi_function, compile_options));
    }
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::Executable> compiled,
                          client->backend->Compile(*computation->module, compile_options));
    auto executable = std::make_unique<kiln_executable_t>();
    executable->executable = std::move(compiled);
    executable->backend = client->backend;
    *out_executable = executable.release();
    return kiln::OkStatus();
  });
}

void kiln_executable_destroy(kiln_executable_t* executable) { delete executable; }

kiln_status_t* kiln_executable_parameter_count(const kiln_executable_t* executable, size_t* out_count) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(executable);
    KILN_CAPI_CHECK_NOT_NULL(out_count);
    *out_count = executable->executable->parameter_leaves().size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_executable_parameter_type(const kiln_executable_t* executable, size_t index,
                                              kiln_element_type_t* out_type) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(executable);
    KILN_CAPI_CHECK_NOT_NULL(out_type);
    const auto& parameters = executable->executable->parameter_leaves();
    if (index >= parameters.size()) {
      return kiln::OutOfRange(kiln_capi_function, ": parameter index ", index, " but the executable takes ",
                              parameters.size(), " arguments");
    }
    *out_type = static_cast<kiln_element_type_t>(parameters[index].element_type());
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_executable_result_count(const kiln_executable_t* executable, size_t* out_count) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(executable);
    KILN_CAPI_CHECK_NOT_NULL(out_count);
    *out_count = executable->executable->result_leaves().size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_executable_execute(kiln_executable_t* executable, kiln_buffer_t* const* arguments,
                                       size_t num_arguments, const kiln_execute_options_t* options,
                                       kiln_buffer_t** results, size_t results_capacity,
                                       size_t* out_num_results) {
  // The deadline counts from the call, before anything is checked.
  const auto called_at = kiln::StopCondition::Clock::now();
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(executable);
    KILN_CAPI_CHECK_NOT_NULL(out_num_results);
    kiln::ExecuteOptions execute_options;
    int64_t timeout_ns = 0;
    if (options != nullptr) {
      KILN_ASSIGN_OR_RETURN(const kiln_execute_options_t given,
                            kiln::capi::ReadStruct(kiln_capi_function, options));
      execute_options.rng_seed = given.rng_seed;
      KILN_ASSIGN_OR_RETURN(execute_options.stop, StopConditionOf(kiln_capi_function, given, called_at));
      timeout_ns = given.timeout_ns;
    }
    const std::vector<kiln::Shape>& parameters = executable->executable->parameter_leaves();
    if (num_arguments != parameters.size()) {
      return kiln::InvalidArgument(kiln_capi_function, ": the executable takes ", parameters.size(),
                                   " arguments, got ", num_arguments);
    }
    if (num_arguments != 0 && arguments == nullptr)
      return kiln::capi::NullArgument(kiln_capi_function, "arguments");
    std::vector<kiln::DeviceBuffer*> device_arguments;
    device_arguments.reserve(num_arguments);
    for (size_t i = 0; i < num_arguments; ++i) {
      if (arguments[i] == nullptr) {
        return kiln::InvalidArgument(kiln_capi_function, ": argument ", i, " is NULL");
      }
      if (arguments[i]->backend != executable->backend) {
        return kiln::InvalidArgument(kiln_capi_function, ": argument ", i,
                                     " was made by another client than the executable");
      }
      const kiln::Shape& given = arguments[i]->buffer->shape();
      if (!given.Compatible(parameters[i])) {
        return kiln::InvalidArgument(kiln_capi_function, ": argument ", i, " is ", given.ToString(),
                                     " but parameter ", i, " expects ", parameters[i].ToString());
      }
      device_arguments.push_back(arguments[i]->buffer.get());
    }
    const size_t num_results = executable->executable->result_leaves().size();
    if (results_capacity < num_results) {
      return kiln::InvalidArgument(kiln_capi_function, ": results_capacity is ", results_capacity,
                                   " but the executable returns ", num_results, " results");
    }
    if (num_results != 0 && results == nullptr)
      return kiln::capi::NullArgument(kiln_capi_function, "results");
    StatusOr<std::vector<std::unique_ptr<kiln::DeviceBuffer>>> executed =
        executable->executable->Execute(device_arguments, execute_options);
    if (!executed.ok()) return ExplainStop(kiln_capi_function, executed.status(), timeout_ns);
    std::vector<std::unique_ptr<kiln::DeviceBuffer>> outputs = std::move(executed).value();
    if (outputs.size() > results_capacity) {
      return kiln::Internal(kiln_capi_function, ": the backend returned ", outputs.size(),
                            " results, expected ", num_results);
    }
    // Wrap everything first so that a failure part-way leaks nothing and
    // leaves `results` untouched.
    std::vector<std::unique_ptr<kiln_buffer_t>> wrapped;
    wrapped.reserve(outputs.size());
    for (std::unique_ptr<kiln::DeviceBuffer>& output : outputs) {
      auto buffer = std::make_unique<kiln_buffer_t>();
      buffer->backend = executable->backend;
      buffer->buffer = std::move(output);
      wrapped.push_back(std::move(buffer));
    }
    for (size_t i = 0; i < wrapped.size(); ++i) results[i] = wrapped[i].release();
    *out_num_results = wrapped.size();
    return kiln::OkStatus();
  });
}

}  // extern "C"
