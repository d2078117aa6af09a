// KernelCompiler on LLVM: splits the requests into a few modules (each with
// its own LLVMContext) that the JIT emits and compiles in parallel, then
// links into one JITDylib.
#include "backends/cpu/codegen/kernel_compiler.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <utility>

#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/compile_tier.h"
#include "backends/cpu/codegen/cpu_target_hooks.h"
#include "backends/cpu/codegen/fused_loop_emitter.h"
#include "backends/cpu/codegen/jit.h"
#include "backends/cpu/codegen/phase_timer.h"
#include "backends/llvm/emittable.h"
#include "backends/llvm/kernel_emitter.h"

namespace kiln::cpu {
namespace {

using codegen::CompileTier;

class LlvmCompiledKernels : public CompiledKernels {
 public:
  LlvmCompiledKernels(std::unique_ptr<codegen::JitModule> code, std::vector<KernelInfo> kernels,
                      std::vector<FusedLoopFunction> loops)
      : code_(std::move(code)), kernels_(std::move(kernels)), loops_(std::move(loops)) {}
  const std::vector<KernelInfo>& kernels() const override { return kernels_; }
  const std::vector<FusedLoopFunction>& loops() const override { return loops_; }

 private:
  std::unique_ptr<codegen::JitModule> code_;
  std::vector<KernelInfo> kernels_;
  std::vector<FusedLoopFunction> loops_;
};

// Splits the requests `members` names into at most `count` groups of about
// equal size (by instruction count, largest first onto the lightest group),
// one module each, so that the modules compile in about the same time in
// parallel.
std::vector<std::vector<size_t>> BalancedGroups(std::span<const KernelDescription> requests,
                                                std::vector<size_t> members, int count) {
  auto size_of = [&](size_t i) { return requests[i].computation->instructions().size(); };
  // Ties keep request order, so the grouping is deterministic.
  std::sort(members.begin(), members.end(),
            [&](size_t a, size_t b) { return size_of(a) != size_of(b) ? size_of(a) > size_of(b) : a < b; });
  const size_t groups = std::min(members.size(), static_cast<size_t>(std::max(count, 1)));
  std::vector<std::vector<size_t>> grouped(groups);
  std::vector<size_t> load(groups, 0);
  for (size_t i : members) {
    const size_t lightest = std::min_element(load.begin(), load.end()) - load.begin();
    grouped[lightest].push_back(i);
    load[lightest] += size_of(i);
  }
  return grouped;
}

// The modules of the requests that no loop calls (`in_loop`): fully
// optimised ones first (they take longest, and workers take modules in
// order), then quick-tier ones.
std::vector<std::pair<CompileTier, std::vector<size_t>>> PlanModules(
    std::span<const KernelDescription> requests, const std::vector<bool>& in_loop, int threads,
    int64_t quick_tier_max_iterations) {
  std::vector<size_t> optimized, quick;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (in_loop[i]) continue;
    const CompileTier tier = codegen::ChooseCompileTier(*requests[i].computation, quick_tier_max_iterations);
    (tier == CompileTier::kQuick ? quick : optimized).push_back(i);
  }
  std::vector<std::pair<CompileTier, std::vector<size_t>>> modules;
  for (auto& group : BalancedGroups(requests, std::move(optimized), threads)) {
    modules.emplace_back(CompileTier::kOptimized, std::move(group));
  }
  for (auto& group : BalancedGroups(requests, std::move(quick), threads)) {
    modules.emplace_back(CompileTier::kQuick, std::move(group));
  }
  return modules;
}

class LlvmKernelCompiler : public KernelCompiler {
 public:
  LlvmKernelCompiler(std::shared_ptr<codegen::Jit> jit, int64_t quick_tier_max_iterations)
      : jit_(std::move(jit)), quick_tier_max_iterations_(quick_tier_max_iterations) {}

  Status CheckEmittable(const Computation& computation) const override {
    return llvm_ir::CheckEmittable(computation);
  }

  using KernelCompiler::Compile;
  StatusOr<std::shared_ptr<CompiledKernels>> Compile(std::span<const KernelDescription> requests,
                                                     std::span<const FusedLoopRequest> loops,
                                                     const KernelDump& dump) override {
    PhaseTimer total("kernels: total");
    std::set<std::string> names;
    for (const KernelDescription& request : requests) {
      if (request.computation == nullptr)
        return InvalidArgument("cpu codegen: request ", request.name, " has no computation");
      if (request.name.empty()) return InvalidArgument("cpu codegen: a kernel request has an empty name");
      if (!names.insert(request.name).second) {
        return InvalidArgument("cpu codegen: kernel name ", request.name, " is used twice");
      }
      KILN_RETURN_IF_ERROR(llvm_ir::CheckEmittable(*request.computation));
    }
    // The kernels the loops call are emitted once, in the loops' module,
    // under their own names: the loops inline them and their thunks (run
    // when a loop cannot go whole) call them.
    std::vector<bool> in_loop(requests.size(), false);
    for (const FusedLoopRequest& loop : loops) {
      if (loop.name.empty()) return InvalidArgument("cpu codegen: a loop request has an empty name");
      if (!names.insert(loop.name).second) {
        return InvalidArgument("cpu codegen: loop name ", loop.name, " is used twice");
      }
      for (const auto* part : {&loop.condition, &loop.body}) {
        for (size_t kernel : *part) {
          if (kernel >= requests.size()) {
            return InvalidArgument("cpu codegen: loop ", loop.name, " names kernel ", kernel, " of ",
                                   requests.size());
          }
          in_loop[kernel] = true;
        }
      }
    }
    std::vector<KernelInfo> kernels(requests.size());
    std::vector<codegen::ModuleJob> jobs;
    auto dump_into = [&](codegen::ModuleJob& job) {
      if (dump.directory.empty()) return;
      job.dump_directory = dump.directory;
      job.dump_stem = dump.stem + "." + std::to_string(jobs.size() - 1);
    };
    auto emit_kernel = [requests, &kernels](llvm::Module& module, size_t i) -> Status {
      const codegen::CpuTargetHooks target;
      KILN_ASSIGN_OR_RETURN(llvm_ir::KernelLayout layout,
                            llvm_ir::EmitKernel(module, *requests[i].computation, requests[i].name, target));
      kernels[i].parallel_extent = layout.parallel_extent;
      kernels[i].bytes_per_iteration = layout.bytes_per_iteration;
      return OkStatus();
    };
    for (auto& [tier, group] :
         PlanModules(requests, in_loop, KernelCompileThreads(), quick_tier_max_iterations_)) {
      codegen::ModuleJob& job = jobs.emplace_back();
      job.tier = tier;
      dump_into(job);
      job.emit = [emit_kernel, group = std::move(group)](llvm::Module& module) -> Status {
        for (size_t i : group) KILN_RETURN_IF_ERROR(emit_kernel(module, i));
        return OkStatus();
      };
    }
    if (!loops.empty()) {
      codegen::ModuleJob& job = jobs.emplace_back();
      // The loops' code is as small as their kernels: when they all take
      // the quick tier, so does its instruction selection (its IR is still
      // optimised by the fused loop pipeline), which reuses the quick
      // tier's target machine instead of creating a fully optimising one,
      // about 10 ms of a small program's compile.
      job.tier = CompileTier::kQuick;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (in_loop[i] && codegen::ChooseCompileTier(*requests[i].computation, quick_tier_max_iterations_) ==
                              CompileTier::kOptimized)
          job.tier = CompileTier::kOptimized;
      }
      job.fused_loop = true;
      dump_into(job);
      job.emit = [requests, loops, &kernels, &in_loop, emit_kernel](llvm::Module& module) -> Status {
        std::vector<llvm::Function*> functions(requests.size(), nullptr);
        for (size_t i = 0; i < requests.size(); ++i) {
          if (!in_loop[i]) continue;
          KILN_RETURN_IF_ERROR(emit_kernel(module, i));
          functions[i] = module.getFunction(requests[i].name);
          if (functions[i] == nullptr)
            return Internal("cpu codegen: kernel ", requests[i].name, " was not emitted");
        }
        auto called = [&](const std::vector<size_t>& part) {
          std::vector<FusedLoopKernel> called_kernels;
          for (size_t i : part) {
            called_kernels.push_back(
                {functions[i], kernels[i].parallel_extent, FusedLoopKernelBuffers(*requests[i].computation)});
          }
          return called_kernels;
        };
        for (const FusedLoopRequest& loop : loops)
          KILN_RETURN_IF_ERROR(EmitFusedLoop(module, loop.name, called(loop.condition), called(loop.body)));
        return OkStatus();
      };
    }
    int cached_modules = 0;
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<codegen::JitModule> code, jit_->AddModules(jobs, &cached_modules));
    for (size_t i = 0; i < requests.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(void* address, code->Lookup(requests[i].name));
      kernels[i].function = reinterpret_cast<KernelFunction>(address);
    }
    std::vector<FusedLoopFunction> loop_functions;
    for (const FusedLoopRequest& loop : loops) {
      KILN_ASSIGN_OR_RETURN(void* address, code->Lookup(loop.name));
      loop_functions.push_back(reinterpret_cast<FusedLoopFunction>(address));
    }
    const bool all_cached = !jobs.empty() && cached_modules == static_cast<int>(jobs.size());
    cache_hits_.fetch_add(all_cached ? 1 : 0);
    return std::shared_ptr<CompiledKernels>(std::make_shared<LlvmCompiledKernels>(
        std::move(code), std::move(kernels), std::move(loop_functions)));
  }

  int64_t cache_hits() const override { return cache_hits_.load(); }

 private:
  std::shared_ptr<codegen::Jit> jit_;
  int64_t quick_tier_max_iterations_;
  std::atomic<int64_t> cache_hits_{0};
};

}  // namespace

int KernelCompileThreads() { return codegen::Jit::CompileThreads(); }

StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(const KernelCompilerOptions& options) {
  if (options.quick_tier_max_iterations < 0) {
    return InvalidArgument("cpu codegen: quick_tier_max_iterations must be >= 0, got ",
                           options.quick_tier_max_iterations);
  }
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<codegen::Jit> jit,
                        codegen::Jit::Create(options.optimization_level, options.cache_dir));
  return std::unique_ptr<KernelCompiler>(
      std::make_unique<LlvmKernelCompiler>(std::move(jit), options.quick_tier_max_iterations));
}

}  // namespace kiln::cpu
