#include "backends/vulkan/vulkan_backend.h"

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "backends/vulkan/kernel_cache.h"
#include "backends/vulkan/nan_sensitive_ops.h"
#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/vulkan_array.h"
#include "backends/vulkan/vulkan_device.h"
#include "backends/vulkan/vulkan_executable.h"
#include "backends/vulkan/vulkan_instance.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/array_leaves.h"
#include "core/dump_file.h"
#include "core/hlo_printer.h"
#include "core/identity_custom_calls.h"
#include "core/lowering/step_lowering.h"
#include "core/lowering/step_runner.h"
#include "core/op_registry.h"
#include "core/single_instruction.h"
#include "core/verifier.h"

namespace kiln::vulkan {
namespace {

std::mutex features_override_mutex;
std::function<void(ShaderFeatures&)>& FeaturesOverride() {
  static auto* edit = new std::function<void(ShaderFeatures&)>();
  return *edit;
}

ShaderFeatures BackendShaderFeatures(const Device& vulkan) {
  ShaderFeatures features = vulkan.shader_features();
  const std::lock_guard<std::mutex> lock(features_override_mutex);
  if (FeaturesOverride()) FeaturesOverride()(features);
  return features;
}

class VulkanBackend : public Backend {
 public:
  VulkanBackend(std::shared_ptr<Device> vulkan, std::string description)
      : vulkan_(std::move(vulkan)),
        features_(BackendShaderFeatures(*vulkan_)),
        rules_(VulkanLoweringRules(features_, vulkan_->features().min_storage_buffer_offset_alignment)),
        device_(this, 0, std::move(description)),
        queues_(std::make_shared<interpreter::HostQueues>()) {}

  std::string_view name() const override { return "vulkan"; }
  std::span<kiln::Device* const> devices() const override { return {&device_pointer_, 1}; }

  bool SupportsElementType(ElementType type) const override {
    switch (type) {
      case ElementType::kTuple:
      case ElementType::kToken:
      case ElementType::kS32:
      case ElementType::kU32:
      case ElementType::kF32:
      case ElementType::kC64: return true;
      case ElementType::kPred:
      case ElementType::kS8:
      case ElementType::kU8: return features_.storage8;
      case ElementType::kS16:
      case ElementType::kU16:
      case ElementType::kBF16: return features_.storage16;
      case ElementType::kF16: return features_.storage16 && features_.f16;
      case ElementType::kS64:
      case ElementType::kU64: return features_.i64;
      case ElementType::kF64:
      case ElementType::kC128: return features_.f64;
      default: return false;
    }
  }

  // Every op the module holds that this device cannot run: what needs the
  // host, and what the GLSL generator refuses on its own (a kernel of one
  // instruction), so a caller learns all of them before compiling.
  std::vector<std::string> UnsupportedOps(const Module& module) const override {
    std::vector<std::string> ops = UnsupportedDeviceOps(module, rules_);
    if (!NanUnsafeAllowedByEnvironment()) {
      std::set<std::string> all(ops.begin(), ops.end());
      for (std::string& op : NanSensitiveOps(module, features_)) all.insert(std::move(op));
      ops.assign(all.begin(), all.end());
    }
    return ops;
  }

  int64_t max_buffer_bytes() const override {
    return static_cast<int64_t>(vulkan_->features().max_storage_buffer_range);
  }

  StatusOr<std::unique_ptr<Executable>> Compile(const Module& module,
                                                const CompileOptions& options) override {
    if (module.entry() == nullptr)
      return InvalidArgument("vulkan: module '", module.name(), "' has no entry");
    KILN_RETURN_IF_ERROR(VerifyModule(module));
    KILN_RETURN_IF_ERROR(CheckRegisteredOps(module, name()));
    KILN_RETURN_IF_ERROR(CheckCustomCallTargetsRegistered(module, name()));
    KILN_RETURN_IF_ERROR(
        CheckNanPreservation(module, features_, vulkan_->info().name,
                             options.allow_unsafe_nan_math || NanUnsafeAllowedByEnvironment()));
    KernelCache* cache = CacheFor(options);
    if (cache == nullptr) PrepareShaderCompilerBesideThisCompile();
    const std::string stem = DumpFileStem(module.name());
    if (!options.dump_hlo_dir.empty())
      KILN_RETURN_IF_ERROR(
          WriteDumpFile(options.dump_hlo_dir, stem + ".before_passes.hlo", PrintModule(module)));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<VulkanProgram> program,
                          CompileForVulkan(module, rules_, features_, options.optimization_level,
                                           options.dump_ir_dir, stem, cache));
    if (!options.dump_hlo_dir.empty())
      KILN_RETURN_IF_ERROR(
          WriteDumpFile(options.dump_hlo_dir, stem + ".after_passes.hlo", PrintModule(*program->module)));
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<VulkanExecutable> executable,
                          VulkanExecutable::Load(std::shared_ptr<const VulkanProgram>(std::move(program)),
                                                 &device_, vulkan_, queues_, cache));
    return std::unique_ptr<Executable>(std::move(executable));
  }

  StatusOr<std::unique_ptr<DeviceBuffer>> BufferFromLiteral(const Literal& literal,
                                                            kiln::Device* device) override {
    if (device != nullptr && device != &device_)
      return InvalidArgument("vulkan: the device is not this vulkan backend's device (",
                             device_.description(), ")");
    if (literal.shape().IsArray() && !SupportsElementType(literal.shape().element_type())) {
      return Unimplemented("vulkan: ", device_.description(), " cannot hold ",
                           ElementTypeName(literal.shape().element_type()),
                           " arrays (the device lacks the feature)");
    }
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<VulkanArray> array,
                          VulkanArray::FromLiteral(literal, &device_, vulkan_));
    return std::unique_ptr<DeviceBuffer>(std::move(array));
  }

  Status TransferToInfeed(const Literal& literal) override { return PushInfeed(*queues_, literal); }
  StatusOr<Literal> TransferFromOutfeed() override { return PopOutfeed(*queues_, "vulkan"); }

 private:
  // glslang's one-time set-up (PrepareShaderCompiler, ~90 ms of CPU) on a
  // thread of its own, started by the first compile that will run glslang
  // (one without a disk cache: every kernel is compiled) so that it
  // overlaps with the passes, the lowering and the GLSL emission; a process
  // that never compiles (`kiln info`) never pays for it. With a disk cache
  // most kernels need no glslang at all, and the first that misses pays
  // the set-up itself.
  void PrepareShaderCompilerBesideThisCompile() {
    std::call_once(prepare_compiler_once_,
                   [this] { prepare_compiler_ = std::jthread(PrepareShaderCompiler); });
  }

  // The on-disk kernel cache of the directory `options` choose (opened on
  // first use, kept for the client's life), or null for none.
  KernelCache* CacheFor(const CompileOptions& options) {
    const std::filesystem::path directory = KernelCacheDirectory(options.cache_dir);
    if (directory.empty()) return nullptr;
    const std::lock_guard<std::mutex> lock(caches_mutex_);
    std::unique_ptr<KernelCache>& cache = caches_[directory.string()];
    if (cache == nullptr) {
      StatusOr<std::unique_ptr<KernelCache>> opened =
          KernelCache::Open(vulkan_, directory, DiskCacheBoundFromEnvironment());
      if (!opened.ok()) {
        CacheDebugMessage("no disk cache in " + directory.string() + ": " + opened.status().ToString());
        caches_.erase(directory.string());
        return nullptr;
      }
      cache = std::move(opened).value();
    }
    return cache.get();
  }

  std::once_flag prepare_compiler_once_;
  // Joined when the backend goes (it may still be preparing glslang).
  std::jthread prepare_compiler_;
  std::shared_ptr<Device> vulkan_;
  std::mutex caches_mutex_;
  std::map<std::string, std::unique_ptr<KernelCache>> caches_;
  ShaderFeatures features_;
  // Made once for the device: its emittable table is what every compile
  // and UnsupportedOps ask.
  StepLoweringRules rules_;
  kiln::Device device_;
  kiln::Device* device_pointer_ = &device_;
  std::shared_ptr<interpreter::HostQueues> queues_;
};

}  // namespace

void SetShaderFeaturesOverrideForTesting(std::function<void(ShaderFeatures&)> edit) {
  const std::lock_guard<std::mutex> lock(features_override_mutex);
  FeaturesOverride() = std::move(edit);
}

std::string FeatureList(const DeviceFeatures& features) {
  std::string list;
  auto add = [&list](bool has, const char* name) {
    if (has) list += (list.empty() ? "" : " ") + std::string(name);
  };
  add(features.f16, "f16");
  add(features.f64, "f64");
  add(features.i8, "i8");
  add(features.i16, "i16");
  add(features.i64, "i64");
  add(features.storage8, "storage8");
  add(features.storage16, "storage16");
  add(features.int64_atomics, "int64-atomics");
  add(features.float32_atomic_add, "f32-atomic-add");
  add(features.float64_atomic_add, "f64-atomic-add");
  add(features.subgroup_arithmetic, "subgroup-arithmetic");
  add(features.subgroup_shuffle, "subgroup-shuffle");
  add(features.subgroup_ballot, "subgroup-ballot");
  add(features.preserves_nan_f32, "nan-preserve");
  return list.empty() ? "none" : list;
}

std::string DenormalBehaviour(const DeviceFeatures& features) {
  auto width = [](const char* type, bool preserved) {
    return std::string(type) + " denormals: " + (preserved ? "preserved" : "may flush");
  };
  std::string text = width("f32", features.preserves_denormals_f32);
  if (features.f64) text += ", " + width("f64", features.preserves_denormals_f64);
  return text;
}

StatusOr<std::unique_ptr<Backend>> CreateVulkanBackend() {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Device> vulkan, Device::Default());
  const PhysicalDeviceInfo& info = vulkan->info();
  std::string description =
      "vulkan:0 (" + info.ToString() + ", subgroup " + std::to_string(info.features.subgroup_size) +
      ", features: " + FeatureList(vulkan->features()) + ", " + DenormalBehaviour(vulkan->features()) + ")";
  return std::unique_ptr<Backend>(std::make_unique<VulkanBackend>(std::move(vulkan), std::move(description)));
}

}  // namespace kiln::vulkan
