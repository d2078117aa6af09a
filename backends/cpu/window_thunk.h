// Pooling without a kernel per window element: reduce-window (max/min/sum/
// product pooling) and select-and-scatter (max-pool's gradient as JAX exports
// it) as thunks that walk each window once and reduce it along the
// contiguous trailing dimensions the window does not touch (the channels of
// NHWC pooling), so the inner loop runs over whole rows of lanes with the
// window's offsets computed once per output position. The order of
// operations is the interpreter's: the initial value, then the window's
// elements in row-major window order; select-and-scatter adds into each
// output element in the source's row-major order; its scatters go to a ring
// of result rows that stays in the cache, and each output row is written
// once, when no later window reaches it (past the caches for a result
// larger than them). Work is split over the
// leading dimensions the window does not touch (and, for reduce-window, the
// output positions) so no two tasks write the same element.
// Select-and-scatter with an add scatter selects and adds in AVX-512
// registers for f32, f64, bf16 (rounded after each add, as the
// interpreter) and 32- and 64-bit integers (select_and_add_vectors.h);
// with one lane (NCHW pooling, the window over the trailing dimensions) it
// gathers sixteen batch entries into the lanes of a scratch copy and
// scatters the result back; JAX's pad before it and slice after it run
// inside it (PlanFoldedSelectAndScatter).
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
  // A fold (below): each result becomes op(result, scalar) as it is stored.
  std::optional<Opcode> epilogue;
};
std::optional<ReduceWindowPlan> PlanReduceWindow(const Instruction& reduce_window);

// A fusion whose computation is op(reduce-window(x, init), broadcast(s))
// (core/passes/reduce_window_epilogue_folding.h) as one reduce-window whose
// tasks apply op with s to the results they have just written, while they
// are in cache (window_epilogue.h: the interpreter's op, so the bytes of
// the two instructions run one after the other); x, init and s are the
// fusion's operands 0, 1 and 2.
std::optional<ReduceWindowPlan> PlanFoldedReduceWindow(const Instruction& fusion);

// Where a window axis's positions (the select-and-scatter's operand's) come
// from and go to when the operand is a pad of the real operand and the result
// is sliced (JAX's max-pool gradient pads with -inf, select-and-scatters and
// slices the padding off): position p reads operand element p - pad_low when
// it lies in [0, operand), else the pad value, and its result is element
// p - slice_start of the sliced result when that lies in [0, result), else
// dropped. Without a pad and a slice, pad_low = slice_start = 0 and operand
// = result = the axis's extent.
struct WindowAxisFrame {
  int64_t pad_low = 0;
  int64_t operand = 1;
  int64_t slice_start = 0;
  int64_t result = 1;
};

// The select-and-scatter plan: `select` a compare of its two parameters in
// that order (any direction; the element type's own comparison, not a total
// order), `scatter` add, multiply, maximum or minimum of its two parameters,
// a window as for reduce-window; `frames` one per axis of the geometry.
struct SelectAndScatterPlan {
  WindowGeometry geometry;  // over the (padded) operand the window moves on
  ComparisonDirection select = ComparisonDirection::kGe;
  Opcode scatter = Opcode::kAdd;
  std::vector<WindowAxisFrame> frames;
  bool padded_and_sliced = false;  // a fold (below): the thunk reads a pad value
  bool scalar_source = false;      // a fold of a broadcast source: the thunk reads its one value
};
std::optional<SelectAndScatterPlan> PlanSelectAndScatter(const Instruction& select_and_scatter);

// A fusion whose computation is slice(select-and-scatter(pad(x, v), s, i)),
// s a parameter or a broadcast of a scalar one
// (core/passes/select_and_scatter_folding.h), as one select-and-scatter that
// reads x and v where the padded operand would be and writes only the
// slice's elements, with the bytes of the three instructions run one after
// the other: padding positions hold v and may be selected (their scatters
// are dropped, as the slice drops them). Only edge padding (no interior,
// none negative) and unit slice strides on the window's axes; `operand`,
// `pad_value`, `source`, `initial` are the fusion's operand numbers.
struct FoldedSelectAndScatterPlan {
  SelectAndScatterPlan plan;
  int64_t operand = 0, pad_value = 1, source = 2, initial = 3;
};
std::optional<FoldedSelectAndScatterPlan> PlanFoldedSelectAndScatter(const Instruction& fusion);

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

// Inputs: operand, initial value (and, for a folded epilogue, its
// scalar); output: the result.
class ReduceWindowThunk : public Thunk {
 public:
  ReduceWindowThunk(int operand, int initial, int output, ReduceWindowPlan plan)
      : Thunk({operand, initial}, {output}), plan_(std::move(plan)), taps_(plan_.geometry.axes) {}
  ReduceWindowThunk(int operand, int initial, int epilogue_scalar, int output, ReduceWindowPlan plan)
      : Thunk({operand, initial, epilogue_scalar}, {output}),
        plan_(std::move(plan)),
        taps_(plan_.geometry.axes) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override {
    return plan_.epilogue ? "reduce-window-epilogue" : "reduce-window";
  }

 private:
  ReduceWindowPlan plan_;
  WindowTapTable taps_;  // made once, not per task
};

// Per window axis and padded position: the operand element it reads and the
// result element it writes (-1: the pad value; -1: dropped), from the
// plan's frames. Made once, at compile time.
class WindowFrameTable {
 public:
  WindowFrameTable(const std::vector<WindowAxis>& axes, const std::vector<WindowAxisFrame>& frames);
  int64_t Read(size_t axis, int64_t position) const { return read_[axis][static_cast<size_t>(position)]; }
  int64_t Write(size_t axis, int64_t position) const { return write_[axis][static_cast<size_t>(position)]; }
  // The operand's and the result's extents along an axis, and their
  // elements over all the window's axes.
  int64_t ReadExtent(size_t axis) const { return read_extent_[axis]; }
  int64_t WriteExtent(size_t axis) const { return write_extent_[axis]; }
  int64_t OperandPositions() const { return operand_positions_; }
  int64_t ResultPositions() const { return result_positions_; }

 private:
  std::vector<std::vector<int64_t>> read_, write_;
  std::vector<int64_t> read_extent_, write_extent_;
  int64_t operand_positions_ = 1, result_positions_ = 1;
};

// Inputs: operand, source, initial value (and, for a folded pad, the pad
// value); output: the result (the operand's shape, or the slice's).
class SelectAndScatterThunk : public Thunk {
 public:
  SelectAndScatterThunk(int operand, int source, int initial, int output, SelectAndScatterPlan plan)
      : Thunk({operand, source, initial}, {output}),
        plan_(std::move(plan)),
        taps_(plan_.geometry.axes),
        frames_(plan_.geometry.axes, plan_.frames) {}
  SelectAndScatterThunk(int operand, int source, int initial, int pad_value, int output,
                        SelectAndScatterPlan plan)
      : Thunk({operand, source, initial, pad_value}, {output}),
        plan_(std::move(plan)),
        taps_(plan_.geometry.axes),
        frames_(plan_.geometry.axes, plan_.frames) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override {
    return plan_.padded_and_sliced ? "padded-select-and-scatter" : "select-and-scatter";
  }

 private:
  SelectAndScatterPlan plan_;
  WindowTapTable taps_;
  WindowFrameTable frames_;
};

}  // namespace kiln::cpu
