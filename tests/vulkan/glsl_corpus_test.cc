// vulkan.corpus_spirv: every conformance program, optimised and fused with
// the Vulkan code generator's rule (an instruction fuses when its emittable
// table accepts it alone), then every fusion computation and every emittable
// instruction compiled to validated SPIR-V. Refusals are counted by op and
// printed, not failed; any compile or validation error fails, and so does a
// corpus where nothing compiled. Then: the table answers as
// CheckGlslEmittable does on each instruction's own computation, for
// several devices, and the device passes build no such computation.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_emittable.h"
#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/shader_compiler.h"
#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "core/passes/pipeline.h"
#include "core/single_instruction.h"
#include "tests/unit/emittable_agreement.h"

namespace kiln::vulkan {
namespace {

constexpr FloatControls kEveryWidth = kAllFloatControls;

// The opcode a refusal names ("vulkan: cannot emit OP ...").
std::string RefusedOp(const Status& status) {
  const std::string prefix = "vulkan: cannot emit ";
  const std::string& message = status.message();
  if (message.rfind(prefix, 0) != 0) return "?";
  return message.substr(prefix.size(), message.find(' ', prefix.size()) - prefix.size());
}

TEST(CorpusSpirv, EveryEmittableKernelCompiles) {
  const char* corpus = std::getenv("KILN_CORPUS_DIR");
  ASSERT_NE(corpus, nullptr) << "KILN_CORPUS_DIR names tests/conformance/corpus";
  std::vector<std::filesystem::path> programs;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    if (std::filesystem::exists(entry.path() / "module.hlo")) programs.push_back(entry.path());
  }
  std::sort(programs.begin(), programs.end());
  ASSERT_FALSE(programs.empty());
  const ShaderFeatures features = AllShaderFeatures();
  const std::shared_ptr<const compiler::EmittableTable> table = MakeGlslEmittableTable(features);
  int compiled = 0, fusions = 0;
  std::map<std::string, int> refused;
  std::map<std::string, std::string> example;
  for (const std::filesystem::path& program : programs) {
    std::ifstream file(program / "module.hlo");
    std::stringstream text;
    text << file.rdbuf();
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text.str());
    ASSERT_TRUE(module.ok()) << program << ": " << module.status().ToString();
    PipelineOptions options;
    options.can_fuse = [table](const Instruction& instruction) { return table->Check(instruction).ok(); };
    Status passes = RunOptimizationPipeline(**module, options);
    ASSERT_TRUE(passes.ok()) << program << ": " << passes.ToString();
    int kernel = 0;
    auto compile = [&](const Computation& computation, const std::string& what) {
      StatusOr<GlslKernel> glsl = EmitGlslKernel(computation, features, "k" + std::to_string(kernel++));
      if (!glsl.ok()) {
        const std::string op = RefusedOp(glsl.status());
        ++refused[op];
        example.emplace(op, glsl.status().message());
        return;
      }
      StatusOr<std::vector<uint32_t>> spirv = CompileGlslToSpirv(glsl->source, glsl->name, kEveryWidth);
      EXPECT_TRUE(spirv.ok()) << program.filename() << " " << what << ": " << spirv.status().ToString();
      if (spirv.ok()) ++compiled;
    };
    for (const auto& computation : (*module)->computations()) {
      for (const auto& instruction : computation->instructions()) {
        if (instruction->opcode == Opcode::kFusion) {
          ++fusions;
          compile(*instruction->called[0], "fusion " + instruction->name);
          continue;
        }
        switch (instruction->opcode) {
          case Opcode::kParameter:
          case Opcode::kConstant:
          case Opcode::kTuple:
          case Opcode::kGetTupleElement:
          case Opcode::kWhile:
          case Opcode::kConditional:
          case Opcode::kCall:
          case Opcode::kAfterAll:
          case Opcode::kOptimizationBarrier: continue;  // not kernels: the lowering runs or forwards them
          default: break;
        }
        if (computation.get() != (*module)->entry() && !computation->name().empty()) {
          // Instructions of reducers and fused bodies are emitted inside their users.
          bool top_level = false;
          for (const auto& other : (*module)->computations()) {
            for (const auto& user : other->instructions()) {
              if ((user->opcode == Opcode::kWhile || user->opcode == Opcode::kConditional ||
                   user->opcode == Opcode::kCall) &&
                  std::find(user->called.begin(), user->called.end(), computation.get()) !=
                      user->called.end())
                top_level = true;
            }
          }
          if (!top_level) continue;
        }
        compile(*SingleInstructionComputation(*instruction, "single"), "instruction " + instruction->name);
      }
    }
  }
  std::cout << "vulkan corpus: " << programs.size() << " programs, " << compiled
            << " kernels compiled to SPIR-V (" << fusions << " fusions)\n";
  for (const auto& [op, count] : refused)
    std::cout << "  refused " << op << ": " << count << "  e.g. " << example[op] << "\n";
  EXPECT_GT(compiled, 0) << "nothing compiled";
}

// lavapipe's limits (an invocation stops after 65535 loop iterations), and a
// device without 64-bit or 8/16-bit types, beside everything on.
std::vector<std::pair<std::string, ShaderFeatures>> EmittableTestDevices() {
  ShaderFeatures lavapipe = AllShaderFeatures();
  lavapipe.max_loop_iterations = 65535;
  ShaderFeatures narrow = lavapipe;
  narrow.f64 = narrow.i64 = narrow.storage8 = narrow.storage16 = narrow.f16 = false;
  return {{"all", AllShaderFeatures()}, {"lavapipe", lavapipe}, {"narrow", narrow}};
}

TEST(CorpusSpirv, EmittableTableAgreesWithCheckGlslEmittableOnEveryInstruction) {
  const std::vector<std::unique_ptr<Module>> modules = kiln::testing::CorpusModules();
  ASSERT_GT(modules.size(), 100u);
  for (const auto& [name, features] : EmittableTestDevices()) {
    SCOPED_TRACE(name);
    const kiln::testing::Agreement agreement = kiln::testing::ExpectTableAgreesWithKernelCheck(
        *MakeGlslEmittableTable(features),
        [&features](const Computation& kernel) { return CheckGlslEmittable(kernel, features); }, modules);
    EXPECT_GT(agreement.instructions, 10000);
    EXPECT_GT(agreement.refused, 100);
  }
}

TEST(CorpusSpirv, DevicePassesBuildNoComputationPerInstruction) {
  std::vector<std::unique_ptr<Module>> modules = kiln::testing::CorpusModules();
  ASSERT_FALSE(modules.empty());
  ShaderFeatures lavapipe = AllShaderFeatures();
  lavapipe.max_loop_iterations = 65535;
  const StepLoweringRules rules = VulkanLoweringRules(lavapipe, 256);
  const int64_t before = SingleInstructionComputationsBuilt();
  int fusions = 0;
  for (const auto& module : modules) {
    ASSERT_TRUE(RunDevicePasses(*module, 2, rules).ok()) << module->name();
    for (const auto& computation : module->computations()) {
      for (const auto& instruction : computation->instructions())
        fusions += instruction->opcode == Opcode::kFusion;
    }
  }
  EXPECT_EQ(SingleInstructionComputationsBuilt(), before);
  EXPECT_GT(fusions, 100);
}

}  // namespace
}  // namespace kiln::vulkan
