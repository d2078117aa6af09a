#include "backends/vulkan/spirv_float_controls.h"

#include <cstddef>

#include <spirv/unified1/spirv.h>

namespace kiln::vulkan {
namespace {

constexpr size_t kHeaderWords = 5;

uint32_t Word(uint32_t word_count, SpvOp opcode) { return (word_count << SpvWordCountShift) | opcode; }

// One execution mode, its capability and the widths it is wanted for.
struct FloatControlMode {
  SpvExecutionMode mode;
  SpvCapability capability;
  FloatWidths widths;
  bool has_capability = false;
  bool declared[65] = {};  // by width
};

}  // namespace

Status DeclareFloatControls(std::vector<uint32_t>& words, const FloatControls& controls) {
  if (words.size() < kHeaderWords || words[0] != SpvMagicNumber)
    return Internal("vulkan: float controls: the shader is not a SPIR-V module");
  FloatControlMode modes[] = {
      {SpvExecutionModeSignedZeroInfNanPreserve, SpvCapabilitySignedZeroInfNanPreserve,
       controls.preserve_nan_inf_signed_zero},
      {SpvExecutionModeDenormPreserve, SpvCapabilityDenormPreserve, controls.preserve_denormals},
  };
  bool has_float16 = false, has_float64 = false;
  uint32_t entry_point = 0;
  int entry_points = 0;
  size_t after_capabilities = kHeaderWords, after_modes = 0;
  for (size_t at = kHeaderWords; at < words.size();) {
    const uint32_t count = words[at] >> SpvWordCountShift;
    const auto opcode = static_cast<SpvOp>(words[at] & SpvOpCodeMask);
    if (count == 0 || at + count > words.size())
      return Internal("vulkan: float controls: a malformed instruction at word ", at);
    if (opcode == SpvOpCapability && count == 2) {
      has_float16 |= words[at + 1] == SpvCapabilityFloat16;
      has_float64 |= words[at + 1] == SpvCapabilityFloat64;
      for (FloatControlMode& mode : modes) mode.has_capability |= words[at + 1] == mode.capability;
      after_capabilities = at + count;
    } else if (opcode == SpvOpEntryPoint && count >= 3) {
      entry_point = words[at + 2];
      ++entry_points;
      after_modes = at + count;
    } else if (opcode == SpvOpExecutionMode || opcode == SpvOpExecutionModeId) {
      for (FloatControlMode& mode : modes) {
        if (count == 4 && words[at + 2] == mode.mode && words[at + 3] <= 64)
          mode.declared[words[at + 3]] = true;
      }
      after_modes = at + count;
    } else if (after_modes != 0) {
      break;  // execution modes precede debug names, annotations and types
    }
    at += count;
  }
  if (entry_points != 1)
    return Internal("vulkan: float controls: the shader has ", entry_points, " entry points, not one");

  std::vector<uint32_t> mode_words, capability_words;
  for (const FloatControlMode& mode : modes) {
    bool added = false;
    auto want = [&](uint32_t width, bool allowed, bool used) {
      if (!allowed || !used || mode.declared[width]) return;
      mode_words.insert(mode_words.end(), {Word(4, SpvOpExecutionMode), entry_point, mode.mode, width});
      added = true;
    };
    want(16, mode.widths.f16, has_float16);
    want(32, mode.widths.f32, true);
    want(64, mode.widths.f64, has_float64);
    if (added && !mode.has_capability)
      capability_words.insert(capability_words.end(), {Word(2, SpvOpCapability), mode.capability});
  }
  // Insert the later position first so the earlier one stays valid.
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(after_modes), mode_words.begin(),
               mode_words.end());
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(after_capabilities), capability_words.begin(),
               capability_words.end());
  return OkStatus();
}

}  // namespace kiln::vulkan
