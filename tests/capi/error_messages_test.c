/* Error messages name what a C caller can act on: the public function that
 * failed or the one to call, and the backend the client chose, never Kiln's
 * internal names (C++ functions, a lambda's "operator()", the interpreter
 * when it runs part of another backend's program). Runs on every backend of
 * this build; exits non-zero when a check fails. */
#include <stdio.h>
#include <string.h>

#include "kiln/kiln.h"

static int g_failures = 0;

/* Words of Kiln's internals that a message must not show. */
static const char* const kInternalNames[] = {"operator()", "RegisterCustomCallTarget", "TransferToInfeed",
                                             "kiln::", "Evaluate"};

/* Expects `status` to fail with `code`, mentioning every one of `needles`
 * (NULL-terminated) and no internal name; for a client on a backend other
 * than the interpreter, not the interpreter either. Frees the status. */
static void expect_message(kiln_status_t* status, kiln_status_code_t code, const char* backend,
                           const char* const* needles, int line) {
  const char* message;
  size_t i;
  if (status == NULL) {
    fprintf(stderr, "line %d (%s): succeeded, expected %s\n", line, backend, kiln_status_code_name(code));
    ++g_failures;
    return;
  }
  message = kiln_status_message(status);
  if (kiln_status_code(status) != code) {
    fprintf(stderr, "line %d (%s): %s '%s', expected %s\n", line, backend,
            kiln_status_code_name(kiln_status_code(status)), message, kiln_status_code_name(code));
    ++g_failures;
  }
  for (; *needles != NULL; ++needles) {
    if (strstr(message, *needles) == NULL) {
      fprintf(stderr, "line %d (%s): message '%s' does not mention '%s'\n", line, backend, message, *needles);
      ++g_failures;
    }
  }
  for (i = 0; i < sizeof(kInternalNames) / sizeof(kInternalNames[0]); ++i) {
    if (strstr(message, kInternalNames[i]) != NULL) {
      fprintf(stderr, "line %d (%s): message '%s' names the internal '%s'\n", line, backend, message,
              kInternalNames[i]);
      ++g_failures;
    }
  }
  if (strcmp(backend, "interpreter") != 0 && strstr(message, "interpreter") != NULL) {
    fprintf(stderr, "line %d (%s): message '%s' names the interpreter, not the chosen backend\n", line,
            backend, message);
    ++g_failures;
  }
  kiln_status_destroy(status);
}

#define EXPECT_MESSAGE(status, code, backend, ...)                   \
  do {                                                               \
    const char* const needles_[] = {__VA_ARGS__, NULL};              \
    expect_message((status), (code), (backend), needles_, __LINE__); \
  } while (0)

/* A constant whose data has the wrong size is refused by kiln_op_constant. */
static void test_constant_byte_size(void) {
  const int64_t dims[1] = {4};
  const float data[2] = {1, 2};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  if (kiln_builder_create("constant", &builder) != NULL) {
    ++g_failures;
    return;
  }
  kiln_op_constant(builder, KILN_TYPE_F32, dims, 1, data, sizeof(data));
  EXPECT_MESSAGE(kiln_builder_build(builder, KILN_OP_INVALID, &computation), KILN_STATUS_INVALID_ARGUMENT,
                 "builder", "kiln_op_constant", "bytes");
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
}

/* Compiles `computation` on `client` and runs it without arguments; returns
 * the status of the first failing step. */
static kiln_status_t* compile_and_run(kiln_client_t* client, const kiln_computation_t* computation) {
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* results[2] = {NULL, NULL};
  size_t num_results = 0, i;
  kiln_status_t* status = kiln_client_compile(client, computation, NULL, &executable);
  if (status == NULL) status = kiln_executable_execute(executable, NULL, 0, NULL, results, 2, &num_results);
  for (i = 0; i < num_results; ++i) kiln_buffer_destroy(results[i]);
  kiln_executable_destroy(executable);
  return status;
}

/* An infeed with nothing queued names kiln_client_transfer_to_infeed and the
 * client's backend. */
static void test_empty_infeed(kiln_client_t* client, const char* backend) {
  const int64_t dims[1] = {2};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_status_t* status = kiln_builder_create("infeed", &builder);
  if (status == NULL) {
    kiln_op_infeed(builder, KILN_TYPE_F32, dims, 1, NULL);
    status = kiln_builder_build(builder, KILN_OP_INVALID, &computation);
  }
  if (status != NULL) {
    fprintf(stderr, "building the infeed computation failed: %s\n", kiln_status_message(status));
    kiln_status_destroy(status);
    ++g_failures;
  } else {
    EXPECT_MESSAGE(compile_and_run(client, computation), KILN_STATUS_FAILED_PRECONDITION, backend, "infeed",
                   "kiln_client_transfer_to_infeed", backend);
  }
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
}

/* A custom call to a target nobody registered names kiln_register_custom_call
 * and the client's backend. */
static void test_unregistered_custom_call(kiln_client_t* client, const char* backend) {
  const int64_t dims[1] = {2};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_status_t* status = kiln_builder_create("custom", &builder);
  if (status == NULL) {
    kiln_op_custom_call(builder, "kiln_error_messages_test_nobody", NULL, 0, KILN_TYPE_F32, dims, 1, NULL, 0);
    status = kiln_builder_build(builder, KILN_OP_INVALID, &computation);
  }
  if (status != NULL) {
    fprintf(stderr, "building the custom-call computation failed: %s\n", kiln_status_message(status));
    kiln_status_destroy(status);
    ++g_failures;
  } else {
    EXPECT_MESSAGE(compile_and_run(client, computation), KILN_STATUS_NOT_FOUND, backend,
                   "kiln_error_messages_test_nobody", "kiln_register_custom_call", backend);
  }
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
}

int main(void) {
  size_t count = 0, tested = 0, index;
  kiln_status_t* status = kiln_backend_count(&count);
  if (status != NULL || count == 0) {
    fprintf(stderr, "no backends\n");
    kiln_status_destroy(status);
    return 1;
  }
  test_constant_byte_size();
  for (index = 0; index < count; ++index) {
    kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
    kiln_client_t* client = NULL;
    const char* backend = NULL;
    if (kiln_backend_name(index, &backend) != NULL) return 1;
    options.backend = backend;
    status = kiln_client_create(&options, &client);
    if (status != NULL) {
      /* A backend that cannot run on this machine (UNAVAILABLE, as cuda without
       * the NVIDIA driver) is skipped; any other failure to create its client is one. */
      if (kiln_status_code(status) == KILN_STATUS_UNAVAILABLE) {
        printf("skipping backend %s: %s\n", backend, kiln_status_message(status));
      } else {
        fprintf(stderr, "kiln_client_create(%s) failed: %s: %s\n", backend,
                kiln_status_code_name(kiln_status_code(status)), kiln_status_message(status));
        ++g_failures;
      }
      kiln_status_destroy(status);
      continue;
    }
    ++tested;
    test_empty_infeed(client, backend);
    test_unregistered_custom_call(client, backend);
    printf("backend %s checked\n", backend);
    kiln_client_destroy(client);
  }
  if (tested == 0) {
    fprintf(stderr, "no backend was tested: every one was skipped or failed to start\n");
    ++g_failures;
  }
  if (g_failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("error messages name public functions and the chosen backend\n");
  return 0;
}
