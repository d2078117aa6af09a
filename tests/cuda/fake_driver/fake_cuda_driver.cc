// A fake CUDA driver for testing Kiln's CUDA backend on machines without a
// GPU: a shared library exporting every entry point of driver_api.h under
// its real symbol name, loaded through KILN_CUDA_DRIVER. Device memory is
// host memory (a CUdeviceptr is the address), so copies really move data;
// modules are kept as text and searched for their entry points; launches
// are checked and counted but run nothing, since PTX cannot run here (a
// test may have the fake write, after a launch, what the kernel would:
// kiln_fake_cuda_write_after_launch).
//
// It keeps the rules of the real driver that a backend can get wrong
// without noticing on a machine where everything is host memory: calls
// need a current context on the calling thread, zero-byte allocations and
// copies outside an allocation are refused, PTX for a newer GPU or a newer
// ISA than the driver knows is refused, and launch parameters the kernel
// uses as global pointers must point into live device memory.
//
// Environment (read by cuInit):
//   KILN_FAKE_CUDA_DEVICES          devices reported (default 1)
//   KILN_FAKE_CUDA_MEMORY_BYTES     cap on live allocations (default 1 GiB)
//   KILN_FAKE_CUDA_DRIVER_VERSION   cuDriverGetVersion, e.g. 12040 (default 12080)
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "backends/cuda/driver_api.h"
#include "tests/cuda/fake_driver/ptx_text.h"

// The handle types of driver_api.h are pointers to incomplete structs in
// kiln::cuda; here they get bodies.
namespace kiln::cuda {
struct CUctx_st {
  int device = 0;
  int retains = 0;  // primary context: alive while retained
};
struct CUmod_st {
  std::string ptx;
  std::vector<fake::PtxEntry> entries;
  std::map<std::string, std::unique_ptr<struct CUfunc_st>> functions;
};
struct CUfunc_st {
  CUmod_st* module = nullptr;
  const fake::PtxEntry* entry = nullptr;
};
struct CUstream_st {};
}  // namespace kiln::cuda

namespace {

using namespace kiln::cuda;

// Codes the fake returns beyond the ones driver_api.h names (values as the
// driver ABI defines them).
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kIllegalAddress = 700;

constexpr char kDeviceName[] = "Kiln fake GPU";
constexpr int kComputeCapability = 80;
constexpr size_t kTotalMemory = size_t{1} << 30;
constexpr int kMaxDevices = 8;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxGridX = 2147483647u;
constexpr unsigned kMaxGridYZ = 65535u;
constexpr unsigned kMaxBlockZ = 64u;
constexpr size_t kAllocationAlignment = 256;  // what cuMemAlloc guarantees

struct State {
  std::mutex mutex;
  bool initialized = false;
  int device_count = 1;
  size_t memory_cap = kTotalMemory;
  int driver_version = 12080;
  CUctx_st contexts[kMaxDevices];
  std::map<CUdeviceptr, size_t> allocations;  // base -> bytes
  size_t live_bytes = 0;
  size_t peak_bytes = 0;  // the most live_bytes since kiln_fake_cuda_reset_peak_bytes
  std::set<CUmod_st*> modules;
  std::set<CUstream_st*> streams;
  int launches = 0;
  // Device-to-device copies (cuMemcpyDtoDAsync) of at least one byte, and
  // their bytes, for kiln_fake_cuda_device_copies.
  int device_copies = 0;
  size_t device_copy_bytes = 0;
  // The last launch, for kiln_fake_cuda_last_launch: the entry point, the
  // grid and block, and each parameter's value (as many bytes as its PTX
  // declaration, widened to 64 bits).
  std::string last_entry;
  unsigned last_grid[3] = {0, 0, 0};
  unsigned last_block[3] = {0, 0, 0};
  std::vector<uint64_t> last_parameters;
  // Every launch so far (the newest kLaunchLogCapacity), for
  // kiln_fake_cuda_launch_at; launch_log[i] is launch log_start + i.
  struct LaunchRecord {
    std::string entry;
    unsigned grid[3] = {0, 0, 0};
    unsigned block[3] = {0, 0, 0};
    std::vector<uint64_t> parameters;
  };
  std::vector<LaunchRecord> launch_log;
  int log_start = 0;
  // cuStreamSynchronize and cuCtxSynchronize calls that succeeded.
  int synchronizations = 0;
};

constexpr size_t kLaunchLogCapacity = 1 << 16;

State& state() {
  static State* instance = new State();  // never destroyed: the driver outlives every caller
  return *instance;
}

thread_local CUctx_st* current_context = nullptr;

// Reads a non-negative integer from the environment; false when it is set
// but not a number (the fake then refuses cuInit, loudly).
bool EnvInteger(const char* name, long long* value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == 0) return true;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != 0 || parsed < 0) {
    std::fprintf(stderr, "fake cuda driver: %s='%s' is not a non-negative integer\n", name, text);
    return false;
  }
  *value = parsed;
  return true;
}

// The newest PTX ISA (times 10) a driver of `version` JIT-compiles: CUDA
// 11.x reads 7.x, 12.0-12.5 read 8.0-8.5, 12.6 reads 8.5, 12.8 and 12.9 read
// 8.7 and 8.8, 13.x reads 9.0.
int MaxPtxVersion(int version) {
  const int major = version / 1000;
  const int minor = version % 1000 / 10;
  if (major <= 11) return 70 + minor;
  if (major == 12) return minor <= 5 ? 80 + minor : minor == 6 ? 85 : 79 + minor;
  return 90;
}

// CUDA_SUCCESS when the calling thread has a live current context (what
// every call touching memory, modules or launches needs).
CUresult RequireContext(const State& s) {
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (current_context == nullptr || current_context->retains == 0) return kInvalidContext;
  return CUDA_SUCCESS;
}

// True when [address, address + bytes) lies inside one live allocation.
bool InsideAllocation(const State& s, CUdeviceptr address, size_t bytes) {
  auto next = s.allocations.upper_bound(address);
  if (next == s.allocations.begin()) return false;
  const auto& [base, size] = *std::prev(next);
  return address - base <= size && bytes <= size - (address - base);
}

// Writes `message` into the JIT log buffer option pair (`buffer_option`,
// `size_option`) when the caller passed both, and stores the bytes written
// back into the size option's value, as the driver does.
void WriteJitLog(unsigned count, const CUjit_option* options, void** values, CUjit_option buffer_option,
                 CUjit_option size_option, std::string_view message) {
  char* buffer = nullptr;
  void** size_value = nullptr;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == buffer_option) buffer = static_cast<char*>(values[i]);
    if (options[i] == size_option) size_value = &values[i];
  }
  if (buffer == nullptr || size_value == nullptr) return;
  const auto capacity = static_cast<size_t>(reinterpret_cast<uintptr_t>(*size_value));
  if (capacity == 0) return;
  const size_t written = std::min(message.size(), capacity - 1);
  std::memcpy(buffer, message.data(), written);
  buffer[written] = 0;
  *size_value = reinterpret_cast<void*>(static_cast<uintptr_t>(written));
}

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kInvalidDevice, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {kInvalidContext, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain"},
    {kInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {kIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
};

const ErrorText* FindError(CUresult code) {
  for (const ErrorText& error : kErrors) {
    if (error.code == code) return &error;
  }
  return nullptr;
}

// Copies between host memory and [device, device + bytes), which must lie
// inside one allocation.
CUresult CheckedCopy(void* to, const void* from, CUdeviceptr device, size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (bytes == 0) return CUDA_SUCCESS;
  if (to == nullptr || from == nullptr || !InsideAllocation(s, device, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(to, from, bytes);
  return CUDA_SUCCESS;
}

bool KnownStream(const State& s, CUstream stream) {
  return stream == nullptr || s.streams.count(stream) != 0;
}

// What kiln_fake_cuda_write_after_launch asked for: after each launch of an
// entry whose name starts with `entry_prefix`, `bytes` go to the address
// in pointer parameter `parameter`, standing for what the kernel would
// have written there (the fake runs no kernel).
struct AfterLaunchWrite {
  std::string entry_prefix;
  int parameter = 0;
  std::vector<unsigned char> bytes;
};

AfterLaunchWrite& after_launch_write() {
  static AfterLaunchWrite* instance = new AfterLaunchWrite();  // guarded by state().mutex
  return *instance;
}

// Does the write asked for after a launch of `entry` with `parameters`
// (declared as `declared`); a target outside device memory is the illegal
// address a real kernel writing there would meet.
CUresult WriteAfterLaunch(const State& s, const std::string& entry,
                          const std::vector<kiln::cuda::fake::PtxParameter>& declared, void** parameters) {
  const AfterLaunchWrite& write = after_launch_write();
  if (write.bytes.empty() || entry.compare(0, write.entry_prefix.size(), write.entry_prefix) != 0)
    return CUDA_SUCCESS;
  const auto index = static_cast<size_t>(write.parameter);
  if (index >= declared.size() || !declared[index].pointer) return CUDA_ERROR_INVALID_VALUE;
  CUdeviceptr address = 0;
  std::memcpy(&address, parameters[index], sizeof(address));
  if (!InsideAllocation(s, address, write.bytes.size())) return kIllegalAddress;
  std::memcpy(reinterpret_cast<void*>(address), write.bytes.data(), write.bytes.size());
  return CUDA_SUCCESS;
}

}  // namespace

#define KILN_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

KILN_FAKE_EXPORT CUresult cuInit(unsigned flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.initialized) return CUDA_SUCCESS;
  long long devices = 1;
  long long cap = static_cast<long long>(kTotalMemory);
  long long version = s.driver_version;
  if (!EnvInteger("KILN_FAKE_CUDA_DEVICES", &devices) || !EnvInteger("KILN_FAKE_CUDA_MEMORY_BYTES", &cap) ||
      !EnvInteger("KILN_FAKE_CUDA_DRIVER_VERSION", &version) || devices > kMaxDevices) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  s.device_count = static_cast<int>(devices);
  s.memory_cap = static_cast<size_t>(cap);
  s.driver_version = static_cast<int>(version);
  for (int i = 0; i < kMaxDevices; ++i) s.contexts[i].device = i;
  s.initialized = true;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard lock(s.mutex);
  *version = s.driver_version;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuGetErrorName(CUresult code, const char** name) {
  const ErrorText* error = FindError(code);
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *name = error != nullptr ? error->name : nullptr;
  return error != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

KILN_FAKE_EXPORT CUresult cuGetErrorString(CUresult code, const char** text) {
  const ErrorText* error = FindError(code);
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *text = error != nullptr ? error->text : nullptr;
  return error != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

KILN_FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = s.device_count;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= s.device_count) return kInvalidDevice;
  *device = ordinal;
  return CUDA_SUCCESS;
}

// CUDA_SUCCESS when `device` is one the fake reports.
static CUresult CheckDevice(CUdevice device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return device >= 0 && device < s.device_count ? CUDA_SUCCESS : kInvalidDevice;
}

KILN_FAKE_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), "%s", kDeviceName);
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = kMaxThreadsPerBlock; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = static_cast<int>(kMaxGridX); return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 108; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = kComputeCapability / 10; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = kComputeCapability % 10; return CUDA_SUCCESS;
    // An attribute driver_api.h does not name: add it there and here.
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

KILN_FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  State& s = state();
  std::lock_guard lock(s.mutex);
  ++s.contexts[device].retains;
  *context = &s.contexts[device];
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (CUresult r = CheckDevice(device); r != CUDA_SUCCESS) return r;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.contexts[device].retains == 0) return kInvalidContext;
  --s.contexts[device].retains;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  const bool ours = context >= s.contexts && context < s.contexts + kMaxDevices;
  if (context != nullptr && (!ours || context->retains == 0)) return kInvalidContext;
  current_context = context;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuCtxSynchronize() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const CUresult r = RequireContext(s);  // every operation has already completed
  if (r == CUDA_SUCCESS) ++s.synchronizations;
  return r;
}

KILN_FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (free_bytes == nullptr || total_bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const size_t usable = std::min(s.memory_cap, kTotalMemory);
  *free_bytes = usable > s.live_bytes ? usable - s.live_bytes : 0;
  *total_bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  // The real driver refuses zero bytes too.
  if (pointer == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > s.memory_cap - std::min(s.memory_cap, s.live_bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  const size_t rounded = (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  void* memory = std::aligned_alloc(kAllocationAlignment, rounded);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  s.allocations[*pointer] = bytes;
  s.live_bytes += bytes;
  s.peak_bytes = std::max(s.peak_bytes, s.live_bytes);
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (pointer == 0) return CUDA_SUCCESS;
  auto allocation = s.allocations.find(pointer);
  if (allocation == s.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  s.live_bytes -= allocation->second;
  s.allocations.erase(allocation);
  std::free(reinterpret_cast<void*>(pointer));
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void* from, size_t bytes) {
  return CheckedCopy(reinterpret_cast<void*>(to), from, to, bytes);
}

KILN_FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void* to, CUdeviceptr from, size_t bytes) {
  return CheckedCopy(to, reinterpret_cast<const void*>(from), from, bytes);
}

KILN_FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* to, CUdeviceptr from, size_t bytes, CUstream stream) {
  {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!KnownStream(s, stream)) return kInvalidHandle;
  }
  return CheckedCopy(to, reinterpret_cast<const void*>(from), from, bytes);
}

KILN_FAKE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                                               CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (!KnownStream(s, stream)) return kInvalidHandle;
  if (bytes == 0) return CUDA_SUCCESS;
  if (!InsideAllocation(s, to, bytes) || !InsideAllocation(s, from, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void*>(to), reinterpret_cast<const void*>(from), bytes);
  ++s.device_copies;
  s.device_copy_bytes += bytes;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned flags) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (stream == nullptr || flags > 1) return CUDA_ERROR_INVALID_VALUE;  // CU_STREAM_DEFAULT or NON_BLOCKING
  *stream = new CUstream_st();
  s.streams.insert(*stream);
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (stream == nullptr || s.streams.erase(stream) == 0) return kInvalidHandle;
  delete stream;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (!KnownStream(s, stream)) return kInvalidHandle;
  ++s.synchronizations;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned option_count,
                                             CUjit_option* options, void** option_values) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (module == nullptr || image == nullptr ||
      (option_count > 0 && (options == nullptr || option_values == nullptr)))
    return CUDA_ERROR_INVALID_VALUE;
  const std::string_view ptx(static_cast<const char*>(image));
  auto fail = [&](CUresult code, const std::string& log) {
    WriteJitLog(option_count, options, option_values, CU_JIT_ERROR_LOG_BUFFER,
                CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, log);
    return code;
  };
  // Only text that looks like a PTX module (LLVM's starts with a comment)
  // is accepted; the marker lets tests force a JIT failure.
  const bool looks_like_ptx = ptx.find(".entry") != std::string_view::npos || ptx.substr(0, 2) == "//";
  if (!looks_like_ptx || ptx.find("KILN_FAKE_INVALID_PTX") != std::string_view::npos) {
    return fail(CUDA_ERROR_INVALID_PTX, "fake ptxas: invalid PTX");
  }
  const int version = kiln::cuda::fake::PtxVersion(ptx);
  if (version > MaxPtxVersion(s.driver_version)) {
    return fail(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                "fake ptxas: PTX ISA " + std::to_string(version / 10) + "." + std::to_string(version % 10) +
                    " is newer than driver " + std::to_string(s.driver_version) + " reads");
  }
  if (kiln::cuda::fake::PtxTargetSm(ptx) > kComputeCapability) {
    return fail(CUDA_ERROR_INVALID_PTX, "fake ptxas: .target sm_" +
                                            std::to_string(kiln::cuda::fake::PtxTargetSm(ptx)) +
                                            " is newer than the device (sm_80)");
  }
  WriteJitLog(option_count, options, option_values, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
              "");
  auto* loaded = new CUmod_st{std::string(ptx), kiln::cuda::fake::FindEntries(ptx), {}};
  s.modules.insert(loaded);
  *module = loaded;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuModuleUnload(CUmodule module) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (s.modules.erase(module) == 0) return kInvalidHandle;
  delete module;
  return CUDA_SUCCESS;
}

KILN_FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (function == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (s.modules.count(module) == 0) return kInvalidHandle;
  for (const kiln::cuda::fake::PtxEntry& entry : module->entries) {
    if (entry.name != name) continue;
    std::unique_ptr<CUfunc_st>& found = module->functions[entry.name];
    if (found == nullptr) found = std::make_unique<CUfunc_st>(CUfunc_st{module, &entry});
    *function = found.get();
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

KILN_FAKE_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                                         unsigned grid_z, unsigned block_x, unsigned block_y,
                                         unsigned block_z, unsigned shared_bytes, CUstream stream,
                                         void** parameters, void** extra) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (CUresult r = RequireContext(s); r != CUDA_SUCCESS) return r;
  if (function == nullptr || s.modules.count(function->module) == 0) return kInvalidHandle;
  if (!KnownStream(s, stream)) return kInvalidHandle;
  const uint64_t threads = uint64_t{block_x} * block_y * block_z;
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || grid_x > kMaxGridX || grid_y > kMaxGridYZ ||
      grid_z > kMaxGridYZ || threads == 0 || threads > kMaxThreadsPerBlock || block_z > kMaxBlockZ ||
      shared_bytes > 48 * 1024 || extra != nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::vector<kiln::cuda::fake::PtxParameter>& declared = function->entry->parameters;
  if (!declared.empty() && parameters == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // The driver copies each parameter's value from kernelParams[i]; a kernel
  // given a pointer outside device memory would fault on a real GPU.
  for (size_t i = 0; i < declared.size(); ++i) {
    if (parameters[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!declared[i].pointer) continue;
    CUdeviceptr address = 0;
    std::memcpy(&address, parameters[i], sizeof(address));
    if (!InsideAllocation(s, address, 1)) return kIllegalAddress;
  }
  if (CUresult r = WriteAfterLaunch(s, function->entry->name, declared, parameters); r != CUDA_SUCCESS)
    return r;
  ++s.launches;
  s.last_entry = function->entry->name;
  s.last_grid[0] = grid_x, s.last_grid[1] = grid_y, s.last_grid[2] = grid_z;
  s.last_block[0] = block_x, s.last_block[1] = block_y, s.last_block[2] = block_z;
  s.last_parameters.assign(declared.size(), 0);
  for (size_t i = 0; i < declared.size(); ++i) {
    const size_t bytes = std::min<size_t>(sizeof(uint64_t), static_cast<size_t>(declared[i].bytes));
    std::memcpy(&s.last_parameters[i], parameters[i], bytes);
  }
  if (s.launch_log.size() == kLaunchLogCapacity) {
    s.launch_log.erase(s.launch_log.begin(), s.launch_log.begin() + kLaunchLogCapacity / 2);
    s.log_start += static_cast<int>(kLaunchLogCapacity / 2);
  }
  State::LaunchRecord record;
  record.entry = s.last_entry;
  std::copy(std::begin(s.last_grid), std::end(s.last_grid), record.grid);
  std::copy(std::begin(s.last_block), std::end(s.last_block), record.block);
  record.parameters = s.last_parameters;
  s.launch_log.push_back(std::move(record));
  return CUDA_SUCCESS;
}

// Hooks for tests: what the fake has seen.
KILN_FAKE_EXPORT int kiln_fake_cuda_launch_count(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.launches;
}

// Copies one launch (entry name, grid, block, parameters) to a caller's
// buffers as kiln_fake_cuda_last_launch documents; returns the parameter count.
static int CopyLaunchOut(const std::string& name, const unsigned (&from_grid)[3],
                         const unsigned (&from_block)[3], const std::vector<uint64_t>& values, char* entry,
                         size_t entry_size, unsigned* grid, unsigned* block, uint64_t* parameters,
                         size_t capacity) {
  if (entry_size > 0) {
    const size_t n = std::min(entry_size - 1, name.size());
    std::memcpy(entry, name.data(), n);
    entry[n] = 0;
  }
  std::memcpy(grid, from_grid, sizeof from_grid);
  std::memcpy(block, from_block, sizeof from_block);
  std::memcpy(parameters, values.data(), std::min(capacity, values.size()) * sizeof(uint64_t));
  return static_cast<int>(values.size());
}

// The last launch: its entry point's name (into `entry`, `entry_size`
// bytes with the NUL), grid and block dimensions, and up to `capacity`
// parameter values; returns the number of parameters, -1 before any launch.
KILN_FAKE_EXPORT int kiln_fake_cuda_last_launch(char* entry, size_t entry_size, unsigned* grid,
                                                unsigned* block, uint64_t* parameters, size_t capacity) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.launches == 0) return -1;
  return CopyLaunchOut(s.last_entry, s.last_grid, s.last_block, s.last_parameters, entry, entry_size, grid,
                       block, parameters, capacity);
}

// Launch number `index` (counting from 0 at the driver's load, as
// kiln_fake_cuda_launch_count counts), as kiln_fake_cuda_last_launch gives
// the last; -1 when there was no such launch or it left the log.
KILN_FAKE_EXPORT int kiln_fake_cuda_launch_at(int index, char* entry, size_t entry_size, unsigned* grid,
                                              unsigned* block, uint64_t* parameters, size_t capacity) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (index < s.log_start || index - s.log_start >= static_cast<int>(s.launch_log.size())) return -1;
  const State::LaunchRecord& record = s.launch_log[static_cast<size_t>(index - s.log_start)];
  return CopyLaunchOut(record.entry, record.grid, record.block, record.parameters, entry, entry_size, grid,
                       block, parameters, capacity);
}

// cuStreamSynchronize and cuCtxSynchronize calls so far: how often the
// host waited for the device.
KILN_FAKE_EXPORT int kiln_fake_cuda_synchronizations(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.synchronizations;
}

// The device-to-device copies so far; their bytes go to `bytes`.
KILN_FAKE_EXPORT int kiln_fake_cuda_device_copies(size_t* bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  *bytes = s.device_copy_bytes;
  return s.device_copies;
}

KILN_FAKE_EXPORT size_t kiln_fake_cuda_live_bytes(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.live_bytes;
}

// The most device memory allocated at once since the last call (or the
// start): how much an execution's temporaries took at their peak.
KILN_FAKE_EXPORT size_t kiln_fake_cuda_take_peak_bytes(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const size_t peak = s.peak_bytes;
  s.peak_bytes = s.live_bytes;
  return peak;
}

KILN_FAKE_EXPORT int kiln_fake_cuda_live_modules(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.modules.size());
}

// From now on, after each launch of an entry whose name starts with
// `entry_prefix`, copies `size` bytes from `bytes` to the device address
// that the launch's pointer parameter `parameter` holds (as a kernel would
// write its results); the launch fails as an illegal address when they do
// not fit there. `size` 0 stops it.
KILN_FAKE_EXPORT void kiln_fake_cuda_write_after_launch(const char* entry_prefix, int parameter,
                                                        const void* bytes, size_t size) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  AfterLaunchWrite& write = after_launch_write();
  write.entry_prefix = entry_prefix != nullptr ? entry_prefix : "";
  write.parameter = parameter;
  const auto* first = static_cast<const unsigned char*>(bytes);
  write.bytes.assign(first, first + (bytes != nullptr ? size : 0));
}

// Each export has the type driver_api.h gives its entry point, and none is
// missing: a change to the table fails here, not in a test run.
namespace {
struct DriverTable {
#define KILN_FAKE_TABLE_FIELD(field, symbol, type) std::type_identity_t<type> field;
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_FAKE_TABLE_FIELD)
#undef KILN_FAKE_TABLE_FIELD
};
#define KILN_FAKE_SAME_TYPE(field, function) \
  static_assert(std::is_same_v<decltype(DriverTable::field), decltype(&function)>, #function);
KILN_FAKE_SAME_TYPE(Init, cuInit)
KILN_FAKE_SAME_TYPE(DriverGetVersion, cuDriverGetVersion)
KILN_FAKE_SAME_TYPE(GetErrorName, cuGetErrorName)
KILN_FAKE_SAME_TYPE(GetErrorString, cuGetErrorString)
KILN_FAKE_SAME_TYPE(DeviceGetCount, cuDeviceGetCount)
KILN_FAKE_SAME_TYPE(DeviceGet, cuDeviceGet)
KILN_FAKE_SAME_TYPE(DeviceGetName, cuDeviceGetName)
KILN_FAKE_SAME_TYPE(DeviceGetAttribute, cuDeviceGetAttribute)
KILN_FAKE_SAME_TYPE(DeviceTotalMem, cuDeviceTotalMem_v2)
KILN_FAKE_SAME_TYPE(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)
KILN_FAKE_SAME_TYPE(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)
KILN_FAKE_SAME_TYPE(CtxSetCurrent, cuCtxSetCurrent)
KILN_FAKE_SAME_TYPE(CtxSynchronize, cuCtxSynchronize)
KILN_FAKE_SAME_TYPE(MemGetInfo, cuMemGetInfo_v2)
KILN_FAKE_SAME_TYPE(MemAlloc, cuMemAlloc_v2)
KILN_FAKE_SAME_TYPE(MemFree, cuMemFree_v2)
KILN_FAKE_SAME_TYPE(MemcpyHtoD, cuMemcpyHtoD_v2)
KILN_FAKE_SAME_TYPE(MemcpyDtoH, cuMemcpyDtoH_v2)
KILN_FAKE_SAME_TYPE(MemcpyDtoDAsync, cuMemcpyDtoDAsync_v2)
KILN_FAKE_SAME_TYPE(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2)
KILN_FAKE_SAME_TYPE(StreamCreate, cuStreamCreate)
KILN_FAKE_SAME_TYPE(StreamDestroy, cuStreamDestroy_v2)
KILN_FAKE_SAME_TYPE(StreamSynchronize, cuStreamSynchronize)
KILN_FAKE_SAME_TYPE(ModuleLoadDataEx, cuModuleLoadDataEx)
KILN_FAKE_SAME_TYPE(ModuleUnload, cuModuleUnload)
KILN_FAKE_SAME_TYPE(ModuleGetFunction, cuModuleGetFunction)
KILN_FAKE_SAME_TYPE(LaunchKernel, cuLaunchKernel)
#undef KILN_FAKE_SAME_TYPE
static_assert(sizeof(DriverTable) == 27 * sizeof(void*),
              "driver_api.h lists an entry point the fake driver does not export: add it above");
}  // namespace
