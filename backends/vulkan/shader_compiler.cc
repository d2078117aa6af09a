#include "backends/vulkan/shader_compiler.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <glslang/build_info.h>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

namespace kiln::vulkan {
namespace {

// Bump when what CompileGlslToSpirv does after glslang changes (the float
// controls it declares, the optimiser's passes): SPIR-V cached on disk by
// an earlier Kiln build then misses instead of being reused.
constexpr int kSpirvStepsVersion = 2;

std::atomic<uint64_t> glsl_compilations{0};
std::atomic<uint64_t> warm_up_calls{0};

// glslang's process state is global: initialise it once and never finalise
// (other threads may be compiling at exit).
void InitializeGlslangOnce() {
  static std::once_flag once;
  std::call_once(once, [] { glslang_initialize_process(); });
}

struct ShaderDeleter {
  void operator()(glslang_shader_t* shader) const { glslang_shader_delete(shader); }
};
struct ProgramDeleter {
  void operator()(glslang_program_t* program) const { glslang_program_delete(program); }
};

std::string Text(const char* text) { return text == nullptr ? std::string() : std::string(text); }

Status Failure(std::string_view name, std::string_view stage, const std::string& log,
               std::string_view source) {
  return Internal("vulkan: ", stage, " of GLSL kernel '", name, "' failed:\n", log, "\n",
                  NumberedSource(source));
}

// Validation needs the same target environment as glslang's output; Vulkan
// 1.2 also checks the std430 block layouts the kernels rely on.
constexpr spv_target_env kTargetEnv = SPV_ENV_VULKAN_1_2;

Status Validate(const std::vector<uint32_t>& words, std::string_view name, std::string_view stage,
                std::string_view source) {
  spvtools::SpirvTools tools(kTargetEnv);
  std::string messages;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& position, const char* message) {
        messages += "word " + std::to_string(position.index) + ": " + Text(message) + "\n";
      });
  if (!tools.Validate(words)) return Failure(name, stage, messages, source);
  return OkStatus();
}

// The optimiser's passes: SPIRV-Tools' -O list cut to what the kernels
// glslang makes of Kiln's GLSL need: inlining (the comparator and helper
// functions), locals to SSA, then constant propagation, simplification,
// dead branches and blocks and redundancy elimination, which keep the SPIR-V
// small (the driver compiles and the validator reads it). Left out: the
// second rounds, scalar replacement, loop unrolling, if-conversion and the
// vector, insert, access-chain and load-size passes. Over 464 kernels of
// the conformance corpus the full list took 1531 ms and this one 1048 ms
// (608k words in, 352k and 406k out); the driver optimises again, and
// lavapipe's run times did not change beyond the noise (benchmarks/
// RESULTS.md, "The SPIR-V optimiser's passes").
void RegisterKilnSpirvPasses(spvtools::Optimizer& optimizer) {
  optimizer.RegisterPass(spvtools::CreateMergeReturnPass())
      .RegisterPass(spvtools::CreateInlineExhaustivePass())
      .RegisterPass(spvtools::CreateEliminateDeadFunctionsPass())
      .RegisterPass(spvtools::CreatePrivateToLocalPass())
      .RegisterPass(spvtools::CreateLocalSingleBlockLoadStoreElimPass())
      .RegisterPass(spvtools::CreateLocalSingleStoreElimPass())
      .RegisterPass(spvtools::CreateSSARewritePass())
      .RegisterPass(spvtools::CreateAggressiveDCEPass())
      .RegisterPass(spvtools::CreateCCPPass())
      .RegisterPass(spvtools::CreateSimplificationPass())
      .RegisterPass(spvtools::CreateDeadBranchElimPass())
      .RegisterPass(spvtools::CreateBlockMergePass())
      .RegisterPass(spvtools::CreateAggressiveDCEPass())
      .RegisterPass(spvtools::CreateRedundancyEliminationPass())
      .RegisterPass(spvtools::CreateAggressiveDCEPass());
}

}  // namespace

std::string NumberedSource(std::string_view source) {
  std::ostringstream out;
  int line = 1;
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    out << line++ << ": " << source.substr(start, end - start) << "\n";
    start = end + 1;
  }
  return out.str();
}

namespace {

// glslang keeps unguarded global state (its preprocessor fills function-level
// strings on first use, ThreadSanitizer saw two compiles race on one), so one
// thread at a time runs it; SPIRV-Tools, which has no such state, runs
// concurrently after it.
StatusOr<std::vector<uint32_t>> GlslToUnoptimizedSpirv(std::string_view source, std::string_view name) {
  InitializeGlslangOnce();
  static std::mutex glslang_mutex;
  const std::lock_guard<std::mutex> lock(glslang_mutex);
  const std::string code(source);
  glslang_input_t input = {};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_2;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_5;
  input.code = code.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.force_default_version_and_profile = 0;
  input.forward_compatible = 0;
  input.messages = static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  input.resource = glslang_default_resource();

  std::unique_ptr<glslang_shader_t, ShaderDeleter> shader(glslang_shader_create(&input));
  if (shader == nullptr) return Internal("vulkan: glslang could not create a shader for '", name, "'");
  if (!glslang_shader_preprocess(shader.get(), &input))
    return Failure(name, "preprocessing", Text(glslang_shader_get_info_log(shader.get())), source);
  if (!glslang_shader_parse(shader.get(), &input))
    return Failure(name, "compilation", Text(glslang_shader_get_info_log(shader.get())), source);
  std::unique_ptr<glslang_program_t, ProgramDeleter> program(glslang_program_create());
  glslang_program_add_shader(program.get(), shader.get());
  if (!glslang_program_link(program.get(), input.messages))
    return Failure(name, "linking", Text(glslang_program_get_info_log(program.get())), source);
  glslang_spv_options_t options = {};
  options.disable_optimizer = true;  // SPIRV-Tools optimises below, after validating glslang's output
  glslang_program_SPIRV_generate_with_options(program.get(), GLSLANG_STAGE_COMPUTE, &options);
  std::vector<uint32_t> words(glslang_program_SPIRV_get_size(program.get()));
  glslang_program_SPIRV_get(program.get(), words.data());
  if (const char* messages = glslang_program_SPIRV_get_messages(program.get());
      messages != nullptr && *messages != '\0' && words.empty()) {
    return Failure(name, "SPIR-V generation", messages, source);
  }
  if (words.empty()) return Failure(name, "SPIR-V generation", "no words", source);
  return words;
}

}  // namespace

uint64_t GlslCompilationCount() { return glsl_compilations.load(); }

uint64_t ShaderCompilerWarmUpCalls() { return warm_up_calls.load(); }

void PrepareShaderCompiler() {
  warm_up_calls.fetch_add(1);
  // The same version and stage as every kernel (#version 450, compute):
  // glslang keeps one built-in table per version, profile and stage.
  static constexpr std::string_view kSmallestKernel =
      "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n";
  static std::once_flag once;
  std::call_once(once, [] {
    // A failure here would be glslang's and shows again, with its log, on
    // the first real kernel: nothing to report from the warm-up itself.
    (void)GlslToUnoptimizedSpirv(kSmallestKernel, "shader compiler warm-up");
  });
}

std::string ShaderCompilerIdentity() {
  return "glslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) +
         "." + std::to_string(GLSLANG_VERSION_PATCH) + GLSLANG_VERSION_FLAVOR + ", " +
         Text(spvSoftwareVersionString()) + ", kiln spirv steps " + std::to_string(kSpirvStepsVersion);
}

StatusOr<std::vector<uint32_t>> CompileGlslToSpirv(std::string_view source, std::string_view name,
                                                   const FloatControls& float_controls) {
  glsl_compilations.fetch_add(1);
  KILN_ASSIGN_OR_RETURN(std::vector<uint32_t> words, GlslToUnoptimizedSpirv(source, name));
  return FinishSpirv(std::move(words), name, float_controls, source);
}

StatusOr<std::vector<uint32_t>> FinishSpirv(std::vector<uint32_t> words, std::string_view name,
                                            const FloatControls& float_controls, std::string_view source) {
  if (Status preserved = DeclareFloatControls(words, float_controls); !preserved.ok())
    return Failure(name, "declaring float controls", preserved.message(), source);

  KILN_RETURN_IF_ERROR(Validate(words, name, "validation of glslang's SPIR-V", source));
  spvtools::Optimizer optimizer(kTargetEnv);
  std::string messages;
  optimizer.SetMessageConsumer(
      [&](spv_message_level_t level, const char*, const spv_position_t&, const char* message) {
        if (level <= SPV_MSG_ERROR) messages += Text(message) + "\n";
      });
  RegisterKilnSpirvPasses(optimizer);
  // The optimiser would validate its input again by default: it was just
  // validated above (with a message that names the stage), so it is not.
  spvtools::OptimizerOptions options;
  options.set_run_validator(false);
  std::vector<uint32_t> optimized;
  if (!optimizer.Run(words.data(), words.size(), &optimized, options))
    return Failure(name, "SPIR-V optimisation", messages, source);
  KILN_RETURN_IF_ERROR(Validate(optimized, name, "validation of the optimised SPIR-V", source));
  return optimized;
}

}  // namespace kiln::vulkan
