// A fake cuDNN for testing the CUDA backend's convolutions on machines
// without a GPU: a shared library exporting exactly the entry points of
// backends/cuda/cudnn_api.h under their real names, loaded through
// KILN_CUDNN_LIBRARY next to the fake driver (whose "device memory" is host
// memory). Its cudnnConvolutionForward really computes, on the host, from
// the descriptors alone: the tensors through their dimensions and strides,
// the filter in its format, the window from the convolution descriptor, so
// a wrong stride, format, padding or group count in Kiln's plan gives wrong
// numbers. It refuses descriptors that do not fit together as cuDNN does
// (CUDNN_STATUS_BAD_PARAM), offers several algorithms of different speeds
// and workspaces (fake_cudnn.h), checks the chosen one's workspace is
// passed, counts the calls that set a convolution up and records every
// forward call. It reports cuDNN 9.1.0.
#include "tests/cuda/fake_cudnn/fake_cudnn.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cuda/cudnn_api.h"
#include "tests/cuda/fake_low_floats.h"

namespace kiln::cuda {
struct cudnnContext {
  CUstream stream = nullptr;
};
struct cudnnTensorStruct {
  bool set = false;
  cudnnDataType_t type = -1;
  std::vector<int> dims, strides;
};
struct cudnnFilterStruct {
  bool set = false;
  cudnnDataType_t type = -1;
  cudnnTensorFormat_t format = -1;
  std::vector<int> dims;
};
struct cudnnConvolutionStruct {
  bool set = false;
  std::vector<int> padding, strides, dilations;
  cudnnConvolutionMode_t mode = -1;
  cudnnDataType_t compute = -1;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
}  // namespace kiln::cuda

namespace {

using namespace kiln::cuda;
using namespace kiln::cuda::fake;

// cuDNN 9's codes for the failures the fake reports.
constexpr cudnnStatus_t kBadParam = 2000;
constexpr cudnnStatus_t kNotSupported = 3000;
constexpr cudnnStatus_t kAllocFailed = 4001;
constexpr cudnnStatus_t kExecutionFailed = 5000;

// The forward algorithms of fake_cudnn.h, indexed by cuDNN's number.
struct FakeAlgorithm {
  bool supported = false;
  float milliseconds = -1;
  size_t workspace = 0;
};
constexpr int kFakeAlgorithmCount = 8;  // CUDNN_CONVOLUTION_FWD_ALGO_COUNT
constexpr std::array<FakeAlgorithm, kFakeAlgorithmCount> kFakeAlgorithms = {{
    {true, 3.0f, 0},
    {true, 2.0f, kFakeFirstHeuristicWorkspace},
    {},
    {},
    {true, 0.5f, kFakeBeyondLimitWorkspace},
    {},
    {},
    {true, 1.0f, kFakeFastestAlgorithmWorkspace},
}};
constexpr std::array<cudnnConvolutionFwdAlgo_t, kFakeAlgorithmCount> kHeuristicOrder = {4, 1, 7, 0,
                                                                                        2, 3, 5, 6};
static_assert(kFakeAlgorithms[kFakeFastestAlgorithmWithinLimit].supported &&
              kFakeAlgorithms[kFakeFirstHeuristicWithinLimit].supported);

bool FakeAlgorithmSupported(cudnnConvolutionFwdAlgo_t algo) {
  return algo >= 0 && algo < kFakeAlgorithmCount && kFakeAlgorithms[static_cast<size_t>(algo)].supported;
}

struct State {
  std::mutex mutex;
  std::set<cudnnContext*> handles;
  int live_descriptors = 0;
  std::vector<FakeConvolutionCall> calls;
  std::array<int, kFakeCudnnCounters> counts = {};
  cudnnStatus_t fail_next = CUDNN_STATUS_SUCCESS;
  cudnnStatus_t fail_next_search = CUDNN_STATUS_SUCCESS;
};

State& state() {
  static State* instance = new State();  // never destroyed: the library outlives every caller
  return *instance;
}

void CountCall(FakeCudnnCounter counter) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  ++s.counts[counter];
}

bool KnownHandle(cudnnHandle_t handle) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.handles.count(handle) != 0;
}

// One answer for `algo`: its workspace, its status, and `milliseconds` as
// the time (a search's measurement; -1 from the heuristics).
cudnnConvolutionFwdAlgoPerf_t FakeAnswer(cudnnConvolutionFwdAlgo_t algo, cudnnStatus_t status,
                                         float milliseconds, cudnnMathType_t math) {
  cudnnConvolutionFwdAlgoPerf_t answer{};
  answer.algo = algo;
  answer.status = status;
  answer.time = milliseconds;
  answer.memory = kFakeAlgorithms[static_cast<size_t>(algo)].workspace;
  answer.mathType = math;
  return answer;
}

bool KnownType(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT || type == CUDNN_DATA_HALF || type == CUDNN_DATA_BFLOAT16;
}

float LoadValue(cudnnDataType_t type, const void* data, int64_t index) {
  switch (type) {
    case CUDNN_DATA_HALF: return HalfToFloat(static_cast<const uint16_t*>(data)[index]);
    case CUDNN_DATA_BFLOAT16: return BfloatToFloat(static_cast<const uint16_t*>(data)[index]);
    default: return static_cast<const float*>(data)[index];
  }
}

void StoreValue(cudnnDataType_t type, void* data, int64_t index, float value) {
  switch (type) {
    case CUDNN_DATA_HALF: static_cast<uint16_t*>(data)[index] = FloatToHalf(value); break;
    case CUDNN_DATA_BFLOAT16: static_cast<uint16_t*>(data)[index] = FloatToBfloat(value); break;
    default: static_cast<float*>(data)[index] = value; break;
  }
}

// OK when the four descriptors describe one convolution cuDNN would run.
cudnnStatus_t CheckDescriptors(const cudnnTensorStruct* x, const cudnnFilterStruct* w,
                               const cudnnConvolutionStruct* conv, const cudnnTensorStruct* y) {
  if (x == nullptr || w == nullptr || conv == nullptr || y == nullptr) return kBadParam;
  if (!x->set || !w->set || !conv->set || !y->set) return kBadParam;
  const size_t rank = x->dims.size();
  const size_t spatial = conv->padding.size();
  if (rank != spatial + 2 || y->dims.size() != rank || w->dims.size() != rank) return kBadParam;
  if (x->type != w->type || x->type != y->type) return kNotSupported;
  if (conv->compute != CUDNN_DATA_FLOAT) return kNotSupported;
  if (w->format != CUDNN_TENSOR_NCHW && w->format != CUDNN_TENSOR_NHWC) return kBadParam;
  if (conv->groups < 1 || w->dims[0] % conv->groups != 0) return kBadParam;
  if (x->dims[0] != y->dims[0] || w->dims[0] != y->dims[1] || w->dims[1] * conv->groups != x->dims[1])
    return kBadParam;
  for (size_t d = 0; d < spatial; ++d) {
    const int window = conv->dilations[d] * (w->dims[d + 2] - 1) + 1;
    const int padded = x->dims[d + 2] + 2 * conv->padding[d];
    if (conv->strides[d] < 1 || conv->dilations[d] < 1 || conv->padding[d] < 0 || padded < window)
      return kBadParam;
    if (y->dims[d + 2] != (padded - window) / conv->strides[d] + 1) return kBadParam;
  }
  return CUDNN_STATUS_SUCCESS;
}

// y = alpha * (x conv w), every output element through the descriptors.
void Convolve(const cudnnTensorStruct& x, const void* x_data, const cudnnFilterStruct& w, const void* w_data,
              const cudnnConvolutionStruct& conv, const cudnnTensorStruct& y, void* y_data, float alpha) {
  const int rank = static_cast<int>(x.dims.size());
  const int spatial = rank - 2;
  const int out_features = w.dims[0], group_features = w.dims[1];
  const int per_group = out_features / conv.groups;
  std::vector<int> position(static_cast<size_t>(spatial)), tap(static_cast<size_t>(spatial));
  // The filter's element (k, c, taps): row-major (K, C, spatial...) or (K, spatial..., C).
  auto filter_offset = [&](int k, int c) {
    int64_t offset = k;
    if (w.format == CUDNN_TENSOR_NCHW) offset = offset * group_features + c;
    for (int d = 0; d < spatial; ++d) {
      const int size = w.dims[static_cast<size_t>(d + 2)];
      const int t = conv.mode == CUDNN_CONVOLUTION ? size - 1 - tap[static_cast<size_t>(d)]
                                                   : tap[static_cast<size_t>(d)];
      offset = offset * size + t;
    }
    if (w.format == CUDNN_TENSOR_NHWC) offset = offset * group_features + c;
    return offset;
  };
  int64_t outputs = 1;
  for (int d = 0; d < spatial; ++d) outputs *= y.dims[static_cast<size_t>(d + 2)];
  int64_t window = 1;
  for (int d = 0; d < spatial; ++d) window *= w.dims[static_cast<size_t>(d + 2)];
  for (int n = 0; n < y.dims[0]; ++n) {
    for (int k = 0; k < out_features; ++k) {
      const int group = k / per_group;
      for (int64_t o = 0; o < outputs; ++o) {
        int64_t rest = o;
        for (int d = spatial - 1; d >= 0; --d) {
          position[static_cast<size_t>(d)] = static_cast<int>(rest % y.dims[static_cast<size_t>(d + 2)]);
          rest /= y.dims[static_cast<size_t>(d + 2)];
        }
        float sum = 0;
        for (int64_t t = 0; t < window; ++t) {
          int64_t left = t;
          for (int d = spatial - 1; d >= 0; --d) {
            tap[static_cast<size_t>(d)] = static_cast<int>(left % w.dims[static_cast<size_t>(d + 2)]);
            left /= w.dims[static_cast<size_t>(d + 2)];
          }
          int64_t x_offset = int64_t{n} * x.strides[0];
          bool inside = true;
          for (int d = 0; d < spatial; ++d) {
            const size_t i = static_cast<size_t>(d);
            const int at = position[i] * conv.strides[i] - conv.padding[i] + tap[i] * conv.dilations[i];
            inside = inside && at >= 0 && at < x.dims[i + 2];
            x_offset += int64_t{at} * x.strides[i + 2];
          }
          // cuDNN's padding is zeros that take part in the products (as
          // Kiln's: README, numerics).
          for (int c = 0; c < group_features; ++c) {
            const int64_t x_index = x_offset + int64_t{group * group_features + c} * x.strides[1];
            const float input = inside ? LoadValue(x.type, x_data, x_index) : 0.0f;
            sum += input * LoadValue(w.type, w_data, filter_offset(k, c));
          }
        }
        int64_t y_index = int64_t{n} * y.strides[0] + int64_t{k} * y.strides[1];
        for (int d = 0; d < spatial; ++d)
          y_index += int64_t{position[static_cast<size_t>(d)]} * y.strides[static_cast<size_t>(d + 2)];
        StoreValue(y.type, y_data, y_index, alpha * sum);
      }
    }
  }
}

void CopyInts(const std::vector<int>& from, int* to) {
  for (size_t i = 0; i < from.size() && i < static_cast<size_t>(kFakeCudnnMaxRank); ++i) to[i] = from[i];
}

}  // namespace

#define KILN_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

KILN_FAKE_EXPORT size_t cudnnGetVersion() { return 90100; }

KILN_FAKE_EXPORT const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case kBadParam: return "CUDNN_STATUS_BAD_PARAM";
    case kNotSupported: return "CUDNN_STATUS_NOT_SUPPORTED";
    case kAllocFailed: return "CUDNN_STATUS_ALLOC_FAILED";
    case kExecutionFailed: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN (fake cuDNN)";
  }
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (handle == nullptr) return kBadParam;
  State& s = state();
  std::lock_guard lock(s.mutex);
  *handle = new cudnnContext();
  s.handles.insert(*handle);
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.handles.erase(handle) == 0) return kBadParam;
  delete handle;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.handles.count(handle) == 0) return kBadParam;
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

// Descriptors: created and destroyed in pairs, counted.
template <typename Descriptor>
cudnnStatus_t CreateDescriptor(Descriptor** descriptor) {
  if (descriptor == nullptr) return kBadParam;
  *descriptor = new Descriptor();
  State& s = state();
  std::lock_guard lock(s.mutex);
  ++s.live_descriptors;
  ++s.counts[kFakeDescriptorsCreated];
  return CUDNN_STATUS_SUCCESS;
}

template <typename Descriptor>
cudnnStatus_t DestroyDescriptor(Descriptor* descriptor) {
  if (descriptor == nullptr) return kBadParam;
  delete descriptor;
  State& s = state();
  std::lock_guard lock(s.mutex);
  --s.live_descriptors;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* descriptor) {
  return CreateDescriptor(descriptor);
}
KILN_FAKE_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t descriptor) {
  return DestroyDescriptor(descriptor);
}
KILN_FAKE_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* descriptor) {
  return CreateDescriptor(descriptor);
}
KILN_FAKE_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t descriptor) {
  return DestroyDescriptor(descriptor);
}
KILN_FAKE_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* descriptor) {
  return CreateDescriptor(descriptor);
}
KILN_FAKE_EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t descriptor) {
  return DestroyDescriptor(descriptor);
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t descriptor,
                                                          cudnnDataType_t type, int rank, const int* dims,
                                                          const int* strides) {
  if (descriptor == nullptr || !KnownType(type) || rank < 3 || rank > kFakeCudnnMaxRank) return kBadParam;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] < 1 || strides[d] < 1) return kBadParam;
  }
  descriptor->type = type;
  descriptor->dims.assign(dims, dims + rank);
  descriptor->strides.assign(strides, strides + rank);
  descriptor->set = true;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t descriptor,
                                                          cudnnDataType_t type, cudnnTensorFormat_t format,
                                                          int rank, const int* dims) {
  if (descriptor == nullptr || !KnownType(type) || rank < 3 || rank > kFakeCudnnMaxRank) return kBadParam;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] < 1) return kBadParam;
  }
  descriptor->type = type;
  descriptor->format = format;
  descriptor->dims.assign(dims, dims + rank);
  descriptor->set = true;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t descriptor,
                                                               int spatial, const int* padding,
                                                               const int* strides, const int* dilations,
                                                               cudnnConvolutionMode_t mode,
                                                               cudnnDataType_t compute) {
  if (descriptor == nullptr || spatial < 1 || spatial > kFakeCudnnMaxRank - 2) return kBadParam;
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) return kBadParam;
  descriptor->padding.assign(padding, padding + spatial);
  descriptor->strides.assign(strides, strides + spatial);
  descriptor->dilations.assign(dilations, dilations + spatial);
  descriptor->mode = mode;
  descriptor->compute = compute;
  descriptor->set = true;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t descriptor,
                                                             int groups) {
  if (descriptor == nullptr || groups < 1) return kBadParam;
  descriptor->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t descriptor,
                                                           cudnnMathType_t math) {
  if (descriptor == nullptr || math < 0 || math > CUDNN_FMA_MATH) return kBadParam;
  descriptor->math = math;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  if (!KnownHandle(handle) || count == nullptr) return kBadParam;
  *count = kFakeAlgorithmCount;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* results) {
  CountCall(kFakeHeuristicQueries);
  if (!KnownHandle(handle) || requested < 1 || returned == nullptr || results == nullptr) return kBadParam;
  if (const cudnnStatus_t checked = CheckDescriptors(x, w, conv, y); checked != CUDNN_STATUS_SUCCESS)
    return checked;
  const int count = std::min(requested, kFakeAlgorithmCount);
  for (int i = 0; i < count; ++i) {
    const cudnnConvolutionFwdAlgo_t algo = kHeuristicOrder[static_cast<size_t>(i)];
    results[i] = FakeAnswer(algo, FakeAlgorithmSupported(algo) ? CUDNN_STATUS_SUCCESS : kNotSupported, -1.0f,
                            conv->math);
  }
  *returned = count;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, cudnnTensorDescriptor_t x, const void* x_data, cudnnFilterDescriptor_t w,
    const void* w_data, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, void* y_data,
    int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* results, void* workspace,
    size_t workspace_bytes) {
  CountCall(kFakeAlgorithmSearches);
  {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.fail_next_search != CUDNN_STATUS_SUCCESS)
      return std::exchange(s.fail_next_search, CUDNN_STATUS_SUCCESS);
  }
  if (!KnownHandle(handle) || requested < 1 || returned == nullptr || results == nullptr) return kBadParam;
  if (x_data == nullptr || w_data == nullptr || y_data == nullptr) return kBadParam;
  if (workspace == nullptr && workspace_bytes > 0) return kBadParam;
  if (const cudnnStatus_t checked = CheckDescriptors(x, w, conv, y); checked != CUDNN_STATUS_SUCCESS)
    return checked;
  const int count = std::min(requested, kFakeAlgorithmCount);
  for (int algo = 0; algo < count; ++algo) {
    const FakeAlgorithm& known = kFakeAlgorithms[static_cast<size_t>(algo)];
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    if (!known.supported)
      status = kNotSupported;
    else if (known.workspace > workspace_bytes)
      status = kAllocFailed;
    results[algo] = FakeAnswer(algo, status, known.milliseconds, conv->math);
  }
  *returned = count;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
    size_t* bytes) {
  CountCall(kFakeWorkspaceQueries);
  if (!KnownHandle(handle) || bytes == nullptr) return kBadParam;
  if (const cudnnStatus_t checked = CheckDescriptors(x, w, conv, y); checked != CUDNN_STATUS_SUCCESS)
    return checked;
  if (!FakeAlgorithmSupported(algo)) return kNotSupported;
  *bytes = kFakeAlgorithms[static_cast<size_t>(algo)].workspace;
  return CUDNN_STATUS_SUCCESS;
}

KILN_FAKE_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                                       cudnnTensorDescriptor_t x, const void* x_data,
                                                       cudnnFilterDescriptor_t w, const void* w_data,
                                                       cudnnConvolutionDescriptor_t conv,
                                                       cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                                       size_t workspace_bytes, const void* beta,
                                                       cudnnTensorDescriptor_t y, void* y_data) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.handles.count(handle) == 0) return kBadParam;
    if (s.fail_next != CUDNN_STATUS_SUCCESS) return std::exchange(s.fail_next, CUDNN_STATUS_SUCCESS);
  }
  if (alpha == nullptr || beta == nullptr || x_data == nullptr || w_data == nullptr || y_data == nullptr)
    return kBadParam;
  if (!FakeAlgorithmSupported(algo)) return kNotSupported;
  const size_t needed = kFakeAlgorithms[static_cast<size_t>(algo)].workspace;
  if (workspace_bytes < needed || (needed > 0 && workspace == nullptr)) return kBadParam;
  if (*static_cast<const float*>(beta) != 0.0f) return kNotSupported;  // Kiln never accumulates into y
  if (const cudnnStatus_t checked = CheckDescriptors(x, w, conv, y); checked != CUDNN_STATUS_SUCCESS)
    return checked;
  Convolve(*x, x_data, *w, w_data, *conv, *y, y_data, *static_cast<const float*>(alpha));
  FakeConvolutionCall call;
  call.data_type = x->type;
  call.filter_data_type = w->type;
  call.output_data_type = y->type;
  call.rank = static_cast<int>(x->dims.size());
  CopyInts(x->dims, call.input_dims);
  CopyInts(x->strides, call.input_strides);
  CopyInts(y->dims, call.output_dims);
  CopyInts(y->strides, call.output_strides);
  CopyInts(w->dims, call.filter_dims);
  call.filter_format = w->format;
  CopyInts(conv->padding, call.padding);
  CopyInts(conv->strides, call.strides);
  CopyInts(conv->dilations, call.dilations);
  call.mode = conv->mode;
  call.compute_type = conv->compute;
  call.groups = conv->groups;
  call.math = conv->math;
  call.algo = algo;
  call.workspace_bytes = workspace_bytes;
  call.stream = handle->stream;
  call.workspace = workspace;
  std::lock_guard lock(s.mutex);
  s.calls.push_back(call);
  return CUDNN_STATUS_SUCCESS;
}

// Test hooks (fake_cudnn.h).
KILN_FAKE_EXPORT int kiln_fake_cudnn_forward_count(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.calls.size());
}

KILN_FAKE_EXPORT int kiln_fake_cudnn_forward(int i, FakeConvolutionCall* call) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (i < 0 || static_cast<size_t>(i) >= s.calls.size() || call == nullptr) return 0;
  *call = s.calls[static_cast<size_t>(i)];
  return 1;
}

KILN_FAKE_EXPORT void kiln_fake_cudnn_fail_next(int status) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.fail_next = status;
}

KILN_FAKE_EXPORT void kiln_fake_cudnn_fail_next_search(int status) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.fail_next_search = status;
}

KILN_FAKE_EXPORT int kiln_fake_cudnn_calls(int counter) {
  if (counter < 0 || counter >= kFakeCudnnCounters) return -1;
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.counts[static_cast<size_t>(counter)];
}

KILN_FAKE_EXPORT int kiln_fake_cudnn_live_handles(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.handles.size());
}

KILN_FAKE_EXPORT int kiln_fake_cudnn_live_descriptors(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.live_descriptors;
}

// Each export has the type cudnn_api.h gives its entry point (cudnn +
// field), and none is missing: a change to the table fails here.
#define KILN_FAKE_SAME_TYPE(field, symbol, type) \
  static_assert(std::is_same_v<std::type_identity_t<type>, decltype(&cudnn##field)>, symbol);
KILN_CUDNN_FUNCTIONS(KILN_FAKE_SAME_TYPE)
#undef KILN_FAKE_SAME_TYPE
