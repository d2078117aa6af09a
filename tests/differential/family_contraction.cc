// Contractions: dot, dot_general with batch dimensions and several
// contracting dimensions, and small (grouped, strided, dilated, padded)
// convolutions. Floats are clamped so that sums of products stay within the
// type's cap; integers wrap. Pred graphs contract in s32 and convert back.
#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

// Pred has no arithmetic: contract as s32, then back to pred (nonzero).
Op ToWorking(GraphContext& context, Op op) {
  return context.is_pred() ? context.builder().ConvertElementType(op, ElementType::kS32) : op;
}
Op FromWorking(GraphContext& context, Op op) {
  return context.is_pred() ? context.builder().ConvertElementType(op, ElementType::kPred) : op;
}

// Records lhs (x) rhs contracted over `terms` products per output element.
void RecordContraction(GraphContext& context, Op result, const Value& lhs, const Value& rhs, int64_t terms) {
  const double bound = lhs.bound * rhs.bound * static_cast<double>(terms);
  context.Record(FromWorking(context, result), bound, context.StaysExact(lhs.exact && rhs.exact, bound));
}

// Both operands clamped so `terms` products per element stay within the cap.
double OperandCap(const GraphContext& context, int64_t terms) {
  return std::sqrt(context.Cap() / static_cast<double>(terms));
}

}  // namespace

bool EmitDot(GraphContext& context) {
  RandomSource& random = context.random();
  const int64_t m = random.Between(1, 4), k = random.Between(1, 4), n = random.Between(1, 4);
  // Matrix-matrix, vector-matrix or matrix-vector.
  const int64_t form = random.Below(3);
  const std::vector<int64_t> lhs_dims = form == 1 ? std::vector<int64_t>{k} : std::vector<int64_t>{m, k};
  const std::vector<int64_t> rhs_dims = form == 2 ? std::vector<int64_t>{k} : std::vector<int64_t>{k, n};
  Value lhs = context.Limit(context.PickWithDims(lhs_dims), OperandCap(context, k));
  Value rhs = context.Limit(context.PickWithDims(rhs_dims), OperandCap(context, k));
  context.Use(lhs);
  context.Use(rhs);
  RecordContraction(context, context.builder().Dot(ToWorking(context, lhs.op), ToWorking(context, rhs.op)),
                    lhs, rhs, k);
  return true;
}

bool EmitDotGeneral(GraphContext& context) {
  RandomSource& random = context.random();
  // Logical dims: batch, contracting, lhs-free, rhs-free; each operand lays
  // its dims out in a random order.
  std::vector<int64_t> batch(static_cast<size_t>(random.Between(0, 1)));
  std::vector<int64_t> contracting(static_cast<size_t>(random.Between(1, 2)));
  std::vector<int64_t> lhs_free(static_cast<size_t>(random.Between(0, 1)));
  std::vector<int64_t> rhs_free(static_cast<size_t>(random.Between(0, 1)));
  for (auto* group : {&batch, &contracting, &lhs_free, &rhs_free}) {
    for (int64_t& size : *group) size = random.Between(1, 3);
  }
  int64_t terms = 1;
  for (int64_t size : contracting) terms *= size;
  DotDimensionNumbers numbers;
  auto layout = [&](const std::vector<int64_t>& free, std::vector<int64_t>& batch_positions,
                    std::vector<int64_t>& contracting_positions) {
    std::vector<int64_t> logical;  // sizes in logical order: batch, contracting, free
    logical.insert(logical.end(), batch.begin(), batch.end());
    logical.insert(logical.end(), contracting.begin(), contracting.end());
    logical.insert(logical.end(), free.begin(), free.end());
    const std::vector<int64_t> placement = random.Permutation(static_cast<int64_t>(logical.size()));
    std::vector<int64_t> dims(logical.size());
    for (size_t i = 0; i < logical.size(); ++i) dims[static_cast<size_t>(placement[i])] = logical[i];
    for (size_t i = 0; i < batch.size(); ++i) batch_positions.push_back(placement[i]);
    for (size_t i = 0; i < contracting.size(); ++i)
      contracting_positions.push_back(placement[batch.size() + i]);
    return dims;
  };
  const std::vector<int64_t> lhs_dims =
      layout(lhs_free, numbers.lhs_batch_dimensions, numbers.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_dims =
      layout(rhs_free, numbers.rhs_batch_dimensions, numbers.rhs_contracting_dimensions);
  Value lhs = context.Limit(context.PickWithDims(lhs_dims), OperandCap(context, terms));
  Value rhs = context.Limit(context.PickWithDims(rhs_dims), OperandCap(context, terms));
  context.Use(lhs);
  context.Use(rhs);
  RecordContraction(
      context, context.builder().DotGeneral(ToWorking(context, lhs.op), ToWorking(context, rhs.op), numbers),
      lhs, rhs, terms);
  return true;
}

bool EmitConvolution(GraphContext& context) {
  RandomSource& random = context.random();
  const int64_t spatial_rank = random.Between(1, 2);
  const int64_t groups = random.Between(1, 2);
  const int64_t batch = random.Between(1, 2);
  const int64_t in_per_group = random.Between(1, 2);
  const int64_t out_features = groups * random.Between(1, 2);
  std::vector<int64_t> lhs_dims = {batch, groups * in_per_group};
  std::vector<int64_t> rhs_dims = {out_features, in_per_group};
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  std::vector<std::pair<int64_t, int64_t>> padding;
  int64_t terms = in_per_group;
  for (int64_t s = 0; s < spatial_rank; ++s) {
    const int64_t size = random.Between(2, 5);
    int64_t kernel = random.Between(1, 3);
    const int64_t lhs_dilate = random.Chance(1, 5) ? 2 : 1;
    int64_t rhs_dilate = random.Chance(1, 5) ? 2 : 1;
    const std::pair<int64_t, int64_t> pad = {random.Between(0, 1), random.Between(0, 1)};
    const int64_t padded = (size - 1) * lhs_dilate + 1 + pad.first + pad.second;
    if ((kernel - 1) * rhs_dilate + 1 > padded) kernel = rhs_dilate = 1;
    lhs_dims.push_back(size);
    rhs_dims.push_back(kernel);
    strides.push_back(random.Between(1, 2));
    lhs_dilation.push_back(lhs_dilate);
    rhs_dilation.push_back(rhs_dilate);
    padding.push_back(pad);
    terms *= kernel;
  }
  Value lhs = context.Limit(context.PickWithDims(lhs_dims), OperandCap(context, terms));
  Value rhs = context.Limit(context.PickWithDims(rhs_dims), OperandCap(context, terms));
  context.Use(lhs);
  context.Use(rhs);
  Op result = context.builder().ConvGeneralDilated(
      ToWorking(context, lhs.op), ToWorking(context, rhs.op), strides, padding, lhs_dilation, rhs_dilation,
      Builder::DefaultConvDimensionNumbers(spatial_rank), groups);
  RecordContraction(context, result, lhs, rhs, terms);
  return true;
}

}  // namespace kiln::differential
