// What the fake CUDA driver reads from PTX text. It cannot assemble PTX, so
// it only looks at the directives the real driver checks before it runs
// anything: the ISA version, the target and the kernels' entry points with
// their parameter lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::cuda::fake {

struct PtxParameter {
  std::string name;
  int bytes = 0;  // size of the value cuLaunchKernel reads for it
  // The kernel converts it to a global address (cvta.to.global), so it must
  // point into device memory. NVPTX's CUDA output declares pointers as plain
  // .u64 (`.ptr` is only written for OpenCL), so the body is what tells.
  bool pointer = false;
};

struct PtxEntry {
  std::string name;
  std::vector<PtxParameter> parameters;
};

// Every `.entry NAME(...)` of `ptx`, in order.
std::vector<PtxEntry> FindEntries(std::string_view ptx);

// `.version 8.4` -> 84; 0 when the directive is absent or malformed.
int PtxVersion(std::string_view ptx);

// `.target sm_80` -> 80 (also `sm_90a`); 0 when absent or malformed.
int PtxTargetSm(std::string_view ptx);

}  // namespace kiln::cuda::fake
