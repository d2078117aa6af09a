// Derivative rules of the ops that reorder: sort (one or several operands;
// each float operand's cotangent is its result's cotangent moved back
// through the permutation, as JAX's rule that sorts an iota alongside) and
// top-k (the values' cotangent goes back to the indices top-k returns).
#include <memory>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// (p0, p1, ...) -> p0 < p1 over `count` operands whose first is s32.
Computation* FirstLess(Module& module, const std::vector<ElementType>& types) {
  auto computation = std::make_unique<Computation>("vjp_unsort");
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < 2 * types.size(); ++i) {
    parameters.push_back(AddParameter(*computation, Shape::Scalar(types[i / 2]), static_cast<int64_t>(i),
                                      "p" + std::to_string(i)));
  }
  Attributes compare;
  compare.comparison_direction = ComparisonDirection::kLt;
  Instruction* root = computation->AddInstruction(MakeInstruction(
      Opcode::kCompare, Shape::Scalar(ElementType::kPred), {parameters[0], parameters[1]}, compare));
  root->name = "less";
  computation->set_root(root);
  return module.AddComputation(std::move(computation));
}

}  // namespace

KILN_VJP_RULE(SortRule) {
  const auto count = x.operands.size();
  std::vector<Cotangent> cotangents(count);
  std::vector<Instruction*> result_cotangents(count, nullptr);
  if (x.shape.IsArray()) {
    result_cotangents[0] = ct.array;
  } else {
    for (size_t i = 0; i < count && i < ct.elements.size(); ++i) result_cotangents[i] = ct.elements[i].array;
  }
  std::vector<size_t> moved;  // the float operands whose results have a cotangent
  for (size_t i = 0; i < count; ++i) {
    if (result_cotangents[i] != nullptr && CarriesGradient(x.operand(i)->shape.element_type()))
      moved.push_back(i);
  }
  if (moved.empty()) return cotangents;
  const int64_t dimension = x.attrs.dimensions.at(0);
  const Shape& like = x.operand(0)->shape;
  // The permutation: the forward sort again, an iota alongside.
  Attributes iota;
  iota.iota_dimension = dimension;
  const Shape s32(ElementType::kS32, like.dimensions());
  std::vector<Instruction*> operands(x.operands.begin(), x.operands.end());
  operands.push_back(e.Add(Opcode::kIota, {}, std::move(iota), &s32));
  Instruction* sorted =
      e.Add(Opcode::kSort, std::move(operands), x.attrs, nullptr,
            {WithIgnoredParameters(e.module(), *x.called.at(0), {ElementType::kS32}, "_with_iota")});
  Instruction* permutation = e.GetTupleElement(sorted, static_cast<int64_t>(count));
  // Sorting the cotangents by the permutation puts each where its element came from.
  std::vector<Instruction*> unsort = {permutation};
  std::vector<ElementType> types = {ElementType::kS32};
  for (size_t i : moved) {
    unsort.push_back(result_cotangents[i]);
    types.push_back(result_cotangents[i]->shape.element_type());
  }
  Attributes attrs;
  attrs.dimensions = {dimension};
  Instruction* unsorted =
      e.Add(Opcode::kSort, std::move(unsort), std::move(attrs), nullptr, {FirstLess(e.module(), types)});
  for (size_t j = 0; j < moved.size(); ++j) {
    cotangents[moved[j]] = Of(e.GetTupleElement(unsorted, static_cast<int64_t>(j + 1)));
  }
  return cotangents;
}

KILN_VJP_RULE(TopKRule) {
  // operand's cotangent[..., i] = sum over k of values' cotangent[..., k]
  // where indices[..., k] == i (each index appears once).
  Instruction* operand = x.operand(0);
  if (ct.elements.empty() || ct.elements[0].array == nullptr) return std::vector<Cotangent>{Cotangent{}};
  Instruction* g = ct.elements[0].array;
  Instruction* indices = e.GetTupleElement(&x, 1);
  const int64_t rank = operand->shape.rank();
  std::vector<int64_t> wide = g->shape.dimensions();  // [..., k, n]
  wide.push_back(operand->shape.dimensions(rank - 1));
  const Shape wide_s32(ElementType::kS32, wide);
  const Shape wide_g(g->shape.element_type(), wide);
  std::vector<int64_t> leading;
  for (int64_t d = 0; d < rank; ++d) leading.push_back(d);
  Attributes iota;
  iota.iota_dimension = rank;
  Instruction* positions = e.Add(Opcode::kIota, {}, std::move(iota), &wide_s32);
  Instruction* hit =
      e.Compare(e.BroadcastInDim(indices, wide_s32, leading), positions, ComparisonDirection::kEq);
  Instruction* spread = e.Select(hit, e.BroadcastInDim(g, wide_g, leading), e.Zeros(wide_g));
  return std::vector<Cotangent>{
      Of(e.Convert(e.ReduceSum(spread, {rank - 1}), operand->shape.element_type()))};
}

}  // namespace kiln::autodiff
