/* Trains a classifier of handwritten digits with Kiln, from C, end to end:
 *
 *  - the model's loss (a 64-64-10 perceptron with a ReLU and softmax cross
 *    entropy over 8x8 images) is built op by op through kiln.h;
 *  - its gradient comes from Kiln itself (kiln_computation_value_and_grad);
 *  - the optimiser (Adam, or SGD with momentum) is a Kiln computation too: one
 *    training step calls the gradient computation and updates the weights,
 *    so each minibatch is one execution;
 *  - one line per epoch shows the loss, the accuracy on the training images
 *    and on the 360 held-out ones, and the time; a PNG shows the loss curves.
 *
 * The data is scikit-learn's 8x8 digits, converted once by
 * samples/data/make_digits.py into the .npy files committed next to it. The
 * run is deterministic (fixed seed). Exits 0 when the held-out accuracy
 * reaches 95%, 1 when it does not, 2 for a bad command line.
 *
 *   kiln_sample_train_digits [--optimizer adam|sgd] [--epochs N] [--backend NAME]
 *                            [--data-dir DIR] [--output FILE.png] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "kiln/kiln.h"

#ifndef KILN_SAMPLE_DATA_DIR
#define KILN_SAMPLE_DATA_DIR "samples/data"
#endif

enum {
  kPixels = 64,  /* 8x8 images, grey levels 0..16 */
  kHidden = 64,  /* hidden units */
  kClasses = 10, /* digits */
  kBatch = 32,   /* images per training step */
  kParams = 4,   /* w1, b1, w2, b2 */
  kMaxSlots = 9, /* optimiser state: Adam's m and v per weight, and the step */
  kMaxEpochs = 200
};

static const double kTarget = 0.95; /* held-out accuracy the sample must reach */

typedef struct optimizer_t {
  const char* name;
  int slots;         /* optimiser state buffers carried from step to step */
  const char* about; /* for the first line */
} optimizer_t;

static const optimizer_t kAdam = {"adam", 9, "Adam (learning rate 0.003)"};
static const optimizer_t kSgd = {"sgd", 4, "SGD with momentum 0.9 (learning rate 0.05)"};

/* A split of the data set: images (uint8 [count, 64]) and labels (uint8). */
typedef struct dataset_t {
  int64_t count;
  unsigned char* images;
  unsigned char* labels;
} dataset_t;

/* ------------------------------------------------------------------------- */
/* The model and the optimisers, as Kiln computations                        */
/* ------------------------------------------------------------------------- */

static const int64_t kDimsW1[2] = {kPixels, kHidden};
static const int64_t kDimsB1[1] = {kHidden};
static const int64_t kDimsW2[2] = {kHidden, kClasses};
static const int64_t kDimsB2[1] = {kClasses};
static const int64_t* const kParamDims[kParams] = {kDimsW1, kDimsB1, kDimsW2, kDimsB2};
static const size_t kParamRanks[kParams] = {2, 1, 2, 1};
static const char* const kParamNames[kParams] = {"w1", "b1", "w2", "b2"};

/* (a, b) -> a + b or max(a, b) over f32 scalars: reducers. */
static kiln_computation_t* scalar_reducer(int maximum) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* reducer = NULL;
  kiln_op_t a, b;
  if (frames_failed(kiln_builder_create(maximum ? "max" : "add", &builder), "kiln_builder_create"))
    return NULL;
  a = kiln_op_parameter(builder, 0, KILN_TYPE_F32, NULL, 0, NULL, "a");
  b = kiln_op_parameter(builder, 1, KILN_TYPE_F32, NULL, 0, NULL, "b");
  if (maximum)
    kiln_op_max(builder, a, b, NULL, 0);
  else
    kiln_op_add(builder, a, b, NULL, 0);
  frames_failed(kiln_builder_build(builder, KILN_OP_INVALID, &reducer), "kiln_builder_build");
  kiln_builder_destroy(builder);
  return reducer;
}

/* Adds parameters 0..3 (the weights) to `builder`, starting at `first`. */
static void weight_parameters(kiln_builder_t* builder, int64_t first, const char* prefix, kiln_op_t* out) {
  char name[32];
  int i;
  for (i = 0; i < kParams; ++i) {
    snprintf(name, sizeof(name), "%s%s", prefix, kParamNames[i]);
    out[i] = kiln_op_parameter(builder, first + i, KILN_TYPE_F32, kParamDims[i], kParamRanks[i], NULL, name);
  }
}

/* The forward pass over `count` images: returns the mean cross-entropy (an f32
 * scalar) and, in *correct, how many images the model classifies right. */
static kiln_op_t forward(kiln_builder_t* builder, const kiln_op_t* weights, kiln_op_t images,
                         kiln_op_t labels, int64_t count, const kiln_computation_t* add,
                         const kiln_computation_t* max, kiln_op_t* correct) {
  const int64_t rows[1] = {0}, columns[1] = {1};
  const int64_t logits_dims[2] = {count, kClasses};
  kiln_op_t x, hidden, logits, row_max, shifted, log_sum_exp, one_hot, picked, losses;

  /* Grey levels 0..16 to [0, 1]. */
  x = kiln_op_mul(builder, kiln_op_convert(builder, images, KILN_TYPE_F32),
                  kiln_op_constant_f32(builder, 1.0f / 16.0f), NULL, 0);
  hidden = kiln_op_add(builder, kiln_op_dot(builder, x, weights[0]), weights[1], columns, 1);
  hidden = kiln_op_max(builder, hidden, kiln_op_constant_f32(builder, 0.0f), NULL, 0); /* ReLU */
  logits = kiln_op_add(builder, kiln_op_dot(builder, hidden, weights[2]), weights[3], columns, 1);

  /* Softmax cross-entropy, shifted by each row's maximum for range. */
  row_max = kiln_op_reduce(builder, logits, kiln_op_constant_f32(builder, -INFINITY), max, columns, 1);
  shifted = kiln_op_sub(builder, logits, row_max, rows, 1);
  log_sum_exp = kiln_op_log(builder, kiln_op_reduce(builder, kiln_op_exp(builder, shifted),
                                                    kiln_op_constant_f32(builder, 0.0f), add, columns, 1));
  one_hot = kiln_op_convert(builder,
                            kiln_op_eq(builder, kiln_op_iota(builder, KILN_TYPE_S32, logits_dims, 2, 1),
                                       kiln_op_convert(builder, labels, KILN_TYPE_S32), rows, 1),
                            KILN_TYPE_F32);
  picked = kiln_op_reduce(builder, kiln_op_mul(builder, shifted, one_hot, NULL, 0),
                          kiln_op_constant_f32(builder, 0.0f), add, columns, 1);
  losses = kiln_op_sub(builder, log_sum_exp, picked, NULL, 0);
  if (correct != NULL) {
    /* Right when the label's logit is the row's maximum (its shifted logit 0). */
    *correct = kiln_op_reduce(
        builder,
        kiln_op_convert(builder, kiln_op_ge(builder, picked, kiln_op_constant_f32(builder, 0.0f), NULL, 0),
                        KILN_TYPE_F32),
        kiln_op_constant_f32(builder, 0.0f), add, rows, 1);
  }
  return kiln_op_div(builder,
                     kiln_op_reduce(builder, losses, kiln_op_constant_f32(builder, 0.0f), add, rows, 1),
                     kiln_op_constant_f32(builder, (float)count), NULL, 0);
}

/* loss(w1, b1, w2, b2, images u8[count,64], labels u8[count]) -> f32[] when
 * `with_accuracy` is 0, else (loss, correct) to evaluate a whole split. */
static kiln_computation_t* build_loss(int64_t count, int with_accuracy) {
  const int64_t image_dims[2] = {count, kPixels};
  const int64_t label_dims[1] = {count};
  kiln_computation_t* add = scalar_reducer(0);
  kiln_computation_t* max = scalar_reducer(1);
  kiln_computation_t* loss = NULL;
  kiln_builder_t* builder = NULL;
  kiln_op_t weights[kParams], images, labels, value, correct, results[2];

  if (add != NULL && max != NULL &&
      !frames_failed(kiln_builder_create(with_accuracy ? "evaluate" : "loss", &builder),
                     "kiln_builder_create")) {
    weight_parameters(builder, 0, "", weights);
    images = kiln_op_parameter(builder, kParams, KILN_TYPE_U8, image_dims, 2, NULL, "images");
    labels = kiln_op_parameter(builder, kParams + 1, KILN_TYPE_U8, label_dims, 1, NULL, "labels");
    value = forward(builder, weights, images, labels, count, add, max, with_accuracy ? &correct : NULL);
    if (with_accuracy) {
      results[0] = value;
      results[1] = correct;
      value = kiln_op_tuple(builder, results, 2);
    }
    /* Builder errors are sticky: one check after the last op covers them all. */
    frames_failed(kiln_builder_build(builder, value, &loss), "building the loss");
  }
  kiln_builder_destroy(builder);
  kiln_computation_destroy(max);
  kiln_computation_destroy(add);
  return loss;
}

/* One training step as one computation:
 *   (weights..., state..., images, labels) -> (weights'..., state'..., loss)
 * It calls `value_and_grad` (loss, dw1, db1, dw2, db2) and applies the update.
 *   Adam:  m' = 0.9 m + 0.1 g;  v' = 0.999 v + 0.001 g^2;  t' = t + 1;
 *          w' = w - lr (m' / (1 - 0.9^t')) / (sqrt(v' / (1 - 0.999^t')) + 1e-8)
 *   SGD:   u' = 0.9 u + g;  w' = w - lr u' */
static kiln_computation_t* build_step(const optimizer_t* optimizer,
                                      const kiln_computation_t* value_and_grad) {
  const int64_t image_dims[2] = {kBatch, kPixels};
  const int64_t label_dims[1] = {kBatch};
  const int adam = optimizer == &kAdam;
  kiln_builder_t* builder = NULL;
  kiln_computation_t* step = NULL;
  kiln_op_t weights[kParams], first[kParams], second[kParams], t = KILN_OP_INVALID;
  kiln_op_t call_operands[kParams + 2], outputs[kParams + kMaxSlots + 1];
  kiln_op_t gradient, grad, new_t = KILN_OP_INVALID, correction1 = KILN_OP_INVALID,
                            correction2 = KILN_OP_INVALID;
  int i, n = 0;

  if (frames_failed(kiln_builder_create(adam ? "adam_step" : "sgd_step", &builder), "kiln_builder_create"))
    return NULL;
  weight_parameters(builder, 0, "", weights);
  weight_parameters(builder, kParams, adam ? "m_" : "velocity_", first);
  if (adam) {
    weight_parameters(builder, 2 * kParams, "v_", second);
    t = kiln_op_parameter(builder, 3 * kParams, KILN_TYPE_F32, NULL, 0, NULL, "t");
  }
  for (i = 0; i < kParams; ++i) call_operands[i] = weights[i];
  call_operands[kParams] =
      kiln_op_parameter(builder, kParams + optimizer->slots, KILN_TYPE_U8, image_dims, 2, NULL, "images");
  call_operands[kParams + 1] =
      kiln_op_parameter(builder, kParams + optimizer->slots + 1, KILN_TYPE_U8, label_dims, 1, NULL, "labels");
  gradient = kiln_op_call(builder, value_and_grad, call_operands, kParams + 2);

  if (adam) {
    new_t = kiln_op_add(builder, t, kiln_op_constant_f32(builder, 1.0f), NULL, 0);
    correction1 =
        kiln_op_sub(builder, kiln_op_constant_f32(builder, 1.0f),
                    kiln_op_pow(builder, kiln_op_constant_f32(builder, 0.9f), new_t, NULL, 0), NULL, 0);
    correction2 =
        kiln_op_sub(builder, kiln_op_constant_f32(builder, 1.0f),
                    kiln_op_pow(builder, kiln_op_constant_f32(builder, 0.999f), new_t, NULL, 0), NULL, 0);
  }
  for (i = 0; i < kParams; ++i) {
    grad = kiln_op_get_tuple_element(builder, gradient, 1 + i);
    if (adam) {
      kiln_op_t m =
          kiln_op_add(builder, kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.9f), first[i], NULL, 0),
                      kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.1f), grad, NULL, 0), NULL, 0);
      kiln_op_t v = kiln_op_add(
          builder, kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.999f), second[i], NULL, 0),
          kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.001f),
                      kiln_op_mul(builder, grad, grad, NULL, 0), NULL, 0),
          NULL, 0);
      kiln_op_t denominator =
          kiln_op_add(builder, kiln_op_sqrt(builder, kiln_op_div(builder, v, correction2, NULL, 0)),
                      kiln_op_constant_f32(builder, 1e-8f), NULL, 0);
      kiln_op_t update =
          kiln_op_div(builder, kiln_op_div(builder, m, correction1, NULL, 0), denominator, NULL, 0);
      outputs[i] =
          kiln_op_sub(builder, weights[i],
                      kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.003f), update, NULL, 0), NULL, 0);
      outputs[kParams + i] = m;
      outputs[2 * kParams + i] = v;
    } else {
      kiln_op_t velocity =
          kiln_op_add(builder, kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.9f), first[i], NULL, 0),
                      grad, NULL, 0);
      outputs[i] =
          kiln_op_sub(builder, weights[i],
                      kiln_op_mul(builder, kiln_op_constant_f32(builder, 0.05f), velocity, NULL, 0), NULL, 0);
      outputs[kParams + i] = velocity;
    }
  }
  n = kParams + optimizer->slots;
  if (adam) outputs[n - 1] = new_t;
  outputs[n++] = kiln_op_get_tuple_element(builder, gradient, 0); /* the batch's loss */
  frames_failed(kiln_builder_build(builder, kiln_op_tuple(builder, outputs, (size_t)n), &step),
                "building the training step");
  kiln_builder_destroy(builder);
  return step;
}

/* ------------------------------------------------------------------------- */
/* Data, weights and the training loop                                       */
/* ------------------------------------------------------------------------- */

/* A small fixed-seed generator (xorshift64*), so every run is the same. */
static uint64_t g_random = 0x2545F4914F6CDD1Dull;
static double next_uniform(void) {
  g_random ^= g_random >> 12;
  g_random ^= g_random << 25;
  g_random ^= g_random >> 27;
  return (double)((g_random * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* Reads a uint8 .npy file of `rank` dimensions through Kiln into malloc'd
 * host memory; *count gets its first dimension, and the second must be
 * `columns` when rank is 2. */
static unsigned char* read_u8(kiln_client_t* client, const char* dir, const char* name, size_t rank,
                              int64_t columns, int64_t* count) {
  char path[1024];
  int64_t dims[2] = {0, 0};
  size_t actual_rank = 0, bytes = 0;
  kiln_buffer_t* buffer = NULL;
  unsigned char* data = NULL;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (frames_failed(kiln_client_buffer_from_npy_file(client, path, KILN_TYPE_U8, &buffer), path)) return NULL;
  if (!frames_failed(kiln_buffer_rank(buffer, &actual_rank), path) && actual_rank == rank &&
      !frames_failed(kiln_buffer_dimensions(buffer, dims, 2), path) && (rank == 1 || dims[1] == columns) &&
      !frames_failed(kiln_buffer_byte_size(buffer, &bytes), path)) {
    data = malloc(bytes > 0 ? bytes : 1);
    if (data != NULL && frames_failed(kiln_buffer_to_host(buffer, data, bytes), path)) {
      free(data);
      data = NULL;
    }
    *count = dims[0];
  } else {
    fprintf(stderr, "%s: expected a uint8 array of rank %d\n", path, (int)rank);
  }
  kiln_buffer_destroy(buffer);
  return data;
}

static int load_split(kiln_client_t* client, const char* dir, const char* split, dataset_t* out) {
  char name[64];
  int64_t label_count = -1;
  snprintf(name, sizeof(name), "digits_%s_images.npy", split);
  out->images = read_u8(client, dir, name, 2, kPixels, &out->count);
  snprintf(name, sizeof(name), "digits_%s_labels.npy", split);
  out->labels = read_u8(client, dir, name, 1, 0, &label_count);
  if (out->images == NULL || out->labels == NULL) return -1;
  if (label_count != out->count) {
    fprintf(stderr, "%s: %lld images but %lld labels\n", split, (long long)out->count,
            (long long)label_count);
    return -1;
  }
  return 0;
}

static kiln_buffer_t* upload(kiln_client_t* client, kiln_element_type_t type, const int64_t* dims,
                             size_t rank, const void* data, size_t bytes) {
  kiln_buffer_t* buffer = NULL;
  frames_failed(kiln_client_buffer_from_host(client, type, dims, rank, NULL, data, bytes, &buffer),
                "kiln_client_buffer_from_host");
  return buffer;
}

/* Glorot-uniform weights and zero biases; zero optimiser state. */
static int initial_state(kiln_client_t* client, const optimizer_t* optimizer, kiln_buffer_t** weights,
                         kiln_buffer_t** slots) {
  static float values[kPixels * kHidden];
  int i, s;
  for (i = 0; i < kParams; ++i) {
    const size_t size =
        kParamRanks[i] == 2 ? (size_t)(kParamDims[i][0] * kParamDims[i][1]) : (size_t)kParamDims[i][0];
    const double limit =
        kParamRanks[i] == 2 ? sqrt(6.0 / (double)(kParamDims[i][0] + kParamDims[i][1])) : 0.0;
    size_t j;
    for (j = 0; j < size; ++j) values[j] = (float)((2.0 * next_uniform() - 1.0) * limit);
    weights[i] = upload(client, KILN_TYPE_F32, kParamDims[i], kParamRanks[i], values, size * sizeof(float));
    memset(values, 0, size * sizeof(float));
    for (s = i; s < optimizer->slots - (optimizer == &kAdam); s += kParams) {
      slots[s] = upload(client, KILN_TYPE_F32, kParamDims[i], kParamRanks[i], values, size * sizeof(float));
      if (slots[s] == NULL) return -1;
    }
    if (weights[i] == NULL) return -1;
  }
  if (optimizer == &kAdam) {
    const float t = 0.0f;
    slots[optimizer->slots - 1] = upload(client, KILN_TYPE_F32, NULL, 0, &t, sizeof(t));
    if (slots[optimizer->slots - 1] == NULL) return -1;
  }
  return 0;
}

/* Loss and accuracy of the current weights on a whole split. */
static int evaluate(kiln_executable_t* executable, kiln_buffer_t* const* weights, kiln_buffer_t* images,
                    kiln_buffer_t* labels, int64_t count, float* loss, double* accuracy) {
  kiln_buffer_t* arguments[kParams + 2];
  kiln_buffer_t* results[2] = {NULL, NULL};
  size_t n = 0;
  float correct = 0;
  int i, status = -1;
  for (i = 0; i < kParams; ++i) arguments[i] = weights[i];
  arguments[kParams] = images;
  arguments[kParams + 1] = labels;
  if (!frames_failed(kiln_executable_execute(executable, arguments, kParams + 2, NULL, results, 2, &n),
                     "evaluate") &&
      !frames_failed(kiln_buffer_to_host(results[0], loss, sizeof(*loss)), "reading the loss") &&
      !frames_failed(kiln_buffer_to_host(results[1], &correct, sizeof(correct)), "reading the accuracy")) {
    *accuracy = correct / (double)count;
    status = 0;
  }
  kiln_buffer_destroy(results[0]);
  kiln_buffer_destroy(results[1]);
  return status;
}

/* ------------------------------------------------------------------------- */
/* The loss-curve picture                                                     */
/* ------------------------------------------------------------------------- */

enum { kPictureWidth = 720, kPictureHeight = 420, kLeft = 56, kRight = 20, kTop = 44, kBottom = 52 };

/* A 5x7 pixel font for the picture's labels: the characters they use. */
typedef struct glyph_t {
  char c;
  const char* rows[7];
} glyph_t;

static const glyph_t kGlyphs[] = {
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {'-', {".....", ".....", ".....", ".###.", ".....", ".....", "....."}},
    {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
    {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"}},
    {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."}},
    {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."}},
    {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"}},
    {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
    {'g', {".....", ".####", "#...#", ".####", "....#", "#...#", ".###."}},
    {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."}},
    {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."}},
    {'p', {".....", ".....", "####.", "#...#", "####.", "#....", "#...."}},
    {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."}},
    {'s', {".....", ".....", ".###.", "#....", ".###.", "....#", "####."}},
    {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."}},
    {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"}},
};

enum { kScale = 2, kAdvance = 6 * kScale }; /* glyphs drawn twice their size */

static void plot_point(unsigned char* rgb, int x, int y, const unsigned char* colour) {
  if (x < 0 || y < 0 || x >= kPictureWidth || y >= kPictureHeight) return;
  memcpy(rgb + 3 * ((size_t)y * kPictureWidth + (size_t)x), colour, 3);
}

static void plot_line(unsigned char* rgb, double x0, double y0, double x1, double y1,
                      const unsigned char* colour, int thick) {
  const int steps = (int)(fabs(x1 - x0) + fabs(y1 - y0)) + 1;
  int i, dx, dy;
  for (i = 0; i <= steps; ++i) {
    const double f = (double)i / steps;
    const int x = (int)lround(x0 + f * (x1 - x0)), y = (int)lround(y0 + f * (y1 - y0));
    for (dx = 0; dx < thick; ++dx)
      for (dy = 0; dy < thick; ++dy) plot_point(rgb, x + dx, y + dy, colour);
  }
}

/* Draws `text` with its top-left corner at (x, y); characters without a glyph
 * (spaces) leave a gap. Returns the x after the text. */
static int draw_text(unsigned char* rgb, int x, int y, const char* text, const unsigned char* colour) {
  size_t g;
  int row, column, dx, dy;
  for (; *text != '\0'; ++text, x += kAdvance) {
    for (g = 0; g < sizeof(kGlyphs) / sizeof(kGlyphs[0]) && kGlyphs[g].c != *text; ++g) {
    }
    if (g == sizeof(kGlyphs) / sizeof(kGlyphs[0])) continue;
    for (row = 0; row < 7; ++row)
      for (column = 0; column < 5; ++column)
        if (kGlyphs[g].rows[row][column] == '#')
          for (dy = 0; dy < kScale; ++dy)
            for (dx = 0; dx < kScale; ++dx)
              plot_point(rgb, x + column * kScale + dx, y + row * kScale + dy, colour);
  }
  return x;
}

/* A legend entry: a short thick line in `colour`, then its label. */
static int draw_key(unsigned char* rgb, int x, int y, const char* label, const unsigned char* colour) {
  plot_line(rgb, x, y + 6, x + 24, y + 6, colour, 3);
  return draw_text(rgb, x + 32, y, label, (const unsigned char*)"\x3c\x3c\x3c") + 28;
}

/* The batch losses (light blue), each epoch's mean training loss (blue) and
 * the held-out loss (orange) against the epochs, from 0 to the first batch
 * loss, with a legend, the loss every 0.5 and the epochs labelled. */
static int write_curve(const char* path, const float* batch_losses, int steps, const float* train_losses,
                       const float* test_losses, int epochs, int steps_per_epoch) {
  static const unsigned char kGrid[3] = {225, 225, 225}, kInk[3] = {60, 60, 60};
  static const unsigned char kBatchColour[3] = {170, 200, 235}, kTrainColour[3] = {31, 100, 180};
  static const unsigned char kTestColour[3] = {235, 120, 20};
  const double plot_w = kPictureWidth - kLeft - kRight, plot_h = kPictureHeight - kTop - kBottom;
  const int label_every = epochs <= 10 ? 1 : epochs <= 20 ? 2 : (epochs + 9) / 10;
  unsigned char* rgb = malloc((size_t)kPictureWidth * kPictureHeight * 3);
  double top = 0.5, level;
  char label[16];
  int i, x, status;
#define X_OF(step) (kLeft + plot_w * (double)(step) / (double)steps)
#define Y_OF(value) (kTop + plot_h - plot_h * ((value) < top ? (value) : top) / top)
  if (rgb == NULL) return -1;
  memset(rgb, 255, (size_t)kPictureWidth * kPictureHeight * 3);
  for (i = 0; i < steps; ++i)
    if (batch_losses[i] > top) top = batch_losses[i];
  for (level = 0; level < top; level += 0.5) {
    if (level > 0) plot_line(rgb, X_OF(0), Y_OF(level), X_OF(steps), Y_OF(level), kGrid, 1);
    snprintf(label, sizeof(label), "%.1f", level);
    draw_text(rgb, kLeft - 8 - kAdvance * (int)strlen(label), (int)Y_OF(level) - 7, label, kInk);
  }
  for (i = 1; i <= epochs; ++i) {
    plot_line(rgb, X_OF(i * steps_per_epoch), Y_OF(0), X_OF(i * steps_per_epoch), Y_OF(top), kGrid, 1);
    if (i % label_every == 0) {
      snprintf(label, sizeof(label), "%d", i);
      draw_text(rgb, (int)X_OF(i * steps_per_epoch) - kAdvance * (int)strlen(label) / 2,
                kPictureHeight - kBottom + 8, label, kInk);
    }
  }
  draw_text(rgb, kLeft + (int)plot_w / 2 - 2 * kAdvance, kPictureHeight - kBottom + 28, "epoch", kInk);
  for (i = 1; i < steps; ++i)
    plot_line(rgb, X_OF(i - 1), Y_OF(batch_losses[i - 1]), X_OF(i), Y_OF(batch_losses[i]), kBatchColour, 1);
  for (i = 1; i < epochs; ++i) {
    plot_line(rgb, X_OF(i * steps_per_epoch), Y_OF(train_losses[i - 1]), X_OF((i + 1) * steps_per_epoch),
              Y_OF(train_losses[i]), kTrainColour, 2);
    plot_line(rgb, X_OF(i * steps_per_epoch), Y_OF(test_losses[i - 1]), X_OF((i + 1) * steps_per_epoch),
              Y_OF(test_losses[i]), kTestColour, 2);
  }
  plot_line(rgb, X_OF(0), Y_OF(0), X_OF(steps), Y_OF(0), kInk, 1);
  plot_line(rgb, X_OF(0), Y_OF(0), X_OF(0), Y_OF(top), kInk, 1);
  draw_text(rgb, 8, 14, "loss", kInk);
  x = draw_key(rgb, kLeft + 140, 14, "batch", kBatchColour);
  x = draw_key(rgb, x, 14, "training", kTrainColour);
  draw_key(rgb, x, 14, "held-out", kTestColour);
#undef X_OF
#undef Y_OF
  status = frames_write_png(path, rgb, kPictureWidth, kPictureHeight);
  free(rgb);
  return status;
}

/* ------------------------------------------------------------------------- */

static void usage(const char* program) {
  printf(
      "usage: %s [--optimizer adam|sgd] [--epochs N] [--backend NAME] [--data-dir DIR] [--output FILE.png]\n",
      program);
  printf(
      "Trains a 64-64-10 classifier of 8x8 digits with Kiln's gradients and optimiser; exits 1 when\n"
      "the held-out accuracy stays under 95%%. Defaults: adam, 20 epochs, the default backend,\n"
      "%s, train_digits_loss.png.\n",
      KILN_SAMPLE_DATA_DIR);
}

int main(int argc, char** argv) {
  const optimizer_t* optimizer = &kAdam;
  const char* backend = NULL;
  const char* data_dir = KILN_SAMPLE_DATA_DIR;
  const char* output = "train_digits_loss.png";
  int epochs = 20;
  kiln_client_options_t client_options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_computation_t *loss = NULL, *value_and_grad = NULL, *step = NULL, *evaluate_train = NULL,
                     *evaluate_test = NULL;
  kiln_executable_t *step_exe = NULL, *train_exe = NULL, *test_exe = NULL;
  kiln_buffer_t *weights[kParams] = {NULL}, *slots[kMaxSlots] = {NULL};
  kiln_buffer_t *train_images = NULL, *train_labels = NULL, *test_images = NULL, *test_labels = NULL;
  const char* backend_name = "";
  dataset_t train = {0, NULL, NULL}, test = {0, NULL, NULL};
  const int64_t wrt[kParams] = {0, 1, 2, 3};
  int64_t* order = NULL;
  float *batch_losses = NULL, train_losses[kMaxEpochs], test_losses[kMaxEpochs];
  double accuracy = 0, start, setup_ms;
  int exit_code = 1, i, epoch, steps_per_epoch = 0, steps = 0;

  for (i = 1; i < argc; i += 2) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(argv[0]);
      return 0;
    } else if (strcmp(argv[i], "--optimizer") == 0 && value != NULL &&
               (strcmp(value, "adam") == 0 || strcmp(value, "sgd") == 0)) {
      optimizer = strcmp(value, "adam") == 0 ? &kAdam : &kSgd;
    } else if (strcmp(argv[i], "--epochs") == 0 && value != NULL && atoi(value) >= 1 &&
               atoi(value) <= kMaxEpochs) {
      epochs = atoi(value);
    } else if (strcmp(argv[i], "--backend") == 0 && value != NULL) {
      backend = value;
    } else if (strcmp(argv[i], "--data-dir") == 0 && value != NULL) {
      data_dir = value;
    } else if (strcmp(argv[i], "--output") == 0 && value != NULL) {
      output = value;
    } else {
      fprintf(stderr, "%s: bad argument '%s'%s\n", argv[0], argv[i],
              value == NULL ? " (or its value is missing)" : "");
      usage(argv[0]);
      return 2;
    }
  }

  start = frames_now_ms();
  client_options.backend = backend;
  if (frames_failed(kiln_client_create(&client_options, &client), "kiln_client_create") ||
      frames_failed(kiln_client_backend_name(client, &backend_name), "kiln_client_backend_name"))
    goto done;
  if (load_split(client, data_dir, "train", &train) != 0 ||
      load_split(client, data_dir, "test", &test) != 0) {
    fprintf(stderr, "cannot read the digits from %s (samples/data/make_digits.py writes them)\n", data_dir);
    goto done;
  }

  /* The computations: the loss, its gradient (Kiln's reverse mode), the
   * training step around it, and the evaluation of each split. */
  loss = build_loss(kBatch, 0);
  if (loss == NULL || frames_failed(kiln_computation_value_and_grad(loss, wrt, kParams, &value_and_grad),
                                    "kiln_computation_value_and_grad"))
    goto done;
  step = build_step(optimizer, value_and_grad);
  evaluate_train = build_loss(train.count, 1);
  evaluate_test = build_loss(test.count, 1);
  if (step == NULL || evaluate_train == NULL || evaluate_test == NULL ||
      frames_failed(kiln_client_compile(client, step, NULL, &step_exe), "compiling the training step") ||
      frames_failed(kiln_client_compile(client, evaluate_train, NULL, &train_exe),
                    "compiling the evaluation") ||
      frames_failed(kiln_client_compile(client, evaluate_test, NULL, &test_exe), "compiling the evaluation"))
    goto done;

  {
    const int64_t train_dims[2] = {train.count, kPixels}, test_dims[2] = {test.count, kPixels};
    train_images = upload(client, KILN_TYPE_U8, train_dims, 2, train.images, (size_t)train.count * kPixels);
    train_labels = upload(client, KILN_TYPE_U8, train_dims, 1, train.labels, (size_t)train.count);
    test_images = upload(client, KILN_TYPE_U8, test_dims, 2, test.images, (size_t)test.count * kPixels);
    test_labels = upload(client, KILN_TYPE_U8, test_dims, 1, test.labels, (size_t)test.count);
  }
  if (train_images == NULL || train_labels == NULL || test_images == NULL || test_labels == NULL ||
      initial_state(client, optimizer, weights, slots) != 0)
    goto done;

  steps_per_epoch = (int)(train.count / kBatch);
  order = malloc((size_t)train.count * sizeof(*order));
  batch_losses = malloc((size_t)epochs * (size_t)steps_per_epoch * sizeof(*batch_losses));
  if (order == NULL || batch_losses == NULL) goto done;
  for (i = 0; i < train.count; ++i) order[i] = i;
  setup_ms = frames_now_ms() - start;
  printf(
      "Training a 64-64-10 classifier of 8x8 handwritten digits on %s with Kiln's own gradients:\n"
      "%lld training images, %lld held out; %s, batches of %d; the data, the computations and their\n"
      "compilation took %.2f s.\n",
      backend_name, (long long)train.count, (long long)test.count, optimizer->about, kBatch,
      setup_ms / 1000.0);
  start = frames_now_ms();

  for (epoch = 0; epoch < epochs; ++epoch) {
    const double epoch_start = frames_now_ms();
    double loss_sum = 0, train_accuracy = 0;
    float train_loss = 0;
    int b;
    /* A new order of the training images each epoch (Fisher-Yates). */
    for (i = (int)train.count - 1; i > 0; --i) {
      const int j = (int)(next_uniform() * (i + 1));
      const int64_t swap = order[i];
      order[i] = order[j];
      order[j] = swap;
    }
    for (b = 0; b < steps_per_epoch; ++b) {
      unsigned char batch_images[kBatch * kPixels], batch_labels[kBatch];
      const int64_t image_dims[2] = {kBatch, kPixels}, label_dims[1] = {kBatch};
      kiln_buffer_t* arguments[kParams + kMaxSlots + 2];
      kiln_buffer_t* results[kParams + kMaxSlots + 1] = {NULL};
      const int n = kParams + optimizer->slots;
      size_t count = 0;
      float batch_loss = 0;
      int k, failed;
      for (k = 0; k < kBatch; ++k) {
        const int64_t row = order[b * kBatch + k];
        memcpy(batch_images + k * kPixels, train.images + row * kPixels, kPixels);
        batch_labels[k] = train.labels[row];
      }
      for (k = 0; k < kParams; ++k) arguments[k] = weights[k];
      for (k = 0; k < optimizer->slots; ++k) arguments[kParams + k] = slots[k];
      arguments[n] = upload(client, KILN_TYPE_U8, image_dims, 2, batch_images, sizeof(batch_images));
      arguments[n + 1] = upload(client, KILN_TYPE_U8, label_dims, 1, batch_labels, sizeof(batch_labels));
      failed = arguments[n] == NULL || arguments[n + 1] == NULL ||
               frames_failed(kiln_executable_execute(step_exe, arguments, (size_t)n + 2, NULL, results,
                                                     kParams + kMaxSlots + 1, &count),
                             "the training step");
      kiln_buffer_destroy(arguments[n]);
      kiln_buffer_destroy(arguments[n + 1]);
      if (failed) goto done;
      /* The step's results are the next step's weights and state. */
      for (k = 0; k < kParams; ++k) {
        kiln_buffer_destroy(weights[k]);
        weights[k] = results[k];
      }
      for (k = 0; k < optimizer->slots; ++k) {
        kiln_buffer_destroy(slots[k]);
        slots[k] = results[kParams + k];
      }
      failed =
          frames_failed(kiln_buffer_to_host(results[n], &batch_loss, sizeof(batch_loss)), "reading the loss");
      kiln_buffer_destroy(results[n]);
      if (failed) goto done;
      batch_losses[steps++] = batch_loss;
      loss_sum += batch_loss;
    }
    if (evaluate(train_exe, weights, train_images, train_labels, train.count, &train_loss, &train_accuracy) !=
            0 ||
        evaluate(test_exe, weights, test_images, test_labels, test.count, &test_losses[epoch], &accuracy) !=
            0)
      goto done;
    train_losses[epoch] = (float)(loss_sum / steps_per_epoch);
    printf(
        "epoch %2d/%d  loss %.4f  held-out loss %.4f  accuracy: train %5.1f%%  held-out %5.1f%%  (%.0f ms)\n",
        epoch + 1, epochs, train_losses[epoch], test_losses[epoch], 100.0 * train_accuracy, 100.0 * accuracy,
        frames_now_ms() - epoch_start);
    fflush(stdout);
  }

  printf("held-out accuracy %.1f%% after %d epochs (%d steps) in %.2f s: %s the %.0f%% target\n",
         100.0 * accuracy, epochs, steps, (frames_now_ms() - start) / 1000.0,
         accuracy >= kTarget ? "reached" : "MISSED", 100.0 * kTarget);
  if (write_curve(output, batch_losses, steps, train_losses, test_losses, epochs, steps_per_epoch) == 0)
    printf("wrote %s: the loss per batch, and per epoch on the training and held-out images\n", output);
  exit_code = accuracy >= kTarget ? 0 : 1;

done:
  free(order);
  free(batch_losses);
  for (i = 0; i < kParams; ++i) kiln_buffer_destroy(weights[i]);
  for (i = 0; i < kMaxSlots; ++i) kiln_buffer_destroy(slots[i]);
  kiln_buffer_destroy(train_images);
  kiln_buffer_destroy(train_labels);
  kiln_buffer_destroy(test_images);
  kiln_buffer_destroy(test_labels);
  kiln_executable_destroy(step_exe);
  kiln_executable_destroy(train_exe);
  kiln_executable_destroy(test_exe);
  kiln_computation_destroy(evaluate_test);
  kiln_computation_destroy(evaluate_train);
  kiln_computation_destroy(step);
  kiln_computation_destroy(value_and_grad);
  kiln_computation_destroy(loss);
  free(train.images);
  free(train.labels);
  free(test.images);
  free(test.labels);
  kiln_client_destroy(client);
  return exit_code;
}
