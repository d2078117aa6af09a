// Float controls written into compiled kernels (SignedZeroInfNanPreserve,
// DenormPreserve): declared for the float widths a module uses and the
// device allows, once, on the entry point, in a module that still
// validates; and the same through CompileGlslToSpirv.
#include "backends/vulkan/spirv_float_controls.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.hpp>

#include "backends/vulkan/shader_compiler.h"

namespace kiln::vulkan {
namespace {

// SignedZeroInfNanPreserve for every width, no DenormPreserve.
constexpr FloatControls kEveryFloatWidth{{true, true, true}, {}};

// A compute shader in SPIR-V assembly; `extra` adds capabilities and types.
std::vector<uint32_t> Assemble(const std::string& capabilities, const std::string& modes = "",
                               const std::string& types = "") {
  const std::string text = "OpCapability Shader\n" + capabilities +
                           "OpMemoryModel Logical GLSL450\n"
                           "OpEntryPoint GLCompute %main \"main\"\n"
                           "OpExecutionMode %main LocalSize 1 1 1\n" +
                           modes + "OpName %main \"main\"\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n" +
                           types +
                           "%main = OpFunction %void None %fn\n%entry = OpLabel\nOpReturn\nOpFunctionEnd\n";
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::vector<uint32_t> words;
  EXPECT_TRUE(tools.Assemble(text, &words)) << text;
  return words;
}

// The module's disassembly, after checking that it validates.
std::string Disassemble(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t&, const char* message) {
    messages += message;
  });
  EXPECT_TRUE(tools.Validate(words)) << messages;
  std::string text;
  EXPECT_TRUE(tools.Disassemble(
      words, &text, SPV_BINARY_TO_TEXT_OPTION_NO_HEADER | SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES));
  return text;
}

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(SpirvFloatControlsTest, DeclaresThirtyTwoBitsForEveryModule) {
  std::vector<uint32_t> words = Assemble("");
  ASSERT_TRUE(DeclareFloatControls(words, kEveryFloatWidth).ok());
  const std::string text = Disassemble(words);
  EXPECT_EQ(Count(text, "OpCapability SignedZeroInfNanPreserve"), 1) << text;
  EXPECT_EQ(Count(text, "OpExecutionMode %main SignedZeroInfNanPreserve 32"), 1) << text;
  EXPECT_EQ(Count(text, "SignedZeroInfNanPreserve 16"), 0) << text;
  EXPECT_EQ(Count(text, "SignedZeroInfNanPreserve 64"), 0) << text;
}

TEST(SpirvFloatControlsTest, DeclaresTheOtherWidthsTheModuleUses) {
  std::vector<uint32_t> words = Assemble("OpCapability Float16\nOpCapability Float64\n", "",
                                         "%half = OpTypeFloat 16\n%double = OpTypeFloat 64\n");
  ASSERT_TRUE(DeclareFloatControls(words, kEveryFloatWidth).ok());
  const std::string text = Disassemble(words);
  for (const char* width : {"16", "32", "64"})
    EXPECT_EQ(Count(text, std::string("OpExecutionMode %main SignedZeroInfNanPreserve ") + width), 1) << text;
  EXPECT_EQ(Count(text, "OpCapability SignedZeroInfNanPreserve"), 1) << text;
}

TEST(SpirvFloatControlsTest, OnlyWhatTheDeviceAllows) {
  std::vector<uint32_t> words = Assemble("OpCapability Float64\n", "", "%double = OpTypeFloat 64\n");
  ASSERT_TRUE(DeclareFloatControls(words, FloatControls{{true, true, false}, {}}).ok());
  std::string text = Disassemble(words);
  EXPECT_EQ(Count(text, "SignedZeroInfNanPreserve 32"), 1) << text;
  EXPECT_EQ(Count(text, "SignedZeroInfNanPreserve 64"), 0) << text;

  std::vector<uint32_t> untouched = Assemble("");
  const std::vector<uint32_t> before = untouched;
  ASSERT_TRUE(DeclareFloatControls(untouched, FloatControls{}).ok());
  EXPECT_EQ(untouched, before) << "a device without float controls gets the module unchanged";
}

TEST(SpirvFloatControlsTest, WhatIsDeclaredAlreadyIsNotRepeated) {
  std::vector<uint32_t> words = Assemble("OpCapability SignedZeroInfNanPreserve\n",
                                         "OpExecutionMode %main SignedZeroInfNanPreserve 32\n");
  const std::vector<uint32_t> before = words;
  ASSERT_TRUE(DeclareFloatControls(words, kEveryFloatWidth).ok());
  EXPECT_EQ(words, before);
}

TEST(SpirvFloatControlsTest, WordsThatAreNoModuleAreAnError) {
  std::vector<uint32_t> empty;
  EXPECT_EQ(DeclareFloatControls(empty, kEveryFloatWidth).code(), StatusCode::kInternal);
  std::vector<uint32_t> truncated = Assemble("");
  truncated.resize(7);
  truncated[5] = (9u << 16) | 17u;  // an OpCapability claiming nine words
  const Status status = DeclareFloatControls(truncated, kEveryFloatWidth);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("malformed instruction at word 5"), std::string::npos) << status.message();
}

TEST(SpirvFloatControlsTest, DenormalsArePreservedForTheWidthsAllowed) {
  std::vector<uint32_t> words = Assemble("OpCapability Float16\nOpCapability Float64\n", "",
                                         "%half = OpTypeFloat 16\n%double = OpTypeFloat 64\n");
  ASSERT_TRUE(DeclareFloatControls(words, FloatControls{{true, true, true}, {false, true, true}}).ok());
  const std::string text = Disassemble(words);
  EXPECT_EQ(Count(text, "OpCapability DenormPreserve"), 1) << text;
  EXPECT_EQ(Count(text, "OpExecutionMode %main DenormPreserve 32"), 1) << text;
  EXPECT_EQ(Count(text, "OpExecutionMode %main DenormPreserve 64"), 1) << text;
  EXPECT_EQ(Count(text, "DenormPreserve 16"), 0) << text;
  for (const char* width : {"16", "32", "64"})
    EXPECT_EQ(Count(text, std::string("OpExecutionMode %main SignedZeroInfNanPreserve ") + width), 1) << text;
  EXPECT_EQ(Count(text, "OpCapability SignedZeroInfNanPreserve"), 1) << text;

  std::vector<uint32_t> nan_only = Assemble("");
  ASSERT_TRUE(DeclareFloatControls(nan_only, kEveryFloatWidth).ok());
  EXPECT_EQ(Count(Disassemble(nan_only), "DenormPreserve"), 0) << "no capability without a mode";

  std::vector<uint32_t> declared =
      Assemble("OpCapability DenormPreserve\n", "OpExecutionMode %main DenormPreserve 32\n");
  const std::vector<uint32_t> before = declared;
  ASSERT_TRUE(DeclareFloatControls(declared, FloatControls{{}, {true, true, true}}).ok());
  EXPECT_EQ(declared, before) << "a module that declares the mode already keeps it once";
}

TEST(SpirvFloatControlsTest, CompiledKernelsCarryTheMode) {
  const std::string source =
      "#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require\n"
      "layout(local_size_x_id = 0) in;\n"
      "layout(std430, set = 0, binding = 0) buffer B { double d[2]; int nan[]; } b;\n"
      "void main() { float x = float(b.d[0]); b.nan[0] = x != x ? 1 : 0; b.d[1] = b.d[0] * 2.0lf; }\n";
  StatusOr<std::vector<uint32_t>> spirv = CompileGlslToSpirv(source, "nan_test", kEveryFloatWidth);
  ASSERT_TRUE(spirv.ok()) << spirv.status().ToString();
  const std::string text = Disassemble(*spirv);
  EXPECT_EQ(Count(text, "SignedZeroInfNanPreserve 32"), 1) << text;
  EXPECT_EQ(Count(text, "SignedZeroInfNanPreserve 64"), 1) << text;
  EXPECT_EQ(Count(text, "OpFUnordNotEqual"), 1) << "the optimiser kept the NaN test\n" << text;

  StatusOr<std::vector<uint32_t>> plain = CompileGlslToSpirv(source, "nan_test", FloatControls{});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(Count(Disassemble(*plain), "SignedZeroInfNanPreserve"), 0);
  EXPECT_EQ(Count(Disassemble(*plain), "DenormPreserve"), 0);

  StatusOr<std::vector<uint32_t>> both = CompileGlslToSpirv(source, "nan_test", kAllFloatControls);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  const std::string both_text = Disassemble(*both);
  EXPECT_EQ(Count(both_text, "OpExecutionMode %main DenormPreserve 32"), 1) << both_text;
  EXPECT_EQ(Count(both_text, "OpExecutionMode %main DenormPreserve 64"), 1) << both_text;
}

}  // namespace
}  // namespace kiln::vulkan
