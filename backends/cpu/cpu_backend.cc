#include "backends/cpu/cpu_backend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "backends/cpu/codegen/phase_timer.h"
#include "backends/cpu/cpu_buffer.h"
#include "backends/cpu/cpu_executable.h"
#include "backends/cpu/dot_thunk.h"
#include "backends/cpu/fused_loops.h"
#include "backends/cpu/lowering.h"
#include "backends/cpu/window_thunk.h"
#include "core/dump_file.h"
#include "core/hlo_printer.h"
#include "core/op_registry.h"
#include "core/verifier.h"
#ifdef KILN_CPU_HAVE_PIPELINE
#include "backends/llvm/emittable.h"
#include "core/passes/pipeline.h"
#endif

namespace kiln::cpu {
namespace {

// Programs kept in the in-memory cache; the oldest is dropped beyond this.
constexpr size_t kCacheCapacity = 64;

std::string CacheDirectory(const CompileOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  const char* env = std::getenv("KILN_CACHE_DIR");
  return env != nullptr ? std::string(env) : std::string();
}

std::string CacheKey(const Module& module, const CompileOptions& options) {
  return "O" + std::to_string(options.optimization_level) + ";dir=" + CacheDirectory(options) + ";" +
         module.ToString();
}

#ifdef KILN_CPU_HAVE_PIPELINE
// The fusion rule: an instruction may join a fused kernel when the code
// generator can emit it on its own (with its operands as parameters), as
// the CPU's emittable table says (backends/llvm/emittable.h). Which ops run
// as thunks of their own instead (scans, pooling windows,
// select-and-scatter, dots, ...) is the lowering's to say (lowering.cc):
// the fusion pass never fuses them (fusion.h), so it need not ask.
bool Emittable(const Instruction& instruction) {
  return llvm_ir::CpuEmittableTable().Check(instruction).ok();
}
#endif

}  // namespace

std::string HostDescription(int index, int count) {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  if (model.empty()) model = "host CPU";
  const unsigned cores = std::thread::hardware_concurrency();
  std::string sharing;
  if (count > 1) sharing = " shared by " + std::to_string(count) + " devices";
  return "cpu:" + std::to_string(index) + " (" + model + ", " + std::to_string(cores == 0 ? 1 : cores) +
         " cores" + sharing + ")";
}

CpuBackend::CpuBackend(int num_devices)
    : devices_(std::make_shared<HostDevices>(this, num_devices,
                                             [&](int i) { return HostDescription(i, num_devices); })),
      queues_(std::make_shared<interpreter::HostQueues>()),
      memory_(HostMemoryPool::Create(DefaultMaxCachedBytes())) {
  // The JIT for the default options is process-wide; making it here (once
  // per process: LLVM's target set-up, the host CPU's features, a target
  // machine) keeps that set-up out of the first Compile's time.
  const CompileOptions defaults;
  ProgramCache::Get().CompilerFor(CacheDirectory(defaults), defaults.optimization_level);
}

bool CpuBackend::SupportsElementType(ElementType type) const {
  return IsArrayType(type) || type == ElementType::kTuple || type == ElementType::kToken;
}

std::vector<std::string> CpuBackend::UnsupportedOps(const Module& module) const {
  return HostDevices::UnsupportedOps(module);
}

int64_t CpuBackend::max_buffer_bytes() const { return int64_t{1} << 40; }

std::shared_ptr<const IntraOpThreadPool> CpuBackend::thread_pool(int requested_threads) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pool_ == nullptr) pool_ = std::make_shared<IntraOpThreadPool>(ResolveThreadCount(requested_threads));
  return pool_;
}

ProgramCache& ProgramCache::Get() {
  static ProgramCache* cache = new ProgramCache();
  return *cache;
}

std::shared_ptr<const CompiledProgram> ProgramCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = programs_.find(key);
  return found == programs_.end() ? nullptr : found->second;
}

std::shared_ptr<const CompiledProgram> ProgramCache::Insert(const std::string& key,
                                                            std::shared_ptr<const CompiledProgram> program) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = programs_.emplace(key, std::move(program));
  if (!inserted) return it->second;  // another thread compiled it meanwhile
  order_.push_back(key);
  if (order_.size() > kCacheCapacity) {
    programs_.erase(order_.front());
    order_.pop_front();
  }
  return it->second;
}

KernelCompiler* ProgramCache::CompilerFor(const std::string& cache_directory, int optimization_level) {
  const int level = optimization_level <= 0 ? 1 : 3;
  const std::string key = std::to_string(level) + ":" + cache_directory;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = compilers_.find(key);
  if (found != compilers_.end()) return found->second.get();
  if (compiler_errors_.count(key)) return nullptr;
  KernelCompilerOptions compiler_options;
  compiler_options.cache_dir = cache_directory;
  compiler_options.optimization_level = level;
  StatusOr<std::unique_ptr<KernelCompiler>> compiler = KernelCompiler::Create(compiler_options);
  if (!compiler.ok()) {
    compiler_errors_.emplace(key, compiler.status());
    return nullptr;
  }
  return compilers_.emplace(key, std::move(compiler).value()).first->second.get();
}

StatusOr<std::shared_ptr<const CompiledProgram>> CpuBackend::Build(std::unique_ptr<Module> module,
                                                                   const CompileOptions& options) {
  const std::string dump_stem = DumpFileStem(module->name());
  if (!options.dump_hlo_dir.empty()) {
    KILN_RETURN_IF_ERROR(
        WriteDumpFile(options.dump_hlo_dir, dump_stem + ".before_passes.hlo", PrintModule(*module)));
  }
  KernelCompiler* compiler = nullptr;
  {
    PhaseTimer timer("kernel compiler setup");
    compiler = ProgramCache::Get().CompilerFor(CacheDirectory(options), options.optimization_level);
  }
#ifdef KILN_CPU_HAVE_PIPELINE
  if (options.optimization_level > 0) {
    PipelineOptions pipeline;
    pipeline.upcast_low_precision_contractions = true;  // oneDNN runs f32
    pipeline.narrow_int8_contractions = true;           // and s8 x s8 -> s32 (dot_thunk.h)
    // and bf16 where the CPU has instructions for it (dot_thunk.h)
    pipeline.keep_low_precision_contraction = RunsLowPrecisionDotAsIs;
    // JAX's Threefry loop (five trips over the counters) unrolled fuses with
    // its consumers; loops over smaller arrays run whole (fused_loops.h).
    WhileUnrollingOptions unrolling;
    unrolling.min_state_bytes = kMaxFusedLoopKernelBytes;
    pipeline.unroll_while_loops = unrolling;
    // A max-pool gradient's pad and slice run in its select-and-scatter (window_thunk.h).
    pipeline.fold_select_and_scatter = [](const Instruction& fusion) {
      return PlanFoldedSelectAndScatter(fusion).has_value();
    };
    // Average pooling's divide runs in its reduce-window (window_thunk.h).
    pipeline.fold_reduce_window_epilogue = [](const Instruction& fusion) {
      return PlanFoldedReduceWindow(fusion).has_value();
    };
    pipeline.verify_input = false;                      // Compile verified it
    pipeline.verify_output = VerifyOptimisedModules();  // the structure is checked after each pass
    if (compiler != nullptr) {
      pipeline.can_fuse = Emittable;
      pipeline.fuse_gathers = llvm_ir::CpuEmittableTable().fuses_gathers();
    } else {
      pipeline.enable_fusion = false;  // nothing could run a fused computation as one kernel
    }
    PhaseTimer timer("module passes");
    KILN_RETURN_IF_ERROR(RunOptimizationPipeline(*module, pipeline));
  }
#endif
  // Debugging aid: the module as the passes left it, fusions included.
  if (std::getenv("KILN_CPU_DUMP_HLO") != nullptr) std::fputs(PrintModule(*module).c_str(), stderr);
  if (!options.dump_hlo_dir.empty()) {
    KILN_RETURN_IF_ERROR(
        WriteDumpFile(options.dump_hlo_dir, dump_stem + ".after_passes.hlo", PrintModule(*module)));
  }
  KernelDump kernel_dump;
  if (!options.dump_ir_dir.empty()) kernel_dump = {options.dump_ir_dir, dump_stem + ".kernels"};
  PhaseTimer timer("lowering (with kernels)");
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CompiledProgram> program,
                        LowerModule(std::move(module), compiler, kernel_dump));
  return std::shared_ptr<const CompiledProgram>(std::move(program));
}

StatusOr<std::unique_ptr<Executable>> CpuBackend::Compile(const Module& module,
                                                          const CompileOptions& options) {
  return CompileChecked(module, [&module] { return module.Clone(); }, options);
}

StatusOr<std::unique_ptr<Executable>> CpuBackend::CompileModule(std::unique_ptr<Module> module,
                                                                const CompileOptions& options) {
  if (module == nullptr) return InvalidArgument("cpu: no module to compile");
  const Module& checked = *module;
  return CompileChecked(checked, [&module] { return std::move(module); }, options);
}

StatusOr<std::unique_ptr<Executable>> CpuBackend::CompileChecked(
    const Module& module, const std::function<std::unique_ptr<Module>()>& take,
    const CompileOptions& options) {
  if (module.entry() == nullptr) return InvalidArgument("cpu: module '", module.name(), "' has no entry");
  KILN_RETURN_IF_ERROR(VerifyModule(module));
  const std::vector<std::string> unsupported = UnsupportedOps(module);
  if (!unsupported.empty()) {
    std::string names;
    for (const std::string& name : unsupported) names += (names.empty() ? "" : ", ") + name;
    return Unimplemented("cpu backend does not support op(s): ", names);
  }
  KILN_RETURN_IF_ERROR(CheckRegisteredOps(module, name()));
  KILN_RETURN_IF_ERROR(CheckCustomCallTargetsRegistered(module, name()));
  std::shared_ptr<const IntraOpThreadPool> pool = thread_pool(options.num_threads);
  const std::string key = CacheKey(module, options);
  ProgramCache& cache = ProgramCache::Get();
  // A compile that dumps HLO or IR builds afresh, so that the files are written.
  const bool dumps = !options.dump_hlo_dir.empty() || !options.dump_ir_dir.empty();
  std::shared_ptr<const CompiledProgram> program = dumps ? nullptr : cache.Find(key);
  if (program == nullptr) {
    KILN_ASSIGN_OR_RETURN(program, Build(take(), options));
    if (!dumps) program = cache.Insert(key, std::move(program));
  }
  return std::unique_ptr<Executable>(
      std::make_unique<CpuExecutable>(program, devices_, pool, queues_, memory_));
}

StatusOr<std::unique_ptr<DeviceBuffer>> CpuBackend::BufferFromLiteral(const Literal& literal,
                                                                      Device* device) {
  KILN_ASSIGN_OR_RETURN(device, devices_->Resolve("cpu", device));
  if (!literal.shape().IsArray())
    return InvalidArgument("cpu: a buffer holds one array, got ", literal.shape().ToString());
  const int64_t bytes = DenseByteSize(literal.shape());
  if (bytes > max_buffer_bytes())
    return ResourceExhausted("cpu: buffer of ", bytes, " bytes exceeds the limit");
  std::unique_ptr<CpuBuffer> buffer = CpuBuffer::Allocate(literal.shape(), device, *memory_);
  if (buffer == nullptr) return ResourceExhausted("cpu: cannot allocate ", bytes, " bytes");
  const auto raw = literal.raw();
  if (static_cast<int64_t>(raw.size()) != bytes) {
    return InvalidArgument("cpu: literal of ", literal.shape().ToString(), " holds ", raw.size(),
                           " bytes, expected ", bytes);
  }
  if (bytes > 0) std::memcpy(buffer->data(), raw.data(), static_cast<size_t>(bytes));
  return std::unique_ptr<DeviceBuffer>(std::move(buffer));
}

Status CpuBackend::TransferToInfeed(const Literal& literal) {
  std::lock_guard<std::mutex> lock(queues_->mutex);
  queues_->infeed.push_back(literal);
  return OkStatus();
}

StatusOr<Literal> CpuBackend::TransferFromOutfeed() {
  std::lock_guard<std::mutex> lock(queues_->mutex);
  if (queues_->outfeed.empty()) return FailedPrecondition("cpu: the outfeed queue is empty");
  Literal literal = std::move(queues_->outfeed.front());
  queues_->outfeed.pop_front();
  return literal;
}

StatusOr<std::unique_ptr<DeviceBuffer>> CpuBackend::BufferAliasingHost(const Shape& shape, const void* data,
                                                                       std::function<void()> release,
                                                                       Device* device) {
  // The kernels load elements at their natural alignment (a complex number
  // at its parts'), and the libraries (Eigen, oneDNN) take unaligned
  // pointers; so any array a C compiler or NumPy lays out is read in place.
  const int64_t element_alignment =
      IsComplex(shape.element_type()) ? ByteWidth(shape.element_type()) / 2 : ByteWidth(shape.element_type());
  const bool aligned = reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(element_alignment) == 0;
  if (data == nullptr || !aligned || !shape.IsArray() || shape.element_type() == ElementType::kPred)
    return Backend::BufferAliasingHost(shape, data, std::move(release), device);
  Status refused = OkStatus();
  if (StatusOr<Device*> resolved = devices_->Resolve("cpu", device); !resolved.ok()) {
    refused = resolved.status();
  } else {
    device = *resolved;
  }
  if (refused.ok() && DenseByteSize(shape) > max_buffer_bytes())
    refused = ResourceExhausted("cpu: buffer of ", DenseByteSize(shape), " bytes exceeds the limit");
  if (!refused.ok()) {
    if (release) release();
    return refused;
  }
  // The block is the caller's: the deleter hands it back through `release`
  // instead of freeing it.
  PooledFree owner;
  owner.release = std::move(release);
  if (!owner.release) owner.release = [] {};  // never free() what the caller lent
  PooledBytes bytes(static_cast<std::byte*>(const_cast<void*>(data)), std::move(owner));
  return std::unique_ptr<DeviceBuffer>(std::make_unique<CpuBuffer>(shape, device, std::move(bytes), true));
}

StatusOr<std::unique_ptr<Backend>> CreateCpuBackend(const BackendOptions& options) {
  KILN_ASSIGN_OR_RETURN(const int count, HostDevices::Count("cpu", options));
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(count));
}

}  // namespace kiln::cpu
