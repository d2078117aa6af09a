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
#include <functional>
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

// Called with the array's shape as a file's header declares it, before any
// of its data is read; an error stops the read and is returned.
using NpyShapeCheck = std::function<Status(const Shape& declared)>;

// Longest header ReadNpyFile accepts (NumPy's own reader stops at 10000 bytes
// unless told otherwise).
inline constexpr uint64_t kMaxNpyHeaderBytes = uint64_t{1} << 20;

// Reads and parses a file: NOT_FOUND when it cannot be opened, otherwise as
// ReadNpy. Nothing beyond what the header declares is read, so a device such
// as /dev/zero or a pipe that never ends costs no more than a file would:
// a header longer than kMaxNpyHeaderBytes is INVALID_ARGUMENT, data larger
// than MaxFileArrayBytes() (core/resource_limits.h) is RESOURCE_EXHAUSTED,
// and `check` may refuse the declared shape; all before any data is read. A
// regular file whose size disagrees with its header is refused before its
// data is read too.
StatusOr<Literal> ReadNpyFile(const std::string& path, std::optional<ElementType> expected = std::nullopt,
                              const NpyShapeCheck& check = nullptr);

// Serialises an array literal (format 1.0, or 2.0 when the header needs it),
// little-endian, C order. Returns an empty vector for a tuple or token literal,
// which .npy cannot represent; WriteNpyFile reports that as INVALID_ARGUMENT.
std::vector<uint8_t> WriteNpy(const Literal& literal);
Status WriteNpyFile(const Literal& literal, const std::string& path);

}  // namespace kiln
