/* Limits of the C ABI: size-like options are refused with INVALID_ARGUMENT
 * naming the limit, files are never read past what their header declares, and
 * an op handle works only with the builder that made it. Plain C99 through
 * kiln.h; exits non-zero when any check fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

/* Expects failure with `code` and a message containing each of the up to three
 * needles (NULL ends the list early); frees the status. */
static void expect_errors(kiln_status_t* status, kiln_status_code_t code, const char* needle1,
                          const char* needle2, const char* needle3, const char* what, int line) {
  const char* needles[3];
  size_t i;
  needles[0] = needle1;
  needles[1] = needle2;
  needles[2] = needle3;
  if (status == NULL) {
    fprintf(stderr, "line %d: %s succeeded, expected %s\n", line, what, kiln_status_code_name(code));
    ++g_failures;
    return;
  }
  if (kiln_status_code(status) != code) {
    fprintf(stderr, "line %d: %s gave %s (%s), expected %s\n", line, what,
            kiln_status_code_name(kiln_status_code(status)), kiln_status_message(status),
            kiln_status_code_name(code));
    ++g_failures;
  }
  for (i = 0; i < 3 && needles[i] != NULL; ++i) {
    if (strstr(kiln_status_message(status), needles[i]) == NULL) {
      fprintf(stderr, "line %d: %s message '%s' does not mention '%s'\n", line, what,
              kiln_status_message(status), needles[i]);
      ++g_failures;
    }
  }
  kiln_status_destroy(status);
}
#define EXPECT_ERRORS(expr, code, n1, n2, n3) expect_errors((expr), (code), (n1), (n2), (n3), #expr, __LINE__)

static kiln_client_t* make_client(void) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  options.backend = "interpreter";
  CHECK_OK(kiln_client_create(&options, &client));
  return client;
}

/* f32 scalar x + 1, built and verified. */
static kiln_computation_t* build_increment(void) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_op_t x;
  CHECK_OK(kiln_builder_create("increment", &builder));
  x = kiln_op_parameter(builder, 0, KILN_TYPE_F32, NULL, 0, NULL, "x");
  kiln_op_add(builder, x, kiln_op_constant_f32(builder, 1.0f), NULL, 0);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &computation));
  kiln_builder_destroy(builder);
  return computation;
}

/* The thread limit the message of a refused thread count gives ("at most N"). */
static long thread_limit_from(const char* message) {
  const char* at = strstr(message, "at most ");
  return at == NULL ? -1 : strtol(at + strlen("at most "), NULL, 10);
}

static void test_compile_option_limits(void) {
  kiln_client_t* client = make_client();
  kiln_computation_t* computation = build_increment();
  kiln_compile_options_t options = KILN_COMPILE_OPTIONS_INIT;
  kiln_executable_t* executable = NULL;
  kiln_status_t* status;
  long limit;

  /* The case: 100000 threads used to be spawned until fork failed. */
  options.num_threads = 100000;
  status = kiln_client_compile(client, computation, &options, &executable);
  CHECK(status != NULL && kiln_status_code(status) == KILN_STATUS_INVALID_ARGUMENT);
  limit = status == NULL ? -1 : thread_limit_from(kiln_status_message(status));
  CHECK(limit >= 16 && limit < 100000);
  EXPECT_ERRORS(status, KILN_STATUS_INVALID_ARGUMENT, "kiln_client_compile", "num_threads is 100000",
                "per hardware thread");
  CHECK(executable == NULL);
  if (limit >= 16 && limit < 100000) {
    options.num_threads = (int32_t)limit + 1;
    EXPECT_ERRORS(kiln_client_compile(client, computation, &options, &executable),
                  KILN_STATUS_INVALID_ARGUMENT, "num_threads", NULL, NULL);
    options.num_threads = (int32_t)limit;
    CHECK_OK(kiln_client_compile(client, computation, &options, &executable));
    kiln_executable_destroy(executable);
    executable = NULL;
  }
  options.num_threads = -1;
  EXPECT_ERRORS(kiln_client_compile(client, computation, &options, &executable), KILN_STATUS_INVALID_ARGUMENT,
                "num_threads must be >= 0", NULL, NULL);

  options.num_threads = 0;
  options.optimization_level = 99;
  EXPECT_ERRORS(kiln_client_compile(client, computation, &options, &executable), KILN_STATUS_INVALID_ARGUMENT,
                "kiln_client_compile", "optimization_level must be 0..3, got 99", NULL);
  options.optimization_level = -1;
  EXPECT_ERRORS(kiln_client_compile(client, computation, &options, &executable), KILN_STATUS_INVALID_ARGUMENT,
                "optimization_level", NULL, NULL);
  CHECK(executable == NULL);
  options.optimization_level = 3;
  CHECK_OK(kiln_client_compile(client, computation, &options, &executable));
  kiln_executable_destroy(executable);
  executable = NULL;

  /* The NaN opt-in is a flag: anything but 0 or 1 is refused by name; 1 is
   * accepted by a backend that keeps NaN anyway. */
  options.allow_unsafe_nan_math = 2;
  EXPECT_ERRORS(kiln_client_compile(client, computation, &options, &executable), KILN_STATUS_INVALID_ARGUMENT,
                "kiln_client_compile", "allow_unsafe_nan_math must be 0 or 1, got 2", NULL);
  CHECK(executable == NULL);
  options.allow_unsafe_nan_math = 1;
  CHECK_OK(kiln_client_compile(client, computation, &options, &executable));
  kiln_executable_destroy(executable);

  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

static void test_empty_backend_name(void) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* untouched = (kiln_client_t*)&options;
  options.backend = "";
  EXPECT_ERRORS(kiln_client_create(&options, &untouched), KILN_STATUS_INVALID_ARGUMENT, "kiln_client_create",
                "empty", "NULL");
  CHECK(untouched == (kiln_client_t*)&options);
}

static void test_ops_cannot_cross_builders(void) {
  kiln_builder_t* first = NULL;
  kiln_builder_t* second = NULL;
  kiln_builder_t* gone = NULL;
  kiln_computation_t* computation = NULL;
  kiln_op_t x, y, stale, list[2];
  CHECK_OK(kiln_builder_create("first", &first));
  CHECK_OK(kiln_builder_create("second", &second));
  x = kiln_op_constant_f32(first, 1.0f);
  y = kiln_op_constant_f32(second, 2.0f);
  CHECK(x != KILN_OP_INVALID && y != KILN_OP_INVALID && x != y && x >= 0 && y >= 0);

  /* The case: both builders hold an op at the same position, so a bare
   * index would have been accepted. */
  CHECK(kiln_op_add(second, x, y, NULL, 0) == KILN_OP_INVALID);
  EXPECT_ERRORS(kiln_builder_first_error(second), KILN_STATUS_INVALID_ARGUMENT, "kiln_op_add: operand 'lhs'",
                "of builder 'first'", "not of builder 'second'");
  EXPECT_ERRORS(kiln_builder_build(second, y, &computation), KILN_STATUS_INVALID_ARGUMENT, "operand 'lhs'",
                NULL, NULL);
  CHECK(computation == NULL);

  /* Queries and build check the handle the same way. */
  EXPECT_ERRORS(kiln_builder_get_shape(first, y, NULL, NULL, 0, NULL), KILN_STATUS_INVALID_ARGUMENT,
                "kiln_builder_get_shape: argument 'op'", "builder 'second'", NULL);
  EXPECT_ERRORS(kiln_builder_build(first, y, &computation), KILN_STATUS_INVALID_ARGUMENT,
                "kiln_builder_build: argument 'root'", "builder 'second'", NULL);
  EXPECT_ERRORS(kiln_builder_get_shape(first, 0, NULL, NULL, 0, NULL), KILN_STATUS_INVALID_ARGUMENT,
                "(handle 0)", "not an op handle", NULL);
  EXPECT_ERRORS(kiln_builder_get_shape(first, KILN_OP_INVALID, NULL, NULL, 0, NULL),
                KILN_STATUS_INVALID_ARGUMENT, "KILN_OP_INVALID", NULL, NULL);
  EXPECT_ERRORS(kiln_builder_build(first, x + 7, &computation), KILN_STATUS_INVALID_ARGUMENT, "op #7",
                "holds only 1 op", NULL);

  /* An op of a destroyed builder, inside a list. */
  CHECK_OK(kiln_builder_create("gone", &gone));
  stale = kiln_op_constant_f32(gone, 3.0f);
  kiln_builder_destroy(gone);
  list[0] = x;
  list[1] = stale;
  CHECK(kiln_op_tuple(first, list, 2) == KILN_OP_INVALID);
  EXPECT_ERRORS(kiln_builder_first_error(first), KILN_STATUS_INVALID_ARGUMENT, "kiln_op_tuple: elements[1]",
                "no longer exists", "builder 'first'");

  kiln_builder_destroy(second);
  kiln_builder_destroy(first);
}

static void test_own_handles_still_work(void) {
  kiln_client_t* client = make_client();
  kiln_computation_t* computation = build_increment();
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* argument = NULL;
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  const float x = 41.0f;
  float y = 0.0f;
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, NULL, 0, NULL, &x, sizeof(x), &argument));
  CHECK_OK(kiln_executable_execute(executable, &argument, 1, NULL, &result, 1, &num_results));
  if (result != NULL) CHECK_OK(kiln_buffer_to_host(result, &y, sizeof(y)));
  CHECK(y == 42.0f);
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(argument);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

/* A format 1.0 header declaring `descr` and `shape`, padded to 64 bytes. */
static size_t npy_header(char* out, const char* descr, const char* shape) {
  char dict[200];
  size_t length;
  sprintf(dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  length = strlen(dict);
  while ((10 + length + 1) % 64 != 0) dict[length++] = ' ';
  dict[length++] = '\n';
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (char)(length & 0xff);
  out[9] = (char)(length >> 8);
  memcpy(out + 10, dict, length);
  return 10 + length;
}

static void test_npy_file_limits(void) {
  const char* path = "kiln_capi_limits_test.npy";
  kiln_client_t* client = make_client();
  kiln_buffer_t* buffer = NULL;
  char header[256];
  size_t header_size;
  FILE* file;

  /* A device that never ends: refused at its first bytes, not read forever. */
  EXPECT_ERRORS(kiln_client_buffer_from_npy_file(client, "/dev/zero", KILN_TYPE_INVALID, &buffer),
                KILN_STATUS_INVALID_ARGUMENT, "kiln_client_buffer_from_npy_file: /dev/zero",
                "not a .npy file", NULL);

  /* A sparse file as large as its header claims (1 TiB of f32): refused from
   * the header, before any of the data is read. */
  header_size = npy_header(header, "<f4", "(274877906944,)");
  file = fopen(path, "wb");
  CHECK(file != NULL);
  if (file != NULL) {
    CHECK(fwrite(header, 1, header_size, file) == header_size);
    CHECK(fseek(file, (long)header_size + (1L << 40) - 1, SEEK_SET) == 0);
    CHECK(fputc(0, file) == 0);
    CHECK(fclose(file) == 0);
    EXPECT_ERRORS(kiln_client_buffer_from_npy_file(client, path, KILN_TYPE_INVALID, &buffer),
                  KILN_STATUS_RESOURCE_EXHAUSTED, "1099511627776 bytes", "physical memory", path);
  }

  /* A header longer than the reader accepts. */
  file = fopen(path, "wb");
  CHECK(file != NULL);
  if (file != NULL) {
    CHECK(fwrite("\x93NUMPY\x02\x00\x00\x00\x20\x00", 1, 12, file) == 12); /* 2 MiB header */
    CHECK(fclose(file) == 0);
    EXPECT_ERRORS(kiln_client_buffer_from_npy_file(client, path, KILN_TYPE_INVALID, &buffer),
                  KILN_STATUS_INVALID_ARGUMENT, "header of 2097152 bytes", NULL, NULL);
  }
  remove(path);

  EXPECT_ERRORS(kiln_client_buffer_from_npy_file(client, "/dev/zero", 99, &buffer),
                KILN_STATUS_INVALID_ARGUMENT, "expected_type 99", NULL, NULL);
  CHECK(buffer == NULL);
  kiln_client_destroy(client);
}

int main(void) {
  test_compile_option_limits();
  test_empty_backend_name();
  test_ops_cannot_cross_builders();
  test_own_handles_still_work();
  test_npy_file_limits();
  if (g_failures != 0) {
    fprintf(stderr, "capi_limits_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_limits_test: all checks passed\n");
  return 0;
}
