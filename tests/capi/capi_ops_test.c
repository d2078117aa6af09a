/* Ops through the C ABI: checks that each family's C arguments (lists, dimension
 * number structs, nested computations, enums) reach the core as meant, by
 * running small programs with known results on the interpreter. Plain C99. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

static int ok(kiln_status_t* status, int line) {
  if (status == NULL) return 1;
  fprintf(stderr, "line %d: %s: %s\n", line, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_destroy(status);
  ++g_failures;
  return 0;
}
#define OK(expr) ok((expr), __LINE__)

static kiln_client_t* g_client = NULL;

/* Builds the builder's computation rooted at `root`, runs it with no arguments
 * and copies its single result to `out` (`bytes` bytes). Destroys `builder`. */
static int run(kiln_builder_t* builder, kiln_op_t root, void* out, size_t bytes, uint64_t seed, int line) {
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* result = NULL;
  kiln_execute_options_t options = KILN_EXECUTE_OPTIONS_INIT;
  size_t num_results = 0;
  int success = 0;
  options.rng_seed = seed;
  if (ok(kiln_builder_build(builder, root, &computation), line) &&
      ok(kiln_client_compile(g_client, computation, NULL, &executable), line) &&
      ok(kiln_executable_execute(executable, NULL, 0, &options, &result, 1, &num_results), line) &&
      ok(kiln_buffer_to_host(result, out, bytes), line)) {
    success = 1;
  }
  kiln_buffer_destroy(result);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
  return success;
}
#define RUN(builder, root, out, seed) run((builder), (root), &(out), sizeof(out), (seed), __LINE__)

static kiln_builder_t* new_builder(const char* name) {
  kiln_builder_t* builder = NULL;
  OK(kiln_builder_create(name, &builder));
  return builder;
}

/* (a, b) -> a op b over scalars of `type`, for reducers and comparators. */
static kiln_computation_t* scalar_binary(kiln_element_type_t type, int is_max) {
  kiln_builder_t* builder = new_builder(is_max ? "max" : "add");
  kiln_computation_t* computation = NULL;
  kiln_op_t a = kiln_op_parameter(builder, 0, type, NULL, 0, NULL, "a");
  kiln_op_t b = kiln_op_parameter(builder, 1, type, NULL, 0, NULL, "b");
  kiln_op_t root = is_max ? kiln_op_max(builder, a, b, NULL, 0) : kiln_op_add(builder, a, b, NULL, 0);
  OK(kiln_builder_build(builder, root, &computation));
  kiln_builder_destroy(builder);
  return computation;
}

static kiln_op_t constant_f32(kiln_builder_t* builder, const float* data, const int64_t* dims, size_t rank) {
  size_t count = 1, i;
  for (i = 0; i < rank; ++i) count *= (size_t)dims[i];
  return kiln_op_constant(builder, KILN_TYPE_F32, dims, rank, data, count * sizeof(float));
}

static kiln_op_t constant_s32(kiln_builder_t* builder, const int32_t* data, const int64_t* dims,
                              size_t rank) {
  size_t count = 1, i;
  for (i = 0; i < rank; ++i) count *= (size_t)dims[i];
  return kiln_op_constant(builder, KILN_TYPE_S32, dims, rank, data, count * sizeof(int32_t));
}

static void test_shape_ops(void) {
  const int64_t dims23[2] = {2, 3};
  const float m[6] = {1, 2, 3, 4, 5, 6};
  const int64_t perm[2] = {1, 0};
  const int64_t dim1[1] = {1};
  const int64_t low[2] = {0, 1}, high[2] = {1, 0}, interior[2] = {0, 0};
  const int64_t start[2] = {0, 1}, limit[2] = {2, 3}, stride[2] = {1, 2};
  float transposed[6], reversed[6], padded[12], sliced[2], concatenated[12], collapsed[6];
  kiln_builder_t* b;
  kiln_op_t x, parts[2];
  const int64_t collapse_dims[2] = {0, 1};

  b = new_builder("transpose");
  if (RUN(b, kiln_op_transpose(b, constant_f32(b, m, dims23, 2), perm, 2), transposed, 0)) {
    CHECK(transposed[0] == 1 && transposed[1] == 4 && transposed[2] == 2 && transposed[5] == 6);
  }
  b = new_builder("rev");
  if (RUN(b, kiln_op_rev(b, constant_f32(b, m, dims23, 2), dim1, 1), reversed, 0)) {
    CHECK(reversed[0] == 3 && reversed[2] == 1 && reversed[3] == 6);
  }
  b = new_builder("pad");
  x = constant_f32(b, m, dims23, 2);
  if (RUN(b, kiln_op_pad(b, x, kiln_op_constant_f32(b, -1), low, high, interior, 2), padded, 0)) {
    /* [3,4]: a -1 column on the left, a -1 row at the bottom. */
    CHECK(padded[0] == -1 && padded[1] == 1 && padded[3] == 3 && padded[4] == -1 && padded[7] == 6);
    CHECK(padded[8] == -1 && padded[11] == -1);
  }
  b = new_builder("slice");
  if (RUN(b, kiln_op_slice(b, constant_f32(b, m, dims23, 2), start, limit, stride, 2), sliced, 0)) {
    CHECK(sliced[0] == 2 && sliced[1] == 5);
  }
  b = new_builder("concat");
  parts[0] = constant_f32(b, m, dims23, 2);
  parts[1] = constant_f32(b, m, dims23, 2);
  if (RUN(b, kiln_op_concat_in_dim(b, parts, 2, 1), concatenated, 0)) {
    CHECK(concatenated[2] == 3 && concatenated[3] == 1 && concatenated[6] == 4 && concatenated[11] == 6);
  }
  b = new_builder("collapse");
  if (RUN(b, kiln_op_collapse(b, constant_f32(b, m, dims23, 2), collapse_dims, 2), collapsed, 0)) {
    CHECK(memcmp(collapsed, m, sizeof(m)) == 0);
  }
}

static void test_elementwise_and_types(void) {
  const int64_t dims[1] = {4};
  const float v[4] = {-1.5f, 0.5f, 2.5f, 9.0f};
  int32_t converted[4];
  float selected[4], clamped[4];
  unsigned char compared[4];
  kiln_builder_t* b;
  kiln_op_t x, pred;

  b = new_builder("convert");
  if (RUN(b, kiln_op_convert(b, constant_f32(b, v, dims, 1), KILN_TYPE_S32), converted, 0)) {
    CHECK(converted[0] == -1 && converted[1] == 0 && converted[2] == 2 && converted[3] == 9);
  }
  b = new_builder("compare");
  x = constant_f32(b, v, dims, 1);
  if (RUN(b,
          kiln_op_compare(b, x, kiln_op_constant_f32(b, 1.0f), KILN_COMPARE_GT, KILN_COMPARISON_TYPE_DEFAULT,
                          NULL, 0),
          compared, 0)) {
    CHECK(compared[0] == 0 && compared[1] == 0 && compared[2] == 1 && compared[3] == 1);
  }
  b = new_builder("select");
  x = constant_f32(b, v, dims, 1);
  pred = kiln_op_lt(b, x, kiln_op_constant_f32(b, 0.0f), NULL, 0);
  if (RUN(b, kiln_op_select(b, pred, kiln_op_neg(b, x), x), selected, 0)) {
    CHECK(selected[0] == 1.5f && selected[1] == 0.5f && selected[3] == 9.0f);
  }
  b = new_builder("clamp");
  x = constant_f32(b, v, dims, 1);
  if (RUN(b, kiln_op_clamp(b, kiln_op_constant_f32(b, 0.0f), x, kiln_op_constant_f32(b, 2.0f)), clamped, 0)) {
    CHECK(clamped[0] == 0.0f && clamped[1] == 0.5f && clamped[2] == 2.0f && clamped[3] == 2.0f);
  }
  /* A bad enum value is an error naming the parameter. */
  b = new_builder("bad_direction");
  x = constant_f32(b, v, dims, 1);
  CHECK(kiln_op_compare(b, x, x, 17, KILN_COMPARISON_TYPE_DEFAULT, NULL, 0) == KILN_OP_INVALID);
  {
    kiln_status_t* error = kiln_builder_first_error(b);
    CHECK(error != NULL && strstr(kiln_status_message(error), "direction") != NULL);
    kiln_status_destroy(error);
  }
  kiln_builder_destroy(b);
}

static void test_contractions(void) {
  const int64_t batch_dims[3] = {2, 2, 2};
  float batched[8];
  const int64_t image_dims[4] = {1, 1, 4, 4}, kernel_dims[4] = {1, 1, 2, 2};
  const float ones16[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const float ones4[4] = {1, 1, 1, 1};
  const int64_t spatial[2] = {2, 3};
  const int64_t pad_one[2] = {1, 1};
  float conv[9], padded_conv[25];
  const int64_t contracting_lhs[1] = {2}, contracting_rhs[1] = {1}, batch[1] = {0};
  kiln_dot_dimension_numbers_t dot = KILN_DOT_DIMENSION_NUMBERS_INIT;
  kiln_conv_dimension_numbers_t dn = KILN_CONV_DIMENSION_NUMBERS_INIT;
  kiln_builder_t* b;
  kiln_op_t lhs;

  /* Batched matmul of iota [2,2,2] with itself: batch 0 = [[0,1],[2,3]]^2. */
  dot.lhs_contracting_dimensions = contracting_lhs;
  dot.num_lhs_contracting_dimensions = 1;
  dot.rhs_contracting_dimensions = contracting_rhs;
  dot.num_rhs_contracting_dimensions = 1;
  dot.lhs_batch_dimensions = batch;
  dot.num_lhs_batch_dimensions = 1;
  dot.rhs_batch_dimensions = batch;
  dot.num_rhs_batch_dimensions = 1;
  b = new_builder("dot_general");
  {
    const float values[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    lhs = constant_f32(b, values, batch_dims, 3);
  }
  if (RUN(b, kiln_op_dot_general(b, lhs, lhs, &dot), batched, 0)) {
    CHECK(batched[0] == 2 && batched[1] == 3 && batched[2] == 6 && batched[3] == 11);
    CHECK(batched[4] == 46 && batched[7] == 79);
  }

  dn.input_spatial_dimensions = spatial;
  dn.kernel_spatial_dimensions = spatial;
  dn.output_spatial_dimensions = spatial;
  dn.num_spatial_dimensions = 2;
  b = new_builder("conv");
  if (RUN(b,
          kiln_op_conv_general_dilated(b, constant_f32(b, ones16, image_dims, 4),
                                       constant_f32(b, ones4, kernel_dims, 4), NULL, NULL, NULL, NULL, NULL,
                                       2, &dn, 1, 1),
          conv, 0)) {
    CHECK(conv[0] == 4 && conv[4] == 4 && conv[8] == 4);
  }
  b = new_builder("conv_padded");
  if (RUN(b,
          kiln_op_conv_general(b, constant_f32(b, ones16, image_dims, 4),
                               constant_f32(b, ones4, kernel_dims, 4), NULL, pad_one, pad_one, 2, &dn),
          padded_conv, 0)) {
    CHECK(padded_conv[0] == 1 && padded_conv[1] == 2 && padded_conv[6] == 4);
  }
  /* A too-small struct_size is refused. */
  b = new_builder("conv_bad_struct");
  dn.struct_size = 8;
  lhs = constant_f32(b, ones16, image_dims, 4);
  CHECK(kiln_op_conv_general(b, lhs, lhs, NULL, NULL, NULL, 2, &dn) == KILN_OP_INVALID);
  {
    kiln_status_t* error = kiln_builder_first_error(b);
    CHECK(error != NULL && strstr(kiln_status_message(error), "struct_size") != NULL);
    kiln_status_destroy(error);
  }
  kiln_builder_destroy(b);
}

/* kiln_op_set_precision: the precisions reach the computation's HLO text, the
 * product is unchanged, and what cannot carry a precision is refused. */
static void test_operand_precision(void) {
  const int64_t dims22[2] = {2, 2};
  const float values[4] = {1, 2, 3, 4};
  float product[4];
  kiln_builder_t* b = new_builder("dot_highest");
  kiln_op_t m = constant_f32(b, values, dims22, 2);
  kiln_op_t dot =
      kiln_op_set_precision(b, kiln_op_dot(b, m, m), KILN_PRECISION_HIGHEST, KILN_PRECISION_DEFAULT);
  CHECK(dot != KILN_OP_INVALID);
  {
    kiln_computation_t* computation = NULL;
    char* text = NULL;
    if (OK(kiln_builder_build(b, dot, &computation)) &&
        OK(kiln_computation_to_hlo_text(computation, &text))) {
      CHECK(strstr(text, "operand_precision={highest,default}") != NULL);
    }
    kiln_string_destroy(text);
    kiln_computation_destroy(computation);
  }
  kiln_builder_destroy(b);
  b = new_builder("dot_high");
  m = constant_f32(b, values, dims22, 2);
  if (RUN(b, kiln_op_set_precision(b, kiln_op_dot(b, m, m), KILN_PRECISION_HIGH, KILN_PRECISION_HIGH),
          product, 0)) {
    CHECK(product[0] == 7 && product[1] == 10 && product[2] == 15 && product[3] == 22);
  }
  b = new_builder("precision_of_an_add");
  m = constant_f32(b, values, dims22, 2);
  CHECK(kiln_op_set_precision(b, kiln_op_add(b, m, m, NULL, 0), KILN_PRECISION_HIGHEST,
                              KILN_PRECISION_HIGHEST) == KILN_OP_INVALID);
  {
    kiln_status_t* error = kiln_builder_first_error(b);
    CHECK(error != NULL && kiln_status_code(error) == KILN_STATUS_INVALID_ARGUMENT &&
          strstr(kiln_status_message(error), "only dot and convolution") != NULL);
    kiln_status_destroy(error);
  }
  kiln_builder_destroy(b);
  b = new_builder("precision_out_of_range");
  m = constant_f32(b, values, dims22, 2);
  CHECK(kiln_op_set_precision(b, kiln_op_dot(b, m, m), KILN_PRECISION_DEFAULT, 7) == KILN_OP_INVALID);
  {
    kiln_status_t* error = kiln_builder_first_error(b);
    CHECK(error != NULL && strstr(kiln_status_message(error), "rhs_precision is 7") != NULL);
    kiln_status_destroy(error);
  }
  kiln_builder_destroy(b);
}

/* kiln_op_fft: RFFT of [1, 2, 3, 4] and IRFFT back, the attributes in the
 * HLO text, and refusals naming what is wrong. */
static void test_fft(void) {
  const int64_t four[1] = {4};
  const float signal[4] = {1, 2, 3, 4};
  float spectrum[6], back[4];
  kiln_builder_t* b = new_builder("rfft");
  kiln_op_t x = constant_f32(b, signal, four, 1);
  kiln_op_t r = kiln_op_fft(b, x, KILN_FFT_RFFT, four, 1);
  CHECK(r != KILN_OP_INVALID);
  {
    kiln_computation_t* computation = NULL;
    char* text = NULL;
    if (OK(kiln_builder_build(b, r, &computation)) && OK(kiln_computation_to_hlo_text(computation, &text))) {
      CHECK(strstr(text, "c64[3]") != NULL && strstr(text, "fft_type=RFFT, fft_length={4}") != NULL);
    }
    kiln_string_destroy(text);
    kiln_computation_destroy(computation);
  }
  if (RUN(b, r, spectrum, 0)) {
    const float expected[6] = {10, 0, -2, 2, -2, 0}; /* 10, -2+2i, -2 */
    int i;
    for (i = 0; i < 6; ++i) CHECK(spectrum[i] > expected[i] - 1e-5f && spectrum[i] < expected[i] + 1e-5f);
  }
  b = new_builder("irfft_of_rfft");
  x = constant_f32(b, signal, four, 1);
  if (RUN(b, kiln_op_fft(b, kiln_op_fft(b, x, KILN_FFT_RFFT, four, 1), KILN_FFT_IRFFT, four, 1), back, 0)) {
    CHECK(back[0] > 0.9999f && back[0] < 1.0001f && back[3] > 3.9999f && back[3] < 4.0001f);
  }
  b = new_builder("fft_of_reals");
  x = constant_f32(b, signal, four, 1);
  CHECK(kiln_op_fft(b, x, KILN_FFT_FFT, four, 1) == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_first_error(b), KILN_STATUS_INVALID_ARGUMENT, "fft: FFT needs a complex");
  kiln_builder_destroy(b);
  b = new_builder("fft_bad_type");
  x = constant_f32(b, signal, four, 1);
  CHECK(kiln_op_fft(b, x, 9, four, 1) == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_first_error(b), KILN_STATUS_INVALID_ARGUMENT, "fft_type 9");
  kiln_builder_destroy(b);
  b = new_builder("fft_null_lengths");
  x = constant_f32(b, signal, four, 1);
  CHECK(kiln_op_fft(b, x, KILN_FFT_RFFT, NULL, 1) == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_first_error(b), KILN_STATUS_INVALID_ARGUMENT, "fft_length");
  kiln_builder_destroy(b);
}

static void test_gather_scatter(void) {
  const int64_t dims33[2] = {3, 3}, two[1] = {2}, dims23[2] = {2, 3};
  const float m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int32_t rows[2] = {0, 2};
  const float updates[6] = {10, 10, 10, 20, 20, 20};
  const int64_t offset_dims[1] = {1}, collapsed[1] = {0}, start_map[1] = {0};
  const int64_t slice_sizes[2] = {1, 3};
  float gathered[6], scattered[9];
  kiln_gather_dimension_numbers_t gather = KILN_GATHER_DIMENSION_NUMBERS_INIT;
  kiln_scatter_dimension_numbers_t scatter = KILN_SCATTER_DIMENSION_NUMBERS_INIT;
  kiln_computation_t* add = scalar_binary(KILN_TYPE_F32, 0);
  kiln_builder_t* b;
  kiln_op_t operand, update;

  gather.offset_dims = offset_dims;
  gather.num_offset_dims = 1;
  gather.collapsed_slice_dims = collapsed;
  gather.num_collapsed_slice_dims = 1;
  gather.start_index_map = start_map;
  gather.num_start_index_map = 1;
  gather.index_vector_dim = 1;
  b = new_builder("gather");
  if (RUN(b,
          kiln_op_gather(b, constant_f32(b, m, dims33, 2), constant_s32(b, rows, two, 1), &gather,
                         slice_sizes, 2, 0),
          gathered, 0)) {
    CHECK(gathered[0] == 1 && gathered[2] == 3 && gathered[3] == 7 && gathered[5] == 9);
  }

  scatter.update_window_dims = offset_dims;
  scatter.num_update_window_dims = 1;
  scatter.inserted_window_dims = collapsed;
  scatter.num_inserted_window_dims = 1;
  scatter.scatter_dims_to_operand_dims = start_map;
  scatter.num_scatter_dims_to_operand_dims = 1;
  scatter.index_vector_dim = 1;
  b = new_builder("scatter");
  operand = constant_f32(b, m, dims33, 2);
  update = constant_f32(b, updates, dims23, 2);
  if (RUN(b, kiln_op_scatter(b, &operand, 1, constant_s32(b, rows, two, 1), &update, 1, add, &scatter, 0, 0),
          scattered, 0)) {
    CHECK(scattered[0] == 11 && scattered[3] == 4 && scattered[6] == 27 && scattered[8] == 29);
  }
  kiln_computation_destroy(add);
}

static void test_windows_and_sort(void) {
  const int64_t dims46[2] = {4, 6}, window[2] = {2, 3}, strides[2] = {2, 3};
  const float seed_matrix[24] = {7, 2, 5, 3, 10, 2, 3, 9, 3, 3, 1, 0, 3, 4, 2, 6, 6, 8, 5, 9, 3, 5, 5, 8};
  float maxes[4];
  const int64_t three[1] = {3};
  const float unsorted[3] = {3, 1, 2};
  float sorted[3];
  kiln_computation_t* max = scalar_binary(KILN_TYPE_F32, 1);
  kiln_builder_t* b;

  b = new_builder("reduce_window");
  if (RUN(b,
          kiln_op_reduce_window(b, constant_f32(b, seed_matrix, dims46, 2), kiln_op_constant_f32(b, -1e30f),
                                max, window, strides, 2, KILN_PADDING_VALID),
          maxes, 0)) {
    CHECK(maxes[0] == 9 && maxes[1] == 10 && maxes[2] == 9 && maxes[3] == 8);
  }
  b = new_builder("sort");
  if (RUN(b, kiln_op_sort(b, constant_f32(b, unsorted, three, 1)), sorted, 0)) {
    CHECK(sorted[0] == 1 && sorted[1] == 2 && sorted[2] == 3);
  }
  kiln_computation_destroy(max);
}

/* while (i < 10) i = i + 1, and an indexed conditional whose out-of-range index
 * runs the last branch. */
static void test_control_flow(void) {
  kiln_builder_t* b;
  kiln_computation_t* condition = NULL;
  kiln_computation_t* body = NULL;
  kiln_computation_t* branches[2] = {NULL, NULL};
  kiln_op_t i, operands[2];
  int32_t counted = 0, chosen = 0;

  b = new_builder("condition");
  i = kiln_op_parameter(b, 0, KILN_TYPE_S32, NULL, 0, NULL, "i");
  OK(kiln_builder_build(b, kiln_op_lt(b, i, kiln_op_constant_s32(b, 10), NULL, 0), &condition));
  kiln_builder_destroy(b);
  b = new_builder("body");
  i = kiln_op_parameter(b, 0, KILN_TYPE_S32, NULL, 0, NULL, "i");
  OK(kiln_builder_build(b, kiln_op_add(b, i, kiln_op_constant_s32(b, 1), NULL, 0), &body));
  kiln_builder_destroy(b);
  b = new_builder("while");
  if (RUN(b, kiln_op_while(b, condition, body, kiln_op_constant_s32(b, 0)), counted, 0)) CHECK(counted == 10);

  branches[0] = body;
  branches[1] = body;
  b = new_builder("conditional");
  operands[0] = kiln_op_constant_s32(b, 100);
  operands[1] = kiln_op_constant_s32(b, 200);
  if (RUN(b,
          kiln_op_conditional_indexed(b, kiln_op_constant_s32(b, 7),
                                      (const kiln_computation_t* const*)branches, operands, 2),
          chosen, 0)) {
    CHECK(chosen == 201);
  }
  kiln_computation_destroy(condition);
  kiln_computation_destroy(body);
}

static void test_dynamic_and_rng(void) {
  const int64_t five[1] = {5}, one[1] = {1}, two[1] = {2};
  const float v[5] = {0, 1, 2, 3, 4};
  const int32_t start[1] = {4};
  float window[2], first[3], second[3];
  const int64_t three[1] = {3};
  kiln_builder_t* b;

  b = new_builder("dynamic_slice");
  if (RUN(b, kiln_op_dynamic_slice(b, constant_f32(b, v, five, 1), constant_s32(b, start, one, 1), two, 1),
          window, 0)) {
    /* The start is clamped to 3 so the slice stays in bounds. */
    CHECK(window[0] == 3 && window[1] == 4);
  }
  b = new_builder("rng1");
  if (RUN(b,
          kiln_op_rng_uniform(b, kiln_op_constant_f32(b, 0.0f), kiln_op_constant_f32(b, 1.0f), KILN_TYPE_F32,
                              three, 1),
          first, 42)) {
    b = new_builder("rng2");
    if (RUN(b,
            kiln_op_rng_uniform(b, kiln_op_constant_f32(b, 0.0f), kiln_op_constant_f32(b, 1.0f),
                                KILN_TYPE_F32, three, 1),
            second, 42)) {
      CHECK(memcmp(first, second, sizeof(first)) == 0);
      CHECK(first[0] >= 0.0f && first[0] < 1.0f);
    }
  }
}

int main(void) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  options.backend = "interpreter";
  if (!OK(kiln_client_create(&options, &g_client))) return 1;
  test_shape_ops();
  test_elementwise_and_types();
  test_contractions();
  test_operand_precision();
  test_fft();
  test_gather_scatter();
  test_windows_and_sort();
  test_control_flow();
  test_dynamic_and_rng();
  kiln_client_destroy(g_client);
  if (g_failures != 0) {
    fprintf(stderr, "capi_ops_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_ops_test: all checks passed\n");
  return 0;
}
