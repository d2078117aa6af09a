// vulkan.corpus_spirv: every conformance program, optimised and fused with
// the Vulkan code generator's rule (an instruction fuses when it is
// emittable on its own), then every fusion computation and every emittable
// instruction compiled to validated SPIR-V. Refusals are counted by op and
// printed, not failed; any compile or validation error fails, and so does a
// corpus where nothing compiled.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/shader_compiler.h"
#include "core/hlo_parser.h"
#include "core/passes/pipeline.h"
#include "core/single_instruction.h"

namespace kiln::vulkan {
namespace {

constexpr NanPreservingWidths kEveryWidth{true, true, true};

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
    options.can_fuse = [&](const Instruction& instruction) {
      return CheckGlslEmittable(*SingleInstructionComputation(instruction, "single"), features).ok();
    };
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

}  // namespace
}  // namespace kiln::vulkan
