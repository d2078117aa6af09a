/* A caller built against the first kiln.h that had each option struct: it
 * passes that version's (smaller) struct_size, and the library must read no
 * byte past it (each struct below is allocated at exactly that size, so the
 * sanitizer build catches an over-read) and give the fields it lacks their
 * defaults. Also: a newer header's larger struct is accepted with its extra
 * fields ignored, and a struct_size below the first version is refused.
 * Plain C99 through kiln.h; exits non-zero when any check fails. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

/* Returns 1 when `status` is NULL; otherwise prints and frees it. */
static int ok(kiln_status_t* status, const char* what) {
  if (status == NULL) return 1;
  fprintf(stderr, "%s failed: %s: %s\n", what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_destroy(status);
  ++g_failures;
  return 0;
}

/* The layouts of kiln.h 0.1.0, the first header with these structs. Frozen:
 * they stand for programs compiled long ago. */
typedef struct {
  size_t struct_size;
  const char* backend;
} client_options_v1;
typedef struct {
  size_t struct_size;
  int32_t optimization_level;
  int32_t num_threads;
} compile_options_v1;
typedef struct {
  size_t struct_size;
  uint64_t rng_seed;
} execute_options_v1;
typedef struct {
  size_t struct_size;
  const int64_t* lhs_contracting_dimensions;
  size_t num_lhs_contracting_dimensions;
  const int64_t* rhs_contracting_dimensions;
  size_t num_rhs_contracting_dimensions;
  const int64_t* lhs_batch_dimensions;
  size_t num_lhs_batch_dimensions;
  const int64_t* rhs_batch_dimensions;
  size_t num_rhs_batch_dimensions;
} dot_dimension_numbers_v1;

/* A heap block of exactly `size` bytes holding `value`, its struct_size set. */
static void* exact_copy(const void* value, size_t size) {
  void* block = malloc(size);
  if (block == NULL) abort();
  memcpy(block, value, size);
  memcpy(block, &size, sizeof(size));
  return block;
}

int main(void) {
  static const int64_t kContractLhs[] = {1};
  static const int64_t kContractRhs[] = {0};
  static const float kLhs[] = {1, 2, 3, 4};
  static const float kRhs[] = {10, 20};
  static const int64_t kMatrix[] = {2, 2};
  static const int64_t kVector[] = {2};
  client_options_v1 client_v1 = {0, "interpreter"};
  compile_options_v1 compile_v1 = {0, 0, 1};
  execute_options_v1 execute_v1 = {0, 7};
  dot_dimension_numbers_v1 dot_v1 = {0, kContractLhs, 1, kContractRhs, 1, NULL, 0, NULL, 0};
  client_options_v1* client_options = exact_copy(&client_v1, sizeof client_v1);
  compile_options_v1* compile_options = exact_copy(&compile_v1, sizeof compile_v1);
  execute_options_v1* execute_options = exact_copy(&execute_v1, sizeof execute_v1);
  dot_dimension_numbers_v1* dot_numbers = exact_copy(&dot_v1, sizeof dot_v1);
  kiln_client_t* client = NULL;
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arguments[2] = {NULL, NULL};
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  float values[2] = {0, 0};
  const char* backend = NULL;

  /* Every first-version struct works, and a v1 client picks its backend. */
  if (ok(kiln_client_create((const kiln_client_options_t*)client_options, &client), "create client v1")) {
    CHECK(ok(kiln_client_backend_name(client, &backend), "backend name") &&
          strcmp(backend, "interpreter") == 0);
  }
  if (ok(kiln_builder_create("older_structs", &builder), "builder")) {
    kiln_op_t lhs = kiln_op_parameter(builder, 0, KILN_TYPE_F32, kMatrix, 2, NULL, "lhs");
    kiln_op_t rhs = kiln_op_parameter(builder, 1, KILN_TYPE_F32, kVector, 1, NULL, "rhs");
    kiln_op_dot_general(builder, lhs, rhs, (const kiln_dot_dimension_numbers_t*)dot_numbers);
    ok(kiln_builder_build(builder, KILN_OP_INVALID, &computation), "build with v1 dot dimension numbers");
  }
  if (client != NULL && computation != NULL &&
      ok(kiln_client_compile(client, computation, (const kiln_compile_options_t*)compile_options,
                             &executable),
         "compile v1") &&
      ok(kiln_client_buffer_from_host(client, KILN_TYPE_F32, kMatrix, 2, NULL, kLhs, sizeof kLhs,
                                      &arguments[0]),
         "lhs buffer") &&
      ok(kiln_client_buffer_from_host(client, KILN_TYPE_F32, kVector, 1, NULL, kRhs, sizeof kRhs,
                                      &arguments[1]),
         "rhs buffer") &&
      ok(kiln_executable_execute(executable, arguments, 2, (const kiln_execute_options_t*)execute_options,
                                 &result, 1, &num_results),
         "execute v1")) {
    CHECK(num_results == 1);
    CHECK(ok(kiln_buffer_to_host(result, values, sizeof values), "read result"));
    CHECK(values[0] == 50.0f && values[1] == 110.0f);
  }
  kiln_buffer_destroy(result);
  result = NULL;

  /* A newer header's larger struct: its extra fields are ignored. */
  if (executable != NULL) {
    struct {
      kiln_execute_options_t known;
      uint64_t future_fields[4];
    } newer;
    memset(&newer, 0xff, sizeof newer);
    newer.known = (kiln_execute_options_t)KILN_EXECUTE_OPTIONS_INIT;
    newer.known.struct_size = sizeof newer;
    CHECK(ok(kiln_executable_execute(executable, arguments, 2, &newer.known, &result, 1, &num_results),
             "execute with a newer struct"));
    kiln_buffer_destroy(result);
    result = NULL;
  }

  /* Below the first version: refused, naming the struct and its minimum. */
  if (executable != NULL) {
    kiln_execute_options_t too_small = KILN_EXECUTE_OPTIONS_INIT;
    kiln_status_t* status;
    too_small.struct_size = sizeof(size_t);
    status = kiln_executable_execute(executable, arguments, 2, &too_small, &result, 1, &num_results);
    CHECK(status != NULL && kiln_status_code(status) == KILN_STATUS_INVALID_ARGUMENT);
    CHECK(status != NULL &&
          strstr(kiln_status_message(status), "kiln_execute_options_t.struct_size") != NULL);
    CHECK(status != NULL && strstr(kiln_status_message(status), "at least 16") != NULL);
    kiln_status_destroy(status);
    CHECK(result == NULL);
  }

  kiln_buffer_destroy(arguments[0]);
  kiln_buffer_destroy(arguments[1]);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
  kiln_client_destroy(client);
  free(client_options);
  free(compile_options);
  free(execute_options);
  free(dot_numbers);
  if (g_failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("older_structs: every first-version struct accepted\n");
  return 0;
}
