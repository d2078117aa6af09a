// Element types, shapes and host data crossing the C boundary.
#include <cstring>
#include <limits>

#include "capi/internal.h"

namespace kiln::capi {
namespace {

bool IsKnownArrayType(kiln_element_type_t type) { return type >= KILN_TYPE_PRED && type <= KILN_TYPE_C128; }

}  // namespace

StatusOr<std::span<const int64_t>> IntList(const char* function, const char* name, const int64_t* values,
                                           size_t count) {
  if (count == 0) return std::span<const int64_t>();
  if (values == nullptr) {
    return InvalidArgument(function, ": argument '", name, "' is NULL but its count is ", count);
  }
  return std::span<const int64_t>(values, count);
}

StatusOr<Shape> ArrayShape(const char* function, kiln_element_type_t type, const int64_t* dims, size_t rank,
                           const int64_t* minor_to_major) {
  if (!IsKnownArrayType(type)) {
    return InvalidArgument(function, ": element type ", type,
                           " is not an array element type (expected a KILN_TYPE_* value from PRED to C128)");
  }
  KILN_ASSIGN_OR_RETURN(std::span<const int64_t> sizes, IntList(function, "dims", dims, rank));
  // Overflow of the element count would be undefined behaviour later on, so
  // the byte size must fit in an int64 here.
  int64_t bytes = ByteWidth(static_cast<ElementType>(type));
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      return InvalidArgument(function, ": dimension ", i, " has negative size ", sizes[i]);
    }
    if (sizes[i] != 0 && bytes > std::numeric_limits<int64_t>::max() / sizes[i]) {
      return InvalidArgument(function, ": the array is too large (its byte size overflows 64 bits)");
    }
    bytes *= sizes[i];
  }
  Shape shape(static_cast<ElementType>(type), std::vector<int64_t>(sizes.begin(), sizes.end()));
  if (minor_to_major != nullptr) {
    Layout layout;
    layout.minor_to_major.assign(minor_to_major, minor_to_major + rank);
    shape.set_layout(std::move(layout));
    Status valid = ValidateLayout(shape);
    if (!valid.ok()) return valid.WithContext(function);
  }
  return shape;
}

StatusOr<Literal> LiteralFromHost(const char* function, const Shape& shape, const void* data,
                                  size_t byte_size) {
  const uint64_t expected =
      static_cast<uint64_t>(shape.element_count()) * static_cast<uint64_t>(ByteWidth(shape.element_type()));
  if (byte_size != expected) {
    return InvalidArgument(function, ": host data of ", shape.ToString(), " must be ", expected,
                           " bytes, got byte_size ", byte_size);
  }
  if (data == nullptr && byte_size != 0) return NullArgument(function, "data");
  std::vector<uint8_t> bytes(byte_size);
  if (byte_size != 0) std::memcpy(bytes.data(), data, byte_size);
  // A PRED is a C++ bool inside the core; only 0 and 1 are valid bools.
  if (shape.element_type() == ElementType::kPred) {
    for (uint8_t& byte : bytes) byte = byte != 0 ? 1 : 0;
  }
  StatusOr<Literal> literal = Literal::FromBytes(shape, bytes);
  if (!literal.ok()) return literal.status().WithContext(function);
  return literal;
}

}  // namespace kiln::capi

extern "C" {

const char* kiln_element_type_name(kiln_element_type_t type) {
  if (type < KILN_TYPE_PRED || type > KILN_TYPE_TOKEN) return "invalid";
  // The names are string literals of the core, so data() is NUL-terminated.
  return kiln::ElementTypeName(static_cast<kiln::ElementType>(type)).data();
}

size_t kiln_element_type_byte_width(kiln_element_type_t type) {
  if (type < KILN_TYPE_PRED || type > KILN_TYPE_TOKEN) return 0;
  return static_cast<size_t>(kiln::ByteWidth(static_cast<kiln::ElementType>(type)));
}

}  // extern "C"
