// The vulkan backend names the ops it cannot run before compiling (its
// UnsupportedOps, the shared device lowering's rule): fft, which no GLSL
// kernel computes, is refused by name, and compiling it is UNIMPLEMENTED
// naming it.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

TEST(VulkanUnsupportedOps, FftIsRefusedByName) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  r = c64[4,5] fft(x), fft_type=RFFT, fft_length={8}
  ROOT n = c64[4,5] negate(r)
})"));
  EXPECT_EQ((*vulkan)->UnsupportedOps(*module), std::vector<std::string>{"fft"});
  StatusOr<std::unique_ptr<Executable>> executable = (*vulkan)->Compile(*module, CompileOptions{});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executable.status().message().find("fft"), std::string::npos) << executable.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> negate, ParseHloModule(R"(HloModule m
ENTRY e {
  x = c64[4,5] parameter(0)
  ROOT n = c64[4,5] negate(x)
})"));
  EXPECT_TRUE((*vulkan)->UnsupportedOps(*negate).empty());
}

}  // namespace
}  // namespace kiln::vulkan
