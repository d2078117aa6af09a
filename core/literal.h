// Literal: a host value of some shape. Arrays are stored densely in
// row-major (major-to-minor) order whatever the shape's layout says; the
// layout only matters when moving data to or from device memory, where
// IndexUtil converts. Tuples hold one Literal per element.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/element_type.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

class Literal {
 public:
  Literal() = default;
  // A zero-filled array or tuple of zero-filled arrays.
  explicit Literal(const Shape& shape);

  static Literal Tuple(std::vector<Literal> elements);

  template <typename T>
  static Literal Scalar(T value) {
    Literal literal(Shape(TypeOf<T>::value, {}));
    literal.data<T>()[0] = value;
    return literal;
  }
  // An array from row-major values; `dims` empty means a 1-D array.
  template <typename T>
  static Literal FromVector(const std::vector<T>& values, std::vector<int64_t> dims = {}) {
    if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
    Literal literal(Shape(TypeOf<T>::value, std::move(dims)));
    auto out = literal.data<T>();
    for (size_t i = 0; i < values.size() && i < out.size(); ++i) out[i] = values[i];
    return literal;
  }
  // Copies raw row-major bytes; `bytes.size()` must equal the array's size.
  static StatusOr<Literal> FromBytes(const Shape& shape, std::span<const uint8_t> bytes);

  const Shape& shape() const { return shape_; }
  // Replaces the layout metadata (data stays row-major).
  void set_layout(Layout layout) { shape_.set_layout(std::move(layout)); }
  int64_t element_count() const { return shape_.element_count(); }

  // Typed views of array data. T must match the element type (bool for PRED).
  template <typename T>
  std::span<T> data() {
    return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  template <typename T>
  std::span<const T> data() const {
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  std::span<uint8_t> raw() { return bytes_; }
  std::span<const uint8_t> raw() const { return bytes_; }

  template <typename T>
  T Get(std::span<const int64_t> index) const {
    return data<T>()[static_cast<size_t>(LinearIndex(index))];
  }
  template <typename T>
  void Set(std::span<const int64_t> index, T value) {
    data<T>()[static_cast<size_t>(LinearIndex(index))] = value;
  }
  // Row-major linear index of a multi-index.
  int64_t LinearIndex(std::span<const int64_t> index) const;

  // Element `i` (row-major) converted to double / int64 (real part for complex).
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;

  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  std::vector<Literal>& mutable_tuple_elements() { return tuple_; }

  // Flattened array leaves of a tuple literal (copies), in order.
  std::vector<Literal> Leaves() const;

  // Elementwise conversion to another element type, with XLA's convert rules
  // (float->int saturates, NaN->0; int->float rounds to nearest even).
  StatusOr<Literal> Convert(ElementType to) const;
  // Same data, dims changed (element counts must agree).
  StatusOr<Literal> Reshape(std::vector<int64_t> dims) const;

  // Exact equality of shape (layouts ignored) and bits; NaNs compare equal
  // when their bits do.
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // Readable text, e.g. "f32[2,2] {{1, 2}, {3, 4}}"; HLO-style constant body
  // without the shape when `with_shape` is false.
  std::string ToString(bool with_shape = true) const;

 private:
  Shape shape_;
  std::vector<uint8_t> bytes_;
  std::vector<Literal> tuple_;
};

// Converts one value between C++ element types with XLA convert semantics.
template <typename To, typename From>
To ConvertElement(From value);

}  // namespace kiln

#include "core/literal_convert.h"  // IWYU pragma: export
