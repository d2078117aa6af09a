// topk without the interpreter: the k largest (or smallest) elements of each
// row along the last dimension, with their s32 indices. Floats follow the
// total order (-NaN < -inf < ... < -0 < +0 < ... < inf < +NaN) and equal
// elements keep index order, so the answer is unique. Rows run in parallel.
#pragma once

#include <cstdint>

#include "backends/cpu/thunk.h"
#include "core/element_type.h"

namespace kiln::cpu {

struct TopKGeometry {
  ElementType type = ElementType::kF32;  // real, not pred
  int64_t rows = 0;
  int64_t row_length = 0;
  int64_t k = 0;  // 0 <= k <= row_length
  bool largest = true;
};

class TopKThunk : public Thunk {
 public:
  // outputs: {values, indices}.
  TopKThunk(int input, int values, int indices, TopKGeometry geometry)
      : Thunk({input}, {values, indices}), geometry_(geometry) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "topk"; }

  // Whether `type` can be ordered here (real numbers only).
  static bool Supports(ElementType type) { return IsIntegral(type) || IsFloating(type); }

 private:
  TopKGeometry geometry_;
};

}  // namespace kiln::cpu
