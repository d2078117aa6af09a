#include "backends/vulkan/library_sort.h"

#include <limits>

#include "backends/vulkan/glsl_serial_sort.h"
#include "core/int_math.h"
#include "core/lowering/bitonic_sort.h"
#include "core/lowering/sort_key_comparator.h"

namespace kiln::vulkan {
namespace {

// The shader variant for keys of `key_bytes`, with a passenger or not;
// nullopt for other widths and for narrow keys the device cannot store.
std::optional<LibraryShader> SortShaderFor(int key_bytes, bool passenger, const ShaderFeatures& features) {
  switch (key_bytes) {
    case 1:
      if (!features.storage8) return std::nullopt;
      return passenger ? LibraryShader::kBitonicSortPassenger8 : LibraryShader::kBitonicSort8;
    case 2:
      if (!features.storage16) return std::nullopt;
      return passenger ? LibraryShader::kBitonicSortPassenger16 : LibraryShader::kBitonicSort16;
    case 4: return passenger ? LibraryShader::kBitonicSortPassenger32 : LibraryShader::kBitonicSort32;
    case 8: return passenger ? LibraryShader::kBitonicSortPassenger64 : LibraryShader::kBitonicSort64;
    default: return std::nullopt;
  }
}

// The shader's order for a matched comparator; nullopt for the partial
// float order (NaNs compare unordered: no integer order gives the merge
// sort's result).
std::optional<SortKeyOrder> ShaderOrder(const SortKeyPlan& key) {
  switch (key.order) {
    case SortKeyPlan::Order::kInteger:
      return IsSignedIntegral(key.type) ? SortKeyOrder::kSigned : SortKeyOrder::kUnsigned;
    case SortKeyPlan::Order::kTotalOrder: return SortKeyOrder::kTotal;
    case SortKeyPlan::Order::kCanonicalTotalOrder: return SortKeyOrder::kCanonicalTotal;
    case SortKeyPlan::Order::kFloat: return std::nullopt;
  }
  return std::nullopt;
}

// Shared memory per element number of a tile pass: the number and its
// encoded key (64-bit keys as two words).
int64_t SharedBytesPerElement(int key_bytes) { return 4 + (key_bytes == 8 ? 8 : 4); }

}  // namespace

std::vector<uint32_t> SortKeyShape::Words() const {
  return {rows,
          row_length,
          padded_log2,
          tile,
          inner,
          outputs,
          static_cast<uint32_t>(order),
          descending,
          exponent,
          static_cast<uint32_t>(nan_bits),
          static_cast<uint32_t>(nan_bits >> 32),
          static_cast<uint32_t>(zero_bits),
          static_cast<uint32_t>(zero_bits >> 32),
          passenger_words};
}

std::vector<uint32_t> SortPlan::specialization() const {
  std::vector<uint32_t> constants{static_cast<uint32_t>(layout.chunk)};
  const std::vector<uint32_t> words = shape.Words();
  constants.insert(constants.end(), words.begin(), words.end());
  return constants;
}

std::optional<SortPlan> PlanSort(const Instruction& sort, const ShaderFeatures& features) {
  if (sort.opcode != Opcode::kSort || sort.operands.empty() || sort.operands.size() > 2) return std::nullopt;
  const std::optional<SortKeyPlan> key = MatchSortKeyComparator(sort);
  if (!key.has_value() || key->operand != 0) return std::nullopt;
  const std::optional<SortKeyOrder> order = ShaderOrder(*key);
  if (!order.has_value()) return std::nullopt;
  const Shape& shape = sort.operand(0)->shape;
  if (!shape.IsArray() || shape.element_type() != key->type) return std::nullopt;
  for (const Instruction* operand : sort.operands)
    if (!operand->shape.IsArray() || operand->shape.dimensions() != shape.dimensions()) return std::nullopt;
  const bool passenger = sort.operands.size() == 2;
  const int passenger_bytes = passenger ? ByteWidth(sort.operand(1)->shape.element_type()) : 0;
  if (passenger && passenger_bytes != 4 && passenger_bytes != 8) return std::nullopt;
  const int key_bytes = ByteWidth(key->type);
  const std::optional<LibraryShader> shader = SortShaderFor(key_bytes, passenger, features);
  if (!shader.has_value()) return std::nullopt;

  const int64_t rank = shape.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank == 0) dimension = 0;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) return std::nullopt;
  const int64_t length = rank == 0 ? 1 : shape.dimensions(dimension);
  int64_t inner = 1;
  for (int64_t d = dimension + 1; d < rank; ++d) inner *= shape.dimensions(d);
  const int64_t rows = length == 0 ? 0 : shape.element_count() / length;
  // The rows a CPU device merge sorts one invocation each stay generated
  // (the scratch the lowering gives the kernel is theirs).
  if (SortsRowsSerially(features, rows, length)) return std::nullopt;
  // Places, and the passenger's words, as 32-bit unsigned indices in the
  // shader; the generated sort's limit.
  const int64_t padded = BitonicPaddedLength(length);
  constexpr int64_t kMaxPlaces = std::numeric_limits<int32_t>::max();
  if (rows * padded > kMaxPlaces || shape.element_count() * (passenger_bytes / 4) > kMaxPlaces ||
      shape.element_count() > kMaxPlaces)
    return std::nullopt;

  SortPlan plan;
  plan.shader = *shader;
  plan.operands = static_cast<int>(sort.operands.size());
  plan.layout =
      PlanBitonicSort(rows, length, shape.element_count(), features, SharedBytesPerElement(key_bytes));
  SortKeyShape& s = plan.shape;
  s.rows = static_cast<uint32_t>(rows);
  s.row_length = static_cast<uint32_t>(length);
  s.padded_log2 = static_cast<uint32_t>(CeilLog2(padded));
  s.tile = static_cast<uint32_t>(plan.layout.tile);
  s.inner = static_cast<uint32_t>(inner);
  s.outputs = static_cast<uint32_t>(shape.element_count());
  s.order = *order;
  s.descending = key->descending ? 1 : 0;
  if (const std::optional<FloatBitLayout> bits = FloatBitLayoutOf(key->type))
    s.exponent = static_cast<uint32_t>(key_bytes == 8 ? bits->exponent >> 32 : bits->exponent);
  s.nan_bits = key->nan_bits;
  s.zero_bits = key->zero_bits;
  s.passenger_words = static_cast<uint32_t>(passenger_bytes / 4);

  plan.launches = BitonicSortDispatches(plan.layout);
  // The shader's loops are the generated network's, with a compare of no loops.
  plan.loop_iterations = BitonicSortLoopIterations(plan.layout, plan.launches, 0);
  return plan;
}

std::optional<SortPlan> PlanKernelSort(const Computation& kernel, const ShaderFeatures& features) {
  const Instruction* root = kernel.root();
  if (root == nullptr || root->opcode != Opcode::kSort || kernel.parameters().size() != root->operands.size())
    return std::nullopt;
  for (size_t k = 0; k < root->operands.size(); ++k)
    if (root->operand(k) != kernel.parameters()[k]) return std::nullopt;
  return PlanSort(*root, features);
}

}  // namespace kiln::vulkan
