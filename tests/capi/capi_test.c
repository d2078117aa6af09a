/* The C ABI tested from plain C99 through kiln.h only. Each check prints what
 * failed; the program exits non-zero when any check fails. Run under ASan the
 * leak checker also verifies that nothing here leaks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

static kiln_client_t* make_client(void) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  options.backend = "interpreter";
  CHECK_OK(kiln_client_create(&options, &client));
  return client;
}

/* Runs a one-result executable on f32 inputs; returns 0 on success. */
static int run_f32(kiln_client_t* client, const kiln_computation_t* computation, const float* const* inputs,
                   const int64_t* dims, size_t rank, size_t num_inputs, float* out, size_t out_count) {
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arguments[4] = {NULL, NULL, NULL, NULL};
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  size_t elements = 1;
  size_t i;
  int ok = 0;
  for (i = 0; i < rank; ++i) elements *= (size_t)dims[i];
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  if (executable == NULL) return 1;
  for (i = 0; i < num_inputs; ++i) {
    CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, rank, NULL, inputs[i],
                                          elements * sizeof(float), &arguments[i]));
  }
  CHECK_OK(kiln_executable_execute(executable, arguments, num_inputs, NULL, &result, 1, &num_results));
  if (result != NULL && num_results == 1) {
    CHECK_OK(kiln_buffer_to_host(result, out, out_count * sizeof(float)));
    ok = 1;
  }
  kiln_buffer_destroy(result);
  for (i = 0; i < num_inputs; ++i) kiln_buffer_destroy(arguments[i]);
  kiln_executable_destroy(executable);
  return ok ? 0 : 1;
}

static void test_version(void) {
  char expected[64];
  snprintf(expected, sizeof(expected), "%d.%d.%d", KILN_VERSION_MAJOR, KILN_VERSION_MINOR,
           KILN_VERSION_PATCH);
  CHECK(strcmp(kiln_version(), expected) == 0);
  CHECK(kiln_version_number() == (uint32_t)KILN_VERSION_NUMBER);
}

static void test_status_basics(void) {
  CHECK(kiln_status_code(NULL) == KILN_STATUS_OK);
  CHECK(strcmp(kiln_status_message(NULL), "") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT") == 0);
  CHECK(strcmp(kiln_status_code_name(KILN_STATUS_DATA_LOSS), "DATA_LOSS") == 0);
  CHECK(strcmp(kiln_status_code_name(99), "UNKNOWN_CODE") == 0);
  CHECK(strcmp(kiln_element_type_name(KILN_TYPE_BF16), "bf16") == 0);
  CHECK(kiln_element_type_byte_width(KILN_TYPE_C128) == 16);
  CHECK(kiln_element_type_byte_width(KILN_TYPE_TUPLE) == 0);
}

static void test_null_arguments(void) {
  kiln_client_options_t small = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  size_t count = 0;
  const char* name = NULL;
  EXPECT_ERROR(kiln_client_create(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "out_client");
  EXPECT_ERROR(kiln_client_device_count(NULL, &count), KILN_STATUS_INVALID_ARGUMENT, "client");
  EXPECT_ERROR(kiln_buffer_rank(NULL, &count), KILN_STATUS_INVALID_ARGUMENT, "buffer");
  EXPECT_ERROR(kiln_executable_result_count(NULL, &count), KILN_STATUS_INVALID_ARGUMENT, "executable");
  EXPECT_ERROR(kiln_computation_to_hlo_text(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "computation");
  EXPECT_ERROR(kiln_builder_create(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "name");
  EXPECT_ERROR(kiln_builder_first_error(NULL), KILN_STATUS_INVALID_ARGUMENT, "builder");
  EXPECT_ERROR(kiln_register_custom_call(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "name");
  EXPECT_ERROR(kiln_backend_name(100000, &name), KILN_STATUS_OUT_OF_RANGE, "100000");
  CHECK(name == NULL);
  CHECK(kiln_op_add(NULL, 0, 1, NULL, 0) == KILN_OP_INVALID);
  /* struct_size smaller than the library knows is refused; out-param untouched. */
  small.struct_size = sizeof(size_t) - 1;
  EXPECT_ERROR(kiln_client_create(&small, &client), KILN_STATUS_INVALID_ARGUMENT, "struct_size");
  CHECK(client == NULL);
  small.struct_size = sizeof(small);
  small.backend = "no-such-backend";
  EXPECT_ERROR(kiln_client_create(&small, &client), KILN_STATUS_NOT_FOUND, "no-such-backend");
  CHECK(client == NULL);
}

static void test_destroy_null(void) {
  kiln_status_destroy(NULL);
  kiln_string_destroy(NULL);
  kiln_client_destroy(NULL);
  kiln_builder_destroy(NULL);
  kiln_computation_destroy(NULL);
  kiln_executable_destroy(NULL);
  kiln_buffer_destroy(NULL);
}

static void test_backends_and_devices(void) {
  size_t count = 0, i, devices = 0;
  int has_interpreter = 0;
  kiln_client_t* client;
  const char* name = NULL;
  CHECK_OK(kiln_backend_count(&count));
  CHECK(count >= 1);
  for (i = 0; i < count; ++i) {
    CHECK_OK(kiln_backend_name(i, &name));
    if (name != NULL && strcmp(name, "interpreter") == 0) has_interpreter = 1;
  }
  CHECK(has_interpreter);
  client = make_client();
  if (client == NULL) return;
  CHECK_OK(kiln_client_backend_name(client, &name));
  CHECK(strcmp(name, "interpreter") == 0);
  CHECK_OK(kiln_client_device_count(client, &devices));
  CHECK(devices >= 1);
  CHECK_OK(kiln_client_device_description(client, 0, &name));
  CHECK(name != NULL && name[0] != '\0');
  EXPECT_ERROR(kiln_client_device_description(client, devices, &name), KILN_STATUS_OUT_OF_RANGE, "device");
  kiln_client_destroy(client);
}

static void test_shape_error(void) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  const int64_t two[1] = {2}, three[1] = {3};
  kiln_op_t a, b, sum;
  CHECK_OK(kiln_builder_create("bad_add", &builder));
  if (builder == NULL) return;
  a = kiln_op_parameter(builder, 0, KILN_TYPE_F32, two, 1, NULL, "a");
  b = kiln_op_parameter(builder, 1, KILN_TYPE_F32, three, 1, NULL, "b");
  CHECK(a != KILN_OP_INVALID && b != KILN_OP_INVALID);
  CHECK(kiln_builder_first_error(builder) == NULL);
  sum = kiln_op_add(builder, a, b, NULL, 0);
  CHECK(sum == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_first_error(builder), KILN_STATUS_INVALID_ARGUMENT, "add");
  /* The error is sticky: later ops fail and build reports the first error. */
  CHECK(kiln_op_neg(builder, a) == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_build(builder, KILN_OP_INVALID, &computation), KILN_STATUS_INVALID_ARGUMENT,
               "add");
  CHECK(computation == NULL);
  kiln_builder_destroy(builder);

  /* A handle the builder never made is refused by name. */
  CHECK_OK(kiln_builder_create("bad_handle", &builder));
  CHECK(kiln_op_abs(builder, 42) == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_first_error(builder), KILN_STATUS_INVALID_ARGUMENT, "kiln_op_abs");
  kiln_builder_destroy(builder);
}

/* f(x, y) = x * y + 1 on f32[2,2]. */
static void test_build_and_run(void) {
  kiln_client_t* client = make_client();
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  const int64_t dims[2] = {2, 2};
  const float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  const float* inputs[2];
  float out[4] = {0, 0, 0, 0};
  int64_t shape_dims[2] = {0, 0};
  kiln_element_type_t type = KILN_TYPE_INVALID;
  size_t rank = 0;
  kiln_op_t px, py, product, result;
  inputs[0] = x;
  inputs[1] = y;
  if (client == NULL) return;
  CHECK_OK(kiln_builder_create("mul_add", &builder));
  px = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 2, NULL, "x");
  py = kiln_op_parameter(builder, 1, KILN_TYPE_F32, dims, 2, NULL, "y");
  product = kiln_op_mul(builder, px, py, NULL, 0);
  result = kiln_op_add(builder, product, kiln_op_constant_f32(builder, 1.0f), NULL, 0);
  CHECK(result != KILN_OP_INVALID);
  CHECK_OK(kiln_builder_get_shape(builder, result, &type, shape_dims, 2, &rank));
  CHECK(type == KILN_TYPE_F32 && rank == 2 && shape_dims[0] == 2 && shape_dims[1] == 2);
  EXPECT_ERROR(kiln_builder_get_shape(builder, result, &type, shape_dims, 1, &rank),
               KILN_STATUS_INVALID_ARGUMENT, "dims_capacity");
  CHECK_OK(kiln_builder_build(builder, result, &computation));
  kiln_builder_destroy(builder);
  if (computation != NULL && run_f32(client, computation, inputs, dims, 2, 2, out, 4) == 0) {
    CHECK(out[0] == 11.0f && out[1] == 41.0f && out[2] == 91.0f && out[3] == 161.0f);
  } else {
    CHECK(!"build and run failed");
  }
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

static kiln_computation_t* build_scalar_add(void) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_op_t a, b;
  CHECK_OK(kiln_builder_create("sum", &builder));
  a = kiln_op_parameter(builder, 0, KILN_TYPE_F32, NULL, 0, NULL, "a");
  b = kiln_op_parameter(builder, 1, KILN_TYPE_F32, NULL, 0, NULL, "b");
  CHECK_OK(kiln_builder_build(builder, kiln_op_add(builder, a, b, NULL, 0), &computation));
  kiln_builder_destroy(builder);
  return computation;
}

/* Reduce rows of a 2x3 matrix with a nested computation; a tuple result
 * comes back as two flattened result buffers. */
static void test_reduce_and_tuple_results(void) {
  kiln_client_t* client = make_client();
  kiln_computation_t* sum = build_scalar_add();
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* results[3] = {NULL, NULL, NULL};
  kiln_buffer_t* untouched[1] = {NULL};
  size_t num_results = 0, count = 0;
  const int64_t dims[2] = {2, 3};
  const float data[6] = {1, 2, 3, 4, 5, 6};
  const int64_t reduce_dims[1] = {1};
  float rows[2] = {0, 0};
  float total = 0;
  kiln_op_t matrix, row_sums, all, elements[2];
  if (client == NULL || sum == NULL) goto done;
  CHECK_OK(kiln_builder_create("reduce", &builder));
  matrix = kiln_op_constant(builder, KILN_TYPE_F32, dims, 2, data, sizeof(data));
  row_sums = kiln_op_reduce(builder, matrix, kiln_op_constant_f32(builder, 0.0f), sum, reduce_dims, 1);
  {
    const int64_t zero[1] = {0};
    all = kiln_op_reduce(builder, row_sums, kiln_op_constant_f32(builder, 0.0f), sum, zero, 1);
  }
  elements[0] = row_sums;
  elements[1] = all;
  CHECK_OK(kiln_builder_build(builder, kiln_op_tuple(builder, elements, 2), &computation));
  kiln_builder_destroy(builder);
  if (computation == NULL) goto done;
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  if (executable == NULL) goto done;
  CHECK_OK(kiln_executable_parameter_count(executable, &count));
  CHECK(count == 0);
  CHECK_OK(kiln_executable_result_count(executable, &count));
  CHECK(count == 2);
  /* Too small a results array is refused before anything runs. */
  EXPECT_ERROR(kiln_executable_execute(executable, NULL, 0, NULL, untouched, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "results_capacity");
  CHECK(untouched[0] == NULL && num_results == 0);
  CHECK_OK(kiln_executable_execute(executable, NULL, 0, NULL, results, 3, &num_results));
  CHECK(num_results == 2);
  if (num_results == 2) {
    CHECK_OK(kiln_buffer_to_host(results[0], rows, sizeof(rows)));
    CHECK_OK(kiln_buffer_to_host(results[1], &total, sizeof(total)));
    CHECK(rows[0] == 6.0f && rows[1] == 15.0f);
    CHECK(total == 21.0f);
  }
  kiln_buffer_destroy(results[0]);
  kiln_buffer_destroy(results[1]);
done:
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_computation_destroy(sum);
  kiln_client_destroy(client);
}

static const char kHloText[] =
    "HloModule add_module\n"
    "\n"
    "ENTRY main {\n"
    "  x = f32[3] parameter(0)\n"
    "  y = f32[3] parameter(1)\n"
    "  ROOT sum = f32[3] add(x, y)\n"
    "}\n";

static void test_hlo_text(void) {
  kiln_client_t* client = make_client();
  kiln_computation_t* computation = NULL;
  kiln_computation_t* reparsed = NULL;
  char* text = NULL;
  size_t params = 0;
  const int64_t dims[1] = {3};
  const float x[3] = {1, 2, 3}, y[3] = {0.5f, 0.25f, 0.125f};
  const float* inputs[2];
  float out[3] = {0, 0, 0};
  inputs[0] = x;
  inputs[1] = y;
  if (client == NULL) return;
  CHECK_OK(kiln_computation_from_hlo_text(kHloText, strlen(kHloText), &computation));
  if (computation != NULL) {
    CHECK_OK(kiln_computation_parameter_count(computation, &params));
    CHECK(params == 2);
    if (run_f32(client, computation, inputs, dims, 1, 2, out, 3) == 0) {
      CHECK(out[0] == 1.5f && out[1] == 2.25f && out[2] == 3.125f);
    }
    CHECK_OK(kiln_computation_to_hlo_text(computation, &text));
    CHECK(text != NULL && strstr(text, "add(") != NULL && strstr(text, "ENTRY") != NULL);
    if (text != NULL) {
      CHECK_OK(kiln_computation_from_hlo_text(text, strlen(text), &reparsed));
      CHECK(reparsed != NULL);
    }
  }
  {
    static const char kBroken[] = "HloModule m\nENTRY e {\n  ROOT x = f32[] negate(\n}\n";
    static const char kUnknownOp[] = "HloModule m\nENTRY e {\n  ROOT x = f32[] bogus()\n}\n";
    kiln_computation_t* broken = NULL;
    EXPECT_ERROR(kiln_computation_from_hlo_text(kBroken, strlen(kBroken), &broken),
                 KILN_STATUS_INVALID_ARGUMENT, "line");
    CHECK(broken == NULL);
    EXPECT_ERROR(kiln_computation_from_hlo_text(kUnknownOp, strlen(kUnknownOp), &broken),
                 KILN_STATUS_UNIMPLEMENTED, "unsupported op 'bogus'");
    CHECK(broken == NULL);
  }
  kiln_string_destroy(text);
  kiln_computation_destroy(reparsed);
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

/* A custom-call target: out[i] = 2 * in0[i] + in1[i] over 4 floats. */
static void twice_plus(void* out, const void** in) {
  const float* a = (const float*)in[0];
  const float* b = (const float*)in[1];
  float* result = (float*)out;
  int i;
  for (i = 0; i < 4; ++i) result[i] = 2.0f * a[i] + b[i];
}

static void other_target(void* out, const void** in) {
  (void)out;
  (void)in;
}

static void test_custom_call(void) {
  kiln_client_t* client = make_client();
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  const int64_t dims[1] = {4};
  const float a[4] = {1, 2, 3, 4}, b[4] = {100, 200, 300, 400};
  const float* inputs[2];
  float out[4] = {0, 0, 0, 0};
  kiln_op_t operands[2];
  inputs[0] = a;
  inputs[1] = b;
  if (client == NULL) return;
  CHECK_OK(kiln_register_custom_call("kiln_capi_test_twice_plus", twice_plus));
  /* Registering the same function again is fine; another one is not. */
  CHECK_OK(kiln_register_custom_call("kiln_capi_test_twice_plus", twice_plus));
  EXPECT_ERROR(kiln_register_custom_call("kiln_capi_test_twice_plus", other_target),
               KILN_STATUS_ALREADY_EXISTS, "kiln_capi_test_twice_plus");
  CHECK_OK(kiln_builder_create("custom", &builder));
  operands[0] = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "a");
  operands[1] = kiln_op_parameter(builder, 1, KILN_TYPE_F32, dims, 1, NULL, "b");
  kiln_op_custom_call(builder, "kiln_capi_test_twice_plus", operands, 2, KILN_TYPE_F32, dims, 1, NULL, 0);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &computation));
  kiln_builder_destroy(builder);
  if (computation != NULL && run_f32(client, computation, inputs, dims, 1, 2, out, 4) == 0) {
    CHECK(out[0] == 102.0f && out[1] == 204.0f && out[2] == 306.0f && out[3] == 408.0f);
  } else {
    CHECK(!"custom call failed");
  }
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

static void test_buffers(void) {
  kiln_client_t* client = make_client();
  kiln_buffer_t* buffer = NULL;
  kiln_buffer_t* untouched = NULL;
  const int64_t dims[3] = {2, 1, 3};
  const int64_t column_major[3] = {0, 1, 2};
  const int32_t data[6] = {1, -2, 3, -4, 5, -6};
  int32_t back[6] = {0, 0, 0, 0, 0, 0};
  int64_t got_dims[3] = {0, 0, 0};
  int64_t order[3] = {0, 0, 0};
  kiln_element_type_t type = KILN_TYPE_INVALID;
  size_t rank = 0, bytes = 0;
  const int64_t negative[1] = {-1};
  const unsigned char preds[3] = {0, 7, 1};
  unsigned char preds_back[3] = {9, 9, 9};
  if (client == NULL) return;
  /* Wrong byte size, bad element type, negative dimension, bad layout. */
  EXPECT_ERROR(kiln_client_buffer_from_host(client, KILN_TYPE_S32, dims, 3, NULL, data, 20, &untouched),
               KILN_STATUS_INVALID_ARGUMENT, "24");
  EXPECT_ERROR(kiln_client_buffer_from_host(client, 99, dims, 3, NULL, data, 24, &untouched),
               KILN_STATUS_INVALID_ARGUMENT, "element type");
  EXPECT_ERROR(kiln_client_buffer_from_host(client, KILN_TYPE_S32, negative, 1, NULL, data, 0, &untouched),
               KILN_STATUS_INVALID_ARGUMENT, "negative");
  EXPECT_ERROR(kiln_client_buffer_from_host(client, KILN_TYPE_S32, dims, 3, NULL, NULL, 24, &untouched),
               KILN_STATUS_INVALID_ARGUMENT, "data");
  EXPECT_ERROR(kiln_client_buffer_from_host(client, KILN_TYPE_S32, NULL, 3, NULL, data, 24, &untouched),
               KILN_STATUS_INVALID_ARGUMENT, "dims");
  CHECK(untouched == NULL);

  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_S32, dims, 3, column_major, data, sizeof(data),
                                        &buffer));
  if (buffer == NULL) goto done;
  CHECK_OK(kiln_buffer_element_type(buffer, &type));
  CHECK(type == KILN_TYPE_S32);
  CHECK_OK(kiln_buffer_rank(buffer, &rank));
  CHECK(rank == 3);
  CHECK_OK(kiln_buffer_dimensions(buffer, got_dims, 3));
  CHECK(got_dims[0] == 2 && got_dims[1] == 1 && got_dims[2] == 3);
  EXPECT_ERROR(kiln_buffer_dimensions(buffer, got_dims, 2), KILN_STATUS_INVALID_ARGUMENT, "capacity");
  CHECK_OK(kiln_buffer_minor_to_major(buffer, order, 3));
  CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2);
  CHECK_OK(kiln_buffer_byte_size(buffer, &bytes));
  CHECK(bytes == sizeof(data));
  EXPECT_ERROR(kiln_buffer_to_host(buffer, back, sizeof(back) - 1), KILN_STATUS_INVALID_ARGUMENT, "24");
  CHECK(back[0] == 0);
  CHECK_OK(kiln_buffer_to_host(buffer, back, sizeof(back)));
  CHECK(memcmp(back, data, sizeof(data)) == 0);
  kiln_buffer_destroy(buffer);
  buffer = NULL;

  /* PRED bytes are normalised to 0/1. */
  {
    const int64_t three[1] = {3};
    CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_PRED, three, 1, NULL, preds, 3, &buffer));
    if (buffer != NULL) {
      CHECK_OK(kiln_buffer_to_host(buffer, preds_back, 3));
      CHECK(preds_back[0] == 0 && preds_back[1] == 1 && preds_back[2] == 1);
    }
  }
done:
  kiln_buffer_destroy(buffer);
  kiln_client_destroy(client);
}

static void test_execute_argument_errors(void) {
  kiln_client_t* client = make_client();
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* argument = NULL;
  kiln_buffer_t* wrong_shape = NULL;
  kiln_buffer_t* arguments[2];
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  const int64_t dims[1] = {3}, four[1] = {4};
  const float x[4] = {1, 2, 3, 4};
  kiln_compile_options_t options = KILN_COMPILE_OPTIONS_INIT;
  kiln_execute_options_t small = KILN_EXECUTE_OPTIONS_INIT;
  if (client == NULL) return;
  CHECK_OK(kiln_computation_from_hlo_text(kHloText, strlen(kHloText), &computation));
  if (computation == NULL) goto done;
  options.optimization_level = 0;
  CHECK_OK(kiln_client_compile(client, computation, &options, &executable));
  if (executable == NULL) goto done;
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, x, 3 * sizeof(float), &argument));
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, four, 1, NULL, x, sizeof(x), &wrong_shape));
  arguments[0] = argument;
  arguments[1] = wrong_shape;
  EXPECT_ERROR(kiln_executable_execute(executable, arguments, 1, NULL, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "takes 2 arguments, got 1");
  EXPECT_ERROR(kiln_executable_execute(executable, arguments, 2, NULL, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "argument 1");
  arguments[1] = NULL;
  EXPECT_ERROR(kiln_executable_execute(executable, arguments, 2, NULL, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "argument 1 is NULL");
  arguments[1] = argument;
  small.struct_size = 1;
  EXPECT_ERROR(kiln_executable_execute(executable, arguments, 2, &small, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "kiln_execute_options_t");
  CHECK(result == NULL && num_results == 0);
done:
  kiln_buffer_destroy(argument);
  kiln_buffer_destroy(wrong_shape);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

/* Host feed: a value queued on the client is read by an infeed op. */
static void test_infeed(void) {
  kiln_client_t* client = make_client();
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  const int64_t dims[1] = {2};
  const float fed[2] = {3.5f, -1.0f};
  float out[2] = {0, 0};
  kiln_op_t value;
  if (client == NULL) return;
  CHECK_OK(kiln_builder_create("infeed", &builder));
  value = kiln_op_infeed(builder, KILN_TYPE_F32, dims, 1, NULL);
  kiln_op_mul(builder, value, kiln_op_constant_f32(builder, 2.0f), NULL, 0);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &computation));
  kiln_builder_destroy(builder);
  CHECK_OK(kiln_client_transfer_to_infeed(client, KILN_TYPE_F32, dims, 1, fed, sizeof(fed)));
  if (computation != NULL && run_f32(client, computation, NULL, dims, 1, 0, out, 2) == 0) {
    CHECK(out[0] == 7.0f && out[1] == -2.0f);
  } else {
    CHECK(!"infeed run failed");
  }
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

/* Buffers and executables outlive their client; arguments from another client
 * are refused. */
static void test_client_lifetime(void) {
  const char* text =
      "HloModule neg\n"
      "ENTRY main {\n"
      "  x = f32[2] parameter(0)\n"
      "  ROOT n = f32[2] negate(x)\n"
      "}\n";
  const int64_t dims[1] = {2};
  const float values[2] = {1.5f, -2.0f};
  float out[2] = {0, 0};
  kiln_client_t* client = make_client();
  kiln_client_t* other = make_client();
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* argument = NULL;
  kiln_buffer_t* foreign = NULL;
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  CHECK_OK(kiln_computation_from_hlo_text(text, strlen(text), &computation));
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, values, sizeof(values), &argument));
  CHECK_OK(
      kiln_client_buffer_from_host(other, KILN_TYPE_F32, dims, 1, NULL, values, sizeof(values), &foreign));
  EXPECT_ERROR(kiln_executable_execute(executable, &foreign, 1, NULL, &result, 1, &num_results),
               KILN_STATUS_INVALID_ARGUMENT, "another client");
  kiln_client_destroy(client);
  kiln_client_destroy(other);
  CHECK_OK(kiln_executable_execute(executable, &argument, 1, NULL, &result, 1, &num_results));
  CHECK(num_results == 1);
  if (result != NULL) CHECK_OK(kiln_buffer_to_host(result, out, sizeof(out)));
  CHECK(out[0] == -1.5f && out[1] == 2.0f);
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(argument);
  kiln_buffer_destroy(foreign);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
}

/* .npy files in and out, and parameter types. */
static void test_npy_files(void) {
  const char* text =
      "HloModule twice\n"
      "ENTRY main {\n"
      "  x = s32[3] parameter(0)\n"
      "  ROOT y = s32[3] add(x, x)\n"
      "}\n";
  const char* path = "kiln_capi_test_array.npy";
  const int64_t dims[1] = {3};
  const int32_t values[3] = {1, -2, 7};
  int32_t out[3] = {0, 0, 0};
  kiln_element_type_t type = KILN_TYPE_INVALID;
  kiln_client_t* client = make_client();
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* written = NULL;
  kiln_buffer_t* read = NULL;
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  CHECK_OK(kiln_computation_from_hlo_text(text, strlen(text), &computation));
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  CHECK_OK(kiln_executable_parameter_type(executable, 0, &type));
  CHECK(type == KILN_TYPE_S32);
  EXPECT_ERROR(kiln_executable_parameter_type(executable, 1, &type), KILN_STATUS_OUT_OF_RANGE, "index 1");
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_S32, dims, 1, NULL, values, sizeof(values), &written));
  CHECK_OK(kiln_buffer_to_npy_file(written, path));
  CHECK_OK(kiln_client_buffer_from_npy_file(client, path, type, &read));
  CHECK_OK(kiln_executable_execute(executable, &read, 1, NULL, &result, 1, &num_results));
  if (result != NULL) CHECK_OK(kiln_buffer_to_host(result, out, sizeof(out)));
  CHECK(out[0] == 2 && out[1] == -4 && out[2] == 14);
  EXPECT_ERROR(kiln_client_buffer_from_npy_file(client, "no_such_file.npy", KILN_TYPE_INVALID, &read),
               KILN_STATUS_NOT_FOUND, "no_such_file.npy");
  remove(path);
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(read);
  kiln_buffer_destroy(written);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

int main(void) {
  test_version();
  test_status_basics();
  test_null_arguments();
  test_destroy_null();
  test_backends_and_devices();
  test_shape_error();
  test_build_and_run();
  test_reduce_and_tuple_results();
  test_hlo_text();
  test_custom_call();
  test_buffers();
  test_execute_argument_errors();
  test_infeed();
  test_client_lifetime();
  test_npy_files();
  if (g_failures != 0) {
    fprintf(stderr, "capi_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_test: all checks passed\n");
  return 0;
}
