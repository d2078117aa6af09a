/* Raindrops on a pond: a damped 2-D wave equation, several time steps per
 * Kiln execution, rendered as shaded water into PNG files.
 *
 *   kiln_sample_ripples [--backend NAME] [--frames N] [--size WxH] [--output-dir DIR]
 *
 * Each frame is one execution of one computation that
 *   - adds this frame's raindrops to the surface height u as Gaussian dents,
 *   - runs a while loop of kStepsPerTrip x kTrips steps of
 *       u_next = u + (1 - damping) (u - u_prev) + courant^2 laplacian(u)
 *     with the laplacian built from slices and concatenations (the edge rows
 *     and columns repeat, so waves reflect off the banks),
 *   - shades the surface: a normal from the height's gradient, diffuse and
 *     specular light, deep to shallow blues by height, as RGB bytes.
 * The surface stays on the device between frames: the computation returns
 * the new state next to the picture, and the next frame takes it back.
 *
 * It runs on "vulkan" unless --backend names another backend; when vulkan
 * cannot be used it says why in one line and runs on "cpu". Every status is
 * checked; on failure the sample prints the message and exits non-zero.
 * The host side it shares with the other picture sample (options, client,
 * output directory, PNG files, clock) is in frames.h.
 *
 * The C API has no tuple parameters, so the loop state is one f32 array of
 * 1 + 2H rows of W: a header row holding the trip counter, then u and u_prev. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "kiln/kiln.h"

/* --- The computation ------------------------------------------------------- */

enum { kTrips = 24, kStepsPerTrip = 1, kDropSlots = 4 };
static const float kCourant2 = 0.25f; /* (c dt / dx)^2; stable below 0.5 */
static const float kDamping = 0.004f;
static const float kRelief = 20.0f; /* how steep the shading makes the waves */

static kiln_op_t f32c(kiln_builder_t* b, float value) { return kiln_op_constant_f32(b, value); }
static kiln_op_t add(kiln_builder_t* b, kiln_op_t x, kiln_op_t y) { return kiln_op_add(b, x, y, NULL, 0); }
static kiln_op_t sub(kiln_builder_t* b, kiln_op_t x, kiln_op_t y) { return kiln_op_sub(b, x, y, NULL, 0); }
static kiln_op_t mul(kiln_builder_t* b, kiln_op_t x, kiln_op_t y) { return kiln_op_mul(b, x, y, NULL, 0); }

/* Rows [row, row + rows) of a rank-2 array `width` wide. */
static kiln_op_t rows_of(kiln_builder_t* b, kiln_op_t x, int64_t row, int64_t rows, int64_t width) {
  const int64_t start[2] = {row, 0}, limit[2] = {row + rows, width};
  return kiln_op_slice(b, x, start, limit, NULL, 2);
}

/* u shifted by one along `dimension` (of size `size`), the edge repeated:
 * towards = -1 gives each element its lower neighbour, +1 its upper one. */
static kiln_op_t neighbour(kiln_builder_t* b, kiln_op_t u, int64_t dimension, int64_t size, int towards) {
  kiln_op_t parts[2];
  if (towards < 0) {
    parts[0] = kiln_op_slice_in_dim(b, u, 0, 1, 1, dimension);
    parts[1] = kiln_op_slice_in_dim(b, u, 0, size - 1, 1, dimension);
  } else {
    parts[0] = kiln_op_slice_in_dim(b, u, 1, size, 1, dimension);
    parts[1] = kiln_op_slice_in_dim(b, u, size - 1, size, 1, dimension);
  }
  return kiln_op_concat_in_dim(b, parts, 2, dimension);
}

/* condition(state) = trip < kTrips */
static kiln_computation_t* build_condition(int64_t width, int64_t height) {
  const int64_t dims[2] = {1 + 2 * height, width};
  const int64_t start[2] = {0, 0}, limit[2] = {1, 1};
  kiln_builder_t* b = NULL;
  kiln_computation_t* condition = NULL;
  kiln_op_t state;
  if (frames_failed(kiln_builder_create("keep_stepping", &b), "kiln_builder_create")) return NULL;
  state = kiln_op_parameter(b, 0, KILN_TYPE_F32, dims, 2, NULL, "state");
  kiln_op_lt(b, kiln_op_reshape(b, kiln_op_slice(b, state, start, limit, NULL, 2), NULL, 0),
             f32c(b, (float)kTrips), NULL, 0);
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &condition), "kiln_builder_build(condition)");
  kiln_builder_destroy(b);
  return condition;
}

/* body(state): kStepsPerTrip steps of the wave equation; the trip counter
 * goes up by one. */
static kiln_computation_t* build_body(int64_t width, int64_t height) {
  const int64_t dims[2] = {1 + 2 * height, width};
  const int64_t header_dims[2] = {1, width};
  kiln_builder_t* b = NULL;
  kiln_computation_t* body = NULL;
  kiln_op_t state, header, u, previous, parts[3];
  int step;
  if (frames_failed(kiln_builder_create("step", &b), "kiln_builder_create")) return NULL;
  state = kiln_op_parameter(b, 0, KILN_TYPE_F32, dims, 2, NULL, "state");
  header = rows_of(b, state, 0, 1, width);
  u = rows_of(b, state, 1, height, width);
  previous = rows_of(b, state, 1 + height, height, width);
  for (step = 0; step < kStepsPerTrip; ++step) {
    kiln_op_t laplacian = add(b, add(b, neighbour(b, u, 0, height, -1), neighbour(b, u, 0, height, 1)),
                              add(b, neighbour(b, u, 1, width, -1), neighbour(b, u, 1, width, 1)));
    kiln_op_t next;
    laplacian = sub(b, laplacian, mul(b, f32c(b, 4.0f), u));
    next = add(b, add(b, u, mul(b, f32c(b, 1.0f - kDamping), sub(b, u, previous))),
               mul(b, f32c(b, kCourant2), laplacian));
    previous = u;
    u = next;
  }
  /* header + [1, 0, 0, ...]: one more trip done */
  parts[0] = add(b, header,
                 kiln_op_convert(b,
                                 kiln_op_eq(b, kiln_op_iota(b, KILN_TYPE_S32, header_dims, 2, 1),
                                            kiln_op_constant_s32(b, 0), NULL, 0),
                                 KILN_TYPE_F32));
  parts[1] = u;
  parts[2] = previous;
  kiln_op_concat_in_dim(b, parts, 3, 0);
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &body), "kiln_builder_build(body)");
  kiln_builder_destroy(b);
  return body;
}

/* f32 scalar addition, the reducer that sums the raindrops. */
static kiln_computation_t* build_sum(void) {
  kiln_builder_t* b = NULL;
  kiln_computation_t* sum = NULL;
  if (frames_failed(kiln_builder_create("sum", &b), "kiln_builder_create")) return NULL;
  add(b, kiln_op_parameter(b, 0, KILN_TYPE_F32, NULL, 0, NULL, "x"),
      kiln_op_parameter(b, 1, KILN_TYPE_F32, NULL, 0, NULL, "y"));
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &sum), "kiln_builder_build(sum)");
  kiln_builder_destroy(b);
  return sum;
}

/* Column `column` of drops f32[kDropSlots, 4] as f32[kDropSlots]. */
static kiln_op_t drop_field(kiln_builder_t* b, kiln_op_t drops, int64_t column) {
  const int64_t slots[1] = {kDropSlots};
  return kiln_op_reshape(b, kiln_op_slice_in_dim(b, drops, column, column + 1, 1, 1), slots, 1);
}

/* frame(surface f32[2H, W] = (u, u_prev), drops f32[kDropSlots, 4] = (x, y,
 * depth, radius) per drop, depth 0 for none) -> (new surface, u8[H, W, 3]). */
static kiln_computation_t* build_frame(int64_t width, int64_t height) {
  const int64_t surface_dims[2] = {2 * height, width};
  const int64_t drops_dims[2] = {kDropSlots, 4};
  const int64_t plane[2] = {height, width};
  const int64_t slot_plane[3] = {kDropSlots, height, width};
  const int64_t rgb_dims[3] = {height, width, 3};
  const int64_t header_dims[2] = {1, width};
  const int64_t slot_dimension[1] = {0};
  const int64_t plane_in_rgb[2] = {0, 1};
  const int64_t channel_in_rgb[1] = {2};
  const int64_t colour_dims[1] = {3};
  const int64_t sum_over[1] = {0};
  static const float deep[3] = {0.01f, 0.07f, 0.20f};
  static const float shallow[3] = {0.10f, 0.45f, 0.66f};
  static const float sky[3] = {0.75f, 0.85f, 1.0f};
  /* Light from the upper left, the viewer straight above. */
  const float light[3] = {-0.45f, -0.55f, 0.70f};
  const float halfway[3] = {-0.24f, -0.29f, 0.93f};
  kiln_computation_t* condition = build_condition(width, height);
  kiln_computation_t* body = build_body(width, height);
  kiln_computation_t* sum = build_sum();
  kiln_computation_t* frame = NULL;
  kiln_builder_t* b = NULL;
  kiln_op_t surface, drops, x, y, dx, dy, bumps, u, previous, parts[3], state, results[2];
  kiln_op_t gx, gy, nx, ny, nz, length, diffuse, specular, level, colour;
  if (condition == NULL || body == NULL || sum == NULL ||
      frames_failed(kiln_builder_create("ripples_frame", &b), "kiln_builder_create")) {
    kiln_computation_destroy(condition);
    kiln_computation_destroy(body);
    kiln_computation_destroy(sum);
    return NULL;
  }
  surface = kiln_op_parameter(b, 0, KILN_TYPE_F32, surface_dims, 2, NULL, "surface");
  drops = kiln_op_parameter(b, 1, KILN_TYPE_F32, drops_dims, 2, NULL, "drops");

  /* The raindrops: a dent with a raised rim per slot, summed over the slots:
   * depth * (1 - r^2 / radius^2) * exp(-r^2 / radius^2). */
  x = kiln_op_iota(b, KILN_TYPE_F32, slot_plane, 3, 2);
  y = kiln_op_iota(b, KILN_TYPE_F32, slot_plane, 3, 1);
  dx = kiln_op_sub(b, x, drop_field(b, drops, 0), slot_dimension, 1);
  dy = kiln_op_sub(b, y, drop_field(b, drops, 1), slot_dimension, 1);
  bumps = kiln_op_div(b, add(b, mul(b, dx, dx), mul(b, dy, dy)),
                      kiln_op_mul(b, drop_field(b, drops, 3), drop_field(b, drops, 3), NULL, 0),
                      slot_dimension, 1);
  bumps = mul(b, sub(b, f32c(b, 1.0f), bumps), kiln_op_exp(b, kiln_op_neg(b, bumps)));
  bumps = kiln_op_mul(b, bumps, drop_field(b, drops, 2), slot_dimension, 1);
  bumps = kiln_op_reduce(b, bumps, f32c(b, 0.0f), sum, sum_over, 1);
  /* A drop starts at rest: it dents u and u_prev alike. */
  u = add(b, rows_of(b, surface, 0, height, width), bumps);
  previous = add(b, rows_of(b, surface, height, height, width), bumps);

  parts[0] = kiln_op_broadcast(b, f32c(b, 0.0f), header_dims, 2);
  parts[1] = u;
  parts[2] = previous;
  state = kiln_op_while(b, condition, body, kiln_op_concat_in_dim(b, parts, 3, 0));
  u = rows_of(b, state, 1, height, width);
  previous = rows_of(b, state, 1 + height, height, width);
  results[0] = rows_of(b, state, 1, 2 * height, width);

  /* Shading: the normal of the surface z = kRelief u. */
  gx = mul(b, sub(b, neighbour(b, u, 1, width, 1), neighbour(b, u, 1, width, -1)), f32c(b, 0.5f * kRelief));
  gy = mul(b, sub(b, neighbour(b, u, 0, height, 1), neighbour(b, u, 0, height, -1)), f32c(b, 0.5f * kRelief));
  length = kiln_op_rsqrt(b, add(b, add(b, mul(b, gx, gx), mul(b, gy, gy)), f32c(b, 1.0f)));
  nx = kiln_op_neg(b, mul(b, gx, length));
  ny = kiln_op_neg(b, mul(b, gy, length));
  nz = length;
  diffuse = add(b, add(b, mul(b, nx, f32c(b, light[0])), mul(b, ny, f32c(b, light[1]))),
                mul(b, nz, f32c(b, light[2])));
  diffuse = kiln_op_max(b, diffuse, f32c(b, 0.0f), NULL, 0);
  specular = add(b, add(b, mul(b, nx, f32c(b, halfway[0])), mul(b, ny, f32c(b, halfway[1]))),
                 mul(b, nz, f32c(b, halfway[2])));
  specular = kiln_op_pow(b, kiln_op_max(b, specular, f32c(b, 0.0f), NULL, 0), f32c(b, 60.0f), NULL, 0);
  /* Deep blue in the troughs and near the viewer (the bottom of the picture),
   * lighter on the crests and towards the far bank. */
  level = add(b, f32c(b, 0.5f), mul(b, f32c(b, 0.5f), kiln_op_tanh(b, mul(b, u, f32c(b, 4.0f)))));
  level = add(b, mul(b, level, f32c(b, 0.45f)),
              mul(b, f32c(b, 0.55f / (float)(height - 1)),
                  sub(b, f32c(b, (float)(height - 1)), kiln_op_iota(b, KILN_TYPE_F32, plane, 2, 0))));
  {
    kiln_op_t level3 = kiln_op_broadcast_in_dim(b, level, rgb_dims, 3, plane_in_rgb, 2);
    kiln_op_t deep3 = kiln_op_constant(b, KILN_TYPE_F32, colour_dims, 1, deep, sizeof(deep));
    kiln_op_t shallow3 = kiln_op_constant(b, KILN_TYPE_F32, colour_dims, 1, shallow, sizeof(shallow));
    kiln_op_t sky3 = kiln_op_constant(b, KILN_TYPE_F32, colour_dims, 1, sky, sizeof(sky));
    kiln_op_t lit = add(b, f32c(b, 0.35f), mul(b, f32c(b, 0.9f), diffuse));
    colour = kiln_op_add(b, kiln_op_mul(b, level3, sub(b, shallow3, deep3), channel_in_rgb, 1), deep3,
                         channel_in_rgb, 1);
    colour = kiln_op_mul(b, colour, lit, plane_in_rgb, 2);
    colour = add(b, colour,
                 kiln_op_mul(b, kiln_op_broadcast_in_dim(b, specular, rgb_dims, 3, plane_in_rgb, 2), sky3,
                             channel_in_rgb, 1));
  }
  colour = kiln_op_clamp(b, f32c(b, 0.0f), add(b, mul(b, colour, f32c(b, 255.0f)), f32c(b, 0.5f)),
                         f32c(b, 255.0f));
  results[1] = kiln_op_convert(b, colour, KILN_TYPE_U8);
  kiln_op_tuple(b, results, 2);
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &frame), "kiln_builder_build(frame)");
  kiln_builder_destroy(b);
  kiln_computation_destroy(condition);
  kiln_computation_destroy(body);
  kiln_computation_destroy(sum);
  return frame;
}

/* --- Main ------------------------------------------------------------------ */

/* When and where the drops fall: frame, x and y as fractions of the pond,
 * depth, radius as a fraction of its width. The schedule repeats every
 * kSchedulePeriod frames. */
typedef struct raindrop_t {
  int frame;
  float x, y, depth, radius;
} raindrop_t;
enum { kSchedulePeriod = 12 };
static const raindrop_t kRaindrops[] = {
    {0, 0.30f, 0.38f, -1.0f, 0.008f}, {0, 0.68f, 0.62f, -0.8f, 0.007f},  {2, 0.55f, 0.22f, -0.9f, 0.008f},
    {4, 0.18f, 0.78f, -1.0f, 0.006f}, {5, 0.82f, 0.30f, -0.7f, 0.006f},  {7, 0.45f, 0.58f, -1.1f, 0.008f},
    {9, 0.66f, 0.84f, -0.8f, 0.007f}, {10, 0.12f, 0.18f, -0.6f, 0.006f}, {10, 0.88f, 0.70f, -0.7f, 0.007f},
};

int main(int argc, char** argv) {
  const int64_t drops_dims[2] = {kDropSlots, 4};
  frames_options_t options;
  kiln_client_t* client = NULL;
  kiln_computation_t* frame = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* surface = NULL;
  unsigned char* rgb = NULL;
  float* zeros = NULL;
  const char* backend = "";
  int status = 1, parsed, i;
  size_t pixels;

  parsed = frames_parse_options(argc, argv, 12, "frames/ripples", &options);
  if (parsed >= 0) return parsed;
  pixels = (size_t)options.width * (size_t)options.height;
  rgb = malloc(pixels * 3);
  zeros = calloc(pixels * 2, sizeof(float));
  if (rgb == NULL || zeros == NULL) goto done;
  client = frames_open_client(options.backend, &backend);
  if (client == NULL) goto done;
  frame = build_frame(options.width, options.height);
  if (frame == NULL) goto done;
  if (frames_failed(kiln_client_compile(client, frame, NULL, &executable), "kiln_client_compile")) goto done;
  if (frames_prepare_directory(options.output_dir) != 0) goto done;
  {
    const int64_t surface_dims[2] = {2 * (int64_t)options.height, options.width};
    if (frames_failed(kiln_client_buffer_from_host(client, KILN_TYPE_F32, surface_dims, 2, NULL, zeros,
                                                   pixels * 2 * sizeof(float), &surface),
                      "kiln_client_buffer_from_host")) {
      goto done;
    }
  }

  for (i = 0; i < options.frames; ++i) {
    float drops[kDropSlots * 4];
    kiln_buffer_t* arguments[2] = {NULL, NULL};
    kiln_buffer_t* results[2] = {NULL, NULL};
    size_t num_results = 0, d;
    int slot = 0, ok;
    char path[4200];
    double start;
    memset(drops, 0, sizeof(drops));
    for (d = 0; d < sizeof(kRaindrops) / sizeof(kRaindrops[0]); ++d) {
      const raindrop_t* drop = &kRaindrops[d];
      if (drop->frame != i % kSchedulePeriod || slot == kDropSlots) continue;
      drops[slot * 4 + 0] = drop->x * (float)(options.width - 1);
      drops[slot * 4 + 1] = drop->y * (float)(options.height - 1);
      drops[slot * 4 + 2] = drop->depth;
      drops[slot * 4 + 3] = drop->radius * (float)options.width + 1.5f;
      ++slot;
    }
    for (; slot < kDropSlots; ++slot) drops[slot * 4 + 3] = 1.0f; /* depth 0: no drop */
    start = frames_now_ms();
    arguments[0] = surface;
    ok = !frames_failed(kiln_client_buffer_from_host(client, KILN_TYPE_F32, drops_dims, 2, NULL, drops,
                                                     sizeof(drops), &arguments[1]),
                        "kiln_client_buffer_from_host") &&
         !frames_failed(kiln_executable_execute(executable, arguments, 2, NULL, results, 2, &num_results),
                        "kiln_executable_execute") &&
         !frames_failed(kiln_buffer_to_host(results[1], rgb, pixels * 3), "kiln_buffer_to_host");
    kiln_buffer_destroy(arguments[1]);
    kiln_buffer_destroy(results[1]);
    if (!ok) {
      kiln_buffer_destroy(results[0]);
      goto done;
    }
    /* The new surface replaces the old one on the device. */
    kiln_buffer_destroy(surface);
    surface = results[0];
    snprintf(path, sizeof(path), "%s/frame_%03d.png", options.output_dir, i);
    printf("%s  backend %s  %dx%d  steps %d-%d  %.1f ms\n", path, backend, options.width, options.height,
           i * kTrips * kStepsPerTrip, (i + 1) * kTrips * kStepsPerTrip, frames_now_ms() - start);
    fflush(stdout);
    if (frames_write_png(path, rgb, options.width, options.height) != 0) goto done;
  }
  status = 0;
done:
  free(zeros);
  free(rgb);
  kiln_buffer_destroy(surface);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(frame);
  kiln_client_destroy(client);
  return status;
}
