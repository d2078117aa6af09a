#include "backends/llvm/convolution_emitter.h"

#include <functional>
#include <vector>

#include "backends/llvm/dot_emitter.h"
#include "backends/llvm/loop_ir.h"
#include "backends/llvm/window_ir.h"

namespace kiln::llvm_ir {

Status CheckConvolutionEmittable(const Instruction& conv) {
  auto refuse = [&](const char* why) {
    return Unimplemented("cpu codegen: cannot emit convolution ", conv.shape.ToString(), " (", conv.name,
                         "): ", why);
  };
  if (conv.operands.size() != 2 || !conv.shape.IsArray()) return refuse("needs two array operands");
  const Shape& lhs = conv.operand(0)->shape;
  const Shape& rhs = conv.operand(1)->shape;
  for (ElementType type : {lhs.element_type(), rhs.element_type(), conv.shape.element_type()}) {
    if (type == ElementType::kPred || IsComplex(type)) return refuse("needs real, non-pred element types");
  }
  const ConvolutionDimensionNumbers& dn = conv.attrs.conv;
  const auto spatial = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  const std::vector<WindowDimension>& window = conv.attrs.window->dimensions;
  if (lhs.rank() != spatial + 2 || rhs.rank() != spatial + 2 || conv.shape.rank() != spatial + 2 ||
      static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(window.size()) != spatial) {
    return refuse("ranks do not match the dimension numbers and window");
  }
  auto in_range = [](int64_t d, int64_t rank) { return d >= 0 && d < rank; };
  const int64_t rank = spatial + 2;
  if (!in_range(dn.input_batch_dimension, rank) || !in_range(dn.input_feature_dimension, rank) ||
      !in_range(dn.kernel_input_feature_dimension, rank) ||
      !in_range(dn.kernel_output_feature_dimension, rank) || !in_range(dn.output_batch_dimension, rank) ||
      !in_range(dn.output_feature_dimension, rank)) {
    return refuse("dimension numbers out of range");
  }
  for (int64_t d = 0; d < spatial; ++d) {
    const auto i = static_cast<size_t>(d);
    if (!in_range(dn.input_spatial_dimensions[i], rank) || !in_range(dn.kernel_spatial_dimensions[i], rank) ||
        !in_range(dn.output_spatial_dimensions[i], rank)) {
      return refuse("spatial dimension numbers out of range");
    }
    const WindowDimension& w = window[i];
    if (w.size != rhs.dimensions(dn.kernel_spatial_dimensions[i]) || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1) {
      return refuse("window does not match the kernel");
    }
  }
  const int64_t feature_groups = conv.attrs.feature_group_count, batch_groups = conv.attrs.batch_group_count;
  const int64_t out_features = conv.shape.dimensions(dn.output_feature_dimension);
  if (feature_groups < 1 || batch_groups < 1 || (feature_groups > 1 && batch_groups > 1) ||
      lhs.dimensions(dn.input_feature_dimension) !=
          rhs.dimensions(dn.kernel_input_feature_dimension) * feature_groups ||
      out_features % (feature_groups * batch_groups) != 0 ||
      lhs.dimensions(dn.input_batch_dimension) !=
          conv.shape.dimensions(dn.output_batch_dimension) * batch_groups) {
    return refuse("feature or batch groups do not match the operands");
  }
  return OkStatus();
}

StatusOr<llvm::Value*> EmitConvolutionElement(llvm::IRBuilder<>& b, ElementalEmitter& emitter,
                                              const Instruction& conv, const IrIndex& index) {
  const ConvolutionDimensionNumbers& dn = conv.attrs.conv;
  const std::vector<WindowDimension>& window = conv.attrs.window->dimensions;
  const Instruction& lhs = *conv.operand(0);
  const Instruction& rhs = *conv.operand(1);
  const size_t spatial = dn.input_spatial_dimensions.size();
  const int64_t feature_groups = conv.attrs.feature_group_count, batch_groups = conv.attrs.batch_group_count;
  const int64_t out_features = conv.shape.dimensions(dn.output_feature_dimension);
  const int64_t out_batch = conv.shape.dimensions(dn.output_batch_dimension);
  const int64_t group_features = rhs.shape.dimensions(dn.kernel_input_feature_dimension);
  const int64_t chunk = out_features / (feature_groups * batch_groups);

  llvm::Value* feature = index[static_cast<size_t>(dn.output_feature_dimension)];
  llvm::Value* partition = b.CreateUDiv(feature, b.getInt64(chunk));
  llvm::Value* batch = index[static_cast<size_t>(dn.output_batch_dimension)];
  if (batch_groups > 1) batch = b.CreateAdd(b.CreateMul(partition, b.getInt64(out_batch)), batch);
  llvm::Value* first_input_feature =
      feature_groups > 1 ? b.CreateMul(partition, b.getInt64(group_features)) : b.getInt64(0);

  ProductAccumulator sum(b, emitter, conv.shape.element_type(), "conv.acc");

  IrIndex lhs_index(spatial + 2), rhs_index(spatial + 2);
  lhs_index[static_cast<size_t>(dn.input_batch_dimension)] = batch;
  rhs_index[static_cast<size_t>(dn.kernel_output_feature_dimension)] = feature;
  std::vector<llvm::Value*> taps(spatial);
  // Kernel window positions, row-major; then the input features of the group.
  std::function<Status(size_t)> loop = [&](size_t level) -> Status {
    if (level == spatial) {
      llvm::Value* inside = b.getTrue();
      for (size_t d = 0; d < spatial; ++d) {
        const WindowDimension& w = window[d];
        const int64_t extent = lhs.shape.dimensions(dn.input_spatial_dimensions[d]);
        lhs_index[static_cast<size_t>(dn.input_spatial_dimensions[d])] = EmitWindowInputPosition(
            b, w, extent, index[static_cast<size_t>(dn.output_spatial_dimensions[d])], taps[d], &inside);
        rhs_index[static_cast<size_t>(dn.kernel_spatial_dimensions[d])] =
            w.window_reversal ? b.CreateSub(b.getInt64(w.size - 1), taps[d]) : taps[d];
      }
      llvm::Function* function = b.GetInsertBlock()->getParent();
      llvm::BasicBlock* body = llvm::BasicBlock::Create(b.getContext(), "conv.tap", function);
      llvm::BasicBlock* padded = llvm::BasicBlock::Create(b.getContext(), "conv.padded", function);
      llvm::BasicBlock* next = llvm::BasicBlock::Create(b.getContext(), "conv.next", function);
      b.CreateCondBr(inside, body, padded);
      b.SetInsertPoint(body);
      KILN_RETURN_IF_ERROR(EmitCountedLoop(
          b, b.getInt64(0), b.getInt64(group_features), "conv.feature",
          [&](llvm::Value* ci) {
            lhs_index[static_cast<size_t>(dn.input_feature_dimension)] = b.CreateAdd(first_input_feature, ci);
            rhs_index[static_cast<size_t>(dn.kernel_input_feature_dimension)] = ci;
            return sum.Add(lhs, lhs_index, rhs, rhs_index);
          },
          LoopKind::kAccumulating));
      b.CreateBr(next);
      // A tap in the padding adds zero times each weight, in the same order.
      b.SetInsertPoint(padded);
      if (IsFloating(conv.shape.element_type())) {
        KILN_RETURN_IF_ERROR(EmitCountedLoop(
            b, b.getInt64(0), b.getInt64(group_features), "conv.padded_feature",
            [&](llvm::Value* ci) {
              rhs_index[static_cast<size_t>(dn.kernel_input_feature_dimension)] = ci;
              return sum.AddZeroTimes(rhs, rhs_index);
            },
            LoopKind::kAccumulating));
      }
      b.CreateBr(next);
      b.SetInsertPoint(next);
      return OkStatus();
    }
    return EmitCountedLoop(b, b.getInt64(0), b.getInt64(window[level].size), "conv.window",
                           [&](llvm::Value* k) {
                             taps[level] = k;
                             return loop(level + 1);
                           });
  };
  KILN_RETURN_IF_ERROR(loop(0));
  return sum.Result();
}

}  // namespace kiln::llvm_ir
