#include "backends/cpu/row_scatter_thunk.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "backends/cpu/row_scatter_rows.h"
#include "backends/cpu/row_scatter_segments.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

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
    case ElementType::kBF16:
    case ElementType::kF16:
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

// Updates a thread's share of the rows should see at least to be worth a
// thread: each thread reads every index, and below this the pool's start
// costs more than the updates a second thread takes over.
constexpr int64_t kRowScatterUpdatesPerThread = 16 * 1024;
// Destination bytes per thread. Each thread streams all the indices and, in
// effect, all the update rows: the hardware prefetcher fetches the rows
// between its own too. What a second thread takes over is only the random
// misses to its half of the table, and the copy of it; while the table stays
// in L3 (32 MiB, shared, on the machines measured) that saves nothing. On
// AMD EPYC, for 1M updates of 64 bytes into 100k rows (6.4 MB), a thread's
// half of the rows took as long as all of them on one thread (6.5 vs 6.4 ms
// of CPU time), so two threads were slower; into 100k rows of 128 bytes
// (12.8 MB), half took 6.8 ms against 10.7. Adds of many updates into such
// tables are split along the updates instead (row_scatter_segments.h).
constexpr int64_t kRowScatterTableBytesPerThread = 8 << 20;

// `instruction` as the one integer it holds: a constant of one element, or
// a broadcast of one.
std::optional<int64_t> RowScatterIndexConstant(const Instruction& instruction) {
  const Instruction* constant = &instruction;
  if (constant->opcode == Opcode::kBroadcast && constant->operands.size() == 1)
    constant = constant->operand(0);
  if (constant->opcode != Opcode::kConstant || !constant->literal.has_value() ||
      constant->literal->element_count() != 1 || !IsIntegral(constant->shape.element_type()))
    return std::nullopt;
  return constant->literal->GetAsInt64(0);
}

}  // namespace

bool WrapsNegativeRowScatterIndices(const Computation& kernel, const RowScatterPlan& plan) {
  if (!IsSignedIntegral(plan.index_type) || kernel.parameters().size() != 1 || kernel.root() == nullptr)
    return false;
  const Instruction* index = kernel.parameters()[0];
  const Instruction* root = kernel.root();
  // The thunk reads the indices in their linear order, which a reshape keeps.
  for (const Instruction* array : {index, root}) {
    if (!array->shape.IsArray() || array->shape.element_type() != plan.index_type ||
        array->shape.element_count() != plan.updates)
      return false;
  }
  if (root->opcode == Opcode::kReshape) root = root->operand(0);
  if (root->opcode != Opcode::kSelect || root->operands.size() != 3 || root->operand(2) != index)
    return false;
  // i < 0 (or 0 > i), as signed integers.
  const Instruction* negative = root->operand(0);
  if (negative->opcode != Opcode::kCompare || negative->operands.size() != 2 ||
      (negative->attrs.comparison_type != ComparisonType::kDefault &&
       negative->attrs.comparison_type != ComparisonType::kSigned))
    return false;
  const ComparisonDirection direction = negative->attrs.comparison_direction;
  const bool index_first = negative->operand(0) == index;
  const Instruction* zero = negative->operand(index_first ? 1 : 0);
  if (negative->operand(index_first ? 0 : 1) != index ||
      direction != (index_first ? ComparisonDirection::kLt : ComparisonDirection::kGt) ||
      RowScatterIndexConstant(*zero) != 0)
    return false;
  // i + rows, either way round.
  const Instruction* wrapped = root->operand(1);
  if (wrapped->opcode != Opcode::kAdd || wrapped->operands.size() != 2) return false;
  const Instruction* rows = wrapped->operand(wrapped->operand(0) == index ? 1 : 0);
  return (wrapped->operand(0) == index || wrapped->operand(1) == index) &&
         RowScatterIndexConstant(*rows) == plan.rows;
}

int RowScatterThreads(const RowScatterPlan& plan, int pool_threads) {
  const int64_t row_bytes = plan.row_elements * ByteWidth(plan.type);
  const int64_t by_updates = std::max<int64_t>(plan.updates / kRowScatterUpdatesPerThread, 1);
  const int64_t by_table = std::max<int64_t>(plan.rows * row_bytes / kRowScatterTableBytesPerThread, 1);
  const int64_t threads = std::min({by_updates, by_table, plan.rows});
  return static_cast<int>(std::clamp<int64_t>(threads, 1, pool_threads));
}

namespace {

// Each task owns an equal stretch of the rows: it copies the operand's rows
// into the result (unless they are one buffer) and applies, in update order,
// the updates that land in them.
void RunRowScatter(const RowScatterPlan& plan, const void* operand_rows, const RowScatterArrays& arrays,
                   const ExecutionContext& context) {
  const auto* operand = static_cast<const std::byte*>(operand_rows);
  auto* output = static_cast<std::byte*>(arrays.output);
  const int64_t row_bytes = plan.row_elements * ByteWidth(plan.type);
  const int tasks = RowScatterThreads(plan, context.pool == nullptr ? 1 : context.pool->num_threads());
  auto run_tasks = [&](int64_t first_task, int64_t last_task) {
    for (int64_t task = first_task; task < last_task; ++task) {
      const int64_t row_begin = plan.rows * task / tasks;
      const int64_t row_end = plan.rows * (task + 1) / tasks;
      if (output != operand && row_end > row_begin) {
        std::memcpy(output + row_begin * row_bytes, operand + row_begin * row_bytes,
                    static_cast<size_t>((row_end - row_begin) * row_bytes));
      }
      ApplyRowScatterUpdates(plan, arrays, row_begin, row_end);
    }
  };
  if (tasks == 1) {
    run_tasks(0, 1);
  } else {
    context.pool->ParallelFor(tasks, 1, run_tasks);
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

RowScatterThunk::RowScatterThunk(int operand, int indices, int updates, int output, int scratch,
                                 RowScatterPlan plan)
    : Thunk({operand, indices, updates},
            scratch < 0 ? std::vector<int>{output} : std::vector<int>{output, scratch}),
      plan_(plan),
      scratch_(scratch) {}

Status RowScatterThunk::Run(ExecutionContext& context) const {
  if (!IsRowType(plan_.type) || !IsIndexType(plan_.index_type))
    return Internal("cpu: row scatter of ", ElementTypeName(plan_.type), " was not planned");
  const bool segmented = RowScatterSegments(plan_) > 1;
  if (segmented != (scratch_ >= 0))
    return Internal("cpu: row scatter ", name(), "'s scratch slot does not match its segments");
  const RowScatterArrays arrays{context.slots[inputs_[1]], context.slots[inputs_[2]],
                                context.slots[outputs_[0]]};
  if (segmented) {
    RunSegmentedRowScatter(plan_, context.slots[inputs_[0]], arrays, context.slots[scratch_], context.pool);
  } else {
    RunRowScatter(plan_, context.slots[inputs_[0]], arrays, context);
  }
  return OkStatus();
}

}  // namespace kiln::cpu
