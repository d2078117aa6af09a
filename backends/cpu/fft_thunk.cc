#include "backends/cpu/fft_thunk.h"

#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {

Status FftThunk::Run(ExecutionContext& context) const {
  const void* input = context.slots[inputs_[0]];
  void* output = context.slots[outputs_[0]];
  const IntraOpThreadPool* pool = context.pool;
  if (pool == nullptr || pool->num_threads() == 1) {
    transform_->Run(input, output, nullptr);
  } else {
    transform_->Run(input, output,
                    [pool](int64_t extent, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
                      pool->ParallelFor(extent, grain, body);
                    });
  }
  return OkStatus();
}

}  // namespace kiln::cpu
