#include "backends/cpu/codegen/jit.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/cpu/codegen/phase_timer.h"

namespace kiln::cpu::codegen {
namespace {

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

// Runs LLVM's default per-module pipeline for `level`. The TargetMachine is
// created per call because it is not thread-safe and modules may be
// optimised on several threads at once.
llvm::Error Optimize(llvm::Module& module, llvm::orc::JITTargetMachineBuilder builder, int level) {
  PhaseTimer timer("llvm: optimise");
  auto target_machine = builder.createTargetMachine();
  if (!target_machine) return target_machine.takeError();
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = level >= 2;
  tuning.SLPVectorization = level >= 2;
  // Interleaving and unrolling stay off: kernels are already split across
  // threads and vectorised, and both multiply LLVM's time per module.
  tuning.LoopInterleaving = false;
  tuning.LoopUnrolling = false;
  llvm::LoopAnalysisManager loop_analyses;
  llvm::FunctionAnalysisManager function_analyses;
  llvm::CGSCCAnalysisManager cgscc_analyses;
  llvm::ModuleAnalysisManager module_analyses;
  llvm::PassBuilder passes(target_machine->get(), tuning);
  passes.registerModuleAnalyses(module_analyses);
  passes.registerCGSCCAnalyses(cgscc_analyses);
  passes.registerFunctionAnalyses(function_analyses);
  passes.registerLoopAnalyses(loop_analyses);
  passes.crossRegisterProxies(loop_analyses, function_analyses, cgscc_analyses, module_analyses);
  llvm::ModulePassManager pipeline;
  switch (level) {
    case 0: pipeline = passes.buildO0DefaultPipeline(llvm::OptimizationLevel::O0); break;
    case 1: pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1); break;
    case 2: pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2); break;
    default: pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3); break;
  }
  pipeline.run(module, module_analyses);
  // Debugging aid: the optimised IR, to check what vectorised.
  if (std::getenv("KILN_CPU_DUMP_IR") != nullptr) module.print(llvm::errs(), nullptr);
  return llvm::Error::success();
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

StatusOr<std::shared_ptr<Jit>> Jit::Create(int optimization_level, const std::string& cache_dir) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
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
  jit->triple_ = builder->getTargetTriple().str();

  std::string directory = cache_dir;
  if (directory.empty()) {
    if (const char* from_env = std::getenv("KILN_CACHE_DIR")) directory = from_env;
  }
  if (!directory.empty()) jit->cache_ = std::make_unique<DiskObjectCache>(directory);

  DiskObjectCache* cache = jit->cache_.get();
  const llvm::orc::JITTargetMachineBuilder machine_builder = *builder;
  auto lljit = llvm::orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(machine_builder)
                   .setCompileFunctionCreator(
                       [cache](llvm::orc::JITTargetMachineBuilder jtmb)
                           -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                         return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(jtmb), cache);
                       })
                   .create();
  if (!lljit) return FromLlvm(lljit.takeError(), "creating the JIT");
  jit->jit_ = std::move(*lljit);
  jit->jit_->getIRTransformLayer().setTransform(
      [machine_builder, optimization_level](
          llvm::orc::ThreadSafeModule module,
          const llvm::orc::MaterializationResponsibility&) -> llvm::Expected<llvm::orc::ThreadSafeModule> {
        llvm::Error error = module.withModuleDo(
            [&](llvm::Module& m) { return Optimize(m, machine_builder, optimization_level); });
        if (error) return error;
        return module;
      });
  return jit;
}

std::unique_ptr<llvm::Module> Jit::NewModule(const std::string& name, llvm::LLVMContext& context) const {
  auto module = std::make_unique<llvm::Module>(name, context);
  module->setDataLayout(jit_->getDataLayout());
  module->setTargetTriple(triple_);
  return module;
}

StatusOr<std::unique_ptr<JitModule>> Jit::Add(std::unique_ptr<llvm::Module> module,
                                              std::unique_ptr<llvm::LLVMContext> context, bool* cache_hit) {
  // Owns both from here on and frees the module before its context, on
  // every path (the order in which parameters die is up to the compiler).
  llvm::orc::ThreadSafeModule safe_module(std::move(module), std::move(context));
  static std::atomic<uint64_t> counter{0};
  *cache_hit = false;
  std::unique_ptr<llvm::MemoryBuffer> cached;
  if (cache_) {
    safe_module.withModuleDo([&](llvm::Module& m) {
      std::string ir_text;
      llvm::raw_string_ostream out(ir_text);
      m.print(out, nullptr);
      out.flush();
      const std::string key = ObjectCacheKey(ir_text, triple_, cpu_, features_, optimization_level_);
      m.setModuleIdentifier(key);
      cached = cache_->Load(key);
    });
  }
  auto dylib = jit_->createJITDylib("kiln." + std::to_string(counter.fetch_add(1)));
  if (!dylib) return FromLlvm(dylib.takeError(), "creating a JITDylib");
  // libm and the C runtime, for the few scalar calls kernels make.
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
  if (!process) return FromLlvm(process.takeError(), "searching the process for symbols");
  dylib->addGenerator(std::move(*process));
  auto result = std::make_unique<JitModule>(shared_from_this(), &*dylib);
  if (cached) {
    *cache_hit = true;
    if (llvm::Error error = jit_->addObjectFile(*dylib, std::move(cached))) {
      return FromLlvm(std::move(error), "adding a cached object");
    }
  } else {
    if (llvm::Error error = jit_->addIRModule(*dylib, std::move(safe_module))) {
      return FromLlvm(std::move(error), "adding a module");
    }
  }
  return result;
}

}  // namespace kiln::cpu::codegen
