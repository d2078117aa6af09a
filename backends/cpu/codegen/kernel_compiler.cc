// KernelCompiler on LLVM: emits every request into one module (one
// LLVMContext per Compile call, so calls can run on several threads), then
// hands it to the JIT.
#include "backends/cpu/codegen/kernel_compiler.h"

#include <atomic>
#include <optional>

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/cpu/codegen/emittable.h"
#include "backends/cpu/codegen/jit.h"
#include "backends/cpu/codegen/kernel_emitter.h"
#include "backends/cpu/codegen/phase_timer.h"

namespace kiln::cpu {
namespace {

class LlvmCompiledKernels : public CompiledKernels {
 public:
  LlvmCompiledKernels(std::unique_ptr<codegen::JitModule> code, std::vector<KernelInfo> kernels)
      : code_(std::move(code)), kernels_(std::move(kernels)) {}
  const std::vector<KernelInfo>& kernels() const override { return kernels_; }

 private:
  std::unique_ptr<codegen::JitModule> code_;
  std::vector<KernelInfo> kernels_;
};

class LlvmKernelCompiler : public KernelCompiler {
 public:
  explicit LlvmKernelCompiler(std::shared_ptr<codegen::Jit> jit) : jit_(std::move(jit)) {}

  Status CheckEmittable(const Computation& computation) const override {
    return codegen::CheckEmittable(computation);
  }

  StatusOr<std::shared_ptr<CompiledKernels>> Compile(std::span<const KernelRequest> requests) override {
    PhaseTimer total("kernels: total");
    std::optional<PhaseTimer> emit(std::in_place, "kernels: emit IR");
    auto context = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module = jit_->NewModule("kiln_kernels", *context);
    std::vector<KernelInfo> kernels;
    for (const KernelRequest& request : requests) {
      if (request.computation == nullptr)
        return InvalidArgument("cpu codegen: request ", request.name, " has no computation");
      if (request.name.empty()) return InvalidArgument("cpu codegen: a kernel request has an empty name");
      if (module->getFunction(request.name) != nullptr) {
        return InvalidArgument("cpu codegen: kernel name ", request.name, " is used twice");
      }
      KILN_RETURN_IF_ERROR(codegen::CheckEmittable(*request.computation));
      KILN_ASSIGN_OR_RETURN(codegen::KernelLayout layout,
                            codegen::EmitKernel(*module, *request.computation, request.name));
      KernelInfo info;
      info.parallel_extent = layout.parallel_extent;
      info.bytes_per_iteration = layout.bytes_per_iteration;
      kernels.push_back(info);
    }
    std::string problems;
    llvm::raw_string_ostream problem_stream(problems);
    if (llvm::verifyModule(*module, &problem_stream)) {
      problem_stream.flush();
      return Internal("cpu codegen: emitted invalid IR: ", problems);
    }
    emit.reset();
    PhaseTimer jit("kernels: optimise+codegen");
    bool cache_hit = false;
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<codegen::JitModule> code,
                          jit_->Add(std::move(module), std::move(context), &cache_hit));
    for (size_t i = 0; i < requests.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(void* address, code->Lookup(requests[i].name));
      kernels[i].function = reinterpret_cast<KernelFunction>(address);
    }
    cache_hits_.fetch_add(cache_hit ? 1 : 0);
    return std::shared_ptr<CompiledKernels>(
        std::make_shared<LlvmCompiledKernels>(std::move(code), std::move(kernels)));
  }

  int64_t cache_hits() const override { return cache_hits_.load(); }

 private:
  std::shared_ptr<codegen::Jit> jit_;
  std::atomic<int64_t> cache_hits_{0};
};

}  // namespace

StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(const KernelCompilerOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<codegen::Jit> jit,
                        codegen::Jit::Create(options.optimization_level, options.cache_dir));
  return std::unique_ptr<KernelCompiler>(std::make_unique<LlvmKernelCompiler>(std::move(jit)));
}

}  // namespace kiln::cpu
