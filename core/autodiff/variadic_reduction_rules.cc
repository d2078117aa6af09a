// Reverse-mode rule of reduce and reduce-window over several operands whose
// reducer chooses: each float result of the reducer is a select between
// its accumulated and its new argument (an argmax's (value, index) pairs),
// so each output element is one operand element or the initial value. The
// reduction runs again with each element's position riding along, chosen
// by the same predicate, which tells where each output came from; the
// cotangent goes back there (summed over the windows that chose an
// element; to the initial value where no element was chosen, padding and
// holes included). Other reducers of several operands are differentiated
// through a tree of their applications (reduction_tree_rules.cc).
#include <algorithm>
#include <string>
#include <vector>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// Whether reducer result `k` of `reducer` (over `count` operands) is a
// select between parameters k and count + k.
bool Chooses(const Computation& reducer, size_t count, size_t k) {
  const Instruction* root = reducer.root();
  if (root == nullptr || root->opcode != Opcode::kTuple || root->operands.size() != count) return false;
  const Instruction* result = root->operand(k);
  if (result->opcode != Opcode::kSelect) return false;
  auto is_parameter = [](const Instruction* instruction, size_t number) {
    return instruction->opcode == Opcode::kParameter &&
           instruction->attrs.parameter_number == static_cast<int64_t>(number);
  };
  const Instruction* a = result->operand(1);
  const Instruction* b = result->operand(2);
  return (is_parameter(a, k) && is_parameter(b, count + k)) ||
         (is_parameter(a, count + k) && is_parameter(b, k));
}

// The reducer extended with one s64 position per entry of `tracked`,
// chosen by the predicate that chooses that result.
Computation* PositionReducer(VjpEmitter& e, const Instruction& x, const std::vector<size_t>& tracked) {
  const Computation& reducer = *x.called.at(0);
  const size_t count = x.operands.size() / 2;
  Computation* extended = NewComputation(e.module(), reducer.name() + "_with_positions");
  VjpEmitter r(e, *extended);
  const Shape position = Shape::Scalar(ElementType::kS64);
  std::vector<Instruction*> arguments;
  std::vector<Instruction*> positions[2];
  for (int side = 0; side < 2; ++side) {
    for (size_t k = 0; k < count; ++k) {
      arguments.push_back(r.AddParameter(Shape::Scalar(x.operand(k)->shape.element_type()), "value"));
    }
    for (size_t i = 0; i < tracked.size(); ++i)
      positions[side].push_back(r.AddParameter(position, "position"));
  }
  Instruction* result = CloneComputation(r, reducer, arguments);
  std::vector<Instruction*> results;
  for (size_t k = 0; k < count; ++k) results.push_back(result->operand(k));
  for (size_t i = 0; i < tracked.size(); ++i) {
    const Instruction* choice = result->operand(tracked[i]);
    auto side_of = [&](const Instruction* argument) { return argument == arguments[tracked[i]] ? 0 : 1; };
    results.push_back(r.Select(choice->operand(0), positions[side_of(choice->operand(1))][i],
                               positions[side_of(choice->operand(2))][i]));
  }
  extended->set_root(r.Tuple(std::move(results)));
  return extended;
}

// The cotangents of a reduce-window over several operands, from the
// position each output element chose (`chosen`, -1 for the initial value):
// a scatter-add of the result's cotangent into the flattened operand, which
// drops the -1 positions, and their sum for the initial value.
std::vector<Cotangent> WindowCotangents(VjpEmitter& e, const Instruction& x, const Cotangent& ct,
                                        const std::vector<size_t>& tracked, Instruction* chosen_all,
                                        Instruction* none) {
  const size_t count = x.operands.size() / 2;
  std::vector<Cotangent> result(x.operands.size());
  const Shape& operand_shape = x.operand(0)->shape;
  const int64_t outputs = x.shape.tuple_shapes(0).element_count();
  for (size_t i = 0; i < tracked.size(); ++i) {
    const size_t k = tracked[i];
    Instruction* g = ct.elements[k].array;
    Instruction* chosen = e.GetTupleElement(chosen_all, static_cast<int64_t>(count + i));
    Attributes attrs;
    attrs.scatter->inserted_window_dims = {0};
    attrs.scatter->scatter_dims_to_operand_dims = {0};
    attrs.scatter->index_vector_dim = 1;
    const ElementType type = x.operand(k)->shape.element_type();
    Instruction* scattered = e.Add(Opcode::kScatter,
                                   {e.Zeros(Shape(type, {operand_shape.element_count()})),
                                    e.Reshape(chosen, {outputs, 1}), e.Reshape(g, {outputs})},
                                   std::move(attrs), nullptr, {e.Adder(type)});
    result[k] = Of(e.Reshape(scattered, operand_shape.dimensions()));
    Instruction* from_init =
        e.Compare(chosen, e.BroadcastInDim(none, chosen->shape, {}), ComparisonDirection::kEq);
    result[count + k] = Of(e.ReduceSum(e.Select(from_init, g, e.Zeros(g->shape)), AllDimensions(g->shape)));
  }
  return result;
}

}  // namespace

StatusOr<std::vector<Cotangent>> VariadicReduceCotangents(VjpEmitter& e, Instruction& x,
                                                          const Cotangent& ct) {
  const size_t count = x.operands.size() / 2;
  std::vector<size_t> tracked;  // the float results with a cotangent
  for (size_t k = 0; k < count; ++k) {
    if (k >= ct.elements.size() || ct.elements[k].array == nullptr) continue;
    if (!CarriesGradient(x.operand(k)->shape.element_type())) continue;
    // Other reducers (a sum and a product, ...): a tree of their applications.
    if (!Chooses(*x.called.at(0), count, k)) return ReductionTreeCotangents(e, x, ct);
    tracked.push_back(k);
  }
  std::vector<Cotangent> result(x.operands.size());
  if (tracked.empty()) return result;
  const Shape& operand_shape = x.operand(0)->shape;
  const Shape flat(ElementType::kS64, {operand_shape.element_count()});
  Attributes iota;
  iota.iota_dimension = 0;
  Instruction* positions =
      e.Reshape(e.Add(Opcode::kIota, {}, std::move(iota), &flat), operand_shape.dimensions());
  Instruction* none = e.Full(-1.0, Shape::Scalar(ElementType::kS64));
  std::vector<Instruction*> operands(x.operands.begin(), x.operands.begin() + static_cast<int64_t>(count));
  for (size_t i = 0; i < tracked.size(); ++i) operands.push_back(positions);
  for (size_t k = 0; k < count; ++k) operands.push_back(x.operand(count + k));
  for (size_t i = 0; i < tracked.size(); ++i) operands.push_back(none);
  Instruction* chosen_all =
      e.Add(x.opcode, std::move(operands), x.attrs, nullptr, {PositionReducer(e, x, tracked)});
  if (x.opcode == Opcode::kReduceWindow) return WindowCotangents(e, x, ct, tracked, chosen_all, none);
  const std::vector<int64_t>& reduced = x.attrs.dimensions;
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  for (size_t i = 0; i < tracked.size(); ++i) {
    const size_t k = tracked[i];
    Instruction* g = ct.elements[k].array;
    Instruction* chosen = e.GetTupleElement(chosen_all, static_cast<int64_t>(count + i));
    Instruction* here =
        e.Compare(positions, e.BroadcastInDim(chosen, positions->shape, kept), ComparisonDirection::kEq);
    result[k] =
        Of(e.Select(here, e.BroadcastInDim(g, x.operand(k)->shape, kept), e.Zeros(x.operand(k)->shape)));
    Instruction* from_init =
        e.Compare(chosen, e.BroadcastInDim(none, chosen->shape, {}), ComparisonDirection::kEq);
    result[count + k] = Of(e.ReduceSum(e.Select(from_init, g, e.Zeros(g->shape)), AllDimensions(g->shape)));
  }
  return result;
}

}  // namespace kiln::autodiff
