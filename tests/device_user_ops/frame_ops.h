/* Registered ops whose device kernels read the call frame (kiln.h,
 * kiln_user_op_register_device_kernel), with their host kernels, the
 * reference each device kernel is checked against:
 *
 *   RowScale      x: float -> y: float, attrs "tag: string = 'rows'",
 *                 "scale: float", "row_weights: list(float) >= 1";
 *                 y[r][c] = x[r][c] * scale * row_weights[r % len] over a
 *                 2-D x (the device kernels read its dims, the float and
 *                 the float list from the frame; the string has no device
 *                 value, so it sits before them to show it is skipped).
 *   MaxWithIndex  x: float -> value: float, index: int32 over a 2-D x: each
 *                 row's largest element and its first column (two outputs,
 *                 dims [rows] from the shape function).
 *   FrameProbe    x: float -> y: float with an attribute of every kind, for
 *                 checking the frame's bytes (its kernels copy x).
 *   AddTensor     x: float -> y: float, attrs "addend: tensor",
 *                 "bias: list(tensor) = []"; y[i] = x[i] + addend[i % n]
 *                 for an f32 addend of n elements (its device kernels read
 *                 the tensor's elements from the frame; bias is only there
 *                 for the frame's bytes).
 *
 * Shared by vulkan_frame_test.c and cuda_frame_test.c, with run_frame_op,
 * which runs one of them on a backend. */
#ifndef KILN_TESTS_DEVICE_USER_OPS_FRAME_OPS_H_
#define KILN_TESTS_DEVICE_USER_OPS_FRAME_OPS_H_

#include <string.h>

#include "kiln/kiln.h"

static const kiln_op_attr_t* frame_ops_attr(const kiln_op_call_frame_t* frame, const char* name) {
  size_t i;
  for (i = 0; i < frame->num_attrs; ++i)
    if (strcmp(frame->attrs[i].name, name) == 0) return &frame->attrs[i];
  return NULL;
}

static kiln_status_t* frame_ops_need_matrix(const kiln_op_call_frame_t* frame) {
  if (frame->args[0].rank != 2 || frame->args[0].type != KILN_TYPE_F32)
    return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT, "expects a 2-D f32 matrix");
  return NULL;
}

/* The host kernel of RowScale, in f32 arithmetic as the device kernels do it. */
static kiln_status_t* row_scale_kernel(const kiln_op_call_frame_t* frame) {
  const kiln_op_attr_t* scale = frame_ops_attr(frame, "scale");
  const kiln_op_attr_t* weights = frame_ops_attr(frame, "row_weights");
  const float* x = (const float*)frame->args[0].data;
  float* y = (float*)frame->results[0].data;
  kiln_status_t* status = frame_ops_need_matrix(frame);
  int64_t r, c, rows, cols;
  if (status != NULL) return status;
  if (scale == NULL || weights == NULL || weights->num_items == 0)
    return kiln_status_create(KILN_STATUS_INTERNAL, "RowScale: attributes missing");
  rows = frame->args[0].dims[0];
  cols = frame->args[0].dims[1];
  for (r = 0; r < rows; ++r) {
    const float w = (float)weights->items[(size_t)r % weights->num_items].f;
    for (c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * (float)scale->f * w;
  }
  return NULL;
}

static kiln_status_t* max_with_index_kernel(const kiln_op_call_frame_t* frame) {
  const float* x = (const float*)frame->args[0].data;
  float* value = (float*)frame->results[0].data;
  int32_t* index = (int32_t*)frame->results[1].data;
  kiln_status_t* status = frame_ops_need_matrix(frame);
  int64_t r, c, rows, cols;
  if (status != NULL) return status;
  rows = frame->args[0].dims[0];
  cols = frame->args[0].dims[1];
  for (r = 0; r < rows; ++r) {
    float best = x[r * cols];
    int32_t at = 0;
    for (c = 1; c < cols; ++c) {
      if (x[r * cols + c] > best) {
        best = x[r * cols + c];
        at = (int32_t)c;
      }
    }
    value[r] = best;
    index[r] = at;
  }
  return NULL;
}

/* MaxWithIndex's results are [rows] each. */
static kiln_status_t* max_with_index_shape(kiln_op_call_frame_t* frame) {
  kiln_status_t* status = frame_ops_need_matrix(frame);
  if (status != NULL) return status;
  status = kiln_user_op_frame_set_result_dims(frame, 0, frame->args[0].dims, 1);
  if (status == NULL) status = kiln_user_op_frame_set_result_dims(frame, 1, frame->args[0].dims, 1);
  return status;
}

static kiln_status_t* frame_probe_kernel(const kiln_op_call_frame_t* frame) {
  memcpy(frame->results[0].data, frame->args[0].data, frame->args[0].byte_size);
  return NULL;
}

static kiln_status_t* add_tensor_kernel(const kiln_op_call_frame_t* frame) {
  const kiln_op_attr_t* addend = frame_ops_attr(frame, "addend");
  const float* x = (const float*)frame->args[0].data;
  float* y = (float*)frame->results[0].data;
  size_t i, n, count = frame->args[0].byte_size / sizeof(float);
  if (addend == NULL || addend->type != KILN_TYPE_F32 || addend->byte_size < sizeof(float))
    return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT,
                              "AddTensor: addend must be a non-empty f32 tensor");
  n = addend->byte_size / sizeof(float);
  for (i = 0; i < count; ++i) y[i] = x[i] + ((const float*)addend->data)[i % n];
  return NULL;
}

/* Registers `name` from its attribute, input and output specs (NULL-ended)
 * with host kernel `kernel` and shape function `shape` (may be NULL). */
static kiln_status_t* frame_ops_define(const char* name, const char* const* attrs, const char* const* inputs,
                                       const char* const* outputs, kiln_op_shape_fn shape,
                                       kiln_op_kernel_fn kernel) {
  kiln_user_op_def_t* def = NULL;
  kiln_status_t* status = kiln_user_op_def_create(name, &def);
  for (; status == NULL && *attrs != NULL; ++attrs) status = kiln_user_op_def_add_attr(def, *attrs);
  for (; status == NULL && *inputs != NULL; ++inputs) status = kiln_user_op_def_add_input(def, *inputs);
  for (; status == NULL && *outputs != NULL; ++outputs) status = kiln_user_op_def_add_output(def, *outputs);
  if (status == NULL && shape != NULL) status = kiln_user_op_def_set_shape_fn(def, shape);
  if (status == NULL) status = kiln_user_op_register(def);
  if (status == NULL) status = kiln_user_op_register_kernel(name, "host", KILN_TYPE_F32, kernel, NULL, NULL);
  kiln_user_op_def_destroy(def);
  return status;
}

static kiln_status_t* register_frame_ops(void) {
  static const char* const row_scale_attrs[] = {"tag: string = 'rows'", "scale: float",
                                                "row_weights: list(float) >= 1", NULL};
  static const char* const probe_attrs[] = {"n: int = -5",
                                            "f: float = 0.1",
                                            "b: bool = true",
                                            "s: string = 'text'",
                                            "t: type = int32",
                                            "dims: shape = shape<2,3>",
                                            "ints: list(int) = [7, -8]",
                                            "floats: list(float) = [1.5, -2.25]",
                                            "types: list(type) = [float, int32]",
                                            "shapes: list(shape) = [shape<4>, shape<>, shape<5,6>]",
                                            NULL};
  static const char* const add_tensor_attrs[] = {"addend: tensor", "bias: list(tensor) = []", NULL};
  static const char* const none[] = {NULL};
  static const char* const x[] = {"x: float", NULL};
  static const char* const y[] = {"y: float", NULL};
  static const char* const value_index[] = {"value: float", "index: int32", NULL};
  kiln_status_t* status = frame_ops_define("RowScale", row_scale_attrs, x, y, NULL, row_scale_kernel);
  if (status == NULL)
    status =
        frame_ops_define("MaxWithIndex", none, x, value_index, max_with_index_shape, max_with_index_kernel);
  if (status == NULL) status = frame_ops_define("FrameProbe", probe_attrs, x, y, NULL, frame_probe_kernel);
  if (status == NULL) status = frame_ops_define("AddTensor", add_tensor_attrs, x, y, NULL, add_tensor_kernel);
  return status;
}

/* `op` over f32 `x` of dims `dims` (rank 2) with `attrs` on `backend`:
 * builds the one-call computation, compiles and runs it, calls
 * `after_execute(context)` (may be NULL; e.g. to read a fake driver's last
 * launch) once the execution succeeded, then reads its num_results (at most
 * 2) results to outs[i] (bytes[i] each). Everything it made is destroyed. */
static kiln_status_t* run_frame_op(const char* backend, const char* op, const float* x, const int64_t* dims,
                                   const char* attrs, void (*after_execute)(void*), void* context,
                                   size_t num_results, void** outs, const size_t* bytes) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arg = NULL;
  kiln_buffer_t* results[2] = {NULL, NULL};
  size_t got = 0, i;
  kiln_op_t param;
  kiln_status_t* status = num_results <= 2 ? kiln_builder_create(op, &builder)
                                           : kiln_status_create(KILN_STATUS_INVALID_ARGUMENT,
                                                                "run_frame_op reads at most 2 results");
  if (status == NULL) {
    param = kiln_op_parameter(builder, 0, KILN_TYPE_F32, dims, 2, NULL, "x");
    status =
        kiln_builder_build(builder, kiln_op_call_registered(builder, op, &param, 1, attrs), &computation);
  }
  options.backend = backend;
  if (status == NULL) status = kiln_client_create(&options, &client);
  if (status == NULL) status = kiln_client_compile(client, computation, NULL, &executable);
  if (status == NULL)
    status = kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 2, NULL, x,
                                          (size_t)(dims[0] * dims[1]) * 4, &arg);
  if (status == NULL) status = kiln_executable_execute(executable, &arg, 1, NULL, results, num_results, &got);
  if (status == NULL && got != num_results)
    status = kiln_status_create(KILN_STATUS_INTERNAL, "the execution gave another number of results");
  if (status == NULL && after_execute != NULL) after_execute(context);
  for (i = 0; status == NULL && i < num_results; ++i)
    status = kiln_buffer_to_host(results[i], outs[i], bytes[i]);
  kiln_buffer_destroy(arg);
  for (i = 0; i < 2; ++i) kiln_buffer_destroy(results[i]);
  kiln_executable_destroy(executable);
  kiln_client_destroy(client);
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
  return status;
}

#endif /* KILN_TESTS_DEVICE_USER_OPS_FRAME_OPS_H_ */
