#include "core/dot_dimensions.h"

#include <algorithm>

namespace kiln {

std::vector<int64_t> DotFreeDimensions(int64_t rank, const std::vector<int64_t>& batch,
                                       const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

int64_t DimensionsProduct(const Shape& shape, const std::vector<int64_t>& dimensions) {
  int64_t product = 1;
  for (int64_t d : dimensions) product *= shape.dimensions(d);
  return product;
}

}  // namespace kiln
