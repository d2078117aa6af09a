#include "backends/cuda/cublas_gemm.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace kiln::cuda {
namespace {

// cuBLAS's data type of `type`, or -1 for one it does not multiply here.
cudaDataType_t DataType(ElementType type) {
  switch (type) {
    case ElementType::kF32: return CUDA_R_32F;
    case ElementType::kF64: return CUDA_R_64F;
    case ElementType::kF16: return CUDA_R_16F;
    case ElementType::kBF16: return CUDA_R_16BF;
    case ElementType::kC64: return CUDA_C_32F;
    case ElementType::kC128: return CUDA_C_64F;
    default: return -1;
  }
}

// Whether dimensions [first, first + count) are `dimensions`, in order.
bool IsBlock(const std::vector<int64_t>& dimensions, int64_t first) {
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] != first + static_cast<int64_t>(i)) return false;
  }
  return true;
}

int64_t Product(const Shape& shape, int64_t begin, int64_t end) {
  int64_t product = 1;
  for (int64_t d = begin; d < end; ++d) product *= shape.dimensions()[static_cast<size_t>(d)];
  return product;
}

const char* OperationName(cublasOperation_t operation) { return operation == CUBLAS_OP_T ? "T" : "N"; }

}  // namespace

std::string GemmPlan::ToString() const {
  return std::string(OperationName(transa)) + OperationName(transb) + " m=" + std::to_string(m) +
         " n=" + std::to_string(n) + " k=" + std::to_string(k) + " lda=" + std::to_string(lda) +
         " ldb=" + std::to_string(ldb) + " ldc=" + std::to_string(ldc) + " batch=" + std::to_string(batch);
}

StatusOr<GemmPlan> PlanGemm(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot || dot.operands.size() != 2) return Unimplemented("not a dot");
  const Shape& lhs = dot.operand(0)->shape;
  const Shape& rhs = dot.operand(1)->shape;
  const Shape& out = dot.shape;
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) return Unimplemented("not arrays");

  GemmPlan plan;
  const ElementType type = lhs.element_type();
  if (rhs.element_type() != type) return Unimplemented("operands of different element types");
  plan.a_type = plan.b_type = DataType(type);
  plan.c_type = DataType(out.element_type());
  const bool low_precision = type == ElementType::kF16 || type == ElementType::kBF16;
  const bool same_type = out.element_type() == type;
  if (plan.a_type < 0 || (!same_type && !(low_precision && out.element_type() == ElementType::kF32)))
    return Unimplemented("no cuBLAS GEMM for ", ElementTypeName(type), " x ", ElementTypeName(type), " -> ",
                         ElementTypeName(out.element_type()));
  plan.complex = type == ElementType::kC64 || type == ElementType::kC128;
  plan.compute =
      type == ElementType::kF64 || type == ElementType::kC128 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;

  const DotDimensionNumbers& numbers = dot.attrs.dot;
  const auto batch = static_cast<int64_t>(numbers.lhs_batch_dimensions.size());
  const auto contracting = static_cast<int64_t>(numbers.lhs_contracting_dimensions.size());
  if (static_cast<int64_t>(numbers.rhs_batch_dimensions.size()) != batch ||
      static_cast<int64_t>(numbers.rhs_contracting_dimensions.size()) != contracting)
    return Unimplemented("unpaired dimensions");
  if (!IsBlock(numbers.lhs_batch_dimensions, 0) || !IsBlock(numbers.rhs_batch_dimensions, 0))
    return Unimplemented("batch dimensions are not the leading ones, in order");
  if (contracting == 0) return Unimplemented("no contracting dimension (an outer product)");
  const int64_t lhs_first = numbers.lhs_contracting_dimensions[0];
  const int64_t rhs_first = numbers.rhs_contracting_dimensions[0];
  if (!IsBlock(numbers.lhs_contracting_dimensions, lhs_first) ||
      !IsBlock(numbers.rhs_contracting_dimensions, rhs_first))
    return Unimplemented("contracting dimensions are not one block, in order, on each side");
  const int64_t lhs_rank = lhs.rank();
  const int64_t rhs_rank = rhs.rank();
  // lhs: M x K when contracting last, else K x M (transposed) when the
  // contracting block follows the batch dimensions.
  bool lhs_transposed = false;
  if (lhs_first + contracting != lhs_rank) {
    if (lhs_first != batch) return Unimplemented("lhs free dimensions on both sides of the contracting ones");
    lhs_transposed = true;
  }
  // rhs: K x N when the contracting block follows the batch dimensions,
  // else N x K (transposed) when it is last.
  bool rhs_transposed = false;
  if (rhs_first != batch) {
    if (rhs_first + contracting != rhs_rank)
      return Unimplemented("rhs free dimensions on both sides of the contracting ones");
    rhs_transposed = true;
  }
  const int64_t batches = Product(lhs, 0, batch);
  const int64_t k = Product(lhs, lhs_first, lhs_first + contracting);
  const int64_t m = lhs.element_count() / std::max<int64_t>(1, batches * k);
  const int64_t n = rhs.element_count() / std::max<int64_t>(1, batches * k);
  if (batches == 0 || k == 0 || m == 0 || n == 0) return Unimplemented("an empty dimension");
  if (Product(rhs, 0, batch) != batches || Product(rhs, rhs_first, rhs_first + contracting) != k ||
      out.element_count() != batches * m * n)
    return Unimplemented("operand and result extents do not match");
  if (batches > INT_MAX || k > INT_MAX || m > INT_MAX || n > INT_MAX)
    return Unimplemented("an extent beyond cuBLAS's int");

  // cuBLAS computes C' = B'.A' (the file comment): its m is the dot's n
  // (the rhs's free extent) and its n the dot's m.
  plan.m = static_cast<int>(n);
  plan.n = static_cast<int>(m);
  plan.k = static_cast<int>(k);
  plan.transa = rhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.lda = static_cast<int>(rhs_transposed ? k : n);
  plan.transb = lhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  plan.ldb = static_cast<int>(lhs_transposed ? m : k);
  plan.ldc = static_cast<int>(n);
  plan.stride_a = k * n;
  plan.stride_b = m * k;
  plan.stride_c = m * n;
  plan.batch = static_cast<int>(batches);
  return plan;
}

Status RunGemm(const Cublas& cublas, cublasHandle_t handle, const GemmPlan& plan, CUdeviceptr lhs,
               CUdeviceptr rhs, CUdeviceptr out) {
  // alpha = 1, beta = 0 in the compute type's scalar (complex: re, im).
  const float alpha32[2] = {1.0f, 0.0f}, beta32[2] = {0.0f, 0.0f};
  const double alpha64[2] = {1.0, 0.0}, beta64[2] = {0.0, 0.0};
  const bool wide = plan.compute == CUBLAS_COMPUTE_64F;
  const void* alpha = wide ? static_cast<const void*>(alpha64) : static_cast<const void*>(alpha32);
  const void* beta = wide ? static_cast<const void*>(beta64) : static_cast<const void*>(beta32);
  const auto* a = reinterpret_cast<const void*>(static_cast<uintptr_t>(rhs));
  const auto* b = reinterpret_cast<const void*>(static_cast<uintptr_t>(lhs));
  auto* c = reinterpret_cast<void*>(static_cast<uintptr_t>(out));
  if (plan.batch == 1) {
    return Cublas::Check(cublas.api().GemmEx(handle, plan.transa, plan.transb, plan.m, plan.n, plan.k, alpha,
                                             a, plan.a_type, plan.lda, b, plan.b_type, plan.ldb, beta, c,
                                             plan.c_type, plan.ldc, plan.compute, CUBLAS_GEMM_DEFAULT),
                         "cublasGemmEx (" + plan.ToString() + ")");
  }
  return Cublas::Check(
      cublas.api().GemmStridedBatchedEx(handle, plan.transa, plan.transb, plan.m, plan.n, plan.k, alpha, a,
                                        plan.a_type, plan.lda, plan.stride_a, b, plan.b_type, plan.ldb,
                                        plan.stride_b, beta, c, plan.c_type, plan.ldc, plan.stride_c,
                                        plan.batch, plan.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx (" + plan.ToString() + ")");
}

}  // namespace kiln::cuda
