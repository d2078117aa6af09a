// Layout assignment for backends that use dense row-major arrays everywhere
// (all of Kiln's): every instruction shape, constant value and the entry
// layout get the default major-to-minor layout without padding, so no
// backend ever sees another layout. Values are unaffected: Kiln literals and
// buffers are row-major whatever their layout says.
#pragma once

#include "core/pass.h"

namespace kiln {

// The shape with the default layout on every array (tuple elements too).
Shape WithDefaultLayouts(const Shape& shape);

class LayoutNormalization : public Pass {
 public:
  std::string_view name() const override { return "layout-normalization"; }
  StatusOr<bool> Run(Module& module) override;
};

}  // namespace kiln
