#include "core/passes/batch_norm_expander.h"

#include <map>
#include <vector>

#include "core/passes/rewrite_context.h"
#include "core/scalar_computation.h"

namespace kiln {
namespace {

// A scalar `add` computation per element type, shared by the expansions.
class AddReducers {
 public:
  explicit AddReducers(Module& module) : module_(module) {}
  Computation* For(ElementType type) {
    auto found = reducers_.find(type);
    if (found != reducers_.end()) return found->second;
    Computation* added = AddScalarBinaryComputation(module_, Opcode::kAdd, type,
                                                    "batch_norm_add_" + std::string(ElementTypeName(type)));
    reducers_[type] = added;
    return added;
  }

 private:
  Module& module_;
  std::map<ElementType, Computation*> reducers_;
};

// Emits the expansion's instructions in one element type.
class Emitter {
 public:
  Emitter(RewriteContext& context, AddReducers& reducers, ElementType type, const Shape& operand_shape,
          int64_t feature_index)
      : context_(context),
        reducers_(reducers),
        type_(type),
        shape_(type, operand_shape.dimensions()),
        feature_shape_(type, {operand_shape.dimensions(feature_index)}),
        feature_index_(feature_index) {}

  const Shape& shape() const { return shape_; }
  const Shape& feature_shape() const { return feature_shape_; }

  Instruction* Convert(Instruction* value, ElementType to) {
    if (value->shape.element_type() == to) return value;
    Shape shape(to, value->shape.dimensions());
    return context_.Add(MakeInstruction(Opcode::kConvert, std::move(shape), {value}), "convert");
  }
  Instruction* Binary(Opcode opcode, Instruction* lhs, Instruction* rhs) {
    return context_.Add(MakeInstruction(opcode, Shape(type_, lhs->shape.dimensions()), {lhs, rhs}),
                        std::string(OpcodeName(opcode)));
  }
  Instruction* Unary(Opcode opcode, Instruction* value) {
    return context_.Add(MakeInstruction(opcode, Shape(type_, value->shape.dimensions()), {value}),
                        std::string(OpcodeName(opcode)));
  }
  Instruction* Full(double value, const Shape& shape) {
    auto scalar = Literal::Scalar<double>(value).Convert(type_);
    return context_.Splat(*scalar, shape);
  }
  // A per-feature vector broadcast along the operand's shape.
  Instruction* Spread(Instruction* feature_vector) {
    return context_.Broadcast(feature_vector, shape_, {feature_index_});
  }
  // Sum over every dimension but the feature one.
  Instruction* SumPerFeature(Instruction* value) {
    Attributes attrs;
    for (int64_t d = 0; d < shape_.rank(); ++d) {
      if (d != feature_index_) attrs.dimensions.push_back(d);
    }
    auto reduce = MakeInstruction(Opcode::kReduce, feature_shape_, {value, Full(0.0, Shape::Scalar(type_))},
                                  std::move(attrs));
    reduce->called = {reducers_.For(type_)};
    return context_.Add(std::move(reduce), "reduce");
  }
  Instruction* Tuple(std::vector<Instruction*> elements) {
    std::vector<Shape> shapes;
    for (const Instruction* element : elements) shapes.push_back(element->shape);
    return context_.Add(MakeInstruction(Opcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements)),
                        "tuple");
  }

 private:
  RewriteContext& context_;
  AddReducers& reducers_;
  ElementType type_;
  Shape shape_;
  Shape feature_shape_;
  int64_t feature_index_;
};

ElementType ComputeType(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 ? ElementType::kF32 : type;
}

bool IsExpandable(const Instruction& instruction) {
  switch (instruction.opcode) {
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: break;
    default: return false;
  }
  const Shape& operand = instruction.operand(0)->shape;
  const int64_t feature = instruction.attrs.feature_index;
  if (!IsFloating(operand.element_type()) || feature < 0 || feature >= operand.rank()) return false;
  const int64_t features = operand.dimensions(feature);
  // Empty batches divide by zero where the interpreter defines 0; keep the op.
  return features > 0 && operand.element_count() / features > 0;
}

Instruction* Expand(Instruction& bn, RewriteContext& context, AddReducers& reducers) {
  const Shape& operand_shape = bn.operand(0)->shape;
  const ElementType type = operand_shape.element_type();
  const ElementType compute = ComputeType(type);
  const int64_t feature_index = bn.attrs.feature_index;
  Emitter e(context, reducers, compute, operand_shape, feature_index);
  std::vector<Instruction*> in;
  for (Instruction* operand : bn.operands) in.push_back(e.Convert(operand, compute));
  const double count =
      static_cast<double>(operand_shape.element_count() / operand_shape.dimensions(feature_index));
  Instruction* epsilon = e.Full(bn.attrs.epsilon, e.feature_shape());
  Instruction* x = in[0];
  auto finish = [&](std::vector<Instruction*> results) -> Instruction* {
    for (Instruction*& result : results) result = e.Convert(result, type);
    return results.size() == 1 ? results[0] : e.Tuple(std::move(results));
  };
  auto normalize = [&](Instruction* centered, Instruction* variance, Instruction* scale,
                       Instruction* offset) {
    Instruction* stddev = e.Unary(Opcode::kSqrt, e.Spread(e.Binary(Opcode::kAdd, variance, epsilon)));
    Instruction* scaled = e.Binary(Opcode::kMultiply, e.Spread(scale), centered);
    return e.Binary(Opcode::kAdd, e.Binary(Opcode::kDivide, scaled, stddev), e.Spread(offset));
  };
  switch (bn.opcode) {
    case Opcode::kBatchNormTraining: {
      Instruction* mean = e.Binary(Opcode::kDivide, e.SumPerFeature(x), e.Full(count, e.feature_shape()));
      Instruction* centered = e.Binary(Opcode::kSubtract, x, e.Spread(mean));
      Instruction* variance =
          e.Binary(Opcode::kDivide, e.SumPerFeature(e.Binary(Opcode::kMultiply, centered, centered)),
                   e.Full(count, e.feature_shape()));
      return finish({normalize(centered, variance, in[1], in[2]), mean, variance});
    }
    case Opcode::kBatchNormInference: {
      Instruction* centered = e.Binary(Opcode::kSubtract, x, e.Spread(in[3]));
      return finish({normalize(centered, in[4], in[1], in[2])});
    }
    default: {  // grad: operand, scale, mean, variance, grad_output
      Instruction* dy = in[4];
      Instruction* variance_epsilon = e.Binary(Opcode::kAdd, in[3], epsilon);
      Instruction* stddev = e.Unary(Opcode::kSqrt, variance_epsilon);
      Instruction* centered = e.Binary(Opcode::kSubtract, x, e.Spread(in[2]));
      Instruction* sum_dy = e.SumPerFeature(dy);
      Instruction* sum_dy_centered = e.SumPerFeature(e.Binary(Opcode::kMultiply, dy, centered));
      Instruction* grad_scale = e.Binary(Opcode::kDivide, sum_dy_centered, stddev);
      Instruction* inverse_std = e.Binary(Opcode::kDivide, e.Full(1.0, e.feature_shape()), stddev);
      Instruction* count_full = e.Full(count, e.shape());
      Instruction* mean_dy = e.Binary(Opcode::kDivide, e.Spread(sum_dy), count_full);
      Instruction* mean_dy_centered = e.Binary(Opcode::kDivide, e.Spread(sum_dy_centered), count_full);
      Instruction* correction =
          e.Binary(Opcode::kDivide, e.Binary(Opcode::kMultiply, centered, mean_dy_centered),
                   e.Spread(variance_epsilon));
      Instruction* inner = e.Binary(Opcode::kSubtract, e.Binary(Opcode::kSubtract, dy, mean_dy), correction);
      Instruction* factor = e.Binary(Opcode::kMultiply, e.Spread(in[1]), e.Spread(inverse_std));
      Instruction* grad_x = e.Binary(Opcode::kMultiply, factor, inner);
      return finish({grad_x, grad_scale, sum_dy});
    }
  }
}

}  // namespace

StatusOr<bool> BatchNormExpander::Run(Module& module) {
  AddReducers reducers(module);
  bool changed = false;
  // Collected first: expanding adds reducer computations to the module.
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  for (Computation* computation : computations) {
    RewriteContext context(module, *computation);
    std::vector<Instruction*> order;
    for (const auto& instruction : computation->instructions()) order.push_back(instruction.get());
    UseReplacer replacer(*computation);
    for (Instruction* instruction : order) {
      replacer.Forward(*instruction);
      if (IsExpandable(*instruction)) replacer.Replace(instruction, Expand(*instruction, context, reducers));
    }
    if (replacer.Apply()) {
      computation->SortTopologically();
      computation->RemoveDeadInstructions();
      changed = true;
    }
  }
  return changed;
}

}  // namespace kiln
