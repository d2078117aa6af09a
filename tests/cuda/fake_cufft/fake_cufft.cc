// A fake cuFFT for testing the CUDA backend's fft on machines without a
// GPU: a shared library exporting exactly the entry points of
// backends/cuda/cufft_api.h under their real names, loaded through
// KILN_CUFFT_LIBRARY next to the fake driver (whose "device memory" is
// host memory). Its transforms really compute, on the host, as a naive
// DFT of each batch at the plan's embedded sizes, strides and distances,
// unscaled in both directions as cuFFT's are; a C2R or Z2D transform then
// overwrites its input, as cuFFT may. Plans made without auto-allocation
// need a work area before they run (CUFFT_NO_WORKSPACE otherwise), and
// every plan and execution is recorded (fake_cufft.h) so tests can tell
// which path ran and how.
#include "tests/cuda/fake_cufft/fake_cufft.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "backends/cuda/cufft_api.h"

namespace {

using namespace kiln::cuda;
using namespace kiln::cuda::fake;

constexpr int kMajor = 12, kMinor = 0, kPatch = 0;
constexpr size_t kWorkBytesPerBatch = 256;  // what a plan asks for, so work areas are exercised

struct Plan {
  bool made = false;
  int auto_allocation = 1;
  FakeFftPlan record;
  void* work_area = nullptr;
  CUstream stream = nullptr;
};

struct State {
  std::mutex mutex;
  int next_handle = 1;
  std::map<cufftHandle, Plan> plans;
  std::vector<FakeFftPlan> made;
  std::vector<FakeFftExec> execs;
  std::vector<std::vector<unsigned char>> outputs;
};

State& state() {
  static State* instance = new State();  // never destroyed: the library outlives every caller
  return *instance;
}

bool IsReal(int type, bool input) {
  switch (type) {
    case CUFFT_R2C:
    case CUFFT_D2Z: return input;
    case CUFFT_C2R:
    case CUFFT_Z2D: return !input;
    default: return false;
  }
}
bool IsDouble(int type) { return type == CUFFT_Z2Z || type == CUFFT_D2Z || type == CUFFT_Z2D; }
size_t ElementBytes(int type, bool input) {
  return (IsDouble(type) ? sizeof(double) : sizeof(float)) * (IsReal(type, input) ? 1 : 2);
}

std::complex<double> LoadElement(int type, bool input, const void* data, int64_t index) {
  if (IsDouble(type)) {
    if (IsReal(type, input)) return static_cast<const double*>(data)[index];
    return static_cast<const std::complex<double>*>(data)[index];
  }
  if (IsReal(type, input)) return static_cast<const float*>(data)[index];
  const std::complex<float> value = static_cast<const std::complex<float>*>(data)[index];
  return {value.real(), value.imag()};
}

void StoreElement(int type, void* data, int64_t index, std::complex<double> value) {
  if (IsDouble(type)) {
    if (IsReal(type, false)) {
      static_cast<double*>(data)[index] = value.real();
    } else {
      static_cast<std::complex<double>*>(data)[index] = value;
    }
  } else if (IsReal(type, false)) {
    static_cast<float*>(data)[index] = static_cast<float>(value.real());
  } else {
    static_cast<std::complex<float>*>(data)[index] = {static_cast<float>(value.real()),
                                                      static_cast<float>(value.imag())};
  }
}

// Element `index` (row-major over the logical sizes n) of one batch, at
// the embedded sizes and stride.
int64_t Offset(const FakeFftPlan& plan, const int* embed, int stride, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (int d = 0; d < plan.rank; ++d) offset = offset * embed[d] + index[static_cast<size_t>(d)];
  return offset * stride;
}

// Steps `index` through the box `extent` row-major; false after the last.
bool Next(std::vector<int64_t>& index, const std::vector<int64_t>& extent) {
  for (size_t d = index.size(); d-- > 0;) {
    if (++index[d] < extent[d]) return true;
    index[d] = 0;
  }
  return false;
}

// One batch of `plan` from `in` to `out`: the full complex input (the
// real input, or a half spectrum completed by Hermitian symmetry), its
// unscaled DFT with exp(sign 2 pi i k.x / n), and the output's part of it.
void Transform(const FakeFftPlan& plan, int sign, const void* in, int64_t in_base, void* out,
               int64_t out_base) {
  const std::vector<int64_t> n(plan.n, plan.n + plan.rank);
  const bool half_in = plan.type == CUFFT_C2R || plan.type == CUFFT_Z2D;
  const bool half_out = plan.type == CUFFT_R2C || plan.type == CUFFT_D2Z;
  const int64_t last_half = n.back() / 2 + 1;
  int64_t total = 1;
  for (int64_t size : n) total *= size;
  std::vector<std::complex<double>> full(static_cast<size_t>(total));
  std::vector<int64_t> x(n.size(), 0);
  for (int64_t i = 0; i < total; ++i, Next(x, n)) {
    std::vector<int64_t> at = x;
    bool conjugate = false;
    if (half_in && x.back() >= last_half) {  // X[k] = conj(X[-k mod n])
      for (size_t d = 0; d < at.size(); ++d) at[d] = (n[d] - x[d]) % n[d];
      conjugate = true;
    }
    const std::complex<double> value =
        LoadElement(plan.type, true, in, in_base + Offset(plan, plan.inembed, plan.istride, at));
    full[static_cast<size_t>(i)] = conjugate ? std::conj(value) : value;
  }
  std::vector<int64_t> k(n.size(), 0);
  for (int64_t i = 0; i < total; ++i, Next(k, n)) {
    if (half_out && k.back() >= last_half) continue;
    std::complex<double> sum = 0;
    std::vector<int64_t> xi(n.size(), 0);
    for (int64_t j = 0; j < total; ++j, Next(xi, n)) {
      double phase = 0;
      for (size_t d = 0; d < n.size(); ++d)
        phase += static_cast<double>((k[d] * xi[d]) % n[d]) / static_cast<double>(n[d]);
      sum += full[static_cast<size_t>(j)] * std::polar(1.0, sign * 2 * M_PI * phase);
    }
    StoreElement(plan.type, out, out_base + Offset(plan, plan.onembed, plan.ostride, k), sum);
  }
}

cufftResult Execute(cufftHandle handle, int type, void* in, void* out, int direction) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto found = s.plans.find(handle);
  if (found == s.plans.end() || !found->second.made) return CUFFT_INVALID_PLAN;
  const Plan& plan = found->second;
  const FakeFftPlan& record = plan.record;
  if (record.type != type) return CUFFT_INVALID_VALUE;
  if ((type == CUFFT_C2C || type == CUFFT_Z2Z) && direction != CUFFT_FORWARD && direction != CUFFT_INVERSE)
    return CUFFT_INVALID_VALUE;
  if (plan.auto_allocation == 0 && record.work_bytes > 0 && plan.work_area == nullptr)
    return CUFFT_NO_WORKSPACE;
  if (in == nullptr || out == nullptr || in == out) return CUFFT_INVALID_VALUE;  // Kiln runs out of place
  const int sign = type == CUFFT_C2C || type == CUFFT_Z2Z ? direction : (IsReal(type, true) ? -1 : 1);
  for (int b = 0; b < record.batch; ++b)
    Transform(record, sign, in, static_cast<int64_t>(b) * record.idist, out,
              static_cast<int64_t>(b) * record.odist);
  const size_t out_bytes =
      static_cast<size_t>(record.batch) * static_cast<size_t>(record.odist) * ElementBytes(type, false);
  if (type == CUFFT_C2R || type == CUFFT_Z2D) {  // cuFFT's C2R may overwrite its input
    const size_t in_bytes =
        static_cast<size_t>(record.batch) * static_cast<size_t>(record.idist) * ElementBytes(type, true);
    std::memset(in, 0xff, in_bytes);  // NaN in every float
  }
  FakeFftExec exec;
  exec.handle = handle;
  exec.type = type;
  exec.direction = direction;
  exec.input = in;
  exec.output = out;
  exec.stream = plan.stream;
  exec.work_area = plan.work_area;
  exec.output_bytes = out_bytes;
  s.execs.push_back(exec);
  const auto* bytes = static_cast<const unsigned char*>(out);
  s.outputs.emplace_back(bytes, bytes + out_bytes);
  return CUFFT_SUCCESS;
}

}  // namespace

#define KILN_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

KILN_FAKE_EXPORT cufftResult cufftGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUFFT_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION: *value = kMajor; return CUFFT_SUCCESS;
    case MINOR_VERSION: *value = kMinor; return CUFFT_SUCCESS;
    case PATCH_LEVEL: *value = kPatch; return CUFFT_SUCCESS;
    default: return CUFFT_INVALID_TYPE;
  }
}

KILN_FAKE_EXPORT cufftResult cufftCreate(cufftHandle* handle) {
  if (handle == nullptr) return CUFFT_INVALID_VALUE;
  State& s = state();
  std::lock_guard lock(s.mutex);
  *handle = s.next_handle++;
  s.plans[*handle] = Plan{};
  return CUFFT_SUCCESS;
}

KILN_FAKE_EXPORT cufftResult cufftDestroy(cufftHandle handle) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.plans.erase(handle) == 1 ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

KILN_FAKE_EXPORT cufftResult cufftSetAutoAllocation(cufftHandle handle, int auto_allocate) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto found = s.plans.find(handle);
  if (found == s.plans.end()) return CUFFT_INVALID_PLAN;
  found->second.auto_allocation = auto_allocate;
  return CUFFT_SUCCESS;
}

KILN_FAKE_EXPORT cufftResult cufftMakePlanMany(cufftHandle handle, int rank, int* n, int* inembed,
                                               int istride, int idist, int* onembed, int ostride, int odist,
                                               cufftType type, int batch, size_t* work_size) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto found = s.plans.find(handle);
  if (found == s.plans.end() || found->second.made) return CUFFT_INVALID_PLAN;
  if (rank < 1 || rank > 3 || n == nullptr || batch < 1 || work_size == nullptr) return CUFFT_INVALID_VALUE;
  if (type != CUFFT_C2C && type != CUFFT_Z2Z && type != CUFFT_R2C && type != CUFFT_D2Z && type != CUFFT_C2R &&
      type != CUFFT_Z2D)
    return CUFFT_INVALID_TYPE;
  // The fake takes the advanced layout only (Kiln always gives it).
  if (inembed == nullptr || onembed == nullptr || istride < 1 || ostride < 1) return CUFFT_INVALID_VALUE;
  FakeFftPlan& record = found->second.record;
  record.handle = handle;
  record.rank = rank;
  int64_t in_count = 1, out_count = 1;
  for (int d = 0; d < rank; ++d) {
    if (n[d] < 1) return CUFFT_INVALID_SIZE;
    const bool last = d == rank - 1;
    const int half = n[d] / 2 + 1;
    const int in_needed = last && (type == CUFFT_C2R || type == CUFFT_Z2D) ? half : n[d];
    const int out_needed = last && (type == CUFFT_R2C || type == CUFFT_D2Z) ? half : n[d];
    if (inembed[d] < in_needed || onembed[d] < out_needed) return CUFFT_INVALID_VALUE;
    record.n[d] = n[d];
    record.inembed[d] = inembed[d];
    record.onembed[d] = onembed[d];
    in_count *= inembed[d];
    out_count *= onembed[d];
  }
  if (idist < in_count * istride || odist < out_count * ostride) return CUFFT_INVALID_VALUE;
  record.istride = istride;
  record.idist = idist;
  record.ostride = ostride;
  record.odist = odist;
  record.type = type;
  record.batch = batch;
  record.auto_allocation = found->second.auto_allocation;
  record.work_bytes = kWorkBytesPerBatch * static_cast<size_t>(batch);
  *work_size = record.work_bytes;
  found->second.made = true;
  s.made.push_back(record);
  return CUFFT_SUCCESS;
}

KILN_FAKE_EXPORT cufftResult cufftSetWorkArea(cufftHandle handle, void* work_area) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto found = s.plans.find(handle);
  if (found == s.plans.end()) return CUFFT_INVALID_PLAN;
  found->second.work_area = work_area;
  return CUFFT_SUCCESS;
}

KILN_FAKE_EXPORT cufftResult cufftSetStream(cufftHandle handle, CUstream stream) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  const auto found = s.plans.find(handle);
  if (found == s.plans.end()) return CUFFT_INVALID_PLAN;
  found->second.stream = stream;
  return CUFFT_SUCCESS;
}

KILN_FAKE_EXPORT cufftResult cufftExecC2C(cufftHandle plan, void* in, void* out, int direction) {
  return Execute(plan, CUFFT_C2C, in, out, direction);
}
KILN_FAKE_EXPORT cufftResult cufftExecZ2Z(cufftHandle plan, void* in, void* out, int direction) {
  return Execute(plan, CUFFT_Z2Z, in, out, direction);
}
KILN_FAKE_EXPORT cufftResult cufftExecR2C(cufftHandle plan, void* in, void* out) {
  return Execute(plan, CUFFT_R2C, in, out, 0);
}
KILN_FAKE_EXPORT cufftResult cufftExecD2Z(cufftHandle plan, void* in, void* out) {
  return Execute(plan, CUFFT_D2Z, in, out, 0);
}
KILN_FAKE_EXPORT cufftResult cufftExecC2R(cufftHandle plan, void* in, void* out) {
  return Execute(plan, CUFFT_C2R, in, out, 0);
}
KILN_FAKE_EXPORT cufftResult cufftExecZ2D(cufftHandle plan, void* in, void* out) {
  return Execute(plan, CUFFT_Z2D, in, out, 0);
}

// Test hooks (fake_cufft.h).
KILN_FAKE_EXPORT int kiln_fake_cufft_plan_count(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.made.size());
}

KILN_FAKE_EXPORT int kiln_fake_cufft_plan(int index, FakeFftPlan* plan) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (index < 0 || static_cast<size_t>(index) >= s.made.size() || plan == nullptr) return 0;
  *plan = s.made[static_cast<size_t>(index)];
  return 1;
}

KILN_FAKE_EXPORT int kiln_fake_cufft_exec_count(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.execs.size());
}

KILN_FAKE_EXPORT int kiln_fake_cufft_exec(int index, FakeFftExec* exec) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (index < 0 || static_cast<size_t>(index) >= s.execs.size() || exec == nullptr) return 0;
  *exec = s.execs[static_cast<size_t>(index)];
  return 1;
}

KILN_FAKE_EXPORT int kiln_fake_cufft_exec_output(int index, void* target, size_t bytes) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (index < 0 || static_cast<size_t>(index) >= s.outputs.size() || target == nullptr) return 0;
  const std::vector<unsigned char>& output = s.outputs[static_cast<size_t>(index)];
  if (output.size() != bytes) return 0;
  std::memcpy(target, output.data(), bytes);
  return 1;
}

KILN_FAKE_EXPORT int kiln_fake_cufft_live_plans(void) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return static_cast<int>(s.plans.size());
}

// Each export has the type cufft_api.h gives its entry point, and none is
// missing: a change to the table fails here, not in a test run.
namespace {
struct CufftTable {
#define KILN_FAKE_TABLE_FIELD(field, symbol, type) std::type_identity_t<type> field;
  KILN_CUFFT_FUNCTIONS(KILN_FAKE_TABLE_FIELD)
#undef KILN_FAKE_TABLE_FIELD
};
#define KILN_FAKE_SAME_TYPE(field, function) \
  static_assert(std::is_same_v<decltype(CufftTable::field), decltype(&function)>, #function);
KILN_FAKE_SAME_TYPE(GetProperty, cufftGetProperty)
KILN_FAKE_SAME_TYPE(Create, cufftCreate)
KILN_FAKE_SAME_TYPE(Destroy, cufftDestroy)
KILN_FAKE_SAME_TYPE(SetAutoAllocation, cufftSetAutoAllocation)
KILN_FAKE_SAME_TYPE(MakePlanMany, cufftMakePlanMany)
KILN_FAKE_SAME_TYPE(SetWorkArea, cufftSetWorkArea)
KILN_FAKE_SAME_TYPE(SetStream, cufftSetStream)
KILN_FAKE_SAME_TYPE(ExecC2C, cufftExecC2C)
KILN_FAKE_SAME_TYPE(ExecZ2Z, cufftExecZ2Z)
KILN_FAKE_SAME_TYPE(ExecR2C, cufftExecR2C)
KILN_FAKE_SAME_TYPE(ExecD2Z, cufftExecD2Z)
KILN_FAKE_SAME_TYPE(ExecC2R, cufftExecC2R)
KILN_FAKE_SAME_TYPE(ExecZ2D, cufftExecZ2D)
#undef KILN_FAKE_SAME_TYPE
static_assert(sizeof(CufftTable) == 13 * sizeof(void*),
              "cufft_api.h lists an entry point the fake cuFFT does not export: add it above");
}  // namespace
