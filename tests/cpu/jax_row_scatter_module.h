// JAX's x.at[i].add(u) as jax.jit exports it: the indices wrapped first,
// select(i < 0, i + N, i), reshaped to [U, 1], then a scatter adding rows of
// f32. The cpu backend's row scatter takes the wrap over when N is the
// table's row count (RowScatterPlan::wrap_negative_indices).
#pragma once

#include <cstdint>
#include <string>

namespace kiln::cpu::testing {

// `updates` rows of `width` f32 added into `rows` rows, the indices (of
// `index_type`) wrapped by `wrap_by` (JAX's N: the row count).
inline std::string JaxScatterAddModule(const std::string& index_type, int64_t rows, int64_t wrap_by,
                                       int64_t width, int64_t updates) {
  const std::string n = std::to_string(updates);
  const std::string table = "f32[" + std::to_string(rows) + "," + std::to_string(width) + "]";
  const std::string index = index_type + "[" + n + "]";
  return "HloModule jax_scatter_add\ncombine {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  x = " +
         table + " parameter(0)\n  i = " + index + " parameter(1)\n  u = f32[" + n + "," +
         std::to_string(width) + "] parameter(2)\n  zero = " + index_type +
         "[] constant(0)\n  zeros = " + index + " broadcast(zero), dimensions={}\n  negative = pred[" + n +
         "] compare(i, zeros), direction=LT\n  rows = " + index_type + "[] constant(" +
         std::to_string(wrap_by) + ")\n  all_rows = " + index +
         " broadcast(rows), dimensions={}\n  shifted = " + index + " add(i, all_rows)\n  wrapped = " + index +
         " select(negative, shifted, i)\n  column = " + index_type + "[" + n +
         ",1] reshape(wrapped)\n  ROOT s = " + table +
         " scatter(x, column, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

}  // namespace kiln::cpu::testing
