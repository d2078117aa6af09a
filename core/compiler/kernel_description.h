// One fused kernel as every backend sees it: the computation it computes,
// the arrays it reads and writes, the scratch it needs, the grid it runs
// over and, for a kernel launched several times (a sort's passes), its list
// of launches, each a grid and a few integer parameters. The step lowering
// (core/lowering, for every backend) describes each distinct kernel once;
// the backend that compiles it then fills in the grid and launches that
// suit its hardware (CPU: row blocks on the thread pool; CUDA: blocks x
// threads; Vulkan: workgroups x local size). Nothing in it names a backend.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir.h"

namespace kiln {

// Bytes of an array stored densely row-major (INT64_MAX when that
// overflows); 0 for a tuple or token.
int64_t DenseBytes(const Shape& shape);

// A 3-D grid of workgroups x workgroup size over a kernel's independent
// iterations (its parallel extent). workgroups x workgroup_size may cover
// more than `iterations`: the kernel skips the iterations past the end. It
// may also cover fewer when a device caps the workgroups: then each
// invocation strides through the rest.
struct KernelGrid {
  int64_t iterations = 1;
  std::array<int64_t, 3> workgroups{1, 1, 1};
  std::array<int64_t, 3> workgroup_size{1, 1, 1};

  // workgroups x workgroup_size in all three dimensions (INT64_MAX when
  // that overflows).
  int64_t invocations() const;
};

// `iterations` in workgroups of `workgroup_size` (at least 1) along x:
// ceil(iterations / workgroup_size) of them, at most `max_workgroups` (the
// invocations then stride). No iterations (an empty output) is no
// workgroup: nothing to launch.
KernelGrid LinearGrid(int64_t iterations, int64_t workgroup_size, int64_t max_workgroups = INT64_MAX);

// One launch of a kernel that runs as a sequence of launches (a sort's
// bitonic passes, core/lowering/bitonic_sort.h): the grid it runs over
// and the small integers it is given after its arrays, in order. Every
// backend reads them the same way: CUDA passes each as an i64 kernel
// parameter, Vulkan as a 32-bit push constant. Each launch sees the
// writes of the launches before it; a launch of no workgroups does
// nothing and is not made.
struct KernelLaunch {
  KernelGrid grid;
  std::vector<int64_t> parameters;
};

// One array a kernel reads or writes. A launch binds it to a buffer slice
// (the step program's slot, the CPU's thunk slot) of `bytes` bytes.
struct KernelArray {
  Shape shape;  // an array, stored dense row-major
  int64_t bytes = 0;
};

struct KernelDescription {
  // A computation of the program's module (a fusion's, or one made for a
  // single instruction) whose parameters are the kernel's arguments and
  // whose root (an array or a tuple of arrays) its results.
  const Computation* computation = nullptr;
  std::string name;                    // unique within one program
  std::vector<KernelArray> arguments;  // the parameters, in parameter-number order
  std::vector<KernelArray> results;    // the root's array leaves, in order
  // Bytes of device scratch a launch passes after the results (0: none).
  int64_t scratch_bytes = 0;
  // Filled in by the backend that compiles the kernel; until then one
  // iteration in one workgroup of one.
  KernelGrid grid;
  // Filled in by the backend too, for a kernel of several passes: when not
  // empty, the kernel runs as these launches, in order, instead of one
  // launch over `grid`.
  std::vector<KernelLaunch> launches;
};

// The description of `computation` under `name`: its arguments and
// results from the computation's parameter and root shapes, the grid not
// yet chosen.
KernelDescription DescribeKernel(const Computation& computation, std::string name, int64_t scratch_bytes = 0);

}  // namespace kiln
