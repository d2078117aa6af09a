#include "backends/cuda/cuda_executable.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "backends/cuda/rng_emitter.h"
#include "core/lowering/rng_key.h"
#include "core/lowering/step_runner.h"

namespace kiln::cuda {
namespace {

constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr size_t kJitLogBytes = 16384;

}  // namespace

// What one execution has: the address of every slot and the stream its
// work goes to; the shared step runner drives it.
class CudaExecutable::StepExecutor : public ProgramStepExecutor {
 public:
  StepExecutor(const CudaExecutable& executable, const ExecuteOptions& options)
      : executable_(executable), driver_(executable.memory_->driver()), options_(options) {}
  ~StepExecutor() override {
    if (blas_handle_ != nullptr) executable_.blas_->Release(blas_handle_);
    if (dnn_handle_ != nullptr) executable_.dnn_->Release(dnn_handle_);
    for (const auto& [index, plan] : fft_plans_) executable_.ffts_->Release(index, plan);
    // Execute synchronised the stream before this: the next execution may have it.
    if (workspace_.bytes() > 0) executable_.workspaces_->Give(std::move(workspace_));
    if (stream != nullptr) driver_.api().StreamDestroy(stream);
  }

  Status Launch(const ProgramStep& step) override;
  Status LaunchSequence(const ProgramStep& step, std::vector<CUdeviceptr>& pointers);
  Status CallLibrary(const ProgramStep& step) override;
  Status RunFft(const ProgramStep& step, size_t index);
  bool RunsLoopWhole(const ProgramStep& step) const override {
    return executable_.whole_loop_of_.count(&step) != 0;
  }
  StatusOr<StepLoopTrips> RunLoopTrips(const ProgramStep& step) override;
  Status Copy(int source, int target, int64_t bytes) override {
    const CUdeviceptr from = addresses[static_cast<size_t>(source)];
    const CUdeviceptr to = addresses[static_cast<size_t>(target)];
    if (from == to) return OkStatus();
    return driver_.Check(driver_.api().MemcpyDtoDAsync(to, from, static_cast<size_t>(bytes), stream),
                         "cuMemcpyDtoDAsync");
  }
  void Bind(int bound, int slot) override {
    addresses[static_cast<size_t>(bound)] = addresses[static_cast<size_t>(slot)];
  }
  Status CopyRange(int source, int64_t source_offset, int target, int64_t target_offset,
                   int64_t bytes) override {
    const CUdeviceptr from = addresses[static_cast<size_t>(source)] + static_cast<CUdeviceptr>(source_offset);
    const CUdeviceptr to = addresses[static_cast<size_t>(target)] + static_cast<CUdeviceptr>(target_offset);
    return driver_.Check(driver_.api().MemcpyDtoDAsync(to, from, static_cast<size_t>(bytes), stream),
                         "cuMemcpyDtoDAsync");
  }
  StatusOr<int> AddSlot(int64_t bytes) override {
    KILN_ASSIGN_OR_RETURN(DeviceBlock block, DeviceBlock::Allocate(executable_.memory_, bytes));
    addresses.push_back(block.address());
    const int slot = static_cast<int>(addresses.size() - 1);
    added_.emplace(slot, std::move(block));
    return slot;
  }
  // Copies out of the slot may still be queued, and the allocator could
  // hand its block to another execution at once: it is freed after the
  // stream's next synchronisation instead (each loop iteration has one).
  void ReleaseSlot(int slot) override {
    const auto found = added_.find(slot);
    if (found == added_.end()) return;
    retired_.push_back(std::move(found->second));
    added_.erase(found);
    addresses[static_cast<size_t>(slot)] = 0;
  }
  Status ReadToHost(int slot, void* host, int64_t bytes) override {
    KILN_RETURN_IF_ERROR(
        driver_.Check(driver_.api().MemcpyDtoHAsync(host, addresses[static_cast<size_t>(slot)],
                                                    static_cast<size_t>(bytes), stream),
                      "cuMemcpyDtoHAsync"));
    return Synchronize();
  }
  Status WriteFromHost(int slot, const void* host, int64_t bytes) override {
    // The target may still be read by earlier work of this stream (a
    // loop's previous iteration): wait for it, then copy synchronously.
    KILN_RETURN_IF_ERROR(Synchronize());
    return driver_.Check(
        driver_.api().MemcpyHtoD(addresses[static_cast<size_t>(slot)], host, static_cast<size_t>(bytes)),
        "cuMemcpyHtoD");
  }
  // This execution's library workspace of at least `bytes`.
  StatusOr<CUdeviceptr> Workspace(int64_t bytes) {
    if (workspace_.bytes() < bytes) {
      // Convolutions queued earlier may still use the smaller block: it is
      // freed after the next synchronisation.
      if (workspace_.bytes() > 0) retired_.push_back(std::move(workspace_));
      KILN_ASSIGN_OR_RETURN(workspace_, executable_.workspaces_->Take(bytes));
    }
    return workspace_.address();
  }
  Status Synchronize() {
    KILN_RETURN_IF_ERROR(driver_.Check(driver_.api().StreamSynchronize(stream), "cuStreamSynchronize"));
    retired_.clear();
    return OkStatus();
  }

  std::vector<CUdeviceptr> addresses;
  CUstream stream = nullptr;

 private:
  const CudaExecutable& executable_;
  const Driver& driver_;
  const ExecuteOptions& options_;
  uint64_t rng_launches_ = 0;             // rng kernels launched so far (rng_emitter.h)
  cublasHandle_t blas_handle_ = nullptr;  // taken from the pool at the first GEMM
  cudnnHandle_t dnn_handle_ = nullptr;    // taken from the pool at the first cuDNN convolution
  std::map<int, DeviceBlock> added_;      // AddSlot's blocks, by slot
  std::vector<DeviceBlock> retired_;      // released, freed at the next synchronisation
  DeviceBlock workspace_;                 // from the executable's pool at the first library call needing one

  // By fft index: taken from the executable's plans at the fft's first run.
  std::map<size_t, CufftPlan> fft_plans_;
};

StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Load(
    std::shared_ptr<const CudaProgram> program, Device* device, std::shared_ptr<DeviceMemory> memory,
    std::shared_ptr<interpreter::HostQueues> queues, std::shared_ptr<CublasHandles> blas,
    std::shared_ptr<CudnnHandles> dnn, const Cufft* cufft) {
  if (!program->gemms.empty() && blas == nullptr)
    return Internal("cuda: a program with cuBLAS GEMMs loaded without cuBLAS handles");
  if (!program->convolutions.empty() && dnn == nullptr)
    return Internal("cuda: a program with cuDNN convolutions loaded without cuDNN handles");
  std::unique_ptr<CudaExecutable> executable(
      new CudaExecutable(program, device, memory, std::move(queues), std::move(blas), std::move(dnn)));
  if (!program->convolutions.empty()) {
    for (const CudnnConvolutionPlan& plan : program->convolutions)
      executable->convolutions_.push_back(
          std::make_unique<CudnnConvolutionRunner>(executable->dnn_->cudnn(), plan));
    executable->workspaces_ = std::make_unique<WorkspacePool>(memory);
  }
  if (!program->ffts.empty()) {
    if (cufft == nullptr) return Internal("cuda: a program with cuFFT transforms loaded without cuFFT");
    executable->ffts_ = std::make_unique<CufftPlans>(*cufft, memory, program->ffts);
    if (executable->workspaces_ == nullptr) executable->workspaces_ = std::make_unique<WorkspacePool>(memory);
  }
  const Driver& driver = memory->driver();
  KILN_RETURN_IF_ERROR(memory->MakeCurrent());
  if (!program->ptx.kernels.empty()) {
    std::vector<char> error_log(kJitLogBytes, 0);
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size()))};
    const CUresult loaded =
        driver.api().ModuleLoadDataEx(&executable->module_, program->ptx.ptx.c_str(), 2, keys, values);
    if (loaded != CUDA_SUCCESS) {
      executable->module_ = nullptr;
      Status status = driver.Check(loaded, "cuModuleLoadDataEx (loading the kernels' PTX)");
      error_log.back() = 0;
      return Status(status.code(), status.message() + "; the driver's JIT log: " +
                                       (error_log[0] != 0 ? std::string(error_log.data()) : "(empty)"));
    }
    for (const PtxKernel& kernel : program->ptx.kernels) {
      CUfunction function = nullptr;
      KILN_RETURN_IF_ERROR(
          driver.Check(driver.api().ModuleGetFunction(&function, executable->module_, kernel.name.c_str()),
                       "cuModuleGetFunction(" + kernel.name + ")"));
      executable->functions_.push_back(function);
    }
    for (const WholeLoop& loop : program->whole_loops) {
      CUfunction function = nullptr;
      KILN_RETURN_IF_ERROR(
          driver.Check(driver.api().ModuleGetFunction(&function, executable->module_, loop.entry.c_str()),
                       "cuModuleGetFunction(" + loop.entry + ")"));
      executable->whole_loop_of_.emplace(loop.step, executable->loop_functions_.size());
      executable->loop_functions_.push_back(function);
    }
  }
  for (const UserOpLaunch& launch : program->user_ops) {
    KILN_ASSIGN_OR_RETURN(LoadedUserOp loaded, LoadUserOpKernel(driver, launch));
    executable->user_ops_.push_back(loaded);
    // The call frame is fixed at compile time: copied to the device once, read by every execution.
    if (!launch.frame.empty()) {
      const auto bytes = static_cast<int64_t>(launch.frame.size() * sizeof(uint64_t));
      KILN_ASSIGN_OR_RETURN(DeviceBlock frame, DeviceBlock::Allocate(memory, bytes));
      KILN_RETURN_IF_ERROR(driver.Check(
          driver.api().MemcpyHtoD(frame.address(), launch.frame.data(), static_cast<size_t>(bytes)),
          "cuMemcpyHtoD (the call frame of " + launch.label + ")"));
      executable->user_ops_.back().frame = frame.address();
      executable->user_op_frames_.push_back(std::move(frame));
    }
  }
  for (const Literal* constant : program->constants) {
    const int64_t bytes = static_cast<int64_t>(constant->raw().size());
    DeviceBlock block;
    if (bytes > 0) {
      KILN_ASSIGN_OR_RETURN(block, DeviceBlock::Allocate(memory, bytes));
      KILN_RETURN_IF_ERROR(driver.Check(
          driver.api().MemcpyHtoD(block.address(), constant->raw().data(), static_cast<size_t>(bytes)),
          "cuMemcpyHtoD"));
    }
    executable->constants_.push_back(std::move(block));
  }
  return executable;
}

CudaExecutable::~CudaExecutable() {
  constants_.clear();
  user_op_frames_.clear();
  if (!memory_->MakeCurrent().ok()) return;
  if (module_ != nullptr) memory_->driver().api().ModuleUnload(module_);
  for (const LoadedUserOp& loaded : user_ops_) memory_->driver().api().ModuleUnload(loaded.module);
}

StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> CudaExecutable::Execute(
    std::span<DeviceBuffer* const> arguments, const ExecuteOptions& options) {
  const CudaProgram& program = *program_;
  KILN_RETURN_IF_ERROR(CheckDeviceArguments(
      arguments, program.parameter_leaves, device_,
      [](const DeviceBuffer& buffer) { return dynamic_cast<const CudaBuffer*>(&buffer) != nullptr; }, "cuda",
      options.device));
  KILN_RETURN_IF_ERROR(options.stop.Check());
  const Driver& driver = memory_->driver();
  KILN_RETURN_IF_ERROR(memory_->MakeCurrent());
  StepExecutor frame(*this, options);
  frame.addresses.assign(program.slots.size(), 0);
  DeviceBlock scratch;
  if (program.scratch_bytes > 0) {
    KILN_ASSIGN_OR_RETURN(scratch, DeviceBlock::Allocate(memory_, program.scratch_bytes));
  }
  // Results: each in a block of its own that the caller owns. Result slots
  // are written there by the kernels; the rest are copied on the stream
  // after the steps.
  const std::vector<int>& sources = program.sequences[0].results;
  std::vector<DeviceBlock> placed(sources.size());
  for (size_t i = 0; i < program.slots.size(); ++i) {
    const Slot& slot = program.slots[i];
    switch (slot.kind) {
      case SlotKind::kTemporary:
        frame.addresses[i] = scratch.address() + static_cast<CUdeviceptr>(slot.offset);
        break;
      case SlotKind::kConstant:
        frame.addresses[i] = constants_[static_cast<size_t>(slot.index)].address();
        break;
      case SlotKind::kParameter:
        frame.addresses[i] =
            static_cast<const CudaBuffer*>(arguments[static_cast<size_t>(slot.index)])->address();
        break;
      case SlotKind::kResult: {
        DeviceBlock& result = placed[static_cast<size_t>(slot.index)];
        KILN_ASSIGN_OR_RETURN(result, DeviceBlock::Allocate(memory_, slot.bytes));
        frame.addresses[i] = result.address();
        break;
      }
      case SlotKind::kBound: break;
    }
  }
  KILN_RETURN_IF_ERROR(
      driver.Check(driver.api().StreamCreate(&frame.stream, kStreamNonBlocking), "cuStreamCreate"));
  Status status = RunStepSequence(program, 0, frame, options, *queues_, "cuda");
  std::vector<std::unique_ptr<DeviceBuffer>> results;
  if (status.ok()) {
    for (size_t i = 0; i < sources.size() && status.ok(); ++i) {
      const int64_t bytes = DenseBytes(program.result_leaves[i]);
      DeviceBlock block;
      if (placed[i].bytes() > 0) {
        block = std::move(placed[i]);
      } else if (bytes > 0) {
        StatusOr<DeviceBlock> allocated = DeviceBlock::Allocate(memory_, bytes);
        if (!allocated.ok()) {
          status = allocated.status();
          break;
        }
        block = std::move(allocated).value();
        status = driver.Check(
            driver.api().MemcpyDtoDAsync(block.address(), frame.addresses[static_cast<size_t>(sources[i])],
                                         static_cast<size_t>(bytes), frame.stream),
            "cuMemcpyDtoDAsync (result " + std::to_string(i) + ")");
      }
      results.push_back(
          std::make_unique<CudaBuffer>(program.result_leaves[i], device_, memory_, std::move(block)));
    }
  }
  // Everything queued must finish before the scratch block is reused.
  const Status synchronized = frame.Synchronize();
  KILN_RETURN_IF_ERROR(status);
  KILN_RETURN_IF_ERROR(synchronized);
  return results;
}

Status CudaExecutable::StepExecutor::Launch(const ProgramStep& step) {
  const PtxKernel& kernel = executable_.program_->ptx.kernels[static_cast<size_t>(step.kernel)];
  std::vector<CUdeviceptr> pointers;
  pointers.reserve(step.buffers.size());
  for (int slot : step.buffers) pointers.push_back(addresses[static_cast<size_t>(slot)]);
  const KernelDescription& description = executable_.program_->kernels[static_cast<size_t>(step.kernel)];
  if (!description.launches.empty()) return LaunchSequence(step, pointers);
  const KernelGrid& grid = description.grid;
  int64_t extent = grid.iterations;
  std::vector<void*> parameters;
  for (CUdeviceptr& pointer : pointers) parameters.push_back(&pointer);
  parameters.push_back(&extent);
  // Each rng launch draws from a new stream of the execution's seed.
  uint64_t key = kernel.takes_rng_key ? RngLaunchKey(options_.rng_seed, rng_launches_++) : 0;
  if (kernel.takes_rng_key) parameters.push_back(&key);
  const int64_t blocks = grid.workgroups[0];
  if (blocks > 0x7fffffff)
    return ResourceExhausted("cuda: kernel ", kernel.name, " needs ", blocks, " blocks");
  return driver_.Check(driver_.api().LaunchKernel(executable_.functions_[static_cast<size_t>(step.kernel)],
                                                  static_cast<unsigned>(blocks), 1, 1,
                                                  static_cast<unsigned>(grid.workgroup_size[0]), 1, 1, 0,
                                                  stream, parameters.data(), nullptr),
                       "cuLaunchKernel(" + kernel.name + ")");
}

// A kernel of several passes (a sort's, sort_emitter.h): each launch gets
// the buffers then its own parameters as i64, one after another on the
// execution's stream with nothing read back in between; a launch of no
// blocks is not made.
Status CudaExecutable::StepExecutor::LaunchSequence(const ProgramStep& step,
                                                    std::vector<CUdeviceptr>& pointers) {
  const KernelDescription& description = executable_.program_->kernels[static_cast<size_t>(step.kernel)];
  const std::string& entry = executable_.program_->ptx.kernels[static_cast<size_t>(step.kernel)].name;
  const CUfunction function = executable_.functions_[static_cast<size_t>(step.kernel)];
  for (const KernelLaunch& launch : description.launches) {
    const int64_t blocks = launch.grid.workgroups[0];
    if (blocks == 0) continue;
    std::vector<int64_t> arguments = launch.parameters;
    std::vector<void*> parameters;
    for (CUdeviceptr& pointer : pointers) parameters.push_back(&pointer);
    for (int64_t& argument : arguments) parameters.push_back(&argument);
    if (blocks > 0x7fffffff) return ResourceExhausted("cuda: kernel ", entry, " needs ", blocks, " blocks");
    KILN_RETURN_IF_ERROR(
        driver_.Check(driver_.api().LaunchKernel(function, static_cast<unsigned>(blocks), 1, 1,
                                                 static_cast<unsigned>(launch.grid.workgroup_size[0]), 1, 1,
                                                 0, stream, parameters.data(), nullptr),
                      "cuLaunchKernel(" + entry + ")"));
  }
  return OkStatus();
}

// One launch of a loop's kernel (whole_loop.h), one block: its status is
// first reset from the program's "unreported" constant on the stream, so
// a kernel that did not run cannot pass for one that did; after the
// launch the status is read back, which waits for it.
StatusOr<StepLoopTrips> CudaExecutable::StepExecutor::RunLoopTrips(const ProgramStep& step) {
  const auto found = executable_.whole_loop_of_.find(&step);
  if (found == executable_.whole_loop_of_.end())
    return Internal("cuda: while '", step.name, "' has no loop kernel");
  const WholeLoop& loop = executable_.program_->whole_loops[found->second];
  int64_t reported[2] = {0, 0};
  KILN_RETURN_IF_ERROR(Copy(loop.unreported_slot, loop.status_slot, sizeof(reported)));
  CUdeviceptr status = addresses[static_cast<size_t>(loop.status_slot)];
  int64_t max_trips = kWholeLoopTripsPerLaunch;
  std::vector<CUdeviceptr> pointers;
  pointers.reserve(loop.slots.size());
  for (int slot : loop.slots) pointers.push_back(addresses[static_cast<size_t>(slot)]);
  std::vector<void*> parameters = {&status, &max_trips};
  for (CUdeviceptr& pointer : pointers) parameters.push_back(&pointer);
  const CUfunction function = executable_.loop_functions_[found->second];
  KILN_RETURN_IF_ERROR(driver_.Check(driver_.api().LaunchKernel(function, 1, 1, 1, kThreadsPerBlock, 1, 1, 0,
                                                                stream, parameters.data(), nullptr),
                                     "cuLaunchKernel(" + loop.entry + ")"));
  KILN_RETURN_IF_ERROR(ReadToHost(loop.status_slot, reported, sizeof(reported)));
  return LoopTripsReported(reported, max_trips, "cuda", loop.entry, step.name);
}

// A registered op's PTX kernel, a dot as a cuBLAS GEMM or a convolution
// through cuDNN with the handle the execution took from the GPU's pool, on
// this execution's stream.
Status CudaExecutable::StepExecutor::CallLibrary(const ProgramStep& step) {
  const CudaProgram& program = *executable_.program_;
  if (step.call < 0 || static_cast<size_t>(step.call) >= program.calls.size())
    return Internal("cuda: library call '", step.name, "' was not planned");
  const CudaLibraryCall& call = program.calls[static_cast<size_t>(step.call)];
  if (call.user_op >= 0) {
    std::vector<CUdeviceptr> buffers;
    for (int slot : step.buffers) buffers.push_back(addresses[static_cast<size_t>(slot)]);
    const auto index = static_cast<size_t>(call.user_op);
    return RunUserOpKernel(driver_, executable_.user_ops_[index], program.user_ops[index], buffers, stream);
  }
  auto address = [&](size_t i) { return addresses[static_cast<size_t>(step.buffers[i])]; };
  if (call.fft >= 0) return RunFft(step, static_cast<size_t>(call.fft));
  if (call.convolution >= 0) {
    if (step.buffers.size() != 3)
      return Internal("cuda: convolution '", step.name, "' binds ", step.buffers.size(), " buffers, not 3");
    if (dnn_handle_ == nullptr) {
      KILN_ASSIGN_OR_RETURN(dnn_handle_, executable_.dnn_->Acquire(stream));
    }
    // The algorithm search's scratch is a slot of this execution's, freed
    // once the stream has finished with it (ReleaseSlot).
    std::vector<int> searches;
    CudnnMemory memory;
    memory.workspace = [this](int64_t bytes) { return Workspace(bytes); };
    memory.search_scratch = [&](int64_t bytes) -> StatusOr<CUdeviceptr> {
      KILN_ASSIGN_OR_RETURN(const int slot, AddSlot(bytes));
      searches.push_back(slot);
      return addresses[static_cast<size_t>(slot)];
    };
    Status run = executable_.convolutions_[static_cast<size_t>(call.convolution)]->Run(
        dnn_handle_, address(0), address(1), address(2), memory);
    for (int slot : searches) ReleaseSlot(slot);
    return run;
  }
  if (call.gemm < 0 || step.buffers.size() != 3)
    return Internal("cuda: library call '", step.name, "' is not a planned GEMM");
  if (blas_handle_ == nullptr) {
    KILN_ASSIGN_OR_RETURN(blas_handle_, executable_.blas_->Acquire(stream));
  }
  return RunGemm(executable_.blas_->cublas(), blas_handle_, program.gemms[static_cast<size_t>(call.gemm)],
                 address(0), address(1), address(2));
}

// A cuFFT transform with this execution's plan of it (made at the fft's
// first run in any execution, then reused), on this execution's stream,
// its work area the execution's library workspace; a transform that
// overwrites its input reads a copy in a slot of its own.
Status CudaExecutable::StepExecutor::RunFft(const ProgramStep& step, size_t index) {
  if (step.buffers.size() != 2)
    return Internal("cuda: fft '", step.name, "' binds ", step.buffers.size(), " buffers, not 2");
  auto held = fft_plans_.find(index);
  if (held == fft_plans_.end()) {
    KILN_ASSIGN_OR_RETURN(const CufftPlan plan, executable_.ffts_->Acquire(index));
    held = fft_plans_.emplace(index, plan).first;
  }
  std::vector<int> copies;
  CufftMemory memory;
  memory.work_area = [this](int64_t bytes) { return Workspace(bytes); };
  memory.input_copy = [&](CUdeviceptr input, int64_t bytes) -> StatusOr<CUdeviceptr> {
    KILN_ASSIGN_OR_RETURN(const int slot, AddSlot(bytes));
    copies.push_back(slot);
    const CUdeviceptr copy = addresses[static_cast<size_t>(slot)];
    KILN_RETURN_IF_ERROR(driver_.Check(
        driver_.api().MemcpyDtoDAsync(copy, input, static_cast<size_t>(bytes), stream), "cuMemcpyDtoDAsync"));
    return copy;
  };
  Status run = RunCufftTransform(executable_.ffts_->cufft(), executable_.ffts_->transform(index),
                                 held->second, stream, addresses[static_cast<size_t>(step.buffers[0])],
                                 addresses[static_cast<size_t>(step.buffers[1])], memory);
  for (int slot : copies) ReleaseSlot(slot);
  return run;
}

}  // namespace kiln::cuda
