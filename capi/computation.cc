// Computations: HLO text in and out, signature queries, destruction.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "capi/internal.h"
#include "core/hlo_parser.h"
#include "core/hlo_printer.h"

using kiln::Status;
using kiln::capi::Guard;

extern "C" {

kiln_status_t* kiln_computation_from_hlo_text(const char* text, size_t text_size,
                                              kiln_computation_t** out_computation) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(text);
    KILN_CAPI_CHECK_NOT_NULL(out_computation);
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::Module> module,
                          kiln::ParseHloModule(std::string_view(text, text_size)));
    auto computation = std::make_unique<kiln_computation_t>();
    computation->module = std::move(module);
    *out_computation = computation.release();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_computation_to_hlo_text(const kiln_computation_t* computation, char** out_text) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(computation);
    KILN_CAPI_CHECK_NOT_NULL(out_text);
    const std::string text = kiln::PrintModule(*computation->module);
    // malloc so that kiln_string_destroy is a plain free, whatever allocator
    // the caller's language uses.
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (copy == nullptr)
      return kiln::ResourceExhausted(kiln_capi_function, ": out of memory for ", text.size(), " bytes");
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out_text = copy;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_computation_parameter_count(const kiln_computation_t* computation, size_t* out_count) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(computation);
    KILN_CAPI_CHECK_NOT_NULL(out_count);
    const kiln::Computation* entry = computation->module->entry();
    if (entry == nullptr)
      return kiln::FailedPrecondition(kiln_capi_function, ": the module has no entry computation");
    *out_count = entry->parameters().size();
    return kiln::OkStatus();
  });
}

void kiln_computation_destroy(kiln_computation_t* computation) { delete computation; }

}  // extern "C"
