/* DLPack exchange (kiln.h 0.2), from plain C: export of buffers as versioned
 * and legacy tensors (the host backends hand out the buffer's own memory,
 * checked by pointer equality; the others a flagged copy), import of foreign
 * tensors read in place on cpu (a round trip returns the caller's pointer),
 * and every refusal, each calling the tensor's deleter exactly once.
 * Exits non-zero when a check fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlpack_foreign.h"
#include "kiln/kiln.h"

#define BOOL_CODE 6 /* kDLBool, DLPack 0.8 */

static kiln_client_t* new_client(const char* backend) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  options.backend = backend;
  kiln_client_t* client = NULL;
  kiln_status_t* status = kiln_client_create(&options, &client);
  if (status != NULL) {
    /* A backend this machine cannot run is said, loudly, by the caller. */
    kiln_status_destroy(status);
    return NULL;
  }
  return client;
}

static kiln_device_t* first_device(kiln_client_t* client) {
  kiln_device_t* device = NULL;
  CHECK_OK(kiln_client_device(client, 0, &device));
  return device;
}

/* A foreign host tensor: a framework's array, 0, 10, ..., 50. */
static void foreign_init(Foreign* foreign) {
  foreign_init_at(foreign, foreign->data, kDLCPU, 0);
  for (int i = 0; i < 6; ++i) foreign->data[i] = (float)(i * 10);
}

static void check_values(kiln_buffer_t* buffer, float scale, float offset, int line) {
  float got[6];
  kiln_status_t* status = kiln_buffer_to_host(buffer, got, sizeof got);
  if (status != NULL) {
    fprintf(stderr, "line %d: %s\n", line, kiln_status_message(status));
    kiln_status_destroy(status);
    ++g_failures;
    return;
  }
  for (int i = 0; i < 6; ++i) {
    if (got[i] != (float)i * scale + offset) {
      fprintf(stderr, "line %d: element %d is %g, expected %g\n", line, i, got[i], (float)i * scale + offset);
      ++g_failures;
    }
  }
}
#define CHECK_VALUES(buffer, scale, offset) check_values((buffer), (scale), (offset), __LINE__)

static void test_export(const char* backend, int host_memory) {
  kiln_client_t* client = new_client(backend);
  if (client == NULL) {
    printf("capi_dlpack_test: SKIPPING export from '%s': the backend cannot run here\n", backend);
    return;
  }
  const float values[6] = {0, 1, 2, 3, 4, 5};
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(
      kiln_client_buffer_from_host(client, KILN_TYPE_F32, kDims, 2, NULL, values, sizeof values, &buffer));
  DLManagedTensorVersioned* versioned = NULL;
  CHECK_OK(kiln_buffer_to_dlpack_versioned(buffer, &versioned));
  DLManagedTensor* legacy = NULL;
  CHECK_OK(kiln_buffer_to_dlpack(buffer, &legacy));
  /* The tensors outlive the handle and the client. */
  kiln_buffer_destroy(buffer);
  kiln_client_destroy(client);
  if (versioned == NULL || legacy == NULL) return;
  CHECK(versioned->version.major == 1 && versioned->version.minor == 0);
  CHECK((versioned->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(((versioned->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0) == !host_memory);
  const DLTensor* tensor = &versioned->dl_tensor;
  CHECK(tensor->device.device_type == kDLCPU && tensor->device.device_id == 0);
  CHECK(tensor->ndim == 2 && tensor->shape[0] == 2 && tensor->shape[1] == 3);
  CHECK(tensor->strides != NULL && tensor->strides[0] == 3 && tensor->strides[1] == 1);
  CHECK(tensor->dtype.code == kDLFloat && tensor->dtype.bits == 32 && tensor->dtype.lanes == 1);
  CHECK(tensor->byte_offset == 0);
  CHECK(memcmp(tensor->data, values, sizeof values) == 0);
  CHECK(memcmp(legacy->dl_tensor.data, values, sizeof values) == 0);
  /* Both views of one host buffer share its memory. */
  if (host_memory) CHECK(legacy->dl_tensor.data == tensor->data);
  versioned->deleter(versioned);
  legacy->deleter(legacy);
}

static void test_zero_copy_round_trip(void) {
  kiln_client_t* client = new_client("cpu");
  if (client == NULL) return;
  kiln_device_t* device = first_device(client);
  Foreign foreign;
  foreign_init(&foreign);
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer));
  int is_alias = 0;
  CHECK_OK(kiln_buffer_is_host_alias(buffer, &is_alias));
  CHECK(is_alias == 1);
  CHECK(foreign.deletions == 0);
  CHECK_VALUES(buffer, 10, 0);
  /* Exported again: the very same memory. */
  DLManagedTensorVersioned* back = NULL;
  CHECK_OK(kiln_buffer_to_dlpack_versioned(buffer, &back));
  if (back != NULL) {
    CHECK(back->dl_tensor.data == (void*)foreign.data);
    back->deleter(back);
  }
  /* Computed on in place. */
  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  CHECK_OK(kiln_computation_from_hlo_text(kAddOne, strlen(kAddOne), &computation));
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  CHECK_OK(kiln_executable_execute(executable, &buffer, 1, NULL, &result, 1, &num_results));
  CHECK_VALUES(result, 10, 1);
  CHECK(foreign.deletions == 0);
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 1);

  /* The legacy struct, and a byte offset. */
  foreign_init(&foreign);
  foreign.legacy.dl_tensor.data = foreign.shape; /* some address before the data */
  foreign.legacy.dl_tensor.byte_offset = (uint64_t)((char*)foreign.data - (char*)foreign.shape);
  CHECK_OK(kiln_device_buffer_from_dlpack(device, &foreign.legacy, &buffer));
  CHECK_VALUES(buffer, 10, 0);
  CHECK_OK(kiln_buffer_to_dlpack_versioned(buffer, &back));
  if (back != NULL) {
    CHECK(back->dl_tensor.data == (void*)foreign.data);
    back->deleter(back);
  }
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 1);

  /* NULL strides mean row-major; size-1 dimensions may carry any stride. */
  foreign_init(&foreign);
  foreign.versioned.dl_tensor.strides = NULL;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer));
  CHECK_VALUES(buffer, 10, 0);
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 1);
  foreign_init(&foreign);
  foreign.shape[0] = 1;
  foreign.shape[1] = 6;
  foreign.strides[0] = 99;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer));
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 1);

  kiln_buffer_destroy(result);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_client_destroy(client);
}

static void test_import_refusals(void) {
  kiln_client_t* client = new_client("cpu");
  if (client == NULL) return;
  kiln_device_t* device = first_device(client);
  kiln_buffer_t* buffer = NULL;
  Foreign foreign;

  foreign_init(&foreign);
  foreign.versioned.version.major = 2;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "DLPack 2.1");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.versioned.dl_tensor.device.device_type = kDLCUDA;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "cpu's, which cannot read GPU memory");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.versioned.dl_tensor.device.device_type = kDLVulkan;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "(kDLVulkan); Vulkan memory belongs to the VkDevice");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.versioned.dl_tensor.device.device_type = kDLOpenCL;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "device type 4");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.strides[0] = 1; /* a transposed view */
  foreign.strides[1] = 2;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "not row-major");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.versioned.dl_tensor.dtype.lanes = 4;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "lanes");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.versioned.dl_tensor.dtype.bits = 24;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "24 bits");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  foreign.legacy.dl_tensor.shape = NULL;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack(device, &foreign.legacy, &buffer), KILN_STATUS_INVALID_ARGUMENT,
               "shape");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign);
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(NULL, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "device");
  CHECK(foreign.deletions == 1);
  EXPECT_ERROR(kiln_device_buffer_from_dlpack(device, NULL, &buffer), KILN_STATUS_INVALID_ARGUMENT, "tensor");
  CHECK(buffer == NULL);
  EXPECT_ERROR(kiln_buffer_to_dlpack_versioned(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "buffer");
  EXPECT_ERROR(kiln_buffer_to_dlpack(NULL, NULL), KILN_STATUS_INVALID_ARGUMENT, "buffer");

  /* A tensor without a deleter is fine. */
  foreign_init(&foreign);
  foreign.versioned.deleter = NULL;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer));
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 0);

  /* Booleans arrive as PRED (copied, normalised). */
  uint8_t flags[3] = {1, 0, 1};
  int64_t shape[1] = {3};
  DLManagedTensorVersioned bools;
  memset(&bools, 0, sizeof bools);
  bools.version.major = 1;
  bools.dl_tensor.data = flags;
  bools.dl_tensor.device.device_type = kDLCPU;
  bools.dl_tensor.ndim = 1;
  bools.dl_tensor.dtype.code = BOOL_CODE;
  bools.dl_tensor.dtype.bits = 8;
  bools.dl_tensor.dtype.lanes = 1;
  bools.dl_tensor.shape = shape;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device, &bools, &buffer));
  kiln_element_type_t type = KILN_TYPE_INVALID;
  CHECK_OK(kiln_buffer_element_type(buffer, &type));
  CHECK(type == KILN_TYPE_PRED);
  DLManagedTensorVersioned* back = NULL;
  CHECK_OK(kiln_buffer_to_dlpack_versioned(buffer, &back));
  if (back != NULL) {
    CHECK(back->dl_tensor.dtype.code == BOOL_CODE && back->dl_tensor.dtype.bits == 8);
    CHECK(memcmp(back->dl_tensor.data, flags, 3) == 0);
    back->deleter(back);
  }
  kiln_buffer_destroy(buffer);
  kiln_client_destroy(client);
}

static void test_interpreter_import_copies(void) {
  kiln_client_t* client = new_client("interpreter");
  if (client == NULL) return;
  Foreign foreign;
  foreign_init(&foreign);
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(first_device(client), &foreign.versioned, &buffer));
  CHECK(foreign.deletions == 1);
  int is_alias = 1;
  CHECK_OK(kiln_buffer_is_host_alias(buffer, &is_alias));
  CHECK(is_alias == 0);
  CHECK_VALUES(buffer, 10, 0);
  kiln_buffer_destroy(buffer);
  kiln_client_destroy(client);
}

int main(void) {
  size_t backends = 0;
  CHECK_OK(kiln_backend_count(&backends));
  for (size_t i = 0; i < backends; ++i) {
    const char* backend = NULL;
    CHECK_OK(kiln_backend_name(i, &backend));
    if (backend == NULL) continue;
    /* cuda hands out its GPU memory (kDLCUDA): tests/cuda/cuda_dlpack_test.c. */
    if (strcmp(backend, "cuda") == 0) continue;
    const int host = strcmp(backend, "cpu") == 0 || strcmp(backend, "interpreter") == 0;
    test_export(backend, host);
  }
  test_zero_copy_round_trip();
  test_import_refusals();
  test_interpreter_import_copies();
  if (g_failures != 0) {
    fprintf(stderr, "capi_dlpack_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("capi_dlpack_test: DLPack export and import work, zero-copy on the host\n");
  return 0;
}
