// Bounds on what a caller may ask of the library, in one place so that the C
// ABI and the `kiln` command refuse the same inputs with the same figures.
// Where a bound depends on the machine it is derived from the hardware when
// asked, never hard-coded for the machine the library was built on.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/backend.h"
#include "core/status.h"

namespace kiln {

// Intra-op threads one compile may ask for: kThreadsPerHardwareThread per
// hardware thread, and never fewer than kMinThreadLimit (so a small container
// can still oversubscribe a little).
inline constexpr int kThreadsPerHardwareThread = 4;
inline constexpr int kMinThreadLimit = 16;
// Hardware threads of this machine (std::thread::hardware_concurrency), at least 1.
int HardwareThreads();
int MaxThreads();

// Optimisation levels run from 0 (only what correctness needs) to this.
inline constexpr int kMaxOptimizationLevel = 3;

// Physical memory of this machine in bytes (sysconf), or INT64_MAX when the
// system cannot say.
int64_t PhysicalMemoryBytes();
// The most data bytes one array read from a file may have: reading holds it
// twice for a moment (the file's bytes, then the array), so half the
// physical memory.
int64_t MaxFileArrayBytes();

// INVALID_ARGUMENT from `function` naming `what` (e.g. "num_threads") unless
// 0 <= count <= MaxThreads(); the message gives the limit and how it is made.
Status CheckThreadCount(std::string_view function, std::string_view what, int64_t count);
// Checks the size-like fields of `options` (thread count, optimisation level).
Status CheckCompileOptions(std::string_view function, const CompileOptions& options);

}  // namespace kiln
