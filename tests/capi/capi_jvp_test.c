/* Forward mode through the C ABI: kiln_computation_jvp builds a computation
 * that runs on the default backend and gives the results and their
 * tangents worked out by hand (an integer result's tangent is zeros); bad
 * arguments and programs without a derivative are refused with a message
 * naming the function and what is wrong. Exits non-zero when a check
 * fails. */
#include <math.h>
#include <stdlib.h>

#include "check.h"

enum { kN = 3 };

/* f(w: f32[3], x: f32[3], n: s32[]) = (sin(w) * x, n) */
static kiln_computation_t* build_f(void) {
  const int64_t dims[1] = {kN};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* f = NULL;
  kiln_op_t w, x, n, elements[2];
  CHECK_OK(kiln_builder_create("f", &builder));
  w = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "w");
  x = kiln_op_parameter(builder, 1, KILN_TYPE_F32, dims, 1, NULL, "x");
  n = kiln_op_parameter(builder, 2, KILN_TYPE_S32, NULL, 0, NULL, "n");
  elements[0] = kiln_op_mul(builder, kiln_op_sin(builder, w), x, NULL, 0);
  elements[1] = n;
  kiln_op_tuple(builder, elements, 2);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &f));
  kiln_builder_destroy(builder);
  return f;
}

static kiln_buffer_t* f32_vector(kiln_client_t* client, const float* data) {
  const int64_t dims[1] = {kN};
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, data, kN * sizeof(float), &buffer));
  return buffer;
}

static int near(float a, float b) { return fabsf(a - b) <= 1e-5f * (1.0f + fabsf(b)); }

/* Parameters (w, x, n, dx, dw) for wrt = {1, 0}; results (f, n, df, dn). */
static void test_jvp(void) {
  static const float w[kN] = {1.0f, -2.0f, 0.5f};
  static const float x[kN] = {3.0f, 0.25f, -4.0f};
  static const float dw[kN] = {0.5f, 1.0f, -1.5f};
  static const float dx[kN] = {2.0f, -1.0f, 0.125f};
  const int32_t n = 7;
  const int64_t wrt[2] = {1, 0};
  kiln_computation_t* f = build_f();
  kiln_computation_t* jvp = NULL;
  kiln_client_t* client = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arguments[5] = {NULL};
  kiln_buffer_t* outputs[8] = {NULL};
  float value[kN], tangent[kN];
  int32_t count_value = 0, count_tangent = -1;
  size_t count = 0, i;

  CHECK_OK(kiln_computation_jvp(f, wrt, 2, &jvp));
  if (jvp == NULL) {
    kiln_computation_destroy(f);
    return;
  }
  CHECK_OK(kiln_computation_parameter_count(jvp, &count));
  CHECK(count == 5); /* the parameters, then one tangent per wrt entry */
  CHECK_OK(kiln_client_create(NULL, &client));
  arguments[0] = f32_vector(client, w);
  arguments[1] = f32_vector(client, x);
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_S32, NULL, 0, NULL, &n, sizeof(n), &arguments[2]));
  arguments[3] = f32_vector(client, dx); /* wrt[0] is x */
  arguments[4] = f32_vector(client, dw);
  CHECK_OK(kiln_client_compile(client, jvp, NULL, &executable));
  if (executable != NULL) {
    CHECK_OK(kiln_executable_execute(executable, arguments, 5, NULL, outputs, 8, &count));
    CHECK(count == 4);
    if (count == 4) {
      CHECK_OK(kiln_buffer_to_host(outputs[0], value, sizeof(value)));
      CHECK_OK(kiln_buffer_to_host(outputs[1], &count_value, sizeof(count_value)));
      CHECK_OK(kiln_buffer_to_host(outputs[2], tangent, sizeof(tangent)));
      CHECK_OK(kiln_buffer_to_host(outputs[3], &count_tangent, sizeof(count_tangent)));
      for (i = 0; i < kN; ++i) {
        CHECK(near(value[i], sinf(w[i]) * x[i]));
        CHECK(near(tangent[i], cosf(w[i]) * dw[i] * x[i] + sinf(w[i]) * dx[i]));
      }
      CHECK(count_value == n);
      CHECK(count_tangent == 0); /* an integer result has no tangent: zero */
    }
    for (i = 0; i < count && i < 8; ++i) kiln_buffer_destroy(outputs[i]);
  }
  kiln_executable_destroy(executable);
  for (i = 0; i < 5; ++i) kiln_buffer_destroy(arguments[i]);
  kiln_client_destroy(client);
  kiln_computation_destroy(jvp);
  kiln_computation_destroy(f);
}

/* A message naming `function`, never the command line's "kiln jvp". */
static void expect_jvp_error(kiln_status_t* status, kiln_status_code_t code, const char* needle, int line) {
  if (status != NULL && strstr(kiln_status_message(status), "kiln_computation_jvp") == NULL) {
    fprintf(stderr, "line %d: message '%s' does not name kiln_computation_jvp\n", line,
            kiln_status_message(status));
    ++g_failures;
  }
  if (status != NULL && strstr(kiln_status_message(status), "kiln jvp") != NULL) {
    fprintf(stderr, "line %d: message '%s' names the command line\n", line, kiln_status_message(status));
    ++g_failures;
  }
  expect_error(status, code, needle, "kiln_computation_jvp", line);
}
#define EXPECT_JVP_ERROR(expr, code, needle) expect_jvp_error((expr), (code), (needle), __LINE__)

static void test_errors(void) {
  const int64_t dims[1] = {kN};
  const int64_t past_the_end[1] = {3};
  const int64_t twice[2] = {0, 0};
  const int64_t integer[1] = {2};
  const int64_t first[1] = {0};
  kiln_computation_t* f = build_f();
  kiln_computation_t* noise = NULL;
  kiln_computation_t* out = NULL;
  kiln_builder_t* builder = NULL;

  EXPECT_JVP_ERROR(kiln_computation_jvp(f, past_the_end, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                   "parameter 3");
  EXPECT_JVP_ERROR(kiln_computation_jvp(f, twice, 2, &out), KILN_STATUS_INVALID_ARGUMENT,
                   "wrt[1] repeats parameter 0");
  EXPECT_JVP_ERROR(kiln_computation_jvp(f, integer, 1, &out), KILN_STATUS_INVALID_ARGUMENT, "s32");
  EXPECT_JVP_ERROR(kiln_computation_jvp(f, first, 0, &out), KILN_STATUS_INVALID_ARGUMENT, "wrt is empty");
  EXPECT_JVP_ERROR(kiln_computation_jvp(NULL, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT, "computation");
  EXPECT_JVP_ERROR(kiln_computation_jvp(f, first, 1, NULL), KILN_STATUS_INVALID_ARGUMENT, "out_computation");
  CHECK(out == NULL); /* failing calls leave the out-parameter alone */

  /* Random numbers have no derivative in their bounds: INVALID_ARGUMENT naming the op. */
  CHECK_OK(kiln_builder_create("random", &builder));
  {
    const kiln_op_t low = kiln_op_parameter(builder, 0, KILN_TYPE_F32, NULL, 0, NULL, "low");
    kiln_op_rng_uniform(builder, low, kiln_op_constant_f32(builder, 1.0f), KILN_TYPE_F32, dims, 1);
  }
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &noise));
  kiln_builder_destroy(builder);
  EXPECT_JVP_ERROR(kiln_computation_jvp(noise, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                   "'rng' is not differentiable");
  CHECK(out == NULL);
  kiln_computation_destroy(noise);
  kiln_computation_destroy(f);
}

/* JvpCube(x: float) = x^3 with the gradient 3 x^2 dy: forward mode derives
 * its tangent 3 x^2 v from that gradient. */
static kiln_status_t* cube_kernel(const kiln_op_call_frame_t* frame) {
  const float* x = (const float*)frame->args[0].data;
  float* y = (float*)frame->results[0].data;
  size_t i;
  for (i = 0; i < frame->results[0].byte_size / sizeof(float); ++i) y[i] = x[i] * x[i] * x[i];
  return NULL;
}

static kiln_status_t* cube_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                const kiln_op_t* outputs, const kiln_op_t* output_grads, size_t num_outputs,
                                const kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                void* user_data) {
  const kiln_op_t square = kiln_op_mul(builder, operands[0], operands[0], NULL, 0);
  (void)num_operands, (void)outputs, (void)num_outputs, (void)attrs, (void)num_attrs, (void)user_data;
  operand_grads[0] =
      kiln_op_mul(builder, kiln_op_mul(builder, kiln_op_constant_f32(builder, 3.0f), square, NULL, 0),
                  output_grads[0], NULL, 0);
  return NULL;
}

/* A gradient that goes through bit casts, which have no derivative. */
static kiln_status_t* opaque_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                  const kiln_op_t* outputs, const kiln_op_t* output_grads, size_t num_outputs,
                                  const kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                  void* user_data) {
  (void)operands, (void)num_operands, (void)outputs, (void)num_outputs, (void)attrs, (void)num_attrs,
      (void)user_data;
  operand_grads[0] = kiln_op_bitcast_convert(
      builder, kiln_op_bitcast_convert(builder, output_grads[0], KILN_TYPE_S32), KILN_TYPE_F32);
  return NULL;
}

static void register_op(const char* name, kiln_op_grad_fn grad) {
  kiln_user_op_def_t* def = NULL;
  CHECK_OK(kiln_user_op_def_create(name, &def));
  CHECK_OK(kiln_user_op_def_add_input(def, "x: float"));
  CHECK_OK(kiln_user_op_def_add_output(def, "y: float"));
  if (grad != NULL) CHECK_OK(kiln_user_op_def_set_grad_fn(def, grad));
  CHECK_OK(kiln_user_op_register(def));
  kiln_user_op_def_destroy(def);
  CHECK_OK(kiln_user_op_register_kernel(name, "host", KILN_TYPE_F32, cube_kernel, NULL, NULL));
}

/* f(x: f32[3]) = op(x). */
static kiln_computation_t* call_op(const char* name) {
  const int64_t dims[1] = {kN};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* f = NULL;
  kiln_op_t x;
  CHECK_OK(kiln_builder_create("registered", &builder));
  x = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x");
  CHECK_OK(kiln_builder_build(builder, kiln_op_call_registered(builder, name, &x, 1, NULL), &f));
  kiln_builder_destroy(builder);
  return f;
}

static void test_registered_ops(void) {
  static const float x[kN] = {1.0f, -2.0f, 0.5f};
  static const float v[kN] = {2.0f, 0.5f, -4.0f};
  const int64_t first[1] = {0};
  kiln_computation_t *cube = NULL, *jvp = NULL, *refused = NULL, *out = NULL;
  kiln_client_t* client = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arguments[2] = {NULL, NULL};
  kiln_buffer_t* outputs[4] = {NULL};
  float value[kN], tangent[kN];
  size_t count = 0, i;

  register_op("JvpCube", cube_grad);
  register_op("JvpCubeNoGradient", NULL);
  register_op("JvpCubeOpaqueGradient", opaque_grad);
  cube = call_op("JvpCube");
  CHECK_OK(kiln_computation_jvp(cube, first, 1, &jvp));
  CHECK_OK(kiln_client_create(NULL, &client));
  arguments[0] = f32_vector(client, x);
  arguments[1] = f32_vector(client, v);
  if (jvp != NULL) CHECK_OK(kiln_client_compile(client, jvp, NULL, &executable));
  if (executable != NULL) {
    CHECK_OK(kiln_executable_execute(executable, arguments, 2, NULL, outputs, 4, &count));
    CHECK(count == 2);
    if (count == 2) {
      CHECK_OK(kiln_buffer_to_host(outputs[0], value, sizeof(value)));
      CHECK_OK(kiln_buffer_to_host(outputs[1], tangent, sizeof(tangent)));
      for (i = 0; i < kN; ++i) {
        CHECK(near(value[i], x[i] * x[i] * x[i]));
        CHECK(near(tangent[i], 3.0f * x[i] * x[i] * v[i]));
      }
    }
    for (i = 0; i < count && i < 4; ++i) kiln_buffer_destroy(outputs[i]);
  }
  kiln_executable_destroy(executable);
  for (i = 0; i < 2; ++i) kiln_buffer_destroy(arguments[i]);
  kiln_client_destroy(client);

  /* Without a gradient function there is nothing to derive the tangent from. */
  refused = call_op("JvpCubeNoGradient");
  EXPECT_JVP_ERROR(kiln_computation_jvp(refused, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                   "JvpCubeNoGradient");
  kiln_computation_destroy(refused);
  /* A gradient that cannot be differentiated: UNIMPLEMENTED naming the op. */
  refused = call_op("JvpCubeOpaqueGradient");
  EXPECT_JVP_ERROR(kiln_computation_jvp(refused, first, 1, &out), KILN_STATUS_UNIMPLEMENTED,
                   "no forward-mode rule for registered op 'JvpCubeOpaqueGradient'");
  kiln_computation_destroy(refused);
  CHECK(out == NULL);
  kiln_computation_destroy(jvp);
  kiln_computation_destroy(cube);
}

int main(void) {
  test_jvp();
  test_errors();
  test_registered_ops();
  if (g_failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return EXIT_FAILURE;
  }
  printf("capi jvp test passed\n");
  return EXIT_SUCCESS;
}
