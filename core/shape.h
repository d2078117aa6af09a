// Shapes and layouts (XLA semantics): arrays with an element type, dimensions
// and a layout; tuples of shapes; tokens.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/element_type.h"
#include "core/status.h"

namespace kiln {

// What fills padded elements of a padded layout.
enum class PaddingValue : int { kInvalid = 0, kZero, kOne, kLowest, kHighest, kUnknown };

// How an array's elements are laid out in linear memory.
// `minor_to_major[0]` is the fastest-varying dimension. When
// `padded_dimensions` is non-empty it has one entry per dimension, each >= the
// logical size, and the array occupies that padded box in memory.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<int64_t> padded_dimensions;
  PaddingValue padding_value = PaddingValue::kInvalid;

  bool operator==(const Layout&) const = default;
  // "{1,0}" as HLO text prints it.
  std::string ToString() const;
};

class Shape {
 public:
  Shape() = default;
  // An array shape with the default (major-to-minor) layout.
  Shape(ElementType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Scalar(ElementType type) { return Shape(type, {}); }

  ElementType element_type() const { return type_; }
  bool IsArray() const { return IsArrayType(type_); }
  bool IsTuple() const { return type_ == ElementType::kTuple; }
  bool IsToken() const { return type_ == ElementType::kToken; }
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimensions(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  std::vector<int64_t>& mutable_dimensions() { return dims_; }
  void set_element_type(ElementType type) { type_ = type; }

  const Layout& layout() const { return layout_; }
  Layout& mutable_layout() { return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  // True when the layout is the default major-to-minor one with no padding.
  bool HasDefaultLayout() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_[static_cast<size_t>(i)]; }

  // Number of logical elements (1 for a scalar); 0 for tuples and tokens.
  // Saturates at INT64_MAX instead of overflowing.
  int64_t element_count() const;
  // Bytes of a dense array in its layout (padded box if padded).
  int64_t byte_size() const;

  // Equal element type and dimensions (recursively for tuples); layouts ignored.
  bool Compatible(const Shape& other) const;
  // Compatible and equal layouts.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

  // "f32[2,3]" (no layout) or "f32[2,3]{1,0}" (with layout); tuples as "(f32[], s32[4])".
  std::string ToString(bool print_layout = false) const;

  // Flattened array leaves of a (possibly nested) tuple, in order.
  std::vector<Shape> Leaves() const;

 private:
  ElementType type_ = ElementType::kInvalid;
  std::vector<int64_t> dims_;
  Layout layout_;
  std::vector<Shape> tuple_;
};

// Signature of a computation: parameter shapes and result shape.
struct ProgramShape {
  std::vector<Shape> parameters;
  std::vector<std::string> parameter_names;
  Shape result;
  std::string ToString() const;
};

// The default major-to-minor layout for a rank: {rank-1, ..., 0}.
Layout DefaultLayout(int64_t rank);

// Checks a layout against a shape: a permutation of the dimensions, padded
// dims (if any) one per dimension and not smaller than the logical size.
Status ValidateLayout(const Shape& shape);

// Canonicalises a possibly negative dimension number against `rank`, as the
// ops that accept negative dimensions do: -1 is the last dimension.
StatusOr<int64_t> CanonicalizeDimension(int64_t dimension, int64_t rank, const char* what);

}  // namespace kiln
