/* A zoom into the Mandelbrot set, one Kiln execution per frame, written as PNG
 * files. The computation does all the work: for every pixel it iterates
 * z = z^2 + c in a while loop (16 iterations unrolled per trip), keeps the
 * escape count, turns it into a smooth colouring value and maps that through a
 * cosine palette to RGB bytes; the host only writes the bytes to a PNG.
 *
 *   kiln_sample_mandelbrot [--backend NAME] [--frames N] [--size WxH] [--output-dir DIR]
 *
 * It runs on "vulkan" unless --backend names another backend; when vulkan
 * cannot be used it says why in one line and runs on "cpu". Every status is
 * checked; on failure the sample prints the message and exits non-zero.
 * The host side it shares with the other picture sample (options, client,
 * output directory, PNG files, clock) is in frames.h.
 *
 * The iteration runs in f64 (f32 runs out of digits after a zoom of about
 * 1000x). The C API has no tuple parameters, so the loop state is one f64 array of
 * 1 + 5H rows of W: a header row holding the trip counter and the trip limit,
 * then the planes zr, zi, n (iterations done), cr and ci. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frames.h"
#include "kiln/kiln.h"

/* --- The computation ------------------------------------------------------- */

enum { kUnroll = 16 };
static const double kBailout = 256.0; /* |z|^2 past which a point has escaped */

static kiln_op_t f32c(kiln_builder_t* b, float value) { return kiln_op_constant_f32(b, value); }
static kiln_op_t f64c(kiln_builder_t* b, double value) { return kiln_op_constant_f64(b, value); }
static kiln_op_t add(kiln_builder_t* b, kiln_op_t x, kiln_op_t y) { return kiln_op_add(b, x, y, NULL, 0); }
static kiln_op_t sub(kiln_builder_t* b, kiln_op_t x, kiln_op_t y) { return kiln_op_sub(b, x, y, NULL, 0); }
static kiln_op_t mul(kiln_builder_t* b, kiln_op_t x, kiln_op_t y) { return kiln_op_mul(b, x, y, NULL, 0); }

/* Rows [row, row + rows) of a rank-2 array `width` wide. */
static kiln_op_t rows_of(kiln_builder_t* b, kiln_op_t x, int64_t row, int64_t rows, int64_t width) {
  const int64_t start[2] = {row, 0}, limit[2] = {row + rows, width};
  return kiln_op_slice(b, x, start, limit, NULL, 2);
}

/* Element [0, column] of a rank-2 array as a scalar. */
static kiln_op_t header_value(kiln_builder_t* b, kiln_op_t state, int64_t column) {
  const int64_t start[2] = {0, column}, limit[2] = {1, column + 1};
  return kiln_op_reshape(b, kiln_op_slice(b, state, start, limit, NULL, 2), NULL, 0);
}

/* condition(state) = trip < trip limit */
static kiln_computation_t* build_condition(int64_t width, int64_t height) {
  const int64_t dims[2] = {1 + 5 * height, width};
  kiln_builder_t* b = NULL;
  kiln_computation_t* condition = NULL;
  kiln_op_t state;
  if (frames_failed(kiln_builder_create("keep_iterating", &b), "kiln_builder_create")) return NULL;
  state = kiln_op_parameter(b, 0, KILN_TYPE_F64, dims, 2, NULL, "state");
  kiln_op_lt(b, header_value(b, state, 0), header_value(b, state, 1), NULL, 0);
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &condition), "kiln_builder_build(condition)");
  kiln_builder_destroy(b);
  return condition;
}

/* body(state): kUnroll iterations of z = z^2 + c on the points that have not
 * escaped yet, counting them in n; the trip counter goes up by one. */
static kiln_computation_t* build_body(int64_t width, int64_t height) {
  const int64_t dims[2] = {1 + 5 * height, width};
  const int64_t header_dims[2] = {1, width};
  kiln_builder_t* b = NULL;
  kiln_computation_t* body = NULL;
  kiln_op_t state, header, zr, zi, n, cr, ci, parts[6];
  int i;
  if (frames_failed(kiln_builder_create("iterate", &b), "kiln_builder_create")) return NULL;
  state = kiln_op_parameter(b, 0, KILN_TYPE_F64, dims, 2, NULL, "state");
  header = rows_of(b, state, 0, 1, width);
  zr = rows_of(b, state, 1, height, width);
  zi = rows_of(b, state, 1 + height, height, width);
  n = rows_of(b, state, 1 + 2 * height, height, width);
  cr = rows_of(b, state, 1 + 3 * height, height, width);
  ci = rows_of(b, state, 1 + 4 * height, height, width);
  for (i = 0; i < kUnroll; ++i) {
    kiln_op_t zr2 = mul(b, zr, zr), zi2 = mul(b, zi, zi);
    kiln_op_t active = kiln_op_le(b, add(b, zr2, zi2), f64c(b, kBailout), NULL, 0);
    kiln_op_t next_zr = add(b, sub(b, zr2, zi2), cr);
    kiln_op_t next_zi = add(b, mul(b, f64c(b, 2.0), mul(b, zr, zi)), ci);
    zr = kiln_op_select(b, active, next_zr, zr);
    zi = kiln_op_select(b, active, next_zi, zi);
    n = add(b, n, kiln_op_convert(b, active, KILN_TYPE_F64));
  }
  /* header + [1, 0, 0, ...]: one more trip done */
  parts[0] = add(b, header,
                 kiln_op_convert(b,
                                 kiln_op_eq(b, kiln_op_iota(b, KILN_TYPE_S32, header_dims, 2, 1),
                                            kiln_op_constant_s32(b, 0), NULL, 0),
                                 KILN_TYPE_F64));
  parts[1] = zr;
  parts[2] = zi;
  parts[3] = n;
  parts[4] = cr;
  parts[5] = ci;
  kiln_op_concat_in_dim(b, parts, 6, 0);
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &body), "kiln_builder_build(body)");
  kiln_builder_destroy(b);
  return body;
}

/* frame(view) -> u8[height, width, 3], view = (centre x, centre y, pixel size,
 * trips of kUnroll iterations). */
static kiln_computation_t* build_frame(int64_t width, int64_t height) {
  const int64_t view_dims[1] = {4};
  const int64_t plane[2] = {height, width};
  const int64_t pixel[1] = {1};
  const int64_t rgb_dims[3] = {height, width, 3};
  const int64_t plane_in_rgb[2] = {0, 1};
  const int64_t channel_in_rgb[1] = {2};
  const int64_t palette_dims[1] = {3};
  /* The cosine palette 0.5 + 0.5 cos(2 pi (t * frequency + phase)) per channel. */
  static const float frequency[3] = {1.0f, 1.0f, 1.0f};
  static const float phase[3] = {0.0f, 0.10f, 0.20f};
  kiln_computation_t* condition = build_condition(width, height);
  kiln_computation_t* body = build_body(width, height);
  kiln_computation_t* frame = NULL;
  kiln_builder_t* b = NULL;
  kiln_op_t view, cx, cy, size, trips, x, y, zero_plane, zero1, header_parts[3], parts[6], state;
  kiln_op_t zr, zi, n, m, escaped, smooth, t, argument, colour;
  if (condition == NULL || body == NULL ||
      frames_failed(kiln_builder_create("mandelbrot_frame", &b), "kiln_builder_create")) {
    kiln_computation_destroy(condition);
    kiln_computation_destroy(body);
    return NULL;
  }
  view = kiln_op_parameter(b, 0, KILN_TYPE_F64, view_dims, 1, NULL, "view");
  cx = kiln_op_reshape(b, kiln_op_slice_in_dim(b, view, 0, 1, 1, 0), NULL, 0);
  cy = kiln_op_reshape(b, kiln_op_slice_in_dim(b, view, 1, 2, 1, 0), NULL, 0);
  size = kiln_op_reshape(b, kiln_op_slice_in_dim(b, view, 2, 3, 1, 0), NULL, 0);
  trips = kiln_op_slice_in_dim(b, view, 3, 4, 1, 0);
  /* c for each pixel: x to the right, y up, centred on (cx, cy) */
  x = sub(b, kiln_op_iota(b, KILN_TYPE_F64, plane, 2, 1), f64c(b, 0.5 * (double)(width - 1)));
  y = sub(b, f64c(b, 0.5 * (double)(height - 1)), kiln_op_iota(b, KILN_TYPE_F64, plane, 2, 0));
  zero_plane = kiln_op_broadcast(b, f64c(b, 0.0), plane, 2);
  zero1 = kiln_op_broadcast(b, f64c(b, 0.0), pixel, 1);
  {
    const int64_t rest[2] = {1, width - 2}, one[2] = {1, 1};
    header_parts[0] = kiln_op_reshape(b, zero1, one, 2);
    header_parts[1] = kiln_op_reshape(b, trips, one, 2);
    header_parts[2] = kiln_op_broadcast(b, f64c(b, 0.0), rest, 2);
  }
  parts[0] = kiln_op_concat_in_dim(b, header_parts, 3, 1);
  parts[1] = zero_plane;
  parts[2] = zero_plane;
  parts[3] = zero_plane;
  parts[4] = add(b, cx, mul(b, x, size));
  parts[5] = add(b, cy, mul(b, y, size));
  state = kiln_op_while(b, condition, body, kiln_op_concat_in_dim(b, parts, 6, 0));
  zr = rows_of(b, state, 1, height, width);
  zi = rows_of(b, state, 1 + height, height, width);
  n = rows_of(b, state, 1 + 2 * height, height, width);
  /* Smooth iteration count, in f32: n + 1 - log2(log2 |z|), with |z|^2 = m. */
  m = add(b, mul(b, zr, zr), mul(b, zi, zi));
  escaped = kiln_op_gt(b, m, f64c(b, kBailout), NULL, 0);
  m = kiln_op_convert(b, kiln_op_max(b, m, f64c(b, kBailout), NULL, 0), KILN_TYPE_F32);
  smooth = sub(b, add(b, kiln_op_convert(b, n, KILN_TYPE_F32), f32c(b, 1.0f)),
               mul(b, kiln_op_log(b, mul(b, kiln_op_log(b, m), f32c(b, (float)(0.5 / 0.69314718055994531)))),
                   f32c(b, (float)(1.0 / 0.69314718055994531))));
  smooth = kiln_op_max(b, smooth, f32c(b, 0.0f), NULL, 0);
  /* Palette position: slow bands that stay readable as the counts grow. */
  t = mul(b, kiln_op_sqrt(b, smooth), f32c(b, 0.35f));
  argument = kiln_op_add(
      b,
      kiln_op_mul(b, kiln_op_broadcast_in_dim(b, t, rgb_dims, 3, plane_in_rgb, 2),
                  kiln_op_constant(b, KILN_TYPE_F32, palette_dims, 1, frequency, sizeof(frequency)),
                  channel_in_rgb, 1),
      kiln_op_constant(b, KILN_TYPE_F32, palette_dims, 1, phase, sizeof(phase)), channel_in_rgb, 1);
  colour =
      add(b, f32c(b, 0.5f), mul(b, f32c(b, 0.5f), kiln_op_cos(b, mul(b, argument, f32c(b, 6.2831853f)))));
  /* Points that never escaped are black. */
  colour = kiln_op_select(b, kiln_op_broadcast_in_dim(b, escaped, rgb_dims, 3, plane_in_rgb, 2), colour,
                          kiln_op_broadcast(b, f32c(b, 0.0f), rgb_dims, 3));
  colour = kiln_op_clamp(b, f32c(b, 0.0f), add(b, mul(b, colour, f32c(b, 255.0f)), f32c(b, 0.5f)),
                         f32c(b, 255.0f));
  kiln_op_convert(b, colour, KILN_TYPE_U8);
  frames_failed(kiln_builder_build(b, KILN_OP_INVALID, &frame), "kiln_builder_build(frame)");
  kiln_builder_destroy(b);
  kiln_computation_destroy(condition);
  kiln_computation_destroy(body);
  return frame;
}

/* --- Main ------------------------------------------------------------------ */

int main(int argc, char** argv) {
  /* Seahorse valley, a spiral on the edge of the main cardioid. */
  const double centre_x = -0.743643887, centre_y = 0.131825904;
  const double start_width = 3.2, zoom_per_frame = 3.5;
  const int64_t view_dims[1] = {4};
  frames_options_t options;
  kiln_client_t* client = NULL;
  kiln_computation_t* frame = NULL;
  kiln_executable_t* executable = NULL;
  unsigned char* rgb = NULL;
  const char* backend = "";
  int status = 1, parsed, i;

  parsed = frames_parse_options(argc, argv, 8, "frames/mandelbrot", &options);
  if (parsed >= 0) return parsed;
  rgb = malloc((size_t)options.width * (size_t)options.height * 3);
  if (rgb == NULL) return 1;
  client = frames_open_client(options.backend, &backend);
  if (client == NULL) goto done;
  frame = build_frame(options.width, options.height);
  if (frame == NULL) goto done;
  if (frames_failed(kiln_client_compile(client, frame, NULL, &executable), "kiln_client_compile")) goto done;
  if (frames_prepare_directory(options.output_dir) != 0) goto done;

  for (i = 0; i < options.frames; ++i) {
    const double width = start_width / pow(zoom_per_frame, i);
    const int iterations = 192 + 96 * i;
    double view[4];
    kiln_buffer_t* input = NULL;
    kiln_buffer_t* result = NULL;
    size_t num_results = 0;
    char path[4200];
    double start;
    int ok;
    view[0] = centre_x;
    view[1] = centre_y;
    view[2] = width / options.width;
    view[3] = (iterations + kUnroll - 1) / kUnroll;
    start = frames_now_ms();
    ok = !frames_failed(kiln_client_buffer_from_host(client, KILN_TYPE_F64, view_dims, 1, NULL, view,
                                                     sizeof(view), &input),
                        "kiln_client_buffer_from_host") &&
         !frames_failed(kiln_executable_execute(executable, &input, 1, NULL, &result, 1, &num_results),
                        "kiln_executable_execute") &&
         !frames_failed(kiln_buffer_to_host(result, rgb, (size_t)options.width * (size_t)options.height * 3),
                        "kiln_buffer_to_host");
    kiln_buffer_destroy(result);
    kiln_buffer_destroy(input);
    if (!ok) goto done;
    snprintf(path, sizeof(path), "%s/frame_%03d.png", options.output_dir, i);
    printf("%s  backend %s  %dx%d  zoom %.0fx  %d iterations  %.1f ms\n", path, backend, options.width,
           options.height, start_width / width, (int)view[3] * kUnroll, frames_now_ms() - start);
    fflush(stdout);
    if (frames_write_png(path, rgb, options.width, options.height) != 0) goto done;
  }
  status = 0;
done:
  free(rgb);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(frame);
  kiln_client_destroy(client);
  return status;
}
