/* Kiln loaded at run time with dlopen, without linking libkiln: the program
 * looks up each function it calls with dlsym, typed with the `_fn`
 * function-pointer types of kiln.h, then builds 2*x + y with the builder and
 * runs it on the default backend.
 *
 *   kiln_sample_dlopen [PATH/TO/libkiln.so.N]
 *
 * Without an argument it loads KILN_LIBRARY_SONAME ("libkiln.so.0") from the
 * dynamic loader's search path (LD_LIBRARY_PATH, then the system's). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "kiln/kiln.h"

/* The functions this program calls: each becomes a field of `kiln_api`
 * holding a pointer of the function's `_fn` type. */
/* clang-format off */
#define SAMPLE_FUNCTIONS(X)                                                                   \
  X(version) X(status_code) X(status_code_name) X(status_message) X(status_destroy)           \
  X(client_create) X(client_destroy) X(client_backend_name) X(builder_create)                 \
  X(builder_destroy) X(builder_build) X(op_parameter) X(op_constant_f32) X(op_mul) X(op_add)  \
  X(computation_destroy) X(client_compile) X(executable_destroy) X(client_buffer_from_host)   \
  X(buffer_destroy) X(executable_execute) X(buffer_to_host)
/* clang-format on */

#define DECLARE_FIELD(name) kiln_##name##_fn name;
typedef struct {
  SAMPLE_FUNCTIONS(DECLARE_FIELD)
} kiln_api;

/* Stores the address of `symbol` in the function pointer at `field`. POSIX
 * guarantees that dlsym's void* converts to a function pointer; memcpy does the
 * conversion without a cast that ISO C would warn about. */
static int look_up(void* library, const char* symbol, void* field) {
  void* address = dlsym(library, symbol);
  if (address == NULL) {
    fprintf(stderr, "dlsym(%s): %s\n", symbol, dlerror());
    return 0;
  }
  memcpy(field, &address, sizeof address);
  return 1;
}

#define LOOK_UP(name) ok = ok && look_up(library, "kiln_" #name, &api->name);
static int look_up_all(void* library, kiln_api* api) {
  int ok = 1;
  SAMPLE_FUNCTIONS(LOOK_UP)
  return ok;
}

/* Prints and frees a failed status; returns 1 when it failed. */
static int failed(const kiln_api* kiln, kiln_status_t* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s failed: %s: %s\n", what, kiln->status_code_name(kiln->status_code(status)),
          kiln->status_message(status));
  kiln->status_destroy(status);
  return 1;
}

enum { kLength = 4 };

/* 2*x + y for two f32[4] parameters. */
static kiln_computation_t* build_axpy(const kiln_api* kiln) {
  const int64_t dims[1] = {kLength};
  kiln_builder_t* builder = NULL;
  kiln_computation_t* axpy = NULL;
  kiln_op_t x, y, twice_x;
  if (failed(kiln, kiln->builder_create("axpy", &builder), "kiln_builder_create")) return NULL;
  x = kiln->op_parameter(builder, 0, KILN_TYPE_F32, dims, 1, NULL, "x");
  y = kiln->op_parameter(builder, 1, KILN_TYPE_F32, dims, 1, NULL, "y");
  twice_x = kiln->op_mul(builder, kiln->op_constant_f32(builder, 2.0f), x, NULL, 0);
  kiln->op_add(builder, twice_x, y, NULL, 0);
  /* Builder errors are sticky: building reports the first failed op. */
  failed(kiln, kiln->builder_build(builder, KILN_OP_INVALID, &axpy), "kiln_builder_build");
  kiln->builder_destroy(builder);
  return axpy;
}

static int run(const kiln_api* kiln) {
  static const float x[kLength] = {1.0f, 2.0f, 3.0f, 4.0f};
  static const float y[kLength] = {10.0f, 20.0f, 30.0f, 40.0f};
  const int64_t dims[1] = {kLength};
  float result[kLength];
  kiln_client_t* client = NULL;
  kiln_computation_t* axpy = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arguments[2] = {NULL, NULL};
  kiln_buffer_t* output = NULL;
  const char* backend = "";
  size_t num_results = 0;
  int status = 1;

  printf("kiln %s\n", kiln->version());
  if (failed(kiln, kiln->client_create(NULL, &client), "kiln_client_create") ||
      failed(kiln, kiln->client_backend_name(client, &backend), "kiln_client_backend_name")) {
    goto done;
  }
  axpy = build_axpy(kiln);
  if (axpy == NULL) goto done;
  if (failed(kiln, kiln->client_compile(client, axpy, NULL, &executable), "kiln_client_compile") ||
      failed(kiln,
             kiln->client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, x, sizeof(x), &arguments[0]),
             "kiln_client_buffer_from_host") ||
      failed(kiln,
             kiln->client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, y, sizeof(y), &arguments[1]),
             "kiln_client_buffer_from_host") ||
      failed(kiln, kiln->executable_execute(executable, arguments, 2, NULL, &output, 1, &num_results),
             "kiln_executable_execute") ||
      failed(kiln, kiln->buffer_to_host(output, result, sizeof(result)), "kiln_buffer_to_host")) {
    goto done;
  }
  printf("backend: %s\n", backend);
  printf("2*x + y = [%g, %g, %g, %g]\n", (double)result[0], (double)result[1], (double)result[2],
         (double)result[3]);
  status = 0;
done:
  kiln->buffer_destroy(output);
  kiln->buffer_destroy(arguments[1]);
  kiln->buffer_destroy(arguments[0]);
  kiln->executable_destroy(executable);
  kiln->computation_destroy(axpy);
  kiln->client_destroy(client);
  return status;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : KILN_LIBRARY_SONAME;
  kiln_api kiln;
  int status;
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
    return 1;
  }
  status = look_up_all(library, &kiln) ? run(&kiln) : 1;
  dlclose(library);
  return status;
}
