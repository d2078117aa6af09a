#include "backends/cpu/onednn_runtime.h"

#ifdef KILN_HAVE_DNNL

#include <dlfcn.h>
#include <sys/mman.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define KILN_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_THREAD_SANITIZER 1
#endif
#endif
#ifdef KILN_THREAD_SANITIZER
#include <sanitizer/tsan_interface.h>
#endif

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

Status PieceErrors::ToStatus(std::string_view operation) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (code_ == StatusCode::kOk) return OkStatus();
  return Status(code_, internal::StrCat(operation, ": oneDNN failed: ", message_));
}

void PieceErrors::Record(StatusCode code, const char* message) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (code_ != StatusCode::kOk) return;
  code_ = code;
  try {
    message_ = message;
  } catch (...) {
    code_ = StatusCode::kResourceExhausted;  // the message did not fit in memory
  }
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

namespace {

struct FreeDeleter {
  void operator()(void* block) const { std::free(block); }
};

// A block of at least `bytes`, 64-byte aligned; from 2 MiB on, aligned to
// and backed by transparent huge pages where the kernel allows them: the
// staged activations of a 3x3 64->64 56x56 batch-8 convolution are 6.4 MiB
// each, and with 4 KiB pages the convolution ran 5% slower.
std::unique_ptr<void, FreeDeleter> AllocateScratch(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t alignment = bytes >= kHugePage ? kHugePage : 64;
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* block = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
#ifdef MADV_HUGEPAGE
  if (block != nullptr && alignment == kHugePage) madvise(block, rounded, MADV_HUGEPAGE);
#endif
  return std::unique_ptr<void, FreeDeleter>(block);
}

}  // namespace

void* ThreadScratch::Get(int slot, size_t bytes) {
  struct Buffer {
    std::unique_ptr<void, FreeDeleter> block;
    size_t bytes = 0;
  };
  thread_local std::array<Buffer, kSlots> buffers;
  Buffer& buffer = buffers[static_cast<size_t>(slot)];
  if (buffer.block == nullptr || buffer.bytes < bytes) {
    buffer.block.reset();  // free the old block before taking a larger one
    buffer.block = AllocateScratch(bytes);
    if (buffer.block == nullptr) throw std::bad_alloc();
    buffer.bytes = bytes;
  }
  return buffer.block.get();
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
