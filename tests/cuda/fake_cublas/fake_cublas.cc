// A fake cuBLAS for testing the CUDA backend's dots on machines without a
// GPU: a shared library exporting exactly the entry points of
// backends/cuda/cublas_api.h under their real names, loaded through
// KILN_CUBLAS_LIBRARY next to the fake driver (whose "device memory" is
// host memory). Its GEMMs really compute, on the host, in cuBLAS's
// column-major convention: C = alpha op(A) op(B) + beta C with op(X) = X
// or its transpose, each matrix in the batch at its stride, so a wrong
// transpose, leading dimension or operand order in Kiln's row-major trick
// gives wrong numbers. It checks the arguments as the library documents
// (leading dimensions at least the rows they hold, the data and compute
// type combinations cublasGemmEx accepts) and records every call
// (fake_cublas.h) so tests can tell which path ran and how.
#include "tests/cuda/fake_cublas/fake_cublas.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

#include "backends/cuda/cublas_api.h"
#include "tests/cuda/fake_low_floats.h"

namespace kiln::cuda {
struct cublasContext {
  int math_mode = CUBLAS_DEFAULT_MATH;
  CUstream stream = nullptr;
};
}  // namespace kiln::cuda

namespace {

using namespace kiln::cuda;
using kiln::cuda::fake::FakeGemmCall;
using namespace kiln::cuda::fake;

constexpr int kMajor = 13, kMinor = 1, kPatch = 0;

struct State {
  std::mutex mutex;
  std::set<cublasContext*> handles;
  std::vector<FakeGemmCall> calls;
  cublasStatus_t fail_next = CUBLAS_STATUS_SUCCESS;
};

State& state() {
  static State* instance = new State();  // never destroyed: the library outlives every caller
  return *instance;
}

std::complex<double> Load(cudaDataType_t type, const void* data, int64_t index) {
  switch (type) {
    case CUDA_R_32F: return static_cast<const float*>(data)[index];
    case CUDA_R_64F: return static_cast<const double*>(data)[index];
    case CUDA_R_16F: return HalfToFloat(static_cast<const uint16_t*>(data)[index]);
    case CUDA_R_16BF: return BfloatToFloat(static_cast<const uint16_t*>(data)[index]);
    case CUDA_C_32F: {
      const std::complex<float> value = static_cast<const std::complex<float>*>(data)[index];
      return {value.real(), value.imag()};
    }
    case CUDA_C_64F: return static_cast<const std::complex<double>*>(data)[index];
    default: return 0;
  }
}

void Store(cudaDataType_t type, void* data, int64_t index, std::complex<double> value) {
  switch (type) {
    case CUDA_R_32F: static_cast<float*>(data)[index] = static_cast<float>(value.real()); break;
    case CUDA_R_64F: static_cast<double*>(data)[index] = value.real(); break;
    case CUDA_R_16F:
      static_cast<uint16_t*>(data)[index] = FloatToHalf(static_cast<float>(value.real()));
      break;
    case CUDA_R_16BF:
      static_cast<uint16_t*>(data)[index] = FloatToBfloat(static_cast<float>(value.real()));
      break;
    case CUDA_C_32F:
      static_cast<std::complex<float>*>(data)[index] = {static_cast<float>(value.real()),
                                                        static_cast<float>(value.imag())};
      break;
    case CUDA_C_64F: static_cast<std::complex<double>*>(data)[index] = value; break;
    default: break;
  }
}

// The combinations of cublasGemmEx's type table that Kiln may ask for.
bool SupportedTypes(cudaDataType_t a, cudaDataType_t b, cudaDataType_t c, cublasComputeType_t compute) {
  if (a != b) return false;
  if (compute == CUBLAS_COMPUTE_32F) {
    if (a == CUDA_R_16F || a == CUDA_R_16BF) return c == a || c == CUDA_R_32F;
    return (a == CUDA_R_32F || a == CUDA_C_32F) && c == a;
  }
  if (compute == CUBLAS_COMPUTE_64F) return (a == CUDA_R_64F || a == CUDA_C_64F) && c == a;
  return false;
}

struct Gemm {
  cublasHandle_t handle;
  cublasOperation_t transa, transb;
  int m, n, k;
  const void* alpha;
  const void* a;
  cudaDataType_t a_type;
  int lda;
  long long stride_a;
  const void* b;
  cudaDataType_t b_type;
  int ldb;
  long long stride_b;
  const void* beta;
  void* c;
  cudaDataType_t c_type;
  int ldc;
  long long stride_c;
  int batch_count;
  cublasComputeType_t compute;
  bool batched;
};

// op(X)[row, column] of a column-major matrix with leading dimension ld.
std::complex<double> Element(const Gemm& g, bool first, int64_t batch, int64_t row, int64_t column) {
  const cublasOperation_t operation = first ? g.transa : g.transb;
  const int64_t ld = first ? g.lda : g.ldb;
  const int64_t index = operation == CUBLAS_OP_N ? row + column * ld : column + row * ld;
  return first ? Load(g.a_type, g.a, batch * g.stride_a + index)
               : Load(g.b_type, g.b, batch * g.stride_b + index);
}

template <typename Accumulator>
void Compute(const Gemm& g, std::complex<double> alpha, std::complex<double> beta) {
  using Real = typename Accumulator::value_type;
  for (int64_t batch = 0; batch < g.batch_count; ++batch) {
    for (int64_t j = 0; j < g.n; ++j) {
      for (int64_t i = 0; i < g.m; ++i) {
        Accumulator sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          const std::complex<double> x = Element(g, true, batch, i, l);
          const std::complex<double> y = Element(g, false, batch, l, j);
          sum += Accumulator(static_cast<Real>(x.real()), static_cast<Real>(x.imag())) *
                 Accumulator(static_cast<Real>(y.real()), static_cast<Real>(y.imag()));
        }
        const int64_t index = batch * g.stride_c + i + j * int64_t{g.ldc};
        std::complex<double> result = alpha * std::complex<double>(sum.real(), sum.imag());
        if (beta != 0.0) result += beta * Load(g.c_type, g.c, index);
        Store(g.c_type, g.c, index, result);
      }
    }
  }
}

std::complex<double> Scalar(const void* pointer, cudaDataType_t type, cublasComputeType_t compute) {
  const bool complex = type == CUDA_C_32F || type == CUDA_C_64F;
  if (compute == CUBLAS_COMPUTE_64F) {
    const auto* values = static_cast<const double*>(pointer);
    return {values[0], complex ? values[1] : 0.0};
  }
  const auto* values = static_cast<const float*>(pointer);
  return {values[0], complex ? values[1] : 0.0f};
}

cublasStatus_t RunGemm(const Gemm& g) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (g.handle == nullptr || s.handles.count(g.handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (s.fail_next != CUBLAS_STATUS_SUCCESS) {
    const cublasStatus_t status = s.fail_next;
    s.fail_next = CUBLAS_STATUS_SUCCESS;
    return status;
  }
  auto valid_op = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T; };
  if (!valid_op(g.transa) || !valid_op(g.transb) || g.m < 0 || g.n < 0 || g.k < 0 || g.batch_count < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int a_rows = g.transa == CUBLAS_OP_N ? g.m : g.k;
  const int b_rows = g.transb == CUBLAS_OP_N ? g.k : g.n;
  if (g.lda < std::max(1, a_rows) || g.ldb < std::max(1, b_rows) || g.ldc < std::max(1, g.m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!SupportedTypes(g.a_type, g.b_type, g.c_type, g.compute)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (g.alpha == nullptr || g.beta == nullptr || g.a == nullptr || g.b == nullptr || g.c == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  FakeGemmCall call;
  call.batched = g.batched ? 1 : 0;
  call.transa = g.transa;
  call.transb = g.transb;
  call.m = g.m;
  call.n = g.n;
  call.k = g.k;
  call.lda = g.lda;
  call.ldb = g.ldb;
  call.ldc = g.ldc;
  call.stride_a = g.stride_a;
  call.stride_b = g.stride_b;
  call.stride_c = g.stride_c;
  call.batch_count = g.batch_count;
  call.a_type = g.a_type;
  call.b_type = g.b_type;
  call.c_type = g.c_type;
  call.compute_type = g.compute;
  call.math_mode = g.handle->math_mode;
  call.stream = g.handle->stream;
  s.calls.push_back(call);
  const std::complex<double> alpha = Scalar(g.alpha, g.a_type, g.compute);
  const std::complex<double> beta = Scalar(g.beta, g.a_type, g.compute);
  if (g.compute == CUBLAS_COMPUTE_64F) {
    Compute<std::complex<double>>(g, alpha, beta);
  } else {
    Compute<std::complex<float>>(g, alpha, beta);
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

#define KILN_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

KILN_FAKE_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION: *value = kMajor; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = kMinor; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = kPatch; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

KILN_FAKE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  State& s = state();
  std::lock_guard lock(s.mutex);
  *handle = new cublasContext();
  s.handles.insert(*handle);
  return CUBLAS_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.handles.erase(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.handles.count(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.handles.count(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                             const void* a, cudaDataType_t a_type, int lda, const void* b,
                                             cudaDataType_t b_type, int ldb, const void* beta, void* c,
                                             cudaDataType_t c_type, int ldc, cublasComputeType_t compute,
                                             cublasGemmAlgo_t algo) {
  if (algo != CUBLAS_GEMM_DEFAULT) return CUBLAS_STATUS_INVALID_VALUE;
  return RunGemm({handle, transa, transb, m,    n, k,      alpha, a, a_type, lda,     0,    b,
                  b_type, ldb,    0,      beta, c, c_type, ldc,   0, 1,      compute, false});
}

KILN_FAKE_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* a, cudaDataType_t a_type, int lda, long long stride_a, const void* b,
    cudaDataType_t b_type, int ldb, long long stride_b, const void* beta, void* c, cudaDataType_t c_type,
    int ldc, long long stride_c, int batch_count, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  if (algo != CUBLAS_GEMM_DEFAULT) return CUBLAS_STATUS_INVALID_VALUE;
  return RunGemm({handle, transa, transb,   m,        n,           k,       alpha,    a,
                  a_type, lda,    stride_a, b,        b_type,      ldb,     stride_b, beta,
                  c,      c_type, ldc,      stride_c, batch_count, compute, true});
}

// Hooks for tests (fake_cublas.h).
KILN_FAKE_EXPORT int kiln_fake_cublas_gemm_count(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.calls.size());
}

KILN_FAKE_EXPORT int kiln_fake_cublas_gemm(int index, FakeGemmCall* call) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (call == nullptr || index < 0 || static_cast<size_t>(index) >= s.calls.size()) return 0;
  *call = s.calls[static_cast<size_t>(index)];
  return 1;
}

KILN_FAKE_EXPORT void kiln_fake_cublas_fail_next(int status) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.fail_next = status;
}

KILN_FAKE_EXPORT int kiln_fake_cublas_live_handles(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.handles.size());
}

// Each export has the type cublas_api.h gives its entry point, and none is
// missing: a change to the table fails here, not in a test run.
namespace {
struct CublasTable {
#define KILN_FAKE_TABLE_FIELD(field, symbol, type) std::type_identity_t<type> field;
  KILN_CUBLAS_FUNCTIONS(KILN_FAKE_TABLE_FIELD)
#undef KILN_FAKE_TABLE_FIELD
};
#define KILN_FAKE_SAME_TYPE(field, function) \
  static_assert(std::is_same_v<decltype(CublasTable::field), decltype(&function)>, #function);
KILN_FAKE_SAME_TYPE(GetProperty, cublasGetProperty)
KILN_FAKE_SAME_TYPE(Create, cublasCreate_v2)
KILN_FAKE_SAME_TYPE(Destroy, cublasDestroy_v2)
KILN_FAKE_SAME_TYPE(SetStream, cublasSetStream_v2)
KILN_FAKE_SAME_TYPE(SetMathMode, cublasSetMathMode)
KILN_FAKE_SAME_TYPE(GemmEx, cublasGemmEx)
KILN_FAKE_SAME_TYPE(GemmStridedBatchedEx, cublasGemmStridedBatchedEx)
#undef KILN_FAKE_SAME_TYPE
static_assert(sizeof(CublasTable) == 7 * sizeof(void*),
              "cublas_api.h lists an entry point the fake cuBLAS does not export: add it above");
}  // namespace
