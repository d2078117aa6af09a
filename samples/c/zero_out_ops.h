/* The seed's ZeroOut op ("Adding an op"), defined through the C ABI in its
 * four versions, each its own op (op names are unique in a process):
 *
 *   ZeroOut          to_zero: int32 -> zeroed: int32; keeps element 0.
 *   ZeroOutIndex     + attr "preserve_index: int >= 0 = 0"; keeps that
 *                    element; an index past the first dimension is an error
 *                    the kernel returns.
 *   ZeroOutPoly      attr "T: {float, int32}"; a kernel per element type,
 *                    and a gradient (zero_out_grad).
 *   ZeroOutList      attrs "N: int >= 1", "T: {float, int32}";
 *                    to_zero: N * T -> zeroed: N * T; a gradient too.
 *
 * Shared by samples/c/zero_out.c and tests/capi/capi_user_ops_test.c. */
#ifndef KILN_SAMPLES_C_ZERO_OUT_OPS_H_
#define KILN_SAMPLES_C_ZERO_OUT_OPS_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/kiln.h"

/* preserve_index from the frame's attributes; -1 when the op has none. */
static int64_t zero_out_preserve_index(const kiln_op_call_frame_t* frame) {
  size_t i;
  for (i = 0; i < frame->num_attrs; ++i) {
    if (strcmp(frame->attrs[i].name, "preserve_index") == 0) return frame->attrs[i].i;
  }
  return -1;
}

/* Zeroes every element of result r but the preserved one (`keep`, -1 for the
 * first when there is one), for 4-byte types. */
static kiln_status_t* zero_out_one(const kiln_op_call_frame_t* frame, size_t r, int64_t keep) {
  const kiln_op_buffer_t* in = &frame->args[r];
  const kiln_op_buffer_t* out = &frame->results[r];
  size_t count = in->byte_size / 4;
  if (in->rank != 1) {
    return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT, "ZeroOut expects a 1-D vector.");
  }
  if (keep < 0) { /* no preserve_index: keep the first element if there is one */
    memset(out->data, 0, out->byte_size);
    if (count > 0) memcpy(out->data, in->data, 4);
    return NULL;
  }
  if (keep >= in->dims[0]) {
    char message[128];
    snprintf(message, sizeof message, "preserve_index out of range: %lld for a vector of %lld",
             (long long)keep, (long long)in->dims[0]);
    return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT, message);
  }
  memset(out->data, 0, out->byte_size);
  if (count > 0) memcpy((char*)out->data + 4 * keep, (const char*)in->data + 4 * keep, 4);
  return NULL;
}

/* The kernel of every version: each result from the argument at its position. */
static kiln_status_t* zero_out_kernel(const kiln_op_call_frame_t* frame) {
  size_t r;
  int64_t keep = zero_out_preserve_index(frame);
  for (r = 0; r < frame->num_results; ++r) {
    kiln_status_t* status = zero_out_one(frame, r, keep);
    if (status != NULL) return status;
  }
  return NULL;
}

/* A separate float kernel, as the seed registers one per type. */
static kiln_status_t* zero_out_float_kernel(const kiln_op_call_frame_t* frame) {
  if (frame->args[0].type != KILN_TYPE_F32) {
    return kiln_status_create(KILN_STATUS_INTERNAL, "float kernel called for another type");
  }
  return zero_out_kernel(frame);
}

/* The gradient (the seed's _zero_out_grad): each operand's cotangent is its
 * output's cotangent at the preserved position (preserve_index, else 0) and
 * zero elsewhere, built with the builder of the gradient computation. */
static kiln_status_t* zero_out_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                    const kiln_op_t* outputs, const kiln_op_t* output_grads,
                                    size_t num_outputs, const kiln_op_attr_t* attrs, size_t num_attrs,
                                    kiln_op_t* operand_grads, void* user_data) {
  int64_t keep = 0, dims[1] = {0};
  size_t i, rank = 0;
  kiln_element_type_t type = KILN_TYPE_INVALID;
  (void)outputs;
  (void)user_data;
  for (i = 0; i < num_attrs; ++i) {
    if (strcmp(attrs[i].name, "preserve_index") == 0) keep = attrs[i].i;
  }
  for (i = 0; i < num_operands && i < num_outputs; ++i) {
    kiln_op_t at_keep, zeros;
    kiln_status_t* status = kiln_builder_get_shape(builder, operands[i], &type, dims, 1, &rank);
    if (status != NULL) return status;
    at_keep = kiln_op_eq(builder, kiln_op_iota(builder, KILN_TYPE_S64, dims, rank, 0),
                         kiln_op_constant_s64(builder, keep), NULL, 0);
    zeros = kiln_op_broadcast(builder, kiln_op_convert(builder, kiln_op_constant_s32(builder, 0), type), dims,
                              rank);
    operand_grads[i] = kiln_op_select(builder, at_keep, output_grads[i], zeros);
  }
  return NULL;
}

/* Defines and registers op `name` from its specs (NULL-terminated lists),
 * with gradient `grad` (may be NULL) and host kernels for every type in
 * `types` (KILN_TYPE_INVALID ends it). */
static kiln_status_t* zero_out_define(const char* name, const char* const* attrs, const char* input,
                                      const char* output, const kiln_element_type_t* types, const char* doc,
                                      kiln_op_grad_fn grad) {
  kiln_user_op_def_t* def = NULL;
  kiln_status_t* status = kiln_user_op_def_create(name, &def);
  size_t i;
  for (i = 0; status == NULL && attrs != NULL && attrs[i] != NULL; ++i)
    status = kiln_user_op_def_add_attr(def, attrs[i]);
  if (status == NULL) status = kiln_user_op_def_add_input(def, input);
  if (status == NULL) status = kiln_user_op_def_add_output(def, output);
  if (status == NULL) status = kiln_user_op_def_set_doc(def, doc);
  if (status == NULL) status = kiln_user_op_def_set_grad_fn(def, grad);
  if (status == NULL) status = kiln_user_op_register(def);
  kiln_user_op_def_destroy(def);
  for (i = 0; status == NULL && types[i] != KILN_TYPE_INVALID; ++i) {
    kiln_op_kernel_fn fn = types[i] == KILN_TYPE_F32 ? zero_out_float_kernel : zero_out_kernel;
    status = kiln_user_op_register_kernel(name, "host", types[i], fn, NULL, NULL);
  }
  return status;
}

/* Registers the four versions. */
static kiln_status_t* register_zero_out_ops(void) {
  static const kiln_element_type_t s32_only[] = {KILN_TYPE_S32, KILN_TYPE_INVALID};
  static const kiln_element_type_t both[] = {KILN_TYPE_S32, KILN_TYPE_F32, KILN_TYPE_INVALID};
  static const char* const index_attrs[] = {"preserve_index: int >= 0 = 0", NULL};
  static const char* const poly_attrs[] = {"T: {float, int32}", NULL};
  static const char* const list_attrs[] = {"N: int >= 1", "T: {float, int32}", NULL};
  kiln_status_t* status =
      zero_out_define("ZeroOut", NULL, "to_zero: int32", "zeroed: int32", s32_only,
                      "A copy of to_zero with every element but the first set to 0.", NULL);
  if (status == NULL) {
    status = zero_out_define("ZeroOutIndex", index_attrs, "to_zero: int32", "zeroed: int32", s32_only,
                             "A copy of to_zero with every element but preserve_index set to 0.", NULL);
  }
  if (status == NULL) {
    status = zero_out_define("ZeroOutPoly", poly_attrs, "to_zero: T", "zeroed: T", both,
                             "ZeroOut for float and int32 tensors.", zero_out_grad);
  }
  if (status == NULL) {
    status = zero_out_define("ZeroOutList", list_attrs, "to_zero: N * T", "zeroed: N * T", both,
                             "ZeroOut of each of N tensors of one type.", zero_out_grad);
  }
  return status;
}

#endif /* KILN_SAMPLES_C_ZERO_OUT_OPS_H_ */
