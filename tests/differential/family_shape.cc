// Shape ops: they move elements without computing, so bounds and exactness
// pass through unchanged.
#include <algorithm>
#include <numeric>
#include <vector>

#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

bool HasRankAtLeast(const Value& value, int64_t rank) { return value.shape.rank() >= rank; }

}  // namespace

bool EmitBroadcast(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return v.shape.rank() <= 2; });
  const int64_t out_rank = x.shape.rank() + random.Between(1, 3 - std::min<int64_t>(x.shape.rank(), 2));
  // Operand dimensions land on an increasing random subset of the output's.
  std::vector<int64_t> positions = random.Permutation(out_rank);
  positions.resize(static_cast<size_t>(x.shape.rank()));
  std::sort(positions.begin(), positions.end());
  std::vector<int64_t> out_dims(static_cast<size_t>(out_rank));
  for (int64_t& dim : out_dims) dim = random.Between(1, 3);
  for (size_t i = 0; i < positions.size(); ++i)
    out_dims[static_cast<size_t>(positions[i])] = x.shape.dimensions(static_cast<int64_t>(i));
  context.Use(x);
  Op op = random.Chance(1, 4) && x.shape.rank() == 0
              ? context.builder().Broadcast(x.op, out_dims)
              : context.builder().BroadcastInDim(x.op, out_dims, positions);
  context.Record(op, x.bound, x.exact);
  return true;
}

bool EmitReshape(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick();
  // Regroup the prime factors of the element count into up to three dims.
  std::vector<int64_t> factors;
  int64_t count = x.shape.element_count();
  for (int64_t p = 2; count > 1; ++p) {
    while (count % p == 0) {
      factors.push_back(p);
      count /= p;
    }
  }
  const std::vector<int64_t> order = random.Permutation(static_cast<int64_t>(factors.size()));
  const int64_t rank = factors.empty() ? random.Between(0, 2) : random.Between(1, 3);
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  for (int64_t i : order) dims[static_cast<size_t>(random.Below(rank))] *= factors[static_cast<size_t>(i)];
  context.Use(x);
  context.Record(context.builder().Reshape(x.op, dims), x.bound, x.exact);
  return true;
}

bool EmitTranspose(GraphContext& context) {
  Value x = context.Pick([](const Value& v) { return HasRankAtLeast(v, 2); });
  const std::vector<int64_t> permutation = context.random().Permutation(x.shape.rank());
  context.Use(x);
  context.Record(context.builder().Transpose(x.op, permutation), x.bound, x.exact);
  return true;
}

bool EmitSlice(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return HasRankAtLeast(v, 1); });
  std::vector<int64_t> starts, limits, strides;
  for (int64_t size : x.shape.dimensions()) {
    const int64_t start = random.Between(0, size - 1);
    starts.push_back(start);
    limits.push_back(random.Between(start + 1, size));
    strides.push_back(random.Between(1, 2));
  }
  context.Use(x);
  context.Record(context.builder().Slice(x.op, starts, limits, strides), x.bound, x.exact);
  return true;
}

bool EmitConcatenate(GraphContext& context) {
  RandomSource& random = context.random();
  Value first = context.Pick([](const Value& v) { return HasRankAtLeast(v, 1); });
  const int64_t dimension = random.Below(first.shape.rank());
  std::vector<Op> operands = {first.op};
  double bound = first.bound;
  bool exact = first.exact;
  context.Use(first);
  const int64_t extra = random.Between(1, 2);
  for (int64_t i = 0; i < extra; ++i) {
    std::vector<int64_t> dims = first.shape.dimensions();
    dims[static_cast<size_t>(dimension)] = random.Between(1, 3);
    Value next = context.PickWithDims(dims);
    context.Use(next);
    operands.push_back(next.op);
    bound = std::max(bound, next.bound);
    exact = exact && next.exact;
  }
  context.Record(context.builder().ConcatInDim(operands, dimension), bound, exact);
  return true;
}

bool EmitPad(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return HasRankAtLeast(v, 1); });
  Value padding_value = context.PickWithDims({});
  std::vector<PaddingDimension> config;
  for (int64_t size : x.shape.dimensions()) {
    PaddingDimension dim;
    dim.interior = random.Between(0, 1);
    const int64_t stretched = size + (size - 1) * dim.interior;
    // Negative padding removes elements; keep at least one.
    dim.low = random.Between(-1, 2);
    dim.high = random.Between(-1, 2);
    if (stretched + dim.low + dim.high < 1) dim.low = dim.high = 0;
    config.push_back(dim);
  }
  context.Use(x);
  context.Use(padding_value);
  context.Record(context.builder().Pad(x.op, padding_value.op, config),
                 std::max(x.bound, padding_value.bound), x.exact && padding_value.exact);
  return true;
}

bool EmitReverse(GraphContext& context) {
  RandomSource& random = context.random();
  Value x = context.Pick([](const Value& v) { return HasRankAtLeast(v, 1); });
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.shape.rank(); ++i) {
    if (random.Coin()) dims.push_back(i);
  }
  if (dims.empty()) dims.push_back(random.Below(x.shape.rank()));
  context.Use(x);
  context.Record(context.builder().Rev(x.op, dims), x.bound, x.exact);
  return true;
}

bool EmitIota(GraphContext& context) {
  const std::vector<int64_t> dims = context.RandomDims(1, 3);
  const int64_t dimension = context.random().Below(static_cast<int64_t>(dims.size()));
  const double bound = static_cast<double>(dims[static_cast<size_t>(dimension)]);
  Builder& b = context.builder();
  if (context.is_pred()) {
    Op iota = b.Iota(Shape(ElementType::kS32, dims), dimension);
    context.Record(b.ConvertElementType(iota, ElementType::kPred), 1.0, true);
  } else {
    context.Record(b.Iota(Shape(context.type(), dims), dimension), bound, true);
  }
  return true;
}

}  // namespace kiln::differential
