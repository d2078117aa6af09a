// Compilation and what an executable says of itself (execution.cc runs it).
#include "capi/internal.h"
#include "capi/struct_versions.h"
#include "core/resource_limits.h"

using kiln::Status;
using kiln::capi::Guard;

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
      if (given.allow_unsafe_nan_math != 0 && given.allow_unsafe_nan_math != 1) {
        return kiln::InvalidArgument(kiln_capi_function, ": allow_unsafe_nan_math must be 0 or 1, got ",
                                     given.allow_unsafe_nan_math);
      }
      compile_options.allow_unsafe_nan_math = given.allow_unsafe_nan_math == 1;
      KILN_RETURN_IF_ERROR(kiln::CheckCompileOptions(kiln_capi_function, compile_options));
    }
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::Executable> compiled,
                          client->backend->Compile(*computation->module, compile_options));
    auto executable = std::make_unique<kiln_executable_t>();
    executable->executable = std::move(compiled);
    executable->backend = client->backend;
    executable->devices = client->devices;
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

}  // extern "C"
