// The expansion functions DeviceOpExpansions() lists (core/passes/
// device_op_expansion.h says what each must return), one file per op family.
#pragma once

#include <memory>

#include "core/ir.h"
#include "core/status.h"

namespace kiln {}  // namespace kiln
