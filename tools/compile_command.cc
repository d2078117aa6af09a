#include "tools/compile_command.h"

#include <filesystem>
#include <fstream>
#include <memory>

#include "tools/module_loading.h"
#ifdef KILN_HAVE_CUDA_BACKEND
#include "backends/cuda/ptx_compiler.h"
#include "backends/cuda/ptx_export.h"
#endif

namespace kiln::tool {

#ifdef KILN_HAVE_CUDA_BACKEND

namespace {

Status WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error)
    return InvalidArgument(path.parent_path().string(), ": cannot create directory (", error.message(), ")");
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) return DataLoss(path.string(), ": cannot write the file");
  return OkStatus();
}

}  // namespace

Status CheckPtxTargetName(const std::string& target) {
  StatusOr<cuda::PtxTarget> parsed = cuda::ParsePtxTarget(target);
  if (!parsed.ok()) return InvalidArgument("option --target: ", parsed.status().message());
  return OkStatus();
}

Status CompileModule(const CompileArguments& arguments, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(cuda::PtxTarget target, cuda::ParsePtxTarget(arguments.target));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(arguments.module_path));
  StatusOr<cuda::PtxExport> exported = cuda::ExportPtx(*module, target);
  if (!exported.ok()) return exported.status().WithContext(arguments.module_path);
  const std::filesystem::path path = std::filesystem::path(arguments.output_dir) /
                                     (std::filesystem::path(arguments.module_path).stem().string() + ".ptx");
  KILN_RETURN_IF_ERROR(WriteTextFile(path, exported->ptx));
  const size_t kernels = exported->kernels.size();
  out << "wrote " << path.string() << ": " << kernels << (kernels == 1 ? " kernel" : " kernels") << " for "
      << target.ToString() << "\n";
  return OkStatus();
}

#else

Status CheckPtxTargetName(const std::string&) {
  return InvalidArgument("this kiln was built without the CUDA backend, so it cannot emit PTX");
}

Status CompileModule(const CompileArguments&, std::ostream&) {
  return Unimplemented("this kiln was built without the CUDA backend");
}

#endif

}  // namespace kiln::tool
