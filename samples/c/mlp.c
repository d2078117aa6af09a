/* A two-layer perceptron built with the Kiln C API and run on the default
 * backend:  y = relu(x . W1 + b1) . W2 + b2  for a batch of two inputs.
 * Every call's status is checked; on failure the sample prints the message and
 * exits non-zero. */
#include <stdio.h>
#include <stdlib.h>

#include "kiln/kiln.h"

/* Prints and frees a failed status; returns 1 when it failed. */
static int failed(kiln_status_t* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s failed: %s: %s\n", what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_destroy(status);
  return 1;
}

enum { kBatch = 2, kInputs = 4, kHidden = 3, kOutputs = 2 };

static kiln_computation_t* build_mlp(void) {
  static const float w1[kInputs * kHidden] = {0.5f,  -0.25f, 0.1f, 0.3f, 0.8f,  -0.5f,
                                              -0.2f, 0.4f,   0.6f, 0.1f, -0.3f, 0.2f};
  static const float b1[kHidden] = {0.1f, 0.0f, -0.1f};
  static const float w2[kHidden * kOutputs] = {1.0f, -1.0f, 0.5f, 0.5f, -0.75f, 0.25f};
  static const float b2[kOutputs] = {0.0f, 1.0f};
  const int64_t x_dims[2] = {kBatch, kInputs};
  const int64_t w1_dims[2] = {kInputs, kHidden};
  const int64_t b1_dims[1] = {kHidden};
  const int64_t w2_dims[2] = {kHidden, kOutputs};
  const int64_t b2_dims[1] = {kOutputs};
  const int64_t feature_dimension[1] = {1}; /* a bias vector runs along dimension 1 */
  kiln_builder_t* builder = NULL;
  kiln_computation_t* mlp = NULL;
  kiln_op_t x, hidden, activated, output;

  if (failed(kiln_builder_create("mlp", &builder), "kiln_builder_create")) return NULL;
  x = kiln_op_parameter(builder, 0, KILN_TYPE_F32, x_dims, 2, NULL, "x");
  hidden = kiln_op_dot(builder, x, kiln_op_constant(builder, KILN_TYPE_F32, w1_dims, 2, w1, sizeof(w1)));
  hidden = kiln_op_add(builder, hidden, kiln_op_constant(builder, KILN_TYPE_F32, b1_dims, 1, b1, sizeof(b1)),
                       feature_dimension, 1);
  activated = kiln_op_max(builder, hidden, kiln_op_constant_f32(builder, 0.0f), NULL, 0);
  output =
      kiln_op_dot(builder, activated, kiln_op_constant(builder, KILN_TYPE_F32, w2_dims, 2, w2, sizeof(w2)));
  output = kiln_op_add(builder, output, kiln_op_constant(builder, KILN_TYPE_F32, b2_dims, 1, b2, sizeof(b2)),
                       feature_dimension, 1);
  /* Builder errors are sticky, so one check after the last op covers all ops. */
  failed(kiln_builder_build(builder, output, &mlp), "kiln_builder_build");
  kiln_builder_destroy(builder);
  return mlp;
}

int main(void) {
  static const float x[kBatch * kInputs] = {1.0f, 2.0f, 3.0f, 4.0f, -1.0f, 0.5f, 0.0f, 2.0f};
  const int64_t x_dims[2] = {kBatch, kInputs};
  float y[kBatch * kOutputs];
  kiln_client_t* client = NULL;
  kiln_computation_t* mlp = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* input = NULL;
  kiln_buffer_t* result = NULL;
  const char* backend = "";
  size_t num_results = 0;
  int status = 1;
  int row;

  printf("kiln %s\n", kiln_version());
  if (failed(kiln_client_create(NULL, &client), "kiln_client_create")) goto done;
  if (failed(kiln_client_backend_name(client, &backend), "kiln_client_backend_name")) goto done;
  mlp = build_mlp();
  if (mlp == NULL) goto done;
  if (failed(kiln_client_compile(client, mlp, NULL, &executable), "kiln_client_compile")) goto done;
  if (failed(kiln_client_buffer_from_host(client, KILN_TYPE_F32, x_dims, 2, NULL, x, sizeof(x), &input),
             "kiln_client_buffer_from_host")) {
    goto done;
  }
  if (failed(kiln_executable_execute(executable, &input, 1, NULL, &result, 1, &num_results),
             "kiln_executable_execute")) {
    goto done;
  }
  if (failed(kiln_buffer_to_host(result, y, sizeof(y)), "kiln_buffer_to_host")) goto done;
  printf("backend: %s\n", backend);
  for (row = 0; row < kBatch; ++row) {
    printf("output: [%g, %g]\n", (double)y[row * kOutputs], (double)y[row * kOutputs + 1]);
  }
  status = 0;
done:
  kiln_buffer_destroy(result);
  kiln_buffer_destroy(input);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(mlp);
  kiln_client_destroy(client);
  return status;
}
