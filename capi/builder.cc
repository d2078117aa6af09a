// The builder handle: creation, errors, shape queries, build, and the leaves
// (parameters, constants, iota).
#include <algorithm>
#include <string>

#include "capi/builder_internal.h"

namespace kiln::capi {

void OpContext::Fail(const Status& status) {
  if (!builder_->HasError()) builder_->shim_error = status;
}

Op OpContext::op(kiln_op_t handle, const char* name) {
  StatusOr<Op> op = builder_->Resolve(function_, std::string("operand '") + name + "'", handle);
  if (!op.ok()) {
    Fail(op.status());
    return Op();
  }
  return *op;
}

std::vector<Op> OpContext::ops(const kiln_op_t* handles, size_t count, const char* name) {
  std::vector<Op> result;
  if (count == 0) return result;
  if (handles == nullptr) {
    Fail(InvalidArgument(function_, ": argument '", name, "' is NULL but its count is ", count));
    return result;
  }
  // Bounded by the ops the builder holds: an op may repeat, but a count above
  // the table size is more often a wrong count than a real list.
  result.reserve(std::min(count, builder_->ops.size()));
  for (size_t i = 0; i < count; ++i) {
    StatusOr<Op> op =
        builder_->Resolve(function_, std::string(name) + "[" + std::to_string(i) + "]", handles[i]);
    if (!op.ok()) {
      Fail(op.status());
      return {};
    }
    result.push_back(*op);
  }
  return result;
}

std::span<const int64_t> OpContext::ints(const int64_t* values, size_t count, const char* name) {
  StatusOr<std::span<const int64_t>> list = IntList(function_, name, values, count);
  if (!list.ok()) {
    Fail(list.status());
    return {};
  }
  return *list;
}

std::vector<int64_t> OpContext::ints_or(const int64_t* values, size_t count, int64_t fill) {
  if (values == nullptr) return std::vector<int64_t>(count, fill);
  return std::vector<int64_t>(values, values + count);
}

std::vector<std::pair<int64_t, int64_t>> OpContext::padding(const int64_t* low, const int64_t* high,
                                                            size_t count) {
  std::vector<std::pair<int64_t, int64_t>> result(count, {0, 0});
  for (size_t i = 0; i < count; ++i) {
    if (low != nullptr) result[i].first = low[i];
    if (high != nullptr) result[i].second = high[i];
  }
  return result;
}

const Module* OpContext::computation(const kiln_computation_t* computation, const char* name) {
  if (computation == nullptr) {
    Fail(NullArgument(function_, name));
    return nullptr;
  }
  return computation->module.get();
}

Shape OpContext::shape(kiln_element_type_t type, const int64_t* dims, size_t rank,
                       const int64_t* minor_to_major) {
  StatusOr<Shape> shape = ArrayShape(function_, type, dims, rank, minor_to_major);
  if (!shape.ok()) {
    Fail(shape.status());
    return Shape();
  }
  return *std::move(shape);
}

ElementType OpContext::element_type(kiln_element_type_t type, const char* name) {
  if (type < KILN_TYPE_PRED || type > KILN_TYPE_C128) {
    Fail(InvalidArgument(function_, ": ", name, " ", type, " is not an array element type"));
    return ElementType::kInvalid;
  }
  return static_cast<ElementType>(type);
}

}  // namespace kiln::capi

using kiln::Op;
using kiln::Status;
using kiln::capi::BuildOp;
using kiln::capi::Guard;
using kiln::capi::OpContext;

extern "C" {

kiln_status_t* kiln_builder_create(const char* name, kiln_builder_t** out_builder) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(name);
    KILN_CAPI_CHECK_NOT_NULL(out_builder);
    *out_builder = new kiln_builder_t(name);
    return kiln::OkStatus();
  });
}

void kiln_builder_destroy(kiln_builder_t* builder) { delete builder; }

kiln_status_t* kiln_builder_first_error(const kiln_builder_t* builder) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(builder);
    return builder->FirstError();
  });
}

kiln_status_t* kiln_builder_get_shape(const kiln_builder_t* builder, kiln_op_t op,
                                      kiln_element_type_t* out_type, int64_t* dims, size_t dims_capacity,
                                      size_t* out_rank) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(builder);
    KILN_ASSIGN_OR_RETURN(Op resolved, builder->Resolve(kiln_capi_function, "argument 'op'", op));
    KILN_ASSIGN_OR_RETURN(kiln::Shape shape, builder->builder.GetShape(resolved));
    const std::vector<int64_t> no_dims;
    const std::vector<int64_t>& shape_dims = shape.IsArray() ? shape.dimensions() : no_dims;
    if (dims_capacity < shape_dims.size() && dims_capacity != 0) {
      return kiln::InvalidArgument(kiln_capi_function, ": dims_capacity ", dims_capacity,
                                   " is smaller than the rank ", shape_dims.size());
    }
    if (dims_capacity != 0) {
      KILN_CAPI_CHECK_NOT_NULL(dims);
      std::copy(shape_dims.begin(), shape_dims.end(), dims);
    }
    if (out_type != nullptr) *out_type = static_cast<kiln_element_type_t>(shape.element_type());
    if (out_rank != nullptr) *out_rank = shape_dims.size();
    return kiln::OkStatus();
  });
}

kiln_status_t* kiln_builder_build(kiln_builder_t* builder, kiln_op_t root,
                                  kiln_computation_t** out_computation) {
  return Guard(__func__, [&, kiln_capi_function = __func__]() -> Status {
    KILN_CAPI_CHECK_NOT_NULL(builder);
    KILN_CAPI_CHECK_NOT_NULL(out_computation);
    KILN_RETURN_IF_ERROR(builder->FirstError());
    Op root_op;
    if (root != KILN_OP_INVALID) {
      KILN_ASSIGN_OR_RETURN(root_op, builder->Resolve(kiln_capi_function, "argument 'root'", root));
    }
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<kiln::Module> module, builder->builder.Build(root_op));
    auto computation = std::make_unique<kiln_computation_t>();
    computation->module = std::move(module);
    *out_computation = computation.release();
    return kiln::OkStatus();
  });
}

kiln_op_t kiln_op_parameter(kiln_builder_t* builder, int64_t number, kiln_element_type_t type,
                            const int64_t* dims, size_t rank, const int64_t* minor_to_major,
                            const char* name) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    kiln::Shape shape = c.shape(type, dims, rank, minor_to_major);
    if (!c.ok()) return Op();
    // Named like XLA's unnamed parameters; built with append because GCC 12
    // reports a false -Wrestrict on `"p" + std::string`.
    std::string parameter_name;
    if (name != nullptr) {
      parameter_name = name;
    } else {
      parameter_name.append("p").append(std::to_string(number));
    }
    return c.builder().Parameter(number, shape, parameter_name);
  });
}

kiln_op_t kiln_op_constant(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims,
                           size_t rank, const void* data, size_t byte_size) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    kiln::StatusOr<kiln::Literal> literal = kiln::capi::LiteralFromHost(c.function(), shape, data, byte_size);
    if (!literal.ok()) {
      c.Fail(literal.status());
      return Op();
    }
    return c.builder().ConstantLiteral(*literal);
  });
}

kiln_op_t kiln_op_constant_f32(kiln_builder_t* builder, float value) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().ConstantR0<float>(value); });
}
kiln_op_t kiln_op_constant_f64(kiln_builder_t* builder, double value) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().ConstantR0<double>(value); });
}
kiln_op_t kiln_op_constant_s32(kiln_builder_t* builder, int32_t value) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().ConstantR0<int32_t>(value); });
}
kiln_op_t kiln_op_constant_s64(kiln_builder_t* builder, int64_t value) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().ConstantR0<int64_t>(value); });
}
kiln_op_t kiln_op_constant_u32(kiln_builder_t* builder, uint32_t value) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().ConstantR0<uint32_t>(value); });
}
kiln_op_t kiln_op_constant_pred(kiln_builder_t* builder, int value) {
  return BuildOp(builder, __func__, [&](OpContext& c) { return c.builder().ConstantR0<bool>(value != 0); });
}

kiln_op_t kiln_op_iota(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims, size_t rank,
                       int64_t iota_dimension) {
  return BuildOp(builder, __func__, [&](OpContext& c) {
    kiln::Shape shape = c.shape(type, dims, rank);
    if (!c.ok()) return Op();
    return c.builder().Iota(shape, iota_dimension);
  });
}

}  // extern "C"
