#include "core/shape.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>

namespace kiln {

std::string Layout::ToString() const {
  std::ostringstream out;
  out << "{";
  for (size_t i = 0; i < minor_to_major.size(); ++i) out << (i ? "," : "") << minor_to_major[i];
  out << "}";
  return out.str();
}

Layout DefaultLayout(int64_t rank) {
  Layout layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

Shape::Shape(ElementType type, std::vector<int64_t> dims)
    : type_(type), dims_(std::move(dims)), layout_(DefaultLayout(static_cast<int64_t>(dims_.size()))) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.type_ = ElementType::kTuple;
  shape.tuple_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.type_ = ElementType::kToken;
  return shape;
}

bool Shape::HasDefaultLayout() const {
  return layout_.padded_dimensions.empty() && layout_.minor_to_major == DefaultLayout(rank()).minor_to_major;
}

namespace {

// Product of sizes; 0 if any is 0 (or negative), INT64_MAX when it overflows,
// so a hostile shape can be refused by size rather than wrap around.
int64_t SaturatingProduct(std::span<const int64_t> sizes, int64_t factor) {
  for (int64_t d : sizes) {
    if (d <= 0) return 0;
  }
  int64_t product = factor;
  for (int64_t d : sizes) {
    if (__builtin_mul_overflow(product, d, &product)) return std::numeric_limits<int64_t>::max();
  }
  return product;
}

}  // namespace

int64_t Shape::element_count() const {
  if (!IsArray()) return 0;
  return SaturatingProduct(dims_, 1);
}

int64_t Shape::byte_size() const {
  if (!IsArray()) return 0;
  const auto& sizes = layout_.padded_dimensions.empty() ? dims_ : layout_.padded_dimensions;
  return SaturatingProduct(sizes, ByteWidth(type_));
}

bool Shape::Compatible(const Shape& other) const {
  if (type_ != other.type_) return false;
  if (IsTuple()) {
    if (tuple_.size() != other.tuple_.size()) return false;
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].Compatible(other.tuple_[i])) return false;
    }
    return true;
  }
  return dims_ == other.dims_;
}

bool Shape::operator==(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (tuple_[i] != other.tuple_[i]) return false;
    }
    return true;
  }
  return !IsArray() || layout_ == other.layout_;
}

std::string Shape::ToString(bool print_layout) const {
  std::ostringstream out;
  if (IsTuple()) {
    out << "(";
    for (size_t i = 0; i < tuple_.size(); ++i) out << (i ? ", " : "") << tuple_[i].ToString(print_layout);
    out << ")";
    return out.str();
  }
  if (IsToken()) return "token[]";
  out << ElementTypeName(type_) << "[";
  for (size_t i = 0; i < dims_.size(); ++i) out << (i ? "," : "") << dims_[i];
  out << "]";
  if (print_layout && IsArray()) out << layout_.ToString();
  return out.str();
}

std::vector<Shape> Shape::Leaves() const {
  std::vector<Shape> leaves;
  if (!IsTuple()) {
    leaves.push_back(*this);
    return leaves;
  }
  for (const Shape& element : tuple_) {
    for (Shape& leaf : element.Leaves()) leaves.push_back(std::move(leaf));
  }
  return leaves;
}

std::string ProgramShape::ToString() const {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < parameters.size(); ++i) out << (i ? ", " : "") << parameters[i].ToString();
  out << ") -> " << result.ToString();
  return out.str();
}

Status ValidateLayout(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) KILN_RETURN_IF_ERROR(ValidateLayout(element));
    return OkStatus();
  }
  if (!shape.IsArray()) return OkStatus();
  const Layout& layout = shape.layout();
  const int64_t rank = shape.rank();
  if (static_cast<int64_t>(layout.minor_to_major.size()) != rank) {
    return InvalidArgument("layout ", layout.ToString(), " of shape ", shape.ToString(),
                           " must list each of the ", rank, " dimensions once");
  }
  // The verifier checks every instruction's shape each time it runs: up to
  // rank 64 the dimensions seen fit a mask, which allocates nothing.
  uint64_t seen_mask = 0;
  std::vector<bool> seen(rank > 64 ? static_cast<size_t>(rank) : 0, false);
  for (int64_t d : layout.minor_to_major) {
    bool repeated = true;
    if (d >= 0 && d < rank && rank <= 64) {
      repeated = (seen_mask >> d & 1) != 0;
      seen_mask |= uint64_t{1} << d;
    } else if (d >= 0 && d < rank) {
      repeated = seen[static_cast<size_t>(d)];
      seen[static_cast<size_t>(d)] = true;
    }
    if (repeated) {
      return InvalidArgument("layout ", layout.ToString(), " of shape ", shape.ToString(),
                             " is not a permutation of the dimensions");
    }
  }
  if (!layout.padded_dimensions.empty()) {
    if (static_cast<int64_t>(layout.padded_dimensions.size()) != rank) {
      return InvalidArgument("padded_dimensions of shape ", shape.ToString(), " must have ", rank,
                             " entries");
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (layout.padded_dimensions[static_cast<size_t>(i)] < shape.dimensions(i)) {
        return InvalidArgument("padded dimension ", i, " of shape ", shape.ToString(),
                               " is smaller than the dimension");
      }
    }
  }
  return OkStatus();
}

StatusOr<int64_t> CanonicalizeDimension(int64_t dimension, int64_t rank, const char* what) {
  const int64_t canonical = dimension < 0 ? dimension + rank : dimension;
  if (canonical < 0 || canonical >= rank) {
    return InvalidArgument(what, ": dimension ", dimension, " is out of range for rank ", rank);
  }
  return canonical;
}

}  // namespace kiln
