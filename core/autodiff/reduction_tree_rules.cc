// Reverse-mode rule of reduce and reduce-window for the reducers no
// specialised rule covers: a product, a (sum, product) pair, any reducer
// whose body the ordinary rules differentiate. The reduction is rewritten
// as a balanced tree of elementwise applications of its reducer (a map per
// result; JAX's forward rule for general reducers builds the same tree) in
// a computation of its own, whose reverse mode the ordinary rules give
// (the maps through their lifted bodies), called from the backward pass.
//
// A reduce's reduced dimensions become one trailing axis, halved log2(n)
// times (an odd element left over rides along to the next level); a
// reduce-window's windows are gathered from the padded operand into such
// an axis too, where padding and base-dilation holes are masked out (the
// reduce-window skips them), so a window of n elements costs log2(n)
// levels, not n - 1 applications. Each output is then
// combined once with the initial value, as the fold starts from it, so the
// tree computes the reduction itself, not one with extra initial values. No division anywhere: a product's
// cotangent comes out as the product of the other elements (the tree's partial products), exact where
// elements are zero or repeated.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// One array per operand of the reduction (or per result of the reducer).
using Values = std::vector<Instruction*>;

// The computations that apply the reducer of `x` elementwise, one per
// result: the reducer itself when it returns one value, else a copy of
// what its result k needs (a map returns one array).
StatusOr<std::vector<Computation*>> ResultBodies(VjpEmitter& e, const Instruction& x) {
  Computation* reducer = x.called.at(0);
  const size_t count = x.operands.size() / 2;
  const Instruction* root = reducer->root();
  if (!root->shape.IsTuple()) return std::vector<Computation*>{reducer};
  if (root->opcode != Opcode::kTuple || root->operands.size() != count) {
    return Unimplemented("kiln grad: no derivative rule for '", OpcodeName(x.opcode), "' ", x.name,
                         " whose reducer's root is not a tuple of its ", count, " results");
  }
  std::vector<Computation*> bodies;
  for (size_t k = 0; k < count; ++k) {
    Computation* body = NewComputation(e.module(), reducer->name() + "_result" + std::to_string(k));
    VjpEmitter b(e, *body);
    std::vector<Instruction*> parameters;
    for (const Instruction* parameter : reducer->parameters())
      parameters.push_back(b.AddParameter(parameter->shape, parameter->name));
    body->set_root(CloneComputation(b, *reducer, parameters)->operand(k));
    body->RemoveDeadInstructions();
    KILN_RETURN_IF_ERROR(b.status());
    bodies.push_back(body);
  }
  return bodies;
}

// The reducer applied elementwise to `accumulated` and `next` (arrays of
// one shape): one map per result.
Values Combine(VjpEmitter& b, const std::vector<Computation*>& bodies, const Values& accumulated,
               const Values& next) {
  std::vector<Instruction*> operands = accumulated;
  operands.insert(operands.end(), next.begin(), next.end());
  Attributes attrs;
  attrs.dimensions = AllDimensions(accumulated[0]->shape);
  Values results;
  for (Computation* body : bodies) {
    const Shape shape(body->root()->shape.element_type(), accumulated[0]->shape.dimensions());
    results.push_back(b.Add(Opcode::kMap, operands, attrs, &shape, {body}));
  }
  return results;
}

// Elements [start, limit) of `x`'s last dimension.
Instruction* LastDimensionSlice(VjpEmitter& b, Instruction* x, int64_t start, int64_t limit) {
  Attributes attrs;
  const int64_t rank = x->shape.rank();
  attrs.slice_starts.assign(static_cast<size_t>(rank), 0);
  attrs.slice_limits = x->shape.dimensions();
  attrs.slice_strides.assign(static_cast<size_t>(rank), 1);
  attrs.slice_starts.back() = start;
  attrs.slice_limits.back() = limit;
  return b.Add(Opcode::kSlice, {x}, std::move(attrs));
}

// Arrays with a trailing dimension of elements to reduce, one per operand
// (or per result of the reducer), and where a window's padding or
// base-dilation hole is there instead of an element (the reduce-window
// skips it), `present` says so (null when every element is there).
struct Elements {
  Values values;
  Instruction* present = nullptr;
};

// The reducer applied where both have an element; the one that has an
// element where only one has; either where neither has.
Elements CombineElements(VjpEmitter& b, const std::vector<Computation*>& bodies, const Elements& a,
                         const Elements& c) {
  Elements result{Combine(b, bodies, a.values, c.values), nullptr};
  for (size_t k = 0; k < result.values.size(); ++k) {
    if (a.present != nullptr) result.values[k] = b.Select(a.present, result.values[k], c.values[k]);
    if (c.present != nullptr) result.values[k] = b.Select(c.present, result.values[k], a.values[k]);
  }
  if (a.present != nullptr && c.present != nullptr)
    result.present = b.Binary(Opcode::kOr, a.present, c.present);
  return result;
}

// The reduction of `elements` (arrays [kept..., n], n >= 1) over their
// last dimension by halving it, an odd element riding along: [kept...].
Elements HalvingTree(VjpEmitter& b, const std::vector<Computation*>& bodies, Elements elements) {
  int64_t n = elements.values[0]->shape.dimensions().back();
  auto halves = [&](int64_t start, int64_t limit) {
    Elements part;
    for (Instruction* v : elements.values) part.values.push_back(LastDimensionSlice(b, v, start, limit));
    if (elements.present != nullptr) part.present = LastDimensionSlice(b, elements.present, start, limit);
    return part;
  };
  while (n > 1) {
    const int64_t half = n / 2;
    Elements combined = CombineElements(b, bodies, halves(0, half), halves(half, 2 * half));
    if (n % 2 == 1) {
      const Elements last = halves(n - 1, n);
      Attributes attrs;
      attrs.dimensions = {elements.values[0]->shape.rank() - 1};
      for (size_t k = 0; k < combined.values.size(); ++k)
        combined.values[k] = b.Add(Opcode::kConcatenate, {combined.values[k], last.values[k]}, attrs);
      if (last.present != nullptr)
        combined.present = b.Add(Opcode::kConcatenate, {combined.present, last.present}, attrs);
    }
    elements = std::move(combined);
    n = half + n % 2;
  }
  auto drop_last = [&](Instruction* v) {
    std::vector<int64_t> kept = v->shape.dimensions();
    kept.pop_back();
    return b.Reshape(v, std::move(kept));
  };
  Elements result;
  for (Instruction* v : elements.values) result.values.push_back(drop_last(v));
  if (elements.present != nullptr) result.present = drop_last(elements.present);
  return result;
}

// A reduce's operands as [kept..., reduced elements] arrays.
Values ReducedLast(VjpEmitter& b, const Instruction& x, const Values& operands) {
  const Shape& shape = x.operand(0)->shape;
  const std::vector<int64_t>& reduced = x.attrs.dimensions;
  std::vector<int64_t> permutation;
  std::vector<int64_t> dimensions;
  int64_t n = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    permutation.push_back(d);
    dimensions.push_back(shape.dimensions(d));
  }
  std::vector<int64_t> sorted = reduced;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d : sorted) {
    permutation.push_back(d);
    n *= shape.dimensions(d);
  }
  dimensions.push_back(n);
  Values result;
  for (Instruction* operand : operands)
    result.push_back(b.Reshape(b.Transpose(operand, permutation), dimensions));
  return result;
}

// A reduce-window's operands as [output..., window elements] arrays: each
// window's elements gathered from the operands padded as the window pads
// them (positions iota(output) * stride + iota(window) * window dilation),
// with `present` false at padding and holes (the padding value does not
// matter there).
Elements WindowsLast(VjpEmitter& b, const Instruction& x, const Values& operands, const Values& inits) {
  const Window& window = x.attrs.window;
  const Shape& operand = x.operand(0)->shape;
  const int64_t rank = operand.rank();
  const Shape& out = x.shape.IsTuple() ? x.shape.tuple_shapes(0) : x.shape;
  std::vector<int64_t> grid = out.dimensions();  // [output..., window...]
  int64_t count = 1;
  Attributes pad;
  bool holes = false;
  for (const WindowDimension& w : window.dimensions) {
    grid.push_back(w.size);
    count *= w.size;
    pad.padding.push_back({w.padding_low, w.padding_high, w.base_dilation - 1});
    holes = holes || w.padding_low > 0 || w.padding_high > 0 || w.base_dilation > 1;
  }
  std::vector<int64_t> stacked = out.dimensions();
  stacked.push_back(count);
  // s32 positions where the padded operand's extents fit (they always do in
  // practice): the index array is [output..., window..., rank] elements, as
  // many as the gathered values times the rank, so its width is most of the
  // gradient's memory traffic (a cumulative product over 512: 32 MiB of s64
  // indices for 4096 results).
  int64_t extent = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[static_cast<size_t>(d)];
    extent =
        std::max(extent, w.padding_low + Dilated(operand.dimensions(d), w.base_dilation) + w.padding_high);
  }
  const bool narrow = extent < (int64_t{1} << 31);
  const Shape positions(narrow ? ElementType::kS32 : ElementType::kS64, grid);
  std::vector<int64_t> with_vector = grid;
  with_vector.push_back(1);
  Instruction* indices = nullptr;
  Instruction* present = nullptr;
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[static_cast<size_t>(d)];
    Attributes along_output;
    along_output.iota_dimension = d;
    Attributes along_window;
    along_window.iota_dimension = rank + d;
    Instruction* index =
        b.Binary(Opcode::kAdd,
                 b.Binary(Opcode::kMultiply, b.Add(Opcode::kIota, {}, along_output, &positions),
                          b.Full(static_cast<double>(w.stride), positions)),
                 b.Binary(Opcode::kMultiply, b.Add(Opcode::kIota, {}, along_window, &positions),
                          b.Full(static_cast<double>(w.window_dilation), positions)));
    Attributes concatenate;
    concatenate.dimensions = {rank * 2};
    Instruction* column = b.Reshape(index, with_vector);
    indices = indices == nullptr ? column : b.Add(Opcode::kConcatenate, {indices, column}, concatenate);
    if (!holes) continue;
    // The element's position in the base-dilated operand, if it is one.
    Instruction* q =
        b.Binary(Opcode::kSubtract, index, b.Full(static_cast<double>(w.padding_low), positions));
    Instruction* here = b.Add(
        Opcode::kAnd,
        {b.Compare(q, b.Zeros(positions), ComparisonDirection::kGe),
         b.Compare(b.Binary(Opcode::kRemainder, q, b.Full(static_cast<double>(w.base_dilation), positions)),
                   b.Zeros(positions), ComparisonDirection::kEq)});
    here = b.Add(
        Opcode::kAnd,
        {here,
         b.Compare(q, b.Full(static_cast<double>(Dilated(operand.dimensions(d), w.base_dilation)), positions),
                   ComparisonDirection::kLt)});
    present = present == nullptr ? here : b.Add(Opcode::kAnd, {present, here});
  }
  Attributes gather;
  for (int64_t d = 0; d < rank; ++d) {
    gather.gather->collapsed_slice_dims.push_back(d);
    gather.gather->start_index_map.push_back(d);
    gather.gather_slice_sizes.push_back(1);
  }
  gather.gather->index_vector_dim = rank * 2;
  Elements result;
  for (size_t k = 0; k < operands.size(); ++k) {
    Instruction* padded = b.Add(Opcode::kPad, {operands[k], inits[k]}, pad);
    result.values.push_back(b.Reshape(b.Add(Opcode::kGather, {padded, indices}, gather), stacked));
  }
  if (present != nullptr) result.present = b.Reshape(present, stacked);
  return result;
}

// The reduction `x` recomputed from `operands` and `inits` as a tree of
// reducer applications: one array per result.
StatusOr<Values> ReductionTree(VjpEmitter& b, const Instruction& x, const Values& operands,
                               const Values& inits) {
  KILN_ASSIGN_OR_RETURN(std::vector<Computation*> bodies, ResultBodies(b, x));
  const Shape& out = x.shape.IsTuple() ? x.shape.tuple_shapes(0) : x.shape;
  Elements start;
  for (Instruction* init : inits)
    start.values.push_back(b.BroadcastInDim(init, Shape(init->shape.element_type(), out.dimensions()), {}));
  Elements stacked;
  if (x.opcode == Opcode::kReduce) {
    if (x.operand(0)->shape.element_count() == 0 && out.element_count() != 0) return start.values;
    stacked.values = ReducedLast(b, x, operands);
  } else if (x.operand(0)->shape.rank() == 0) {
    for (Instruction* operand : operands) stacked.values.push_back(b.Reshape(operand, {1}));
  } else {
    stacked = WindowsLast(b, x, operands, inits);
  }
  return CombineElements(b, bodies, start, HalvingTree(b, bodies, std::move(stacked))).values;
}

Status InReducer(const Status& status, const Instruction& x) {
  return Status(status.code(), status.message() + " (in the reducer of '" +
                                   std::string(OpcodeName(x.opcode)) + "' " + x.name + ")");
}

}  // namespace

StatusOr<std::vector<Cotangent>> ReductionTreeCotangents(VjpEmitter& e, Instruction& x, const Cotangent& ct) {
  const size_t count = x.operands.size() / 2;
  const bool several = x.shape.IsTuple();
  Computation* backward = NewComputation(e.module(), x.called.at(0)->name() + "_tree_vjp");
  VjpEmitter b(e, *backward);
  Values parameters;
  for (const Instruction* operand : x.operands)
    parameters.push_back(b.AddParameter(operand->shape, "operand"));
  std::vector<Instruction*> arguments(x.operands.begin(), x.operands.end());
  Cotangent root_cotangent;
  if (several) {
    root_cotangent.elements.resize(count);
    for (size_t k = 0; k < count && k < ct.elements.size(); ++k) {
      if (ct.elements[k].array == nullptr) continue;
      root_cotangent.elements[k] = Of(b.AddParameter(ct.elements[k].array->shape, "cotangent"));
      arguments.push_back(ct.elements[k].array);
    }
  } else {
    root_cotangent = Of(b.AddParameter(ct.array->shape, "cotangent"));
    arguments.push_back(ct.array);
  }
  const Values operands(parameters.begin(), parameters.begin() + static_cast<int64_t>(count));
  const Values inits(parameters.begin() + static_cast<int64_t>(count), parameters.end());
  StatusOr<Values> tree = ReductionTree(b, x, operands, inits);
  if (!tree.ok()) return InReducer(tree.status(), x);
  backward->set_root(several ? b.Tuple(*tree) : (*tree)[0]);
  StatusOr<std::vector<Cotangent>> found = EmitBackward(b, root_cotangent, parameters);
  if (!found.ok()) return InReducer(found.status(), x);
  std::vector<Instruction*> results;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!CarriesGradient(parameters[i]->shape.element_type())) continue;
    Instruction* gradient = (*found)[i].array;
    results.push_back(gradient != nullptr ? gradient : b.Zeros(parameters[i]->shape));
  }
  std::vector<Cotangent> cotangents(x.operands.size());
  if (results.empty()) return cotangents;
  backward->set_root(b.Tuple(std::move(results)));
  KILN_RETURN_IF_ERROR(b.status());
  Instruction* gradients = e.Add(Opcode::kCall, std::move(arguments), {}, nullptr, {backward});
  int64_t next = 0;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (CarriesGradient(parameters[i]->shape.element_type()))
      cotangents[i] = Of(e.GetTupleElement(gradients, next++));
  }
  return cotangents;
}

}  // namespace kiln::autodiff
