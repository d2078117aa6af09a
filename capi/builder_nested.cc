// Ops with nested computations: reductions, windows, map, sort, all-reduce,
// control flow; and batch normalisation.
#include "capi/builder_internal.h"

using kiln::Op;
using kiln::capi::BuildOp;
using kiln::capi::OpContext;
using kiln::capi::ValidPadding;

extern "C" {

kiln_op_t kiln_op_reduce(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t init_value,
                         const kiln_computation_t* computation, const int64_t* dimensions,
                         size_t num_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op init = c.op(init_value, "init_value");
    const kiln::Module* reducer = c.computation(computation, "computation");
    std::span<const int64_t> dims = c.ints(dimensions, num_dimensions, "dimensions");
    if (!c.ok()) return Op();
    return c.builder().Reduce(x, init, *reducer, dims);
  });
}

kiln_op_t kiln_op_reduce_variadic(kiln_builder_t* builder, const kiln_op_t* operands,
                                  const kiln_op_t* init_values, size_t num_operands,
                                  const kiln_computation_t* computation, const int64_t* dimensions,
                                  size_t num_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    std::vector<Op> inits = c.ops(init_values, num_operands, "init_values");
    const kiln::Module* reducer = c.computation(computation, "computation");
    std::span<const int64_t> dims = c.ints(dimensions, num_dimensions, "dimensions");
    if (!c.ok()) return Op();
    return c.builder().Reduce(std::span<const Op>(xs), std::span<const Op>(inits), *reducer, dims);
  });
}

kiln_op_t kiln_op_reduce_window(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t init_value,
                                const kiln_computation_t* computation, const int64_t* window_dimensions,
                                const int64_t* window_strides, size_t rank, kiln_padding_t padding) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op init = c.op(init_value, "init_value");
    const kiln::Module* reducer = c.computation(computation, "computation");
    std::span<const int64_t> window = c.ints(window_dimensions, rank, "window_dimensions");
    std::vector<int64_t> strides = c.ints_or(window_strides, rank, 1);
    if (!c.ok() || !ValidPadding(c, padding)) return Op();
    return c.builder().ReduceWindow(x, init, *reducer, window, strides, static_cast<kiln::Padding>(padding));
  });
}

kiln_op_t kiln_op_reduce_window_general(kiln_builder_t* builder, const kiln_op_t* operands,
                                        const kiln_op_t* init_values, size_t num_operands,
                                        const kiln_computation_t* computation,
                                        const int64_t* window_dimensions, const int64_t* window_strides,
                                        const int64_t* base_dilations, const int64_t* window_dilations,
                                        const int64_t* padding_low, const int64_t* padding_high,
                                        size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    std::vector<Op> inits = c.ops(init_values, num_operands, "init_values");
    const kiln::Module* reducer = c.computation(computation, "computation");
    std::span<const int64_t> window = c.ints(window_dimensions, rank, "window_dimensions");
    std::vector<int64_t> strides = c.ints_or(window_strides, rank, 1);
    std::vector<int64_t> base = c.ints_or(base_dilations, rank, 1);
    std::vector<int64_t> dilation = c.ints_or(window_dilations, rank, 1);
    std::vector<std::pair<int64_t, int64_t>> pads = c.padding(padding_low, padding_high, rank);
    if (!c.ok()) return Op();
    return c.builder().ReduceWindowWithGeneralPadding(xs, inits, *reducer, window, strides, base, dilation,
                                                      pads);
  });
}

kiln_op_t kiln_op_select_and_scatter(kiln_builder_t* builder, kiln_op_t operand,
                                     const kiln_computation_t* select, const int64_t* window_dimensions,
                                     const int64_t* window_strides, size_t rank, kiln_padding_t padding,
                                     kiln_op_t source, kiln_op_t init_value,
                                     const kiln_computation_t* scatter) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op src = c.op(source, "source");
    Op init = c.op(init_value, "init_value");
    const kiln::Module* select_module = c.computation(select, "select");
    const kiln::Module* scatter_module = c.computation(scatter, "scatter");
    std::span<const int64_t> window = c.ints(window_dimensions, rank, "window_dimensions");
    std::vector<int64_t> strides = c.ints_or(window_strides, rank, 1);
    if (!c.ok() || !ValidPadding(c, padding)) return Op();
    return c.builder().SelectAndScatter(x, *select_module, window, strides,
                                        static_cast<kiln::Padding>(padding), src, init, *scatter_module);
  });
}

kiln_op_t kiln_op_select_and_scatter_general(kiln_builder_t* builder, kiln_op_t operand,
                                             const kiln_computation_t* select,
                                             const int64_t* window_dimensions, const int64_t* window_strides,
                                             const int64_t* padding_low, const int64_t* padding_high,
                                             size_t rank, kiln_op_t source, kiln_op_t init_value,
                                             const kiln_computation_t* scatter) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op src = c.op(source, "source");
    Op init = c.op(init_value, "init_value");
    const kiln::Module* select_module = c.computation(select, "select");
    const kiln::Module* scatter_module = c.computation(scatter, "scatter");
    std::span<const int64_t> window = c.ints(window_dimensions, rank, "window_dimensions");
    std::vector<int64_t> strides = c.ints_or(window_strides, rank, 1);
    std::vector<std::pair<int64_t, int64_t>> pads = c.padding(padding_low, padding_high, rank);
    if (!c.ok()) return Op();
    return c.builder().SelectAndScatterWithGeneralPadding(x, *select_module, window, strides, pads, src, init,
                                                          *scatter_module);
  });
}

kiln_op_t kiln_op_map(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                      const kiln_computation_t* computation, const int64_t* dimensions,
                      size_t num_dimensions) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    const kiln::Module* fn = c.computation(computation, "computation");
    std::span<const int64_t> dims = c.ints(dimensions, num_dimensions, "dimensions");
    if (!c.ok()) return Op();
    return c.builder().Map(xs, *fn, dims);
  });
}

kiln_op_t kiln_op_sort(kiln_builder_t* builder, kiln_op_t operand) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    if (!c.ok()) return Op();
    return c.builder().Sort(x);
  });
}

kiln_op_t kiln_op_sort_variadic(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                const kiln_computation_t* comparator, int64_t dimension, int is_stable) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    const kiln::Module* less = c.computation(comparator, "comparator");
    if (!c.ok()) return Op();
    return c.builder().Sort(xs, *less, dimension, is_stable != 0);
  });
}

kiln_op_t kiln_op_all_reduce(kiln_builder_t* builder, kiln_op_t operand,
                             const kiln_computation_t* computation) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    const kiln::Module* reducer = c.computation(computation, "computation");
    if (!c.ok()) return Op();
    return c.builder().AllReduce(x, *reducer);
  });
}

kiln_op_t kiln_op_batch_norm_training(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale,
                                      kiln_op_t offset, float epsilon, int64_t feature_index) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op s = c.op(scale, "scale");
    Op o = c.op(offset, "offset");
    if (!c.ok()) return Op();
    return c.builder().BatchNormTraining(x, s, o, epsilon, feature_index);
  });
}

kiln_op_t kiln_op_batch_norm_inference(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale,
                                       kiln_op_t offset, kiln_op_t mean, kiln_op_t variance, float epsilon,
                                       int64_t feature_index) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op s = c.op(scale, "scale");
    Op o = c.op(offset, "offset");
    Op m = c.op(mean, "mean");
    Op v = c.op(variance, "variance");
    if (!c.ok()) return Op();
    return c.builder().BatchNormInference(x, s, o, m, v, epsilon, feature_index);
  });
}

kiln_op_t kiln_op_batch_norm_grad(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale, kiln_op_t mean,
                                  kiln_op_t variance, kiln_op_t grad_output, float epsilon,
                                  int64_t feature_index) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    Op s = c.op(scale, "scale");
    Op m = c.op(mean, "mean");
    Op v = c.op(variance, "variance");
    Op g = c.op(grad_output, "grad_output");
    if (!c.ok()) return Op();
    return c.builder().BatchNormGrad(x, s, m, v, g, epsilon, feature_index);
  });
}

kiln_op_t kiln_op_call(kiln_builder_t* builder, const kiln_computation_t* computation,
                       const kiln_op_t* operands, size_t num_operands) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    const kiln::Module* callee = c.computation(computation, "computation");
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    if (!c.ok()) return Op();
    return c.builder().Call(*callee, xs);
  });
}

kiln_op_t kiln_op_while(kiln_builder_t* builder, const kiln_computation_t* condition,
                        const kiln_computation_t* body, kiln_op_t init) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    const kiln::Module* cond = c.computation(condition, "condition");
    const kiln::Module* loop_body = c.computation(body, "body");
    Op state = c.op(init, "init");
    if (!c.ok()) return Op();
    return c.builder().While(*cond, *loop_body, state);
  });
}

kiln_op_t kiln_op_conditional(kiln_builder_t* builder, kiln_op_t predicate, kiln_op_t true_operand,
                              const kiln_computation_t* true_computation, kiln_op_t false_operand,
                              const kiln_computation_t* false_computation) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op pred = c.op(predicate, "predicate");
    Op t = c.op(true_operand, "true_operand");
    Op f = c.op(false_operand, "false_operand");
    const kiln::Module* on_true = c.computation(true_computation, "true_computation");
    const kiln::Module* on_false = c.computation(false_computation, "false_computation");
    if (!c.ok()) return Op();
    return c.builder().Conditional(pred, t, *on_true, f, *on_false);
  });
}

kiln_op_t kiln_op_conditional_indexed(kiln_builder_t* builder, kiln_op_t branch_index,
                                      const kiln_computation_t* const* branch_computations,
                                      const kiln_op_t* branch_operands, size_t num_branches) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op index = c.op(branch_index, "branch_index");
    std::vector<Op> operands = c.ops(branch_operands, num_branches, "branch_operands");
    std::vector<const kiln::Module*> branches;
    if (num_branches != 0 && branch_computations == nullptr) {
      c.Fail(kiln::capi::NullArgument(c.function(), "branch_computations"));
    }
    for (size_t i = 0; c.ok() && i < num_branches; ++i) {
      branches.push_back(c.computation(branch_computations[i], "branch_computations[i]"));
    }
    if (!c.ok()) return Op();
    return c.builder().Conditional(index, std::span<const kiln::Module* const>(branches), operands);
  });
}

}  // extern "C"
