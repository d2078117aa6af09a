/* What kiln.h promises about threads, tested from plain C99 with POSIX
 * threads on every backend of the build: one client shared by threads that
 * parse, compile and execute at once (two of them compile the same program
 * together), one executable run by several threads on shared argument
 * buffers, and custom-call registration from several threads. The arrays
 * are large enough that each execution also splits its kernels, reduction
 * and matmul over the backend's intra-op threads. Results are checked
 * exactly (small integers); the ThreadSanitizer build (preset tsan) runs this
 * program to find data races behind these promises. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

enum { kThreads = 4, kRuns = 2, kElements = 65536, kRows = 256, kColumns = 1024, kSide = 256 };

/* Each failure is counted where it happens; threads count their own. */
static int report(int* failures, const char* what, kiln_status_t* status, int line) {
  if (status == NULL) return 0;
  fprintf(stderr, "line %d: %s failed: %s: %s\n", line, what, kiln_status_code_name(kiln_status_code(status)),
          kiln_status_message(status));
  kiln_status_destroy(status);
  ++*failures;
  return 1;
}
#define FAILED(failures, expr) report((failures), #expr, (expr), __LINE__)

/* x * x + x over kElements values. */
static const char kElementwise[] =
    "HloModule elementwise\n"
    "ENTRY e {\n"
    "  x = f32[65536] parameter(0)\n"
    "  m = f32[65536] multiply(x, x)\n"
    "  ROOT r = f32[65536] add(m, x)\n"
    "}\n";

/* Row sums of a kRows x kColumns matrix. */
static const char kReduction[] =
    "HloModule reduction\n"
    "sum {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY e {\n"
    "  x = f32[256,1024] parameter(0)\n"
    "  zero = f32[] constant(0)\n"
    "  ROOT r = f32[256] reduce(x, zero), dimensions={1}, to_apply=sum\n"
    "}\n";

/* A kSide x kSide matrix product. */
static const char kMatmul[] =
    "HloModule matmul\n"
    "ENTRY e {\n"
    "  a = f32[256,256] parameter(0)\n"
    "  b = f32[256,256] parameter(1)\n"
    "  ROOT d = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "}\n";

/* One of the programs above with its inputs and the result it must give. */
typedef struct {
  const char* text;
  int64_t dims[2][2];
  size_t rank[2];
  size_t num_inputs;
  float* inputs[2];
  size_t input_elements[2];
  float* expected;
  size_t expected_elements;
} program_t;

static program_t g_programs[3];

/* Zeroed floats; exits when memory is short, as nothing could be tested. */
static float* allocate_floats(size_t count) {
  float* floats = (float*)calloc(count, sizeof(float));
  if (floats == NULL) {
    fprintf(stderr, "out of memory for %zu floats\n", count);
    exit(1);
  }
  return floats;
}

static void allocate_program(program_t* p) {
  size_t i;
  for (i = 0; i < p->num_inputs; ++i) p->inputs[i] = allocate_floats(p->input_elements[i]);
  p->expected = allocate_floats(p->expected_elements);
}

static void free_programs(void) {
  size_t i, k;
  for (i = 0; i < 3; ++i) {
    for (k = 0; k < g_programs[i].num_inputs; ++k) free(g_programs[i].inputs[k]);
    free(g_programs[i].expected);
  }
}

static void make_programs(void) {
  program_t* p = &g_programs[0];
  int i, j, k;
  p->text = kElementwise;
  p->num_inputs = 1;
  p->dims[0][0] = kElements;
  p->rank[0] = 1;
  p->input_elements[0] = kElements;
  p->expected_elements = kElements;
  allocate_program(p);
  for (i = 0; i < kElements; ++i) {
    const float x = (float)(i % 100 - 50);
    p->inputs[0][i] = x;
    p->expected[i] = x * x + x;
  }

  p = &g_programs[1];
  p->text = kReduction;
  p->num_inputs = 1;
  p->dims[0][0] = kRows;
  p->dims[0][1] = kColumns;
  p->rank[0] = 2;
  p->input_elements[0] = kRows * kColumns;
  p->expected_elements = kRows;
  allocate_program(p);
  for (i = 0; i < kRows; ++i) {
    for (j = 0; j < kColumns; ++j) {
      p->inputs[0][i * kColumns + j] = (float)((i + j) % 7);
      p->expected[i] += (float)((i + j) % 7);
    }
  }

  p = &g_programs[2];
  p->text = kMatmul;
  p->num_inputs = 2;
  for (k = 0; k < 2; ++k) {
    p->dims[k][0] = kSide;
    p->dims[k][1] = kSide;
    p->rank[k] = 2;
    p->input_elements[k] = kSide * kSide;
  }
  p->expected_elements = kSide * kSide;
  allocate_program(p);
  for (i = 0; i < kSide; ++i) {
    for (j = 0; j < kSide; ++j) {
      p->inputs[0][i * kSide + j] = (float)((i + j) % 5);
      p->inputs[1][i * kSide + j] = (float)((i * j) % 3);
    }
  }
  for (i = 0; i < kSide; ++i) {
    for (j = 0; j < kSide; ++j) {
      float sum = 0; /* exact: at most 256 products of at most 4 x 2 */
      for (k = 0; k < kSide; ++k) sum += p->inputs[0][i * kSide + k] * p->inputs[1][k * kSide + j];
      p->expected[i * kSide + j] = sum;
    }
  }
}

static int upload_inputs(kiln_client_t* client, const program_t* p, kiln_buffer_t** buffers, int* failures) {
  size_t i;
  for (i = 0; i < p->num_inputs; ++i) {
    if (FAILED(failures,
               kiln_client_buffer_from_host(client, KILN_TYPE_F32, p->dims[i], p->rank[i], NULL, p->inputs[i],
                                            p->input_elements[i] * sizeof(float), &buffers[i]))) {
      return 1;
    }
  }
  return 0;
}

/* Runs `executable` kRuns times on `arguments` and compares with `p`. */
static void run_and_check(kiln_executable_t* executable, kiln_buffer_t* const* arguments, const program_t* p,
                          int* failures) {
  float* out = allocate_floats(p->expected_elements);
  int run;
  size_t i;
  for (run = 0; run < kRuns; ++run) {
    kiln_buffer_t* result = NULL;
    size_t num_results = 0;
    int copied = 0;
    if (FAILED(failures, kiln_executable_execute(executable, arguments, p->num_inputs, NULL, &result, 1,
                                                 &num_results))) {
      break;
    }
    if (num_results != 1) {
      fprintf(stderr, "%zu results, expected 1\n", num_results);
      ++*failures;
    } else {
      copied = !FAILED(failures, kiln_buffer_to_host(result, out, p->expected_elements * sizeof(float)));
    }
    kiln_buffer_destroy(result);
    if (!copied) break;
    for (i = 0; i < p->expected_elements && out[i] == p->expected[i]; ++i) {
    }
    if (i < p->expected_elements) {
      fprintf(stderr, "run %d of %.20s...: element %zu is %g, expected %g\n", run, p->text, i, (double)out[i],
              (double)p->expected[i]);
      ++*failures;
      break;
    }
  }
  free(out);
}

typedef struct {
  kiln_client_t* client;
  kiln_executable_t* shared; /* phase 2: run this one on `program` */
  const program_t* program;
  int index;
  int failures;
} worker_t;

/* Phase 1: parse, compile, execute and destroy each program in turn, each
 * thread starting at another one, so that threads compile different programs
 * at once, two of them the same one, and most compiles find a program
 * another thread put in the backend's cache. */
static void* compile_and_run(void* arg) {
  worker_t* w = (worker_t*)arg;
  int n;
  for (n = 0; n < 3; ++n) {
    const program_t* p = &g_programs[(w->index + n) % 3];
    kiln_computation_t* computation = NULL;
    kiln_executable_t* executable = NULL;
    kiln_buffer_t* arguments[2] = {NULL, NULL};
    kiln_compile_options_t options = KILN_COMPILE_OPTIONS_INIT;
    size_t i;
    options.num_threads = 2; /* intra-op threads of each execution, on top of the callers' */
    if (!FAILED(&w->failures, kiln_computation_from_hlo_text(p->text, strlen(p->text), &computation)) &&
        !FAILED(&w->failures, kiln_client_compile(w->client, computation, &options, &executable)) &&
        !upload_inputs(w->client, p, arguments, &w->failures)) {
      run_and_check(executable, arguments, p, &w->failures);
    }
    for (i = 0; i < 2; ++i) kiln_buffer_destroy(arguments[i]);
    kiln_executable_destroy(executable);
    kiln_computation_destroy(computation);
  }
  return NULL;
}

/* Phase 2: execute the shared executable on the shared argument buffers. */
static kiln_buffer_t* g_shared_arguments[2];
static void* run_shared(void* arg) {
  worker_t* w = (worker_t*)arg;
  run_and_check(w->shared, g_shared_arguments, w->program, &w->failures);
  return NULL;
}

static void add_one(void* out, const void** in) { *(float*)out = *(const float*)in[0] + 1.0f; }

/* Phase 3: registration is process-wide and thread-safe. */
static void* register_custom_calls(void* arg) {
  worker_t* w = (worker_t*)arg;
  char name[64];
  snprintf(name, sizeof(name), "concurrency_test_add_one_%d", w->index);
  FAILED(&w->failures, kiln_register_custom_call(name, add_one));
  /* Every thread also registers the same function under one shared name. */
  FAILED(&w->failures, kiln_register_custom_call("concurrency_test_add_one", add_one));
  return NULL;
}

static int run_threads(void* (*body)(void*), worker_t* workers) {
  pthread_t threads[kThreads];
  int started = 0, failures = 0, t;
  for (t = 0; t < kThreads; ++t) {
    if (pthread_create(&threads[t], NULL, body, &workers[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      ++failures;
      break;
    }
    ++started;
  }
  for (t = 0; t < started; ++t) pthread_join(threads[t], NULL);
  for (t = 0; t < kThreads; ++t) failures += workers[t].failures;
  return failures;
}

/* Runs the tests on `backend` and returns the failures. A backend that cannot
 * run on this machine (its client creation fails with UNAVAILABLE, as cuda's
 * does without the NVIDIA driver) is skipped: *skipped is set, no failure. */
static int test_backend(const char* backend, int* skipped) {
  kiln_client_options_t client_options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_computation_t* computation = NULL;
  const program_t* matmul = &g_programs[2];
  worker_t workers[kThreads];
  int failures = 0, t;
  size_t i;
  kiln_status_t* status;
  client_options.backend = backend;
  *skipped = 0;
  status = kiln_client_create(&client_options, &client);
  if (status != NULL && kiln_status_code(status) == KILN_STATUS_UNAVAILABLE) {
    printf("skipping backend %s: %s\n", backend, kiln_status_message(status));
    kiln_status_destroy(status);
    *skipped = 1;
    return 0;
  }
  if (report(&failures, "kiln_client_create(&client_options, &client)", status, __LINE__)) return failures;

  memset(workers, 0, sizeof(workers));
  for (t = 0; t < kThreads; ++t) {
    workers[t].client = client;
    workers[t].index = t;
  }
  failures += run_threads(compile_and_run, workers);

  memset(workers, 0, sizeof(workers));
  if (!FAILED(&failures, kiln_computation_from_hlo_text(matmul->text, strlen(matmul->text), &computation))) {
    kiln_executable_t* shared = NULL;
    if (!FAILED(&failures, kiln_client_compile(client, computation, NULL, &shared)) &&
        !upload_inputs(client, matmul, g_shared_arguments, &failures)) {
      for (t = 0; t < kThreads; ++t) {
        workers[t].shared = shared;
        workers[t].program = matmul;
      }
      failures += run_threads(run_shared, workers);
    }
    for (i = 0; i < 2; ++i) {
      kiln_buffer_destroy(g_shared_arguments[i]);
      g_shared_arguments[i] = NULL;
    }
    kiln_executable_destroy(shared);
  }
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
  if (failures != 0) fprintf(stderr, "backend %s: %d failures\n", backend, failures);
  return failures;
}

int main(void) {
  size_t count = 0, tested = 0, b;
  int failures = 0, t;
  worker_t workers[kThreads];
  make_programs();
  if (FAILED(&failures, kiln_backend_count(&count))) return 1;
  for (b = 0; b < count; ++b) {
    const char* name = NULL;
    int skipped = 0;
    if (FAILED(&failures, kiln_backend_name(b, &name))) continue;
    failures += test_backend(name, &skipped);
    if (!skipped) ++tested;
  }
  if (tested == 0) {
    fprintf(stderr, "no backend was tested: there is none, or every one was skipped\n");
    ++failures;
  }
  memset(workers, 0, sizeof(workers));
  for (t = 0; t < kThreads; ++t) workers[t].index = t;
  failures += run_threads(register_custom_calls, workers);
  free_programs();
  if (failures != 0) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("threads shared a client and executables on %zu backends without a failure\n", tested);
  return 0;
}
