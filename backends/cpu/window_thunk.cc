#include "backends/cpu/window_thunk.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>

#include "backends/cpu/select_and_add_vectors.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cpu/window_epilogue.h"
#include "backends/cpu/window_fold_vectors.h"
#include "core/interpreter/called_computation.h"
#include "core/interpreter/scalar_ops.h"

namespace kiln::cpu {
namespace {

// Elements a parallel task should touch at least, so scheduling stays cheap.
constexpr int64_t kWindowElementsPerTask = 32 * 1024;
// Lanes reduced side by side: a row of accumulators that stays in L1.
constexpr int64_t kLaneChunk = 512;
// Pooling (FindWindowFoldRows) and select-and-scatter (StoreWindowResultRow)
// results at least this large are stored past the caches: twice a 2 MiB
// L2, so they would not stay. Against plain stores (AMD VM, 2 threads,
// alternated pairs, load 1-4): JAX's max-pool gradient of
// f32[16,112,112,64] best 3.9 ms against 6.5, median 8.0 against 10.1;
// of f32[4,112,112,64] (12.8 MB) 0.81 against 0.93 ms; at 6.4 MB alike.
constexpr int64_t kStreamedWindowResultBytes = 4 << 20;
// Lanes whose selections select-and-scatter keeps at once (on the stack).
constexpr int64_t kSelectLanes = 128;

bool Untouched(const WindowDimension& w) {
  return w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 &&
         w.window_dilation == 1 && w.base_dilation == 1;
}

bool IsPooledType(ElementType type) { return IsIntegral(type) || IsFloating(type); }

bool IsPlainReducer(Opcode opcode) {
  return opcode == Opcode::kAdd || opcode == Opcode::kMultiply || opcode == Opcode::kMaximum ||
         opcode == Opcode::kMinimum;
}

// `operand` seen as [batch, axes..., lanes] under `window`, with each axis's
// output extent taken from `output`; nullopt when the window is reversed,
// malformed or touches no dimension.
std::optional<WindowGeometry> PlanGeometry(const Shape& operand, const Shape& output, const Window& window) {
  const int64_t rank = operand.rank();
  if (!operand.IsArray() || !output.IsArray() || output.rank() != rank ||
      static_cast<int64_t>(window.dimensions.size()) != rank || !IsPooledType(operand.element_type()) ||
      output.element_type() != operand.element_type())
    return std::nullopt;
  int64_t first = rank, last = -1;
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[static_cast<size_t>(d)];
    if (w.window_reversal || w.size < 1 || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1 ||
        w.padding_low < 0 || w.padding_high < 0)
      return std::nullopt;
    if (Untouched(w)) {
      if (output.dimensions(d) != operand.dimensions(d)) return std::nullopt;
      continue;
    }
    first = std::min(first, d);
    last = d;
  }
  if (last < 0) return std::nullopt;
  WindowGeometry geometry;
  geometry.type = operand.element_type();
  for (int64_t d = 0; d < first; ++d) geometry.batch *= operand.dimensions(d);
  for (int64_t d = last + 1; d < rank; ++d) geometry.lanes *= operand.dimensions(d);
  int64_t window_elements = 1;
  for (int64_t d = first; d <= last; ++d) {
    const WindowDimension& w = window.dimensions[static_cast<size_t>(d)];
    // Select-and-scatter numbers a window's elements in 32 bits.
    window_elements *= w.size;
    if (window_elements > std::numeric_limits<int32_t>::max()) return std::nullopt;
    geometry.axes.push_back(WindowAxis{operand.dimensions(d), output.dimensions(d), w.size, w.stride,
                                       w.padding_low, w.window_dilation, w.base_dilation});
  }
  return geometry;
}

// Whether `computation` is `p0 OP p1` for an OP of IsPlainReducer, as the
// interpreter reads it (its fast path, so the order of operands is its).
std::optional<Opcode> PlainReducer(const Computation& computation, ElementType type) {
  const std::optional<Opcode> op = interpreter::SimpleBinaryComputation(computation);
  if (!op || !IsPlainReducer(*op) || computation.root()->shape.element_type() != type) return std::nullopt;
  return op;
}

// The operand positions (linear over the axes, row-major) that window
// `index` (an output position) covers, in row-major window order; padding
// and the holes of base dilation are left out.
class WindowTaps {
 public:
  explicit WindowTaps(const std::vector<WindowAxis>& axes) : axes_(axes) {}

  const std::vector<int64_t>& At(const std::vector<int64_t>& index) {
    offsets_.assign(1, 0);
    for (size_t a = 0; a < axes_.size(); ++a) {
      const WindowAxis& axis = axes_[a];
      axis_taps_.clear();
      for (int64_t k = 0; k < axis.size; ++k) {
        const int64_t position = index[a] * axis.stride + k * axis.window_dilation - axis.padding_low;
        if (position < 0 || position % axis.base_dilation != 0) continue;
        const int64_t i = position / axis.base_dilation;
        if (i < axis.input) axis_taps_.push_back(i);
      }
      next_.clear();
      for (int64_t outer : offsets_) {
        for (int64_t tap : axis_taps_) next_.push_back(outer * axis.input + tap);
      }
      offsets_.swap(next_);
      if (offsets_.empty()) break;
    }
    return offsets_;
  }

 private:
  const std::vector<WindowAxis>& axes_;
  std::vector<int64_t> offsets_, next_, axis_taps_;
};

}  // namespace

WindowTapTable::WindowTapTable(const std::vector<WindowAxis>& axes) {
  for (const WindowAxis& axis : axes) {
    std::vector<int64_t> first(1, static_cast<int64_t>(taps_.size()));
    for (int64_t index = 0; index < axis.output; ++index) {
      for (int64_t k = 0; k < axis.size; ++k) {
        const int64_t position = index * axis.stride + k * axis.window_dilation - axis.padding_low;
        if (position < 0 || position % axis.base_dilation != 0) continue;
        const int64_t i = position / axis.base_dilation;
        if (i < axis.input) taps_.push_back(i);
      }
      first.push_back(static_cast<int64_t>(taps_.size()));
    }
    first_.push_back(std::move(first));
  }
}

WindowFrameTable::WindowFrameTable(const std::vector<WindowAxis>& axes,
                                   const std::vector<WindowAxisFrame>& frames) {
  for (size_t a = 0; a < axes.size(); ++a) {
    const WindowAxisFrame frame =
        a < frames.size() ? frames[a] : WindowAxisFrame{0, axes[a].input, 0, axes[a].input};
    std::vector<int64_t> read, write;
    for (int64_t p = 0; p < axes[a].input; ++p) {
      const int64_t r = p - frame.pad_low, w = p - frame.slice_start;
      read.push_back(r >= 0 && r < frame.operand ? r : -1);
      write.push_back(w >= 0 && w < frame.result ? w : -1);
    }
    read_.push_back(std::move(read));
    write_.push_back(std::move(write));
    read_extent_.push_back(frame.operand);
    write_extent_.push_back(frame.result);
    operand_positions_ *= frame.operand;
    result_positions_ *= frame.result;
  }
}

std::span<const int64_t> WindowTapTable::Taps(size_t axis, int64_t index) const {
  const std::vector<int64_t>& first = first_[axis];
  const auto begin = static_cast<size_t>(first[static_cast<size_t>(index)]);
  const auto end = static_cast<size_t>(first[static_cast<size_t>(index) + 1]);
  return std::span<const int64_t>(taps_).subspan(begin, end - begin);
}

namespace {

// Steps `index` to the next output position (row-major); false after the last.
bool Advance(const std::vector<WindowAxis>& axes, std::vector<int64_t>& index) {
  for (size_t a = axes.size(); a-- > 0;) {
    if (++index[a] < axes[a].output) return true;
    index[a] = 0;
  }
  return false;
}

void Decode(const std::vector<WindowAxis>& axes, int64_t position, std::vector<int64_t>& index) {
  for (size_t a = axes.size(); a-- > 0;) {
    index[a] = position % axes[a].output;
    position /= axes[a].output;
  }
}

template <typename T>
constexpr bool kPooled = interpreter::kIsFloat<T> || interpreter::kIsInt<T>;

template <typename T, typename Op>
void ReduceRow(T* __restrict acc, const T* __restrict row, int64_t n, Op op) {
  for (int64_t c = 0; c < n; ++c) acc[c] = op(acc[c], row[c]);
}

// Output positions [begin, end) of the flattened [batch, output positions].
template <typename T, typename Op>
void ReduceWindows(const WindowGeometry& g, const T* input, T initial, T* output, int64_t begin, int64_t end,
                   Op op) {
  const int64_t out_positions = g.OutputPositions();
  const int64_t in_positions = g.InputPositions();
  WindowTaps taps(g.axes);
  std::vector<int64_t> index(g.axes.size());
  Decode(g.axes, begin % out_positions, index);
  for (int64_t task = begin; task < end; ++task) {
    const T* base = input + task / out_positions * in_positions * g.lanes;
    T* out = output + task * g.lanes;
    const std::vector<int64_t>& offsets = taps.At(index);
    // The accumulators are a row of lanes in L1; each window element adds a
    // contiguous row to them.
    for (int64_t c0 = 0; c0 < g.lanes; c0 += kLaneChunk) {
      const int64_t n = std::min(kLaneChunk, g.lanes - c0);
      std::fill(out + c0, out + c0 + n, initial);
      for (int64_t offset : offsets) ReduceRow(out + c0, base + offset * g.lanes + c0, n, op);
    }
    if (!Advance(g.axes, index)) std::fill(index.begin(), index.end(), 0);
  }
}

// Pooling of f32 and f64 whose lanes fill a vector: each output
// position's window rows folded in registers (two positions side by
// side), the epilogue applied, and stored once (window_fold_vectors.h),
// the rows found through the thunk's tap table (made once) rather than each
// window's offsets worked out again (divisions) at every position. The two
// positions come from the two halves of the range, so a thread reads twice
// as many rows from memory at once (more of the memory's latency covered).
template <typename T>
void FoldWindowsInRegisters(const WindowGeometry& g, const WindowTapTable& table, const T* input, T initial,
                            T* output, int64_t begin, int64_t end, WindowFoldRows<T> fold,
                            const WindowFoldEpilogue<T>& epilogue) {
  const int64_t out_positions = g.OutputPositions();
  const int64_t in_positions = g.InputPositions();
  const size_t axes = g.axes.size();
  std::vector<int64_t> index(axes), other_index(axes);
  std::vector<std::span<const int64_t>> taps_along(axes);
  std::vector<size_t> digit(axes);
  size_t most_taps = 1;
  for (const WindowAxis& axis : g.axes) most_taps *= static_cast<size_t>(axis.size);
  // The window rows of two positions, one after the other.
  std::vector<const T*> rows(2 * most_taps);
  // Writes `task`'s window rows to `out` in row-major window order and steps
  // `index` (task's) to the next position; how many rows. Two axes (2-D
  // pooling) are two loops; more are an odometer over each axis's taps.
  auto window_rows = [&](int64_t task, std::vector<int64_t>& index, const T** out) {
    const T* base = input + task / out_positions * in_positions * g.lanes;
    size_t count = 0;
    if (axes == 2) {
      const int64_t row_stride = g.axes[1].input * g.lanes;
      for (int64_t outer : table.Taps(0, index[0])) {
        const T* line = base + outer * row_stride;
        for (int64_t inner : table.Taps(1, index[1])) out[count++] = line + inner * g.lanes;
      }
    } else {
      bool empty = false;
      for (size_t a = 0; a < axes; ++a) {
        taps_along[a] = table.Taps(a, index[a]);
        empty = empty || taps_along[a].empty();
      }
      std::fill(digit.begin(), digit.end(), 0);
      while (!empty) {
        int64_t offset = 0;
        for (size_t a = 0; a < axes; ++a) offset = offset * g.axes[a].input + taps_along[a][digit[a]];
        out[count++] = base + offset * g.lanes;
        size_t a = axes;
        while (a > 0 && ++digit[a - 1] == taps_along[a - 1].size()) digit[--a] = 0;
        if (a == 0) break;
      }
    }
    if (!Advance(g.axes, index)) std::fill(index.begin(), index.end(), 0);
    return count;
  };
  const int64_t middle = begin + (end - begin + 1) / 2;
  Decode(g.axes, begin % out_positions, index);
  Decode(g.axes, middle % out_positions, other_index);
  for (int64_t task = begin, other = middle; task < middle; ++task, ++other) {
    T* const outs[2] = {output + task * g.lanes, output + other * g.lanes};
    const size_t taps = window_rows(task, index, rows.data());
    if (other == end) {
      fold(rows.data(), taps, 1, initial, g.lanes, outs, epilogue);
      break;
    }
    // Two positions fold together when their windows have as many rows
    // (everywhere but at some padded edges).
    const size_t other_taps = window_rows(other, other_index, rows.data() + taps);
    if (other_taps == taps) {
      fold(rows.data(), taps, 2, initial, g.lanes, outs, epilogue);
    } else {
      fold(rows.data(), taps, 1, initial, g.lanes, outs, epilogue);
      fold(rows.data() + taps, other_taps, 1, initial, g.lanes, outs + 1, epilogue);
    }
  }
}

template <typename T>
bool Compare(ComparisonDirection direction, T a, T b) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kLt: return a < b;
  }
  return false;
}

// Per lane, keeps best[c] where `select(best[c], row[c])` holds, else takes
// row[c] and `place`; the pointers do not alias, so the loop vectorises.
template <typename T, typename Select>
void SelectRow(T* __restrict best, uint32_t* __restrict where, const T* __restrict row, int64_t n,
               uint32_t place, Select select) {
  for (int64_t c = 0; c < n; ++c) {
    const T candidate = row[c];
    const bool keep = select(best[c], candidate);
    best[c] = keep ? best[c] : candidate;
    where[c] = keep ? where[c] : place;
  }
}

// Adds (by `op`) values[c] into row[c] for the lanes whose selection is
// `place`; the other lanes are written back unchanged, so the loop
// vectorises without a scatter.
template <typename T, typename Op>
void ScatterIntoRow(T* __restrict row, const uint32_t* __restrict where, uint32_t place,
                    const T* __restrict values, int64_t n, Op op) {
  for (int64_t c = 0; c < n; ++c) {
    const T sum = op(row[c], values[c]);
    row[c] = where[c] == place ? sum : row[c];
  }
}

// Windows of up to this many elements scatter row by row (vectorised, every
// row of the window read and written); larger ones lane by lane.
constexpr size_t kRowScatterWindow = 16;

// Selects in lanes [0, n) (n <= kSelectLanes) of one source position: per
// lane the first element of the window (rows `in`, `taps` of them) that
// `select` does not keep over a later one; scatters `values` into the same
// lane of the matching row of `out`.
template <typename T, typename Select, typename Op>
void SelectAndScatterBlock(const T* const* in, T* const* out, size_t taps, const T* values, int64_t n,
                           Select select, Op op) {
  // The best value so far and its place in the window (32 bits, as wide as
  // a float, so the selection vectorises).
  T best[kSelectLanes];
  uint32_t where[kSelectLanes];
  const T* first = in[0];
  for (int64_t c = 0; c < n; ++c) {
    best[c] = first[c];
    where[c] = 0;
  }
  for (size_t k = 1; k < taps; ++k) SelectRow(best, where, in[k], n, static_cast<uint32_t>(k), select);
  if (taps <= kRowScatterWindow) {
    for (size_t k = 0; k < taps; ++k) ScatterIntoRow(out[k], where, static_cast<uint32_t>(k), values, n, op);
    return;
  }
  for (int64_t c = 0; c < n; ++c) {
    T& target = out[where[c]][c];
    target = op(target, values[c]);
  }
}

// How many consecutive positions of the first window axis one window row
// (a source index along it) spans at most: the rows of results that take
// scatters at once.
int64_t SelectRingRows(const WindowTapTable& table, const WindowAxis& first_axis) {
  int64_t rows = 1;
  for (int64_t q = 0; q < first_axis.output; ++q) {
    const std::span<const int64_t> taps = table.Taps(0, q);
    if (!taps.empty()) rows = std::max(rows, taps.back() - taps.front() + 1);
  }
  return rows;
}

// One batch entry and lanes [c0, c0 + n) (n <= kSelectLanes): the output
// holds `initial` except where a source position scattered; each source
// position (its n values at `values`, the next position's `value_step`
// elements on: 0 for a source that is one value), in row-major order, selects in every lane the first window
// element `select` does not keep over a later one and scatters its source
// value there (`block`: SelectAndScatterBlock or a vector form of it). A
// window reads padding positions from a row of `pad` and scatters what the
// slice drops into a row nobody reads (`frames`). The scatters go to a ring
// of result rows (first window axis) in `ring`, n lanes wide, that stays in
// the cache: a row is set to `initial` when the first window reaches it and
// written to the output once no later window does (non-temporally with
// `stream`, which needs n == g.lanes), so each output element is written
// once and never read.
template <typename T, typename Block>
void SelectAndScatterLanes(const WindowGeometry& g, const WindowTapTable& table,
                           const WindowFrameTable& frames, const T* operand, const T* values,
                           int64_t value_step, T initial, T pad, T* output, int64_t c0, int64_t n,
                           Block block, std::vector<T>& ring, bool stream) {
  const std::vector<WindowAxis>& axes = g.axes;
  int64_t row_results = 1, row_sources = 1;  // per index of the first axis
  for (size_t a = 1; a < axes.size(); ++a) {
    row_results *= frames.WriteExtent(a);
    row_sources *= axes[a].output;
  }
  T pad_row[kSelectLanes];
  T dropped_row[kSelectLanes];
  std::fill_n(pad_row, n, pad);
  std::fill_n(dropped_row, n, initial);
  const int64_t ring_rows = SelectRingRows(table, axes[0]);
  const int64_t ring_row_elements = row_results * n;
  ring.resize(static_cast<size_t>(ring_rows * ring_row_elements));
  auto ring_row = [&](int64_t position) { return ring.data() + position % ring_rows * ring_row_elements; };
  // Positions of the first axis: [flushed, ready) are in the ring.
  int64_t ready = 0, flushed = 0;
  auto make_ready = [&](int64_t end) {
    for (; ready < end; ++ready) {
      if (frames.Write(0, ready) >= 0)
        FillWindowRow(ring_row(ready), &initial, sizeof(T), static_cast<size_t>(ring_row_elements));
    }
  };
  // Writes out the rows before `end`, each made ready first (a row no window
  // reaches holds `initial`), so the ring never holds more than one window
  // row's span.
  auto flush = [&](int64_t end) {
    for (; flushed < end; ++flushed) {
      make_ready(flushed + 1);
      const int64_t r = frames.Write(0, flushed);
      if (r < 0) continue;
      const T* from = ring_row(flushed);
      T* to = output + r * row_results * g.lanes + c0;
      if (n == g.lanes) {
        StoreWindowResultRow(to, from, static_cast<size_t>(ring_row_elements) * sizeof(T), stream);
      } else {
        for (int64_t p = 0; p < row_results; ++p)
          std::memcpy(static_cast<void*>(to + p * g.lanes), from + p * n, static_cast<size_t>(n) * sizeof(T));
      }
    }
  };
  // Per window element: the operand element over the axes (-1: padding),
  // the first axis's position and the result element over the other axes
  // (-1: dropped), then the rows they are.
  std::vector<int64_t> reads, outers, writes, next_reads, next_outers, next_writes;
  size_t most_taps = 1;
  for (const WindowAxis& axis : axes) most_taps *= static_cast<size_t>(axis.size);
  std::vector<const T*> in_rows(most_taps);
  std::vector<T*> out_rows(most_taps);
  std::vector<int64_t> index(axes.size(), 0);
  // 2-D pooling: per position q of the second window axis, its window
  // columns' operand and ring-row offsets in elements (-1: padding,
  // dropped) from columns.begin[q], made once rather than per window, and
  // from columns.fresh_begin[q] the operand columns no earlier position
  // reads: the windows overlap, and prefetching a line already on its way
  // costs as much as a new one (a fill buffer each).
  struct {
    std::vector<int64_t> read, write, begin, fresh, fresh_begin;
  } columns;
  // Per window row: its rows' operand rows (null: padding) and ring rows
  // (null: dropped), and the operand rows the next window row reads first.
  std::vector<const T*> window_row_reads, ahead_reads;
  std::vector<T*> window_row_writes;
  if (axes.size() == 2) {
    int64_t read_so_far = -1;
    for (int64_t q = 0; q < axes[1].output; ++q) {
      columns.begin.push_back(static_cast<int64_t>(columns.read.size()));
      columns.fresh_begin.push_back(static_cast<int64_t>(columns.fresh.size()));
      for (int64_t tap : table.Taps(1, q)) {
        const int64_t r = frames.Read(1, tap), w = frames.Write(1, tap);
        columns.read.push_back(r < 0 ? -1 : r * g.lanes);
        columns.write.push_back(w < 0 ? -1 : w * n);
        if (r > read_so_far) {
          columns.fresh.push_back(r * g.lanes);
          read_so_far = r;
        }
      }
    }
    columns.begin.push_back(static_cast<int64_t>(columns.read.size()));
    columns.fresh_begin.push_back(static_cast<int64_t>(columns.fresh.size()));
  }
  for (int64_t q0 = 0; q0 < axes[0].output; ++q0) {
    const std::span<const int64_t> rows = table.Taps(0, q0);
    if (rows.empty()) {
      values += row_sources * value_step;
      continue;
    }
    flush(rows.front());
    make_ready(rows.back() + 1);
    std::fill(index.begin() + 1, index.end(), 0);
    if (axes.size() == 2) {
      // 2-D pooling: the window's rows by two plain loops over the tables
      // above, without the per-axis lists below (they cost more than the
      // block itself).
      const int64_t read_extent = frames.ReadExtent(1);
      window_row_reads.clear();
      window_row_writes.clear();
      for (int64_t p : rows) {
        const int64_t outer_read = frames.Read(0, p);
        window_row_reads.push_back(outer_read < 0 ? nullptr
                                                  : operand + outer_read * read_extent * g.lanes + c0);
        window_row_writes.push_back(frames.Write(0, p) < 0 ? nullptr : ring_row(p));
      }
      // The operand rows the next window row reads first (none of this
      // one's), fetched ahead a window at a time, so the thread has twice
      // the rows coming from memory at once.
      ahead_reads.clear();
      if (q0 + 1 < axes[0].output) {
        for (int64_t p : table.Taps(0, q0 + 1)) {
          if (p > rows.back() && frames.Read(0, p) >= 0)
            ahead_reads.push_back(operand + frames.Read(0, p) * read_extent * g.lanes + c0);
        }
      }
      for (int64_t q = 0; q < row_sources; ++q, values += value_step) {
        for (const T* ahead : ahead_reads) {
          for (int64_t f = columns.fresh_begin[q]; f < columns.fresh_begin[q + 1]; ++f) {
            const char* line = reinterpret_cast<const char*>(ahead + columns.fresh[f]);
            for (int64_t byte = 0; byte < n * static_cast<int64_t>(sizeof(T)); byte += 64)
              __builtin_prefetch(line + byte);
          }
        }
        size_t count = 0;
        for (size_t i = 0; i < window_row_reads.size(); ++i) {
          const T* const read_row = window_row_reads[i];
          T* const write_row = window_row_writes[i];
          for (int64_t j = columns.begin[q]; j < columns.begin[q + 1]; ++j) {
            in_rows[count] =
                read_row == nullptr || columns.read[j] < 0 ? pad_row : read_row + columns.read[j];
            out_rows[count] =
                write_row == nullptr || columns.write[j] < 0 ? dropped_row : write_row + columns.write[j];
            ++count;
          }
        }
        if (count > 0) block(in_rows.data(), out_rows.data(), count, values, n);
      }
      continue;
    }
    for (int64_t q = 0; q < row_sources; ++q, values += value_step) {
      reads.clear();
      outers.clear();
      writes.clear();
      for (int64_t p : rows) {
        reads.push_back(frames.Read(0, p));
        outers.push_back(p);
        writes.push_back(frames.Write(0, p) < 0 ? -1 : 0);
      }
      for (size_t a = 1; a < axes.size() && !reads.empty(); ++a) {
        next_reads.clear();
        next_outers.clear();
        next_writes.clear();
        const std::span<const int64_t> taps = table.Taps(a, index[a]);
        const int64_t read_extent = frames.ReadExtent(a), write_extent = frames.WriteExtent(a);
        for (size_t i = 0; i < reads.size(); ++i) {
          for (int64_t tap : taps) {
            const int64_t r = frames.Read(a, tap), w = frames.Write(a, tap);
            next_reads.push_back(reads[i] < 0 || r < 0 ? -1 : reads[i] * read_extent + r);
            next_outers.push_back(outers[i]);
            next_writes.push_back(writes[i] < 0 || w < 0 ? -1 : writes[i] * write_extent + w);
          }
        }
        reads.swap(next_reads);
        outers.swap(next_outers);
        writes.swap(next_writes);
      }
      if (!reads.empty()) {
        for (size_t k = 0; k < reads.size(); ++k) {
          in_rows[k] = reads[k] < 0 ? pad_row : operand + reads[k] * g.lanes + c0;
          out_rows[k] = writes[k] < 0 ? dropped_row : ring_row(outers[k]) + writes[k] * n;
        }
        block(in_rows.data(), out_rows.data(), reads.size(), values, n);
      }
      for (size_t a = axes.size(); a-- > 1;) {
        if (++index[a] < axes[a].output) break;
        index[a] = 0;
      }
    }
  }
  flush(axes[0].input);
}

// Calls `fn(op)` with `op` the scalar function of `opcode` (one of
// IsPlainReducer's, the only ones a plan holds) on T: the interpreter's
// scalar ops, except that maximum and minimum of float and double are written
// as selects without branches, so row loops vectorise: a NaN in a wins, then
// a NaN in b, as in MaximumOp and MinimumOp. Only these four are
// instantiated: every other binary op would multiply the lane loops' copies
// (types x selects x ops) for nothing (this file once took minutes to build).
template <typename T, typename Fn>
Status WithPoolingOp(Opcode opcode, Fn&& fn) {
  switch (opcode) {
    case Opcode::kAdd: fn([](T a, T b) { return interpreter::AddOp(a, b); }); return OkStatus();
    case Opcode::kMultiply: fn([](T a, T b) { return interpreter::MultiplyOp(a, b); }); return OkStatus();
    case Opcode::kMaximum:
      if constexpr (std::is_floating_point_v<T>) {
        fn([](T a, T b) {
          const T larger = a > b ? a : b;
          const T or_b = b != b ? b : larger;
          return a != a ? a : or_b;
        });
      } else {
        fn([](T a, T b) { return interpreter::MaximumOp(a, b); });
      }
      return OkStatus();
    case Opcode::kMinimum:
      if constexpr (std::is_floating_point_v<T>) {
        fn([](T a, T b) {
          const T smaller = a < b ? a : b;
          const T or_b = b != b ? b : smaller;
          return a != a ? a : or_b;
        });
      } else {
        fn([](T a, T b) { return interpreter::MinimumOp(a, b); });
      }
      return OkStatus();
    default: return Internal("cpu window thunk: ", OpcodeName(opcode), " is not a pooling reducer");
  }
}

template <typename T>
T LoadScalar(const void* slot) {
  T value;
  std::memcpy(static_cast<void*>(&value), slot, sizeof(T));
  return value;
}

void RunTasks(const ExecutionContext& context, int64_t tasks, int64_t grain,
              const std::function<void(int64_t, int64_t)>& run) {
  if (tasks <= grain || context.pool == nullptr || context.pool->num_threads() == 1) {
    run(0, tasks);
  } else {
    context.pool->ParallelFor(tasks, grain, run);
  }
}

}  // namespace

int64_t WindowGeometry::InputPositions() const {
  int64_t count = 1;
  for (const WindowAxis& axis : axes) count *= axis.input;
  return count;
}

int64_t WindowGeometry::OutputPositions() const {
  int64_t count = 1;
  for (const WindowAxis& axis : axes) count *= axis.output;
  return count;
}

std::optional<ReduceWindowPlan> PlanReduceWindow(const Instruction& reduce_window) {
  if (reduce_window.opcode != Opcode::kReduceWindow || reduce_window.operands.size() != 2 ||
      reduce_window.called.size() != 1 || !reduce_window.shape.IsArray())
    return std::nullopt;
  const Shape& init = reduce_window.operand(1)->shape;
  std::optional<WindowGeometry> geometry =
      PlanGeometry(reduce_window.operand(0)->shape, reduce_window.shape, reduce_window.attrs.window);
  if (!geometry || !init.IsArray() || init.rank() != 0 || init.element_type() != geometry->type)
    return std::nullopt;
  const std::optional<Opcode> reducer = PlainReducer(*reduce_window.called[0], geometry->type);
  if (!reducer) return std::nullopt;
  return ReduceWindowPlan{std::move(*geometry), *reducer, std::nullopt};
}

std::optional<ReduceWindowPlan> PlanFoldedReduceWindow(const Instruction& fusion) {
  if (fusion.opcode != Opcode::kFusion || fusion.called.size() != 1 || fusion.operands.size() != 3)
    return std::nullopt;
  const Instruction* op = fusion.called[0]->root();
  if (op == nullptr || op->operands.size() != 2 || !IsWindowEpilogue(op->shape.element_type(), op->opcode))
    return std::nullopt;
  const Instruction* reduce_window = op->operand(0);
  const Instruction* broadcast = op->operand(1);
  if (reduce_window->opcode != Opcode::kReduceWindow || reduce_window->operands.size() != 2 ||
      broadcast->opcode != Opcode::kBroadcast || broadcast->operands.size() != 1)
    return std::nullopt;
  const Instruction* leaves[] = {reduce_window->operand(0), reduce_window->operand(1), broadcast->operand(0)};
  for (int64_t i = 0; i < 3; ++i) {
    const Instruction* leaf = leaves[i];
    if (leaf->opcode != Opcode::kParameter || leaf->attrs.parameter_number != i || !leaf->shape.IsArray() ||
        leaf->shape.element_type() != op->shape.element_type())
      return std::nullopt;
  }
  if (broadcast->operand(0)->shape.rank() != 0 || !op->shape.Compatible(reduce_window->shape))
    return std::nullopt;
  std::optional<ReduceWindowPlan> plan = PlanReduceWindow(*reduce_window);
  if (!plan) return std::nullopt;
  plan->epilogue = op->opcode;
  return plan;
}

std::optional<SelectAndScatterPlan> PlanSelectAndScatter(const Instruction& select_and_scatter) {
  if (select_and_scatter.opcode != Opcode::kSelectAndScatter || select_and_scatter.operands.size() != 3 ||
      select_and_scatter.called.size() != 2 || !select_and_scatter.shape.IsArray())
    return std::nullopt;
  const Shape& operand = select_and_scatter.operand(0)->shape;
  const Shape& init = select_and_scatter.operand(2)->shape;
  if (select_and_scatter.shape != operand) return std::nullopt;
  std::optional<WindowGeometry> geometry =
      PlanGeometry(operand, select_and_scatter.operand(1)->shape, select_and_scatter.attrs.window);
  if (!geometry || !init.IsArray() || init.rank() != 0 || init.element_type() != geometry->type)
    return std::nullopt;
  const Computation& select = *select_and_scatter.called[0];
  const Instruction* root = select.root();
  if (root == nullptr || root->opcode != Opcode::kCompare || select.parameters().size() != 2 ||
      root->operands.size() != 2 || root->operand(0)->opcode != Opcode::kParameter ||
      root->operand(1)->opcode != Opcode::kParameter || root->operand(0)->attrs.parameter_number != 0 ||
      root->operand(1)->attrs.parameter_number != 1 ||
      root->operand(0)->shape != Shape::Scalar(geometry->type) ||
      root->operand(1)->shape != Shape::Scalar(geometry->type))
    return std::nullopt;
  const ComparisonType comparison = root->attrs.comparison_type;
  const bool plain_order = comparison == ComparisonType::kDefault ||
                           (comparison == ComparisonType::kFloat && IsFloating(geometry->type)) ||
                           (comparison == ComparisonType::kSigned && IsSignedIntegral(geometry->type)) ||
                           (comparison == ComparisonType::kUnsigned && IsUnsignedIntegral(geometry->type));
  if (!plain_order) return std::nullopt;
  const std::optional<Opcode> scatter = PlainReducer(*select_and_scatter.called[1], geometry->type);
  if (!scatter) return std::nullopt;
  SelectAndScatterPlan plan{
      std::move(*geometry), root->attrs.comparison_direction, *scatter, {}, false, false};
  for (const WindowAxis& axis : plan.geometry.axes) plan.frames.push_back({0, axis.input, 0, axis.input});
  return plan;
}

std::optional<FoldedSelectAndScatterPlan> PlanFoldedSelectAndScatter(const Instruction& fusion) {
  if (fusion.opcode != Opcode::kFusion || fusion.called.size() != 1 || !fusion.shape.IsArray() ||
      fusion.operands.size() != 4)
    return std::nullopt;
  const Instruction* slice = fusion.called[0]->root();
  if (slice == nullptr || slice->opcode != Opcode::kSlice) return std::nullopt;
  const Instruction* select_and_scatter = slice->operand(0);
  if (select_and_scatter->opcode != Opcode::kSelectAndScatter) return std::nullopt;
  const Instruction* pad = select_and_scatter->operand(0);
  if (pad->opcode != Opcode::kPad) return std::nullopt;
  // Each of x, v, s and i a parameter of its own: the fusion's operands; s
  // may be a broadcast of a scalar parameter instead (a gradient of a sum:
  // ones), read as that one value.
  const Instruction* source = select_and_scatter->operand(1);
  const bool scalar_source = source->opcode == Opcode::kBroadcast && source->operands.size() == 1 &&
                             source->operand(0)->shape.IsArray() && source->operand(0)->shape.rank() == 0;
  const Instruction* leaves[] = {pad->operand(0), pad->operand(1),
                                 scalar_source ? source->operand(0) : source, select_and_scatter->operand(2)};
  int64_t numbers[4];
  for (size_t i = 0; i < 4; ++i) {
    if (leaves[i]->opcode != Opcode::kParameter || leaves[i]->attrs.parameter_number < 0 ||
        leaves[i]->attrs.parameter_number >= 4)
      return std::nullopt;
    numbers[i] = leaves[i]->attrs.parameter_number;
    for (size_t j = 0; j < i; ++j) {
      if (numbers[j] == numbers[i]) return std::nullopt;
    }
  }
  std::optional<SelectAndScatterPlan> plan = PlanSelectAndScatter(*select_and_scatter);
  if (!plan) return std::nullopt;
  const Shape& operand = pad->operand(0)->shape;
  const Shape& padded = pad->shape;
  const Shape& result = slice->shape;
  const Window& window = *select_and_scatter->attrs.window;
  const int64_t rank = padded.rank();
  const std::vector<PaddingDimension>& padding = pad->attrs.padding;
  const std::vector<int64_t>& starts = slice->attrs.slice_starts;
  const std::vector<int64_t>& strides = slice->attrs.slice_strides;
  if (!operand.IsArray() || operand.rank() != rank || result.rank() != rank ||
      static_cast<int64_t>(padding.size()) != rank || static_cast<int64_t>(starts.size()) != rank ||
      (!strides.empty() && static_cast<int64_t>(strides.size()) != rank) ||
      static_cast<int64_t>(window.dimensions.size()) != rank || result.element_type() != plan->geometry.type)
    return std::nullopt;
  // The window's axes are the dimensions from the first it touches to the
  // last (PlanGeometry); the pad and the slice may touch only those.
  int64_t first = rank, last = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (Untouched(window.dimensions[static_cast<size_t>(d)])) continue;
    first = std::min(first, d);
    last = d;
  }
  if (last - first + 1 != static_cast<int64_t>(plan->geometry.axes.size())) return std::nullopt;
  plan->frames.clear();
  for (int64_t d = 0; d < rank; ++d) {
    const PaddingDimension& p = padding[static_cast<size_t>(d)];
    const int64_t start = starts[static_cast<size_t>(d)];
    if (p.interior != 0 || p.low < 0 || p.high < 0 ||
        (!strides.empty() && strides[static_cast<size_t>(d)] != 1))
      return std::nullopt;
    if (d < first || d > last) {
      if (p.low != 0 || p.high != 0 || start != 0 || result.dimensions(d) != padded.dimensions(d))
        return std::nullopt;
      continue;
    }
    plan->frames.push_back({p.low, operand.dimensions(d), start, result.dimensions(d)});
  }
  plan->padded_and_sliced = true;
  plan->scalar_source = scalar_source;
  return FoldedSelectAndScatterPlan{std::move(*plan), numbers[0], numbers[1], numbers[2], numbers[3]};
}

Status ReduceWindowThunk::Run(ExecutionContext& context) const {
  const WindowGeometry& g = plan_.geometry;
  const int64_t out_positions = g.OutputPositions();
  const int64_t tasks = g.batch * out_positions;
  if (tasks == 0 || g.lanes == 0) return OkStatus();
  const void* input = context.slots[inputs_[0]];
  const void* initial = context.slots[inputs_[1]];
  void* output = context.slots[outputs_[0]];
  int64_t window = 1;
  for (const WindowAxis& axis : g.axes) window *= axis.size;
  const int64_t grain = std::max<int64_t>(1, kWindowElementsPerTask / std::max<int64_t>(1, g.lanes * window));
  Status status = OkStatus();
  RunTasks(context, tasks, grain, [&](int64_t begin, int64_t end) {
    DispatchElementType(g.type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kPooled<T>) {
        // The reducer is resolved once per task, so the row loop has no branch on it.
        bool epilogue_applied = false;
        const Status done = WithPoolingOp<T>(plan_.reducer, [&](auto op) {
          if constexpr (kHasWindowFoldVectors<T>) {
            if (g.lanes >= kWindowFoldLanes<T>) {
              const bool stream =
                  tasks * g.lanes * static_cast<int64_t>(sizeof(T)) >= kStreamedWindowResultBytes;
              if (WindowFoldRows<T> fold = FindWindowFoldRows<T>(plan_.reducer, stream)) {
                WindowFoldEpilogue<T> epilogue;
                if (plan_.epilogue) epilogue = {plan_.epilogue, LoadScalar<T>(context.slots[inputs_[2]])};
                FoldWindowsInRegisters<T>(g, taps_, static_cast<const T*>(input), LoadScalar<T>(initial),
                                          static_cast<T*>(output), begin, end, fold, epilogue);
                if (stream) FenceStreamedWindowStores();
                epilogue_applied = true;
                return;
              }
            }
          }
          ReduceWindows<T>(g, static_cast<const T*>(input), LoadScalar<T>(initial), static_cast<T*>(output),
                           begin, end, op);
        });
        if (!done.ok() && begin == 0) status = done;
        // The results this task wrote are still in L1 or L2.
        if (plan_.epilogue && done.ok() && !epilogue_applied) {
          const Status applied =
              ApplyWindowEpilogue(g.type, *plan_.epilogue, static_cast<T*>(output) + begin * g.lanes,
                                  (end - begin) * g.lanes, context.slots[inputs_[2]]);
          if (!applied.ok() && begin == 0) status = applied;
        }
      }
    });
  });
  return status;
}

namespace {

// NCHW pooling (a window over the trailing dimensions: one lane) runs this
// many batch entries side by side as lanes, so each window row is a vector.
constexpr int64_t kGatheredLanes = 16;

// to[p * kGatheredLanes + j] = from[j * positions + p] for j < width: `width`
// rows of `positions` elements as the lanes of one row per position.
template <typename T>
void GatherBatchAsLanes(const T* from, int64_t positions, int64_t width, T* to) {
  constexpr int64_t kBlock = 64;  // positions per pass: the written rows stay in L1
  for (int64_t p0 = 0; p0 < positions; p0 += kBlock) {
    const int64_t p1 = std::min(positions, p0 + kBlock);
    for (int64_t j = 0; j < width; ++j) {
      const T* row = from + j * positions;
      for (int64_t p = p0; p < p1; ++p) to[p * kGatheredLanes + j] = row[p];
    }
  }
}

// The inverse of GatherBatchAsLanes.
template <typename T>
void ScatterLanesToBatch(const T* from, int64_t positions, int64_t width, T* to) {
  constexpr int64_t kBlock = 64;
  for (int64_t p0 = 0; p0 < positions; p0 += kBlock) {
    const int64_t p1 = std::min(positions, p0 + kBlock);
    for (int64_t j = 0; j < width; ++j) {
      T* row = to + j * positions;
      for (int64_t p = p0; p < p1; ++p) row[p] = from[p * kGatheredLanes + j];
    }
  }
}

}  // namespace

Status SelectAndScatterThunk::Run(ExecutionContext& context) const {
  const WindowGeometry& g = plan_.geometry;
  const int64_t in_positions = frames_.OperandPositions();
  const int64_t out_positions = frames_.ResultPositions();
  const int64_t source_positions = g.OutputPositions();
  // One lane and several batch entries: kGatheredLanes entries a task, as lanes.
  const bool gathered = g.lanes == 1 && g.batch > 1;
  WindowGeometry gathered_geometry = g;
  gathered_geometry.lanes = kGatheredLanes;
  const WindowGeometry& lane_geometry = gathered ? gathered_geometry : g;
  const int64_t chunks = gathered ? 1 : (g.lanes + kSelectLanes - 1) / kSelectLanes;
  const int64_t tasks = gathered ? (g.batch + kGatheredLanes - 1) / kGatheredLanes : g.batch * chunks;
  if (tasks == 0 || out_positions == 0) return OkStatus();
  const void* operand = context.slots[inputs_[0]];
  const void* source = context.slots[inputs_[1]];
  const void* initial = context.slots[inputs_[2]];
  // Without a pad nothing reads the pad value: any slot will do.
  const void* pad_value = context.slots[inputs_.size() > 3 ? inputs_[3] : inputs_[2]];
  void* output = context.slots[outputs_[0]];
  const int64_t lanes_per_task = gathered ? kGatheredLanes : std::min(g.lanes, kSelectLanes);
  const int64_t per_task = lanes_per_task * (g.InputPositions() + source_positions);
  const int64_t grain = std::max<int64_t>(1, kWindowElementsPerTask / std::max<int64_t>(1, per_task));
  Status status = OkStatus();
  RunTasks(context, tasks, grain, [&](int64_t begin, int64_t end) {
    DispatchElementType(g.type, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kPooled<T>) {
        const Status done = WithPoolingOp<T>(plan_.scatter, [&](auto op) {
          const T init = LoadScalar<T>(initial);
          const T pad = LoadScalar<T>(pad_value);
          std::vector<T> ring;  // the rows taking scatters, reused by the task's calls
          // A source that is one value (a folded broadcast): a row of it, read
          // for every source position.
          std::vector<T> scalar_row;
          if (plan_.scalar_source) scalar_row.assign(kSelectLanes, LoadScalar<T>(source));
          // Lanes [c0, c0 + n) of x and out, rows of lane_geometry.lanes; the
          // source's n values of each position at s, the next value_step on.
          auto run_lanes = [&](const T* x, const T* s, int64_t value_step, T* out, int64_t c0, int64_t n,
                               bool stream) {
            if constexpr (kHasSelectAndAddVectors<T>) {
              const SelectAndAddBlock<T> vector_block =
                  plan_.scatter == Opcode::kAdd ? FindSelectAndAddBlock<T>(plan_.select) : nullptr;
              if (vector_block != nullptr) {
                SelectAndScatterLanes<T>(lane_geometry, taps_, frames_, x, s, value_step, init, pad, out, c0,
                                         n, vector_block, ring, stream);
                return;
              }
            }
            auto lanes = [&](auto select) {
              SelectAndScatterLanes<T>(
                  lane_geometry, taps_, frames_, x, s, value_step, init, pad, out, c0, n,
                  [&](const T* const* in, T* const* rows, size_t taps, const T* values, int64_t count) {
                    SelectAndScatterBlock(in, rows, taps, values, count, select, op);
                  },
                  ring, stream);
            };
            // The comparison is a template argument of the lane loop, not a branch in it.
            switch (plan_.select) {
              case ComparisonDirection::kGe: lanes([](T a, T b) { return a >= b; }); break;
              case ComparisonDirection::kGt: lanes([](T a, T b) { return a > b; }); break;
              case ComparisonDirection::kLe: lanes([](T a, T b) { return a <= b; }); break;
              case ComparisonDirection::kLt: lanes([](T a, T b) { return a < b; }); break;
              default:
                lanes([direction = plan_.select](T a, T b) { return Compare<T>(direction, a, b); });
                break;
            }
          };
          if (gathered) {
            std::vector<T> x(static_cast<size_t>(in_positions * kGatheredLanes));
            std::vector<T> s(plan_.scalar_source ? 0
                                                 : static_cast<size_t>(source_positions * kGatheredLanes));
            std::vector<T> out(static_cast<size_t>(out_positions * kGatheredLanes));
            for (int64_t task = begin; task < end; ++task) {
              const int64_t b0 = task * kGatheredLanes;
              const int64_t width = std::min(kGatheredLanes, g.batch - b0);
              GatherBatchAsLanes(static_cast<const T*>(operand) + b0 * in_positions, in_positions, width,
                                 x.data());
              if (plan_.scalar_source) {
                run_lanes(x.data(), scalar_row.data(), 0, out.data(), 0, width, false);
              } else {
                GatherBatchAsLanes(static_cast<const T*>(source) + b0 * source_positions, source_positions,
                                   width, s.data());
                run_lanes(x.data(), s.data(), kGatheredLanes, out.data(), 0, width, false);
              }
              ScatterLanesToBatch(out.data(), out_positions, width,
                                  static_cast<T*>(output) + b0 * out_positions);
            }
            return;
          }
          // A result larger than the caches is written past them (whole rows
          // only: one task's lanes are all of them).
          const bool stream =
              chunks == 1 && g.batch * out_positions * g.lanes * static_cast<int64_t>(sizeof(T)) >=
                                 kStreamedWindowResultBytes;
          for (int64_t task = begin; task < end; ++task) {
            const int64_t b = task / chunks;
            const int64_t c0 = task % chunks * kSelectLanes;
            const int64_t n = std::min(kSelectLanes, g.lanes - c0);
            const T* x = static_cast<const T*>(operand) + b * in_positions * g.lanes;
            T* out = static_cast<T*>(output) + b * out_positions * g.lanes;
            if (plan_.scalar_source) {
              run_lanes(x, scalar_row.data(), 0, out, c0, n, stream);
            } else {
              run_lanes(x, static_cast<const T*>(source) + b * source_positions * g.lanes + c0, g.lanes, out,
                        c0, n, stream);
            }
          }
          if (stream) FenceStreamedWindowStores();
        });
        if (!done.ok() && begin == 0) status = done;
      }
    });
  });
  return status;
}

}  // namespace kiln::cpu
