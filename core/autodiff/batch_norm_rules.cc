// Derivative rules of batch-norm-training (through its outputs, the batch
// mean and the batch variance too) and batch-norm-inference, by the
// standard formulas of normalisation over every dimension but the feature
// dimension; batch-norm-grad is refused by name (JAX has no such op and
// differentiates the training formula instead).
#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp_rules.h"

namespace kiln::autodiff {
namespace {

// What the rules share: the feature dimension, the dimensions reduced over,
// and per-feature values broadcast over the operand.
struct Normalisation {
  VjpEmitter& e;
  const Shape& shape;  // the operand's
  int64_t feature;
  std::vector<int64_t> reduced;

  Normalisation(VjpEmitter& emitter, const Instruction& op)
      : e(emitter), shape(op.operand(0)->shape), feature(op.attrs.feature_index) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (d != feature) reduced.push_back(d);
    }
  }
  Instruction* Spread(Instruction* per_feature) { return e.BroadcastInDim(per_feature, shape, {feature}); }
  Instruction* Sum(Instruction* x) { return e.ReduceSum(x, reduced); }
  Instruction* Mul(Instruction* x, Instruction* y) { return e.Binary(Opcode::kMultiply, x, y); }
  Instruction* Sub(Instruction* x, Instruction* y) { return e.Binary(Opcode::kSubtract, x, y); }
  Instruction* AddTo(Instruction* sum, Instruction* term) {
    return sum == nullptr ? term : e.Binary(Opcode::kAdd, sum, term);
  }
  // 1 / sqrt(variance + epsilon), per feature.
  Instruction* InverseDeviation(Instruction* variance, float epsilon) {
    return e.Unary(Opcode::kRsqrt,
                   e.Binary(Opcode::kAdd, variance, e.Full(static_cast<double>(epsilon), variance->shape)));
  }
};

Instruction* Element(const Cotangent& ct, size_t i) {
  return i < ct.elements.size() ? ct.elements[i].array : nullptr;
}

}  // namespace

KILN_VJP_RULE(BatchNormTrainingRule) {
  // y = scale * (x - mean) * r + offset with r = 1/sqrt(var + eps), mean and
  // var (biased) over the batch: the rule of the composition.
  Normalisation n(e, x);
  Instruction* operand = x.operand(0);
  Instruction* scale = x.operand(1);
  const double count = n.shape.dimensions(n.feature) == 0
                           ? 1.0
                           : static_cast<double>(n.shape.element_count() / n.shape.dimensions(n.feature));
  Instruction* mean = e.GetTupleElement(&x, 1);
  Instruction* variance = e.GetTupleElement(&x, 2);
  Instruction* centered = n.Sub(operand, n.Spread(mean));
  Instruction* r = n.InverseDeviation(variance, x.attrs.epsilon);
  Instruction* normalized = n.Mul(centered, n.Spread(r));
  Instruction* inverse_count = e.Full(1.0 / count, operand->shape);
  Instruction* g_operand = nullptr;
  Instruction* g_scale = e.Zeros(scale->shape);
  Instruction* g_offset = e.Zeros(scale->shape);
  if (Instruction* gy = Element(ct, 0)) {
    g_offset = n.Sum(gy);
    g_scale = n.Sum(n.Mul(gy, normalized));
    // scale * r * (gy - mean(gy) - normalized * mean(gy * normalized))
    Instruction* mean_gy = n.Mul(n.Spread(g_offset), inverse_count);
    Instruction* mean_projection = n.Mul(n.Spread(g_scale), inverse_count);
    Instruction* inner = n.Sub(n.Sub(gy, mean_gy), n.Mul(normalized, mean_projection));
    g_operand = n.Mul(n.Spread(n.Mul(scale, r)), inner);
  }
  if (Instruction* g_mean = Element(ct, 1)) {
    g_operand = n.AddTo(g_operand, n.Mul(n.Spread(g_mean), inverse_count));
  }
  if (Instruction* g_variance = Element(ct, 2)) {
    // d var / d x = 2 (x - mean) / count
    Instruction* twice = e.Full(2.0 / count, operand->shape);
    g_operand = n.AddTo(g_operand, n.Mul(n.Mul(n.Spread(g_variance), twice), centered));
  }
  if (g_operand == nullptr) g_operand = e.Zeros(operand->shape);
  return std::vector<Cotangent>{Of(g_operand), Of(g_scale), Of(g_offset)};
}

KILN_VJP_RULE(BatchNormInferenceRule) {
  // y = scale * (x - mean) * r + offset with r = 1/sqrt(variance + eps).
  Normalisation n(e, x);
  Instruction* operand = x.operand(0);
  Instruction* scale = x.operand(1);
  Instruction* mean = x.operand(3);
  Instruction* variance = x.operand(4);
  Instruction* gy = ct.array;
  Instruction* r = n.InverseDeviation(variance, x.attrs.epsilon);
  Instruction* centered = n.Sub(operand, n.Spread(mean));
  Instruction* g_offset = n.Sum(gy);
  Instruction* g_scale = n.Sum(n.Mul(n.Mul(gy, centered), n.Spread(r)));
  Instruction* scale_r = n.Mul(scale, r);
  Instruction* g_operand = n.Mul(gy, n.Spread(scale_r));
  Instruction* g_mean = e.Unary(Opcode::kNegate, n.Mul(g_offset, scale_r));
  // d r / d variance = -r^3 / 2
  Instruction* r_cubed = n.Mul(n.Mul(r, r), r);
  Instruction* g_variance =
      n.Mul(n.Mul(n.Mul(n.Sum(n.Mul(gy, centered)), scale), r_cubed), e.Full(-0.5, variance->shape));
  return std::vector<Cotangent>{Of(g_operand), Of(g_scale), Of(g_offset), Of(g_mean), Of(g_variance)};
}

KILN_VJP_RULE(BatchNormGradRule) {
  return Unimplemented("kiln grad: no derivative rule for 'batch-norm-grad' (instruction ", x.name,
                       "); JAX has no such op to differentiate: differentiate batch-norm-training instead");
}

}  // namespace kiln::autodiff
