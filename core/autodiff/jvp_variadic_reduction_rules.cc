// Forward-mode rule of reduce and reduce-window over several operands (an
// argmax's (value, index) pairs, or any other reducer), and over one with a
// reducer other than add, maximum or minimum (a product: (a, da) (b, db)
// = (a b, a db + da b), no division, exact at zeros). A reduction folds
// its reducer over the elements, so the tangents fold along as dual
// numbers: the same reduction again over the operands and the tangents of
// the float ones, with the reducer extended to return, beside its results,
// their tangents from its arguments' (the reducer's own forward-mode
// derivative, from the ordinary rules). Padding and holes hold the initial
// values, whose tangents ride along. The reduction with tangents replaces
// the forward one, so values and tangents come from one fold.
#include <string>
#include <utility>
#include <vector>

#include "core/autodiff/jvp.h"
#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {
namespace {

// The reducer of `x` (over `types`, its operands' element types) extended
// with one tangent per operand in `carried`: parameters (accumulated values,
// accumulated tangents, new values, new tangents), results (values,
// tangents).
StatusOr<Computation*> DualReducer(VjpEmitter& e, const Instruction& x, const std::vector<ElementType>& types,
                                   const std::vector<size_t>& carried) {
  const Computation& reducer = *x.called.at(0);
  Computation* dual = NewComputation(e.module(), reducer.name() + "_with_tangents");
  VjpEmitter r(e, *dual);
  std::vector<Instruction*> arguments;  // the reducer's: accumulated, then new values
  std::vector<std::pair<Instruction*, Tangent>> seeds;
  for (int side = 0; side < 2; ++side) {
    const std::string which = side == 0 ? "accumulated" : "new";
    std::vector<Instruction*> values;
    for (ElementType type : types) values.push_back(r.AddParameter(Shape::Scalar(type), which));
    for (size_t k : carried) {
      seeds.emplace_back(values[k], Of(r.AddParameter(Shape::Scalar(types[k]), which + "_tangent")));
    }
    arguments.insert(arguments.end(), values.begin(), values.end());
  }
  Instruction* result = CloneComputation(r, reducer, arguments);
  dual->set_root(result);
  StatusOr<Tangent> found = EmitTangents(r, seeds);
  if (!found.ok()) {
    return Status(found.status().code(), found.status().message() + " (in the reducer of '" +
                                             std::string(OpcodeName(x.opcode)) + "' " + x.name + ")");
  }
  result = dual->root();
  // A reducer of one operand returns its value, not a tuple.
  const bool single = !result->shape.IsTuple();
  std::vector<Instruction*> results;
  for (size_t k = 0; k < types.size(); ++k)
    results.push_back(single ? result : r.GetTupleElement(result, static_cast<int64_t>(k)));
  for (size_t k : carried) {
    const Tangent& tangent = single ? *found : k < found->elements.size() ? found->elements[k] : Tangent{};
    results.push_back(DenseTangent(r, tangent, Shape::Scalar(types[k])));
  }
  dual->set_root(r.Tuple(std::move(results)));
  KILN_RETURN_IF_ERROR(r.status());
  return dual;
}

}  // namespace

StatusOr<Tangent> JvpVariadicReduction(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  const size_t count = x.operands.size() / 2;
  std::vector<ElementType> types;
  std::vector<size_t> carried;  // the operands whose tangents fold along
  for (size_t k = 0; k < count; ++k) {
    types.push_back(x.operand(k)->shape.element_type());
    if (CarriesGradient(types.back())) carried.push_back(k);
  }
  KILN_ASSIGN_OR_RETURN(Computation * dual, DualReducer(e, x, types, carried));
  std::vector<Instruction*> operands(x.operands.begin(), x.operands.begin() + static_cast<int64_t>(count));
  for (size_t k : carried) operands.push_back(DenseTangent(e, t[k], x.operand(k)->shape));
  for (size_t k = 0; k < count; ++k) operands.push_back(x.operand(count + k));
  for (size_t k : carried) operands.push_back(DenseTangent(e, t[count + k], x.operand(count + k)->shape));
  Instruction* folded = e.Add(x.opcode, std::move(operands), x.attrs, nullptr, {dual});
  if (x.shape.IsArray()) {
    // One operand (a product, ...): it is a float, or no tangent reached it.
    e.Replace(&x, e.GetTupleElement(folded, 0));
    return carried.empty() ? Tangent{} : Of(e.GetTupleElement(folded, 1));
  }
  std::vector<Instruction*> values;
  for (size_t k = 0; k < count; ++k) values.push_back(e.GetTupleElement(folded, static_cast<int64_t>(k)));
  e.Replace(&x, e.Tuple(std::move(values)));
  Tangent tangent;
  tangent.elements.resize(count);
  for (size_t i = 0; i < carried.size(); ++i) {
    tangent.elements[carried[i]] = Of(e.GetTupleElement(folded, static_cast<int64_t>(count + i)));
  }
  return tangent;
}

}  // namespace kiln::autodiff
