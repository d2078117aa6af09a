#include "core/index_util.h"

#include <cstring>
#include <limits>

#include "core/literal.h"

namespace kiln {
namespace {

int64_t MemoryExtent(const Shape& shape, int64_t dimension) {
  const auto& padded = shape.layout().padded_dimensions;
  return padded.empty() ? shape.dimensions(dimension) : padded[static_cast<size_t>(dimension)];
}

}  // namespace

int64_t IndexUtil::Stride(const Shape& shape, int64_t dimension) {
  int64_t stride = 1;
  for (int64_t d : shape.layout().minor_to_major) {
    if (d == dimension) break;
    stride *= MemoryExtent(shape, d);
  }
  return stride;
}

int64_t IndexUtil::MultiIndexToLinear(const Shape& shape, std::span<const int64_t> index) {
  int64_t linear = 0;
  int64_t scale = 1;
  for (int64_t d : shape.layout().minor_to_major) {
    linear += index[static_cast<size_t>(d)] * scale;
    scale *= MemoryExtent(shape, d);
  }
  return linear;
}

std::vector<int64_t> IndexUtil::LinearToMultiIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
  for (int64_t d : shape.layout().minor_to_major) {
    const int64_t extent = MemoryExtent(shape, d);
    index[static_cast<size_t>(d)] = linear % extent;
    linear /= extent;
  }
  return index;
}

bool IndexUtil::Bump(const Shape& shape, std::span<int64_t> index) {
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    auto& i = index[static_cast<size_t>(d)];
    if (++i < shape.dimensions(d)) return true;
    i = 0;
  }
  return false;
}

bool IndexUtil::InBounds(const Shape& shape, std::span<const int64_t> index) {
  if (static_cast<int64_t>(index.size()) != shape.rank()) return false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (index[static_cast<size_t>(d)] < 0 || index[static_cast<size_t>(d)] >= shape.dimensions(d))
      return false;
  }
  return true;
}

namespace {

int64_t PhysicalElementCount(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) count *= MemoryExtent(shape, d);
  return count;
}

// Fills a physical buffer with the layout's padding value.
void FillPadding(const Shape& shape, std::span<uint8_t> physical) {
  DispatchElementType(shape.element_type(), [&](auto tag) {
    using T = decltype(tag);
    T value{};
    switch (shape.layout().padding_value) {
      case PaddingValue::kOne: value = ConvertElement<T>(1); break;
      case PaddingValue::kLowest:
        if constexpr (std::is_arithmetic_v<T>) value = std::numeric_limits<T>::lowest();
        break;
      case PaddingValue::kHighest:
        if constexpr (std::is_arithmetic_v<T>) value = std::numeric_limits<T>::max();
        break;
      default: break;
    }
    auto* out = reinterpret_cast<T*>(physical.data());
    for (size_t i = 0; i < physical.size() / sizeof(T); ++i) out[i] = value;
  });
}

}  // namespace

std::vector<uint8_t> RowMajorToLayout(const Shape& shape, std::span<const uint8_t> row_major) {
  const size_t width = static_cast<size_t>(ByteWidth(shape.element_type()));
  std::vector<uint8_t> physical(static_cast<size_t>(PhysicalElementCount(shape)) * width);
  if (shape.HasDefaultLayout()) {
    std::memcpy(physical.data(), row_major.data(), std::min(physical.size(), row_major.size()));
    return physical;
  }
  FillPadding(shape, physical);
  if (shape.element_count() == 0) return physical;
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
  size_t source = 0;
  do {
    const auto target = static_cast<size_t>(IndexUtil::MultiIndexToLinear(shape, index));
    std::memcpy(physical.data() + target * width, row_major.data() + source * width, width);
    ++source;
  } while (IndexUtil::Bump(shape, index));
  return physical;
}

std::vector<uint8_t> LayoutToRowMajor(const Shape& shape, std::span<const uint8_t> physical) {
  const size_t width = static_cast<size_t>(ByteWidth(shape.element_type()));
  std::vector<uint8_t> row_major(static_cast<size_t>(shape.element_count()) * width);
  if (shape.HasDefaultLayout()) {
    std::memcpy(row_major.data(), physical.data(), std::min(physical.size(), row_major.size()));
    return row_major;
  }
  if (shape.element_count() == 0) return row_major;
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
  size_t target = 0;
  do {
    const auto source = static_cast<size_t>(IndexUtil::MultiIndexToLinear(shape, index));
    std::memcpy(row_major.data() + target * width, physical.data() + source * width, width);
    ++target;
  } while (IndexUtil::Bump(shape, index));
  return row_major;
}

}  // namespace kiln
