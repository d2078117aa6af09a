/* A registered op on cuda from a user's PTX (kiln_user_op_register_device_kernel),
 * on the fake driver (tests/cuda/fake_driver), which runs no kernel but
 * records the last launch: ZeroOutIndex and ZeroOutPoly from zero_out.ptx
 * (which ptxas checks in device_user_ops.ptxas) are launched with the frame
 * kiln.h documents. Fake device memory is host memory, so the test reads
 * the argument through the launch's pointer and plays the kernel into the
 * result's pointer, then reads the result back through the C ABI. Also
 * every error of a device kernel on cuda.
 * Usage: kiln_cuda_zero_out_test ZERO_OUT.ptx (KILN_CUDA_DRIVER names the fake driver) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "read_file.h"
#include "zero_out_ops.h"

enum { kN = 1000, kMaxParameters = 8 };

typedef int (*last_launch_fn)(char* entry, size_t entry_size, unsigned* grid, unsigned* block,
                              uint64_t* parameters, size_t capacity);
static last_launch_fn g_last_launch = NULL;

/* `op` over an s32 vector of kN elements with `attrs` on cuda; the fake's
 * record of the launch to entry/grid/block/parameters (their count to
 * *num_parameters), whether the argument's pointer held x to *arg_is_x
 * (checked while the argument lives), the result after `play` wrote it
 * through the launch's pointers to `out`. */
static kiln_status_t* launch_on_cuda(const char* op, const int32_t* x, const char* attrs,
                                     void (*play)(const uint64_t* parameters), char* entry, unsigned* grid,
                                     unsigned* block, uint64_t* parameters, int* num_parameters,
                                     int* arg_is_x, int32_t* out) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arg = NULL;
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  int64_t n = kN;
  kiln_op_t param;
  kiln_status_t* status = kiln_builder_create(op, &builder);
  *num_parameters = -1;
  *arg_is_x = 0;
  if (status == NULL) {
    param = kiln_op_parameter(builder, 0, KILN_TYPE_S32, &n, 1, NULL, "x");
    status =
        kiln_builder_build(builder, kiln_op_call_registered(builder, op, &param, 1, attrs), &computation);
  }
  options.backend = "cuda";
  if (status == NULL) status = kiln_client_create(&options, &client);
  if (status == NULL) status = kiln_client_compile(client, computation, NULL, &executable);
  if (status == NULL)
    status = kiln_client_buffer_from_host(client, KILN_TYPE_S32, &n, 1, NULL, x, kN * 4, &arg);
  if (status == NULL) status = kiln_executable_execute(executable, &arg, 1, NULL, &result, 1, &num_results);
  if (status == NULL) {
    *num_parameters = g_last_launch(entry, 64, grid, block, parameters, kMaxParameters);
    if (*num_parameters >= 2) {
      *arg_is_x = memcmp((const void*)(uintptr_t)parameters[0], x, kN * 4) == 0;
      play(parameters);
    }
    status = kiln_buffer_to_host(result, out, kN * 4);
  }
  kiln_buffer_destroy(arg);
  kiln_buffer_destroy(result);
  kiln_executable_destroy(executable);
  kiln_client_destroy(client);
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
  return status;
}

/* What zero_out.ptx computes, played on the host through a launch's pointers. */
static void play_zero_out(const uint64_t* p, int64_t keep) {
  const int32_t* to_zero = (const int32_t*)(uintptr_t)p[0];
  int32_t* zeroed = (int32_t*)(uintptr_t)p[1];
  uint64_t i;
  for (i = 0; i < p[3]; ++i) zeroed[i] = (int64_t)i == keep ? to_zero[i] : 0;
}
static void play_zero_out_index(const uint64_t* p) { play_zero_out(p, (int64_t)p[4]); }
static void play_zero_out_first(const uint64_t* p) { play_zero_out(p, 0); }

static void check_launch(const char* op, const char* attrs, void (*play)(const uint64_t*),
                         const char* want_entry, unsigned want_grid, unsigned want_block, int want_parameters,
                         int64_t keep) {
  static int32_t x[kN], out[kN];
  char entry[64] = "";
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint64_t parameters[kMaxParameters];
  int num_parameters = 0, arg_is_x = 0, i;
  for (i = 0; i < kN; ++i) x[i] = 3 * i + 2;
  CHECK_OK(
      launch_on_cuda(op, x, attrs, play, entry, grid, block, parameters, &num_parameters, &arg_is_x, out));
  if (num_parameters != want_parameters) {
    fprintf(stderr, "%s: %d launch parameters, expected %d\n", op, num_parameters, want_parameters);
    ++g_failures;
    return;
  }
  CHECK(strcmp(entry, want_entry) == 0);
  CHECK(grid[0] == want_grid && grid[1] == 1 && grid[2] == 1);
  CHECK(block[0] == want_block && block[1] == 1 && block[2] == 1);
  /* The argument's pointer holds the argument; the counts follow the pointers. */
  CHECK(arg_is_x);
  CHECK(parameters[2] == kN && parameters[3] == kN);
  if (want_parameters == 5) CHECK((int64_t)parameters[4] == keep);
  /* The result's pointer is the result the caller reads. */
  for (i = 0; i < kN; ++i) {
    if (out[i] != (i == keep ? x[i] : 0)) {
      fprintf(stderr, "%s %s: result element %d is %d\n", op, attrs ? attrs : "", i, out[i]);
      ++g_failures;
      break;
    }
  }
}

static void test_registration_errors(const unsigned char* ptx, size_t size) {
  static const char no_version[] = ".target sm_75\n.visible .entry k() { ret; }\n";
  static const char with_nul[] = ".version 7.0\n.target sm_75\n\0.visible .entry k() { ret; }\n";
  EXPECT_ERROR(
      kiln_user_op_register_device_kernel("ZeroOutIndex", "cuda", KILN_TYPE_S32, ptx, size, "zero_out"),
      KILN_STATUS_NOT_FOUND,
      "has no .entry kernel named 'zero_out' (it has 'zero_out_index', 'zero_out_first')");
  EXPECT_ERROR(kiln_user_op_register_device_kernel("ZeroOutIndex", "cuda", KILN_TYPE_S32, no_version,
                                                   sizeof no_version - 1, "k"),
               KILN_STATUS_INVALID_ARGUMENT, "the cuda kernel is not PTX: it has no .version directive");
  EXPECT_ERROR(kiln_user_op_register_device_kernel("ZeroOutIndex", "cuda", KILN_TYPE_S32, with_nul,
                                                   sizeof with_nul - 1, "k"),
               KILN_STATUS_INVALID_ARGUMENT, "the cuda kernel is not PTX text: it holds a NUL byte");
  EXPECT_ERROR(kiln_user_op_register_device_kernel("ZeroOutIndex", "cuda", 99, ptx, size, "zero_out_index"),
               KILN_STATUS_INVALID_ARGUMENT, "element type 99 is not an array KILN_TYPE_*");
  EXPECT_ERROR(kiln_user_op_register_device_kernel_with_launch("ZeroOutIndex", "cuda", KILN_TYPE_S32, NULL,
                                                               size, "zero_out_index", 0, 0),
               KILN_STATUS_INVALID_ARGUMENT, "code");
}

/* PTX the driver's JIT refuses (the fake refuses its marker) and a block
 * past CUDA's limit: compile errors naming the op. */
static void test_compile_errors(void) {
  static const char refused[] =
      "// KILN_FAKE_INVALID_PTX\n.version 7.0\n.target sm_75\n.address_size 64\n"
      ".visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, .param .u64 e) { ret; "
      "}\n";
  static int32_t x[kN], out[kN];
  char entry[64];
  unsigned grid[3], block[3];
  uint64_t parameters[kMaxParameters];
  int num_parameters, arg_is_x;
  CHECK_OK(kiln_user_op_register_device_kernel("ZeroOutList", "cuda", KILN_TYPE_S32, refused,
                                               sizeof refused - 1, "k"));
  EXPECT_ERROR(launch_on_cuda("ZeroOutList", x, "{N = 1}", play_zero_out_first, entry, grid, block,
                              parameters, &num_parameters, &arg_is_x, out),
               KILN_STATUS_INVALID_ARGUMENT, "op 'ZeroOutList' (instruction");
  EXPECT_ERROR(launch_on_cuda("ZeroOutList", x, "{N = 1}", play_zero_out_first, entry, grid, block,
                              parameters, &num_parameters, &arg_is_x, out),
               KILN_STATUS_INVALID_ARGUMENT, "the driver refuses its PTX");
  CHECK_OK(kiln_user_op_register_device_kernel_with_launch("ZeroOut", "cuda", KILN_TYPE_S32, refused,
                                                           sizeof refused - 1, "k", 2048, 0));
  EXPECT_ERROR(launch_on_cuda("ZeroOut", x, NULL, play_zero_out_first, entry, grid, block, parameters,
                              &num_parameters, &arg_is_x, out),
               KILN_STATUS_INVALID_ARGUMENT, "2048 threads per block pass CUDA's limit of 1024");
}

int main(int argc, char** argv) {
  const char* driver = getenv("KILN_CUDA_DRIVER");
  void* library;
  size_t size = 0;
  unsigned char* ptx;
  if (argc != 2 || (ptx = read_file(argv[1], &size)) == NULL) {
    fprintf(stderr, "usage: %s ZERO_OUT.ptx (a readable PTX file)\n", argv[0]);
    return 2;
  }
  library = driver != NULL ? dlopen(driver, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (library != NULL) *(void**)&g_last_launch = dlsym(library, "kiln_fake_cuda_last_launch");
  if (g_last_launch == NULL) {
    fprintf(stderr, "KILN_CUDA_DRIVER must name the fake driver (tests/cuda/fake_driver)\n");
    return 2;
  }
  CHECK_OK(register_zero_out_ops());
  test_registration_errors(ptx, size);
  CHECK_OK(kiln_user_op_register_device_kernel_with_launch("ZeroOutIndex", "cuda", KILN_TYPE_S32, ptx, size,
                                                           "zero_out_index", 128, 0));
  /* Any type, the default launch: 256 threads a block. */
  CHECK_OK(kiln_user_op_register_device_kernel("ZeroOutPoly", "cuda", KILN_TYPE_INVALID, ptx, size,
                                               "zero_out_first"));
  check_launch("ZeroOutIndex", "{preserve_index = 3}", play_zero_out_index, "zero_out_index", 8, 128, 5, 3);
  check_launch("ZeroOutIndex", NULL, play_zero_out_index, "zero_out_index", 8, 128, 5, 0);
  check_launch("ZeroOutPoly", NULL, play_zero_out_first, "zero_out_first", 4, 256, 4, 0);
  /* The grid given. */
  CHECK_OK(kiln_user_op_register_device_kernel_with_launch("ZeroOutPoly", "cuda", KILN_TYPE_S32, ptx, size,
                                                           "zero_out_first", 32, 40));
  check_launch("ZeroOutPoly", NULL, play_zero_out_first, "zero_out_first", 40, 32, 4, 0);
  test_compile_errors();
  free(ptx);
  dlclose(library);
  if (g_failures != 0) fprintf(stderr, "%d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
