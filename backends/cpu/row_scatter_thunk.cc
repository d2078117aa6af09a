#include "backends/cpu/row_scatter_thunk.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Bytes of destination rows per part: a quarter of a core's L2 on the
// machines measured, so that the part stays cached while the updates
// stream past it.
constexpr int64_t kPartBytes = 512 * 1024;
// Updates a sorting task covers at least.
constexpr int64_t kUpdatesPerChunk = 16 * 1024;

std::optional<RowScatterCombiner> CombinerOf(const Computation& combiner) {
  const Instruction* root = combiner.root();
  if (root == nullptr || combiner.parameters().size() != 2) return std::nullopt;
  if (root->opcode == Opcode::kParameter && root->attrs.parameter_number == 1)
    return RowScatterCombiner::kAssign;
  if (root->opcode != Opcode::kAdd || root->operands.size() != 2) return std::nullopt;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  // Addition is commutative in IEEE arithmetic, so either order of the two
  // parameters is the same combiner.
  if (a->opcode != Opcode::kParameter || b->opcode != Opcode::kParameter || a == b) return std::nullopt;
  return RowScatterCombiner::kAdd;
}

bool IsRowType(ElementType type) {
  switch (type) {
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU32:
    case ElementType::kU64: return true;
    default: return false;
  }
}

bool IsIndexType(ElementType type) {
  return type == ElementType::kS32 || type == ElementType::kS64 || type == ElementType::kU32 ||
         type == ElementType::kU64;
}

// Integers add with wrap-around, as XLA's do; done on the unsigned type so
// that overflow is defined.
template <typename T>
void AddRow(T* __restrict destination, const T* __restrict update, int64_t count) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (int64_t j = 0; j < count; ++j)
      destination[j] = static_cast<T>(static_cast<U>(destination[j]) + static_cast<U>(update[j]));
  } else {
    for (int64_t j = 0; j < count; ++j) destination[j] += update[j];
  }
}

template <typename T>
void CombineRow(const RowScatterPlan& plan, T* destination, const T* update) {
  if (plan.combiner == RowScatterCombiner::kAdd) {
    AddRow(destination, update, plan.row_elements);
  } else {
    std::memcpy(destination, update, static_cast<size_t>(plan.row_elements) * sizeof(T));
  }
}

template <typename T>
void CopyRows(const RowScatterPlan& plan, const T* operand, T* output, int64_t begin, int64_t end) {
  const int64_t width = plan.row_elements;
  if (output != operand && end > begin) {
    std::memcpy(output + begin * width, operand + begin * width,
                static_cast<size_t>((end - begin) * width) * sizeof(T));
  }
}

// The row an index names, as unsigned: a negative index is huge, so one
// comparison with the row count finds every index out of range.
template <typename Index>
uint64_t RowOf(Index index) {
  return static_cast<uint64_t>(static_cast<int64_t>(index));
}

// Rows split into parts of 2^shift rows (the last may be shorter), small
// enough that a part's rows stay in a core's cache while its updates land;
// an index out of range belongs to part `parts`, which nobody applies.
struct RowParts {
  uint64_t rows = 0;
  int shift = 0;
  int64_t parts = 1;

  RowParts(int64_t row_count, int64_t row_bytes) : rows(static_cast<uint64_t>(row_count)) {
    while (shift < 40 && (int64_t{2} << shift) * std::max<int64_t>(row_bytes, 1) <= kPartBytes) ++shift;
    parts = static_cast<int64_t>((rows + (uint64_t{1} << shift) - 1) >> shift);
  }
  int64_t PartOf(uint64_t row) const { return row < rows ? static_cast<int64_t>(row >> shift) : parts; }
  int64_t Begin(int64_t part) const { return std::min<int64_t>(part << shift, static_cast<int64_t>(rows)); }
};

// `body` over [0, tasks) on the pool, one task at a time.
void ParallelFor(const ExecutionContext& context, int64_t tasks,
                 const std::function<void(int64_t, int64_t)>& body) {
  if (tasks == 1 || context.pool == nullptr || context.pool->num_threads() == 1) {
    body(0, tasks);
  } else {
    context.pool->ParallelFor(tasks, 1, body);
  }
}

template <typename T, typename Index>
void RunScatter(const RowScatterPlan& plan, void* const* buffers, const ExecutionContext& context) {
  const T* operand = static_cast<const T*>(buffers[0]);
  const Index* indices = static_cast<const Index*>(buffers[1]);
  const T* updates = static_cast<const T*>(buffers[2]);
  T* output = static_cast<T*>(buffers[3]);
  const int64_t width = plan.row_elements;
  const RowParts split(plan.rows, width * static_cast<int64_t>(sizeof(T)));
  const int64_t parts = split.parts;
  const int threads = context.pool == nullptr ? 1 : context.pool->num_threads();
  // One thread applies the updates as they come: sorting them first costs
  // more than the cache misses it saves.
  if (parts == 1 || threads == 1 || plan.updates > int64_t{UINT32_MAX}) {
    CopyRows(plan, operand, output, 0, plan.rows);
    for (int64_t u = 0; u < plan.updates; ++u) {
      const uint64_t row = RowOf(indices[u]);
      if (row < static_cast<uint64_t>(plan.rows))
        CombineRow(plan, output + static_cast<int64_t>(row) * width, updates + u * width);
    }
    return;
  }
  // Otherwise two passes, each over the threads. First each chunk of the
  // updates sorts its update numbers by destination part (stably, in the chunk's
  // own stretch of `order`); then each part applies, chunk after chunk, the
  // updates sorted to it. Each row so gets its updates in update order, and
  // no thread scans updates that are not its own.
  const int64_t chunks = std::clamp<int64_t>(plan.updates / kUpdatesPerChunk, 1, threads);
  auto* order = static_cast<uint32_t*>(buffers[4]);
  std::vector<int64_t> starts(static_cast<size_t>(chunks * (parts + 2)), 0);
  auto start_of = [&](int64_t chunk, int64_t part) -> int64_t& {
    return starts[static_cast<size_t>(chunk * (parts + 2) + part)];
  };
  ParallelFor(context, chunks, [&](int64_t first_chunk, int64_t last_chunk) {
    for (int64_t chunk = first_chunk; chunk < last_chunk; ++chunk) {
      const int64_t begin = plan.updates * chunk / chunks;
      const int64_t end = plan.updates * (chunk + 1) / chunks;
      std::vector<int64_t> next(static_cast<size_t>(parts + 1), 0);
      for (int64_t u = begin; u < end; ++u) ++next[static_cast<size_t>(split.PartOf(RowOf(indices[u])))];
      int64_t at = begin;
      for (int64_t p = 0; p <= parts; ++p) {
        start_of(chunk, p) = at;
        const int64_t count = next[static_cast<size_t>(p)];
        next[static_cast<size_t>(p)] = at;
        at += count;
      }
      start_of(chunk, parts + 1) = at;
      for (int64_t u = begin; u < end; ++u) {
        const int64_t part = split.PartOf(RowOf(indices[u]));
        order[next[static_cast<size_t>(part)]++] = static_cast<uint32_t>(u);
      }
    }
  });
  ParallelFor(context, parts, [&](int64_t first_part, int64_t last_part) {
    for (int64_t part = first_part; part < last_part; ++part) {
      CopyRows(plan, operand, output, split.Begin(part), split.Begin(part + 1));
      for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        const int64_t end = start_of(chunk, part + 1);
        for (int64_t k = start_of(chunk, part); k < end; ++k) {
          const int64_t u = order[k];
          CombineRow(plan, output + static_cast<int64_t>(RowOf(indices[u])) * width, updates + u * width);
        }
      }
    }
  });
}

template <typename T>
void DispatchIndex(const RowScatterPlan& plan, void* const* buffers, const ExecutionContext& context) {
  switch (plan.index_type) {
    case ElementType::kS32: RunScatter<T, int32_t>(plan, buffers, context); return;
    case ElementType::kS64: RunScatter<T, int64_t>(plan, buffers, context); return;
    case ElementType::kU32: RunScatter<T, uint32_t>(plan, buffers, context); return;
    default: RunScatter<T, uint64_t>(plan, buffers, context); return;
  }
}

}  // namespace

std::optional<RowScatterPlan> PlanRowScatter(const Instruction& scatter) {
  if (scatter.opcode != Opcode::kScatter || scatter.operands.size() != 3 || scatter.called.size() != 1 ||
      !scatter.shape.IsArray())
    return std::nullopt;
  const Shape& operand = scatter.operand(0)->shape;
  const Shape& indices = scatter.operand(1)->shape;
  const Shape& updates = scatter.operand(2)->shape;
  if (!operand.IsArray() || !indices.IsArray() || !updates.IsArray() || scatter.shape != operand ||
      operand.rank() < 1 || updates.element_type() != operand.element_type())
    return std::nullopt;
  const ScatterDimensionNumbers& numbers = scatter.attrs.scatter;
  if (numbers.index_vector_dim != 1 || numbers.inserted_window_dims != std::vector<int64_t>{0} ||
      numbers.scatter_dims_to_operand_dims != std::vector<int64_t>{0} ||
      !numbers.input_batching_dims.empty() || !numbers.scatter_indices_batching_dims.empty())
    return std::nullopt;
  // Indices [U] (the index vector implicit) or [U, 1].
  if (indices.rank() == 2 ? indices.dimensions(1) != 1 : indices.rank() != 1) return std::nullopt;
  const int64_t count = indices.dimensions(0);
  if (updates.rank() != operand.rank() || updates.dimensions(0) != count) return std::nullopt;
  RowScatterPlan plan;
  for (int64_t d = 1; d < operand.rank(); ++d) {
    if (numbers.update_window_dims.size() != static_cast<size_t>(operand.rank() - 1) ||
        numbers.update_window_dims[static_cast<size_t>(d - 1)] != d ||
        updates.dimensions(d) != operand.dimensions(d))
      return std::nullopt;
    plan.row_elements *= operand.dimensions(d);
  }
  if (operand.rank() == 1 && !numbers.update_window_dims.empty()) return std::nullopt;
  if (!IsRowType(operand.element_type()) || !IsIndexType(indices.element_type())) return std::nullopt;
  const std::optional<RowScatterCombiner> combiner = CombinerOf(*scatter.called[0]);
  if (!combiner.has_value()) return std::nullopt;
  plan.type = operand.element_type();
  plan.index_type = indices.element_type();
  plan.combiner = *combiner;
  plan.rows = operand.dimensions(0);
  plan.updates = count;
  return plan;
}

Status RowScatterThunk::Run(ExecutionContext& context) const {
  void* buffers[5];
  for (size_t i = 0; i < 3; ++i) buffers[i] = context.slots[inputs_[i]];
  buffers[3] = context.slots[outputs_[0]];
  buffers[4] = context.slots[outputs_[1]];
  switch (plan_.type) {
    case ElementType::kF32: DispatchIndex<float>(plan_, buffers, context); break;
    case ElementType::kF64: DispatchIndex<double>(plan_, buffers, context); break;
    case ElementType::kS32: DispatchIndex<int32_t>(plan_, buffers, context); break;
    case ElementType::kS64: DispatchIndex<int64_t>(plan_, buffers, context); break;
    case ElementType::kU32: DispatchIndex<uint32_t>(plan_, buffers, context); break;
    case ElementType::kU64: DispatchIndex<uint64_t>(plan_, buffers, context); break;
    default: return Internal("cpu: row scatter of ", ElementTypeName(plan_.type), " was not planned");
  }
  return OkStatus();
}

}  // namespace kiln::cpu
