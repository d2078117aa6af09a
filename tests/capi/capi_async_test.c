/* Devices, events, asynchronous execution, donation and host-aliasing
 * buffers (kiln.h 0.2), from plain C99: several cpu devices in one process,
 * placement and its errors, chains of asynchronous executions whose handles
 * are dropped before they finish, failures carried by events and results,
 * donated buffers refused afterwards, and host memory read in place on the
 * cpu backend and copied elsewhere, released exactly once on every path.
 * Exits non-zero when a check fails. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"
#include "programs.h"

static const char kAddOne[] =
    "HloModule add_one\n"
    "ENTRY e {\n"
    "  x = f32[4] parameter(0)\n"
    "  one = f32[] constant(1)\n"
    "  ones = f32[4] broadcast(one), dimensions={}\n"
    "  ROOT y = f32[4] add(x, ones)\n"
    "}\n";

static const int64_t kDims4[] = {4};

static kiln_client_t* new_client(const char* backend, int32_t num_devices) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  options.backend = backend;
  options.num_devices = num_devices;
  kiln_client_t* client = NULL;
  CHECK_OK(kiln_client_create(&options, &client));
  return client;
}

static kiln_executable_t* compile(kiln_client_t* client, const char* hlo) {
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  CHECK_OK(kiln_computation_from_hlo_text(hlo, strlen(hlo), &computation));
  if (computation == NULL) return NULL;
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  kiln_computation_destroy(computation);
  return executable;
}

static kiln_buffer_t* vector_on(kiln_device_t* device, float first) {
  const float data[4] = {first, first + 1, first + 2, first + 3};
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(kiln_device_buffer_from_host(device, KILN_TYPE_F32, kDims4, 1, NULL, data, sizeof data, &buffer));
  return buffer;
}

static void expect_vector(kiln_buffer_t* buffer, float first, int line) {
  float got[4] = {0, 0, 0, 0};
  kiln_status_t* status = kiln_buffer_to_host(buffer, got, sizeof got);
  if (status != NULL) {
    fprintf(stderr, "line %d: reading the buffer failed: %s\n", line, kiln_status_message(status));
    kiln_status_destroy(status);
    ++g_failures;
    return;
  }
  for (int i = 0; i < 4; ++i) {
    if (got[i] != first + (float)i) {
      fprintf(stderr, "line %d: element %d is %g, expected %g\n", line, i, got[i], first + (float)i);
      ++g_failures;
    }
  }
}
#define EXPECT_VECTOR(buffer, first) expect_vector((buffer), (first), __LINE__)

static void test_devices(void) {
  kiln_client_t* client = new_client("cpu", 3);
  if (client == NULL) return;
  size_t count = 0;
  CHECK_OK(kiln_client_device_count(client, &count));
  CHECK(count == 3);
  kiln_device_t* devices[3] = {NULL, NULL, NULL};
  for (size_t i = 0; i < 3; ++i) {
    CHECK_OK(kiln_client_device(client, i, &devices[i]));
    size_t index = 99;
    CHECK_OK(kiln_device_index(devices[i], &index));
    CHECK(index == i);
    const char* description = NULL;
    CHECK_OK(kiln_device_description(devices[i], &description));
    char expected[32];
    snprintf(expected, sizeof expected, "cpu:%d (", (int)i);
    CHECK(description != NULL && strncmp(description, expected, strlen(expected)) == 0);
    CHECK(description != NULL && strstr(description, "shared by 3 devices") != NULL);
  }
  kiln_device_t* again = NULL;
  CHECK_OK(kiln_client_device(client, 1, &again));
  CHECK(again == devices[1]);
  kiln_device_t* none = NULL;
  EXPECT_ERROR(kiln_client_device(client, 3, &none), KILN_STATUS_OUT_OF_RANGE, "kiln_client_device_count");
  CHECK(none == NULL);

  /* Placement: a buffer lives where it was made; an execution runs on its
   * first argument's device and makes its results there. */
  kiln_executable_t* add_one = compile(client, kAddOne);
  kiln_buffer_t* on_two = vector_on(devices[2], 10);
  kiln_device_t* where = NULL;
  CHECK_OK(kiln_buffer_device(on_two, &where));
  CHECK(where == devices[2]);
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  CHECK_OK(kiln_executable_execute(add_one, &on_two, 1, NULL, &result, 1, &num_results));
  CHECK_OK(kiln_buffer_device(result, &where));
  CHECK(where == devices[2]);
  EXPECT_VECTOR(result, 11);
  kiln_buffer_destroy(result);

  /* A chosen device that the argument does not live on. */
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;
  options.device = devices[0];
  result = NULL;
  EXPECT_ERROR(kiln_executable_execute(add_one, &on_two, 1, &options, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "kiln_buffer_copy_to_device");
  CHECK(result == NULL);
  kiln_buffer_t* on_zero = NULL;
  CHECK_OK(kiln_buffer_copy_to_device(on_two, devices[0], &on_zero));
  CHECK_OK(kiln_buffer_device(on_zero, &where));
  CHECK(where == devices[0]);
  CHECK_OK(kiln_executable_execute(add_one, &on_zero, 1, &options, &result, 1, &num_results));
  CHECK_OK(kiln_buffer_device(result, &where));
  CHECK(where == devices[0]);
  EXPECT_VECTOR(result, 11);
  kiln_buffer_destroy(result);

  /* Devices of another client are refused by name. */
  kiln_client_t* other = new_client("cpu", 2);
  kiln_device_t* foreign = NULL;
  CHECK_OK(kiln_client_device(other, 1, &foreign));
  kiln_buffer_t* copy = NULL;
  EXPECT_ERROR(kiln_buffer_copy_to_device(on_two, foreign, &copy), KILN_STATUS_INVALID_ARGUMENT,
               "another client");
  options.device = foreign;
  EXPECT_ERROR(kiln_executable_execute(add_one, &on_zero, 1, &options, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "kiln_execute_options_t.device");
  kiln_client_destroy(other);

  /* Device handles outlive the client while a buffer of it lives. */
  kiln_client_destroy(client);
  CHECK_OK(kiln_buffer_device(on_two, &where));
  const char* description = NULL;
  CHECK_OK(kiln_device_description(where, &description));
  CHECK(description != NULL && strncmp(description, "cpu:2", 5) == 0);

  kiln_buffer_destroy(on_zero);
  kiln_buffer_destroy(on_two);
  kiln_executable_destroy(add_one);

  /* num_devices out of range, and on a GPU-style count check. */
  kiln_client_options_t bad = KILN_CLIENT_OPTIONS_INIT;
  bad.backend = "cpu";
  bad.num_devices = 65;
  kiln_client_t* refused = NULL;
  EXPECT_ERROR(kiln_client_create(&bad, &refused), KILN_STATUS_INVALID_ARGUMENT, "num_devices");
  bad.num_devices = -1;
  EXPECT_ERROR(kiln_client_create(&bad, &refused), KILN_STATUS_INVALID_ARGUMENT, "num_devices");
  CHECK(refused == NULL);
  kiln_client_t* interpreter = new_client("interpreter", 2);
  if (interpreter != NULL) {
    CHECK_OK(kiln_client_device_count(interpreter, &count));
    CHECK(count == 2);
    kiln_client_destroy(interpreter);
  }
}

typedef struct {
  pthread_mutex_t mutex;
  int calls;
  kiln_status_code_t code;
} Observed;

static void observe(const kiln_status_t* status, void* user_data) {
  Observed* observed = (Observed*)user_data;
  pthread_mutex_lock(&observed->mutex);
  ++observed->calls;
  observed->code = status == NULL ? KILN_STATUS_OK : kiln_status_code(status);
  pthread_mutex_unlock(&observed->mutex);
}

static void test_async_chain(const char* backend) {
  kiln_client_t* client = new_client(backend, 0);
  if (client == NULL) return;
  kiln_executable_t* add_one = compile(client, kAddOne);
  kiln_device_t* device = NULL;
  CHECK_OK(kiln_client_device(client, 0, &device));
  kiln_buffer_t* current = vector_on(device, 0);
  enum { kSteps = 20 };
  kiln_event_t* last = NULL;
  Observed observed = {PTHREAD_MUTEX_INITIALIZER, 0, -1};
  for (int step = 0; step < kSteps; ++step) {
    kiln_buffer_t* next = NULL;
    size_t num_results = 0;
    kiln_event_t* event = NULL;
    CHECK_OK(kiln_executable_execute_async(add_one, &current, 1, NULL, &next, 1, &num_results, &event));
    CHECK(num_results == 1 && next != NULL && event != NULL);
    if (next == NULL || event == NULL) break;
    /* The shape is known before the data. */
    int64_t dims[1] = {0};
    CHECK_OK(kiln_buffer_dimensions(next, dims, 1));
    CHECK(dims[0] == 4);
    if (step == 0) CHECK_OK(kiln_event_on_ready(event, observe, &observed));
    /* Dropping the argument at once is fine: the execution holds it. */
    kiln_buffer_destroy(current);
    current = next;
    kiln_event_destroy(last);
    last = event;
  }
  /* The executable and the client may go before the work ends. */
  kiln_executable_destroy(add_one);
  kiln_client_destroy(client);
  CHECK_OK(kiln_event_await(last));
  int ready = 0;
  CHECK_OK(kiln_event_is_ready(last, &ready));
  CHECK(ready == 1);
  kiln_event_t* buffer_ready = NULL;
  CHECK_OK(kiln_buffer_ready_event(current, &buffer_ready));
  CHECK_OK(kiln_event_await(buffer_ready));
  EXPECT_VECTOR(current, kSteps);
  pthread_mutex_lock(&observed.mutex);
  CHECK(observed.calls == 1 && observed.code == KILN_STATUS_OK);
  pthread_mutex_unlock(&observed.mutex);
  /* A callback on a ready event runs at once, on this thread. */
  Observed late = {PTHREAD_MUTEX_INITIALIZER, 0, -1};
  CHECK_OK(kiln_event_on_ready(last, observe, &late));
  CHECK(late.calls == 1 && late.code == KILN_STATUS_OK);
  kiln_event_destroy(buffer_ready);
  kiln_event_destroy(last);
  kiln_buffer_destroy(current);
}

static void test_async_failure(void) {
  kiln_client_t* client = new_client("cpu", 0);
  if (client == NULL) return;
  kiln_executable_t* count_to = compile(client, kCountTo);
  kiln_executable_t* add_one = compile(client, kAddOne);
  const int64_t forever = -1;
  kiln_buffer_t* n = NULL;
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_S64, NULL, 0, NULL, &forever, sizeof forever, &n));
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;
  options.timeout_ns = 20 * 1000000LL;
  kiln_buffer_t* count = NULL;
  size_t num_results = 0;
  kiln_event_t* event = NULL;
  CHECK_OK(kiln_executable_execute_async(count_to, &n, 1, &options, &count, 1, &num_results, &event));
  if (event == NULL || count == NULL) return;
  EXPECT_ERROR(kiln_event_await(event), KILN_STATUS_DEADLINE_EXCEEDED, "timeout_ns");
  int64_t value = 0;
  EXPECT_ERROR(kiln_buffer_to_host(count, &value, sizeof value), KILN_STATUS_DEADLINE_EXCEEDED,
               "execution that was to fill it failed");
  kiln_event_t* ready = NULL;
  CHECK_OK(kiln_buffer_ready_event(count, &ready));
  EXPECT_ERROR(kiln_event_await(ready), KILN_STATUS_DEADLINE_EXCEEDED, "timeout_ns");
  Observed observed = {PTHREAD_MUTEX_INITIALIZER, 0, -1};
  CHECK_OK(kiln_event_on_ready(ready, observe, &observed));
  CHECK(observed.calls == 1 && observed.code == KILN_STATUS_DEADLINE_EXCEEDED);
  kiln_event_destroy(ready);
  kiln_event_destroy(event);

  /* A failed result passed on fails the next execution, sync or async,
   * with the first failure's code. */
  kiln_buffer_t* after = NULL;
  kiln_event_t* chained = NULL;
  CHECK_OK(kiln_executable_execute_async(count_to, &count, 1, NULL, &after, 1, &num_results, &chained));
  if (chained != NULL) {
    EXPECT_ERROR(kiln_event_await(chained), KILN_STATUS_DEADLINE_EXCEEDED, "argument 0 holds no data");
    kiln_event_destroy(chained);
  }
  kiln_buffer_destroy(after);
  after = NULL;
  EXPECT_ERROR(kiln_executable_execute(count_to, &count, 1, NULL, &after, 1, &num_results),
               KILN_STATUS_DEADLINE_EXCEEDED, "argument 0 holds no data");
  CHECK(after == NULL);
  kiln_buffer_destroy(count);

  /* Argument errors come back from the call itself, with nothing written. */
  kiln_buffer_t* result = NULL;
  event = NULL;
  EXPECT_ERROR(kiln_executable_execute_async(add_one, &n, 1, NULL, &result, 1, &num_results, &event),
               KILN_STATUS_INVALID_ARGUMENT, "parameter 0 expects");
  CHECK(result == NULL && event == NULL);
  EXPECT_ERROR(kiln_executable_execute_async(add_one, &n, 1, NULL, &result, 1, &num_results, NULL),
               KILN_STATUS_INVALID_ARGUMENT, "out_event");
  EXPECT_ERROR(kiln_event_await(NULL), KILN_STATUS_INVALID_ARGUMENT, "event");
  EXPECT_ERROR(kiln_event_is_ready(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "event");
  EXPECT_ERROR(kiln_event_on_ready(NULL, observe, NULL), KILN_STATUS_INVALID_ARGUMENT, "event");
  EXPECT_ERROR(kiln_buffer_ready_event(NULL, &event), KILN_STATUS_INVALID_ARGUMENT, "buffer");
  kiln_event_destroy(NULL);
  kiln_buffer_destroy(n);
  kiln_executable_destroy(count_to);
  kiln_executable_destroy(add_one);
  kiln_client_destroy(client);
}

static void test_donation(const char* backend) {
  kiln_client_t* client = new_client(backend, 0);
  if (client == NULL) return;
  kiln_executable_t* add_one = compile(client, kAddOne);
  kiln_device_t* device = NULL;
  CHECK_OK(kiln_client_device(client, 0, &device));
  kiln_buffer_t* x = vector_on(device, 1);
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;

  /* Bad donation lists donate nothing. */
  const size_t out_of_range[] = {1};
  options.donated_arguments = out_of_range;
  options.num_donated_arguments = 1;
  EXPECT_ERROR(kiln_executable_execute(add_one, &x, 1, &options, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "donated_arguments[0] is 1");
  const size_t twice[] = {0, 0};
  options.donated_arguments = twice;
  options.num_donated_arguments = 2;
  EXPECT_ERROR(kiln_executable_execute(add_one, &x, 1, &options, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "twice");
  options.donated_arguments = NULL;
  options.num_donated_arguments = 1;
  EXPECT_ERROR(kiln_executable_execute(add_one, &x, 1, &options, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "donated_arguments");
  EXPECT_VECTOR(x, 1);

  const size_t first[] = {0};
  options.donated_arguments = first;
  options.num_donated_arguments = 1;
  CHECK_OK(kiln_executable_execute(add_one, &x, 1, &options, &result, 1, &num_results));
  EXPECT_VECTOR(result, 2);
  float data[4];
  EXPECT_ERROR(kiln_buffer_to_host(x, data, sizeof data), KILN_STATUS_FAILED_PRECONDITION, "donated");
  size_t rank = 0;
  EXPECT_ERROR(kiln_buffer_rank(x, &rank), KILN_STATUS_FAILED_PRECONDITION, "kiln_buffer_destroy");
  kiln_buffer_t* again = NULL;
  EXPECT_ERROR(kiln_executable_execute(add_one, &x, 1, NULL, &again, 1, &num_results),
               KILN_STATUS_FAILED_PRECONDITION, "argument 0");
  CHECK(again == NULL);
  kiln_buffer_destroy(x);

  /* Donating to an asynchronous execution, with the result donated on. */
  kiln_buffer_t* chained = NULL;
  kiln_event_t* event = NULL;
  CHECK_OK(kiln_executable_execute_async(add_one, &result, 1, &options, &chained, 1, &num_results, &event));
  EXPECT_ERROR(kiln_buffer_to_host(result, data, sizeof data), KILN_STATUS_FAILED_PRECONDITION, "donated");
  CHECK_OK(kiln_event_await(event));
  EXPECT_VECTOR(chained, 3);
  kiln_event_destroy(event);
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(chained);
  kiln_executable_destroy(add_one);
  kiln_client_destroy(client);
}

static int g_releases = 0;
static void count_release(void* user_data) {
  CHECK(user_data == &g_releases);
  ++g_releases;
}

static void test_host_alias(const char* backend, int expect_alias) {
  kiln_client_t* client = new_client(backend, 0);
  if (client == NULL) return;
  kiln_device_t* device = NULL;
  CHECK_OK(kiln_client_device(client, 0, &device));
  float* host = (float*)aligned_alloc(64, 64 * sizeof(float));
  if (host == NULL) return;
  for (int i = 0; i < 4; ++i) host[i] = (float)(i + 5);

  g_releases = 0;
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(kiln_device_buffer_alias_host(device, KILN_TYPE_F32, kDims4, 1, host, 4 * sizeof(float),
                                         count_release, &g_releases, &buffer));
  int is_alias = -1;
  CHECK_OK(kiln_buffer_is_host_alias(buffer, &is_alias));
  CHECK(is_alias == expect_alias);
  CHECK(g_releases == (expect_alias ? 0 : 1));
  EXPECT_VECTOR(buffer, 5);
  /* Run on it, as an argument. */
  kiln_client_t* same = client;
  kiln_executable_t* add_one = compile(same, kAddOne);
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  CHECK_OK(kiln_executable_execute(add_one, &buffer, 1, NULL, &result, 1, &num_results));
  EXPECT_VECTOR(result, 6);
  if (expect_alias) {
    /* Read in place: a change the caller makes shows (the contract forbids
     * it; this only observes that nothing was copied). */
    host[0] = 100;
    float got[4];
    CHECK_OK(kiln_buffer_to_host(buffer, got, sizeof got));
    CHECK(got[0] == 100);
    host[0] = 5;
  }
  kiln_buffer_destroy(buffer);
  CHECK(g_releases == 1);

  /* Data off its element alignment is copied and released before the call
   * returns; at a mere element's offset it is read in place. */
  g_releases = 0;
  CHECK_OK(kiln_device_buffer_alias_host(device, KILN_TYPE_F32, kDims4, 1, (const char*)host + 1,
                                         4 * sizeof(float), count_release, &g_releases, &buffer));
  CHECK(g_releases == 1);
  CHECK_OK(kiln_buffer_is_host_alias(buffer, &is_alias));
  CHECK(is_alias == 0);
  kiln_buffer_destroy(buffer);
  CHECK(g_releases == 1);
  g_releases = 0;
  CHECK_OK(kiln_device_buffer_alias_host(device, KILN_TYPE_F32, kDims4, 1, host + 1, 4 * sizeof(float),
                                         count_release, &g_releases, &buffer));
  CHECK_OK(kiln_buffer_is_host_alias(buffer, &is_alias));
  CHECK(is_alias == expect_alias);
  kiln_buffer_destroy(buffer);
  CHECK(g_releases == 1);

  /* Every failure releases too, exactly once. */
  g_releases = 0;
  buffer = NULL;
  EXPECT_ERROR(kiln_device_buffer_alias_host(device, KILN_TYPE_F32, kDims4, 1, host, 3, count_release,
                                             &g_releases, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "byte_size");
  CHECK(g_releases == 1 && buffer == NULL);
  EXPECT_ERROR(kiln_device_buffer_alias_host(NULL, KILN_TYPE_F32, kDims4, 1, host, 16, count_release,
                                             &g_releases, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "device");
  CHECK(g_releases == 2);
  EXPECT_ERROR(kiln_device_buffer_alias_host(device, KILN_TYPE_F32, kDims4, 1, NULL, 16, count_release,
                                             &g_releases, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "data");
  CHECK(g_releases == 3);
  /* A NULL release is allowed. */
  CHECK_OK(kiln_device_buffer_alias_host(device, KILN_TYPE_F32, kDims4, 1, host, 16, NULL, NULL, &buffer));
  kiln_buffer_destroy(buffer);

  kiln_buffer_destroy(result);
  kiln_executable_destroy(add_one);
  kiln_client_destroy(client);
  free(host);
}

static void test_null_arguments(void) {
  kiln_device_t* device = NULL;
  size_t index = 0;
  const char* text = NULL;
  kiln_buffer_t* buffer = NULL;
  EXPECT_ERROR(kiln_client_device(NULL, 0, &device), KILN_STATUS_INVALID_ARGUMENT, "client");
  EXPECT_ERROR(kiln_device_index(NULL, &index), KILN_STATUS_INVALID_ARGUMENT, "device");
  EXPECT_ERROR(kiln_device_description(NULL, &text), KILN_STATUS_INVALID_ARGUMENT, "device");
  EXPECT_ERROR(kiln_device_buffer_from_host(NULL, KILN_TYPE_F32, kDims4, 1, NULL, NULL, 0, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "device");
  EXPECT_ERROR(kiln_buffer_device(NULL, &device), KILN_STATUS_INVALID_ARGUMENT, "buffer");
  EXPECT_ERROR(kiln_buffer_copy_to_device(NULL, NULL, &buffer), KILN_STATUS_INVALID_ARGUMENT, "buffer");
  EXPECT_ERROR(kiln_buffer_is_host_alias(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "buffer");
}

/* Whether `backend` can run here; says so loudly when it cannot. */
static int backend_runs_here(const char* backend) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  options.backend = backend;
  kiln_client_t* client = NULL;
  kiln_status_t* status = kiln_client_create(&options, &client);
  if (status == NULL) {
    kiln_client_destroy(client);
    return 1;
  }
  CHECK(kiln_status_code(status) == KILN_STATUS_UNAVAILABLE);
  printf("capi_async_test: SKIPPING backend '%s' here: %s\n", backend, kiln_status_message(status));
  kiln_status_destroy(status);
  return 0;
}

int main(void) {
  test_devices();
  size_t backends = 0;
  CHECK_OK(kiln_backend_count(&backends));
  int ran = 0;
  for (size_t i = 0; i < backends; ++i) {
    const char* backend = NULL;
    CHECK_OK(kiln_backend_name(i, &backend));
    if (backend == NULL || !backend_runs_here(backend)) continue;
    test_async_chain(backend);
    test_donation(backend);
    ++ran;
  }
  CHECK(ran >= 2); /* cpu and interpreter run everywhere */
  test_async_failure();
  test_host_alias("cpu", 1);
  test_host_alias("interpreter", 0);
  test_null_arguments();
  if (g_failures != 0) {
    fprintf(stderr, "capi_async_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_async_test: devices, events, async execution, donation and host aliasing work\n");
  return 0;
}
