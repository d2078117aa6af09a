// How the C builder functions turn C arguments into core builder calls: an
// OpContext resolves handles, lists and computations, recording the first
// problem as the builder's sticky error; BuildOp is the exception barrier.
#pragma once

#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "capi/internal.h"
#include "capi/struct_versions.h"

namespace kiln::capi {

class OpContext {
 public:
  OpContext(kiln_builder_t* builder, const char* function) : builder_(builder), function_(function) {}

  Builder& builder() { return builder_->builder; }
  const char* function() const { return function_; }
  bool ok() const { return !builder_->HasError(); }
  // Records `status` as the builder's first error unless there already is one.
  void Fail(const Status& status);

  Op op(kiln_op_t handle, const char* name);
  std::vector<Op> ops(const kiln_op_t* handles, size_t count, const char* name);
  std::span<const int64_t> ints(const int64_t* values, size_t count, const char* name);
  // `count` entries of `values`, or `count` copies of `fill` when `values` is NULL.
  std::vector<int64_t> ints_or(const int64_t* values, size_t count, int64_t fill);
  // (low, high) pairs from two optional arrays of `count` entries.
  std::vector<std::pair<int64_t, int64_t>> padding(const int64_t* low, const int64_t* high, size_t count);
  const Module* computation(const kiln_computation_t* computation, const char* name);
  Shape shape(kiln_element_type_t type, const int64_t* dims, size_t rank,
              const int64_t* minor_to_major = nullptr);
  ElementType element_type(kiln_element_type_t type, const char* name);
  // The caller's dimension-numbers struct read as a whole one of this
  // library's version (struct_versions.h); nullopt, with the error recorded,
  // when it is NULL or older than the struct's first version.
  template <typename T>
  std::optional<T> read_struct(const T* pointer, const char* name) {
    if (pointer == nullptr) {
      Fail(NullArgument(function_, name));
      return std::nullopt;
    }
    StatusOr<T> whole = ReadStruct(function_, pointer);
    if (!whole.ok()) {
      Fail(whole.status());
      return std::nullopt;
    }
    return *whole;
  }

 private:
  kiln_builder_t* builder_;
  const char* function_;
};

// Runs `make(OpContext&) -> Op` and returns the new op's handle, or
// KILN_OP_INVALID when the builder has (or now gets) an error.
template <typename Make>
kiln_op_t BuildOp(kiln_builder_t* builder, const char* function, Make&& make) noexcept {
  if (builder == nullptr || builder->HasError()) return KILN_OP_INVALID;
  try {
    OpContext context(builder, function);
    Op op = make(context);
    if (builder->HasError() || !op.valid()) {
      if (!builder->HasError())
        builder->shim_error = Internal(function, ": the builder returned an invalid op");
      return KILN_OP_INVALID;
    }
    if (builder->ops.size() >= kMaxOpsPerBuilder) {
      builder->shim_error =
          ResourceExhausted(function, ": builder '", builder->name, "' already holds the most ops ",
                            "one builder can (", kMaxOpsPerBuilder, ")");
      return KILN_OP_INVALID;
    }
    builder->ops.push_back(op);
    return OpHandle(builder->tag, builder->ops.size() - 1);
  } catch (...) {
    // Allocation failure is the only way here; keep the builder usable for
    // reporting by not allocating a message when even that may fail.
    try {
      if (!builder->HasError()) builder->shim_error = ResourceExhausted(function, ": out of memory");
    } catch (...) {
    }
    return KILN_OP_INVALID;
  }
}

// True for the two padding modes; otherwise records INVALID_ARGUMENT naming
// the value (convolutions and pooling windows take the same two).
inline bool ValidPadding(OpContext& c, kiln_padding_t padding) {
  if (padding == KILN_PADDING_VALID || padding == KILN_PADDING_SAME) return true;
  c.Fail(InvalidArgument(c.function(), ": padding ", padding, " is not KILN_PADDING_VALID or _SAME"));
  return false;
}

}  // namespace kiln::capi
