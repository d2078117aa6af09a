#include "tests/cuda/host_kernel_harness.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include "tests/cuda/host_block_fibers.h"

namespace kiln::cuda_test {
namespace {

constexpr int kHostWarpLanes = 32;

// One warp's meeting point for shuffles: each lane leaves its word, all
// meet, each takes its partner's, all meet again before the next shuffle
// may overwrite the words.
struct HostWarp {
  HostWarp(int warp, int lanes)
      : meeting("warp " + std::to_string(warp) + "'s shuffle", lanes), lanes(lanes) {}
  FiberMeeting meeting;
  int lanes;
  uint32_t words[kHostWarpLanes] = {};
};

// The GPU thread the running code plays. Its block's threads are fibers of
// one host thread, so each fiber sets it again whenever it is resumed.
struct HostGpuThread {
  uint32_t thread = 0;
  uint32_t block = 0;
  uint32_t block_size = 1;
  FiberBlock* fibers = nullptr;  // null: threads run one after another
  FiberMeeting* block_barrier = nullptr;
  HostWarp* warp = nullptr;
};
thread_local HostGpuThread played_gpu_thread;

uint32_t HostThreadIndex() { return played_gpu_thread.thread; }
uint32_t HostBlockIndex() { return played_gpu_thread.block; }
uint32_t HostBlockSize() { return played_gpu_thread.block_size; }

// Parks the playing fiber at `meeting` and plays its thread again once
// the others arrived (other fibers ran meanwhile).
void MeetAsPlayedThread(FiberMeeting& meeting) {
  const HostGpuThread played = played_gpu_thread;
  played.fibers->Meet(meeting);
  played_gpu_thread = played;
}

void HostBlockBarrier() {
  if (played_gpu_thread.fibers == nullptr) {
    ADD_FAILURE() << "a block barrier in a kernel whose threads run one after another";
    return;
  }
  MeetAsPlayedThread(*played_gpu_thread.block_barrier);
}

uint32_t HostShuffleXor(uint32_t mask, uint32_t value, uint32_t offset, uint32_t clamp) {
  HostWarp* warp = played_gpu_thread.warp;
  if (warp == nullptr) {
    ADD_FAILURE() << "a warp shuffle in a kernel whose threads run one after another";
    return value;
  }
  const uint32_t lane = played_gpu_thread.thread % kHostWarpLanes;
  const uint32_t partner = lane ^ offset;
  if (mask != 0xffffffffu || clamp != kHostWarpLanes - 1 || partner >= static_cast<uint32_t>(warp->lanes))
    ADD_FAILURE() << "shfl.sync.bfly with mask " << mask << ", clamp " << clamp << ", lane " << lane << " ^ "
                  << offset << " in a warp of " << warp->lanes << " threads";
  warp->words[lane] = value;
  MeetAsPlayedThread(warp->meeting);
  const uint32_t shuffled = partner < static_cast<uint32_t>(warp->lanes) ? warp->words[partner] : value;
  MeetAsPlayedThread(warp->meeting);
  return shuffled;
}

// An intrinsic of the kernels and the host function that plays it.
struct HostIntrinsic {
  const char* intrinsic;
  const char* host_name;
  void* host;
};
const HostIntrinsic kHostIntrinsics[] = {
    {"llvm.nvvm.read.ptx.sreg.tid.x", "kiln_host_thread_index", reinterpret_cast<void*>(&HostThreadIndex)},
    {"llvm.nvvm.read.ptx.sreg.ctaid.x", "kiln_host_block_index", reinterpret_cast<void*>(&HostBlockIndex)},
    {"llvm.nvvm.read.ptx.sreg.ntid.x", "kiln_host_block_size", reinterpret_cast<void*>(&HostBlockSize)},
    {"llvm.nvvm.barrier0", "kiln_host_block_barrier", reinterpret_cast<void*>(&HostBlockBarrier)},
    {"llvm.nvvm.shfl.sync.bfly.i32", "kiln_host_shuffle_xor", reinterpret_cast<void*>(&HostShuffleXor)},
};

// Replaces the intrinsics by calls of the host's functions; INTERNAL
// naming a called function the host has no version of.
Status RewriteForHost(llvm::Module& module) {
  for (const HostIntrinsic& replaced : kHostIntrinsics) {
    llvm::Function* intrinsic = module.getFunction(replaced.intrinsic);
    if (intrinsic == nullptr) continue;
    llvm::Function* host = llvm::Function::Create(
        intrinsic->getFunctionType(), llvm::GlobalValue::ExternalLinkage, replaced.host_name, module);
    intrinsic->replaceAllUsesWith(host);
    intrinsic->eraseFromParent();
  }
  for (llvm::Function& function : module) {
    // The NVPTX target's own attributes mean nothing to the host's.
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("target-features");
    if (!function.isDeclaration() || function.use_empty()) continue;
    const std::string name = function.getName().str();
    bool host = false;
    for (const HostIntrinsic& replaced : kHostIntrinsics) host |= name == replaced.host_name;
    if (host || (function.isIntrinsic() && name.rfind("llvm.nvvm.", 0) != 0)) continue;
    return Internal("the kernels call ", name, ", which the host harness does not play",
                    name.rfind("__nv_", 0) == 0 ? " (libdevice's math is not mapped to the host's)" : "");
  }
  return OkStatus();
}

// Adds `void NAME.host_call(ptr words)`, which calls `entry` with words[i]
// as its parameter i.
StatusOr<std::string> AddArrayCaller(llvm::Module& module, const std::string& entry) {
  llvm::Function* kernel = module.getFunction(entry);
  if (kernel == nullptr || kernel->isDeclaration()) return Internal("the module has no kernel ", entry);
  kernel->setCallingConv(llvm::CallingConv::C);
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  const std::string name = entry + ".host_call";
  llvm::Function* caller =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr}, false),
                             llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", caller));
  std::vector<llvm::Value*> arguments;
  for (llvm::Argument& parameter : kernel->args()) {
    llvm::Value* word =
        b.CreateLoad(b.getInt64Ty(),
                     b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), caller->getArg(0), parameter.getArgNo()));
    llvm::Type* type = parameter.getType();
    if (type->isPointerTy()) {
      arguments.push_back(b.CreateIntToPtr(word, type));
    } else if (type->isIntegerTy() && type->getIntegerBitWidth() <= 64) {
      arguments.push_back(b.CreateTrunc(word, type));
    } else {
      return Internal("kernel ", entry, "'s parameter ", parameter.getArgNo(),
                      " is neither a pointer nor an integer");
    }
  }
  b.CreateCall(kernel, arguments);
  b.CreateRetVoid();
  return name;
}

}  // namespace

HostKernels::~HostKernels() = default;

StatusOr<std::unique_ptr<HostKernels>> HostKernels::Compile(std::unique_ptr<llvm::LLVMContext> context,
                                                            std::unique_ptr<llvm::Module> module,
                                                            const std::vector<std::string>& entries) {
  static const bool initialised = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialised;
  KILN_RETURN_IF_ERROR(RewriteForHost(*module));
  std::vector<std::string> caller_names;
  for (const std::string& entry : entries) {
    KILN_ASSIGN_OR_RETURN(std::string name, AddArrayCaller(*module, entry));
    caller_names.push_back(std::move(name));
  }
  std::unique_ptr<HostKernels> kernels(new HostKernels);
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return Internal("LLJIT: ", llvm::toString(jit.takeError()));
  kernels->jit_ = std::move(*jit);
  module->setDataLayout(kernels->jit_->getDataLayout());
  module->setTargetTriple(kernels->jit_->getTargetTriple().str());
  {
    std::string problems;
    llvm::raw_string_ostream out(problems);
    if (llvm::verifyModule(*module, &out))
      return Internal("the kernels' IR for the host is invalid: ", problems);
  }
  llvm::orc::SymbolMap host_symbols;
  for (const HostIntrinsic& replaced : kHostIntrinsics) {
    host_symbols[kernels->jit_->mangleAndIntern(replaced.host_name)] = {
        llvm::orc::ExecutorAddr::fromPtr(replaced.host),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  }
  if (llvm::Error error =
          kernels->jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(host_symbols))))
    return Internal("define: ", llvm::toString(std::move(error)));
  if (llvm::Error error =
          kernels->jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    return Internal("addIRModule: ", llvm::toString(std::move(error)));
  for (size_t i = 0; i < entries.size(); ++i) {
    auto symbol = kernels->jit_->lookup(caller_names[i]);
    if (!symbol) return Internal("lookup of ", entries[i], ": ", llvm::toString(symbol.takeError()));
    kernels->callers_[entries[i]] = symbol->toPtr<void (*)(const uint64_t*)>();
  }
  return kernels;
}

StatusOr<std::unique_ptr<HostKernels>> HostKernels::CompileFile(const std::string& path,
                                                                const std::vector<std::string>& entries) {
  auto context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic problem;
  std::unique_ptr<llvm::Module> module = llvm::parseIRFile(path, problem, *context);
  if (module == nullptr) {
    std::string message;
    llvm::raw_string_ostream out(message);
    problem.print("kiln", out);
    return Internal("cannot read the kernels' IR from ", path, ": ", message);
  }
  return Compile(std::move(context), std::move(module), entries);
}

Status HostKernels::RunBlock(const std::string& entry, std::span<const uint64_t> arguments, int64_t block,
                             int threads, BlockThreads how) const {
  const auto found = callers_.find(entry);
  if (found == callers_.end()) return Internal("kernel ", entry, " was not compiled for the host");
  if (threads < 1) return Internal("a block of ", threads, " threads");
  void (*const caller)(const uint64_t*) = found->second;
  const std::vector<uint64_t> words(arguments.begin(), arguments.end());
  if (how == BlockThreads::kOneAfterAnother) {
    for (int thread = 0; thread < threads; ++thread) {
      played_gpu_thread = {static_cast<uint32_t>(thread),
                           static_cast<uint32_t>(block),
                           static_cast<uint32_t>(threads),
                           nullptr,
                           nullptr,
                           nullptr};
      caller(words.data());
    }
    played_gpu_thread = {};
    return OkStatus();
  }
  FiberBlock fibers(threads);
  FiberMeeting block_barrier("the block barrier", threads);
  std::vector<std::unique_ptr<HostWarp>> warps;
  for (int first = 0; first < threads; first += kHostWarpLanes) {
    warps.push_back(
        std::make_unique<HostWarp>(first / kHostWarpLanes, std::min(kHostWarpLanes, threads - first)));
  }
  const Status ran = fibers.Run([&](int thread) {
    played_gpu_thread = {static_cast<uint32_t>(thread),
                         static_cast<uint32_t>(block),
                         static_cast<uint32_t>(threads),
                         &fibers,
                         &block_barrier,
                         warps[static_cast<size_t>(thread / kHostWarpLanes)].get()};
    caller(words.data());
  });
  played_gpu_thread = {};
  if (!ran.ok()) return ran.WithContext("kernel " + entry + ", block " + std::to_string(block));
  return OkStatus();
}

}  // namespace kiln::cuda_test
