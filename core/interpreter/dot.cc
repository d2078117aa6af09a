// dot (general): operands are permuted into [batch, m, k] x [batch, k, n] in
// the accumulation type, then multiplied with an i-k-j loop whose innermost
// loop streams a row of the rhs and a row of the result.
#include <algorithm>

#include "core/dot_dimensions.h"
#include "core/interpreter/accumulation.h"
#include "core/interpreter/array_util.h"
#include "core/interpreter/kernels.h"

namespace kiln::interpreter {
namespace {

Status CheckDims(const Shape& shape, const std::vector<int64_t>& dims, const char* what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= shape.rank()) {
      return InvalidArgument("dot ", what, " dimension ", d, " out of range for ", shape.ToString());
    }
  }
  return OkStatus();
}

template <typename Acc>
void MultiplyBatched(const std::vector<Acc>& lhs, const std::vector<Acc>& rhs, std::vector<Acc>& out,
                     int64_t batches, int64_t m, int64_t k, int64_t n) {
  // Blocks of the contraction keep a panel of rhs rows in cache while every
  // lhs row of the batch walks over it.
  constexpr int64_t kBlock = 128;
  for (int64_t b = 0; b < batches; ++b) {
    const Acc* a = lhs.data() + b * m * k;
    const Acc* r = rhs.data() + b * k * n;
    Acc* c = out.data() + b * m * n;
    for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
      const int64_t k1 = std::min(k, k0 + kBlock);
      for (int64_t i = 0; i < m; ++i) {
        Acc* __restrict row = c + i * n;
        for (int64_t p = k0; p < k1; ++p) {
          const Acc scale = a[i * k + p];
          const Acc* __restrict rhs_row = r + p * n;
          for (int64_t j = 0; j < n; ++j) row[j] += scale * rhs_row[j];
        }
      }
    }
  }
}

}  // namespace

StatusOr<Literal> EvaluateDot(const Instruction& instruction, Operands operands) {
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const DotDimensionNumbers& numbers = instruction.attrs.dot;
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  KILN_RETURN_IF_ERROR(CheckDims(ls, numbers.lhs_batch_dimensions, "lhs batch"));
  KILN_RETURN_IF_ERROR(CheckDims(ls, numbers.lhs_contracting_dimensions, "lhs contracting"));
  KILN_RETURN_IF_ERROR(CheckDims(rs, numbers.rhs_batch_dimensions, "rhs batch"));
  KILN_RETURN_IF_ERROR(CheckDims(rs, numbers.rhs_contracting_dimensions, "rhs contracting"));
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(ls.rank(), numbers.lhs_batch_dimensions, numbers.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rs.rank(), numbers.rhs_batch_dimensions, numbers.rhs_contracting_dimensions);
  const int64_t batches = DimensionsProduct(ls, numbers.lhs_batch_dimensions);
  const int64_t m = DimensionsProduct(ls, lhs_free);
  const int64_t k = DimensionsProduct(ls, numbers.lhs_contracting_dimensions);
  const int64_t n = DimensionsProduct(rs, rhs_free);
  if (DimensionsProduct(rs, numbers.rhs_batch_dimensions) != batches ||
      DimensionsProduct(rs, numbers.rhs_contracting_dimensions) != k ||
      batches * m * n != instruction.shape.element_count()) {
    return InvalidArgument("dot of ", ls.ToString(), " and ", rs.ToString(), " does not match result ",
                           instruction.shape.ToString());
  }
  std::vector<int64_t> lhs_order = numbers.lhs_batch_dimensions;
  lhs_order.insert(lhs_order.end(), lhs_free.begin(), lhs_free.end());
  lhs_order.insert(lhs_order.end(), numbers.lhs_contracting_dimensions.begin(),
                   numbers.lhs_contracting_dimensions.end());
  std::vector<int64_t> rhs_order = numbers.rhs_batch_dimensions;
  rhs_order.insert(rhs_order.end(), numbers.rhs_contracting_dimensions.begin(),
                   numbers.rhs_contracting_dimensions.end());
  rhs_order.insert(rhs_order.end(), rhs_free.begin(), rhs_free.end());
  const Literal lhs_canonical = TransposeLiteral(lhs, lhs_order);
  const Literal rhs_canonical = TransposeLiteral(rhs, rhs_order);

  Literal result(instruction.shape);
  DispatchElementType(instruction.shape.element_type(), [&](auto tag) {
    using Out = decltype(tag);
    using Acc = AccumulatorType<Out>;
    const std::vector<Acc> a = ToAccumulator<Acc>(lhs_canonical);
    const std::vector<Acc> b = ToAccumulator<Acc>(rhs_canonical);
    std::vector<Acc> c(static_cast<size_t>(batches * m * n), Acc{});
    MultiplyBatched(a, b, c, batches, m, k, n);
    FromAccumulator<Out>(c, result);
  });
  return result;
}

}  // namespace kiln::interpreter
