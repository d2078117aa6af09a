/* A registered op on vulkan from a user's SPIR-V (kiln_user_op_register_device_kernel):
 * ZeroOutIndex (samples/c/zero_out_ops.h) from zero_out_index.comp, which
 * glslc compiled at build time, run on lavapipe against its host kernel on
 * the interpreter; and every error of a device kernel on vulkan.
 * Usage: kiln_vulkan_zero_out_test ZERO_OUT_INDEX.spv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "read_file.h"
#include "zero_out_ops.h"

enum { kMaxN = 1000 };

/* ZeroOutIndex (or `op`) over an s32/f32 vector of n elements with `attrs`,
 * run on `backend`; the result to `out`. */
static kiln_status_t* run_op(const char* backend, const char* op, kiln_element_type_t type, const void* x,
                             int64_t n, const char* attrs, void* out) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* arg = NULL;
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  kiln_op_t param;
  kiln_status_t* status = kiln_builder_create(op, &builder);
  if (status == NULL) {
    param = kiln_op_parameter(builder, 0, type, &n, 1, NULL, "x");
    status =
        kiln_builder_build(builder, kiln_op_call_registered(builder, op, &param, 1, attrs), &computation);
  }
  options.backend = backend;
  if (status == NULL) status = kiln_client_create(&options, &client);
  if (status == NULL) status = kiln_client_compile(client, computation, NULL, &executable);
  if (status == NULL)
    status = kiln_client_buffer_from_host(client, type, &n, 1, NULL, x, (size_t)n * 4, &arg);
  if (status == NULL) status = kiln_executable_execute(executable, &arg, 1, NULL, &result, 1, &num_results);
  if (status == NULL) status = kiln_buffer_to_host(result, out, (size_t)n * 4);
  kiln_buffer_destroy(arg);
  kiln_buffer_destroy(result);
  kiln_executable_destroy(executable);
  kiln_client_destroy(client);
  kiln_computation_destroy(computation);
  kiln_builder_destroy(builder);
  return status;
}

/* ZeroOutIndex on vulkan equals its host kernel on the interpreter. */
static void check_against_host(int64_t n, const char* attrs) {
  static int32_t x[kMaxN], on_vulkan[kMaxN], on_host[kMaxN];
  int64_t i;
  int kept = 0;
  for (i = 0; i < n; ++i) {
    x[i] = (int32_t)(7 * i + 1);
    on_vulkan[i] = -1;
    on_host[i] = -2;
  }
  CHECK_OK(run_op("vulkan", "ZeroOutIndex", KILN_TYPE_S32, x, n, attrs, on_vulkan));
  CHECK_OK(run_op("interpreter", "ZeroOutIndex", KILN_TYPE_S32, x, n, attrs, on_host));
  for (i = 0; i < n; ++i) kept += on_host[i] != 0;
  CHECK(kept == 1); /* the host kernel keeps one element: a real reference */
  if (memcmp(on_vulkan, on_host, (size_t)n * 4) != 0) {
    for (i = 0; i < n && on_vulkan[i] == on_host[i]; ++i) continue;
    fprintf(stderr, "ZeroOutIndex %s, n = %lld on vulkan: element %lld is %d, the host kernel's %d\n",
            attrs ? attrs : "", (long long)n, (long long)i, on_vulkan[i], on_host[i]);
    ++g_failures;
  }
}

static void test_registration_errors(const unsigned char* spirv, size_t size) {
  static const unsigned char not_spirv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_ERROR(
      kiln_user_op_register_device_kernel("ZeroOutIndex", "vulkan", KILN_TYPE_S32, spirv, size - 2, "main"),
      KILN_STATUS_INVALID_ARGUMENT, "is not a whole number of 32-bit words");
  EXPECT_ERROR(
      kiln_user_op_register_device_kernel("ZeroOutIndex", "vulkan", KILN_TYPE_S32, not_spirv, 8, "main"),
      KILN_STATUS_INVALID_ARGUMENT, "the vulkan kernel is not a SPIR-V module");
  EXPECT_ERROR(
      kiln_user_op_register_device_kernel("ZeroOutIndex", "vulkan", KILN_TYPE_S32, spirv, size, "zero_out"),
      KILN_STATUS_NOT_FOUND, "has no GLCompute entry point named 'zero_out' (it has 'main')");
  EXPECT_ERROR(kiln_user_op_register_device_kernel("NoSuchOp", "vulkan", KILN_TYPE_S32, spirv, size, "main"),
               KILN_STATUS_NOT_FOUND, "op 'NoSuchOp' is not registered");
  EXPECT_ERROR(
      kiln_user_op_register_device_kernel("ZeroOutIndex", "metal", KILN_TYPE_S32, spirv, size, "main"),
      KILN_STATUS_INVALID_ARGUMENT, "device kernels are for vulkan (SPIR-V) and cuda (PTX), not 'metal'");
  EXPECT_ERROR(
      kiln_user_op_register_kernel("ZeroOutIndex", "vulkan", KILN_TYPE_S32, zero_out_kernel, NULL, NULL),
      KILN_STATUS_INVALID_ARGUMENT, "kiln_user_op_register_device_kernel");
}

/* A module whose header passes but which the validator refuses: its ID
 * bound is 1, below the IDs it uses. */
static void test_invalid_spirv(const unsigned char* spirv, size_t size) {
  static int32_t x[5] = {1, 2, 3, 4, 5}, out[5];
  unsigned char* broken = (unsigned char*)malloc(size);
  const uint32_t bound = 1;
  if (broken == NULL) return;
  memcpy(broken, spirv, size);
  memcpy(broken + 12, &bound, 4);
  CHECK_OK(kiln_user_op_register_device_kernel("ZeroOutPoly", "vulkan", KILN_TYPE_S32, broken, size, "main"));
  EXPECT_ERROR(run_op("vulkan", "ZeroOutPoly", KILN_TYPE_S32, x, 5, NULL, out), KILN_STATUS_INVALID_ARGUMENT,
               "op 'ZeroOutPoly' (instruction");
  EXPECT_ERROR(run_op("vulkan", "ZeroOutPoly", KILN_TYPE_S32, x, 5, NULL, out), KILN_STATUS_INVALID_ARGUMENT,
               "the SPIR-V validator (Vulkan 1.2) refuses its kernel");
  free(broken);
}

int main(int argc, char** argv) {
  static const float xf[5] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  float outf[5];
  size_t size = 0;
  unsigned char* spirv;
  if (argc != 2 || (spirv = read_file(argv[1], &size)) == NULL) {
    fprintf(stderr, "usage: %s ZERO_OUT_INDEX.spv (a readable SPIR-V file)\n", argv[0]);
    return 2;
  }
  CHECK_OK(register_zero_out_ops());
  test_registration_errors(spirv, size);
  /* Workgroups of 16 invocations, as many as result 0 needs. */
  CHECK_OK(kiln_user_op_register_device_kernel_with_launch("ZeroOutIndex", "vulkan", KILN_TYPE_S32, spirv,
                                                           size, "main", 16, 0));
  EXPECT_ERROR(
      kiln_user_op_register_device_kernel("ZeroOutIndex", "vulkan", KILN_TYPE_S32, spirv, size, "main"),
      KILN_STATUS_ALREADY_EXISTS, "op 'ZeroOutIndex' already has a vulkan kernel for s32");
  check_against_host(5, NULL);
  check_against_host(5, "{preserve_index = 3}");
  check_against_host(kMaxN, "{preserve_index = 999}");
  check_against_host(kMaxN, "{preserve_index = 17}");
  /* A type with no vulkan kernel: ZeroOutPoly has host kernels for f32, none on vulkan. */
  EXPECT_ERROR(run_op("vulkan", "ZeroOutPoly", KILN_TYPE_F32, xf, 5, NULL, outf), KILN_STATUS_UNIMPLEMENTED,
               "op 'ZeroOutPoly' has no vulkan kernel for element type f32");
  EXPECT_ERROR(run_op("vulkan", "ZeroOut", KILN_TYPE_S32, xf, 5, NULL, outf), KILN_STATUS_UNIMPLEMENTED,
               "op 'ZeroOut' has no vulkan kernel for element type s32");
  test_invalid_spirv(spirv, size);
  free(spirv);
  if (g_failures != 0) fprintf(stderr, "%d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
