// The vulkan backend names the ops it cannot run before compiling (its
// UnsupportedOps, the shared device lowering's rule): a general eigen-
// decomposition (LAPACK geev, which no kernel computes and no expansion
// rewrites, as JAX has none on GPUs either) is refused by name, and
// compiling it is UNIMPLEMENTED naming it; fft, which has an expansion into
// ordinary HLO (core/passes/expansions/), is not refused.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln::vulkan {
namespace {

TEST(VulkanUnsupportedOps, GeneralEigenIsRefusedByNameAndFftIsExpanded) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  ASSERT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[4,4]{1,0} parameter(0)
  eig = (f32[4]{0}, f32[4]{0}, c64[4,4]{0,1}, c64[4,4]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_sgeev_ffi", operand_layout_constraints={f32[4,4]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={compute_left = 78 : ui8, compute_right = 86 : ui8}
  ROOT w = f32[4]{0} get-tuple-element(eig), index=0
})"));
  EXPECT_EQ((*vulkan)->UnsupportedOps(*module), std::vector<std::string>{"custom-call"});
  StatusOr<std::unique_ptr<Executable>> executable = (*vulkan)->Compile(*module, CompileOptions{});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(executable.status().message().find("custom-call"), std::string::npos)
      << executable.status().ToString();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> fft, ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[4,8] parameter(0)
  r = c64[4,5] fft(x), fft_type=RFFT, fft_length={8}
  ROOT n = c64[4,5] negate(r)
})"));
  EXPECT_TRUE((*vulkan)->UnsupportedOps(*fft).empty());
  StatusOr<std::unique_ptr<Executable>> expanded = (*vulkan)->Compile(*fft, CompileOptions{});
  EXPECT_TRUE(expanded.ok()) << expanded.status().ToString();
}

}  // namespace
}  // namespace kiln::vulkan
