#include "backends/cuda/libdevice.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

namespace kiln::cuda {
namespace {

// C library functions the kernel emitter calls, float flavour ending in 'f'.
constexpr const char* kLibmNames[] = {
    "cbrt", "erf",   "expm1", "log1p", "tan",   "tanh",   "atan2",  "hypot",     "exp",      "log",  "sin",
    "cos",  "pow",   "acos",  "asin",  "atan",  "sinh",   "cosh",   "erfc",      "exp2",     "log2", "log10",
    "fmod", "round", "acosh", "asinh", "atanh", "lgamma", "tgamma", "nextafter", "remainder"};

bool IsLibmName(llvm::StringRef name) {
  llvm::StringRef base = name;
  if (base.ends_with("f")) base = base.drop_back();
  for (const char* candidate : kLibmNames) {
    if (name == candidate || base == candidate) return true;
  }
  return false;
}

// Intrinsics NVPTX has no instruction for, and their libm base names.
const std::map<llvm::Intrinsic::ID, const char*>& IntrinsicNames() {
  static const auto* names = new std::map<llvm::Intrinsic::ID, const char*>{
      {llvm::Intrinsic::exp, "exp"},   {llvm::Intrinsic::exp2, "exp2"},   {llvm::Intrinsic::log, "log"},
      {llvm::Intrinsic::log2, "log2"}, {llvm::Intrinsic::log10, "log10"}, {llvm::Intrinsic::sin, "sin"},
      {llvm::Intrinsic::cos, "cos"},   {llvm::Intrinsic::pow, "pow"},     {llvm::Intrinsic::tan, "tan"},
  };
  return *names;
}

// Redirects every use of `function` to libdevice's `__nv_` + `base` (+ 'f'
// for float), which has the same signature.
void Redirect(llvm::Module& module, llvm::Function& function, const std::string& base) {
  llvm::Type* type = function.getReturnType();
  const std::string name = "__nv_" + base + (type->isFloatTy() ? "f" : "");
  llvm::FunctionCallee target = module.getOrInsertFunction(name, function.getFunctionType());
  function.replaceAllUsesWith(target.getCallee());
}

}  // namespace

std::string FindLibdevice() {
  namespace fs = std::filesystem;
  std::error_code error;
  if (const char* explicit_path = std::getenv("KILN_CUDA_LIBDEVICE");
      explicit_path != nullptr && *explicit_path) {
    return fs::is_regular_file(explicit_path, error) ? std::string(explicit_path) : std::string();
  }
  std::vector<std::string> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(variable); root != nullptr && *root) roots.emplace_back(root);
  }
  roots.emplace_back("/usr/local/cuda");  // where the CUDA installer puts it
  for (const std::string& root : roots) {
    const fs::path candidate = fs::path(root) / "nvvm" / "libdevice" / "libdevice.10.bc";
    if (fs::is_regular_file(candidate, error)) return candidate.string();
  }
  return {};
}

bool UseLibdeviceNames(llvm::Module& module) {
  std::vector<llvm::Function*> functions;
  for (llvm::Function& function : module) functions.push_back(&function);
  bool uses = false;
  for (llvm::Function* function : functions) {
    if (!function->isDeclaration()) continue;
    const llvm::Type* type = function->getReturnType();
    if (!type->isFloatTy() && !type->isDoubleTy()) continue;
    if (function->isIntrinsic()) {
      auto found = IntrinsicNames().find(function->getIntrinsicID());
      if (found == IntrinsicNames().end()) continue;
      Redirect(module, *function, found->second);
    } else if (IsLibmName(function->getName())) {
      std::string base = function->getName().str();
      if (type->isFloatTy() && base.back() == 'f') base.pop_back();
      Redirect(module, *function, base);
    } else {
      continue;
    }
    function->eraseFromParent();
    uses = true;
  }
  for (llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().starts_with("__nv_")) uses = true;
  }
  return uses;
}

Status LinkLibdevice(llvm::Module& module) {
  std::string first_needed;
  for (llvm::Function& function : module) {
    if (function.isDeclaration() && function.getName().starts_with("__nv_") && !function.use_empty()) {
      first_needed = function.getName().str();
      break;
    }
  }
  if (first_needed.empty()) return OkStatus();
  const std::string path = FindLibdevice();
  if (path.empty()) {
    return FailedPrecondition(
        "cuda: the kernels call ", first_needed,
        " from libdevice, which was not found; set KILN_CUDA_LIBDEVICE to "
        "libdevice.10.bc (nvvm/libdevice in a CUDA installation, or the nvidia-cuda-nvcc "
        "wheel), or CUDA_HOME to a CUDA installation");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file) return FailedPrecondition("cuda: cannot read libdevice ", path, ": ", file.getError().message());
  llvm::Expected<std::unique_ptr<llvm::Module>> library =
      llvm::parseBitcodeFile((*file)->getMemBufferRef(), module.getContext());
  if (!library) {
    return FailedPrecondition("cuda: ", path, " is not LLVM bitcode: ", llvm::toString(library.takeError()));
  }
  (*library)->setTargetTriple(module.getTargetTriple());
  (*library)->setDataLayout(module.getDataLayout());
  const bool failed =
      llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::Flags::LinkOnlyNeeded,
                                [](llvm::Module& linked, const llvm::StringSet<>& names) {
                                  // Internal, so the optimiser inlines the functions and drops them.
                                  for (llvm::Function& function : linked) {
                                    if (!function.isDeclaration() && names.contains(function.getName()))
                                      function.setLinkage(llvm::GlobalValue::InternalLinkage);
                                  }
                                });
  if (failed) return Internal("cuda: linking libdevice ", path, " failed");
  return OkStatus();
}

}  // namespace kiln::cuda
