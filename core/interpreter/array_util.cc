#include "core/interpreter/array_util.h"

#include <cstring>

namespace kiln::interpreter {
namespace {

template <int kBytes>
void CopyRun(const uint8_t* source, int64_t stride, int64_t count, uint8_t* destination) {
  if (stride == 1) {
    std::memcpy(destination, source, static_cast<size_t>(count * kBytes));
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(destination + i * kBytes, source + i * stride * kBytes, kBytes);
  }
}

void CopyRunAnyWidth(const uint8_t* source, int64_t stride, int64_t count, uint8_t* destination, int bytes) {
  switch (bytes) {
    case 1: return CopyRun<1>(source, stride, count, destination);
    case 2: return CopyRun<2>(source, stride, count, destination);
    case 4: return CopyRun<4>(source, stride, count, destination);
    case 8: return CopyRun<8>(source, stride, count, destination);
    case 16: return CopyRun<16>(source, stride, count, destination);
    default:
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(destination + i * bytes, source + i * stride * bytes, static_cast<size_t>(bytes));
      }
  }
}

}  // namespace

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

bool NextIndex(std::span<const int64_t> dims, std::span<int64_t> index) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

void StridedCopy(const uint8_t* source, int64_t base, std::span<const int64_t> source_strides,
                 std::span<const int64_t> out_dims, uint8_t* destination, int element_bytes) {
  int64_t total = 1;
  for (int64_t dim : out_dims) total *= dim;
  if (total == 0) return;
  if (out_dims.empty()) {
    std::memcpy(destination, source + base * element_bytes, static_cast<size_t>(element_bytes));
    return;
  }
  const size_t rank = out_dims.size();
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = source_strides[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  const std::span<const int64_t> outer_dims = out_dims.first(rank - 1);
  int64_t offset = base;
  uint8_t* out = destination;
  while (true) {
    CopyRunAnyWidth(source + offset * element_bytes, inner_stride, inner, out, element_bytes);
    out += inner * element_bytes;
    // Odometer over the outer dimensions, updating the source offset.
    size_t d = rank - 1;
    while (d-- > 0) {
      offset += source_strides[d];
      if (++index[d] < outer_dims[d]) break;
      offset -= source_strides[d] * outer_dims[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
}

Literal TransposeLiteral(const Literal& input, std::span<const int64_t> permutation) {
  const Shape& shape = input.shape();
  std::vector<int64_t> out_dims(permutation.size());
  const std::vector<int64_t> in_strides = RowMajorStrides(shape.dimensions());
  std::vector<int64_t> strides(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    out_dims[i] = shape.dimensions(permutation[i]);
    strides[i] = in_strides[static_cast<size_t>(permutation[i])];
  }
  Literal result(Shape(shape.element_type(), out_dims));
  StridedCopy(input.raw().data(), 0, strides, out_dims, result.raw().data(), ByteWidth(shape.element_type()));
  return result;
}

int64_t IndexValue(const Literal& literal, int64_t linear) {
  if (literal.shape().element_type() == ElementType::kU64) {
    const uint64_t value = literal.data<uint64_t>()[static_cast<size_t>(linear)];
    return value > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(value);
  }
  return literal.GetAsInt64(linear);
}

}  // namespace kiln::interpreter
