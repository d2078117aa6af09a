#include "backends/cpu/onednn_runtime.h"

#ifdef KILN_HAVE_DNNL

#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <vector>

namespace kiln::cpu::onednn {
namespace {

// The OpenMP entry points of the runtime libdnnl itself loaded. Looking them
// up instead of linking an OpenMP library keeps the two from ever differing
// (clang's -fopenmp would bring libomp next to libdnnl's libgomp).
struct OpenMpEntryPoints {
  using SetNumThreads = void (*)(int);
  using GetMaxThreads = int (*)();
  SetNumThreads set_num_threads = nullptr;
  GetMaxThreads get_max_threads = nullptr;
};

const OpenMpEntryPoints& OpenMp() {
  static const OpenMpEntryPoints entry_points = [] {
    OpenMpEntryPoints found;
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    found.set_num_threads =
        reinterpret_cast<OpenMpEntryPoints::SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    found.get_max_threads =
        reinterpret_cast<OpenMpEntryPoints::GetMaxThreads>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    if (found.set_num_threads == nullptr || found.get_max_threads == nullptr) found = {};
#endif
    return found;
  }();
  return entry_points;
}

}  // namespace

const dnnl::engine& CpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(CpuEngine());
  return stream;
}

OmpThreadsScope::OmpThreadsScope(int num_threads) {
  const OpenMpEntryPoints& omp = OpenMp();
  if (omp.set_num_threads == nullptr) return;
  previous_ = omp.get_max_threads();
  omp.set_num_threads(num_threads < 1 ? 1 : num_threads);
}

OmpThreadsScope::~OmpThreadsScope() {
  if (previous_ > 0) OpenMp().set_num_threads(previous_);
}

void* ThreadScratch::Get(int slot, size_t bytes) {
  constexpr size_t kAlignment = 64;
  thread_local std::array<std::vector<unsigned char>, kSlots> buffers;
  std::vector<unsigned char>& buffer = buffers[static_cast<size_t>(slot)];
  if (buffer.size() < bytes + kAlignment) buffer.resize(bytes + kAlignment);
  const uintptr_t address = reinterpret_cast<uintptr_t>(buffer.data());
  return buffer.data() + ((kAlignment - address % kAlignment) % kAlignment);
}

dnnl::memory ThreadScratchpad(size_t bytes) {
  const dnnl::memory::desc description({static_cast<dnnl::memory::dim>(bytes == 0 ? 1 : bytes)},
                                       dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
  return dnnl::memory(description, CpuEngine(), ThreadScratch::Get(0, bytes));
}

dnnl::primitive_attr UserScratchpadAttributes() {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attributes;
}

}  // namespace kiln::cpu::onednn

#endif  // KILN_HAVE_DNNL
