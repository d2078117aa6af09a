// The explicit list of backends this build contains. A new backend adds one
// entry here (no static registration, so link order never matters). The
// first name is the default backend of the C API and the kiln command.
#include <memory>

#include "core/backend.h"
#include "core/interpreter/interpreter_backend.h"
#ifdef KILN_HAVE_CPU_BACKEND
#include "backends/cpu/cpu_backend.h"
#endif
#ifdef KILN_HAVE_CUDA_BACKEND
#include "backends/cuda/cuda_backend.h"
#endif
#ifdef KILN_HAVE_VULKAN_BACKEND
#include "backends/vulkan/vulkan_backend.h"
#endif

namespace kiln {

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
#ifdef KILN_HAVE_CPU_BACKEND
  names.push_back("cpu");
#endif
  names.push_back("interpreter");
#ifdef KILN_HAVE_CUDA_BACKEND
  names.push_back("cuda");
#endif
#ifdef KILN_HAVE_VULKAN_BACKEND
  names.push_back("vulkan");
#endif
  return names;
}

StatusOr<std::unique_ptr<Backend>> CreateBackend(std::string_view name) {
  if (name == "interpreter")
    return std::unique_ptr<Backend>(std::make_unique<interpreter::InterpreterBackend>());
#ifdef KILN_HAVE_CPU_BACKEND
  if (name == "cpu") return cpu::CreateCpuBackend();
#endif
#ifdef KILN_HAVE_CUDA_BACKEND
  if (name == "cuda") return cuda::CreateCudaBackend();
#endif
#ifdef KILN_HAVE_VULKAN_BACKEND
  if (name == "vulkan") return vulkan::CreateVulkanBackend();
#endif
  std::string known;
  for (const std::string& candidate : BackendNames()) known += (known.empty() ? "" : ", ") + candidate;
  return NotFound("no backend named '", name, "'; this build has: ", known);
}

}  // namespace kiln
