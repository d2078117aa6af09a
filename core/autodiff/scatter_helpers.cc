#include "core/autodiff/scatter_helpers.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {
namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool IsParameter(const Instruction* instruction, int64_t number) {
  return instruction->opcode == Opcode::kParameter && instruction->attrs.parameter_number == number;
}

// Operand elements the scatter's constant indices can address before the
// proof that its windows are disjoint is not worth its memory.
constexpr int64_t kMaxElementsToProveDisjoint = int64_t{1} << 26;

// Whether `x`'s indices are a constant whose windows that fit cover no
// operand element twice (windows that do not fit are dropped).
bool ConstantWindowsAreDisjoint(const Instruction& x) {
  const Instruction* indices = ScatterIndices(x);
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  // With batching dimensions the batch position is a coordinate of its own;
  // such scatters are proven disjoint only by unique_indices.
  if (indices->opcode != Opcode::kConstant || !indices->literal.has_value() ||
      !scatter.input_batching_dims.empty()) {
    return false;
  }
  const Shape& operand = x.operand(0)->shape;
  if (operand.element_count() > kMaxElementsToProveDisjoint) return false;
  const Literal& values = *indices->literal;
  const Shape& index_shape = indices->shape;
  const int64_t vector_dim = scatter.index_vector_dim;
  const int64_t vector_size = vector_dim == index_shape.rank() ? 1 : index_shape.dimensions(vector_dim);
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < index_shape.rank(); ++d) {
    if (d < vector_dim) outer *= index_shape.dimensions(d);
    if (d > vector_dim) inner *= index_shape.dimensions(d);
  }
  const std::vector<int64_t> window = ScatterWindows(x);
  const int64_t rank = operand.rank();
  std::vector<char> covered(static_cast<size_t>(operand.element_count()), 0);
  for (int64_t n = 0; n < outer * inner; ++n) {
    std::vector<int64_t> start(static_cast<size_t>(rank), 0);
    bool fits = true;
    for (int64_t k = 0; k < vector_size; ++k) {
      const int64_t dimension = scatter.scatter_dims_to_operand_dims[static_cast<size_t>(k)];
      const int64_t value = values.GetAsInt64(((n / inner) * vector_size + k) * inner + n % inner);
      start[static_cast<size_t>(dimension)] = value;
      fits = fits && value >= 0 &&
             value <= operand.dimensions(dimension) - window[static_cast<size_t>(dimension)];
    }
    if (!fits) continue;
    // Every element of the window, an odometer over its dimensions.
    std::vector<int64_t> offset(static_cast<size_t>(rank), 0);
    bool empty = false;
    for (int64_t extent : window) empty = empty || extent == 0;
    while (!empty) {
      int64_t linear = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const auto i = static_cast<size_t>(d);
        linear = linear * operand.dimensions(d) + start[i] + offset[i];
      }
      if (covered[static_cast<size_t>(linear)] != 0) return false;
      covered[static_cast<size_t>(linear)] = 1;
      int64_t d = rank - 1;
      for (; d >= 0; --d) {
        const auto i = static_cast<size_t>(d);
        if (++offset[i] < window[i]) break;
        offset[i] = 0;
      }
      if (d < 0) break;
    }
  }
  return true;
}

// Result `k` of the combiner of `x`, a scatter over several operands, as a
// computation of all 2n scalar parameters (what a map applies): the
// instructions that result reads, copied.
Computation* CombinerResult(VjpEmitter& e, const Instruction& x, size_t k) {
  const size_t count = ScatteredCount(x);
  const Computation& combiner = *x.called[0];
  Computation* result = NewComputation(e.module(), combiner.name() + "_result" + std::to_string(k));
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < 2 * count; ++i) {
    const Instruction* array = i < count ? x.operand(i) : ScatterUpdates(x, i - count);
    parameters.push_back(AddParameter(*result, Shape::Scalar(array->shape.element_type()),
                                      static_cast<int64_t>(i),
                                      (i < count ? "operand" : "update") + std::to_string(i % count)));
  }
  VjpEmitter c(e, *result);
  std::unordered_map<const Instruction*, Instruction*> copies;
  const std::function<Instruction*(const Instruction*)> copy = [&](const Instruction* from) -> Instruction* {
    if (from->opcode == Opcode::kParameter)
      return parameters.at(static_cast<size_t>(from->attrs.parameter_number));
    if (auto found = copies.find(from); found != copies.end()) return found->second;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : from->operands) operands.push_back(copy(operand));
    return copies[from] = c.Clone(*from, std::move(operands));
  };
  const Instruction* root = combiner.root();
  // A root that is not a tuple: its element k, which a map's body refuses
  // by name as a value that is not a scalar.
  result->set_root(root->opcode == Opcode::kTuple ? copy(root->operand(k))
                                                  : c.GetTupleElement(copy(root), static_cast<int64_t>(k)));
  return result;
}

}  // namespace

size_t ScatteredCount(const Instruction& x) { return (x.operands.size() - 1) / 2; }

Instruction* ScatterIndices(const Instruction& x) { return x.operand(ScatteredCount(x)); }

Instruction* ScatterUpdates(const Instruction& x, size_t k) { return x.operand(ScatteredCount(x) + 1 + k); }

bool MixesComponents(const Instruction& x) {
  const size_t count = ScatteredCount(x);
  if (count == 1 || x.called.size() != 1 || x.called[0]->root() == nullptr) return false;
  const Instruction* root = x.called[0]->root();
  if (root->opcode != Opcode::kTuple || root->operands.size() != count) return true;
  for (size_t k = 0; k < count; ++k) {
    std::vector<const Instruction*> pending = {root->operand(k)};
    while (!pending.empty()) {
      const Instruction* next = pending.back();
      pending.pop_back();
      if (next->opcode == Opcode::kParameter) {
        const auto number = static_cast<size_t>(next->attrs.parameter_number);
        if (number != k && number != count + k) return true;
      }
      pending.insert(pending.end(), next->operands.begin(), next->operands.end());
    }
  }
  return false;
}

ScatterCombiner CombinerOf(const Instruction& scatter) {
  if (ScatteredCount(scatter) != 1 || scatter.called.size() != 1 || scatter.called[0]->root() == nullptr) {
    return ScatterCombiner::kOther;
  }
  const Instruction* root = scatter.called[0]->root();
  if (IsParameter(root, 1)) return ScatterCombiner::kOverwrite;
  if (root->operands.size() != 2 || root->operand(0)->opcode != Opcode::kParameter ||
      root->operand(1)->opcode != Opcode::kParameter || root->operand(0) == root->operand(1)) {
    return ScatterCombiner::kOther;
  }
  switch (root->opcode) {
    case Opcode::kAdd: return ScatterCombiner::kAdd;
    case Opcode::kSubtract:
      // old - update only: update - old depends on the order of repeats.
      return IsParameter(root->operand(0), 0) ? ScatterCombiner::kSubtract : ScatterCombiner::kOther;
    case Opcode::kMultiply: return ScatterCombiner::kMultiply;
    case Opcode::kMaximum:
    case Opcode::kMinimum: return ScatterCombiner::kExtremal;
    default: return ScatterCombiner::kOther;
  }
}

std::vector<int64_t> ScatterWindows(const Instruction& x) {
  const Shape& operand = x.operand(0)->shape;
  const Shape& updates = ScatterUpdates(x)->shape;
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  std::vector<int64_t> window(static_cast<size_t>(operand.rank()), 1);
  size_t next_window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(scatter.inserted_window_dims, d) || Contains(scatter.input_batching_dims, d)) continue;
    window[static_cast<size_t>(d)] = updates.dimensions(scatter.update_window_dims[next_window++]);
  }
  return window;
}

Instruction* ReadBack(VjpEmitter& e, const Instruction& x, Instruction* source) {
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  Attributes attrs;
  attrs.gather->offset_dims = scatter.update_window_dims;
  attrs.gather->collapsed_slice_dims = scatter.inserted_window_dims;
  attrs.gather->start_index_map = scatter.scatter_dims_to_operand_dims;
  attrs.gather->index_vector_dim = scatter.index_vector_dim;
  attrs.gather->operand_batching_dims = scatter.input_batching_dims;
  attrs.gather->start_indices_batching_dims = scatter.scatter_indices_batching_dims;
  attrs.gather_slice_sizes = ScatterWindows(x);
  attrs.indices_are_sorted = x.attrs.indices_are_sorted;
  return e.Add(Opcode::kGather, {source, ScatterIndices(x)}, std::move(attrs));
}

StatusOr<Instruction*> WindowsThatFit(VjpEmitter& e, const Instruction& x) {
  const Instruction* operand = x.operand(0);
  Instruction* indices = ScatterIndices(x);
  const Shape& updates = ScatterUpdates(x)->shape;
  const ScatterDimensionNumbers& scatter = x.attrs.scatter;
  const std::vector<int64_t> window = ScatterWindows(x);
  const Shape& index_shape = indices->shape;
  const bool implicit_index_vector = scatter.index_vector_dim == index_shape.rank();
  std::vector<int64_t> upper;
  for (int64_t dimension : scatter.scatter_dims_to_operand_dims) {
    upper.push_back(operand->shape.dimensions(dimension) - window[static_cast<size_t>(dimension)]);
  }
  StatusOr<Literal> bounds = Literal::FromVector<int64_t>(upper).Convert(index_shape.element_type());
  if (!bounds.ok()) return Internal("kiln autodiff: scatter indices of type ", index_shape.ToString());
  if (implicit_index_vector) {
    StatusOr<Literal> scalar = bounds->Reshape({});
    if (!scalar.ok()) return scalar.status();
    bounds = std::move(scalar).value();
  }
  std::vector<int64_t> bound_dimensions;
  if (!implicit_index_vector) bound_dimensions.push_back(scatter.index_vector_dim);
  Instruction* high = e.BroadcastInDim(e.Constant(std::move(bounds).value()), index_shape, bound_dimensions);
  Instruction* outside =
      e.Binary(Opcode::kOr, e.Compare(indices, e.Zeros(index_shape), ComparisonDirection::kLt),
               e.Compare(indices, high, ComparisonDirection::kGt));
  const ElementType type = updates.element_type();
  Instruction* outside_count = e.Convert(outside, type);
  if (!implicit_index_vector) outside_count = e.ReduceSum(outside_count, {scatter.index_vector_dim});
  Instruction* fits = e.Compare(outside_count, e.Zeros(outside_count->shape), ComparisonDirection::kEq);
  std::vector<int64_t> scatter_dims;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(scatter.update_window_dims, d)) scatter_dims.push_back(d);
  }
  return e.BroadcastInDim(fits, Shape(ElementType::kPred, updates.dimensions()), scatter_dims);
}

Instruction* ScatterAdd(VjpEmitter& e, const Instruction& x, Instruction* values) {
  const ElementType type = values->shape.element_type();
  Attributes attrs = x.attrs;
  return e.Add(Opcode::kScatter,
               {e.Zeros(Shape(type, x.operand(0)->shape.dimensions())), x.operand(1), values},
               std::move(attrs), nullptr, {e.Adder(type)});
}

Instruction* ScatterLike(VjpEmitter& e, const Instruction& x, Instruction* operand, Instruction* updates) {
  Attributes attrs = x.attrs;
  return e.Add(Opcode::kScatter, {operand, x.operand(1), updates}, std::move(attrs), nullptr, x.called);
}

Instruction* ProductOfOtherUpdates(VjpEmitter& e, const Instruction& x) {
  Instruction* updates = x.operand(2);
  Instruction* ones = e.Full(1.0, x.operand(0)->shape);
  Instruction* zero = e.Zeros(updates->shape);
  Instruction* one = e.Full(1.0, updates->shape);
  Instruction* is_zero = e.Compare(updates, zero, ComparisonDirection::kEq);
  Instruction* nonzero_product = ReadBack(e, x, ScatterLike(e, x, ones, e.Select(is_zero, one, updates)));
  Instruction* zeros_there = ReadBack(e, x, ScatterAdd(e, x, e.Select(is_zero, one, zero)));
  auto when_zeros_there = [&](double count, Instruction* value) {
    return e.Select(e.Compare(zeros_there, e.Full(count, zeros_there->shape), ComparisonDirection::kEq),
                    value, zero);
  };
  return e.Select(
      is_zero, when_zeros_there(1.0, nonzero_product),
      when_zeros_there(0.0, e.Binary(Opcode::kDivide, nonzero_product, e.Select(is_zero, one, updates))));
}

ExtremalShares ExtremalSharesOf(VjpEmitter& e, Instruction& x, Instruction* fits) {
  Instruction* updates = x.operand(2);
  Instruction* zero = e.Zeros(updates->shape);
  Instruction* one = e.Full(1.0, updates->shape);
  Instruction* target = ReadBack(e, x, &x);
  Instruction* successful =
      e.Binary(Opcode::kAnd, fits, e.Compare(updates, target, ComparisonDirection::kEq));
  Instruction* retained = e.Compare(ReadBack(e, x, x.operand(0)), target, ComparisonDirection::kEq);
  Instruction* winners = ReadBack(e, x, ScatterAdd(e, x, e.Select(successful, one, zero)));
  Instruction* references = ReadBack(e, x, ScatterAdd(e, x, one));
  Instruction* shared_with_operand = e.Binary(Opcode::kDivide, one, e.Binary(Opcode::kAdd, winners, one));
  ExtremalShares shares;
  shares.update_share = e.Select(
      successful, e.Select(retained, shared_with_operand, e.Binary(Opcode::kDivide, one, winners)), zero);
  // Each of the `references` updates at an element takes back its part of
  // what the operand element does not keep.
  Instruction* operand_share = e.Select(retained, shared_with_operand, zero);
  shares.operand_coefficient =
      e.Binary(Opcode::kDivide, e.Binary(Opcode::kSubtract, operand_share, one), references);
  return shares;
}

bool UpdatesAreDisjoint(const Instruction& x) {
  return x.attrs.unique_indices || ConstantWindowsAreDisjoint(x);
}

Status RepeatedIndicesRefusal(const Instruction& x, const char* mode) {
  const Computation* combiner = x.called.empty() ? nullptr : x.called[0];
  const Instruction* root = combiner == nullptr ? nullptr : combiner->root();
  const std::string named = combiner == nullptr
                                ? std::string("(none)")
                                : "'" + combiner->name() + "' (its root is '" +
                                      std::string(root == nullptr ? "none" : OpcodeName(root->opcode)) + "')";
  return InvalidArgument(
      "kiln ", mode, ": cannot differentiate 'scatter' (instruction ", x.name, ") with the combiner ", named,
      ": its indices may repeat, XLA applies the updates of one element in an unspecified order, and this "
      "combiner's result depends on that order (only add, subtract, multiply, maximum, minimum and "
      "overwrite, "
      "over several operands component by component, do not). Differentiable when no two updates land on one "
      "element: set unique_indices=true, or give "
      "constant indices whose windows are disjoint");
}

DisjointScatter ExpandDisjointScatter(VjpEmitter& e, Instruction& x) {
  const size_t count = ScatteredCount(x);
  const Shape& updates = ScatterUpdates(x)->shape;
  DisjointScatter parts;
  for (size_t k = 0; k < count; ++k) parts.gathered.push_back(ReadBack(e, x, x.operand(k)));
  std::vector<Instruction*> arrays = parts.gathered;
  for (size_t k = 0; k < count; ++k) arrays.push_back(ScatterUpdates(x, k));
  for (size_t k = 0; k < count; ++k) {
    const std::string suffix = count == 1 ? "" : std::to_string(k);
    const ElementType type = x.operand(k)->shape.element_type();
    Attributes map;
    map.dimensions = AllDimensions(updates);
    const Shape combined(type, updates.dimensions());
    Computation* body = count == 1 ? x.called[0] : CombinerResult(e, x, k);
    parts.combined.push_back(
        e.Add(Opcode::kMap, arrays, std::move(map), &combined, {body}, x.name + "_combined" + suffix));
    Computation* overwrite = NewComputation(e.module(), x.called[0]->name() + "_overwrite" + suffix);
    const Shape scalar = Shape::Scalar(type);
    AddParameter(*overwrite, scalar, 0, "old");
    overwrite->set_root(AddParameter(*overwrite, scalar, 1, "new"));
    Attributes attrs = x.attrs;
    parts.overwritten.push_back(
        e.Add(Opcode::kScatter, {x.operand(k), ScatterIndices(x), parts.combined.back()}, std::move(attrs),
              nullptr, {overwrite}, x.name + "_overwritten" + suffix));
  }
  return parts;
}

}  // namespace kiln::autodiff
