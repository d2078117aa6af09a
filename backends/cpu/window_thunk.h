// Pooling without a kernel per window element: reduce-window (max/min/sum/
// product pooling) and select-and-scatter (max-pool's gradient as JAX exports
// it) as thunks that walk each window once and reduce it along the
// contiguous trailing dimensions the window does not touch (the channels of
// NHWC pooling), so the inner loop runs over whole rows of lanes with the
// window's offsets computed once per output position. The order of
// operations is the interpreter's: the initial value, then the window's
// elements in row-major window order; select-and-scatter adds into each
// output element in the source's row-major order. Work is split over the
// leading dimensions the window does not touch (and, for reduce-window, the
// output positions) so no two tasks write the same element.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/attributes.h"
#include "core/element_type.h"
#include "core/ir.h"
#include "core/opcode.h"

namespace kiln::cpu {

// One dimension the window moves along (or any dimension between two such).
struct WindowAxis {
  int64_t input = 1;   // the operand's extent
  int64_t output = 1;  // the result's (reduce-window) or the source's (select-and-scatter)
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
};

// An operand seen as [batch, axes..., lanes]: `batch` the product of the
// leading dimensions the window leaves alone (size 1, stride 1, no padding
// or dilation), `lanes` the product of the trailing ones, `axes` the rest.
struct WindowGeometry {
  ElementType type = ElementType::kF32;
  int64_t batch = 1;
  int64_t lanes = 1;
  std::vector<WindowAxis> axes;

  int64_t InputPositions() const;
  int64_t OutputPositions() const;
};

// The reduce-window plan: a single array operand and result, a reducer that
// is add, multiply, maximum or minimum of its two parameters, a window
// without reversal that moves along at least one dimension, an integer or
// real float type. The initial value may be any scalar array.
struct ReduceWindowPlan {
  WindowGeometry geometry;
  Opcode reducer = Opcode::kAdd;
};
std::optional<ReduceWindowPlan> PlanReduceWindow(const Instruction& reduce_window);

// The select-and-scatter plan: `select` a compare of its two parameters in
// that order (any direction; the element type's own comparison, not a total
// order), `scatter` add, multiply, maximum or minimum of its two parameters,
// a window as for reduce-window.
struct SelectAndScatterPlan {
  WindowGeometry geometry;
  ComparisonDirection select = ComparisonDirection::kGe;
  Opcode scatter = Opcode::kAdd;
};
std::optional<SelectAndScatterPlan> PlanSelectAndScatter(const Instruction& select_and_scatter);

// Inputs: operand, initial value; output: the result.
class ReduceWindowThunk : public Thunk {
 public:
  ReduceWindowThunk(int operand, int initial, int output, ReduceWindowPlan plan)
      : Thunk({operand, initial}, {output}), plan_(std::move(plan)) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "reduce-window"; }

 private:
  ReduceWindowPlan plan_;
};

// Per window axis and index along its result (or source): the operand
// indices that window covers along the axis, in window order, padding and
// the holes of base dilation left out. Made once, at compile time.
class WindowTapTable {
 public:
  explicit WindowTapTable(const std::vector<WindowAxis>& axes);
  std::span<const int64_t> Taps(size_t axis, int64_t index) const;

 private:
  std::vector<int64_t> taps_;
  std::vector<std::vector<int64_t>> first_;  // per axis: output + 1 offsets into taps_
};

// Inputs: operand, source, initial value; output: the result (the operand's shape).
class SelectAndScatterThunk : public Thunk {
 public:
  SelectAndScatterThunk(int operand, int source, int initial, int output, SelectAndScatterPlan plan)
      : Thunk({operand, source, initial}, {output}), plan_(std::move(plan)), taps_(plan_.geometry.axes) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "select-and-scatter"; }

 private:
  SelectAndScatterPlan plan_;
  WindowTapTable taps_;
};

}  // namespace kiln::cpu
