#include "core/compiler/kernel_description.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "core/array_leaves.h"

namespace kiln {
namespace {

int64_t SaturatingProduct(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

}  // namespace

int64_t DenseBytes(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  const int64_t count = shape.element_count();
  const int64_t width = ByteWidth(shape.element_type());
  return count > INT64_MAX / width ? INT64_MAX : count * width;
}

int64_t KernelGrid::invocations() const {
  int64_t product = 1;
  for (int d = 0; d < 3; ++d)
    product = SaturatingProduct(SaturatingProduct(product, workgroups[d]), workgroup_size[d]);
  return product;
}

KernelGrid LinearGrid(int64_t iterations, int64_t workgroup_size, int64_t max_workgroups) {
  KernelGrid grid;
  grid.iterations = std::max<int64_t>(0, iterations);
  grid.workgroup_size[0] = std::max<int64_t>(1, workgroup_size);
  // Written so that no sum overflows near INT64_MAX.
  const int64_t needed =
      grid.iterations / grid.workgroup_size[0] + (grid.iterations % grid.workgroup_size[0] != 0 ? 1 : 0);
  grid.workgroups[0] = std::min<int64_t>(needed, std::max<int64_t>(1, max_workgroups));
  return grid;
}

KernelDescription DescribeKernel(const Computation& computation, std::string name, int64_t scratch_bytes) {
  KernelDescription description;
  description.computation = &computation;
  description.name = std::move(name);
  for (const Instruction* parameter : computation.parameters())
    if (parameter != nullptr)
      description.arguments.push_back({parameter->shape, DenseBytes(parameter->shape)});
  if (computation.root() != nullptr)
    for (Shape& leaf : ArrayLeaves(computation.root()->shape)) {
      const int64_t bytes = DenseBytes(leaf);
      description.results.push_back({std::move(leaf), bytes});
    }
  description.scratch_bytes = std::max<int64_t>(0, scratch_bytes);
  return description;
}

}  // namespace kiln
