// The interface every backend implements (interpreter, LLVM CPU, Vulkan,
// CUDA): compile a Module into an Executable, move data into and out of
// device buffers, run executables on buffers, and say what it supports.
//
// Calling convention: an executable takes the array leaves of the entry
// computation's parameters, in order (tuple-shaped parameters are flattened),
// and returns the array leaves of its result, in order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/literal.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/stop_condition.h"

namespace kiln {

class Backend;
class Device;

struct CompileOptions {
  // 0 = no optimisation passes beyond what correctness needs.
  int optimization_level = 2;
  // Threads for intra-op parallelism; 0 = one per core.
  int num_threads = 0;
  // Where a backend may cache compiled objects; empty = in memory only.
  std::string cache_dir;
  // Debugging dumps (`kiln run --dump-hlo/--dump-ir`). With dump_hlo_dir set,
  // the backend writes the module it was given and the module its passes
  // made as HLO text into that directory (created when missing):
  // MODULE.before_passes.hlo and MODULE.after_passes.hlo. With dump_ir_dir
  // set, a backend that compiles through LLVM writes each kernel module's IR
  // as emitted and as optimised (MODULE.kernels.N.emitted.ll and
  // MODULE.kernels.N.optimized.ll); one that has no LLVM IR refuses it as
  // UNIMPLEMENTED. A dumping compile never comes from a cache.
  std::string dump_hlo_dir;
  std::string dump_ir_dir;
  // Compile programs whose results depend on NaN and infinities even for a
  // device that may not keep them (kiln_compile_options_t.allow_unsafe_nan_math):
  // such results may then be wrong. Backends that always keep them ignore it.
  bool allow_unsafe_nan_math = false;
};

struct ExecuteOptions {
  // Seed of the `rng` op's generator: equal seeds give equal numbers.
  uint64_t rng_seed = 0;
  // When to give up: backends check it between steps and at loop back-edges
  // and then return its CANCELLED or DEADLINE_EXCEEDED status. Arguments are
  // untouched and the executable stays usable.
  StopCondition stop;
  // The device to run on, one of the backend's; null = the first argument's
  // device, or the backend's first device when there are no arguments. Every
  // argument must live on it; the results are made on it.
  Device* device = nullptr;
};

// How a backend instance is set up (kiln_client_options_t).
struct BackendOptions {
  // Devices to present; 0 = the backend's own count. The host backends (cpu,
  // interpreter) split the machine into this many (1..kMaxHostDevices); a GPU
  // backend accepts only 0 or its physical count.
  int num_devices = 0;
  static constexpr int kMaxHostDevices = 64;
};

class Device {
 public:
  Device(Backend* backend, int id, std::string description)
      : backend_(backend), id_(id), description_(std::move(description)) {}
  Backend* backend() const { return backend_; }
  int id() const { return id_; }
  const std::string& description() const { return description_; }

 private:
  Backend* backend_;
  int id_;
  std::string description_;
};

// Where a buffer's bytes lie in a GPU's own memory, for the libraries beside
// Kiln that read the same GPU (DLPack kDLCUDA, raw device pointers).
struct GpuMemoryAddress {
  int ordinal = 0;       // the GPU, as its driver numbers it (CUDA's device ordinal)
  uint64_t address = 0;  // the device pointer (CUdeviceptr) of the dense row-major bytes
};

// An array in a device's memory. Immutable once created; safe to read from
// several threads.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(Shape shape, Device* device) : shape_(std::move(shape)), device_(device) {}
  virtual ~DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  const Shape& shape() const { return shape_; }
  Device* device() const { return device_; }
  // Copies the contents back to a host literal (row-major).
  virtual StatusOr<Literal> ToLiteral() const = 0;
  // Whether the buffer reads host memory given to Backend::BufferAliasingHost
  // in place (rather than a copy of it).
  virtual bool aliases_host() const { return false; }
  // The buffer's bytes (dense row-major) when they are in host memory this
  // process may read for as long as the buffer lives, else null (then only
  // ToLiteral reads them). DLPack export hands this pointer out.
  virtual const void* host_data() const { return nullptr; }
  // Where the bytes lie in CUDA device memory that another library on the
  // same GPU may read for as long as the buffer lives (the cuda backend),
  // else nullopt. DLPack export hands it out as kDLCUDA.
  virtual std::optional<GpuMemoryAddress> cuda_memory() const { return std::nullopt; }

 private:
  Shape shape_;
  Device* device_;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Parameter leaves and result leaves of the compiled entry computation.
  virtual const std::vector<Shape>& parameter_leaves() const = 0;
  virtual const std::vector<Shape>& result_leaves() const = 0;
  // Runs once. Thread-safe: several threads may execute concurrently.
  virtual StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> Execute(
      std::span<DeviceBuffer* const> arguments, const ExecuteOptions& options) = 0;
};

// Signature of a custom-call target: `out` points at the result buffer (for
// a tuple result, at an array of pointers to the leaf buffers); `in[i]` at
// operand i's data, all dense row-major.
using CustomCallFunction = void (*)(void* out, const void** in);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual std::span<Device* const> devices() const = 0;

  // Capability queries: which element types and ops this backend runs.
  virtual bool SupportsElementType(ElementType type) const = 0;
  // Names of the opcodes in `module` this backend cannot run (empty = all ok).
  virtual std::vector<std::string> UnsupportedOps(const Module& module) const = 0;
  virtual int64_t max_buffer_bytes() const = 0;

  // Compiles a verified module. Fails with UNIMPLEMENTED naming the op for
  // anything in UnsupportedOps.
  virtual StatusOr<std::unique_ptr<Executable>> Compile(const Module& module,
                                                        const CompileOptions& options) = 0;
  // Compiles a module the caller gives up, as Compile does, so that a
  // backend that rewrites the module it compiles need not copy it first. By
  // default, Compile(*module).
  virtual StatusOr<std::unique_ptr<Executable>> CompileModule(std::unique_ptr<Module> module,
                                                              const CompileOptions& options);

  // Copies a host array into a new buffer on `device`.
  virtual StatusOr<std::unique_ptr<DeviceBuffer>> BufferFromLiteral(const Literal& literal,
                                                                    Device* device) = 0;

  // A buffer of `shape` (an array) over `data`, its dense row-major bytes,
  // which the caller keeps allocated and unchanged until `release` runs. A
  // backend whose device reads host memory reads it in place and calls
  // `release` (may be empty) once the buffer is destroyed. This default copies
  // it (BufferFromLiteral) and calls `release` before returning, also on
  // failure.
  virtual StatusOr<std::unique_ptr<DeviceBuffer>> BufferAliasingHost(const Shape& shape, const void* data,
                                                                     std::function<void()> release,
                                                                     Device* device);

  // A buffer of `shape` (an array) over CUDA device memory at `address` on
  // `device` (dense row-major bytes, aligned to the element type), which the
  // caller keeps allocated and unchanged until `release` (may be empty)
  // runs: once, when the buffer is destroyed, or before this returns when it
  // fails. Work another library queued on that memory must be complete
  // before the buffer is read. The cuda backend reads it in place; this
  // default refuses it (INVALID_ARGUMENT naming the backend).
  virtual StatusOr<std::unique_ptr<DeviceBuffer>> BufferAliasingCudaMemory(const Shape& shape,
                                                                           uint64_t address,
                                                                           std::function<void()> release,
                                                                           Device* device);

  // Host-side feed for `infeed` ops, consumed in FIFO order; `outfeed` ops
  // append to a queue read by TransferFromOutfeed.
  virtual Status TransferToInfeed(const Literal& literal) = 0;
  virtual StatusOr<Literal> TransferFromOutfeed() = 0;
};

// Backends this build contains, by name ("interpreter", "cpu", ...). The list
// is explicit (backend_registry.cc), not built by static constructors.
std::vector<std::string> BackendNames();
// Creates a backend by name: NOT_FOUND for an unknown name, UNAVAILABLE when
// it exists but cannot run here (no device), INVALID_ARGUMENT for options it
// cannot honour.
StatusOr<std::unique_ptr<Backend>> CreateBackend(std::string_view name, const BackendOptions& options = {});

// Process-wide custom-call targets. Registration is thread-safe; a name can be
// registered once (ALREADY_EXISTS otherwise).
Status RegisterCustomCallTarget(const std::string& name, CustomCallFunction function);
CustomCallFunction FindCustomCallTarget(const std::string& name);
// NOT_FOUND naming the first custom-call target of `module` that nobody has
// registered, and `backend`. Backends check this when they compile, as XLA
// does, so that a missing registration or a misspelt target shows before
// anything runs.
Status CheckCustomCallTargetsRegistered(const Module& module, std::string_view backend);

}  // namespace kiln
