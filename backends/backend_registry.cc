// The explicit list of backends this build contains. A new backend adds one
// entry here (no static registration, so link order never matters). The
// first name is the default backend of the C API and the kiln command.
#include <memory>

#include "core/backend.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/runtime/host_devices.h"
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

namespace {

// A GPU backend presents its physical devices; num_devices may only confirm
// their count.
StatusOr<std::unique_ptr<Backend>> WithPhysicalDevices(StatusOr<std::unique_ptr<Backend>> backend,
                                                       const BackendOptions& options) {
  if (!backend.ok() || options.num_devices == 0) return backend;
  const size_t count = (*backend)->devices().size();
  if (options.num_devices != static_cast<int>(count)) {
    return InvalidArgument((*backend)->name(), ": num_devices is ", options.num_devices,
                           " but this machine has ", count, " ", (*backend)->name(),
                           " device(s); a GPU backend presents its physical devices (pass 0), only the host "
                           "backends (cpu, interpreter) split the machine into more");
  }
  return backend;
}

}  // namespace

StatusOr<std::unique_ptr<Backend>> CreateBackend(std::string_view name, const BackendOptions& options) {
  if (name == "interpreter") {
    KILN_ASSIGN_OR_RETURN(const int count, HostDevices::Count("interpreter", options));
    return std::unique_ptr<Backend>(std::make_unique<interpreter::InterpreterBackend>(count));
  }
#ifdef KILN_HAVE_CPU_BACKEND
  if (name == "cpu") return cpu::CreateCpuBackend(options);
#endif
#ifdef KILN_HAVE_CUDA_BACKEND
  if (name == "cuda") return WithPhysicalDevices(cuda::CreateCudaBackend(), options);
#endif
#ifdef KILN_HAVE_VULKAN_BACKEND
  if (name == "vulkan") return WithPhysicalDevices(vulkan::CreateVulkanBackend(), options);
#endif
  std::string known;
  for (const std::string& candidate : BackendNames()) known += (known.empty() ? "" : ", ") + candidate;
  return NotFound("no backend named '", name, "'; this build has: ", known);
}

}  // namespace kiln
