// Events: the completion of asynchronous executions and of buffers.
#include "capi/internal.h"

using kiln::Status;
using kiln::capi::Guard;

extern "C" {

kiln_status_t* kiln_event_await(const kiln_event_t* event) {
  if (event == nullptr) return kiln::capi::ToCStatus(kiln::capi::NullArgument(__func__, "event"));
  return Guard(__func__, [&]() -> Status { return event->event.Await(); });
}

kiln_status_t* kiln_event_is_ready(const kiln_event_t* event, int* out_ready) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(event);
    KILN_CAPI_CHECK_NOT_NULL(out_ready);
    *out_ready = event->event.IsReady() ? 1 : 0;
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_event_on_ready(const kiln_event_t* event, kiln_event_callback_fn callback,
                                   void* user_data) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(event);
    KILN_CAPI_CHECK_NOT_NULL(callback);
    event->event.OnReady([callback, user_data](const Status& outcome) noexcept {
      if (outcome.ok()) {
        callback(nullptr, user_data);
        return;
      }
      // Lent to the callback for the duration of the call only. Should the
      // copy of the message fail for want of memory, the static
      // out-of-memory status stands in for it.
      kiln_status_t* status = kiln::capi::ToCStatus(outcome);
      callback(status, user_data);
      kiln_status_destroy(status);
    });
    return kiln::OkStatus();
  });
}

void kiln_event_destroy(kiln_event_t* event) { delete event; }

}  // extern "C"
