/* What the picture samples (mandelbrot.c, ripples.c) share: their options,
 * the client (vulkan unless named, else cpu), the output directory, PNG
 * files, a clock and status reporting. Each sample keeps only its own
 * computation and the loop that renders its frames. */
#ifndef KILN_SAMPLES_FRAMES_H_
#define KILN_SAMPLES_FRAMES_H_

#include "kiln/kiln.h"

/* The command line of a picture sample:
 *   [--backend NAME] [--frames N] [--size WxH] [--output-dir DIR] */
typedef struct frames_options_t {
  const char* backend; /* NULL: vulkan, falling back to cpu */
  int frames;          /* 1 to 1000 */
  int width;           /* 8 to 8192 */
  int height;          /* 8 to 8192 */
  const char* output_dir;
} frames_options_t;

/* Prints and frees a failed status as "`what` failed: CODE: message" on
 * stderr; returns 1 when `status` is a failure, 0 when it is NULL. */
int frames_failed(kiln_status_t* status, const char* what);

/* Fills `options` from argv, starting from `default_frames` frames of
 * 512x384 into `default_output_dir`. Returns -1 when the sample should go on,
 * else the status main should exit with: 0 after --help (the usage printed),
 * 2 for a bad command line (what is wrong printed on stderr). */
int frames_parse_options(int argc, char** argv, int default_frames, const char* default_output_dir,
                         frames_options_t* options);

/* A client for `backend`. When it is NULL: vulkan, or when vulkan cannot be
 * used, cpu after a line on stdout saying why. A named backend never falls
 * back. Sets *backend_name to the name of the backend the client runs on
 * (valid while the client lives). Returns NULL, the failure printed, when
 * there is no client. */
kiln_client_t* frames_open_client(const char* backend, const char** backend_name);

/* Creates `path` and the directories above it as needed (mkdir -p); returns
 * 0 on success, else -1 with the reason printed. */
int frames_prepare_directory(const char* path);

/* Writes `height` rows of `width` 8-bit RGB pixels (3 bytes each, no padding)
 * to the PNG file `path`; returns 0 on success, else -1 with the reason
 * printed. */
int frames_write_png(const char* path, const unsigned char* rgb, int width, int height);

/* Milliseconds on a monotonic clock, for timing frames. */
double frames_now_ms(void);

#endif /* KILN_SAMPLES_FRAMES_H_ */
