/* The seed's ZeroOut op defined from C and run: the int32 version, the one
 * with preserve_index (its default and its bounds check), the polymorphic
 * T: {float, int32} version and the list version. Prints each result, the
 * HLO text of a call and the gradient of a loss through ZeroOutPoly.
 *
 *   kiln_sample_zero_out [cpu|interpreter]     */
#include <stdio.h>
#include <stdlib.h>

#include "zero_out_ops.h"

static int fail(kiln_status_t* status, const char* what) {
  fprintf(stderr, "%s: %s: %s\n", what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_destroy(status);
  return 1;
}

/* Builds op(x) (or op(x, y) when y is not NULL) with `attrs`, runs it on
 * `client` and prints every result. */
static int run(kiln_client_t* client, const char* op, const char* attrs, kiln_element_type_t type,
               const void* x, const void* y, int64_t n, int print_hlo) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* args[2] = {NULL, NULL};
  kiln_buffer_t* results[2] = {NULL, NULL};
  size_t num_args = y != NULL ? 2 : 1, num_results = 0, i;
  kiln_op_t params[2];
  kiln_status_t* status = kiln_builder_create(op, &builder);
  int64_t j;
  if (status != NULL) return fail(status, "builder");
  for (i = 0; i < num_args; ++i) params[i] = kiln_op_parameter(builder, (int64_t)i, type, &n, 1, NULL, "x");
  status = kiln_builder_build(builder, kiln_op_call_registered(builder, op, params, num_args, attrs),
                              &computation);
  kiln_builder_destroy(builder);
  if (status != NULL) return fail(status, op);
  if (print_hlo) {
    char* text = NULL;
    status = kiln_computation_to_hlo_text(computation, &text);
    if (status != NULL) return fail(status, "hlo text");
    printf("%s", text);
    kiln_string_destroy(text);
  }
  status = kiln_client_compile(client, computation, NULL, &executable);
  kiln_computation_destroy(computation);
  if (status != NULL) return fail(status, "compile");
  for (i = 0; status == NULL && i < num_args; ++i) {
    status = kiln_client_buffer_from_host(client, type, &n, 1, NULL, i == 0 ? x : y, (size_t)n * 4, &args[i]);
  }
  if (status == NULL)
    status = kiln_executable_execute(executable, args, num_args, NULL, results, 2, &num_results);
  for (i = 0; status == NULL && i < num_results; ++i) {
    union {
      int32_t s32[16];
      float f32[16];
    } out;
    status = kiln_buffer_to_host(results[i], &out, (size_t)n * 4);
    if (status != NULL) break;
    printf("%s%s%s: [", op, attrs != NULL ? " " : "", attrs != NULL ? attrs : "");
    for (j = 0; j < n; ++j) {
      if (type == KILN_TYPE_F32) {
        printf("%s%g", j ? ", " : "", out.f32[j]);
      } else {
        printf("%s%d", j ? ", " : "", out.s32[j]);
      }
    }
    printf("]\n");
  }
  for (i = 0; i < 2; ++i) {
    kiln_buffer_destroy(args[i]);
    kiln_buffer_destroy(results[i]);
  }
  kiln_executable_destroy(executable);
  return status != NULL ? fail(status, op) : 0;
}

/* The gradient of dot(ZeroOutPoly(x), w) with respect to x: w at the
 * preserved index 0, zero elsewhere (the op's gradient function). */
static int run_grad(kiln_client_t* client, const float* x, const float* w) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t *loss = NULL, *grad = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t *arg = NULL, *results[2] = {NULL, NULL};
  int64_t n = 5, wrt = 0;
  size_t num_results = 0;
  float dx[5];
  kiln_op_t p;
  kiln_status_t* status = kiln_builder_create("loss", &builder);
  if (status != NULL) return fail(status, "builder");
  p = kiln_op_parameter(builder, 0, KILN_TYPE_F32, &n, 1, NULL, "x");
  p = kiln_op_dot(builder, kiln_op_call_registered(builder, "ZeroOutPoly", &p, 1, NULL),
                  kiln_op_constant(builder, KILN_TYPE_F32, &n, 1, w, 5 * sizeof *w));
  status = kiln_builder_build(builder, p, &loss);
  kiln_builder_destroy(builder);
  if (status == NULL) status = kiln_computation_value_and_grad(loss, &wrt, 1, &grad);
  if (status == NULL) status = kiln_client_compile(client, grad, NULL, &executable);
  if (status == NULL)
    status = kiln_client_buffer_from_host(client, KILN_TYPE_F32, &n, 1, NULL, x, 5 * 4, &arg);
  if (status == NULL) status = kiln_executable_execute(executable, &arg, 1, NULL, results, 2, &num_results);
  if (status == NULL) status = kiln_buffer_to_host(results[1], dx, sizeof dx);
  if (status == NULL)
    printf("d/dx dot(ZeroOutPoly(x), w): [%g, %g, %g, %g, %g]\n", dx[0], dx[1], dx[2], dx[3], dx[4]);
  kiln_buffer_destroy(arg);
  kiln_buffer_destroy(results[0]);
  kiln_buffer_destroy(results[1]);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(grad);
  kiln_computation_destroy(loss);
  return status != NULL ? fail(status, "gradient") : 0;
}

int main(int argc, char** argv) {
  static const int32_t x[5] = {5, 4, 3, 2, 1};
  static const float xf[5] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  static const float w[5] = {2, 3, 4, 5, 6};
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_status_t* status = register_zero_out_ops();
  int failures = 0;
  if (status != NULL) return fail(status, "registering ZeroOut");
  options.backend = argc > 1 ? argv[1] : NULL;
  status = kiln_client_create(&options, &client);
  if (status != NULL) return fail(status, "client");
  failures += run(client, "ZeroOut", NULL, KILN_TYPE_S32, x, NULL, 5, 0);
  failures += run(client, "ZeroOutIndex", NULL, KILN_TYPE_S32, x, NULL, 5, 0);
  failures += run(client, "ZeroOutIndex", "{preserve_index = 3}", KILN_TYPE_S32, x, NULL, 5, 1);
  failures += run(client, "ZeroOutPoly", NULL, KILN_TYPE_F32, xf, NULL, 5, 0);
  failures += run(client, "ZeroOutPoly", NULL, KILN_TYPE_S32, x, NULL, 5, 0);
  failures += run(client, "ZeroOutList", NULL, KILN_TYPE_S32, x, x, 5, 0);
  failures += run_grad(client, xf, w);
  /* The bounds check: an error the kernel returns, reaching this caller. */
  printf("expected error: ");
  fflush(stdout);
  if (run(client, "ZeroOutIndex", "{preserve_index = 7}", KILN_TYPE_S32, x, NULL, 5, 0) == 0) ++failures;
  kiln_client_destroy(client);
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
