#include "backends/cpu/scan_thunk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/scan_vectors.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should cover at least, so scheduling stays cheap.
constexpr int64_t kScanElementsPerTask = 32 * 1024;
// Lines of the inner dimension a task scans side by side (contiguous in memory).
constexpr int64_t kColumnsPerBlock = 256;
// Results at least this large are stored past the caches by the vector
// scans (non-temporal stores): neither read into the caches before they
// are written nor kept there, evicting the input still to be read. Plain
// stores were alike at 4 MiB and lost from 8 MiB up on the 2-core AMD EPYC
// VM (L3 32 MiB; 2 threads, 14 pairs alternated, load 1-4), the L3's size
// included: f32[4096,1024] (16 MiB in, 16 out) cumsum along axis 0
// best 309 us streamed against 699 plain, median 1.04 against 2.26 ms;
// cumprod 592 against 604 us, median 1.00 against 1.52 ms.
constexpr int64_t kStreamedScanResultBytes = 4 << 20;

std::optional<ScanOp> ReducerOp(const Computation& reducer) {
  const Instruction* root = reducer.root();
  if (root == nullptr || reducer.parameters().size() != 2 || root->operands.size() != 2) return std::nullopt;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode != Opcode::kParameter || b->opcode != Opcode::kParameter || a == b) return std::nullopt;
  switch (root->opcode) {
    case Opcode::kAdd: return ScanOp::kAdd;
    case Opcode::kMultiply: return ScanOp::kMultiply;
    case Opcode::kMaximum: return ScanOp::kMaximum;
    case Opcode::kMinimum: return ScanOp::kMinimum;
    default: return std::nullopt;
  }
}

// Whether `value` (a scalar of type T) is `op`'s identity, so the padding
// and the initial value change nothing.
template <typename T>
bool IsIdentity(ScanOp op, T value) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case ScanOp::kAdd: return value == T{0};
      case ScanOp::kMultiply: return value == T{1};
      case ScanOp::kMaximum: return value == std::numeric_limits<T>::lowest();
      case ScanOp::kMinimum: return value == std::numeric_limits<T>::max();
    }
  } else {
    const double x = static_cast<double>(static_cast<float>(value));
    const double wide = std::is_same_v<T, double> ? static_cast<double>(value) : x;
    switch (op) {
      case ScanOp::kAdd: return wide == 0.0;
      case ScanOp::kMultiply: return wide == 1.0;
      case ScanOp::kMaximum: return std::isinf(wide) && wide < 0;
      case ScanOp::kMinimum: return std::isinf(wide) && wide > 0;
    }
  }
  return false;
}

// The interpreter's op(a, b) (core/interpreter/scalar_ops.h), bit for bit:
// maximum and minimum return a NaN a, else a NaN b, else a where a > b
// (a < b) and b otherwise, so of two equal zeros the second.
template <ScanOp op, typename T>
T Combine(T a, T b) {
  if constexpr (std::is_integral_v<T> && (op == ScanOp::kAdd || op == ScanOp::kMultiply)) {
    // Integers wrap, as in XLA: computed unsigned, where overflow is defined.
    using U = std::make_unsigned_t<decltype(a + b)>;
    const U x = static_cast<U>(a), y = static_cast<U>(b);
    return static_cast<T>(op == ScanOp::kAdd ? x + y : x * y);
  }
  if constexpr (!std::is_integral_v<T> && (op == ScanOp::kMaximum || op == ScanOp::kMinimum)) {
    if (a != a) return a;
    if (b != b) return b;
  }
  switch (op) {
    case ScanOp::kAdd: return static_cast<T>(a + b);
    case ScanOp::kMultiply: return static_cast<T>(a * b);
    case ScanOp::kMaximum: return a > b ? a : b;
    case ScanOp::kMinimum: return a < b ? a : b;
  }
  return a;
}

// One step of the scan: the window's op(acc, x) going forward. Going in
// reverse, the window still combines its elements first to last, so a
// maximum or minimum is op(x, acc) (the first NaN, the last of equal
// zeros: the window's bytes); sums and products are acc op x, the same
// terms as the window's but rounded from the far end.
template <ScanOp op, typename T>
T ScanStep(bool reverse, T acc, T x) {
  if constexpr (op == ScanOp::kMaximum || op == ScanOp::kMinimum) {
    if (reverse) return Combine<op>(x, acc);
  }
  return Combine<op>(acc, x);
}

// Scans lines [begin, end) of one outer block: `columns` adjacent lines of
// the inner dimension at a time, each step reading and writing contiguous
// elements.
template <ScanOp op, typename T>
void ScanBlock(const ScanGeometry& geometry, T initial, const T* input, T* output, int64_t outer,
               int64_t column_begin, int64_t column_end) {
  const int64_t length = geometry.length;
  const int64_t inner = geometry.inner;
  if (inner == 1) {  // a scan along the last dimension: one line, the sum in a register
    const T* in = input + outer * length;
    T* out = output + outer * length;
    T a = initial;
    for (int64_t step = 0; step < length; ++step) {
      const int64_t i = geometry.reverse ? length - 1 - step : step;
      a = ScanStep<op>(geometry.reverse, a, in[i]);
      out[i] = a;
    }
    return;
  }
  std::vector<T> acc(static_cast<size_t>(column_end - column_begin), initial);
  const T* in = input + outer * length * inner;
  T* out = output + outer * length * inner;
  for (int64_t step = 0; step < length; ++step) {
    const int64_t i = geometry.reverse ? length - 1 - step : step;
    const T* row_in = in + i * inner;
    T* row_out = out + i * inner;
    for (int64_t j = column_begin; j < column_end; ++j) {
      T& a = acc[static_cast<size_t>(j - column_begin)];
      a = ScanStep<op>(geometry.reverse, a, row_in[j]);
      row_out[j] = a;
    }
  }
}

// ScanBlock with the reducer as a template argument, so the inner loop has no branch on it.
template <typename T>
void ScanBlockOf(const ScanGeometry& geometry, T initial, const T* input, T* output, int64_t outer,
                 int64_t column_begin, int64_t column_end) {
  switch (geometry.op) {
    case ScanOp::kAdd:
      ScanBlock<ScanOp::kAdd>(geometry, initial, input, output, outer, column_begin, column_end);
      break;
    case ScanOp::kMultiply:
      ScanBlock<ScanOp::kMultiply>(geometry, initial, input, output, outer, column_begin, column_end);
      break;
    case ScanOp::kMaximum:
      ScanBlock<ScanOp::kMaximum>(geometry, initial, input, output, outer, column_begin, column_end);
      break;
    case ScanOp::kMinimum:
      ScanBlock<ScanOp::kMinimum>(geometry, initial, input, output, outer, column_begin, column_end);
      break;
  }
}

}  // namespace

std::optional<ScanGeometry> PlanScan(const Instruction& reduce_window) {
  if (reduce_window.opcode != Opcode::kReduceWindow || reduce_window.operands.size() != 2 ||
      reduce_window.called.size() != 1 || !reduce_window.shape.IsArray())
    return std::nullopt;
  const Shape& shape = reduce_window.operand(0)->shape;
  const Instruction& init = *reduce_window.operand(1);
  if (!shape.IsArray() || reduce_window.shape != shape || init.opcode != Opcode::kConstant ||
      !init.literal.has_value() || init.literal->element_count() != 1)
    return std::nullopt;
  const ElementType type = shape.element_type();
  if (!IsIntegral(type) && !IsFloating(type)) return std::nullopt;
  const std::vector<WindowDimension>& window = reduce_window.attrs.window->dimensions;
  if (static_cast<int64_t>(window.size()) != shape.rank()) return std::nullopt;
  ScanGeometry geometry;
  geometry.type = type;
  int64_t scanned = -1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const WindowDimension& w = window[static_cast<size_t>(d)];
    if (w.stride != 1 || w.window_dilation != 1 || w.base_dilation != 1 || w.window_reversal)
      return std::nullopt;
    const int64_t n = shape.dimensions(d);
    if (w.size == 1 && w.padding_low == 0 && w.padding_high == 0) continue;
    if (scanned >= 0 || n < 2 || w.size != n) return std::nullopt;
    if (w.padding_low == n - 1 && w.padding_high == 0) {
      geometry.reverse = false;
    } else if (w.padding_low == 0 && w.padding_high == n - 1) {
      geometry.reverse = true;
    } else {
      return std::nullopt;
    }
    scanned = d;
  }
  if (scanned < 0) return std::nullopt;
  const std::optional<ScanOp> op = ReducerOp(*reduce_window.called[0]);
  if (!op) return std::nullopt;
  geometry.op = *op;
  const bool identity = DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
      return false;
    } else {
      return IsIdentity<T>(*op, init.literal->data<T>()[0]);
    }
  });
  if (!identity) return std::nullopt;
  const auto bytes = init.literal->raw();
  if (bytes.size() > sizeof(geometry.initial_bits)) return std::nullopt;
  std::memcpy(&geometry.initial_bits, bytes.data(), bytes.size());
  for (int64_t d = 0; d < scanned; ++d) geometry.outer *= shape.dimensions(d);
  geometry.length = shape.dimensions(scanned);
  for (int64_t d = scanned + 1; d < shape.rank(); ++d) geometry.inner *= shape.dimensions(d);
  return geometry;
}

Status ScanThunk::Run(ExecutionContext& context) const {
  const ScanGeometry& g = geometry_;
  if (g.outer == 0 || g.length == 0 || g.inner == 0) return OkStatus();
  const void* input = context.slots[inputs_[0]];
  void* output = context.slots[outputs_[0]];
  const int threads = context.pool == nullptr ? 1 : context.pool->num_threads();
  const bool wide = g.type == ElementType::kF64;
  const bool in_lanes = (g.type == ElementType::kF32 || wide) && HasAvx512Lanes();
  const int64_t lanes = wide ? kAvx512LaneCount<double> : kAvx512LaneCount<float>;
  // Tasks: groups of lines (inner == 1), or (outer block, column block) pairs.
  int64_t lines_per_task = 1;
  if (in_lanes && g.inner == 1 && 2 * g.outer >= lanes) lines_per_task = lanes;
  int64_t columns_per_task = kColumnsPerBlock;
  if (in_lanes && g.inner > 1) {
    // A block of running vectors per task, narrower while that leaves a thread idle.
    columns_per_task = wide ? kScanColumnsPerBlock<double> : kScanColumnsPerBlock<float>;
    while (columns_per_task > lanes &&
           g.outer * ((g.inner + columns_per_task - 1) / columns_per_task) < 2 * threads)
      columns_per_task /= 2;
  }
  const int64_t column_blocks = (g.inner + columns_per_task - 1) / columns_per_task;
  const int64_t tasks =
      g.inner == 1 ? (g.outer + lines_per_task - 1) / lines_per_task : g.outer * column_blocks;
  const int64_t element_size = wide ? 8 : 4;
  const bool stream = in_lanes && g.outer * g.length * g.inner * element_size >= kStreamedScanResultBytes;
  auto run = [&](int64_t begin, int64_t end) {
    DispatchElementType(g.type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, complex64> ||
                    std::is_same_v<T, complex128>) {
        // PlanScan takes integers and real floats only.
      } else {
        T initial;
        std::memcpy(static_cast<void*>(&initial), &g.initial_bits, sizeof(T));
        const auto* in = static_cast<const T*>(input);
        auto* out = static_cast<T*>(output);
        if (g.inner == 1) {
          // The range's lines in one call: the staggered vector scan
          // (scan_vectors.cc) pays its start and drain once per call.
          const int64_t first = begin * lines_per_task;
          const int64_t last = std::min(g.outer, end * lines_per_task);
          int64_t line = first;
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (in_lanes) line += ScanLinesInLanes<T>(g, initial, in, out, first, last, stream);
          }
          for (; line < last; ++line) ScanBlockOf(g, initial, in, out, line, 0, 1);
          return;
        }
        for (int64_t task = begin; task < end; ++task) {
          const int64_t outer = task / column_blocks;
          const int64_t first = task % column_blocks * columns_per_task;
          const int64_t last = std::min(g.inner, first + columns_per_task);
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (in_lanes) {
              ScanColumnsInLanes<T>(g, initial, in, out, outer, first, last, stream);
              continue;
            }
          }
          ScanBlockOf(g, initial, in, out, outer, first, last);
        }
      }
    });
    if (stream) FenceStreamedStores();
  };
  const int64_t per_task =
      g.inner == 1 ? lines_per_task * g.length : g.length * std::min(g.inner, columns_per_task);
  const int64_t grain = std::max<int64_t>(1, kScanElementsPerTask / std::max<int64_t>(1, per_task));
  if (tasks <= grain || threads == 1) {
    run(0, tasks);
  } else {
    context.pool->ParallelFor(tasks, grain, run);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
