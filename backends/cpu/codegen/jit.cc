#include "backends/cpu/codegen/jit.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/cpu/codegen/phase_timer.h"
#include "backends/cpu/codegen/vector_exp_ir.h"
#include "core/dump_file.h"

namespace kiln::cpu::codegen {
namespace {

// The pipeline for optimisation levels 2 and 3 (level 1 runs LLVM's O1
// pipeline, level 0 and quick-tier modules kQuickPipeline). Kernels are small loop nests
// written for LLVM to vectorise, so LLVM's whole O3 pipeline (which runs
// InstCombine eight times and unrolls) mostly costs time: this subset
// produces the same vector loops in about half the time. The vectoriser may
// interleave the loops that accumulate (loop_ir.h marks the others not to).
// Unrolling stays off: kernels are already split across threads and it
// multiplies code size.
constexpr const char* kKernelPipeline =
    "always-inline,"
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,"
    "loop-mssa(loop-rotate,licm),loop(indvars),"
    "loop-vectorize,"
    "instcombine<no-verify-fixpoint>,simplifycfg)";

// The pipeline of a while loop compiled whole (fused_loop.h) at every level
// but 1 (at level 0, that of quick-tier kernels, only its instruction
// selection is quick): its kernels are inlined into the loop with constant
// extents, so their short loops (a few scalars or a small vector) unroll
// fully, the unrolled scalars combine into vector operations, and values
// stored by one kernel and loaded by the next are forwarded.
constexpr const char* kFusedLoopPipeline =
    "always-inline,"
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,"
    "loop-mssa(loop-rotate,licm),loop(indvars,loop-unroll-full),"
    "loop-vectorize,gvn,instcombine<no-verify-fixpoint>,slp-vectorizer,simplifycfg)";

// The quick tier's pipeline (compile_tier.h): scalar cleanup only, so that
// the fast instruction selector gets small straight-line loops.
constexpr const char* kQuickPipeline =
    "always-inline,function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg)";

// Code generation's loop strength reduction rewrites address arithmetic
// that x86's base + index * scale operands already do well for Kiln's
// loops: it saves one integer instruction per vector iteration and costs
// 5-16% of a kernel's compile (medians of alternating warm compiles: row
// sum 6.2 -> 5.2 ms, elementwise chain 7.2 -> 6.8, softmax 9.2 -> 8.8).
// LLVM only offers it as a process-wide option; a host program that set
// it keeps its setting.
void SkipLoopStrengthReduction() {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto found = options.find("disable-lsr");
  if (found == options.end() || found->second->getNumOccurrences() > 0) return;
  // Set as a value, not as an occurrence, so a host program can still give
  // the option on its own command line afterwards.
  if (auto* disable = dynamic_cast<llvm::cl::opt<bool>*>(found->second)) disable->setValue(true);
}

Status FromLlvm(llvm::Error error, const char* what) {
  std::string message = llvm::toString(std::move(error));
  return Internal("cpu codegen: ", what, ": ", message);
}

llvm::CodeGenOptLevel CodeGenLevel(int level) {
  switch (level) {
    case 0: return llvm::CodeGenOptLevel::None;
    case 1: return llvm::CodeGenOptLevel::Less;
    case 2: return llvm::CodeGenOptLevel::Default;
    default: return llvm::CodeGenOptLevel::Aggressive;
  }
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  out.flush();
  return text;
}

// LLVM tunes several AVX-512 cores (Skylake-SP to Sapphire Rapids) to
// vectorise with 256-bit registers, for fear of the clock drop that heavy
// 512-bit code causes on the oldest of them. Kiln's kernels are long
// streams of vector arithmetic where twice the lanes win: on a Sapphire
// Rapids host the `elementwise` workload (tanh of f32[16M]) ran 8-lane and
// compute-bound at about half the machine's copy bandwidth. The attribute is
// part of the IR text, so the object cache keys it too. A kernel whose
// emitter chose its own width keeps it (streaming row reductions,
// backends/llvm/row_reduction_plan.h).
void PreferVectorWidth(llvm::Module& module, const char* bits) {
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() && !function.hasFnAttribute("prefer-vector-width"))
      function.addFnAttr("prefer-vector-width", bits);
  }
}

Status Optimize(llvm::Module& module, llvm::TargetMachine& target_machine, int level, bool fused_loop) {
  PhaseTimer timer("llvm: optimise");
  // Debugging aid: the IR as emitted.
  if (std::getenv("KILN_CPU_DUMP_RAW_IR") != nullptr) module.print(llvm::errs(), nullptr);
  llvm::LoopAnalysisManager loop_analyses;
  llvm::FunctionAnalysisManager function_analyses;
  llvm::CGSCCAnalysisManager cgscc_analyses;
  llvm::ModuleAnalysisManager module_analyses;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopInterleaving = true;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder passes(&target_machine, tuning);
  passes.registerModuleAnalyses(module_analyses);
  passes.registerCGSCCAnalyses(cgscc_analyses);
  passes.registerFunctionAnalyses(function_analyses);
  passes.registerLoopAnalyses(loop_analyses);
  passes.crossRegisterProxies(loop_analyses, function_analyses, cgscc_analyses, module_analyses);
  llvm::ModulePassManager pipeline;
  if (level == 1) {
    pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
  } else {
    const char* text = fused_loop ? kFusedLoopPipeline : (level == 0 ? kQuickPipeline : kKernelPipeline);
    if (llvm::Error error = passes.parsePassPipeline(pipeline, text)) {
      return FromLlvm(std::move(error), "parsing the kernel pipeline");
    }
  }
  pipeline.run(module, module_analyses);
  // Vector math functions were kept as calls so the vectoriser could use
  // their vector variants; now they are inlined and their bodies dropped.
  bool has_math_calls = false;
  for (llvm::Function& function : module) {
    if (IsVectorizableMathFunction(function)) {
      function.addFnAttr(llvm::Attribute::AlwaysInline);
      has_math_calls = true;
    }
  }
  if (has_math_calls) {
    llvm::ModulePassManager inline_math;
    if (llvm::Error error = passes.parsePassPipeline(inline_math, "always-inline,globaldce")) {
      return FromLlvm(std::move(error), "parsing the math inlining pipeline");
    }
    inline_math.run(module, module_analyses);
  }
  // Debugging aid: the optimised IR, to check what vectorised.
  if (std::getenv("KILN_CPU_DUMP_IR") != nullptr) module.print(llvm::errs(), nullptr);
  return OkStatus();
}

// `job`'s dump files, when it asks for them, are written between the steps.
StatusOr<std::unique_ptr<llvm::MemoryBuffer>> CompileToObject(llvm::Module& module,
                                                              llvm::TargetMachine& target_machine, int level,
                                                              const ModuleJob& job) {
  KILN_RETURN_IF_ERROR(Optimize(module, target_machine, level, job.fused_loop));
  if (!job.dump_directory.empty()) {
    KILN_RETURN_IF_ERROR(
        WriteDumpFile(job.dump_directory, job.dump_stem + ".optimized.ll", ModuleText(module)));
  }
  PhaseTimer timer("llvm: codegen");
  llvm::orc::SimpleCompiler compile(target_machine);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = compile(module);
  if (!object) return FromLlvm(object.takeError(), "generating machine code");
  return std::move(*object);
}

}  // namespace

JitModule::~JitModule() {
  if (dylib_ != nullptr) {
    llvm::consumeError(jit_->lljit().getExecutionSession().removeJITDylib(*dylib_));
  }
}

StatusOr<void*> JitModule::Lookup(const std::string& name) {
  auto address = jit_->lljit().lookup(*dylib_, name);
  if (!address) return FromLlvm(address.takeError(), "looking up a kernel");
  return address->toPtr<void*>();
}

int Jit::CompileThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 16u));
}

StatusOr<std::shared_ptr<Jit>> Jit::Create(int optimization_level, const std::string& cache_dir) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    SkipLoopStrengthReduction();
  });
  if (optimization_level < 0 || optimization_level > 3) {
    return InvalidArgument("cpu codegen: optimization level must be 0..3, got ", optimization_level);
  }
  std::shared_ptr<Jit> jit(new Jit());
  jit->optimization_level_ = optimization_level;
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return FromLlvm(builder.takeError(), "detecting the host CPU");
  builder->setCodeGenOptLevel(CodeGenLevel(optimization_level));
  jit->cpu_ = builder->getCPU();
  jit->features_ = builder->getFeatures().getString();
  jit->prefer_512_bit_vectors_ = builder->getFeatures().getString().find("+avx512f") != std::string::npos;
  jit->triple_ = builder->getTargetTriple().str();
  jit->machine_builder_ = std::make_unique<llvm::orc::JITTargetMachineBuilder>(*builder);

  std::string directory = cache_dir;
  if (directory.empty()) {
    if (const char* from_env = std::getenv("KILN_CACHE_DIR")) directory = from_env;
  }
  if (!directory.empty()) jit->cache_ = std::make_unique<DiskObjectCache>(directory);

  // Only object files are added (AddModules compiles them), so the JIT's own
  // compile layer is never used; it links and resolves symbols.
  auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
  if (!lljit) return FromLlvm(lljit.takeError(), "creating the JIT");
  jit->jit_ = std::move(*lljit);
  // One target machine ready for the first compile.
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                        jit->BorrowTargetMachine(optimization_level));
  jit->ReturnTargetMachine(optimization_level, std::move(machine));
  return jit;
}

int Jit::LevelFor(CompileTier tier) const { return tier == CompileTier::kQuick ? 0 : optimization_level_; }

StatusOr<std::unique_ptr<llvm::TargetMachine>> Jit::BorrowTargetMachine(int level) {
  {
    std::lock_guard<std::mutex> lock(machines_mutex_);
    auto& idle = idle_machines_[static_cast<size_t>(level)];
    if (!idle.empty()) {
      std::unique_ptr<llvm::TargetMachine> machine = std::move(idle.back());
      idle.pop_back();
      return machine;
    }
  }
  llvm::orc::JITTargetMachineBuilder builder = *machine_builder_;
  builder.setCodeGenOptLevel(CodeGenLevel(level));
  auto machine = builder.createTargetMachine();
  if (!machine) return FromLlvm(machine.takeError(), "creating a target machine");
  return std::move(*machine);
}

void Jit::ReturnTargetMachine(int level, std::unique_ptr<llvm::TargetMachine> machine) {
  std::lock_guard<std::mutex> lock(machines_mutex_);
  idle_machines_[static_cast<size_t>(level)].push_back(std::move(machine));
}

StatusOr<std::unique_ptr<llvm::MemoryBuffer>> Jit::BuildObject(const ModuleJob& job, bool* cache_hit) {
  *cache_hit = false;
  llvm::LLVMContext context;
  llvm::Module module("kiln_kernels", context);
  module.setDataLayout(jit_->getDataLayout());
  module.setTargetTriple(triple_);
  {
    PhaseTimer timer("kernels: emit IR");
    KILN_RETURN_IF_ERROR(job.emit(module));
    if (prefer_512_bit_vectors_) PreferVectorWidth(module, "512");
    std::string problems;
    llvm::raw_string_ostream problem_stream(problems);
    if (llvm::verifyModule(module, &problem_stream)) {
      problem_stream.flush();
      return Internal("cpu codegen: emitted invalid IR: ", problems);
    }
  }
  const bool dumps = !job.dump_directory.empty();
  if (dumps) {
    KILN_RETURN_IF_ERROR(
        WriteDumpFile(job.dump_directory, job.dump_stem + ".emitted.ll", ModuleText(module)));
  }
  const int level = LevelFor(job.tier);
  std::string key;
  if (cache_ && !dumps) {
    // The pipeline differs for a fused loop's module, so its key does too.
    const char* pipeline = job.fused_loop ? "\n; fused loop pipeline" : "";
    key = ObjectCacheKey(ModuleText(module) + pipeline, triple_, cpu_, features_, level);
    if (std::unique_ptr<llvm::MemoryBuffer> cached = cache_->Load(key)) {
      *cache_hit = true;
      return cached;
    }
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, BorrowTargetMachine(level));
  StatusOr<std::unique_ptr<llvm::MemoryBuffer>> object = CompileToObject(module, *machine, level, job);
  ReturnTargetMachine(level, std::move(machine));
  if (object.ok() && cache_ && !dumps) cache_->Store(key, (*object)->getMemBufferRef());
  return object;
}

StatusOr<std::unique_ptr<JitModule>> Jit::AddModules(std::span<const ModuleJob> jobs, int* cached_modules) {
  *cached_modules = 0;
  const size_t count = jobs.size();
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects(count);
  std::vector<Status> statuses(count);
  std::vector<char> hits(count, 0);
  // Workers take the next unbuilt module until none is left; the caller's
  // thread is one of them.
  const size_t workers = std::min<size_t>(count, static_cast<size_t>(CompileThreads()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      bool hit = false;
      StatusOr<std::unique_ptr<llvm::MemoryBuffer>> object = BuildObject(jobs[i], &hit);
      if (object.ok()) {
        objects[i] = std::move(*object);
      } else {
        statuses[i] = object.status();
      }
      hits[i] = hit ? 1 : 0;
    }
  };
  std::vector<std::thread> helpers;
  for (size_t worker = 1; worker < workers; ++worker) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
  for (size_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(statuses[i]);
    *cached_modules += hits[i];
  }

  static std::atomic<uint64_t> counter{0};
  auto dylib = jit_->createJITDylib("kiln." + std::to_string(counter.fetch_add(1)));
  if (!dylib) return FromLlvm(dylib.takeError(), "creating a JITDylib");
  // libm and the C runtime, for the few scalar calls kernels make.
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
  if (!process) return FromLlvm(process.takeError(), "searching the process for symbols");
  dylib->addGenerator(std::move(*process));
  auto result = std::make_unique<JitModule>(shared_from_this(), &*dylib);
  for (auto& object : objects) {
    if (llvm::Error error = jit_->addObjectFile(*dylib, std::move(object))) {
      return FromLlvm(std::move(error), "adding an object file");
    }
  }
  return result;
}

}  // namespace kiln::cpu::codegen
