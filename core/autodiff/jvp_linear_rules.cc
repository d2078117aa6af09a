// Forward-mode rules of the ops that are linear in their float operands
// (the shape ops, gather, all-reduce with add, select-and-scatter in its
// source; complex, real, imag and fft, which are linear over the reals,
// so an RFFT's or IRFFT's tangent is the same transform of the tangent) or
// bilinear (dot, convolution):
// the tangent is the same op again over the tangents, integer operands
// (indices, offsets) as they are. Also tuples.
#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {
namespace {

// Whether `computation`'s root is `opcode` of its two distinct parameters.
bool IsBinaryOfParameters(const Computation* computation, Opcode opcode) {
  const Instruction* root = computation == nullptr ? nullptr : computation->root();
  return root != nullptr && root->opcode == opcode && root->operands.size() == 2 &&
         root->operand(0)->opcode == Opcode::kParameter && root->operand(1)->opcode == Opcode::kParameter &&
         root->operand(0) != root->operand(1);
}

// `x` again with each float or complex operand replaced by its tangent
// (zeros where it has none); the others (indices) as they are.
Instruction* OverTangents(VjpEmitter& e, Instruction& x, std::span<const Tangent> t) {
  std::vector<Instruction*> operands;
  for (size_t i = 0; i < x.operands.size(); ++i) {
    Instruction* operand = x.operand(i);
    operands.push_back(CarriesGradient(operand->shape.element_type()) ? DenseTangent(e, t[i], operand->shape)
                                                                      : operand);
  }
  return e.Clone(x, std::move(operands));
}

}  // namespace

KILN_JVP_RULE(JvpLinearRule) {
  if (!x.shape.IsArray()) {
    return Unimplemented("kiln jvp: no forward-mode rule yet for '", OpcodeName(x.opcode),
                         "' with a tuple result (instruction ", x.name, ")");
  }
  return Of(OverTangents(e, x, t));
}

KILN_JVP_RULE(JvpBilinearRule) {
  // d(a * b) = da * b + a * db, the product being dot or convolution.
  Instruction* sum = nullptr;
  for (size_t i = 0; i < 2; ++i) {
    if (t[i].array == nullptr) continue;
    std::vector<Instruction*> operands(x.operands.begin(), x.operands.end());
    operands[i] = t[i].array;
    Instruction* term = e.Clone(x, std::move(operands));
    sum = sum == nullptr ? term : e.Binary(Opcode::kAdd, sum, term);
  }
  return Of(sum);
}

KILN_JVP_RULE(JvpAllReduceRule) {
  if (x.operands.size() != 1 || !x.shape.IsArray() ||
      !IsBinaryOfParameters(x.called.size() == 1 ? x.called[0] : nullptr, Opcode::kAdd)) {
    return Unimplemented(
        "kiln jvp: no forward-mode rule yet for 'all-reduce' over several operands or with a reducer other "
        "than add (instruction ",
        x.name, ")");
  }
  return Of(OverTangents(e, x, t));
}

KILN_JVP_RULE(JvpSelectAndScatterRule) {
  // The selection is piecewise constant in the operand; with an add scatter
  // the result is linear in the source and the initial value.
  if (x.called.size() != 2 || !IsBinaryOfParameters(x.called[1], Opcode::kAdd)) {
    return Unimplemented(
        "kiln jvp: no forward-mode rule for 'select-and-scatter' with a scatter other than add (instruction ",
        x.name, ")");
  }
  if (t[1].IsZero() && t[2].IsZero()) return Tangent{};
  return Of(e.Clone(x, {x.operand(0), DenseTangent(e, t[1], x.operand(1)->shape),
                        DenseTangent(e, t[2], x.operand(2)->shape)}));
}

KILN_JVP_RULE(JvpGetTupleElementRule) {
  const auto index = static_cast<size_t>(x.attrs.tuple_index);
  if (index >= t[0].elements.size()) return Tangent{};
  return t[0].elements[index];
}

KILN_JVP_RULE(JvpTupleRule) {
  Tangent tangent;
  tangent.elements.assign(t.begin(), t.end());
  if (tangent.IsZero()) tangent.elements.clear();
  return tangent;
}

}  // namespace kiln::autodiff
