/* Registered ops whose PTX kernels take the call frame (kiln.h,
 * kiln_user_op_register_device_kernel) on the fake driver
 * (tests/cuda/fake_driver), which runs no kernel but records the last
 * launch; its device memory is host memory, so the test reads the frame
 * through the launch's last parameter: FrameProbe's frame, cell by cell,
 * against the layout kiln.h gives, and RowScale played on the host the way
 * frame_kernels.ptx (which ptxas checks in device_user_ops.ptxas_frame)
 * computes it, against its host kernel, and MaxWithIndex (two results) the
 * same way. Also the errors of a kernel whose
 * parameters are not its op's frame.
 * Usage: kiln_cuda_frame_test FRAME_KERNELS.ptx (KILN_CUDA_DRIVER names the fake driver) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frame_ops.h"
#include "read_file.h"

enum { kMaxElements = 4096, kMaxParameters = 16, kFrameVersion = 1 };

typedef int (*last_launch_fn)(char* entry, size_t entry_size, unsigned* grid, unsigned* block,
                              uint64_t* parameters, size_t capacity);
static last_launch_fn g_last_launch = NULL;

/* What a launch gave the kernel: its parameters (their count in num). */
typedef struct launch_t {
  char entry[64];
  uint64_t parameters[kMaxParameters];
  int num;
} launch_t;

/* What run_op's record_launch needs: where the launch goes and who plays it. */
typedef struct recording_t {
  launch_t* launch;
  void (*play)(const launch_t*);
} recording_t;

static void record_launch(void* context) {
  const recording_t* recording = (const recording_t*)context;
  unsigned grid[3], block[3];
  launch_t* launch = recording->launch;
  launch->num =
      g_last_launch(launch->entry, sizeof launch->entry, grid, block, launch->parameters, kMaxParameters);
  if (recording->play != NULL) recording->play(launch);
}

/* `op` over f32 `x` of dims `dims` (rank 2) with `attrs` on `backend`
 * (frame_ops.h's run_frame_op); on cuda the launch to *launch, then `play`
 * (may be NULL) runs the kernel on the host through the launch's pointers.
 * Its num_results results are read to outs[i] (bytes[i] each). */
static kiln_status_t* run_op(const char* backend, const char* op, const float* x, const int64_t* dims,
                             const char* attrs, void (*play)(const launch_t*), launch_t* launch,
                             size_t num_results, void** outs, const size_t* bytes) {
  recording_t recording = {launch, play};
  if (launch != NULL) launch->num = -1;
  return run_frame_op(backend, op, x, dims, attrs, launch != NULL ? record_launch : NULL, &recording,
                      num_results, outs, bytes);
}

static const uint64_t* frame_of(const launch_t* launch) {
  return (const uint64_t*)(uintptr_t)launch->parameters[launch->num - 1];
}

static float f32_half(uint64_t cell) {
  uint32_t bits = (uint32_t)cell;
  float value;
  memcpy(&value, &bits, 4);
  return value;
}

/* row_scale of frame_kernels.ptx, step for step, on the host. */
static void play_row_scale(const launch_t* launch) {
  const float* x = (const float*)(uintptr_t)launch->parameters[0];
  float* y = (float*)(uintptr_t)launch->parameters[1];
  const uint64_t* frame = frame_of(launch);
  const uint64_t buffers = frame[2] + frame[3];
  const uint64_t cols = frame[frame[8] + 1];
  const uint64_t* attrs = frame + 5 + 4 * buffers;
  const float scale = f32_half(frame[attrs[4 + 3] + 1]);
  const uint64_t weights = attrs[8 + 2], weights_at = attrs[8 + 3];
  uint64_t i;
  for (i = 0; i < launch->parameters[3]; ++i) {
    const float w = f32_half(frame[weights_at + 2 * ((i / cols) % weights) + 1]);
    y[i] = x[i] * scale * w;
  }
}

static void check_row_scale(int64_t rows, int64_t cols, const char* attrs) {
  static float x[kMaxElements], on_cuda[kMaxElements], on_host[kMaxElements];
  const int64_t dims[2] = {rows, cols};
  const size_t bytes = (size_t)(rows * cols) * 4;
  launch_t launch;
  int64_t i;
  for (i = 0; i < rows * cols; ++i) x[i] = (float)((i * 37) % 101) * 0.125f - 6.0f;
  void* cuda_out[1] = {on_cuda};
  void* host_out[1] = {on_host};
  CHECK_OK(run_op("cuda", "RowScale", x, dims, attrs, play_row_scale, &launch, 1, cuda_out, &bytes));
  CHECK(launch.num == 5 && strcmp(launch.entry, "row_scale") == 0);
  CHECK(launch.parameters[2] == (uint64_t)(rows * cols) && launch.parameters[3] == (uint64_t)(rows * cols));
  CHECK_OK(run_op("interpreter", "RowScale", x, dims, attrs, NULL, NULL, 1, host_out, &bytes));
  for (i = 0; i < rows * cols; ++i) {
    if (on_cuda[i] != on_host[i]) {
      fprintf(stderr, "RowScale %s on cuda: element %lld is %g, the host kernel's %g\n", attrs, (long long)i,
              on_cuda[i], on_host[i]);
      ++g_failures;
      break;
    }
  }
}

/* The frame of the last launch, copied while its executable lives. */
enum { kMaxFrameCells = 128 };
static uint64_t g_frame[kMaxFrameCells];
static void capture_frame(const launch_t* launch) {
  const uint64_t* frame = frame_of(launch);
  const uint64_t cells = frame[1] < kMaxFrameCells ? frame[1] : kMaxFrameCells;
  memcpy(g_frame, frame, cells * sizeof(uint64_t));
}

/* max_with_index of frame_kernels.ptx, step for step, on the host. */
static void play_max_with_index(const launch_t* launch) {
  const float* x = (const float*)(uintptr_t)launch->parameters[0];
  float* value = (float*)(uintptr_t)launch->parameters[1];
  int32_t* index = (int32_t*)(uintptr_t)launch->parameters[2];
  const uint64_t* frame = frame_of(launch);
  const uint64_t rows = frame[frame[8]], cols = frame[frame[8] + 1];
  uint64_t r, c;
  for (r = 0; r < rows; ++r) {
    float best = x[r * cols];
    uint32_t at = 0;
    for (c = 1; c < cols; ++c) {
      if (x[r * cols + c] > best) {
        best = x[r * cols + c];
        at = (uint32_t)c;
      }
    }
    value[r] = best;
    index[r] = (int32_t)at;
  }
}

/* MaxWithIndex's two results through the launch's three pointers, against its host kernel. */
static void check_max_with_index(int64_t rows, int64_t cols) {
  static float x[kMaxElements], values[2][kMaxElements];
  static int32_t indices[2][kMaxElements];
  const int64_t dims[2] = {rows, cols};
  const size_t bytes[2] = {(size_t)rows * 4, (size_t)rows * 4};
  void* cuda_out[2] = {values[0], indices[0]};
  void* host_out[2] = {values[1], indices[1]};
  launch_t launch;
  int64_t i, distinct = 0;
  for (i = 0; i < rows * cols; ++i) x[i] = (float)((i * 37) % 101) * 0.125f - 6.0f;
  CHECK_OK(run_op("cuda", "MaxWithIndex", x, dims, NULL, play_max_with_index, &launch, 2, cuda_out, bytes));
  CHECK_OK(run_op("interpreter", "MaxWithIndex", x, dims, NULL, NULL, NULL, 2, host_out, bytes));
  /* Three pointers, three counts (x's, then each result's), the frame. */
  CHECK(launch.num == 7 && strcmp(launch.entry, "max_with_index") == 0);
  CHECK(launch.parameters[3] == (uint64_t)(rows * cols) && launch.parameters[4] == (uint64_t)rows &&
        launch.parameters[5] == (uint64_t)rows);
  for (i = 1; i < rows; ++i) distinct += indices[1][i] != indices[1][0];
  CHECK(distinct > 0);
  for (i = 0; i < rows; ++i) {
    if (values[0][i] != values[1][i] || indices[0][i] != indices[1][i]) {
      fprintf(stderr, "MaxWithIndex on cuda: row %lld is (%g, %d), the host kernel's (%g, %d)\n",
              (long long)i, values[0][i], indices[0][i], values[1][i], indices[1][i]);
      ++g_failures;
      break;
    }
  }
}

static uint64_t f64_cell(double value) {
  uint64_t cell;
  memcpy(&cell, &value, 8);
  return cell;
}
static uint64_t f32_cell(float value) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  return bits;
}

/* FrameProbe's frame with its defaults over an f32[2, 3] x, cell by cell as
 * kiln.h lays it out: the header, two buffer records, ten attribute
 * records, then the values in the records' order. */
/* AddTensor's frame: each tensor attribute's record points at a header
 * (element type, rank, dims cell, elements cell), and the elements, packed
 * and zero-padded to whole cells, come after every other cell, in the
 * attributes' order. The fake driver runs no kernel: the row_scale entry,
 * whose parameters are AddTensor's too, carries the frame. */
static void test_tensor_attribute_frame(void) {
  static const float x[6] = {0, 1, 2, 3, 4, 5};
  static const float addend[3] = {1.5f, -2.0f, 0.25f};
  static const int32_t ints[2] = {5, -6};
  const int64_t dims[2] = {2, 3};
  float out[6];
  const size_t bytes = sizeof out;
  void* outs[1] = {out};
  const uint64_t* f = g_frame;
  launch_t launch;
  uint64_t h, list, e, e1, e2;
  CHECK_OK(run_op("cuda", "AddTensor", x, dims,
                  "{addend = tensor<f32[3], [1.5, -2, 0.25]>, bias = [tensor<s32[2], [5, -6]>, "
                  "tensor<u8[1,3], [7, 8, 9]>]}",
                  capture_frame, &launch, 1, outs, &bytes));
  if (launch.num != 5) {
    CHECK(launch.num == 5);
    return;
  }
  CHECK(f[0] == kFrameVersion && f[2] == 1 && f[3] == 1 && f[4] == 2);
  /* Records: 5 + 4 * 2 buffers = cell 13 (addend), 17 (bias). */
  CHECK(f[13] == KILN_OP_ATTR_TENSOR && f[14] == KILN_OP_ATTR_TENSOR && f[15] == 3);
  CHECK(f[17] == KILN_OP_ATTR_LIST && f[18] == KILN_OP_ATTR_TENSOR && f[19] == 2);
  h = f[16];
  list = f[20];
  if (h + 3 >= kMaxFrameCells || list + 7 >= kMaxFrameCells) {
    CHECK(!"a tensor header lies past the captured frame");
    return;
  }
  CHECK(f[h] == KILN_TYPE_F32 && f[h + 1] == 1 && f[f[h + 2]] == 3);
  CHECK(f[list] == KILN_TYPE_S32 && f[list + 1] == 1 && f[f[list + 2]] == 2);
  CHECK(f[list + 4] == KILN_TYPE_U8 && f[list + 5] == 2 && f[f[list + 6]] == 1 && f[f[list + 6] + 1] == 3);
  e = f[h + 3];
  e1 = f[list + 3];
  e2 = f[list + 7];
  /* After every other cell (the last dims are the u8 tensor's), in order,
   * each padded to whole cells; the frame ends with them. */
  CHECK(e > f[list + 6] + 1 && e1 == e + 2 && e2 == e1 + 1 && f[1] == e2 + 1);
  if (f[1] > kMaxFrameCells || e2 >= kMaxFrameCells) return;
  CHECK(memcmp(&f[e], addend, sizeof addend) == 0 && (f[e + 1] >> 32) == 0);
  CHECK(memcmp(&f[e1], ints, sizeof ints) == 0);
  CHECK(f[e2] == 0x090807u);
}

static void test_frame_bytes(void) {
  static const float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {2, 3};
  const uint64_t minus = (uint64_t)0 - 1; /* int64 cells hold two's complement */
  float out[6];
  void* outs[1] = {out};
  const size_t bytes = sizeof out;
  launch_t launch;
  uint64_t want[81];
  const uint64_t* frame;
  size_t k;
  const uint64_t records[12][4] = {
      {KILN_TYPE_F32, 2, 6, 53},                        /* x: f32[2,3], dims at 53 */
      {KILN_TYPE_F32, 2, 6, 55},                        /* y */
      {KILN_OP_ATTR_INT, KILN_OP_ATTR_INT, 1, 57},      /* n = -5 */
      {KILN_OP_ATTR_FLOAT, KILN_OP_ATTR_FLOAT, 1, 58},  /* f = 0.1: f64, then f32 */
      {KILN_OP_ATTR_BOOL, KILN_OP_ATTR_BOOL, 1, 60},    /* b = true */
      {KILN_OP_ATTR_STRING, KILN_OP_ATTR_STRING, 0, 0}, /* s: no device value */
      {KILN_OP_ATTR_TYPE, KILN_OP_ATTR_TYPE, 1, 61},    /* t = int32 */
      {KILN_OP_ATTR_SHAPE, KILN_OP_ATTR_SHAPE, 2, 62},  /* dims = shape<2,3> */
      {KILN_OP_ATTR_LIST, KILN_OP_ATTR_INT, 2, 64},     /* ints = [7, -8] */
      {KILN_OP_ATTR_LIST, KILN_OP_ATTR_FLOAT, 2, 66},   /* floats = [1.5, -2.25] */
      {KILN_OP_ATTR_LIST, KILN_OP_ATTR_TYPE, 2, 70},    /* types = [float, int32] */
      {KILN_OP_ATTR_LIST, KILN_OP_ATTR_SHAPE, 3, 72}};  /* shapes = [shape<4>, shape<>, shape<5,6>] */
  /* clang-format off */
  const uint64_t values[] = {
      2, 3, 2, 3,                                                        /* x's and y's dims */
      minus - 4,                                                         /* n */
      f64_cell(0.1), f32_cell(0.1f),                                     /* f */
      1,                                                                 /* b */
      KILN_TYPE_S32,                                                     /* t */
      2, 3,                                                              /* dims */
      7, minus - 7,                                                      /* ints */
      f64_cell(1.5), f32_cell(1.5f), f64_cell(-2.25), f32_cell(-2.25f),  /* floats */
      KILN_TYPE_F32, KILN_TYPE_S32,                                      /* types */
      1, 78, 0, 0, 2, 79,                                                /* shapes: (rank, dims cell) each */
      4, 5, 6};                                                          /* their dims */
  /* clang-format on */
  want[0] = kFrameVersion;
  want[1] = 81;
  want[2] = 1;
  want[3] = 1;
  want[4] = 10;
  for (k = 0; k < 12; ++k) memcpy(&want[5 + 4 * k], records[k], sizeof records[k]);
  memcpy(&want[53], values, sizeof values);
  CHECK(53 + sizeof values / sizeof values[0] == 81);
  CHECK_OK(run_op("cuda", "FrameProbe", x, dims, NULL, capture_frame, &launch, 1, outs, &bytes));
  if (launch.num != 7) {
    fprintf(stderr, "FrameProbe: %d launch parameters, expected 7\n", launch.num);
    ++g_failures;
    return;
  }
  /* The int and bool attributes are parameters too; the frame's pointer is last. */
  CHECK(launch.parameters[4] == minus - 4 && launch.parameters[5] == 1);
  CHECK(launch.parameters[6] != 0);
  frame = g_frame;
  CHECK(frame[1] == 81);
  for (k = 0; k < 81 && k < frame[1]; ++k) {
    if (frame[k] != want[k]) {
      fprintf(stderr, "FrameProbe: frame cell %zu is 0x%llx, expected 0x%llx\n", k,
              (unsigned long long)frame[k], (unsigned long long)want[k]);
      ++g_failures;
    }
  }
}

/* Kernels whose parameters are not their op's frame: compile errors naming the op. */
static void test_parameter_mismatches(const unsigned char* ptx, size_t size) {
  static const char narrow[] =
      ".version 7.0\n.target sm_75\n.address_size 64\n"
      ".visible .entry k(.param .u64 a, .param .u64 b, .param .u32 n, .param .u64 m) { ret; }\n";
  static const char* const none[] = {NULL};
  static const char* const x[] = {"x: float", NULL};
  static const char* const y[] = {"y: float", NULL};
  static const float in[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {2, 3};
  float out[6];
  void* outs[1] = {out};
  const size_t bytes = sizeof out;
  launch_t launch;
  /* Plain has two buffers and no int attribute: 4 parameters, or 5 with the frame; frame_probe declares 7. */
  CHECK_OK(frame_ops_define("Plain", none, x, y, NULL, frame_probe_kernel));
  CHECK_OK(kiln_user_op_register_device_kernel("Plain", "cuda", KILN_TYPE_F32, ptx, size, "frame_probe"));
  EXPECT_ERROR(run_op("cuda", "Plain", in, dims, NULL, NULL, &launch, 1, outs, &bytes),
               KILN_STATUS_INVALID_ARGUMENT, "op 'Plain' (instruction");
  EXPECT_ERROR(
      run_op("cuda", "Plain", in, dims, NULL, NULL, &launch, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
      "on cuda: its PTX entry 'frame_probe' declares 7 parameter(s); the op's frame has 4 or 5 (2 buffer "
      "pointer(s), 2 element count(s), 0 int/bool attribute(s), then optionally the call frame's pointer, "
      "each 8 bytes)");
  CHECK_OK(frame_ops_define("Narrow", none, x, y, NULL, frame_probe_kernel));
  CHECK_OK(
      kiln_user_op_register_device_kernel("Narrow", "cuda", KILN_TYPE_F32, narrow, sizeof narrow - 1, "k"));
  EXPECT_ERROR(run_op("cuda", "Narrow", in, dims, NULL, NULL, &launch, 1, outs, &bytes),
               KILN_STATUS_INVALID_ARGUMENT, "op 'Narrow' (instruction");
  EXPECT_ERROR(
      run_op("cuda", "Narrow", in, dims, NULL, NULL, &launch, 1, outs, &bytes), KILN_STATUS_INVALID_ARGUMENT,
      "on cuda: parameter 2 ('n') of its PTX entry 'k' is 4 bytes; every parameter of the frame is 8");
}

int main(int argc, char** argv) {
  const char* driver = getenv("KILN_CUDA_DRIVER");
  void* library;
  size_t size = 0;
  unsigned char* ptx;
  if (argc != 2 || (ptx = read_file(argv[1], &size)) == NULL) {
    fprintf(stderr, "usage: %s FRAME_KERNELS.ptx (a readable PTX file)\n", argv[0]);
    return 2;
  }
  library = driver != NULL ? dlopen(driver, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (library != NULL) *(void**)&g_last_launch = dlsym(library, "kiln_fake_cuda_last_launch");
  if (g_last_launch == NULL) {
    fprintf(stderr, "KILN_CUDA_DRIVER must name the fake driver (tests/cuda/fake_driver)\n");
    return 2;
  }
  CHECK_OK(register_frame_ops());
  CHECK_OK(kiln_user_op_register_device_kernel("RowScale", "cuda", KILN_TYPE_F32, ptx, size, "row_scale"));
  CHECK_OK(
      kiln_user_op_register_device_kernel("FrameProbe", "cuda", KILN_TYPE_F32, ptx, size, "frame_probe"));
  test_frame_bytes();
  CHECK_OK(kiln_user_op_register_device_kernel("AddTensor", "cuda", KILN_TYPE_F32, ptx, size, "row_scale"));
  test_tensor_attribute_frame();
  check_row_scale(37, 53, "{scale = 0.75, row_weights = [1.0, -2.0, 0.5]}");
  check_row_scale(3, 1000, "{scale = -1.5e-3, row_weights = [3.25]}");
  CHECK_OK(kiln_user_op_register_device_kernel("MaxWithIndex", "cuda", KILN_TYPE_F32, ptx, size,
                                               "max_with_index"));
  check_max_with_index(29, 41);
  check_max_with_index(1000, 3);
  test_parameter_mismatches(ptx, size);
  free(ptx);
  dlclose(library);
  if (g_failures != 0) fprintf(stderr, "%d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
