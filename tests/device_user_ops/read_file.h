/* Reads a whole file for the device-kernel tests (the SPIR-V and PTX that
 * CMake names on their command line). */
#ifndef KILN_TESTS_DEVICE_USER_OPS_READ_FILE_H_
#define KILN_TESTS_DEVICE_USER_OPS_READ_FILE_H_

#include <stdio.h>
#include <stdlib.h>

/* The bytes of `path` (malloc'ed, caller frees) and their count; NULL when
 * it cannot be read. */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  unsigned char* data = NULL;
  long length;
  if (file == NULL) return NULL;
  if (fseek(file, 0, SEEK_END) == 0 && (length = ftell(file)) > 0 && fseek(file, 0, SEEK_SET) == 0) {
    data = (unsigned char*)malloc((size_t)length);
    if (data != NULL && fread(data, 1, (size_t)length, file) != (size_t)length) {
      free(data);
      data = NULL;
    }
    *size = (size_t)length;
  }
  fclose(file);
  return data;
}

#endif /* KILN_TESTS_DEVICE_USER_OPS_READ_FILE_H_ */
