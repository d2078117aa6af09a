#include "backends/cuda/ptx_compiler.h"

#include <algorithm>
#include <charconv>
#include <mutex>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "backends/cuda/atomic_scatter_emitter.h"
#include "backends/cuda/convolution_gemm_emitter.h"
#include "backends/cuda/cuda_target_hooks.h"
#include "backends/cuda/gpu_entry.h"
#include "backends/cuda/libdevice.h"
#include "backends/cuda/rng_bit_generator_emitter.h"
#include "backends/cuda/rng_emitter.h"
#include "backends/cuda/sort_emitter.h"
#include "backends/cuda/whole_loop_emitter.h"
#include "backends/llvm/emittable.h"
#include "backends/llvm/kernel_emitter.h"
#include "core/dump_file.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace kiln::cuda {
namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";
// What clang emits for nvptx64 (64-bit pointers everywhere).
constexpr const char* kDataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";

const llvm::Target* NvptxTarget(std::string& error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  return llvm::TargetRegistry::lookupTarget(kTriple, error);
}

// A GPU entry (gpu_entry.h) whose thread t runs parallel iteration t of
// the CPU-ABI kernel `body` (which is then inlined).
void EmitEntry(llvm::Module& module, llvm::Function& body, const std::string& name, int buffer_count) {
  GpuEntry entry = BeginGpuEntry(module, name, buffer_count);
  llvm::IRBuilder<>& b = *entry.builder;
  llvm::Type* ptr = llvm::PointerType::getUnqual(module.getContext());
  llvm::AllocaInst* buffers;
  {
    llvm::IRBuilder<> at_entry(entry.entry_block, entry.entry_block->begin());
    buffers = at_entry.CreateAlloca(ptr, at_entry.getInt32(static_cast<uint32_t>(buffer_count)));
  }
  for (int i = 0; i < buffer_count; ++i) {
    b.CreateStore(entry.function->getArg(static_cast<unsigned>(i)),
                  b.CreateConstInBoundsGEP1_64(ptr, buffers, static_cast<uint64_t>(i)));
  }
  b.CreateCall(&body, {buffers, entry.thread, b.CreateAdd(entry.thread, b.getInt64(1))});
  FinishGpuEntry(entry);
  body.setLinkage(llvm::GlobalValue::InternalLinkage);
  body.addFnAttr(llvm::Attribute::AlwaysInline);
}

// shfl.sync.bfly over a whole warp: the value of lane (this lane ^ offset),
// for any compute type (split into 32-bit words).
llvm::Value* ShuffleXor(llvm::IRBuilder<>& b, llvm::Value* value, int64_t offset) {
  llvm::Type* type = value->getType();
  llvm::Type* i32 = b.getInt32Ty();
  auto shuffle32 = [&](llvm::Value* word) {
    return b.CreateIntrinsic(
        llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
        {b.getInt32(0xffffffffu), word, b.getInt32(static_cast<uint32_t>(offset)), b.getInt32(0x1f)});
  };
  const unsigned bits = type->getPrimitiveSizeInBits().getFixedValue();
  if (bits == 64) {
    llvm::Value* whole = b.CreateBitCast(value, b.getInt64Ty());
    llvm::Value* low = shuffle32(b.CreateTrunc(whole, i32));
    llvm::Value* high = shuffle32(b.CreateTrunc(b.CreateLShr(whole, 32), i32));
    llvm::Value* joined =
        b.CreateOr(b.CreateZExt(low, b.getInt64Ty()), b.CreateShl(b.CreateZExt(high, b.getInt64Ty()), 32));
    return b.CreateBitCast(joined, type);
  }
  if (bits == 32) return b.CreateBitCast(shuffle32(b.CreateBitCast(value, i32)), type);
  // Wider values (c128 is <2 x double>) travel as a vector of 32-bit words.
  if (bits > 64 && bits % 32 == 0) {
    llvm::Type* words_type = llvm::FixedVectorType::get(i32, bits / 32);
    llvm::Value* words = b.CreateBitCast(value, words_type);
    for (unsigned word = 0; word < bits / 32; ++word)
      words = b.CreateInsertElement(words, shuffle32(b.CreateExtractElement(words, word)), word);
    return b.CreateBitCast(words, type);
  }
  // Narrower integers (pred is i1) travel widened.
  llvm::Type* narrow = b.getIntNTy(bits);
  llvm::Value* as_int = b.CreateBitCast(value, narrow);
  return b.CreateBitCast(b.CreateTrunc(shuffle32(b.CreateZExt(as_int, i32)), narrow), type);
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return text;
}

// The PTX ISA from which ptxas takes kernel parameters past 4352 bytes
// (on sm_70 and later).
constexpr int kLargeParameterPtxVersion = 81;

// The most bytes of parameters any request's kernel takes: a pointer per
// argument, result and scratch, then at most three i64 (a sort's mode,
// block and stride; an extent and an rng key otherwise).
int64_t WidestKernelParameterBytes(std::span<const KernelDescription> requests) {
  int64_t widest = 0;
  for (const KernelDescription& request : requests) {
    const size_t buffers =
        request.arguments.size() + request.results.size() + (request.scratch_bytes > 0 ? 1 : 0);
    widest = std::max(widest, 8 * static_cast<int64_t>(buffers + 3));
  }
  return widest;
}

}  // namespace

StatusOr<PtxTarget> ParsePtxTarget(std::string_view text) {
  std::string_view digits = text;
  if (digits.substr(0, 3) == "sm_") digits.remove_prefix(3);
  int sm = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), sm);
  if (error != std::errc() || end != digits.data() + digits.size() || sm < kMinSm || sm > kMaxSm) {
    return InvalidArgument("cuda: target '", text, "' is not a compute capability Kiln emits for; give sm_",
                           kMinSm, " .. sm_", kMaxSm,
                           " such as sm_80 (architecture-specific targets like sm_90a "
                           "are not offered: their PTX does not run on later GPUs)");
  }
  PtxTarget target;
  target.sm = sm;
  return target;
}

Status CheckPtxEmittable(const Computation& computation) {
  const Instruction* root = computation.root();
  if (root != nullptr && root->opcode == Opcode::kRng) {
    if (computation.parameters().size() != 2 || root->operand(0) != computation.parameters()[0] ||
        root->operand(1) != computation.parameters()[1])
      return Unimplemented("cuda: an rng kernel takes its operands as they are (nothing fused into it)");
    return CheckRngEmittable(*root);
  }
  if (root != nullptr && root->opcode == Opcode::kRngBitGenerator) {
    if (computation.parameters().size() != 1 || root->operand(0) != computation.parameters()[0])
      return Unimplemented(
          "cuda: an rng-bit-generator kernel takes its state as it is (nothing fused into it)");
    return CheckRngBitGeneratorEmittable(*root);
  }
  if (root != nullptr && (root->opcode == Opcode::kSort || root->opcode == Opcode::kTopK)) {
    // Sort and topk kernels read their operands from the kernel's buffers.
    const auto& parameters = computation.parameters();
    bool direct = parameters.size() == root->operands.size();
    for (size_t i = 0; direct && i < parameters.size(); ++i)
      direct = root->operand(i) == parameters[i] &&
               parameters[i]->attrs.parameter_number == static_cast<int64_t>(i);
    if (!direct)
      return Unimplemented("cuda: a sort kernel takes its operands as they are (nothing fused into it)");
    return root->opcode == Opcode::kSort ? CheckSortEmittable(*root) : CheckTopKEmittable(*root);
  }
  llvm_ir::EmittableOptions options;
  options.dynamic_update_slice_root = true;
  return llvm_ir::CheckEmittable(computation, options);
}

KernelGrid CudaKernelGrid(const PtxKernel& kernel) {
  // At least one block, as every kernel's extent is at least one iteration.
  return LinearGrid(std::max<int64_t>(1, kernel.parallel_extent), kThreadsPerBlock);
}

StatusOr<PtxModule> CompileToPtx(std::span<const KernelDescription> requests, const PtxTarget& target,
                                 const std::string& dump_ir_dir, const std::string& dump_stem,
                                 std::span<const WholeLoopKernel> loops) {
  PtxModule result;
  if (requests.empty()) return result;
  std::string error;
  const llvm::Target* nvptx = NvptxTarget(error);
  if (nvptx == nullptr) return Internal("cuda: LLVM has no NVPTX target: ", error);
  std::string features;
  if (target.ptx_version > 0) {
    features = "+ptx" + std::to_string(target.ptx_version);
  } else if (target.sm < 70) {
    features = "+ptx60";  // warp shuffles need shfl.sync (PTX 6.0)
  }
  // ptxas takes parameters past 4352 bytes from PTX ISA 8.1 only: a module
  // with a kernel past the portable 4 KiB asks for it.
  if (target.ptx_version < kLargeParameterPtxVersion &&
      WidestKernelParameterBytes(requests) > kPortableKernelParameterBytes)
    features = "+ptx" + std::to_string(kLargeParameterPtxVersion);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      nvptx->createTargetMachine(kTriple, target.ToString(), features, options, std::nullopt, std::nullopt,
                                 llvm::CodeGenOptLevel::Aggressive));
  if (machine == nullptr)
    return Internal("cuda: cannot create an NVPTX target machine for ", target.ToString());

  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>("kiln_cuda_kernels", context);
  module->setTargetTriple(kTriple);
  module->setDataLayout(kDataLayout);
  // Precise math: no flushing of subnormals in libdevice's functions.
  module->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  const CudaTargetHooks hooks;
  for (const KernelDescription& request : requests) {
    const Instruction* root = request.computation->root();
    if (root != nullptr && root->opcode == Opcode::kSort) {
      KILN_ASSIGN_OR_RETURN(PtxKernel sort, EmitSortKernel(*module, *root, request.name));
      result.kernels.push_back(std::move(sort));
      continue;
    }
    if (root != nullptr && root->opcode == Opcode::kRng) {
      KILN_ASSIGN_OR_RETURN(const int64_t elements, EmitRngKernel(*module, *root, request.name));
      result.kernels.push_back({request.name, elements, 3, /*takes_rng_key=*/true});
      continue;
    }
    if (root != nullptr && root->opcode == Opcode::kRngBitGenerator) {
      KILN_RETURN_IF_ERROR(CheckPtxEmittable(*request.computation));
      KILN_ASSIGN_OR_RETURN(const int64_t threads, EmitRngBitGeneratorKernel(*module, *root, request.name));
      result.kernels.push_back({request.name, threads, 3});
      continue;
    }
    if (root != nullptr && root->opcode == Opcode::kTopK) {
      KILN_ASSIGN_OR_RETURN(PtxKernel top_k, EmitTopKKernel(*module, *root, request.name));
      result.kernels.push_back(std::move(top_k));
      continue;
    }
    KILN_RETURN_IF_ERROR(CheckPtxEmittable(*request.computation));
    if (root != nullptr && root->opcode == Opcode::kConvolution) {
      // An implicit GEMM where it applies; else the elemental path below.
      if (StatusOr<ConvolutionGemmPlan> plan = PlanConvolutionGemmKernel(*request.computation); plan.ok()) {
        KILN_ASSIGN_OR_RETURN(PtxKernel convolution,
                              EmitConvolutionGemmKernel(*module, *request.computation, *plan, request.name));
        result.kernels.push_back(std::move(convolution));
        continue;
      }
    }
    if (RunsAsAtomicScatter(*request.computation)) {
      KILN_ASSIGN_OR_RETURN(PtxKernel scatter,
                            EmitAtomicScatterKernel(*module, *request.computation, request.name));
      result.kernels.push_back(std::move(scatter));
      continue;
    }
    const std::string body_name = request.name + ".iteration";
    // One output element per thread; a warp per row where rows are reduced.
    llvm_ir::CooperativeRows warp;
    warp.lanes = kWarpSize;
    warp.shuffle_xor = ShuffleXor;
    KILN_ASSIGN_OR_RETURN(llvm_ir::KernelLayout layout,
                          llvm_ir::EmitKernel(*module, *request.computation, body_name, hooks,
                                              /*work_per_iteration=*/1, &warp));
    int buffer_count = static_cast<int>(request.computation->parameters().size());
    for (const Shape& leaf : request.computation->root()->shape.Leaves())
      buffer_count += leaf.IsArray() ? 1 : 0;
    EmitEntry(*module, *module->getFunction(body_name), request.name, buffer_count);
    result.kernels.push_back({request.name, layout.parallel_extent, buffer_count});
  }
  // The loops run whole call the kernels' iteration functions, before the
  // optimiser inlines and drops them.
  for (const WholeLoopKernel& loop : loops) {
    KILN_ASSIGN_OR_RETURN(const bool emitted, EmitWholeLoopKernel(*module, loop, result.kernels));
    result.loops.push_back(emitted ? loop.name : "");
  }
  UseLibdeviceNames(*module);
  if (!dump_ir_dir.empty()) {
    KILN_RETURN_IF_ERROR(WriteDumpFile(dump_ir_dir, dump_stem + ".ptx.emitted.ll", ModuleText(*module)));
  }
  {
    std::string problems;
    llvm::raw_string_ostream out(problems);
    if (llvm::verifyModule(*module, &out))
      return Internal("cuda: the emitted kernel module is invalid: ", problems);
  }
  KILN_RETURN_IF_ERROR(LinkLibdevice(*module));

  {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder passes(machine.get());
    passes.registerModuleAnalyses(modules);
    passes.registerCGSCCAnalyses(cgscc);
    passes.registerFunctionAnalyses(functions);
    passes.registerLoopAnalyses(loops);
    passes.crossRegisterProxies(loops, functions, cgscc, modules);
    // O3 with the NVPTX machine: its pipeline-start callback runs
    // NVVMReflect, which resolves libdevice's __nvvm_reflect queries.
    llvm::ModulePassManager pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    pipeline.run(*module, modules);
  }
  for (const llvm::Function& function : *module) {
    if (function.isDeclaration() && !function.isIntrinsic() && !function.use_empty()) {
      return Unimplemented("cuda: the kernels call ", function.getName().str(),
                           ", which has no GPU implementation (not in libdevice)");
    }
  }
  if (!dump_ir_dir.empty()) {
    KILN_RETURN_IF_ERROR(WriteDumpFile(dump_ir_dir, dump_stem + ".ptx.optimized.ll", ModuleText(*module)));
  }

  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream out(ptx);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
      return Internal("cuda: the NVPTX target cannot emit PTX");
    }
    codegen.run(*module);
  }
  result.ptx = std::string(ptx.str());
  return result;
}

}  // namespace kiln::cuda
