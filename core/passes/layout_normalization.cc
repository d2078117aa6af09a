#include "core/passes/layout_normalization.h"

namespace kiln {

Shape WithDefaultLayouts(const Shape& shape) {
  Shape result = shape;
  if (result.IsTuple()) {
    for (Shape& element : result.mutable_tuple_shapes()) element = WithDefaultLayouts(element);
  } else if (result.IsArray()) {
    result.set_layout(DefaultLayout(result.rank()));
  }
  return result;
}

namespace {

// Normalises `shape` in place; true when it changed.
bool Normalize(Shape& shape) {
  Shape normalized = WithDefaultLayouts(shape);
  if (normalized == shape) return false;
  shape = std::move(normalized);
  return true;
}

bool NormalizeLiteral(Literal& literal) {
  if (!literal.shape().IsArray() || literal.shape().HasDefaultLayout()) return false;
  literal.set_layout(DefaultLayout(literal.shape().rank()));
  return true;
}

}  // namespace

StatusOr<bool> LayoutNormalization::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      changed = Normalize(instruction->shape) || changed;
      if (instruction->literal) changed = NormalizeLiteral(*instruction->literal) || changed;
    }
  }
  if (module.entry_layout()) {
    ProgramShape layout = *module.entry_layout();
    bool layout_changed = Normalize(layout.result);
    for (Shape& parameter : layout.parameters) layout_changed = Normalize(parameter) || layout_changed;
    if (layout_changed) {
      module.set_entry_layout(std::move(layout));
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln
