#include "backends/cuda/ptx_compiler.h"

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

#include "backends/cpu/codegen/emittable.h"
#include "backends/cpu/codegen/kernel_emitter.h"
#include "backends/cuda/libdevice.h"
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

bool HasComplex(const Shape& shape) {
  for (const Shape& leaf : shape.Leaves()) {
    if (leaf.IsArray() && IsComplex(leaf.element_type())) return true;
  }
  return false;
}

Status CheckNoComplex(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    bool complex = HasComplex(instruction->shape);
    for (const Instruction* operand : instruction->operands) complex = complex || HasComplex(operand->shape);
    if (complex) {
      return Unimplemented("cuda: ", OpcodeName(instruction->opcode), " on complex numbers (",
                           instruction->shape.ToString(),
                           ") is not supported yet; run it on the cpu backend");
    }
    for (const Computation* called : instruction->called) KILN_RETURN_IF_ERROR(CheckNoComplex(*called));
  }
  return OkStatus();
}

// `void name(ptr b0, ..., ptr bN-1, i64 extent)`, a GPU entry point: thread
// t = block * blockDim + thread runs parallel iteration t of the CPU-ABI
// kernel `body` (which is then inlined).
void EmitEntry(llvm::Module& module, llvm::Function& body, const std::string& name, int buffer_count) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  std::vector<llvm::Type*> params(static_cast<size_t>(buffer_count), ptr);
  params.push_back(i64);
  auto* entry = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false),
                                       llvm::GlobalValue::ExternalLinkage, name, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  for (int i = 0; i < buffer_count; ++i)
    entry->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(context, "entry", entry);
  llvm::BasicBlock* run = llvm::BasicBlock::Create(context, "run", entry);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", entry);
  llvm::IRBuilder<> b(start);
  auto special = [&](llvm::Intrinsic::ID id) { return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), i64); };
  llvm::Value* block = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  llvm::Value* width = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
  llvm::Value* thread = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* iteration = b.CreateAdd(b.CreateMul(block, width), thread);
  llvm::Value* extent = entry->getArg(static_cast<unsigned>(buffer_count));
  llvm::AllocaInst* buffers = b.CreateAlloca(ptr, b.getInt32(static_cast<uint32_t>(buffer_count)));
  b.CreateCondBr(b.CreateICmpULT(iteration, extent), run, done);
  b.SetInsertPoint(run);
  for (int i = 0; i < buffer_count; ++i) {
    b.CreateStore(entry->getArg(static_cast<unsigned>(i)),
                  b.CreateConstInBoundsGEP1_64(ptr, buffers, static_cast<uint64_t>(i)));
  }
  b.CreateCall(&body, {buffers, iteration, b.CreateAdd(iteration, b.getInt64(1))});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  body.setLinkage(llvm::GlobalValue::InternalLinkage);
  body.addFnAttr(llvm::Attribute::AlwaysInline);
  // LLVM 19 marks kernels through nvvm.annotations.
  llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  annotations->addOperand(llvm::MDNode::get(
      context, {llvm::ValueAsMetadata::get(entry), llvm::MDString::get(context, "kernel"),
                llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1))}));
  annotations->addOperand(
      llvm::MDNode::get(context, {llvm::ValueAsMetadata::get(entry), llvm::MDString::get(context, "maxntidx"),
                                  llvm::ValueAsMetadata::get(llvm::ConstantInt::get(
                                      llvm::Type::getInt32Ty(context), kThreadsPerBlock))}));
}

std::string ModuleText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return text;
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
  KILN_RETURN_IF_ERROR(cpu::codegen::CheckEmittable(computation));
  return CheckNoComplex(computation);
}

StatusOr<PtxModule> CompileToPtx(std::span<const cpu::KernelRequest> requests, const PtxTarget& target,
                                 const std::string& dump_ir_dir, const std::string& dump_stem) {
  PtxModule result;
  if (requests.empty()) return result;
  std::string error;
  const llvm::Target* nvptx = NvptxTarget(error);
  if (nvptx == nullptr) return Internal("cuda: LLVM has no NVPTX target: ", error);
  std::string features;
  if (target.ptx_version > 0) features = "+ptx" + std::to_string(target.ptx_version);
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
  for (const cpu::KernelRequest& request : requests) {
    KILN_RETURN_IF_ERROR(CheckPtxEmittable(*request.computation));
    const std::string body_name = request.name + ".iteration";
    KILN_ASSIGN_OR_RETURN(cpu::codegen::KernelLayout layout,
                          cpu::codegen::EmitKernel(*module, *request.computation, body_name,
                                                   /*work_per_iteration=*/1));
    int buffer_count = static_cast<int>(request.computation->parameters().size());
    for (const Shape& leaf : request.computation->root()->shape.Leaves())
      buffer_count += leaf.IsArray() ? 1 : 0;
    EmitEntry(*module, *module->getFunction(body_name), request.name, buffer_count);
    result.kernels.push_back({request.name, layout.parallel_extent, buffer_count});
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
