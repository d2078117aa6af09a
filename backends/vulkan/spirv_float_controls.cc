#include "backends/vulkan/spirv_float_controls.h"

#include <cstddef>

#include <spirv/unified1/spirv.h>

namespace kiln::vulkan {
namespace {

constexpr size_t kHeaderWords = 5;

uint32_t Word(uint32_t word_count, SpvOp opcode) { return (word_count << SpvWordCountShift) | opcode; }

}  // namespace

Status PreserveNanInfSignedZero(std::vector<uint32_t>& words, const NanPreservingWidths& widths) {
  if (words.size() < kHeaderWords || words[0] != SpvMagicNumber)
    return Internal("vulkan: float controls: the shader is not a SPIR-V module");
  bool has_float16 = false, has_float64 = false, has_capability = false;
  bool declared[65] = {};
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
      has_capability |= words[at + 1] == SpvCapabilitySignedZeroInfNanPreserve;
      after_capabilities = at + count;
    } else if (opcode == SpvOpEntryPoint && count >= 3) {
      entry_point = words[at + 2];
      ++entry_points;
      after_modes = at + count;
    } else if (opcode == SpvOpExecutionMode || opcode == SpvOpExecutionModeId) {
      if (count == 4 && words[at + 2] == SpvExecutionModeSignedZeroInfNanPreserve && words[at + 3] <= 64)
        declared[words[at + 3]] = true;
      after_modes = at + count;
    } else if (after_modes != 0) {
      break;  // execution modes precede debug names, annotations and types
    }
    at += count;
  }
  if (entry_points != 1)
    return Internal("vulkan: float controls: the shader has ", entry_points, " entry points, not one");

  std::vector<uint32_t> modes;
  auto want = [&](uint32_t width, bool allowed, bool used) {
    if (!allowed || !used || declared[width]) return;
    modes.insert(modes.end(),
                 {Word(4, SpvOpExecutionMode), entry_point, SpvExecutionModeSignedZeroInfNanPreserve, width});
  };
  want(16, widths.f16, has_float16);
  want(32, widths.f32, true);
  want(64, widths.f64, has_float64);
  if (modes.empty()) return OkStatus();
  // Insert the later position first so the earlier one stays valid.
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(after_modes), modes.begin(), modes.end());
  if (!has_capability) {
    const uint32_t capability[] = {Word(2, SpvOpCapability), SpvCapabilitySignedZeroInfNanPreserve};
    words.insert(words.begin() + static_cast<std::ptrdiff_t>(after_capabilities), std::begin(capability),
                 std::end(capability));
  }
  return OkStatus();
}

}  // namespace kiln::vulkan
