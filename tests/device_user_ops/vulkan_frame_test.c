/* Registered ops whose SPIR-V kernels read the call frame (kiln.h,
 * kiln_user_op_register_device_kernel) on lavapipe, each against its host
 * kernel on the interpreter (frame_ops.h): RowScale (f32, a float and a
 * float-list attribute, the input's dims from the frame), MaxWithIndex
 * (two results) and AddTensor (a tensor attribute's elements from the
 * frame); and the errors of a shader that does not fit its op: a float
 * array bound to an int32 buffer, a binding past the frame's, a frame
 * binding that is not a storage buffer, push constants past 128 bytes.
 *
 * Usage: kiln_vulkan_frame_test ROW_SCALE.spv MAX_WITH_INDEX.spv
 *        ZERO_OUT_INDEX.spv UNIFORM_FRAME.spv ADD_TENSOR.spv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frame_ops.h"
#include "read_file.h"

enum { kMaxElements = 4096 };

/* `op` on `backend` (frame_ops.h's run_frame_op). */
static kiln_status_t* run_op(const char* backend, const char* op, const float* x, const int64_t* dims,
                             const char* attrs, size_t num_results, void** outs, const size_t* bytes) {
  return run_frame_op(backend, op, x, dims, attrs, NULL, NULL, num_results, outs, bytes);
}

/* Distinct values of both signs, so a wrong index or scale shows. */
static void fill(float* x, int64_t n) {
  int64_t i;
  for (i = 0; i < n; ++i) x[i] = (float)((i * 37) % 101) * 0.125f - 6.0f;
}

static void check_row_scale(int64_t rows, int64_t cols, const char* attrs) {
  static float x[kMaxElements], on_vulkan[kMaxElements], on_host[kMaxElements];
  const int64_t dims[2] = {rows, cols};
  const size_t bytes = (size_t)(rows * cols) * 4;
  void* vulkan_out[1] = {on_vulkan};
  void* host_out[1] = {on_host};
  int64_t i, nonzero = 0;
  fill(x, rows * cols);
  CHECK_OK(run_op("vulkan", "RowScale", x, dims, attrs, 1, vulkan_out, &bytes));
  CHECK_OK(run_op("interpreter", "RowScale", x, dims, attrs, 1, host_out, &bytes));
  for (i = 0; i < rows * cols; ++i) nonzero += on_host[i] != 0.0f;
  CHECK(nonzero > rows * cols / 2); /* the reference is not a trivial one */
  for (i = 0; i < rows * cols; ++i) {
    if (on_vulkan[i] != on_host[i]) {
      fprintf(stderr, "RowScale %s [%lld, %lld] on vulkan: element %lld is %g, the host kernel's %g\n", attrs,
              (long long)rows, (long long)cols, (long long)i, on_vulkan[i], on_host[i]);
      ++g_failures;
      break;
    }
  }
}

/* AddTensor: the addend's elements come from the frame. */
static void check_add_tensor(int64_t rows, int64_t cols, const char* attrs) {
  static float x[kMaxElements], on_vulkan[kMaxElements], on_host[kMaxElements];
  const int64_t dims[2] = {rows, cols};
  const size_t bytes = (size_t)(rows * cols) * 4;
  void* vulkan_out[1] = {on_vulkan};
  void* host_out[1] = {on_host};
  int64_t i, changed = 0;
  fill(x, rows * cols);
  CHECK_OK(run_op("vulkan", "AddTensor", x, dims, attrs, 1, vulkan_out, &bytes));
  CHECK_OK(run_op("interpreter", "AddTensor", x, dims, attrs, 1, host_out, &bytes));
  for (i = 0; i < rows * cols; ++i) changed += on_host[i] != x[i];
  CHECK(changed > rows * cols / 2); /* the addend is not a trivial one */
  for (i = 0; i < rows * cols; ++i) {
    if (on_vulkan[i] != on_host[i]) {
      fprintf(stderr, "AddTensor %s [%lld, %lld] on vulkan: element %lld is %g, the host kernel's %g\n",
              attrs, (long long)rows, (long long)cols, (long long)i, on_vulkan[i], on_host[i]);
      ++g_failures;
      break;
    }
  }
}

static void check_max_with_index(int64_t rows, int64_t cols) {
  static float x[kMaxElements], values[2][kMaxElements];
  static int32_t indices[2][kMaxElements];
  const int64_t dims[2] = {rows, cols};
  const size_t bytes[2] = {(size_t)rows * 4, (size_t)rows * 4};
  void* vulkan_out[2] = {values[0], indices[0]};
  void* host_out[2] = {values[1], indices[1]};
  int64_t r, distinct = 0;
  fill(x, rows * cols);
  CHECK_OK(run_op("vulkan", "MaxWithIndex", x, dims, NULL, 2, vulkan_out, bytes));
  CHECK_OK(run_op("interpreter", "MaxWithIndex", x, dims, NULL, 2, host_out, bytes));
  for (r = 1; r < rows; ++r) distinct += indices[1][r] != indices[1][0];
  CHECK(distinct > 0); /* the rows' maxima sit in different columns */
  for (r = 0; r < rows; ++r) {
    if (values[0][r] != values[1][r] || indices[0][r] != indices[1][r]) {
      fprintf(stderr,
              "MaxWithIndex [%lld, %lld] on vulkan: row %lld is (%g, %d), the host kernel's (%g, %d)\n",
              (long long)rows, (long long)cols, (long long)r, values[0][r], indices[0][r], values[1][r],
              indices[1][r]);
      ++g_failures;
      break;
    }
  }
}

/* A shader that binds more buffers than the op has, one whose frame binding
 * is a uniform buffer, and a push-constant frame past 128 bytes: compile
 * errors naming the op. */
static void test_mismatches(const unsigned char* row_scale, size_t row_scale_size,
                            const unsigned char* max_with_index, size_t max_with_index_size,
                            const unsigned char* zero_out_index, size_t zero_out_index_size,
                            const unsigned char* uniform_frame, size_t uniform_frame_size) {
  static const char* const many_ints[] = {"a0: int = 0",  "a1: int = 1",  "a2: int = 2",  "a3: int = 3",
                                          "a4: int = 4",  "a5: int = 5",  "a6: int = 6",  "a7: int = 7",
                                          "a8: int = 8",  "a9: int = 9",  "a10: int = 0", "a11: int = 1",
                                          "a12: int = 2", "a13: int = 3", "a14: int = 4", "a15: int = 5",
                                          "a16: int = 6", "a17: int = 7", "a18: int = 8", "a19: int = 9",
                                          "a20: int = 0", "a21: int = 1", "a22: int = 2", "a23: int = 3",
                                          "a24: int = 4", "a25: int = 5", "a26: int = 6", "a27: int = 7",
                                          "a28: int = 8", "a29: int = 9", "a30: int = 0", NULL};
  static const char* const none[] = {NULL};
  static const char* const x[] = {"x: float", NULL};
  static const char* const y[] = {"y: float", NULL};
  static const char* const int_y[] = {"y: int32", NULL};
  static float in[6] = {1, 2, 3, 4, 5, 6}, out[6];
  const int64_t dims[2] = {2, 3};
  const size_t bytes = sizeof out;
  void* outs[1] = {out};
  /* FrameProbe has one argument and one result: its frame is at binding 2, and binding 3 is nothing. */
  CHECK_OK(kiln_user_op_register_device_kernel("FrameProbe", "vulkan", KILN_TYPE_F32, max_with_index,
                                               max_with_index_size, "main"));
  EXPECT_ERROR(run_op("vulkan", "FrameProbe", in, dims, NULL, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
               "op 'FrameProbe' (instruction");
  EXPECT_ERROR(run_op("vulkan", "FrameProbe", in, dims, NULL, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
               "its shader uses (set 0, binding 3), which the op's frame does not have (1 argument(s) at "
               "bindings 0.., 1 result(s) after them, the call frame at binding 2");
  CHECK_OK(frame_ops_define("UniformFrame", none, x, y, NULL, frame_probe_kernel));
  CHECK_OK(kiln_user_op_register_device_kernel("UniformFrame", "vulkan", KILN_TYPE_F32, uniform_frame,
                                               uniform_frame_size, "main"));
  EXPECT_ERROR(run_op("vulkan", "UniformFrame", in, dims, NULL, 1, outs, &bytes),
               KILN_STATUS_INVALID_ARGUMENT, "op 'UniformFrame' (instruction");
  EXPECT_ERROR(run_op("vulkan", "UniformFrame", in, dims, NULL, 1, outs, &bytes),
               KILN_STATUS_INVALID_ARGUMENT,
               "its shader declares (set 0, binding 2) as something other than a storage buffer");
  /* A float array bound to an int32 result (row_scale's y, binding 1): refused, naming the binding. */
  CHECK_OK(frame_ops_define("FloatToInt", none, x, int_y, NULL, frame_probe_kernel));
  CHECK_OK(kiln_user_op_register_device_kernel("FloatToInt", "vulkan", KILN_TYPE_F32, row_scale,
                                               row_scale_size, "main"));
  EXPECT_ERROR(run_op("vulkan", "FloatToInt", in, dims, NULL, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
               "op 'FloatToInt' (instruction");
  EXPECT_ERROR(run_op("vulkan", "FloatToInt", in, dims, NULL, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
               "its shader's binding 1 is an array of float, but result 0 bound there is s32");
  /* Two counts and 31 int attributes: 132 bytes of push constants for a shader that declares them. */
  CHECK_OK(frame_ops_define("ManyInts", many_ints, x, y, NULL, frame_probe_kernel));
  CHECK_OK(kiln_user_op_register_device_kernel("ManyInts", "vulkan", KILN_TYPE_F32, zero_out_index,
                                               zero_out_index_size, "main"));
  EXPECT_ERROR(run_op("vulkan", "ManyInts", in, dims, NULL, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
               "op 'ManyInts' (instruction");
  EXPECT_ERROR(run_op("vulkan", "ManyInts", in, dims, NULL, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
               "its frame takes 132 bytes of push constants (a count per buffer, then the int and bool "
               "attributes); the limit is 128; read them from the call frame at binding 2");
}

int main(int argc, char** argv) {
  unsigned char* code[5] = {NULL, NULL, NULL, NULL, NULL};
  size_t size[5] = {0, 0, 0, 0, 0};
  int i;
  for (i = 1; i < argc && i <= 5; ++i) code[i - 1] = read_file(argv[i], &size[i - 1]);
  if (argc != 6 || code[0] == NULL || code[1] == NULL || code[2] == NULL || code[3] == NULL ||
      code[4] == NULL) {
    fprintf(stderr,
            "usage: %s ROW_SCALE.spv MAX_WITH_INDEX.spv ZERO_OUT_INDEX.spv UNIFORM_FRAME.spv ADD_TENSOR.spv "
            "(readable SPIR-V files)\n",
            argv[0]);
    return 2;
  }
  CHECK_OK(register_frame_ops());
  /* Workgroups of 32 invocations, as many as result 0 needs. */
  CHECK_OK(kiln_user_op_register_device_kernel_with_launch("RowScale", "vulkan", KILN_TYPE_F32, code[0],
                                                           size[0], "main", 32, 0));
  CHECK_OK(
      kiln_user_op_register_device_kernel("MaxWithIndex", "vulkan", KILN_TYPE_F32, code[1], size[1], "main"));
  check_row_scale(37, 53, "{scale = 0.75, row_weights = [1.0, -2.0, 0.5]}");
  check_row_scale(3, 1000, "{tag = \"wide\", scale = -1.5e-3, row_weights = [3.25]}");
  check_max_with_index(29, 41);
  check_max_with_index(1000, 3);
  CHECK_OK(
      kiln_user_op_register_device_kernel("AddTensor", "vulkan", KILN_TYPE_F32, code[4], size[4], "main"));
  check_add_tensor(13, 7, "{addend = tensor<f32[5], [1.5, -2, 0.25, 8, -0.125]>}");
  check_add_tensor(1, 300, "{addend = tensor<f32[2,2], [3, -1, 0.5, 7]>, bias = [tensor<s32[2], [5, 6]>]}");
  test_mismatches(code[0], size[0], code[1], size[1], code[2], size[2], code[3], size[3]);
  for (i = 0; i < 5; ++i) free(code[i]);
  if (g_failures != 0) fprintf(stderr, "%d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
