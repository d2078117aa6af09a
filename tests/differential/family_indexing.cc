// Dynamic slices, gather and scatter. Start indices are drawn from a range
// a little wider than the operand, so clamping (dynamic-slice, gather) and
// skipping (scatter) of out-of-range indices is exercised.
#include <algorithm>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

// The element type of one op's start indices (they must agree).
ElementType StartIndexType(GraphContext& context) {
  static constexpr ElementType kIndexTypes[] = {ElementType::kS32, ElementType::kS64, ElementType::kU32};
  return context.random().Pick(std::span<const ElementType>(kIndexTypes));
}

// A scalar start index in [-1, size] of `type`: a constant or a parameter
// whose value the backend cannot fold.
Op StartIndex(GraphContext& context, ElementType type, int64_t size) {
  RandomSource& random = context.random();
  const int64_t value = random.Between(-1, size);
  if (random.Coin()) return context.Constant(type, {}, static_cast<double>(value));
  Value index = context.NewInput(Shape(type, {}), true);
  context.Use(index);
  return index.op;
}

// Index rows for gather/scatter: an S32 [count, dims.size()] array, column j
// indexing operand dimension dims[j] in [-1, size].
Op IndexArray(GraphContext& context, int64_t count, const std::vector<int64_t>& sizes) {
  RandomSource& random = context.random();
  std::vector<int32_t> indices;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t size : sizes) indices.push_back(static_cast<int32_t>(random.Between(-1, size)));
  }
  return context.builder().ConstantLiteral(
      Literal::FromVector<int32_t>(indices, {count, static_cast<int64_t>(sizes.size())}));
}

// Which operand dims are indexed, which are dropped from the slice, and the
// slice sizes; shared by gather and scatter.
struct IndexedWindow {
  std::vector<int64_t> indexed_dims;      // start_index_map / scatter_dims_to_operand_dims
  std::vector<int64_t> collapsed_dims;    // collapsed_slice_dims / inserted_window_dims
  std::vector<int64_t> window_sizes;      // per operand dim
  std::vector<int64_t> window_positions;  // offset_dims / update_window_dims
  int64_t batch_position = 0;
  int64_t count = 1;
};

IndexedWindow RandomWindow(GraphContext& context, const Shape& operand) {
  RandomSource& random = context.random();
  IndexedWindow window;
  const int64_t rank = operand.rank();
  std::vector<int64_t> order = random.Permutation(rank);
  order.resize(static_cast<size_t>(random.Between(1, std::min<int64_t>(rank, 2))));
  window.indexed_dims = order;
  for (int64_t d = 0; d < rank; ++d) {
    const bool indexed = std::find(order.begin(), order.end(), d) != order.end();
    const bool collapse = indexed && random.Coin();
    window.window_sizes.push_back(collapse ? 1 : random.Between(1, operand.dimensions(d)));
    if (collapse) window.collapsed_dims.push_back(d);
  }
  const int64_t out_rank = 1 + rank - static_cast<int64_t>(window.collapsed_dims.size());
  window.batch_position = random.Below(out_rank);
  for (int64_t i = 0; i < out_rank; ++i) {
    if (i != window.batch_position) window.window_positions.push_back(i);
  }
  window.count = random.Between(1, 4);
  return window;
}

std::vector<int64_t> IndexedSizes(const Shape& operand, const IndexedWindow& window) {
  std::vector<int64_t> sizes;
  for (int64_t d : window.indexed_dims) sizes.push_back(operand.dimensions(d));
  return sizes;
}

}  // namespace

bool EmitDynamicSlice(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  std::vector<int64_t> sizes;
  std::vector<Op> starts;
  const ElementType index_type = StartIndexType(context);
  for (int64_t size : x.shape.dimensions()) {
    sizes.push_back(random.Between(1, size));
    starts.push_back(StartIndex(context, index_type, size));
  }
  context.Use(x);
  context.Record(context.builder().DynamicSlice(x.op, starts, sizes), x.bound, x.exact);
  return true;
}

bool EmitDynamicUpdateSlice(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  std::vector<int64_t> update_dims;
  std::vector<Op> starts;
  const ElementType index_type = StartIndexType(context);
  for (int64_t size : x.shape.dimensions()) {
    update_dims.push_back(random.Between(1, size));
    starts.push_back(StartIndex(context, index_type, size));
  }
  Value update = context.PickWithDims(update_dims);
  context.Use(x);
  context.Use(update);
  context.Record(context.builder().DynamicUpdateSlice(x.op, update.op, starts),
                 std::max(x.bound, update.bound), x.exact && update.exact);
  return true;
}

bool EmitGather(GraphContext& context) {
  Value x = context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  const IndexedWindow window = RandomWindow(context, x.shape);
  GatherDimensionNumbers numbers;
  numbers.offset_dims = window.window_positions;
  numbers.collapsed_slice_dims = window.collapsed_dims;
  numbers.start_index_map = window.indexed_dims;
  numbers.index_vector_dim = 1;
  Op indices = IndexArray(context, window.count, IndexedSizes(x.shape, window));
  context.Use(x);
  context.Record(context.builder().Gather(x.op, indices, numbers, window.window_sizes), x.bound, x.exact);
  return true;
}

bool EmitScatter(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return v.shape.rank() >= 1; });
  const IndexedWindow window = RandomWindow(context, x.shape);
  ScatterDimensionNumbers numbers;
  numbers.update_window_dims = window.window_positions;
  numbers.inserted_window_dims = window.collapsed_dims;
  numbers.scatter_dims_to_operand_dims = window.indexed_dims;
  numbers.index_vector_dim = 1;
  // Updates: the batch dimension at batch_position, the window dims elsewhere.
  std::vector<int64_t> update_dims;
  for (int64_t d = 0; d < x.shape.rank(); ++d) {
    if (std::find(window.collapsed_dims.begin(), window.collapsed_dims.end(), d) ==
        window.collapsed_dims.end()) {
      update_dims.push_back(window.window_sizes[static_cast<size_t>(d)]);
    }
  }
  update_dims.insert(update_dims.begin() + window.batch_position, window.count);
  // Combiners are commutative, so the order duplicates are applied in only
  // matters through float rounding.
  std::vector<Opcode> combiners = {Opcode::kMaximum, Opcode::kMinimum};
  if (!context.is_pred()) combiners.push_back(Opcode::kAdd);
  const Opcode combiner = random.Pick(combiners);
  Value updates = context.PickWithDims(update_dims);
  double bound = std::max(x.bound, updates.bound);
  if (combiner == Opcode::kAdd) {
    const double share = context.Cap() / static_cast<double>(window.count + 1);
    x = context.Limit(x, share);
    updates = context.Limit(updates, share);
    bound = x.bound + static_cast<double>(window.count) * updates.bound;
  }
  std::unique_ptr<Module> computation = context.BinaryComputation(combiner, context.type());
  if (computation == nullptr) return false;
  Op indices = IndexArray(context, window.count, IndexedSizes(x.shape, window));
  context.Use(x);
  context.Use(updates);
  context.Record(context.builder().Scatter(x.op, indices, updates.op, *computation, numbers), bound,
                 context.StaysExact(x.exact && updates.exact, bound));
  return true;
}

}  // namespace kiln::differential
