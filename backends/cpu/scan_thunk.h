// Cumulative reductions without the window walk: JAX lowers jnp.cumsum,
// cumprod, cummax and cummin (and lax.cumsum with reverse=True) to a
// reduce-window whose window spans the whole of one dimension, padded with
// the reducer's identity on one side. Computed as written that costs n
// operations per element (n^2 per line); as a scan it costs one. Lines run
// in parallel; along the scanned dimension the order of operations is the
// window's (x0, then x1, ...), so the results are the reduce-window's bit
// for bit, maxima and minima of NaNs and signed zeros included. A reverse
// scan's maxima and minima are the window's too; its sums and products add
// the window's terms from the far end, so they may round differently.
// f32 and f64 scan in AVX-512 lanes (scan_vectors.h), other types a line at
// a time.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/cpu/thunk.h"
#include "core/element_type.h"
#include "core/ir.h"

namespace kiln::cpu {

enum class ScanOp { kAdd, kMultiply, kMaximum, kMinimum };

struct ScanGeometry {
  ElementType type = ElementType::kF32;  // integer or real float
  ScanOp op = ScanOp::kAdd;
  int64_t outer = 1;          // product of the dimensions before the scanned one
  int64_t length = 0;         // the scanned dimension
  int64_t inner = 1;          // product of the dimensions after it
  bool reverse = false;       // from the last element to the first
  uint64_t initial_bits = 0;  // the initial value's bytes (the reducer's identity)
};

// The scan `reduce_window` computes, when it is one: a single dimension
// windowed over its whole length with stride 1, no dilation, padded by
// length - 1 on one side only; a reducer that is add, multiply, maximum or
// minimum of its two parameters; an initial value that is a constant equal
// to that reducer's identity; a real element type.
std::optional<ScanGeometry> PlanScan(const Instruction& reduce_window);

class ScanThunk : public Thunk {
 public:
  ScanThunk(int input, int output, ScanGeometry geometry) : Thunk({input}, {output}), geometry_(geometry) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "scan"; }

 private:
  ScanGeometry geometry_;
};

}  // namespace kiln::cpu
