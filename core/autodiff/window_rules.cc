// The derivative rule of reduce-window with an add, maximum or minimum
// reducer, as JAX's: a sum window's cotangent is the result's cotangent
// padded (strides become interior padding) and summed back over the same
// windows; a max (min) window's goes to the element each window picked, by
// select-and-scatter with a GE (LE) select and an add scatter over the
// forward operand (the first of tied elements, as XLA's select-and-scatter
// picks it). Select-and-scatter with a comparison select and an add scatter
// (what max-pooling's gradient is, so that max-pooling has second
// derivatives) is linear in its source: the source's cotangent is the
// result's cotangent at the element each window selects, as JAX's
// select_and_gather_add, here a reduce-window over (operand, cotangent)
// pairs that keeps the pair the select prefers.
#include <limits>
#include <memory>
#include <string>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// The scalar (lhs, rhs) -> compare(lhs, rhs, direction) computation.
Computation* Comparison(Module& module, ElementType type, ComparisonDirection direction) {
  auto computation =
      std::make_unique<Computation>(direction == ComparisonDirection::kGe ? "vjp_ge" : "vjp_le");
  const Shape scalar = Shape::Scalar(type);
  Instruction* lhs = computation->AddInstruction(MakeInstruction(Opcode::kParameter, scalar, {}));
  lhs->name = "lhs";
  Attributes second;
  second.parameter_number = 1;
  Instruction* rhs = computation->AddInstruction(MakeInstruction(Opcode::kParameter, scalar, {}, second));
  rhs->name = "rhs";
  Attributes compare;
  compare.comparison_direction = direction;
  Instruction* root = computation->AddInstruction(
      MakeInstruction(Opcode::kCompare, Shape::Scalar(ElementType::kPred), {lhs, rhs}, compare));
  root->name = "result";
  computation->set_root(root);
  return module.AddComputation(std::move(computation));
}

Instruction* SumWindowCotangent(VjpEmitter& e, const Instruction& x, Instruction* g) {
  const Shape& operand = x.operand(0)->shape;
  Attributes pad;
  Attributes back;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const WindowDimension& w = x.attrs.window->dimensions[static_cast<size_t>(d)];
    const int64_t input_size = Dilated(operand.dimensions(d), w.base_dilation);
    const int64_t window_size = Dilated(w.size, w.window_dilation);
    const int64_t output_size = Dilated(x.shape.dimensions(d), w.stride);
    const int64_t low = window_size - w.padding_low - 1;
    pad.padding.push_back({low, input_size + window_size - 1 - output_size - low, w.stride - 1});
    WindowDimension& b = back.window->dimensions.emplace_back();
    b.size = w.size;
    b.stride = w.base_dilation;
    b.window_dilation = w.window_dilation;
  }
  const Shape scalar = Shape::Scalar(g->shape.element_type());
  Instruction* padded = e.Add(Opcode::kPad, {g, e.Zeros(scalar)}, std::move(pad));
  return e.Add(Opcode::kReduceWindow, {padded, e.Zeros(scalar)}, std::move(back), nullptr,
               {e.Adder(scalar.element_type())});
}

// The direction of a select computation compare(p0, p1, direction), or
// nullopt for any other select.
std::optional<ComparisonDirection> SelectDirection(const Computation& select) {
  const Instruction* root = select.root();
  if (root == nullptr || root->opcode != Opcode::kCompare || root->operands.size() != 2) return std::nullopt;
  const Instruction* lhs = root->operand(0);
  const Instruction* rhs = root->operand(1);
  if (lhs->opcode != Opcode::kParameter || rhs->opcode != Opcode::kParameter ||
      lhs->attrs.parameter_number != 0 || rhs->attrs.parameter_number != 1) {
    return std::nullopt;
  }
  const ComparisonDirection direction = root->attrs.comparison_direction;
  if (direction == ComparisonDirection::kEq || direction == ComparisonDirection::kNe) return std::nullopt;
  return direction;
}

}  // namespace

KILN_VJP_RULE(SelectAndScatterRule) {
  const std::optional<ComparisonDirection> direction =
      x.called.size() == 2 ? SelectDirection(*x.called[0]) : std::nullopt;
  const Instruction* scatter = x.called.size() == 2 ? x.called[1]->root() : nullptr;
  const bool adds = scatter != nullptr && scatter->opcode == Opcode::kAdd &&
                    scatter->operand(0)->opcode == Opcode::kParameter &&
                    scatter->operand(1)->opcode == Opcode::kParameter &&
                    scatter->operand(0) != scatter->operand(1);
  if (!direction || !adds) {
    return Unimplemented(
        "kiln grad: no derivative rule for 'select-and-scatter' with a select other than a comparison of "
        "its two parameters or a scatter other than add (instruction ",
        x.name, "); JAX differentiates only that form (select_and_scatter_add)");
  }
  Instruction* operand = x.operand(0);
  Instruction* g = ct.array;
  const ElementType type = operand->shape.element_type();
  const Shape scalar = Shape::Scalar(type);
  const bool prefers_larger =
      *direction == ComparisonDirection::kGe || *direction == ComparisonDirection::kGt;
  const double worst =
      prefers_larger ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  Attributes attrs;
  attrs.window = x.attrs.window;
  Instruction* pairs =
      e.Add(Opcode::kReduceWindow, {operand, e.Convert(g, type), e.Full(worst, scalar), e.Zeros(scalar)},
            std::move(attrs), nullptr, {PairChooser(e.module(), type, *direction)});
  Instruction* source_cotangent = e.GetTupleElement(pairs, 1);
  // The initial value is in every element of the result once.
  return std::vector<Cotangent>{Cotangent{}, Of(source_cotangent),
                                Of(e.ReduceSum(g, AllDimensions(g->shape)))};
}

KILN_VJP_RULE(ReduceWindowRule) {
  if (x.operands.size() > 2) return VariadicReduceCotangents(e, x, ct);
  const std::optional<Opcode> reducer = SimpleReducer(x);
  // Any other reducer (a product, ...): a tree of its applications.
  if (!reducer || !x.shape.IsArray()) return ReductionTreeCotangents(e, x, ct);
  Instruction* operand = x.operand(0);
  Instruction* init = x.operand(1);
  Instruction* g = ct.array;
  if (x.shape.element_count() == 0 || operand->shape.element_count() == 0) {
    return std::vector<Cotangent>{Of(e.Zeros(operand->shape)), Of(e.Zeros(init->shape))};
  }
  if (*reducer == Opcode::kAdd) {
    // Padding and base-dilation holes hold no values; the initial value adds
    // once to every result element.
    return std::vector<Cotangent>{Of(SumWindowCotangent(e, x, g)),
                                  Of(e.ReduceSum(g, AllDimensions(g->shape)))};
  }
  bool base_dilated = false;
  for (const WindowDimension& w : x.attrs.window->dimensions) {
    if (w.window_dilation != 1 || w.window_reversal) {
      return Unimplemented(
          "kiln grad: no derivative rule for '", OpcodeName(x.opcode),
          "' with a maximum or minimum reducer and window dilation or reversal (instruction ", x.name,
          "); JAX does not differentiate max-pooling with window dilation either");
    }
    base_dilated = base_dilated || w.base_dilation != 1;
  }
  const bool is_max = *reducer == Opcode::kMaximum;
  const ElementType type = operand->shape.element_type();
  const Shape scalar = Shape::Scalar(type);
  // Where the initial value is the result, it gets the cotangent, not the window.
  Instruction* init_won = e.Compare(e.BroadcastInDim(init, x.shape, {}), &x, ComparisonDirection::kEq);
  Instruction* source = e.Select(init_won, e.Zeros(x.shape), g);
  Instruction* chosen_from = operand;
  Attributes attrs;
  attrs.window = x.attrs.window;
  if (base_dilated) {
    // Holes hold the reducer's identity, which no window picks.
    Attributes interior;
    for (const WindowDimension& w : x.attrs.window->dimensions)
      interior.padding.push_back({0, 0, w.base_dilation - 1});
    const double identity =
        is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    chosen_from = e.Add(Opcode::kPad, {operand, e.Full(identity, scalar)}, std::move(interior));
    for (WindowDimension& w : attrs.window->dimensions) w.base_dilation = 1;
  }
  Computation* select =
      Comparison(e.module(), type, is_max ? ComparisonDirection::kGe : ComparisonDirection::kLe);
  Instruction* scattered = e.Add(Opcode::kSelectAndScatter, {chosen_from, source, e.Zeros(scalar)},
                                 std::move(attrs), nullptr, {select, e.Adder(type)});
  if (base_dilated) {
    Attributes strided;
    for (int64_t d = 0; d < operand->shape.rank(); ++d) {
      strided.slice_starts.push_back(0);
      strided.slice_limits.push_back(scattered->shape.dimensions(d));
      strided.slice_strides.push_back(x.attrs.window->dimensions[static_cast<size_t>(d)].base_dilation);
    }
    scattered = e.Add(Opcode::kSlice, {scattered}, std::move(strided));
  }
  Instruction* init_cotangent = e.ReduceSum(e.Select(init_won, g, e.Zeros(x.shape)), AllDimensions(x.shape));
  return std::vector<Cotangent>{Of(scattered), Of(init_cotangent)};
}

}  // namespace kiln::autodiff
