/* The host side the picture samples share; see frames.h. */
#define _POSIX_C_SOURCE 200809L
#include "frames.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int frames_failed(kiln_status_t* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s failed: %s: %s\n", what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_destroy(status);
  return 1;
}

/* --- Options --------------------------------------------------------------- */

static void usage(const char* program) {
  fprintf(stderr, "usage: %s [--backend NAME] [--frames N] [--size WxH] [--output-dir DIR]\n", program);
}

int frames_parse_options(int argc, char** argv, int default_frames, const char* default_output_dir,
                         frames_options_t* options) {
  int i;
  options->backend = NULL;
  options->frames = default_frames;
  options->width = 512;
  options->height = 384;
  options->output_dir = default_output_dir;
  /* Every option but --help takes a value: the loop steps over both. */
  for (i = 1; i < argc; i += 2) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(argv[0]);
      return 0;
    }
    if (value == NULL) {
      usage(argv[0]);
      return 2;
    }
    if (strcmp(argv[i], "--backend") == 0) {
      options->backend = value;
    } else if (strcmp(argv[i], "--frames") == 0) {
      options->frames = atoi(value);
      if (options->frames < 1 || options->frames > 1000) {
        fprintf(stderr, "--frames wants 1 to 1000, not %s\n", value);
        return 2;
      }
    } else if (strcmp(argv[i], "--size") == 0) {
      if (sscanf(value, "%dx%d", &options->width, &options->height) != 2 || options->width < 8 ||
          options->height < 8 || options->width > 8192 || options->height > 8192) {
        fprintf(stderr, "--size wants WxH with sides from 8 to 8192, not %s\n", value);
        return 2;
      }
    } else if (strcmp(argv[i], "--output-dir") == 0) {
      options->output_dir = value;
    } else {
      usage(argv[0]);
      return 2;
    }
  }
  return -1;
}

/* --- Client ---------------------------------------------------------------- */

kiln_client_t* frames_open_client(const char* backend, const char** backend_name) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_status_t* status;
  options.backend = backend != NULL ? backend : "vulkan";
  status = kiln_client_create(&options, &client);
  if (status != NULL && backend == NULL) {
    printf("vulkan unavailable (%s: %s); using cpu\n", kiln_status_code_name(kiln_status_code(status)),
           kiln_status_message(status));
    kiln_status_destroy(status);
    options.backend = "cpu";
    status = kiln_client_create(&options, &client);
  }
  if (frames_failed(status, "kiln_client_create")) return NULL;
  if (frames_failed(kiln_client_backend_name(client, backend_name), "kiln_client_backend_name")) {
    kiln_client_destroy(client);
    return NULL;
  }
  return client;
}

/* --- Directories, PNG, clock ----------------------------------------------- */

int frames_prepare_directory(const char* path) {
  char buffer[4096];
  size_t i, length = strlen(path);
  if (length == 0 || length >= sizeof(buffer)) {
    fprintf(stderr, "cannot create directory %s: the path is empty or too long\n", path);
    return -1;
  }
  memcpy(buffer, path, length + 1);
  for (i = 1; i <= length; ++i) {
    if (buffer[i] == '/' || buffer[i] == '\0') {
      char saved = buffer[i];
      buffer[i] = '\0';
      if (mkdir(buffer, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create directory %s: %s\n", buffer, strerror(errno));
        return -1;
      }
      buffer[i] = saved;
    }
  }
  return 0;
}

int frames_write_png(const char* path, const unsigned char* rgb, int width, int height) {
  FILE* file = fopen(path, "wb");
  png_structp png = NULL;
  png_infop info = NULL;
  int row;
  if (file == NULL) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  if (png != NULL) info = png_create_info_struct(png);
  if (info == NULL || setjmp(png_jmpbuf(png))) {
    fprintf(stderr, "libpng failed to write %s\n", path);
    png_destroy_write_struct(&png, &info);
    fclose(file);
    return -1;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (row = 0; row < height; ++row) png_write_row(png, rgb + (size_t)row * (size_t)width * 3);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  if (fclose(file) != 0) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

double frames_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}
