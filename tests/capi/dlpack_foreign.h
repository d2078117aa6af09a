/* What the C tests of DLPack (tests/capi/capi_dlpack_test.c on the host
 * backends, tests/cuda/cuda_dlpack_test.c on the fake CUDA driver) share: the
 * DLPack 1.x struct where the system's dlpack.h predates it, the x + 1
 * program over f32[2,3], and a foreign framework's f32[2,3] tensor offered as
 * both managed structs, whose deleters count their calls. Each test is one
 * C99 translation unit, so everything here is static. */
#ifndef KILN_TESTS_CAPI_DLPACK_FOREIGN_H_
#define KILN_TESTS_CAPI_DLPACK_FOREIGN_H_

#include <stdint.h>
#include <string.h>

#include <dlpack/dlpack.h>

/* Debian's dlpack.h is 0.6; a consumer of DLPack 1.x on it declares the
 * versioned struct as DLPack 1.0 lays it out. */
#ifndef DLPACK_MAJOR_VERSION
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif

static const char kAddOne[] =
    "HloModule add_one\n"
    "ENTRY e {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  one = f32[] constant(1)\n"
    "  ones = f32[2,3] broadcast(one), dimensions={}\n"
    "  ROOT y = f32[2,3] add(x, ones)\n"
    "}\n";

static const int64_t kDims[] = {2, 3};

/* A foreign f32[2,3] tensor, row-major with strides, as a versioned and a
 * legacy managed tensor over the same memory; both deleters add to
 * `deletions`. `data` is storage for a host tensor's elements (after
 * `shape`, so that `shape` is an address before them). */
typedef struct {
  int64_t shape[2];
  int64_t strides[2];
  int deletions;
  DLManagedTensorVersioned versioned;
  DLManagedTensor legacy;
  float data[6];
} Foreign;

static void delete_versioned(DLManagedTensorVersioned* self) { ++((Foreign*)self->manager_ctx)->deletions; }
static void delete_legacy(DLManagedTensor* self) { ++((Foreign*)self->manager_ctx)->deletions; }

/* Resets `foreign` to a tensor over `data` on (device_type, device_id). */
static void foreign_init_at(Foreign* foreign, void* data, DLDeviceType device_type, int32_t device_id) {
  memset(foreign, 0, sizeof *foreign);
  foreign->shape[0] = 2;
  foreign->shape[1] = 3;
  foreign->strides[0] = 3;
  foreign->strides[1] = 1;
  DLTensor tensor;
  memset(&tensor, 0, sizeof tensor);
  tensor.data = data;
  tensor.device.device_type = device_type;
  tensor.device.device_id = device_id;
  tensor.ndim = 2;
  tensor.dtype.code = kDLFloat;
  tensor.dtype.bits = 32;
  tensor.dtype.lanes = 1;
  tensor.shape = foreign->shape;
  tensor.strides = foreign->strides;
  foreign->versioned.version.major = 1;
  foreign->versioned.version.minor = 1;
  foreign->versioned.manager_ctx = foreign;
  foreign->versioned.deleter = delete_versioned;
  foreign->versioned.dl_tensor = tensor;
  foreign->legacy.manager_ctx = foreign;
  foreign->legacy.deleter = delete_legacy;
  foreign->legacy.dl_tensor = tensor;
}

#endif /* KILN_TESTS_CAPI_DLPACK_FOREIGN_H_ */
