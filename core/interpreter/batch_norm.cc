// Batch normalisation ops, computed in double and rounded to the operand's
// type. Training and inference follow the seed's formulas; the gradient
// uses the exact derivative (as XLA's implementation does), returning
// (grad_operand, grad_scale, grad_offset):
//   grad_offset = sum(dy)
//   grad_scale  = sum(dy * (x - mean)) / sqrt(var + eps)
//   grad_x      = scale / sqrt(var + eps) *
//                 (dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) / (var + eps))
#include <cmath>

#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

struct FeatureLayout {
  int64_t features = 0;
  int64_t inner = 1;  // elements between consecutive features
  int64_t count = 0;  // elements per feature
  int64_t Feature(int64_t linear) const { return linear / inner % features; }
};

StatusOr<FeatureLayout> Layout(const Instruction& instruction, const Literal& operand) {
  const Shape& shape = operand.shape();
  const int64_t feature_index = instruction.attrs.feature_index;
  if (feature_index < 0 || feature_index >= shape.rank()) {
    return InvalidArgument(OpcodeName(instruction.opcode), " feature_index ", feature_index,
                           " out of range for ", shape.ToString());
  }
  FeatureLayout layout;
  layout.features = shape.dimensions(feature_index);
  for (int64_t d = feature_index + 1; d < shape.rank(); ++d) layout.inner *= shape.dimensions(d);
  layout.count = layout.features == 0 ? 0 : shape.element_count() / layout.features;
  return layout;
}

std::vector<double> AsDoubles(const Literal& literal) {
  std::vector<double> values(static_cast<size_t>(literal.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = literal.GetAsDouble(static_cast<int64_t>(i));
  return values;
}

StatusOr<std::vector<double>> FeatureVector(const Literal& literal, const FeatureLayout& layout,
                                            const char* what) {
  if (literal.element_count() != layout.features) {
    return InvalidArgument("batch-norm ", what, " ", literal.shape().ToString(), " needs ", layout.features,
                           " elements");
  }
  return AsDoubles(literal);
}

StatusOr<Literal> FromDoubles(const std::vector<double>& values, const Shape& shape) {
  Literal wide = Literal::FromVector<double>(
      values, shape.dimensions().empty() ? std::vector<int64_t>{} : shape.dimensions());
  if (shape.rank() == 0) {
    KILN_ASSIGN_OR_RETURN(wide, wide.Reshape({}));
  }
  return wide.Convert(shape.element_type());
}

}  // namespace

StatusOr<Literal> EvaluateBatchNormTraining(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  KILN_ASSIGN_OR_RETURN(FeatureLayout layout, Layout(instruction, operand));
  KILN_ASSIGN_OR_RETURN(std::vector<double> scale, FeatureVector(*operands[1], layout, "scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> offset, FeatureVector(*operands[2], layout, "offset"));
  const std::vector<double> x = AsDoubles(operand);
  const auto features = static_cast<size_t>(layout.features);
  std::vector<double> mean(features, 0.0), variance(features, 0.0);
  for (size_t i = 0; i < x.size(); ++i)
    mean[static_cast<size_t>(layout.Feature(static_cast<int64_t>(i)))] += x[i];
  for (double& m : mean) m = layout.count == 0 ? 0.0 : m / static_cast<double>(layout.count);
  for (size_t i = 0; i < x.size(); ++i) {
    const auto f = static_cast<size_t>(layout.Feature(static_cast<int64_t>(i)));
    variance[f] += (x[i] - mean[f]) * (x[i] - mean[f]);
  }
  for (double& v : variance) v = layout.count == 0 ? 0.0 : v / static_cast<double>(layout.count);
  std::vector<double> y(x.size());
  const double epsilon = instruction.attrs.epsilon;
  for (size_t i = 0; i < x.size(); ++i) {
    const auto f = static_cast<size_t>(layout.Feature(static_cast<int64_t>(i)));
    y[i] = scale[f] * (x[i] - mean[f]) / std::sqrt(variance[f] + epsilon) + offset[f];
  }
  std::vector<Literal> results;
  KILN_ASSIGN_OR_RETURN(Literal normalized, FromDoubles(y, operand.shape()));
  const Shape feature_shape(operand.shape().element_type(), {layout.features});
  KILN_ASSIGN_OR_RETURN(Literal mean_literal, FromDoubles(mean, feature_shape));
  KILN_ASSIGN_OR_RETURN(Literal variance_literal, FromDoubles(variance, feature_shape));
  results.push_back(std::move(normalized));
  results.push_back(std::move(mean_literal));
  results.push_back(std::move(variance_literal));
  return Literal::Tuple(std::move(results));
}

StatusOr<Literal> EvaluateBatchNormInference(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  KILN_ASSIGN_OR_RETURN(FeatureLayout layout, Layout(instruction, operand));
  KILN_ASSIGN_OR_RETURN(std::vector<double> scale, FeatureVector(*operands[1], layout, "scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> offset, FeatureVector(*operands[2], layout, "offset"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> mean, FeatureVector(*operands[3], layout, "mean"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> variance, FeatureVector(*operands[4], layout, "variance"));
  std::vector<double> y = AsDoubles(operand);
  const double epsilon = instruction.attrs.epsilon;
  for (size_t i = 0; i < y.size(); ++i) {
    const auto f = static_cast<size_t>(layout.Feature(static_cast<int64_t>(i)));
    y[i] = scale[f] * (y[i] - mean[f]) / std::sqrt(variance[f] + epsilon) + offset[f];
  }
  return FromDoubles(y, operand.shape());
}

StatusOr<Literal> EvaluateBatchNormGrad(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  KILN_ASSIGN_OR_RETURN(FeatureLayout layout, Layout(instruction, operand));
  KILN_ASSIGN_OR_RETURN(std::vector<double> scale, FeatureVector(*operands[1], layout, "scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> mean, FeatureVector(*operands[2], layout, "mean"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> variance, FeatureVector(*operands[3], layout, "variance"));
  if (operands[4]->element_count() != operand.element_count()) {
    return InvalidArgument("batch-norm-grad grad_output must match the operand");
  }
  const std::vector<double> x = AsDoubles(operand);
  const std::vector<double> dy = AsDoubles(*operands[4]);
  const auto features = static_cast<size_t>(layout.features);
  const double epsilon = instruction.attrs.epsilon;
  std::vector<double> sum_dy(features, 0.0), sum_dy_centered(features, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const auto f = static_cast<size_t>(layout.Feature(static_cast<int64_t>(i)));
    sum_dy[f] += dy[i];
    sum_dy_centered[f] += dy[i] * (x[i] - mean[f]);
  }
  const double count = layout.count == 0 ? 1.0 : static_cast<double>(layout.count);
  std::vector<double> grad_x(x.size()), grad_scale(features), grad_offset(features);
  for (size_t f = 0; f < features; ++f) {
    grad_offset[f] = sum_dy[f];
    grad_scale[f] = sum_dy_centered[f] / std::sqrt(variance[f] + epsilon);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const auto f = static_cast<size_t>(layout.Feature(static_cast<int64_t>(i)));
    const double inverse_std = 1.0 / std::sqrt(variance[f] + epsilon);
    grad_x[i] = scale[f] * inverse_std *
                (dy[i] - sum_dy[f] / count -
                 (x[i] - mean[f]) * (sum_dy_centered[f] / count) / (variance[f] + epsilon));
  }
  const Shape feature_shape(operand.shape().element_type(), {layout.features});
  std::vector<Literal> results;
  KILN_ASSIGN_OR_RETURN(Literal grad_operand, FromDoubles(grad_x, operand.shape()));
  KILN_ASSIGN_OR_RETURN(Literal grad_scale_literal, FromDoubles(grad_scale, feature_shape));
  KILN_ASSIGN_OR_RETURN(Literal grad_offset_literal, FromDoubles(grad_offset, feature_shape));
  results.push_back(std::move(grad_operand));
  results.push_back(std::move(grad_scale_literal));
  results.push_back(std::move(grad_offset_literal));
  return Literal::Tuple(std::move(results));
}

}  // namespace kiln::interpreter
