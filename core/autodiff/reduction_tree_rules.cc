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
// reduce-window's window positions become one strided slice each of the
// padded operand, combined pairwise, where padding and base-dilation holes
// are masked out (the reduce-window skips them). Each output is then
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

// The reduction of `values` (arrays [kept..., n]) over their last
// dimension by halving it: [kept...] arrays; n >= 1.
Values HalvingTree(VjpEmitter& b, const std::vector<Computation*>& bodies, Values values) {
  int64_t n = values[0]->shape.dimensions().back();
  while (n > 1) {
    const int64_t half = n / 2;
    Values low;
    Values high;
    for (Instruction* v : values) {
      low.push_back(LastDimensionSlice(b, v, 0, half));
      high.push_back(LastDimensionSlice(b, v, half, 2 * half));
    }
    Values combined = Combine(b, bodies, low, high);
    if (n % 2 == 1) {
      Attributes attrs;
      attrs.dimensions = {values[0]->shape.rank() - 1};
      for (size_t k = 0; k < values.size(); ++k) {
        combined[k] =
            b.Add(Opcode::kConcatenate, {combined[k], LastDimensionSlice(b, values[k], n - 1, n)}, attrs);
      }
    }
    values = std::move(combined);
    n = half + n % 2;
  }
  Values results;
  for (Instruction* v : values) {
    std::vector<int64_t> kept = v->shape.dimensions();
    kept.pop_back();
    results.push_back(b.Reshape(v, std::move(kept)));
  }
  return results;
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

// The operands' elements at one window position in every window, and
// where padding or a base-dilation hole is there instead (no element: the
// reduce-window skips it), `present` says so (null when every window has
// an element there).
struct WindowElement {
  Values values;
  Instruction* present = nullptr;
};

// The reducer applied where both have an element; the one that has an
// element where only one has; neither where neither has.
WindowElement CombineElements(VjpEmitter& b, const std::vector<Computation*>& bodies, const WindowElement& a,
                              const WindowElement& c) {
  WindowElement result{Combine(b, bodies, a.values, c.values), nullptr};
  if (a.present == nullptr && c.present == nullptr) return result;
  for (size_t k = 0; k < result.values.size(); ++k) {
    if (a.present != nullptr) result.values[k] = b.Select(a.present, result.values[k], c.values[k]);
    if (c.present != nullptr) result.values[k] = b.Select(c.present, result.values[k], a.values[k]);
  }
  if (a.present != nullptr && c.present != nullptr)
    result.present = b.Binary(Opcode::kOr, a.present, c.present);
  return result;
}

// For each window position, the operands' elements there in every window:
// strided slices of the operands padded as the window pads them (the
// padding value does not matter: `present` masks it).
std::vector<WindowElement> WindowElements(VjpEmitter& b, const Instruction& x, const Values& operands,
                                          const Values& inits) {
  const Window& window = x.attrs.window;
  const int64_t rank = x.operand(0)->shape.rank();
  Attributes pad;
  bool padded_anywhere = false;
  for (const WindowDimension& w : window.dimensions) {
    pad.padding.push_back({w.padding_low, w.padding_high, w.base_dilation - 1});
    padded_anywhere = padded_anywhere || w.padding_low > 0 || w.padding_high > 0 || w.base_dilation > 1;
  }
  Values padded;
  for (size_t k = 0; k < operands.size(); ++k)
    padded.push_back(b.Add(Opcode::kPad, {operands[k], inits[k]}, pad));
  Instruction* present = nullptr;
  if (padded_anywhere) {
    Literal yes = Literal::Scalar<bool>(true);
    Literal no = Literal::Scalar<bool>(false);
    present = b.Add(Opcode::kPad,
                    {b.BroadcastInDim(b.Constant(std::move(yes)),
                                      Shape(ElementType::kPred, x.operand(0)->shape.dimensions()), {}),
                     b.Constant(std::move(no))},
                    pad);
  }
  const Shape& out = x.shape.IsTuple() ? x.shape.tuple_shapes(0) : x.shape;
  std::vector<WindowElement> positions;
  std::vector<int64_t> offset(static_cast<size_t>(rank), 0);
  while (true) {
    Attributes slice;
    for (int64_t d = 0; d < rank; ++d) {
      const auto i = static_cast<size_t>(d);
      const WindowDimension& w = window.dimensions[i];
      const int64_t start = offset[i] * w.window_dilation;
      slice.slice_starts.push_back(start);
      slice.slice_limits.push_back(out.dimensions(d) == 0 ? start
                                                          : start + (out.dimensions(d) - 1) * w.stride + 1);
      slice.slice_strides.push_back(w.stride);
    }
    WindowElement here;
    for (Instruction* p : padded) here.values.push_back(b.Add(Opcode::kSlice, {p}, slice));
    if (present != nullptr) here.present = b.Add(Opcode::kSlice, {present}, slice);
    positions.push_back(std::move(here));
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      const auto i = static_cast<size_t>(d);
      if (++offset[i] < window.dimensions[i].size) break;
      offset[i] = 0;
    }
    if (d < 0) break;
  }
  return positions;
}

// The reduction `x` recomputed from `operands` and `inits` as a tree of
// reducer applications: one array per result.
StatusOr<Values> ReductionTree(VjpEmitter& b, const Instruction& x, const Values& operands,
                               const Values& inits) {
  KILN_ASSIGN_OR_RETURN(std::vector<Computation*> bodies, ResultBodies(b, x));
  const Shape& out = x.shape.IsTuple() ? x.shape.tuple_shapes(0) : x.shape;
  Values start;
  for (Instruction* init : inits)
    start.push_back(b.BroadcastInDim(init, Shape(init->shape.element_type(), out.dimensions()), {}));
  if (x.opcode == Opcode::kReduce) {
    if (x.operand(0)->shape.element_count() == 0 && out.element_count() != 0) return start;
    return Combine(b, bodies, start, HalvingTree(b, bodies, ReducedLast(b, x, operands)));
  }
  std::vector<WindowElement> level = WindowElements(b, x, operands, inits);
  while (level.size() > 1) {
    std::vector<WindowElement> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(CombineElements(b, bodies, level[i], level[i + 1]));
    if (level.size() % 2 == 1) next.push_back(level.back());
    level = std::move(next);
  }
  return CombineElements(b, bodies, WindowElement{start, nullptr}, level[0]).values;
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
