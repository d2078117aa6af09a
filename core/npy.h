// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0) as
// array Literals.
//
// Supported dtypes: bool (`b1`), `i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 c8 c16` in
// any byte order (`<`, `>`, `|`, `=`; big-endian data is converted to native
// order), C and Fortran order (Fortran data is converted to row-major). NumPy
// has no bf16 dtype: ml_dtypes' bfloat16 arrays are saved as the two-byte void
// dtype `V2`, so `V2` is read as bf16 only when the caller expects bf16, and
// bf16 literals are written as `<V2`.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/element_type.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln {

// Parses the bytes of a .npy file. `name_for_errors` (usually the path) starts
// every error message. Errors: INVALID_ARGUMENT for a malformed or unsupported
// header, DATA_LOSS for a truncated file. `expected`, when given, only decides
// how an otherwise typeless `V2` array is read (as bf16); it does not check the
// element type of other arrays.
StatusOr<Literal> ReadNpy(std::span<const uint8_t> bytes, const std::string& name_for_errors,
                          std::optional<ElementType> expected);
StatusOr<Literal> ReadNpy(std::span<const uint8_t> bytes, const std::string& name_for_errors);

// Reads and parses a file: NOT_FOUND when it cannot be opened, otherwise as ReadNpy.
StatusOr<Literal> ReadNpyFile(const std::string& path, std::optional<ElementType> expected = std::nullopt);

// Serialises an array literal (format 1.0, or 2.0 when the header needs it),
// little-endian, C order. Returns an empty vector for a tuple or token literal,
// which .npy cannot represent; WriteNpyFile reports that as INVALID_ARGUMENT.
std::vector<uint8_t> WriteNpy(const Literal& literal);
Status WriteNpyFile(const Literal& literal, const std::string& path);

}  // namespace kiln
