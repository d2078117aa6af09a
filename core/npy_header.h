// The header of a .npy file: a Python dict literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
// Only the subset NumPy writes is accepted: exactly the keys descr (a string),
// fortran_order (True/False) and shape (a tuple of non-negative integers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace kiln {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Errors are INVALID_ARGUMENT describing what was wrong, without a file name
// (the caller adds it).
StatusOr<NpyHeader> ParseNpyHeader(std::string_view text);

// The dict text NumPy would write (no padding, no trailing newline); quotes
// and backslashes in descr are escaped, so ParseNpyHeader reads it back.
std::string FormatNpyHeader(const NpyHeader& header);

}  // namespace kiln
