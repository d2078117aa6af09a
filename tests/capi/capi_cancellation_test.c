/* Deadlines and cancellation of kiln_executable_execute, from plain C99 on
 * every backend of the library: a while loop that never ends is stopped by
 * kiln_execute_options_t.timeout_ns or by kiln_cancellation_cancel from another
 * thread, and the client, the executable and the argument buffers stay usable.
 * Exits non-zero when a check fails. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"
#include "programs.h"

/* A condition that is always true; the body adds one through a custom call
 * that tells the test the loop is running. */
static const char kForever[] =
    "HloModule forever\n"
    "cond {\n"
    "  s = f32[] parameter(0)\n"
    "  ROOT yes = pred[] constant(true)\n"
    "}\n"
    "body {\n"
    "  s = f32[] parameter(0)\n"
    "  ROOT next = f32[] custom-call(s), custom_call_target=\"kiln_cancellation_test_step\", "
    "custom_call_has_side_effect=true\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[] parameter(0)\n"
    "  ROOT loop = f32[] while(x), condition=cond, body=body\n"
    "}\n";

/* Set by the loop body of kForever once it runs. */
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_running_changed = PTHREAD_COND_INITIALIZER;
static int g_running = 0;

static void step(void* out, const void** in) {
  *(float*)out = *(const float*)in[0] + 1.0f;
  pthread_mutex_lock(&g_mutex);
  if (!g_running) {
    g_running = 1;
    pthread_cond_broadcast(&g_running_changed);
  }
  pthread_mutex_unlock(&g_mutex);
}

static void reset_running(void) {
  pthread_mutex_lock(&g_mutex);
  g_running = 0;
  pthread_mutex_unlock(&g_mutex);
}

static void wait_until_running(void) {
  pthread_mutex_lock(&g_mutex);
  while (!g_running) pthread_cond_wait(&g_running_changed, &g_mutex);
  pthread_mutex_unlock(&g_mutex);
}

static kiln_executable_t* compile(kiln_client_t* client, const char* text) {
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  CHECK_OK(kiln_computation_from_hlo_text(text, strlen(text), &computation));
  if (computation == NULL) return NULL;
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  kiln_computation_destroy(computation);
  return executable;
}

/* kForever on `client`, or NULL. A backend that refuses the host custom call
 * of its body by name (UNIMPLEMENTED: a GPU backend runs no host code inside
 * a loop) is reported, not counted as a failure; the deadline test still
 * runs there on a loop without one. */
static kiln_executable_t* compile_forever(kiln_client_t* client, const char* backend) {
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_status_t* status;
  CHECK_OK(kiln_computation_from_hlo_text(kForever, strlen(kForever), &computation));
  if (computation == NULL) return NULL;
  status = kiln_client_compile(client, computation, NULL, &executable);
  kiln_computation_destroy(computation);
  if (status != NULL && kiln_status_code(status) == KILN_STATUS_UNIMPLEMENTED &&
      strstr(kiln_status_message(status), "custom-call") != NULL) {
    printf("%s: no loop with a host custom call (%s)\n", backend, kiln_status_message(status));
  } else if (status != NULL) {
    fprintf(stderr, "compiling the endless loop on %s failed: %s: %s\n", backend,
            kiln_status_code_name(kiln_status_code(status)), kiln_status_message(status));
    ++g_failures;
  }
  kiln_status_destroy(status);
  return executable;
}

static kiln_buffer_t* s64_scalar(kiln_client_t* client, int64_t value) {
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_S64, NULL, 0, NULL, &value, sizeof(value), &buffer));
  return buffer;
}

/* Runs a one-argument, one-result executable; returns its status. */
static kiln_status_t* run(kiln_executable_t* executable, kiln_buffer_t* argument,
                          const kiln_execute_options_t* options, kiln_buffer_t** result) {
  size_t num_results = 0;
  return kiln_executable_execute(executable, &argument, 1, options, result, 1, &num_results);
}

static void* cancel_once_running(void* cancellation) {
  wait_until_running();
  kiln_cancellation_cancel((kiln_cancellation_t*)cancellation);
  return NULL;
}

static void* destroy_once_running(void* cancellation) {
  wait_until_running();
  kiln_cancellation_destroy((kiln_cancellation_t*)cancellation);
  return NULL;
}

/* The deadline ends an endless loop; the same executable, client and argument
 * buffer then serve a run that finishes. */
static void test_timeout(kiln_client_t* client) {
  kiln_executable_t* executable = compile(client, kCountTo);
  kiln_buffer_t* endless = s64_scalar(client, -1);
  kiln_buffer_t* ten = s64_scalar(client, 10);
  kiln_buffer_t* result = NULL;
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;
  int64_t value = 0;
  if (executable == NULL || endless == NULL || ten == NULL) goto done;
  options.timeout_ns = 30 * 1000000LL;
  EXPECT_ERROR(run(executable, endless, &options, &result), KILN_STATUS_DEADLINE_EXCEEDED, "timeout_ns");
  CHECK(result == NULL);
  CHECK_OK(kiln_buffer_to_host(endless, &value, sizeof(value)));
  CHECK(value == -1);
  CHECK_OK(run(executable, ten, &options, &result));
  if (result != NULL) {
    CHECK_OK(kiln_buffer_to_host(result, &value, sizeof(value)));
    CHECK(value == 10);
  }
  options.timeout_ns = -1;
  EXPECT_ERROR(run(executable, ten, &options, &result), KILN_STATUS_INVALID_ARGUMENT, "timeout_ns");
done:
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(ten);
  kiln_buffer_destroy(endless);
  kiln_executable_destroy(executable);
}

/* Another thread cancels a loop whose condition is always true. */
static void test_cancel_from_another_thread(kiln_client_t* client, const char* backend) {
  kiln_executable_t* executable = compile_forever(client, backend);
  kiln_buffer_t* x = NULL;
  kiln_buffer_t* result = NULL;
  kiln_cancellation_t* cancellation = NULL;
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;
  pthread_t canceller;
  float zero = 0.0f;
  int cancelled = -1;
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, NULL, 0, NULL, &zero, sizeof(zero), &x));
  CHECK_OK(kiln_cancellation_create(&cancellation));
  if (executable == NULL || x == NULL || cancellation == NULL) goto done;
  CHECK_OK(kiln_cancellation_is_cancelled(cancellation, &cancelled));
  CHECK(cancelled == 0);
  options.cancellation = cancellation;
  reset_running();
  CHECK(pthread_create(&canceller, NULL, cancel_once_running, cancellation) == 0);
  EXPECT_ERROR(run(executable, x, &options, &result), KILN_STATUS_CANCELLED, "kiln_cancellation_cancel");
  CHECK(pthread_join(canceller, NULL) == 0);
  CHECK(result == NULL);
  CHECK_OK(kiln_cancellation_is_cancelled(cancellation, &cancelled));
  CHECK(cancelled == 1);
  /* One-shot: the next execute given it does not start. */
  EXPECT_ERROR(run(executable, x, &options, &result), KILN_STATUS_CANCELLED, "cancelled");
done:
  kiln_buffer_destroy(result);
  kiln_cancellation_destroy(cancellation);
  kiln_buffer_destroy(x);
  kiln_executable_destroy(executable);
}

/* The handle may be destroyed while an execute given it runs; the deadline
 * still ends that execute. */
static void test_destroy_while_running(kiln_client_t* client, const char* backend) {
  kiln_executable_t* executable = compile_forever(client, backend);
  kiln_buffer_t* x = NULL;
  kiln_buffer_t* result = NULL;
  kiln_cancellation_t* cancellation = NULL;
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;
  pthread_t destroyer;
  float zero = 0.0f;
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, NULL, 0, NULL, &zero, sizeof(zero), &x));
  CHECK_OK(kiln_cancellation_create(&cancellation));
  if (executable == NULL || x == NULL || cancellation == NULL) {
    kiln_cancellation_destroy(cancellation);
    goto done;
  }
  options.cancellation = cancellation;
  options.timeout_ns = 100 * 1000000LL;
  reset_running();
  CHECK(pthread_create(&destroyer, NULL, destroy_once_running, cancellation) == 0);
  EXPECT_ERROR(run(executable, x, &options, &result), KILN_STATUS_DEADLINE_EXCEEDED, "while 'loop'");
  CHECK(pthread_join(destroyer, NULL) == 0);
done:
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(x);
  kiln_executable_destroy(executable);
}

static void test_handle_arguments(void) {
  int cancelled = 0;
  EXPECT_ERROR(kiln_cancellation_create(NULL), KILN_STATUS_INVALID_ARGUMENT, "out_cancellation");
  EXPECT_ERROR(kiln_cancellation_is_cancelled(NULL, &cancelled), KILN_STATUS_INVALID_ARGUMENT,
               "cancellation");
  kiln_cancellation_cancel(NULL);
  kiln_cancellation_destroy(NULL);
}

int main(void) {
  size_t count = 0, tested = 0;
  size_t i;
  test_handle_arguments();
  CHECK_OK(kiln_register_custom_call("kiln_cancellation_test_step", step));
  CHECK_OK(kiln_backend_count(&count));
  CHECK(count >= 1);
  for (i = 0; i < count; ++i) {
    kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
    kiln_client_t* client = NULL;
    kiln_status_t* status;
    CHECK_OK(kiln_backend_name(i, &options.backend));
    status = kiln_client_create(&options, &client);
    if (status != NULL) {
      /* A backend that cannot run on this machine (cuda without the NVIDIA driver) is
       * skipped; any other failure to create its client is one. */
      if (kiln_status_code(status) == KILN_STATUS_UNAVAILABLE) {
        printf("skipping backend %s: %s\n", options.backend, kiln_status_message(status));
      } else {
        fprintf(stderr, "kiln_client_create(%s) failed: %s: %s\n", options.backend,
                kiln_status_code_name(kiln_status_code(status)), kiln_status_message(status));
        ++g_failures;
      }
      kiln_status_destroy(status);
      continue;
    }
    ++tested;
    test_timeout(client);
    test_cancel_from_another_thread(client, options.backend);
    test_destroy_while_running(client, options.backend);
    kiln_client_destroy(client);
    printf("%s: %s\n", options.backend, g_failures == 0 ? "ok" : "FAILED");
  }
  if (tested == 0) {
    fprintf(stderr, "no backend was tested: every one was skipped or failed to start\n");
    ++g_failures;
  }
  if (g_failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  return 0;
}
