/* DLPack and raw device pointers on the cuda backend (kiln.h 0.2), from plain
 * C, on the fake driver (tests/cuda/fake_driver), whose device memory is host
 * memory and which records the last kernel launch: a cuda buffer exports as
 * kDLCUDA at its own device address (kiln_buffer_cuda_memory), which outlives
 * the handle until the deleter; a kDLCUDA tensor imports without a copy (the
 * buffer's address is the tensor's, and a kernel launched on it gets that
 * address), its deleter called once when the buffer goes; the raw-pointer
 * calls likewise; and every refusal (a GPU the client does not have, another
 * GPU's device, a host backend's device, strides that are not row-major, a
 * misaligned address, kDLVulkan) names the call and deletes once.
 * Run with KILN_CUDA_DRIVER naming the fake driver and KILN_FAKE_CUDA_DEVICES=2.
 * Exits non-zero when a check fails. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlpack_foreign.h"
#include "kiln/kiln.h"

enum { kMaxParameters = 16 };

typedef int (*last_launch_fn)(char* entry, size_t entry_size, unsigned* grid, unsigned* block,
                              uint64_t* parameters, size_t capacity);
static last_launch_fn g_last_launch = NULL;

static const float kValues[6] = {0, 10, 20, 30, 40, 50};

static kiln_client_t* new_client(const char* backend) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  options.backend = backend;
  kiln_client_t* client = NULL;
  CHECK_OK(kiln_client_create(&options, &client));
  return client;
}

static kiln_device_t* device_of(kiln_client_t* client, size_t index) {
  kiln_device_t* device = NULL;
  CHECK_OK(kiln_client_device(client, index, &device));
  return device;
}

static kiln_buffer_t* new_buffer(kiln_device_t* device) {
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(
      kiln_device_buffer_from_host(device, KILN_TYPE_F32, kDims, 2, NULL, kValues, sizeof kValues, &buffer));
  return buffer;
}

static uint64_t address_of(kiln_buffer_t* buffer, int expected_ordinal) {
  int ordinal = -1;
  uint64_t address = 0;
  CHECK_OK(kiln_buffer_cuda_memory(buffer, &ordinal, &address));
  CHECK(ordinal == expected_ordinal);
  CHECK(address != 0);
  return address;
}

static void check_values(kiln_buffer_t* buffer, int line) {
  float got[6] = {0};
  kiln_status_t* status = kiln_buffer_to_host(buffer, got, sizeof got);
  if (status != NULL) {
    fprintf(stderr, "line %d: %s\n", line, kiln_status_message(status));
    kiln_status_destroy(status);
    ++g_failures;
    return;
  }
  if (memcmp(got, kValues, sizeof got) != 0) {
    fprintf(stderr, "line %d: the buffer does not hold the values it was made from\n", line);
    ++g_failures;
  }
}
#define CHECK_VALUES(buffer) check_values((buffer), __LINE__)

/* Another library's tensor in GPU memory. */
static void foreign_init(Foreign* foreign, uint64_t address, int gpu) {
  foreign_init_at(foreign, (void*)(uintptr_t)address, kDLCUDA, gpu);
}

/* A cuda buffer exports its own GPU memory, on its GPU, and the tensor
 * keeps it after the handle and the client are gone. */
static void test_export(void) {
  kiln_client_t* client = new_client("cuda");
  if (client == NULL) return;
  for (size_t gpu = 0; gpu < 2; ++gpu) {
    kiln_buffer_t* buffer = new_buffer(device_of(client, gpu));
    const uint64_t address = address_of(buffer, (int)gpu);
    DLManagedTensorVersioned* versioned = NULL;
    DLManagedTensor* legacy = NULL;
    CHECK_OK(kiln_buffer_to_dlpack_versioned(buffer, &versioned));
    CHECK_OK(kiln_buffer_to_dlpack(buffer, &legacy));
    kiln_buffer_destroy(buffer);
    if (versioned == NULL || legacy == NULL) continue;
    CHECK(versioned->flags == DLPACK_FLAG_BITMASK_READ_ONLY); /* not copied */
    const DLTensor* tensor = &versioned->dl_tensor;
    CHECK(tensor->device.device_type == kDLCUDA && tensor->device.device_id == (int32_t)gpu);
    CHECK(legacy->dl_tensor.device.device_type == kDLCUDA &&
          legacy->dl_tensor.device.device_id == (int32_t)gpu);
    CHECK((uint64_t)(uintptr_t)tensor->data == address);
    CHECK((uint64_t)(uintptr_t)legacy->dl_tensor.data == address);
    CHECK(tensor->ndim == 2 && tensor->shape[0] == 2 && tensor->shape[1] == 3);
    CHECK(tensor->strides[0] == 3 && tensor->strides[1] == 1 && tensor->byte_offset == 0);
    CHECK(tensor->dtype.code == kDLFloat && tensor->dtype.bits == 32 && tensor->dtype.lanes == 1);
    /* The fake's device memory is host memory: the bytes are the buffer's. */
    CHECK(memcmp(tensor->data, kValues, sizeof kValues) == 0);
    if (gpu == 1) kiln_client_destroy(client);
    CHECK(memcmp(tensor->data, kValues, sizeof kValues) == 0);
    versioned->deleter(versioned);
    legacy->deleter(legacy);
  }
}

/* A foreign kDLCUDA tensor becomes a buffer over the same address: read back,
 * exported again (the same address), given to a kernel (the launch's
 * parameters hold it), and its deleter runs once, when the buffer goes. */
static void test_zero_copy_import(void) {
  kiln_client_t* client = new_client("cuda");
  if (client == NULL) return;
  kiln_device_t* device = device_of(client, 0);
  /* The foreign library's memory: here a Kiln buffer kept alive meanwhile. */
  kiln_buffer_t* owner = new_buffer(device);
  const uint64_t address = address_of(owner, 0);
  Foreign foreign;
  foreign_init(&foreign, address, 0);
  kiln_buffer_t* buffer = NULL;
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer));
  CHECK(address_of(buffer, 0) == address);
  CHECK(foreign.deletions == 0);
  CHECK_VALUES(buffer);
  DLManagedTensorVersioned* back = NULL;
  CHECK_OK(kiln_buffer_to_dlpack_versioned(buffer, &back));
  if (back != NULL) {
    CHECK((uint64_t)(uintptr_t)back->dl_tensor.data == address);
    back->deleter(back);
  }

  kiln_computation_t* computation = NULL;
  kiln_executable_t* executable = NULL;
  CHECK_OK(kiln_computation_from_hlo_text(kAddOne, strlen(kAddOne), &computation));
  CHECK_OK(kiln_client_compile(client, computation, NULL, &executable));
  kiln_buffer_t* result = NULL;
  size_t num_results = 0;
  CHECK_OK(kiln_executable_execute(executable, &buffer, 1, NULL, &result, 1, &num_results));
  char entry[64];
  unsigned grid[3], block[3];
  uint64_t parameters[kMaxParameters];
  const int count = g_last_launch(entry, sizeof entry, grid, block, parameters, kMaxParameters);
  int found = 0;
  for (int i = 0; i < count && i < kMaxParameters; ++i) found |= parameters[i] == address;
  CHECK(found);
  CHECK(foreign.deletions == 0);
  kiln_buffer_destroy(result);
  kiln_executable_destroy(executable);
  kiln_computation_destroy(computation);
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 1);

  /* The legacy struct, with a byte offset, and onto the second GPU. */
  kiln_buffer_t* owner1 = new_buffer(device_of(client, 1));
  const uint64_t address1 = address_of(owner1, 1);
  foreign_init(&foreign, address1 - 256, 1);
  foreign.legacy.dl_tensor.byte_offset = 256;
  CHECK_OK(kiln_device_buffer_from_dlpack(device_of(client, 1), &foreign.legacy, &buffer));
  CHECK(address_of(buffer, 1) == address1);
  CHECK_VALUES(buffer);
  kiln_buffer_destroy(buffer);
  CHECK(foreign.deletions == 1);

  /* A buffer exported and imported again: one address both ways. */
  DLManagedTensorVersioned* exported = NULL;
  CHECK_OK(kiln_buffer_to_dlpack_versioned(owner1, &exported));
  kiln_buffer_destroy(owner1);
  CHECK_OK(kiln_device_buffer_from_dlpack_versioned(device_of(client, 1), exported, &buffer));
  CHECK(address_of(buffer, 1) == address1);
  CHECK_VALUES(buffer);
  kiln_buffer_destroy(buffer);
  kiln_buffer_destroy(owner);
  kiln_client_destroy(client);
}

static int g_released = 0;
static void count_release(void* user_data) {
  CHECK(user_data == &g_released);
  ++g_released;
}

/* The raw-pointer calls DLPack is a layer over. */
static void test_raw_device_memory(void) {
  kiln_client_t* client = new_client("cuda");
  kiln_client_t* cpu = new_client("cpu");
  if (client == NULL || cpu == NULL) return;
  kiln_device_t* device = device_of(client, 0);
  kiln_buffer_t* owner = new_buffer(device);
  const uint64_t address = address_of(owner, 0);
  kiln_buffer_t* buffer = NULL;
  g_released = 0;
  CHECK_OK(kiln_device_buffer_alias_cuda_memory(device, KILN_TYPE_F32, kDims, 2, address, count_release,
                                                &g_released, &buffer));
  CHECK(address_of(buffer, 0) == address);
  CHECK_VALUES(buffer);
  CHECK(g_released == 0);
  kiln_buffer_destroy(buffer);
  CHECK(g_released == 1);

  g_released = 0;
  EXPECT_ERROR(kiln_device_buffer_alias_cuda_memory(device, KILN_TYPE_F32, kDims, 2, address + 2,
                                                    count_release, &g_released, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "kiln_device_buffer_alias_cuda_memory: cuda: device address 0x");
  CHECK(g_released == 1);
  g_released = 0;
  EXPECT_ERROR(kiln_device_buffer_alias_cuda_memory(device, KILN_TYPE_F32, kDims, 2, 0, count_release,
                                                    &g_released, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "which holds elements");
  CHECK(g_released == 1);
  g_released = 0;
  EXPECT_ERROR(kiln_device_buffer_alias_cuda_memory(device_of(cpu, 0), KILN_TYPE_F32, kDims, 2, address,
                                                    count_release, &g_released, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "the cpu backend cannot read CUDA device memory");
  CHECK(g_released == 1);
  g_released = 0;
  EXPECT_ERROR(kiln_device_buffer_alias_cuda_memory(NULL, KILN_TYPE_F32, kDims, 2, address, count_release,
                                                    &g_released, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "device");
  CHECK(g_released == 1);

  kiln_buffer_t* host = NULL;
  CHECK_OK(kiln_client_buffer_from_host(cpu, KILN_TYPE_F32, kDims, 2, NULL, kValues, sizeof kValues, &host));
  int ordinal = -1;
  uint64_t pointer = 0;
  EXPECT_ERROR(kiln_buffer_cuda_memory(host, &ordinal, &pointer), KILN_STATUS_INVALID_ARGUMENT,
               "kiln_buffer_cuda_memory: the buffer is on the cpu backend, not in CUDA device memory");
  CHECK(ordinal == -1 && pointer == 0);
  kiln_buffer_destroy(host);
  kiln_buffer_destroy(owner);
  kiln_client_destroy(cpu);
  kiln_client_destroy(client);
}

/* Every refusal names the call and deletes the tensor once. */
static void test_import_refusals(void) {
  kiln_client_t* client = new_client("cuda");
  kiln_client_t* cpu = new_client("cpu");
  if (client == NULL || cpu == NULL) return;
  kiln_device_t* device = device_of(client, 0);
  kiln_buffer_t* owner = new_buffer(device);
  const uint64_t address = address_of(owner, 0);
  kiln_buffer_t* buffer = NULL;
  Foreign foreign;

  foreign_init(&foreign, address, 5);
  EXPECT_ERROR(
      kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
      KILN_STATUS_INVALID_ARGUMENT,
      "kiln_device_buffer_from_dlpack_versioned: the tensor lives on CUDA GPU 5 (kDLCUDA), which this "
      "cuda client does not have (it has 2 GPUs)");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign, address, 1);
  EXPECT_ERROR(
      kiln_device_buffer_from_dlpack(device, &foreign.legacy, &buffer), KILN_STATUS_INVALID_ARGUMENT,
      "kiln_device_buffer_from_dlpack: the tensor lives on CUDA GPU 1 (kDLCUDA), the device given is "
      "cuda:0; import it onto device 1");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign, address, 0);
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device_of(cpu, 0), &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "the device is cpu's, which cannot read GPU memory");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign, address, 0);
  foreign.strides[0] = 1; /* a transposed view */
  foreign.strides[1] = 2;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT,
               "kiln_device_buffer_from_dlpack_versioned: the tensor's strides are not row-major");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign, address + 2, 0);
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "is not aligned to its element type (4 bytes)");
  CHECK(foreign.deletions == 1);

  foreign_init(&foreign, address, 0);
  foreign.versioned.dl_tensor.device.device_type = kDLVulkan;
  EXPECT_ERROR(kiln_device_buffer_from_dlpack_versioned(device, &foreign.versioned, &buffer),
               KILN_STATUS_INVALID_ARGUMENT, "(kDLVulkan); Vulkan memory belongs to the VkDevice");
  CHECK(foreign.deletions == 1);
  CHECK(buffer == NULL);

  kiln_buffer_destroy(owner);
  kiln_client_destroy(cpu);
  kiln_client_destroy(client);
}

int main(void) {
  const char* driver = getenv("KILN_CUDA_DRIVER");
  void* library = driver != NULL ? dlopen(driver, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (library != NULL) *(void**)&g_last_launch = dlsym(library, "kiln_fake_cuda_last_launch");
  if (g_last_launch == NULL) {
    fprintf(stderr, "KILN_CUDA_DRIVER must name the fake driver (tests/cuda/fake_driver)\n");
    return 2;
  }
  test_export();
  test_zero_copy_import();
  test_raw_device_memory();
  test_import_refusals();
  if (g_failures != 0) {
    fprintf(stderr, "cuda_dlpack_test: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("cuda_dlpack_test: kDLCUDA export and import and raw device pointers work, zero-copy\n");
  return 0;
}
