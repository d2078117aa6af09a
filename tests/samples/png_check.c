/* Checks the frames a picture sample wrote:
 *
 *   kiln_png_check DIR FRAMES WIDTH HEIGHT [REFERENCE_DIR MAX_FRACTION]
 *
 * DIR/frame_000.png ... must exist, be WIDTHxHEIGHT and hold more than one
 * colour; with a reference directory, at most MAX_FRACTION of the pixels may
 * differ from the reference's by more than 2 in some channel (a Mandelbrot
 * pixel on the edge of the set may take another iteration count on another
 * backend). Prints one line per frame; exits non-zero when a check fails. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads `path` as 8-bit RGB; returns the pixels (free them) or NULL. */
static unsigned char* read_rgb(const char* path, unsigned* width, unsigned* height) {
  png_image image;
  unsigned char* pixels;
  memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path)) {
    fprintf(stderr, "%s: %s\n", path, image.message);
    return NULL;
  }
  image.format = PNG_FORMAT_RGB;
  pixels = malloc(PNG_IMAGE_SIZE(image));
  if (pixels == NULL || !png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
    fprintf(stderr, "%s: %s\n", path, image.message);
    png_image_free(&image);
    free(pixels);
    return NULL;
  }
  *width = image.width;
  *height = image.height;
  return pixels;
}

static int check_frame(const char* dir, int frame, unsigned want_width, unsigned want_height,
                       const char* reference_dir, double max_fraction) {
  char path[4096];
  unsigned width = 0, height = 0, ref_width = 0, ref_height = 0;
  unsigned char* pixels;
  unsigned char* reference = NULL;
  size_t i, count, colours = 1, differing = 0;
  int ok = 1;
  snprintf(path, sizeof(path), "%s/frame_%03d.png", dir, frame);
  pixels = read_rgb(path, &width, &height);
  if (pixels == NULL) return 0;
  if (width != want_width || height != want_height) {
    fprintf(stderr, "%s: %ux%u, want %ux%u\n", path, width, height, want_width, want_height);
    free(pixels);
    return 0;
  }
  count = (size_t)width * height;
  for (i = 1; i < count && colours == 1; ++i) {
    if (memcmp(pixels, pixels + i * 3, 3) != 0) colours = 2;
  }
  if (colours == 1) {
    fprintf(stderr, "%s: one colour only\n", path);
    ok = 0;
  }
  if (ok && reference_dir != NULL) {
    char reference_path[4096];
    snprintf(reference_path, sizeof(reference_path), "%s/frame_%03d.png", reference_dir, frame);
    reference = read_rgb(reference_path, &ref_width, &ref_height);
    if (reference == NULL || ref_width != width || ref_height != height) {
      fprintf(stderr, "%s: missing, or not %ux%u\n", reference_path, width, height);
      ok = 0;
    } else {
      for (i = 0; i < count; ++i) {
        int c;
        for (c = 0; c < 3; ++c) {
          if (abs((int)pixels[i * 3 + c] - (int)reference[i * 3 + c]) > 2) {
            ++differing;
            break;
          }
        }
      }
      if ((double)differing > max_fraction * (double)count) {
        fprintf(stderr, "%s: %zu of %zu pixels differ from %s (at most %g allowed)\n", path, differing, count,
                reference_path, max_fraction);
        ok = 0;
      }
    }
  }
  if (ok) {
    printf("%s: %ux%u ok", path, width, height);
    if (reference_dir != NULL) printf(", %zu of %zu pixels differ from the reference", differing, count);
    printf("\n");
  }
  free(reference);
  free(pixels);
  return ok;
}

int main(int argc, char** argv) {
  int frames, frame, ok = 1;
  if (argc != 5 && argc != 7) {
    fprintf(stderr, "usage: %s DIR FRAMES WIDTH HEIGHT [REFERENCE_DIR MAX_FRACTION]\n", argv[0]);
    return 2;
  }
  frames = atoi(argv[2]);
  if (frames < 1) {
    fprintf(stderr, "FRAMES must be at least 1\n");
    return 2;
  }
  for (frame = 0; frame < frames; ++frame) {
    ok &= check_frame(argv[1], frame, (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
                      argc == 7 ? argv[5] : NULL, argc == 7 ? atof(argv[6]) : 0.0);
  }
  return ok ? 0 : 1;
}
