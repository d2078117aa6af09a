/* Gradients through the C ABI: kiln_computation_vjp and
 * kiln_computation_value_and_grad build computations that run on the default
 * backend and give the derivatives worked out by hand; bad arguments and
 * programs without a derivative are refused with a message naming the
 * function and what is wrong. Exits non-zero when a check fails. */
#include <math.h>
#include <stdlib.h>

#include "check.h"

enum { kN = 3 };

/* (a, b) -> a + b over f32 scalars, the reducer of a sum. */
/* The scalar computation (a, b) -> op(a, b) of f32s, called `name`. */
static kiln_computation_t* scalar_f32(const char* name, kiln_op_t (*op)(kiln_builder_t*, kiln_op_t, kiln_op_t,
                                                                        const int64_t*, size_t)) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  CHECK_OK(kiln_builder_create(name, &builder));
  op(builder, kiln_op_parameter(builder, 0, KILN_TYPE_F32, NULL, 0, NULL, "a"),
     kiln_op_parameter(builder, 1, KILN_TYPE_F32, NULL, 0, NULL, "b"), NULL, 0);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &computation));
  kiln_builder_destroy(builder);
  return computation;
}

static kiln_computation_t* add_f32(void) { return scalar_f32("add", kiln_op_add); }

/* The sum of all elements of `operand` (rank 1). */
static kiln_op_t sum(kiln_builder_t* builder, kiln_op_t operand, const kiln_computation_t* add) {
  const int64_t dims[1] = {0};
  return kiln_op_reduce(builder, operand, kiln_op_constant_f32(builder, 0.0f), add, dims, 1);
}

/* loss(w: f32[3], x: f32[3], n: s32[]) = sum(w * w * x) */
static kiln_computation_t* build_loss(void) {
  const int64_t dims[1] = {kN};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* add = add_f32();
  kiln_computation_t* loss = NULL;
  kiln_op_t w, x;
  CHECK_OK(kiln_builder_create("loss", &builder));
  w = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "w");
  x = kiln_op_parameter(builder, 1, KILN_TYPE_F32, dims, 1, NULL, "x");
  kiln_op_parameter(builder, 2, KILN_TYPE_S32, NULL, 0, NULL, "n");
  sum(builder, kiln_op_mul(builder, kiln_op_mul(builder, w, w, NULL, 0), x, NULL, 0), add);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &loss));
  kiln_builder_destroy(builder);
  kiln_computation_destroy(add);
  return loss;
}

/* Compiles `computation` on `client`, runs it on `arguments` and
 * copies each of the `num_results` f32 results (`result_sizes[i]` elements)
 * to `results[i]`. */
static void run(kiln_client_t* client, const kiln_computation_t* computation, kiln_buffer_t* const* arguments,
                size_t num_arguments, float* const* results, const size_t* result_sizes, size_t num_results) {
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* outputs[8] = {NULL};
  size_t count = 0, i;
  if (client == NULL) return;
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  if (executable != NULL) {
    CHECK_OK(kiln_executable_execute(executable, arguments, num_arguments, NULL, outputs, 8, &count));
    CHECK(count == num_results);
    for (i = 0; i < count && i < num_results; ++i) {
      CHECK_OK(kiln_buffer_to_host(outputs[i], results[i], result_sizes[i] * sizeof(float)));
      kiln_buffer_destroy(outputs[i]);
    }
  }
  kiln_executable_destroy(executable);
}

static kiln_buffer_t* f32_vector(kiln_client_t* client, const float* data) {
  const int64_t dims[1] = {kN};
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, data, kN * sizeof(float), &buffer));
  return buffer;
}

static int near(float a, float b) { return fabsf(a - b) <= 1e-5f * (1.0f + fabsf(b)); }

/* value_and_grad of a scalar loss: (loss, dloss/dx, dloss/dw) in wrt's order. */
static void test_value_and_grad(void) {
  static const float w[kN] = {1.0f, -2.0f, 0.5f};
  static const float x[kN] = {3.0f, 0.25f, -4.0f};
  const int32_t n = 7;
  const int64_t wrt[2] = {1, 0};
  kiln_computation_t* loss = build_loss();
  kiln_computation_t* gradient = NULL;
  kiln_client_t* client = NULL;
  kiln_buffer_t* arguments[3] = {NULL, NULL, NULL};
  float value = 0, dx[kN], dw[kN];
  float* results[3] = {&value, dx, dw};
  const size_t sizes[3] = {1, kN, kN};
  size_t count = 0, i;

  CHECK_OK(kiln_computation_value_and_grad(loss, wrt, 2, &gradient));
  if (gradient == NULL) {
    kiln_computation_destroy(loss);
    return;
  }
  CHECK_OK(kiln_computation_parameter_count(gradient, &count));
  CHECK(count == 3); /* the same parameters, no cotangent */
  CHECK_OK(kiln_client_create(NULL, &client));
  arguments[0] = f32_vector(client, w);
  arguments[1] = f32_vector(client, x);
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_S32, NULL, 0, NULL, &n, sizeof(n), &arguments[2]));
  run(client, gradient, arguments, 3, results, sizes, 3);
  CHECK(near(value, 1.0f * 3.0f + 4.0f * 0.25f + 0.25f * -4.0f));
  for (i = 0; i < kN; ++i) {
    CHECK(near(dx[i], w[i] * w[i]));
    CHECK(near(dw[i], 2.0f * w[i] * x[i]));
  }
  for (i = 0; i < 3; ++i) kiln_buffer_destroy(arguments[i]);
  kiln_client_destroy(client);
  kiln_computation_destroy(gradient);
  kiln_computation_destroy(loss);
}

/* vjp of a vector result: one cotangent parameter, appended; the result is
 * (f(x), cotangent * f'(x)). */
static void test_vjp_of_a_vector_function(void) {
  static const float x[kN] = {0.0f, 1.0f, -0.5f};
  static const float cotangent[kN] = {1.0f, 2.0f, -3.0f};
  const int64_t dims[1] = {kN};
  const int64_t wrt[1] = {0};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* f = NULL;
  kiln_computation_t* vjp = NULL;
  kiln_client_t* client = NULL;
  kiln_buffer_t* arguments[2] = {NULL, NULL};
  float y[kN], dx[kN];
  float* results[2] = {y, dx};
  const size_t sizes[2] = {kN, kN};
  size_t count = 0, i;

  CHECK_OK(kiln_builder_create("f", &builder));
  kiln_op_sin(builder, kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x"));
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &f));
  kiln_builder_destroy(builder);
  CHECK_OK(kiln_computation_vjp(f, wrt, 1, &vjp));
  if (vjp == NULL) {
    kiln_computation_destroy(f);
    return;
  }
  CHECK_OK(kiln_computation_parameter_count(vjp, &count));
  CHECK(count == 2);
  CHECK_OK(kiln_client_create(NULL, &client));
  arguments[0] = f32_vector(client, x);
  arguments[1] = f32_vector(client, cotangent);
  run(client, vjp, arguments, 2, results, sizes, 2);
  for (i = 0; i < kN; ++i) {
    CHECK(near(y[i], sinf(x[i])));
    CHECK(near(dx[i], cotangent[i] * cosf(x[i])));
  }
  kiln_buffer_destroy(arguments[0]);
  kiln_buffer_destroy(arguments[1]);
  kiln_client_destroy(client);
  kiln_computation_destroy(vjp);
  kiln_computation_destroy(f);
}

/* vjp of a tuple result: one cotangent per leaf, in order; the gradient sums
 * what each leaf pulls back: (sin x, x * x) -> c0 cos x + 2 c1 x. */
static void test_vjp_of_a_tuple_result(void) {
  static const float x[kN] = {0.5f, -1.0f, 2.0f};
  static const float c0[kN] = {1.0f, -2.0f, 0.5f};
  static const float c1[kN] = {3.0f, 0.25f, -1.0f};
  const int64_t dims[1] = {kN};
  const int64_t wrt[1] = {0};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* f = NULL;
  kiln_computation_t* vjp = NULL;
  kiln_client_t* client = NULL;
  kiln_buffer_t* arguments[3] = {NULL, NULL, NULL};
  kiln_op_t leaves[2], parameter;
  float sine[kN], square[kN], dx[kN];
  float* results[3] = {sine, square, dx};
  const size_t sizes[3] = {kN, kN, kN};
  size_t count = 0, i;

  CHECK_OK(kiln_builder_create("pair", &builder));
  parameter = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x");
  leaves[0] = kiln_op_sin(builder, parameter);
  leaves[1] = kiln_op_mul(builder, parameter, parameter, NULL, 0);
  CHECK_OK(kiln_builder_build(builder, kiln_op_tuple(builder, leaves, 2), &f));
  kiln_builder_destroy(builder);
  CHECK_OK(kiln_computation_vjp(f, wrt, 1, &vjp));
  if (vjp == NULL) {
    kiln_computation_destroy(f);
    return;
  }
  CHECK_OK(kiln_computation_parameter_count(vjp, &count));
  CHECK(count == 3); /* x, then a cotangent per leaf */
  CHECK_OK(kiln_client_create(NULL, &client));
  arguments[0] = f32_vector(client, x);
  arguments[1] = f32_vector(client, c0);
  arguments[2] = f32_vector(client, c1);
  run(client, vjp, arguments, 3, results, sizes, 3);
  for (i = 0; i < kN; ++i) {
    CHECK(near(sine[i], sinf(x[i])));
    CHECK(near(square[i], x[i] * x[i]));
    CHECK(near(dx[i], c0[i] * cosf(x[i]) + 2.0f * c1[i] * x[i]));
  }
  for (i = 0; i < 3; ++i) kiln_buffer_destroy(arguments[i]);
  kiln_client_destroy(client);
  kiln_computation_destroy(vjp);
  kiln_computation_destroy(f);
}

/* A message naming `function`, never the command line's "kiln grad". */
static void expect_grad_error(kiln_status_t* status, kiln_status_code_t code, const char* function,
                              const char* needle, int line) {
  if (status != NULL && strstr(kiln_status_message(status), function) == NULL) {
    fprintf(stderr, "line %d: message '%s' does not name %s\n", line, kiln_status_message(status), function);
    ++g_failures;
  }
  if (status != NULL && strstr(kiln_status_message(status), "kiln grad") != NULL) {
    fprintf(stderr, "line %d: message '%s' names the command line\n", line, kiln_status_message(status));
    ++g_failures;
  }
  expect_error(status, code, needle, function, line);
}
#define EXPECT_GRAD_ERROR(expr, code, function, needle) \
  expect_grad_error((expr), (code), (function), (needle), __LINE__)

/* map is differentiated through its body: sum(map(add, x, x)) has gradient 2. */
static void test_map(void) {
  static const float x[kN] = {0.5f, -1.0f, 3.0f};
  const int64_t dims[1] = {kN};
  const int64_t first[1] = {0};
  kiln_computation_t* add = add_f32();
  kiln_computation_t* mapped = NULL;
  kiln_computation_t* gradient = NULL;
  kiln_builder_t* builder = NULL;
  kiln_client_t* client = NULL;
  kiln_buffer_t* argument = NULL;
  float value = 0, dx[kN];
  float* results[2] = {&value, dx};
  const size_t sizes[2] = {1, kN};
  size_t i;

  CHECK_OK(kiln_builder_create("mapped", &builder));
  {
    const kiln_op_t parameter = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x");
    const kiln_op_t pair[2] = {parameter, parameter};
    sum(builder, kiln_op_map(builder, pair, 2, add, first, 1), add);
  }
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &mapped));
  kiln_builder_destroy(builder);
  CHECK_OK(kiln_computation_value_and_grad(mapped, first, 1, &gradient));
  if (gradient != NULL) {
    CHECK_OK(kiln_client_create(NULL, &client));
    argument = f32_vector(client, x);
    run(client, gradient, &argument, 1, results, sizes, 2);
    CHECK(near(value, 2.0f * (0.5f - 1.0f + 3.0f)));
    for (i = 0; i < kN; ++i) CHECK(near(dx[i], 2.0f));
    kiln_buffer_destroy(argument);
    kiln_client_destroy(client);
  }
  kiln_computation_destroy(gradient);
  kiln_computation_destroy(mapped);
  kiln_computation_destroy(add);
}

/* The gradient of a product reduction: the product of the other elements,
 * exact beside a zero (no division by x). */
static void test_product(void) {
  static const float x[kN] = {2.0f, 0.0f, 5.0f};
  const int64_t dims[1] = {kN};
  const int64_t first[1] = {0};
  kiln_computation_t* multiply = scalar_f32("multiply", kiln_op_mul);
  kiln_computation_t* product = NULL;
  kiln_computation_t* gradient = NULL;
  kiln_builder_t* builder = NULL;
  kiln_client_t* client = NULL;
  kiln_buffer_t* argument = NULL;
  float value = -1, dx[kN];
  float* results[2] = {&value, dx};
  const size_t sizes[2] = {1, kN};

  CHECK_OK(kiln_builder_create("product", &builder));
  kiln_op_reduce(builder, kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x"),
                 kiln_op_constant_f32(builder, 1.0f), multiply, first, 1);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &product));
  kiln_builder_destroy(builder);
  CHECK_OK(kiln_computation_value_and_grad(product, first, 1, &gradient));
  if (gradient != NULL) {
    CHECK_OK(kiln_client_create(NULL, &client));
    argument = f32_vector(client, x);
    run(client, gradient, &argument, 1, results, sizes, 2);
    CHECK(value == 0.0f);
    CHECK(dx[0] == 0.0f && dx[1] == 10.0f && dx[2] == 0.0f);
    kiln_buffer_destroy(argument);
    kiln_client_destroy(client);
  }
  kiln_computation_destroy(gradient);
  kiln_computation_destroy(product);
  kiln_computation_destroy(multiply);
}

static void test_errors(void) {
  const int64_t dims[1] = {kN};
  const int64_t past_the_end[1] = {3};
  const int64_t negative[1] = {-1};
  const int64_t twice[3] = {0, 1, 0};
  const int64_t integer[1] = {2};
  const int64_t first[1] = {0};
  kiln_computation_t* loss = build_loss();
  kiln_computation_t* add = scalar_f32("add", kiln_op_add);
  kiln_computation_t* out = NULL;
  kiln_computation_t* opaque = NULL;
  kiln_computation_t* vector = NULL;
  kiln_builder_t* builder = NULL;

  EXPECT_GRAD_ERROR(kiln_computation_vjp(loss, past_the_end, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "parameter 3");
  EXPECT_GRAD_ERROR(kiln_computation_vjp(loss, negative, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "parameter -1");
  EXPECT_GRAD_ERROR(kiln_computation_value_and_grad(loss, twice, 3, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_value_and_grad", "wrt[2] repeats parameter 0");
  EXPECT_GRAD_ERROR(kiln_computation_value_and_grad(loss, integer, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_value_and_grad", "s32");
  EXPECT_GRAD_ERROR(kiln_computation_vjp(loss, first, 0, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "wrt is empty");
  EXPECT_GRAD_ERROR(kiln_computation_vjp(loss, NULL, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "wrt");
  EXPECT_GRAD_ERROR(kiln_computation_vjp(NULL, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "computation");
  EXPECT_GRAD_ERROR(kiln_computation_vjp(loss, first, 1, NULL), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "out_computation");
  CHECK(out == NULL); /* failing calls leave the out-parameter alone */

  /* A custom call with no gradient registered (no registered op defines one)
   * has no derivative: INVALID_ARGUMENT naming the op. */
  CHECK_OK(kiln_builder_create("opaque", &builder));
  {
    kiln_op_t x = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x");
    kiln_op_reduce(
        builder,
        kiln_op_custom_call(builder, "kiln_test_no_gradient", &x, 1, KILN_TYPE_F32, dims, 1, NULL, 0),
        kiln_op_constant_f32(builder, 0.0f), add, first, 1);
  }
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &opaque));
  kiln_builder_destroy(builder);
  EXPECT_GRAD_ERROR(kiln_computation_value_and_grad(opaque, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_value_and_grad", "'custom-call' is not differentiable");

  /* A bit cast has no derivative at all: INVALID_ARGUMENT naming the op. */
  CHECK_OK(kiln_builder_create("bits", &builder));
  kiln_op_bitcast_convert(
      builder,
      kiln_op_bitcast_convert(builder, kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x"),
                              KILN_TYPE_S32),
      KILN_TYPE_F32);
  CHECK_OK(kiln_builder_build(builder, KILN_OP_INVALID, &vector));
  kiln_builder_destroy(builder);
  EXPECT_GRAD_ERROR(kiln_computation_vjp(vector, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_vjp", "'bitcast-convert' is not differentiable");
  /* value_and_grad wants one scalar. */
  EXPECT_GRAD_ERROR(kiln_computation_value_and_grad(vector, first, 1, &out), KILN_STATUS_INVALID_ARGUMENT,
                    "kiln_computation_value_and_grad", "f32[3]");
  CHECK(out == NULL);

  kiln_computation_destroy(vector);
  kiln_computation_destroy(opaque);
  kiln_computation_destroy(add);
  kiln_computation_destroy(loss);
}

int main(void) {
  test_value_and_grad();
  test_vjp_of_a_vector_function();
  test_vjp_of_a_tuple_result();
  test_map();
  test_product();
  test_errors();
  if (g_failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return EXIT_FAILURE;
  }
  printf("capi grad test passed\n");
  return EXIT_SUCCESS;
}
