/* LAPACK is loaded by the first LAPACK custom call, not with libkiln: a
 * process that runs no linalg has no LAPACK, LAPACKE, BLAS or OpenBLAS
 * mapped (/proc/self/maps), and one that runs a Cholesky factorization has
 * LAPACKE mapped afterwards and gets the right factor. Plain C99. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kiln/kiln.h"

/* The first line of /proc/self/maps naming a LAPACK or BLAS library, copied
 * to `line`; 0 when none does (and -1 when the file cannot be read). */
static int find_lapack_mapping(char* line, size_t size) {
  static const char* const kNames[] = {"liblapacke", "liblapack.so", "libblas.so", "libopenblas"};
  FILE* maps = fopen("/proc/self/maps", "r");
  size_t i;
  if (maps == NULL) return -1;
  while (fgets(line, (int)size, maps) != NULL) {
    for (i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
      if (strstr(line, kNames[i]) != NULL) {
        fclose(maps);
        return 1;
      }
    }
  }
  fclose(maps);
  return 0;
}

/* Compiles `text` on `backend`, runs it on one f32[2,2] argument and copies
 * the first `bytes` bytes of result `index` to `out`; 1 on success. */
static int run(const char* backend, const char* text, const float* argument, size_t index, void* out,
               size_t bytes) {
  const int64_t dims[2] = {2, 2};
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* input = NULL;
  kiln_buffer_t* outputs[2] = {NULL, NULL};
  size_t num_results = 0;
  int success = 0;
  kiln_status_t* status;
  options.backend = backend;
  status = kiln_client_create(&options, &client);
  if (status == NULL) status = kiln_computation_from_hlo_text(text, strlen(text), &computation);
  if (status == NULL) status = kiln_client_compile(client, computation, NULL, &executable);
  if (status == NULL) {
    status = kiln_client_buffer_from_host(client, KILN_TYPE_F32, dims, 2, NULL, argument, 4 * sizeof(float),
                                          &input);
  }
  if (status == NULL) status = kiln_executable_execute(executable, &input, 1, NULL, outputs, 2, &num_results);
  if (status == NULL && index < num_results) status = kiln_buffer_to_host(outputs[index], out, bytes);
  if (status != NULL) {
    fprintf(stderr, "%s: %s: %s\n", backend, kiln_status_code_name(kiln_status_code(status)),
            kiln_status_message(status));
    kiln_status_destroy(status);
  } else {
    success = index < num_results;
  }
  kiln_buffer_destroy(outputs[0]);
  kiln_buffer_destroy(outputs[1]);
  kiln_buffer_destroy(input);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
  return success;
}

static const char kNegate[] =
    "HloModule negate\n"
    "ENTRY main {\n"
    "  a = f32[2,2] parameter(0)\n"
    "  ROOT n = f32[2,2] negate(a)\n"
    "}\n";

/* What jnp.linalg.cholesky exports on the CPU: LAPACK's potrf, lower. */
static const char kCholesky[] =
    "HloModule cholesky\n"
    "ENTRY main {\n"
    "  a = f32[2,2] parameter(0)\n"
    "  ROOT call = (f32[2,2], s32[]) custom-call(a), custom_call_target=\"lapack_spotrf_ffi\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}\n"
    "}\n";

int main(void) {
  /* [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]. */
  static const float kMatrix[4] = {4, 2, 2, 5};
  char line[4096];
  float negated[4] = {0, 0, 0, 0};
  float factor[4] = {0, 0, 0, 0};
  int mapped;

  mapped = find_lapack_mapping(line, sizeof(line));
  CHECK(mapped >= 0);
  if (mapped > 0) fprintf(stderr, "mapped before any computation: %s", line);
  CHECK(mapped == 0);

  CHECK(run("interpreter", kNegate, kMatrix, 0, negated, sizeof(negated)));
  CHECK(run("cpu", kNegate, kMatrix, 0, negated, sizeof(negated)));
  CHECK(negated[0] == -4 && negated[3] == -5);
  mapped = find_lapack_mapping(line, sizeof(line));
  if (mapped > 0) fprintf(stderr, "mapped after computations without linalg: %s", line);
  CHECK(mapped == 0);

  CHECK(run("cpu", kCholesky, kMatrix, 0, factor, sizeof(factor)));
  /* LAPACK leaves the strict upper triangle as it was; the lower is L. */
  CHECK(factor[0] == 2 && factor[2] == 1 && factor[3] == 2);
  mapped = find_lapack_mapping(line, sizeof(line));
  CHECK(mapped == 1);
  CHECK(mapped != 1 || strstr(line, "lapack") != NULL || strstr(line, "blas") != NULL);

  if (g_failures == 0) printf("lapack loaded lazily: ok\n");
  return g_failures == 0 ? 0 : 1;
}
