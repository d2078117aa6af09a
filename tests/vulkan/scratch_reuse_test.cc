// A Vulkan program's temporaries share scratch bytes when they are never
// live together (the shared buffer assignment,
// core/compiler/buffer_assignment.h), and the reused bytes give the
// interpreter's results on lavapipe.
#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_program.h"
#include "core/hlo_parser.h"
#include "tests/vulkan/interpreter_agreement.h"

namespace kiln::vulkan {
namespace {

// Six dots in a chain (dots are never fused): five temporaries of 16 KiB.
constexpr char kDotChain[] = R"(HloModule dot_chain
ENTRY e {
  x = f32[64,64] parameter(0)
  w = f32[64,64] parameter(1)
  d1 = f32[64,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[64,64] dot(d1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[64,64] dot(d2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d4 = f32[64,64] dot(d3, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d5 = f32[64,64] dot(d4, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d6 = f32[64,64] dot(d5, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(VulkanScratchReuse, AChainOfDotsHoldsTwoTemporariesOfScratch) {
  auto module = ParseHloModule(kDotChain);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ShaderFeatures lavapipe = AllShaderFeatures();
  lavapipe.max_loop_iterations = 65535;
  StatusOr<std::unique_ptr<VulkanProgram>> program = CompileForVulkan(
      **module, lavapipe, /*offset_alignment=*/256, /*optimization_level=*/2, "", "", nullptr);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  constexpr int64_t kArray = 64 * 64 * sizeof(float);
  EXPECT_EQ((*program)->scratch_bytes, 2 * kArray) << "with a range per temporary it was 5 * " << kArray;

  std::vector<float> x(64 * 64), w(64 * 64);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 8.0f;
    w[i] = static_cast<float>(static_cast<int>((i * 7) % 11) - 5) / 64.0f;
  }
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromVector<float>(x, {64, 64}));
  arguments.push_back(Literal::FromVector<float>(w, {64, 64}));
  ExpectVulkanAgreesWithInterpreter(**module, arguments, "dot chain");
}

}  // namespace
}  // namespace kiln::vulkan
