// The dimension bookkeeping of a dot_general that the interpreter, the
// backends and the autodiff rules share: which dimensions of an operand are
// free (neither batch nor contracting) and how many elements a list of
// dimensions spans.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace kiln {

// The dimensions of a rank-`rank` operand listed in neither `batch` nor
// `contracting`, in increasing order: the order dot_general gives them in
// its result, after the batch dimensions.
std::vector<int64_t> DotFreeDimensions(int64_t rank, const std::vector<int64_t>& batch,
                                       const std::vector<int64_t>& contracting);

// The product of `shape`'s extents along `dimensions` (1 for none).
int64_t DimensionsProduct(const Shape& shape, const std::vector<int64_t>& dimensions);

}  // namespace kiln
