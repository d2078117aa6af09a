// Random numbers, host communication (infeed/outfeed), custom calls, tokens.
#include "capi/builder_internal.h"

using kiln::Op;
using kiln::capi::BuildOp;
using kiln::capi::OpContext;

extern "C" {

kiln_op_t kiln_op_rng_uniform(kiln_builder_t* builder, kiln_op_t a, kiln_op_t b, kiln_element_type_t type,
                              const int64_t* dims, size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op low = c.op(a, "a");
    Op high = c.op(b, "b");
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    return c.builder().RngUniform(low, high, shape);
  });
}

kiln_op_t kiln_op_rng_normal(kiln_builder_t* builder, kiln_op_t mu, kiln_op_t sigma, kiln_element_type_t type,
                             const int64_t* dims, size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op mean = c.op(mu, "mu");
    Op deviation = c.op(sigma, "sigma");
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    return c.builder().RngNormal(mean, deviation, shape);
  });
}

kiln_op_t kiln_op_rng_bernoulli(kiln_builder_t* builder, kiln_op_t p, kiln_element_type_t type,
                                const int64_t* dims, size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op probability = c.op(p, "p");
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    return c.builder().RngBernoulli(probability, shape);
  });
}

kiln_op_t kiln_op_rng_bit_generator(kiln_builder_t* builder, kiln_rng_algorithm_t algorithm,
                                    kiln_op_t initial_state, kiln_element_type_t type, const int64_t* dims,
                                    size_t rank) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op state = c.op(initial_state, "initial_state");
    kiln::Shape shape = c.shape(type, dims, rank);
    if (algorithm < KILN_RNG_DEFAULT || algorithm > KILN_RNG_PHILOX) {
      c.Fail(kiln::InvalidArgument(c.function(), ": algorithm ", algorithm, " is not a KILN_RNG_* value"));
    }
    if (!c.ok()) return Op();
    return c.builder().RngBitGenerator(static_cast<kiln::RngAlgorithm>(algorithm), state, shape);
  });
}

kiln_op_t kiln_op_infeed(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims, size_t rank,
                         const char* config) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    return c.builder().Infeed(shape, config != nullptr ? config : "");
  });
}

kiln_op_t kiln_op_outfeed(kiln_builder_t* builder, kiln_op_t operand, const char* config) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    Op x = c.op(operand, "operand");
    if (!c.ok()) return Op();
    return c.builder().Outfeed(x, config != nullptr ? config : "");
  });
}

kiln_op_t kiln_op_custom_call(kiln_builder_t* builder, const char* target, const kiln_op_t* operands,
                              size_t num_operands, kiln_element_type_t type, const int64_t* dims, size_t rank,
                              const char* opaque, int has_side_effect) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    if (target == nullptr) c.Fail(kiln::capi::NullArgument(c.function(), "target"));
    std::vector<Op> xs = c.ops(operands, num_operands, "operands");
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    return c.builder().CustomCall(target, xs, shape, opaque != nullptr ? opaque : "", has_side_effect != 0);
  });
}

kiln_op_t kiln_op_after_all(kiln_builder_t* builder, const kiln_op_t* tokens, size_t num_tokens) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    std::vector<Op> xs = c.ops(tokens, num_tokens, "tokens");
    if (!c.ok()) return Op();
    return c.builder().AfterAll(xs);
  });
}

kiln_op_t kiln_op_create_token(kiln_builder_t* builder) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().CreateToken(); });
}

}  // extern "C"
