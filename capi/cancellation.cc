// Cancellation handles for running executions.
#include "capi/internal.h"

using kiln::Status;
using kiln::capi::Guard;

extern "C" {

kiln_status_t* kiln_cancellation_create(kiln_cancellation_t** out_cancellation) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(out_cancellation);
    auto cancellation = std::make_unique<kiln_cancellation_t>();
    cancellation->flag = std::make_shared<kiln::CancellationFlag>();
    *out_cancellation = cancellation.release();
    return kiln::OkStatus();
  });
}

// No allocation, lock or exception: callable from a signal handler.
void kiln_cancellation_cancel(kiln_cancellation_t* cancellation) {
  if (cancellation != nullptr) cancellation->flag->Cancel();
}

kiln_status_t* kiln_cancellation_is_cancelled(const kiln_cancellation_t* cancellation, int* out_cancelled) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(cancellation);
    KILN_CAPI_CHECK_NOT_NULL(out_cancelled);
    *out_cancelled = cancellation->flag->cancelled() ? 1 : 0;
    return kiln::OkStatus();
  });
}

void kiln_cancellation_destroy(kiln_cancellation_t* cancellation) { delete cancellation; }

}  // extern "C"
