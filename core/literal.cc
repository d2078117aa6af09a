#include "core/literal.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

namespace kiln {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) tuple_.emplace_back(element);
    return;
  }
  if (shape.IsArray())
    bytes_.assign(static_cast<size_t>(shape.element_count() * ByteWidth(shape.element_type())), 0);
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& element : elements) shapes.push_back(element.shape());
  Literal literal;
  literal.shape_ = Shape::Tuple(std::move(shapes));
  literal.tuple_ = std::move(elements);
  return literal;
}

StatusOr<Literal> Literal::FromBytes(const Shape& shape, std::span<const uint8_t> bytes) {
  if (!shape.IsArray())
    return InvalidArgument("Literal::FromBytes needs an array shape, got ", shape.ToString());
  Literal literal(shape);
  if (bytes.size() != literal.bytes_.size()) {
    return InvalidArgument("expected ", literal.bytes_.size(), " bytes for ", shape.ToString(), ", got ",
                           bytes.size());
  }
  if (!bytes.empty()) std::memcpy(literal.bytes_.data(), bytes.data(), bytes.size());
  return literal;
}

int64_t Literal::LinearIndex(std::span<const int64_t> index) const {
  int64_t linear = 0;
  for (size_t i = 0; i < index.size(); ++i)
    linear = linear * shape_.dimensions(static_cast<int64_t>(i)) + index[i];
  return linear;
}

double Literal::GetAsDouble(int64_t i) const {
  return DispatchElementType(shape_.element_type(), [&](auto tag) -> double {
    using T = decltype(tag);
    const T value = data<T>()[static_cast<size_t>(i)];
    if constexpr (convert_detail::IsComplexT<T>::value) {
      return static_cast<double>(value.real());
    } else {
      return ConvertElement<double>(value);
    }
  });
}

int64_t Literal::GetAsInt64(int64_t i) const {
  return DispatchElementType(shape_.element_type(), [&](auto tag) -> int64_t {
    using T = decltype(tag);
    const T value = data<T>()[static_cast<size_t>(i)];
    if constexpr (std::is_same_v<T, uint64_t>) {
      return static_cast<int64_t>(value);
    } else {
      return ConvertElement<int64_t>(value);
    }
  });
}

std::vector<Literal> Literal::Leaves() const {
  std::vector<Literal> leaves;
  if (!shape_.IsTuple()) {
    leaves.push_back(*this);
    return leaves;
  }
  for (const Literal& element : tuple_) {
    for (Literal& leaf : element.Leaves()) leaves.push_back(std::move(leaf));
  }
  return leaves;
}

StatusOr<Literal> Literal::Convert(ElementType to) const {
  if (!shape_.IsArray() || !IsArrayType(to)) {
    return InvalidArgument("cannot convert ", shape_.ToString(), " to ", ElementTypeName(to));
  }
  Shape out_shape = shape_;
  out_shape.set_element_type(to);
  Literal out(out_shape);
  DispatchElementType(shape_.element_type(), [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchElementType(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      auto src = data<From>();
      auto dst = out.data<To>();
      for (size_t i = 0; i < src.size(); ++i) dst[i] = ConvertElement<To>(src[i]);
    });
  });
  return out;
}

StatusOr<Literal> Literal::Reshape(std::vector<int64_t> dims) const {
  Shape out_shape(shape_.element_type(), std::move(dims));
  if (!shape_.IsArray() || out_shape.element_count() != shape_.element_count()) {
    return InvalidArgument("cannot reshape ", shape_.ToString(), " to ", out_shape.ToString());
  }
  Literal out(out_shape);
  out.bytes_ = bytes_;
  return out;
}

bool Literal::operator==(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (shape_.IsTuple()) return tuple_ == other.tuple_;
  return bytes_ == other.bytes_;
}

namespace {

template <typename T>
void PrintElement(std::ostringstream& out, T value) {
  if constexpr (std::is_same_v<T, bool>) {
    out << (value ? "true" : "false");
  } else if constexpr (convert_detail::IsComplexT<T>::value) {
    out << "(";
    PrintElement(out, value.real());
    out << ", ";
    PrintElement(out, value.imag());
    out << ")";
  } else if constexpr (std::is_integral_v<T>) {
    out << +value;
  } else {
    const double v = static_cast<double>(static_cast<float>(value));
    const double wide = std::is_same_v<T, double> ? static_cast<double>(value) : v;
    if (std::isnan(wide)) {
      out << "nan";
    } else if (std::isinf(wide)) {
      out << (wide < 0 ? "-inf" : "inf");
    } else {
      std::ostringstream tmp;
      tmp << std::setprecision(std::is_same_v<T, double> ? 17 : 9) << wide;
      out << tmp.str();
    }
  }
}

}  // namespace

std::string Literal::ToString(bool with_shape) const {
  std::ostringstream out;
  if (shape_.IsTuple()) {
    out << "(";
    for (size_t i = 0; i < tuple_.size(); ++i) out << (i ? ", " : "") << tuple_[i].ToString(with_shape);
    out << ")";
    return out.str();
  }
  if (!shape_.IsArray()) return shape_.ToString();
  if (with_shape) out << shape_.ToString() << " ";
  const auto& dims = shape_.dimensions();
  DispatchElementType(shape_.element_type(), [&](auto tag) {
    using T = decltype(tag);
    auto values = data<T>();
    if (dims.empty()) {
      PrintElement(out, values[0]);
      return;
    }
    // Walk row-major, opening and closing braces at dimension boundaries.
    const int64_t count = shape_.element_count();
    std::vector<int64_t> index(dims.size(), 0);
    for (size_t d = 0; d < dims.size(); ++d) out << "{";
    if (count == 0) {
      for (size_t d = 0; d < dims.size(); ++d) out << "}";
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      PrintElement(out, values[static_cast<size_t>(i)]);
      // Advance the odometer, counting how many dimensions wrapped.
      size_t wrapped = 0;
      for (size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
        ++wrapped;
      }
      for (size_t w = 0; w < wrapped; ++w) out << "}";
      if (i + 1 < count) {
        out << ", ";
        for (size_t w = 0; w < wrapped; ++w) out << "{";
      }
    }
  });
  return out.str();
}

}  // namespace kiln
