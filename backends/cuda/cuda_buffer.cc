#include "backends/cuda/cuda_buffer.h"

#include "core/lowering/step_program.h"

namespace kiln::cuda {

StatusOr<std::unique_ptr<CudaBuffer>> CudaBuffer::FromLiteral(const Literal& literal, Device* device,
                                                              std::shared_ptr<DeviceMemory> memory) {
  const int64_t bytes = DenseBytes(literal.shape());
  if (static_cast<int64_t>(literal.raw().size()) != bytes) {
    return InvalidArgument("cuda: literal of ", literal.shape().ToString(), " holds ", literal.raw().size(),
                           " bytes, expected ", bytes);
  }
  DeviceBlock block;
  if (bytes > 0) {
    KILN_ASSIGN_OR_RETURN(block, DeviceBlock::Allocate(memory, bytes));
    KILN_RETURN_IF_ERROR(memory->MakeCurrent());
    KILN_RETURN_IF_ERROR(memory->driver().Check(
        memory->driver().api().MemcpyHtoD(block.address(), literal.raw().data(), static_cast<size_t>(bytes)),
        "cuMemcpyHtoD"));
  }
  return std::make_unique<CudaBuffer>(literal.shape(), device, std::move(memory), std::move(block));
}

StatusOr<Literal> CudaBuffer::ToLiteral() const {
  Literal literal(shape());
  const int64_t bytes = DenseBytes(shape());
  if (bytes > 0) {
    KILN_RETURN_IF_ERROR(memory_->MakeCurrent());
    KILN_RETURN_IF_ERROR(memory_->driver().Check(
        memory_->driver().api().MemcpyDtoH(literal.raw().data(), address(), static_cast<size_t>(bytes)),
        "cuMemcpyDtoH"));
  }
  literal.set_layout(shape().layout());
  return literal;
}

}  // namespace kiln::cuda
