#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "backends/cuda/cublas_handles.h"
#include "backends/cuda/cublas_library.h"
#include "backends/cuda/cuda_buffer.h"
#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cudnn_handles.h"
#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/cufft_library.h"
#include "core/dump_file.h"
#include "core/hlo_printer.h"
#include "core/lowering/step_runner.h"
#include "core/op_registry.h"
#include "core/verifier.h"

namespace kiln::cuda {
namespace {

struct Gpu {
  std::unique_ptr<Device> device;
  std::shared_ptr<DeviceMemory> memory;
  std::shared_ptr<CublasHandles> blas;  // null when dots run as Kiln kernels
  std::shared_ptr<CudnnHandles> dnn;    // null when convolutions run as Kiln kernels
  const Cufft* cufft = nullptr;         // null when fft runs as the device expansion
  PtxTarget target;
  int64_t total_memory = 0;
};

// How this backend runs dots: through cuBLAS when `cublas` is set, else
// with Kiln's kernels; `description` says which (and why) in each device's
// description, so `kiln info` shows it.
struct DotPath {
  const Cublas* cublas = nullptr;
  std::string description;
};

// KILN_CUDA_DOT: unset or "auto" uses cuBLAS when it loads (cublas_library.h)
// and Kiln's kernels otherwise; "cublas" requires cuBLAS (UNAVAILABLE
// without it); "kernel" always uses Kiln's kernels. Anything else is
// INVALID_ARGUMENT.
StatusOr<DotPath> ChooseDotPath() {
  const char* setting = std::getenv("KILN_CUDA_DOT");
  const std::string choice = setting != nullptr ? setting : "";
  if (choice == "kernel") return DotPath{nullptr, "dot: kiln kernels (KILN_CUDA_DOT=kernel)"};
  if (!choice.empty() && choice != "auto" && choice != "cublas")
    return InvalidArgument("cuda: KILN_CUDA_DOT='", choice,
                           "' is not one of auto (cuBLAS when it loads), cublas, kernel");
  StatusOr<const Cublas*> cublas = Cublas::Get();
  if (cublas.ok()) return DotPath{*cublas, "dot: cublas " + (*cublas)->version()};
  if (choice == "cublas")
    return Unavailable("cuda: KILN_CUDA_DOT=cublas but cuBLAS cannot be loaded: ", cublas.status().message());
  return DotPath{nullptr, "dot: kiln kernels (cuBLAS not loaded: " + cublas.status().message() + ")"};
}

// How this backend runs convolutions: through cuDNN where it takes them
// when `cudnn` is set, else all with Kiln's kernels (the implicit GEMM).
struct ConvolutionPath {
  const Cudnn* cudnn = nullptr;
  std::string description;
};

// KILN_CUDA_CONVOLUTION: unset or "auto" uses cuDNN when it loads
// (cudnn_library.h), Kiln's kernels otherwise; "cudnn" requires cuDNN
// (UNAVAILABLE without it); "kernel" always uses Kiln's kernels. Anything
// else is INVALID_ARGUMENT.
StatusOr<ConvolutionPath> ChooseConvolutionPath() {
  const char* setting = std::getenv("KILN_CUDA_CONVOLUTION");
  const std::string choice = setting != nullptr ? setting : "";
  if (choice == "kernel")
    return ConvolutionPath{nullptr, "convolution: kiln kernels (KILN_CUDA_CONVOLUTION=kernel)"};
  if (!choice.empty() && choice != "auto" && choice != "cudnn")
    return InvalidArgument("cuda: KILN_CUDA_CONVOLUTION='", choice,
                           "' is not one of auto (cuDNN when it loads), cudnn, kernel");
  StatusOr<const Cudnn*> cudnn = Cudnn::Get();
  if (cudnn.ok()) return ConvolutionPath{*cudnn, "convolution: cudnn " + (*cudnn)->version()};
  if (choice == "cudnn")
    return Unavailable("cuda: KILN_CUDA_CONVOLUTION=cudnn but cuDNN cannot be loaded: ",
                       cudnn.status().message());
  return ConvolutionPath{nullptr,
                         "convolution: kiln kernels (cuDNN not loaded: " + cudnn.status().message() + ")"};
}

// How this backend runs fft: through cuFFT where it takes them when
// `cufft` is set, else all as the shared device expansion (DFTs as dots).
struct FftPath {
  const Cufft* cufft = nullptr;
  std::string description;
};

// KILN_CUDA_FFT: unset or "auto" uses cuFFT when it loads
// (cufft_library.h), the expansion otherwise; "cufft" requires cuFFT
// (UNAVAILABLE without it); "kernel" always uses the expansion. Anything
// else is INVALID_ARGUMENT.
StatusOr<FftPath> ChooseFftPath() {
  const char* setting = std::getenv("KILN_CUDA_FFT");
  const std::string choice = setting != nullptr ? setting : "";
  if (choice == "kernel") return FftPath{nullptr, "fft: kiln kernels (KILN_CUDA_FFT=kernel)"};
  if (!choice.empty() && choice != "auto" && choice != "cufft")
    return InvalidArgument("cuda: KILN_CUDA_FFT='", choice,
                           "' is not one of auto (cuFFT when it loads), cufft, kernel");
  StatusOr<const Cufft*> cufft = Cufft::Get();
  if (cufft.ok()) return FftPath{*cufft, "fft: cufft " + (*cufft)->version()};
  if (choice == "cufft")
    return Unavailable("cuda: KILN_CUDA_FFT=cufft but cuFFT cannot be loaded: ", cufft.status().message());
  return FftPath{nullptr, "fft: kiln kernels (cuFFT not loaded: " + cufft.status().message() + ")"};
}

// major * 10 + minor (sm_90 = 90).
StatusOr<int> ComputeCapability(const Driver& driver, CUdevice device) {
  int major = 0, minor = 0;
  KILN_RETURN_IF_ERROR(driver.Check(
      driver.api().DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
      "cuDeviceGetAttribute(compute capability major)"));
  KILN_RETURN_IF_ERROR(driver.Check(
      driver.api().DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
      "cuDeviceGetAttribute(compute capability minor)"));
  return major * 10 + minor;
}

std::string HexAddress(uint64_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(const Driver& driver)
      : driver_(driver), queues_(std::make_shared<interpreter::HostQueues>()) {}

  Status Open() {
    KILN_ASSIGN_OR_RETURN(const DotPath dots, ChooseDotPath());
    KILN_ASSIGN_OR_RETURN(const ConvolutionPath convolutions, ChooseConvolutionPath());
    KILN_ASSIGN_OR_RETURN(const FftPath ffts, ChooseFftPath());
    int count = 0;
    KILN_RETURN_IF_ERROR(driver_.Check(driver_.api().DeviceGetCount(&count), "cuDeviceGetCount"));
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      Gpu gpu;
      KILN_ASSIGN_OR_RETURN(std::string description, DescribeGpu(driver_, ordinal));
      CUdevice device = 0;
      KILN_RETURN_IF_ERROR(driver_.Check(driver_.api().DeviceGet(&device, ordinal), "cuDeviceGet"));
      KILN_ASSIGN_OR_RETURN(const int capability, ComputeCapability(driver_, device));
      // PTX for an older capability runs on newer GPUs (the driver JITs it).
      gpu.target.sm = std::clamp(capability, kMinSm, kMaxSm);
      gpu.target.kernel_parameter_bytes = KernelParameterBytes(driver_.version(), capability);
      size_t total = 0;
      KILN_RETURN_IF_ERROR(driver_.Check(driver_.api().DeviceTotalMem(&total, device), "cuDeviceTotalMem"));
      gpu.total_memory = static_cast<int64_t>(total);
      KILN_ASSIGN_OR_RETURN(gpu.memory, DeviceMemory::Open(driver_, ordinal));
      if (dots.cublas != nullptr) gpu.blas = std::make_shared<CublasHandles>(*dots.cublas, gpu.memory);
      if (convolutions.cudnn != nullptr)
        gpu.dnn = std::make_shared<CudnnHandles>(*convolutions.cudnn, gpu.memory);
      gpu.cufft = ffts.cufft;
      gpu.device = std::make_unique<Device>(this, ordinal,
                                            "cuda:" + std::to_string(ordinal) + " (" + description + "; " +
                                                dots.description + "; " + convolutions.description + "; " +
                                                ffts.description + ")");
      device_list_.push_back(gpu.device.get());
      gpus_.push_back(std::move(gpu));
    }
    if (gpus_.empty()) return Unavailable("cuda: the driver finds no GPU");
    return OkStatus();
  }

  std::string_view name() const override { return "cuda"; }
  std::span<Device* const> devices() const override { return device_list_; }

  bool SupportsElementType(ElementType type) const override {
    return IsArrayType(type) || type == ElementType::kTuple || type == ElementType::kToken;
  }

  // Every op the module holds that this backend cannot run: what needs the
  // host, and what no PTX kernel emitter has (fft), so a caller learns all
  // of them before compiling.
  std::vector<std::string> UnsupportedOps(const Module& module) const override {
    return UnsupportedDeviceOps(module, CudaLoweringRules(false, CompileTarget().kernel_parameter_bytes));
  }

  int64_t max_buffer_bytes() const override {
    int64_t largest = 0;
    for (const Gpu& gpu : gpus_) largest = std::max(largest, gpu.total_memory);
    return largest;
  }

  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module,
                                                const CompileOptions& options) override {
    if (module.entry() == nullptr) return InvalidArgument("cuda: module '", module.name(), "' has no entry");
    KILN_RETURN_IF_ERROR(VerifyModule(module));
    KILN_RETURN_IF_ERROR(CheckRegisteredOps(module, name()));
    KILN_RETURN_IF_ERROR(CheckCustomCallTargetsRegistered(module, name()));
    const std::vector<std::string> unsupported = UnsupportedOps(module);
    if (!unsupported.empty()) {
      std::string names;
      for (const std::string& op : unsupported) names += (names.empty() ? "" : ", ") + op;
      return Unimplemented("cuda backend does not support op(s) yet: ", names,
                           "; run this module on the cpu backend");
    }
    const Gpu& gpu = gpus_[0];
    std::unique_ptr<Module> clone = module.Clone();
    const std::string stem = DumpFileStem(module.name());
    if (!options.dump_hlo_dir.empty())
      KILN_RETURN_IF_ERROR(
          WriteDumpFile(options.dump_hlo_dir, stem + ".before_passes.hlo", PrintModule(*clone)));
    KILN_RETURN_IF_ERROR(RunCudaPasses(*clone, options.optimization_level, gpu.target.kernel_parameter_bytes,
                                       /*cufft_transforms=*/gpu.cufft != nullptr));
    if (!options.dump_hlo_dir.empty())
      KILN_RETURN_IF_ERROR(
          WriteDumpFile(options.dump_hlo_dir, stem + ".after_passes.hlo", PrintModule(*clone)));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaProgram> program,
                          LowerForCuda(std::move(clone), gpu.target, options.dump_ir_dir, stem,
                                       /*cublas_dots=*/gpu.blas != nullptr,
                                       /*cudnn_convolutions=*/gpu.dnn != nullptr));
    KILN_ASSIGN_OR_RETURN(
        std::unique_ptr<CudaExecutable> executable,
        CudaExecutable::Load(std::shared_ptr<const CudaProgram>(std::move(program)), gpu.device.get(),
                             gpu.memory, queues_, gpu.blas, gpu.dnn, gpu.cufft));
    return std::unique_ptr<Executable>(std::move(executable));
  }

  StatusOr<std::unique_ptr<DeviceBuffer>> BufferFromLiteral(const Literal& literal, Device* device) override {
    KILN_ASSIGN_OR_RETURN(const Gpu* gpu, FindGpu(device));
    if (!literal.shape().IsArray())
      return InvalidArgument("cuda: a buffer holds one array, got ", literal.shape().ToString());
    const int64_t bytes = DenseBytes(literal.shape());
    if (bytes > gpu->total_memory) {
      return ResourceExhausted("cuda: a buffer of ", bytes, " bytes exceeds ", gpu->device->description(),
                               "'s ", gpu->total_memory, " bytes of memory");
    }
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<CudaBuffer> buffer,
                          CudaBuffer::FromLiteral(literal, gpu->device.get(), gpu->memory));
    return std::unique_ptr<DeviceBuffer>(std::move(buffer));
  }

  StatusOr<std::unique_ptr<DeviceBuffer>> BufferAliasingCudaMemory(const Shape& shape, uint64_t address,
                                                                   std::function<void()> release,
                                                                   Device* device) override {
    // Released on every way out but the buffer's, which takes it over.
    struct Pending {
      std::function<void()> release;
      ~Pending() {
        if (release) release();
      }
    } pending{std::move(release)};
    KILN_ASSIGN_OR_RETURN(const Gpu* gpu, FindGpu(device));
    if (!shape.IsArray()) return InvalidArgument("cuda: a buffer holds one array, got ", shape.ToString());
    const ElementType type = shape.element_type();
    // Kernels load each element at its own alignment (a complex one at its parts').
    const int64_t alignment = std::max<int64_t>(1, IsComplex(type) ? ByteWidth(type) / 2 : ByteWidth(type));
    if (address % static_cast<uint64_t>(alignment) != 0) {
      return InvalidArgument("cuda: device address ", HexAddress(address), " of ", shape.ToString(),
                             " is not aligned to its element type (", alignment, " bytes)");
    }
    if (address == 0 && DenseBytes(shape) > 0)
      return InvalidArgument("cuda: device address 0 for ", shape.ToString(), ", which holds elements");
    KILN_RETURN_IF_ERROR(gpu->memory->MakeCurrent());
    // A DLPack producer asked for stream 1 queues its work on the legacy
    // default stream; Kiln's streams do not wait for it, so wait here.
    KILN_RETURN_IF_ERROR(
        driver_.Check(driver_.api().StreamSynchronize(nullptr), "cuStreamSynchronize(default stream)"));
    return std::unique_ptr<DeviceBuffer>(
        std::make_unique<CudaBuffer>(shape, gpu->device.get(), gpu->memory, static_cast<CUdeviceptr>(address),
                                     std::exchange(pending.release, nullptr)));
  }

  Status TransferToInfeed(const Literal& literal) override { return PushInfeed(*queues_, literal); }
  StatusOr<Literal> TransferFromOutfeed() override { return PopOutfeed(*queues_, "cuda"); }

 private:
  // What Compile compiles for: the first GPU's target (Open found one).
  const PtxTarget& CompileTarget() const { return gpus_[0].target; }

  // `device`'s GPU (null = the first), or INVALID_ARGUMENT for another
  // backend's device.
  StatusOr<const Gpu*> FindGpu(const Device* device) const {
    if (device == nullptr) return &gpus_[0];
    for (const Gpu& candidate : gpus_) {
      if (candidate.device.get() == device) return &candidate;
    }
    return InvalidArgument("cuda: the device is not one of this cuda backend's GPUs");
  }

  const Driver& driver_;
  std::vector<Gpu> gpus_;
  std::vector<Device*> device_list_;
  std::shared_ptr<interpreter::HostQueues> queues_;
};

}  // namespace

StatusOr<std::string> DescribeGpu(const Driver& driver, int ordinal) {
  CUdevice device = 0;
  KILN_RETURN_IF_ERROR(driver.Check(driver.api().DeviceGet(&device, ordinal), "cuDeviceGet"));
  char name[256] = {};
  KILN_RETURN_IF_ERROR(
      driver.Check(driver.api().DeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
  KILN_ASSIGN_OR_RETURN(const int capability, ComputeCapability(driver, device));
  size_t total = 0;
  KILN_RETURN_IF_ERROR(driver.Check(driver.api().DeviceTotalMem(&total, device), "cuDeviceTotalMem"));
  const int version = driver.version();
  return std::string(name) + ", sm_" + std::to_string(capability) + ", " + std::to_string(total >> 20) +
         " MiB, driver API " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

StatusOr<std::unique_ptr<Backend>> CreateCudaBackend() {
  KILN_ASSIGN_OR_RETURN(const Driver* driver, Driver::Get());
  auto backend = std::make_unique<CudaBackend>(*driver);
  KILN_RETURN_IF_ERROR(backend->Open());
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace kiln::cuda
