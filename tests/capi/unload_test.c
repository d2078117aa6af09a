/* Loads libkiln with dlopen, compiles and runs a small computation on the
 * default backend and unloads it again with dlclose, 200 times, and checks
 * that the process's resident memory stays flat: what one load sets up (the
 * program cache, the JIT) must not be set up again and leaked by the next.
 *
 *   kiln_unload_test PATH/TO/libkiln.so.N
 *
 * The bound is on memory growth, not on time: resident memory after the last
 * cycle may exceed that after cycle 20 by at most 16 MiB, where a leak of
 * 725 KB per cycle (what each cycle leaked before the library stayed
 * resident) would add 127 MiB. */
#define _POSIX_C_SOURCE 200809L /* sysconf */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/kiln.h"

enum { kCycles = 200, kBaselineCycle = 20 };
static const long kMaxGrowthBytes = 16L << 20;

static const char kModule[] =
    "HloModule axpy\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  y = f32[4] parameter(1)\n"
    "  two = f32[] constant(2)\n"
    "  twos = f32[4] broadcast(two), dimensions={}\n"
    "  twice = f32[4] multiply(twos, x)\n"
    "  ROOT r = f32[4] add(twice, y)\n"
    "}\n";

/* The functions one cycle uses, looked up afresh after every dlopen. */
/* clang-format off */
#define TEST_FUNCTIONS(X)                                                                      \
  X(status_code) X(status_message) X(status_destroy) X(client_create) X(client_destroy)        \
  X(computation_from_hlo_text) X(computation_destroy) X(client_compile) X(executable_destroy)  \
  X(client_buffer_from_host) X(buffer_destroy) X(executable_execute) X(buffer_to_host)
/* clang-format on */

#define DECLARE_FIELD(name) kiln_##name##_fn name;
typedef struct {
  TEST_FUNCTIONS(DECLARE_FIELD)
} kiln_api;

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
  TEST_FUNCTIONS(LOOK_UP)
  return ok;
}

static int failed(const kiln_api* api, kiln_status_t* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "%s failed (%d): %s\n", what, (int)api->status_code(status), api->status_message(status));
  api->status_destroy(status);
  return 1;
}

/* Compiles and runs 2*x + y once; returns 0 when the result is right. */
static int run_axpy(const kiln_api* api) {
  static const float x[4] = {1, 2, 3, 4};
  static const float y[4] = {10, 20, 30, 40};
  const int64_t dims[1] = {4};
  float result[4] = {0, 0, 0, 0};
  kiln_client_t* client = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arguments[2] = {NULL, NULL};
  kiln_buffer_t* output = NULL;
  size_t num_results = 0;
  int status = 1;
  int i;

  if (failed(api, api->client_create(NULL, &client), "kiln_client_create")) goto done;
  if (failed(api, api->computation_from_hlo_text(kModule, sizeof(kModule) - 1, &computation),
             "kiln_computation_from_hlo_text") ||
      failed(api, api->client_compile(client, computation, NULL, &executable), "kiln_client_compile") ||
      failed(api,
             api->client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, x, sizeof(x), &arguments[0]),
             "kiln_client_buffer_from_host") ||
      failed(api,
             api->client_buffer_from_host(client, KILN_TYPE_F32, dims, 1, NULL, y, sizeof(y), &arguments[1]),
             "kiln_client_buffer_from_host") ||
      failed(api, api->executable_execute(executable, arguments, 2, NULL, &output, 1, &num_results),
             "kiln_executable_execute") ||
      failed(api, api->buffer_to_host(output, result, sizeof(result)), "kiln_buffer_to_host")) {
    goto done;
  }
  status = 0;
  for (i = 0; i < 4; ++i) {
    if (result[i] != 2 * x[i] + y[i]) {
      fprintf(stderr, "result[%d] = %g, expected %g\n", i, (double)result[i], (double)(2 * x[i] + y[i]));
      status = 1;
    }
  }
done:
  api->buffer_destroy(output);
  api->buffer_destroy(arguments[0]);
  api->buffer_destroy(arguments[1]);
  api->executable_destroy(executable);
  api->computation_destroy(computation);
  api->client_destroy(client);
  return status;
}

/* Resident set size in bytes, from /proc/self/statm; -1 when unreadable. */
static long resident_bytes(void) {
  long pages_total = 0, pages_resident = 0;
  FILE* statm = fopen("/proc/self/statm", "r");
  if (statm == NULL) return -1;
  if (fscanf(statm, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = -1;
  fclose(statm);
  return pages_resident < 0 ? -1 : pages_resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char** argv) {
  long baseline = -1, last = -1;
  int cycle;
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH/TO/libkiln.so.N\n", argv[0]);
    return 2;
  }
  for (cycle = 1; cycle <= kCycles; ++cycle) {
    kiln_api api;
    void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
      fprintf(stderr, "cycle %d: dlopen: %s\n", cycle, dlerror());
      return 1;
    }
    memset(&api, 0, sizeof(api));
    if (!look_up_all(library, &api) || run_axpy(&api) != 0) {
      fprintf(stderr, "cycle %d failed\n", cycle);
      return 1;
    }
    if (dlclose(library) != 0) {
      fprintf(stderr, "cycle %d: dlclose: %s\n", cycle, dlerror());
      return 1;
    }
    if (cycle == kBaselineCycle) baseline = resident_bytes();
  }
  last = resident_bytes();
  if (baseline < 0 || last < 0) {
    fprintf(stderr, "cannot read /proc/self/statm\n");
    return 1;
  }
  printf(
      "resident after cycle %d: %ld KiB, after cycle %d: %ld KiB (growth %ld KiB, at most %ld KiB allowed)\n",
      kBaselineCycle, baseline >> 10, kCycles, last >> 10, (last - baseline) >> 10, kMaxGrowthBytes >> 10);
  if (last - baseline > kMaxGrowthBytes) {
    fprintf(stderr, "resident memory grew by %ld KiB over %d dlopen/dlclose cycles\n",
            (last - baseline) >> 10, kCycles - kBaselineCycle);
    return 1;
  }
  return 0;
}
