// GLSL compute shaders to SPIR-V for Vulkan: glslang's C API compiles,
// SPIRV-Tools validates, optimises and validates again. Targets Vulkan 1.2 /
// SPIR-V 1.5: with 1.3 glslang writes LocalSizeId, which a device accepts only
// with maintenance4 enabled.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/spirv_float_controls.h"
#include "core/status.h"

namespace kiln::vulkan {

// The module declares the float controls (SignedZeroInfNanPreserve,
// DenormPreserve) for the float widths it uses that `float_controls` allows
// (the device's). INTERNAL on any
// failure, with glslang's (or the validator's) log and the source with
// numbered lines, so that a code-generator bug is easy to find. Thread-safe.
StatusOr<std::vector<uint32_t>> CompileGlslToSpirv(std::string_view source, std::string_view name,
                                                   const FloatControls& float_controls);

// The steps CompileGlslToSpirv takes after glslang, on SPIR-V made
// elsewhere (the library shaders glslc compiled at build time): float
// controls declared for `float_controls`, validated, optimised, validated
// again. INTERNAL naming `name` on any failure, with `source` (what the
// words came from, for the message). Thread-safe.
StatusOr<std::vector<uint32_t>> FinishSpirv(std::vector<uint32_t> words, std::string_view name,
                                            const FloatControls& float_controls, std::string_view source);

// How many GLSL sources CompileGlslToSpirv has compiled in this process
// (what the on-disk kernel cache saves is visible in tests).
uint64_t GlslCompilationCount();

// Makes glslang parse the declarations of its built-in functions (thousands
// of lines of GLSL, parsed on a process's first compile of a compute shader:
// most of the cold compile of a module of few kernels) by compiling a kernel
// that does nothing; not counted by GlslCompilationCount. Thread-safe, and
// at once after the first call has finished. The vulkan backend calls it on
// a thread of its own from its first compile without a disk cache.
void PrepareShaderCompiler();

// How many times PrepareShaderCompiler has been called in this process
// (whether a backend asked for the warm-up is visible in tests).
uint64_t ShaderCompilerWarmUpCalls();

// What, besides the source and the float widths, decides the SPIR-V
// CompileGlslToSpirv makes: glslang's and SPIRV-Tools' versions and the
// version of Kiln's own steps (part of the on-disk cache's keys).
std::string ShaderCompilerIdentity();

// The source with each line prefixed by its number (1-based), as the
// compiler's messages count them.
std::string NumberedSource(std::string_view source);

}  // namespace kiln::vulkan
