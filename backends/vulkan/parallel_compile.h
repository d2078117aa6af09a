// Compiling a module's kernels side by side: each kernel's SPIR-V steps
// (SPIRV-Tools' validation and optimisation; glslang itself runs one at a
// time, see shader_compiler.cc) and each pipeline (the driver's own compile)
// are independent, so a module of many kernels compiles on several threads.
// Results are kept in kernel order, so what is made does not depend on the
// thread count.
#pragma once

#include <cstddef>
#include <functional>

#include "core/status.h"

namespace kiln::vulkan {

// Runs task(0) .. task(count - 1), each exactly once, on up to `threads`
// threads (the calling thread among them; 1 or less runs them in order on
// the caller). Every task runs even when one fails; the answer is the error
// of the lowest index that failed, so the error does not depend on timing.
Status RunCompileTasks(size_t count, int threads, const std::function<Status(size_t)>& task);

// How many threads compile one module's kernels: one per hardware thread,
// at most 8, or what SetCompileThreadsForTesting set.
int CompileThreads();

// Fixes CompileThreads() (0 restores the default), so a test can compare a
// serial compile with a parallel one.
void SetCompileThreadsForTesting(int threads);

}  // namespace kiln::vulkan
