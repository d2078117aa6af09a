/* Safetensors files through the C ABI: a file written by hand to the
 * format's description is read back; buffers written by the library read
 * back equal, with their metadata; and each malformed file (truncated, bad
 * JSON, overlapping or holed ranges, wrong sizes, unknown dtypes, names given
 * twice) is refused with its code and a message naming the problem.
 * Exits non-zero when a check fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

static char g_dir[256];

static const char* path_of(const char* name) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  return path;
}

/* Writes an 8-byte little-endian header size, the header, then `data`. */
static const char* write_file(const char* name, const char* header, const void* data, size_t data_size,
                              int64_t header_size_delta) {
  const char* path = path_of(name);
  FILE* file = fopen(path, "wb");
  if (file == NULL) {
    ++g_failures;
    return path;
  }
  const uint64_t size = (uint64_t)((int64_t)strlen(header) + header_size_delta);
  unsigned char size_bytes[8];
  for (int i = 0; i < 8; ++i) size_bytes[i] = (unsigned char)(size >> (8 * i));
  fwrite(size_bytes, 1, 8, file);
  fwrite(header, 1, strlen(header), file);
  if (data_size > 0) fwrite(data, 1, data_size, file);
  fclose(file);
  return path;
}

static void test_reads_a_file_written_to_the_format(kiln_device_t* device) {
  const float values[4] = {1.5f, -2.0f, 3.25f, 0.0f};
  const char header[] =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
      "\"flags\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[16,18]}}  ";
  unsigned char data[18];
  memcpy(data, values, 16);
  data[16] = 1;
  data[17] = 0;
  const char* path = write_file("by_hand.safetensors", header, data, sizeof data, 0);
  kiln_safetensors_t* file = NULL;
  CHECK_OK(kiln_safetensors_open(path, &file));
  if (file == NULL) return;
  size_t count = 0;
  CHECK_OK(kiln_safetensors_tensor_count(file, &count));
  CHECK(count == 2);
  const char* name = NULL;
  CHECK_OK(kiln_safetensors_tensor_name(file, 0, &name));
  CHECK(name != NULL && strcmp(name, "weight") == 0);
  CHECK_OK(kiln_safetensors_tensor_name(file, 1, &name));
  CHECK(name != NULL && strcmp(name, "flags") == 0);
  EXPECT_ERROR(kiln_safetensors_tensor_name(file, 2, &name), KILN_STATUS_OUT_OF_RANGE, "2 tensors");
  const char* format = NULL;
  CHECK_OK(kiln_safetensors_metadata(file, "format", &format));
  CHECK(format != NULL && strcmp(format, "pt") == 0);
  EXPECT_ERROR(kiln_safetensors_metadata(file, "missing", &format), KILN_STATUS_NOT_FOUND, "missing");

  kiln_buffer_t* weight = NULL;
  CHECK_OK(kiln_safetensors_read(file, device, "weight", &weight));
  float got[4] = {0, 0, 0, 0};
  CHECK_OK(kiln_buffer_to_host(weight, got, sizeof got));
  CHECK(memcmp(got, values, sizeof got) == 0);
  int64_t dims[2] = {0, 0};
  CHECK_OK(kiln_buffer_dimensions(weight, dims, 2));
  CHECK(dims[0] == 2 && dims[1] == 2);
  kiln_buffer_t* flags = NULL;
  CHECK_OK(kiln_safetensors_read(file, device, "flags", &flags));
  kiln_element_type_t type = KILN_TYPE_INVALID;
  CHECK_OK(kiln_buffer_element_type(flags, &type));
  CHECK(type == KILN_TYPE_PRED);
  kiln_buffer_t* none = NULL;
  EXPECT_ERROR(kiln_safetensors_read(file, device, "bias", &none), KILN_STATUS_NOT_FOUND, "weight, flags");
  CHECK(none == NULL);
  kiln_buffer_destroy(weight);
  kiln_buffer_destroy(flags);
  kiln_safetensors_destroy(file);
}

static void test_round_trip(kiln_client_t* client, kiln_device_t* device) {
  const float matrix[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {2, 3};
  const int64_t count = -7;
  const uint16_t bf16[2] = {0x3f80, 0xc000};
  const int64_t bf16_dims[1] = {2};
  kiln_buffer_t* buffers[3] = {NULL, NULL, NULL};
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 2, NULL, matrix, sizeof matrix, &buffers[0]));
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_S64, NULL, 0, NULL, &count, sizeof count, &buffers[1]));
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_BF16, bf16_dims, 1, NULL, bf16, sizeof bf16,
                                        &buffers[2]));
  const char* names[3] = {"layer.weight", "step", "scale"};
  const char* keys[1] = {"written_by"};
  const char* values[1] = {"kiln"};
  const char* path = path_of("round_trip.safetensors");
  CHECK_OK(kiln_safetensors_write_file(path, names, buffers, 3, keys, values, 1));

  kiln_safetensors_t* file = NULL;
  CHECK_OK(kiln_safetensors_open(path, &file));
  if (file != NULL) {
    size_t n = 0;
    CHECK_OK(kiln_safetensors_tensor_count(file, &n));
    CHECK(n == 3);
    const char* value = NULL;
    CHECK_OK(kiln_safetensors_metadata(file, "written_by", &value));
    CHECK(value != NULL && strcmp(value, "kiln") == 0);
    kiln_buffer_t* back = NULL;
    float got[6];
    CHECK_OK(kiln_safetensors_read(file, device, "layer.weight", &back));
    CHECK_OK(kiln_buffer_to_host(back, got, sizeof got));
    CHECK(memcmp(got, matrix, sizeof matrix) == 0);
    kiln_buffer_destroy(back);
    int64_t step = 0;
    CHECK_OK(kiln_safetensors_read(file, device, "step", &back));
    size_t rank = 9;
    CHECK_OK(kiln_buffer_rank(back, &rank));
    CHECK(rank == 0);
    CHECK_OK(kiln_buffer_to_host(back, &step, sizeof step));
    CHECK(step == -7);
    kiln_buffer_destroy(back);
    uint16_t scale[2];
    CHECK_OK(kiln_safetensors_read(file, device, "scale", &back));
    CHECK_OK(kiln_buffer_to_host(back, scale, sizeof scale));
    CHECK(scale[0] == 0x3f80 && scale[1] == 0xc000);
    kiln_buffer_destroy(back);
    kiln_safetensors_destroy(file);
  }

  /* What the format cannot hold, and bad arguments. */
  const double complex128[2] = {1, 2};
  kiln_buffer_t* c128 = NULL;
  CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_C128, NULL, 0, NULL, complex128, sizeof complex128,
                                        &c128));
  const char* c128_name[1] = {"z"};
  EXPECT_ERROR(kiln_safetensors_write_file(path_of("c128.safetensors"), c128_name, &c128, 1, NULL, NULL, 0),
               KILN_STATUS_INVALID_ARGUMENT, "no dtype for c128");
  const char* twice[2] = {"a", "a"};
  EXPECT_ERROR(kiln_safetensors_write_file(path_of("twice.safetensors"), twice, buffers, 2, NULL, NULL, 0),
               KILN_STATUS_INVALID_ARGUMENT, "given twice");
  EXPECT_ERROR(
      kiln_safetensors_write_file("/nonexistent-dir/x.safetensors", names, buffers, 1, NULL, NULL, 0),
      KILN_STATUS_NOT_FOUND, "cannot create");
  EXPECT_ERROR(kiln_safetensors_write_file(path, NULL, buffers, 1, NULL, NULL, 0),
               KILN_STATUS_INVALID_ARGUMENT, "names");
  const char* not_utf8[1] = {"\xff"};
  EXPECT_ERROR(kiln_safetensors_write_file(path_of("utf8.safetensors"), not_utf8, buffers, 1, NULL, NULL, 0),
               KILN_STATUS_INVALID_ARGUMENT, "not valid UTF-8");
  const char* keys_twice[2] = {"k", "k"};
  const char* two_values[2] = {"1", "2"};
  EXPECT_ERROR(
      kiln_safetensors_write_file(path_of("meta.safetensors"), names, buffers, 1, keys_twice, two_values, 2),
      KILN_STATUS_INVALID_ARGUMENT, "given twice");
  kiln_buffer_destroy(c128);
  for (int i = 0; i < 3; ++i) kiln_buffer_destroy(buffers[i]);
}

static void expect_refused(const char* name, const char* header, size_t data_size, int64_t delta,
                           kiln_status_code_t code, const char* needle, int line) {
  static const unsigned char zeros[64] = {0};
  const char* path = write_file(name, header, zeros, data_size, delta);
  kiln_safetensors_t* file = NULL;
  expect_error(kiln_safetensors_open(path, &file), code, needle, name, line);
  if (file != NULL) {
    fprintf(stderr, "line %d: %s opened\n", line, name);
    ++g_failures;
    kiln_safetensors_destroy(file);
  }
}
#define EXPECT_REFUSED(name, header, data_size, delta, code, needle) \
  expect_refused((name), (header), (data_size), (delta), (code), (needle), __LINE__)

static void test_malformed_files(void) {
  EXPECT_REFUSED("truncated_header.safetensors", "{\"a\":{}}", 0, 100, KILN_STATUS_DATA_LOSS,
                 "header declares");
  EXPECT_REFUSED("not_json.safetensors", "{\"a\": nope}", 0, 0, KILN_STATUS_INVALID_ARGUMENT,
                 "not valid JSON");
  EXPECT_REFUSED("not_object.safetensors", "[1, 2]", 0, 0, KILN_STATUS_INVALID_ARGUMENT, "start with '{'");
  EXPECT_REFUSED("overlap.safetensors",
                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                 12, 0, KILN_STATUS_INVALID_ARGUMENT, "neither overlap nor leave holes");
  EXPECT_REFUSED("hole.safetensors",
                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                 12, 0, KILN_STATUS_INVALID_ARGUMENT, "'b' starts at byte 8");
  EXPECT_REFUSED("wrong_size.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
                 8, 0, KILN_STATUS_INVALID_ARGUMENT, "its shape needs 12");
  EXPECT_REFUSED("short_data.safetensors",
                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, 0,
                 KILN_STATUS_INVALID_ARGUMENT, "the file holds 8");
  EXPECT_REFUSED("unknown_dtype.safetensors",
                 "{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, 0,
                 KILN_STATUS_INVALID_ARGUMENT, "F8_E4M3");
  EXPECT_REFUSED("negative_dim.safetensors",
                 "{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0, 0,
                 KILN_STATUS_INVALID_ARGUMENT, "non-negative");
  EXPECT_REFUSED("twice.safetensors",
                 "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                 "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
                 2, 0, KILN_STATUS_INVALID_ARGUMENT, "'a' twice");
  EXPECT_REFUSED("huge_header.safetensors", "{}", 0, (int64_t)1 << 40, KILN_STATUS_INVALID_ARGUMENT,
                 "at most 104857600");
  /* Shorter than the size field. */
  const char* path = path_of("tiny.safetensors");
  FILE* tiny = fopen(path, "wb");
  if (tiny != NULL) {
    fputs("abc", tiny);
    fclose(tiny);
  }
  kiln_safetensors_t* file = NULL;
  EXPECT_ERROR(kiln_safetensors_open(path, &file), KILN_STATUS_DATA_LOSS, "8 bytes of header size");
  EXPECT_ERROR(kiln_safetensors_open(path_of("missing.safetensors"), &file), KILN_STATUS_NOT_FOUND,
               "cannot open");
  EXPECT_ERROR(kiln_safetensors_open(NULL, &file), KILN_STATUS_INVALID_ARGUMENT, "path");
  CHECK(file == NULL);
  kiln_safetensors_destroy(NULL);
}

int main(void) {
  const char* tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/kiln_safetensors_XXXXXX", tmp != NULL ? tmp : "/tmp");
  if (mkdtemp(g_dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  kiln_client_t* client = NULL;
  CHECK_OK(kiln_client_create(NULL, &client));
  if (client == NULL) return 1;
  kiln_device_t* device = NULL;
  CHECK_OK(kiln_client_device(client, 0, &device));
  test_reads_a_file_written_to_the_format(device);
  test_round_trip(client, device);
  test_malformed_files();
  kiln_client_destroy(client);
  char command[600];
  snprintf(command, sizeof command, "rm -rf '%s'", g_dir);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  if (g_failures != 0) {
    fprintf(stderr, "capi_safetensors_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_safetensors_test: safetensors files read, write and refuse what is malformed\n");
  return 0;
}
