#include "backends/vulkan/vulkan_executable.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/kernel_cache.h"
#include "backends/vulkan/parallel_compile.h"
#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_instance.h"
#include "core/lowering/rng_key.h"
#include "core/lowering/step_runner.h"

namespace kiln::vulkan {

Status ValidationVerdict(std::string_view during) {
  StatusOr<const Instance*> instance = Instance::Get();
  if (!instance.ok() || !(*instance)->validation_enabled()) return OkStatus();
  const std::vector<std::string> messages = Instance::TakeValidationMessages();
  if (messages.empty()) return OkStatus();
  std::string text;
  for (const std::string& message : messages) text += "\n  " + message;
  return Internal("vulkan: the validation layer (KILN_VULKAN_VALIDATION=1) reported ", messages.size(),
                  " message(s) during ", during, ":", text);
}

// What one execution has: where every slot lives (a buffer and an offset in
// it) and the command list its work is recorded into. The shared step
// runner drives it.
class VulkanExecutable::StepExecutor : public ProgramStepExecutor {
 public:
  StepExecutor(const VulkanExecutable& executable, uint64_t rng_seed)
      : executable_(executable), rng_seed_(rng_seed) {}

  Status Start() {
    KILN_ASSIGN_OR_RETURN(commands_, CommandList::Create(executable_.vulkan_));
    return OkStatus();
  }

  Status Launch(const ProgramStep& step) override {
    const auto index = static_cast<size_t>(step.kernel);
    const CompiledShader& shader = executable_.program_->shaders[index];
    std::vector<BufferRange> ranges;
    ranges.reserve(step.buffers.size());
    for (int slot : step.buffers) ranges.push_back(slots[static_cast<size_t>(slot)]);
    const KernelDescription& description = executable_.program_->kernels[index];
    const KernelGrid& grid = description.grid;
    const auto& max_groups = executable_.vulkan_->features().max_workgroup_count;
    // A kernel of several passes (sort, topk): each launch a dispatch of
    // its own in this command buffer, its parameters 32-bit push constants;
    // the list's barrier between steps orders them.
    std::vector<uint32_t> words;
    for (const KernelLaunch& launch : description.launches) {
      words.clear();
      for (const int64_t parameter : launch.parameters) {
        if (parameter < 0 || parameter > UINT32_MAX)
          return Internal("vulkan: kernel ", description.name, " has a launch parameter ", parameter,
                          " past 32 bits");
        words.push_back(static_cast<uint32_t>(parameter));
      }
      // A launch's y and z (a library shader's tiles, library_kernels.h)
      // stay within 65535, which every device runs; x may be capped, its
      // kernel striding.
      KILN_RETURN_IF_ERROR(commands_->Dispatch(
          executable_.kernels_[index], ranges, std::as_bytes(std::span<const uint32_t>(words)),
          {static_cast<uint32_t>(std::min<int64_t>(launch.grid.workgroups[0], max_groups[0])),
           static_cast<uint32_t>(std::min<int64_t>(launch.grid.workgroups[1], max_groups[1])),
           static_cast<uint32_t>(std::min<int64_t>(launch.grid.workgroups[2], max_groups[2]))}));
    }
    if (!description.launches.empty()) return OkStatus();
    const int64_t groups = std::min<int64_t>(grid.workgroups[0], max_groups[0]);
    // An rng kernel's key, (lo, hi) words: one per launch of this execution.
    std::array<std::byte, 8> key{};
    if (shader.glsl.takes_rng_key) {
      const uint64_t value = RngLaunchKey(rng_seed_, rng_launches_++);
      const uint32_t words[2] = {static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32)};
      std::memcpy(key.data(), words, sizeof(words));
    }
    return commands_->Dispatch(executable_.kernels_[index], ranges,
                               std::span<const std::byte>(key.data(), shader.glsl.takes_rng_key ? 8 : 0),
                               {static_cast<uint32_t>(groups), 1, 1});
  }

  // A registered op's own shader (user_op_shaders.h).
  Status CallLibrary(const ProgramStep& step) override {
    const auto index = static_cast<size_t>(step.call);
    const UserOpDispatch& dispatch = executable_.program_->user_ops[index];
    std::vector<BufferRange> ranges;
    for (int slot : step.buffers) ranges.push_back(slots[static_cast<size_t>(slot)]);
    const std::shared_ptr<Buffer>& frame = executable_.user_op_frames_[index];
    if (frame != nullptr) ranges.push_back({frame, 0, dispatch.frame.size() * sizeof(uint64_t)});
    return commands_->Dispatch(executable_.user_ops_[index], ranges, dispatch.push_constants,
                               {dispatch.groups, 1, 1});
  }

  Status Copy(int source, int target, int64_t bytes) override {
    const BufferRange& from = slots[static_cast<size_t>(source)];
    const BufferRange& to = slots[static_cast<size_t>(target)];
    if (from.buffer == to.buffer && from.offset == to.offset) return OkStatus();
    return commands_->Copy(from.buffer, from.offset, to.buffer, to.offset, static_cast<uint64_t>(bytes));
  }

  void Bind(int bound, int slot) override {
    slots[static_cast<size_t>(bound)] = slots[static_cast<size_t>(slot)];
  }

  Status CopyRange(int source, int64_t source_offset, int target, int64_t target_offset,
                   int64_t bytes) override {
    const BufferRange& from = slots[static_cast<size_t>(source)];
    const BufferRange& to = slots[static_cast<size_t>(target)];
    return commands_->Copy(from.buffer, from.offset + static_cast<uint64_t>(source_offset), to.buffer,
                           to.offset + static_cast<uint64_t>(target_offset), static_cast<uint64_t>(bytes));
  }

  // A buffer of its own (the tapes grow by replacing theirs). The command
  // list holds each buffer it copies until its work is done, so a released
  // slot's buffer outlives the copies queued out of it.
  StatusOr<int> AddSlot(int64_t bytes) override {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer,
                          Buffer::Create(executable_.vulkan_, static_cast<uint64_t>(bytes)));
    BufferRange range;
    range.buffer = std::move(buffer);
    range.size = static_cast<uint64_t>(bytes);
    slots.push_back(std::move(range));
    return static_cast<int>(slots.size() - 1);
  }

  void ReleaseSlot(int slot) override { slots[static_cast<size_t>(slot)] = BufferRange(); }

  bool RunsLoopWhole(const ProgramStep& step) const override {
    return executable_.whole_loop_of_.count(&step) != 0;
  }

  // One dispatch of a loop's shader (glsl_whole_loop.h), one workgroup:
  // its status is first reset from the program's "unreported" constant in
  // the same command list, so a shader that did not run cannot pass for
  // one that did; reading the status back submits and waits.
  StatusOr<StepLoopTrips> RunLoopTrips(const ProgramStep& step) override {
    const auto found = executable_.whole_loop_of_.find(&step);
    if (found == executable_.whole_loop_of_.end())
      return Internal("vulkan: while '", step.name, "' has no loop shader");
    const VulkanWholeLoop& whole = executable_.program_->whole_loops[found->second];
    const WholeLoop& loop = whole.loop;
    int64_t reported[2] = {0, 0};
    KILN_RETURN_IF_ERROR(Copy(loop.unreported_slot, loop.status_slot, sizeof(reported)));
    std::vector<BufferRange> ranges;
    ranges.reserve(loop.slots.size() + 1);
    ranges.push_back(slots[static_cast<size_t>(loop.status_slot)]);
    for (int slot : loop.slots) ranges.push_back(slots[static_cast<size_t>(slot)]);
    const int64_t max_trips = whole.trips_per_launch;
    const auto budget = static_cast<uint32_t>(max_trips);
    KILN_RETURN_IF_ERROR(commands_->Dispatch(executable_.loop_kernels_[found->second], ranges,
                                             std::as_bytes(std::span<const uint32_t>(&budget, 1)),
                                             {1, 1, 1}));
    KILN_RETURN_IF_ERROR(ReadToHost(loop.status_slot, reported, sizeof(reported)));
    return LoopTripsReported(reported, max_trips, "vulkan", loop.entry, step.name);
  }

  // A predicate, a branch index, a loop's status or an outfeed. A buffer
  // the host cannot map (a discrete GPU's) is copied into this execution's
  // read-back buffer in the same submission as the work before it: one
  // round trip to the device, not a second one for a staging copy (a
  // host-driven loop's trip was two submissions and waits).
  Status ReadToHost(int slot, void* host, int64_t bytes) override {
    const BufferRange& range = slots[static_cast<size_t>(slot)];
    const auto size = static_cast<uint64_t>(bytes);
    if (range.buffer->mapped() != nullptr || size == 0 || size > kReadBackBytes) {
      KILN_RETURN_IF_ERROR(Flush());
      return range.buffer->Download(host, size, range.offset);
    }
    if (read_back_ == nullptr) {
      KILN_ASSIGN_OR_RETURN(read_back_,
                            Buffer::Create(executable_.vulkan_, kReadBackBytes, BufferKind::kStaging));
    }
    KILN_RETURN_IF_ERROR(commands_->Copy(range.buffer, range.offset, read_back_, 0, size));
    KILN_RETURN_IF_ERROR(Flush());
    return read_back_->Download(host, size, 0);
  }

  Status WriteFromHost(int slot, const void* host, int64_t bytes) override {
    KILN_RETURN_IF_ERROR(Flush());
    const BufferRange& range = slots[static_cast<size_t>(slot)];
    return range.buffer->Upload(host, static_cast<uint64_t>(bytes), range.offset);
  }

  // Submits what is recorded, waits for it and starts a new list.
  Status Flush() {
    if (commands_->steps() > 0) {
      KILN_RETURN_IF_ERROR(commands_->SubmitAndWait());
      KILN_ASSIGN_OR_RETURN(commands_, CommandList::Create(executable_.vulkan_));
    }
    return OkStatus();
  }

  CommandList& commands() { return *commands_; }

  std::vector<BufferRange> slots;

 private:
  // Reads up to this size go through the read-back buffer.
  static constexpr uint64_t kReadBackBytes = 4096;

  const VulkanExecutable& executable_;
  std::unique_ptr<CommandList> commands_;
  std::shared_ptr<Buffer> read_back_;  // host-visible, made on the first read that needs it
  uint64_t rng_seed_ = 0;
  uint64_t rng_launches_ = 0;
};

StatusOr<std::unique_ptr<VulkanExecutable>> VulkanExecutable::Load(
    std::shared_ptr<const VulkanProgram> program, kiln::Device* device, std::shared_ptr<Device> vulkan,
    std::shared_ptr<interpreter::HostQueues> queues, KernelCache* cache) {
  std::unique_ptr<VulkanExecutable> executable(
      new VulkanExecutable(program, device, vulkan, std::move(queues)));
  // Each pipeline is the driver's own compile of one kernel: made side by
  // side (vkCreateComputePipelines may be called from several threads, and
  // the pipeline cache is internally synchronized), kept in kernel order.
  executable->kernels_.resize(program->shaders.size());
  KILN_RETURN_IF_ERROR(RunCompileTasks(program->shaders.size(), CompileThreads(), [&](size_t i) -> Status {
    const CompiledShader& shader = program->shaders[i];
    KernelSpec spec;
    spec.name = program->kernels[i].name;
    spec.spirv = shader.spirv;
    spec.buffer_count = static_cast<uint32_t>(shader.glsl.binding_count);
    spec.push_constant_bytes = static_cast<uint32_t>(shader.glsl.push_constant_bytes);
    spec.workgroup_size_x = static_cast<uint32_t>(program->kernels[i].grid.workgroup_size[0]);
    spec.specialization = shader.specialization;
    if (cache != nullptr) spec.pipeline_cache = cache->pipeline_cache();
    KILN_ASSIGN_OR_RETURN(executable->kernels_[i], Kernel::Create(vulkan, spec));
    return OkStatus();
  }));
  // The loops' shaders (glsl_whole_loop.h), fewer and small: one by one.
  for (const VulkanWholeLoop& loop : program->whole_loops) {
    KernelSpec spec;
    spec.name = loop.loop.entry;
    spec.spirv = loop.shader.spirv;
    spec.buffer_count = static_cast<uint32_t>(loop.shader.glsl.binding_count);
    spec.push_constant_bytes = static_cast<uint32_t>(loop.shader.glsl.push_constant_bytes);
    spec.workgroup_size_x = static_cast<uint32_t>(loop.shader.glsl.workgroup_size);
    if (cache != nullptr) spec.pipeline_cache = cache->pipeline_cache();
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Kernel> kernel, Kernel::Create(vulkan, spec));
    executable->whole_loop_of_.emplace(loop.loop.step, executable->loop_kernels_.size());
    executable->loop_kernels_.push_back(std::move(kernel));
  }
  if (cache != nullptr) cache->SavePipelineCache();
  for (const UserOpDispatch& dispatch : program->user_ops) {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Kernel> kernel, CreateUserOpKernel(vulkan, dispatch));
    executable->user_ops_.push_back(std::move(kernel));
    // The call frame is fixed at compile time: uploaded once, read by every execution.
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> frame, CreateUserOpFrame(vulkan, dispatch));
    executable->user_op_frames_.push_back(std::move(frame));
  }
  for (const Literal* constant : program->constants) {
    const auto bytes = static_cast<uint64_t>(constant->raw().size());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, Buffer::Create(vulkan, bytes));
    if (bytes > 0) KILN_RETURN_IF_ERROR(buffer->Upload(constant->raw().data(), bytes));
    executable->constants_.push_back(std::move(buffer));
  }
  KILN_RETURN_IF_ERROR(ValidationVerdict("loading the kernels"));
  return executable;
}

StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> VulkanExecutable::Execute(
    std::span<DeviceBuffer* const> arguments, const ExecuteOptions& options) {
  const VulkanProgram& program = *program_;
  KILN_RETURN_IF_ERROR(CheckDeviceArguments(
      arguments, program.parameter_leaves, device_,
      [](const DeviceBuffer& buffer) { return dynamic_cast<const VulkanArray*>(&buffer) != nullptr; },
      "vulkan", options.device));
  KILN_RETURN_IF_ERROR(options.stop.Check());
  std::shared_ptr<Buffer> scratch;
  if (program.scratch_bytes > 0) {
    KILN_ASSIGN_OR_RETURN(scratch, Buffer::Create(vulkan_, static_cast<uint64_t>(program.scratch_bytes)));
  }
  StepExecutor frame(*this, options.rng_seed);
  KILN_RETURN_IF_ERROR(frame.Start());
  frame.slots.resize(program.slots.size());
  // Results: each in a buffer of its own that the caller owns. Result slots
  // are written there by the steps; the rest are copied in the same
  // submission as the last steps.
  const std::vector<int>& sources = program.sequences[0].results;
  std::vector<std::shared_ptr<Buffer>> placed(sources.size());
  for (size_t i = 0; i < program.slots.size(); ++i) {
    const StepSlot& slot = program.slots[i];
    BufferRange& range = frame.slots[i];
    range.size = static_cast<uint64_t>(slot.bytes);
    switch (slot.kind) {
      case StepSlotKind::kTemporary:
        range.buffer = scratch;
        range.offset = static_cast<uint64_t>(slot.offset);
        break;
      case StepSlotKind::kConstant: range.buffer = constants_[static_cast<size_t>(slot.index)]; break;
      case StepSlotKind::kParameter:
        range.buffer = static_cast<const VulkanArray*>(arguments[static_cast<size_t>(slot.index)])->buffer();
        break;
      case StepSlotKind::kResult: {
        std::shared_ptr<Buffer>& result = placed[static_cast<size_t>(slot.index)];
        KILN_ASSIGN_OR_RETURN(result, Buffer::Create(vulkan_, static_cast<uint64_t>(slot.bytes)));
        range.buffer = result;
        break;
      }
      case StepSlotKind::kBound: break;
    }
  }
  KILN_RETURN_IF_ERROR(RunStepSequence(program, 0, frame, options, *queues_, "vulkan"));
  std::vector<std::unique_ptr<DeviceBuffer>> results;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (placed[i] != nullptr) {
      results.push_back(
          std::make_unique<VulkanArray>(program.result_leaves[i], device_, std::move(placed[i])));
      continue;
    }
    const int64_t bytes = DenseBytes(program.result_leaves[i]);
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer,
                          Buffer::Create(vulkan_, static_cast<uint64_t>(bytes)));
    if (bytes > 0) {
      const BufferRange& from = frame.slots[static_cast<size_t>(sources[i])];
      KILN_RETURN_IF_ERROR(
          frame.commands().Copy(from.buffer, from.offset, buffer, 0, static_cast<uint64_t>(bytes)));
    }
    results.push_back(std::make_unique<VulkanArray>(program.result_leaves[i], device_, std::move(buffer)));
  }
  KILN_RETURN_IF_ERROR(frame.Flush());
  KILN_RETURN_IF_ERROR(ValidationVerdict("an execution"));
  return results;
}

}  // namespace kiln::vulkan
