#include "backends/vulkan/nan_sensitive_ops.h"

#include <cstdlib>
#include <cstring>
#include <set>

namespace kiln::vulkan {
namespace {

// The ops HLO defines through NaN or infinities, and why: what a driver that
// assumes no NaN may fold. Each reads the float type of its first operand.
struct NanSensitiveOp {
  Opcode opcode;
  const char* why;
};
constexpr NanSensitiveOp kNanSensitiveOps[] = {
    {Opcode::kMaximum, "propagates NaN operands"},       {Opcode::kMinimum, "propagates NaN operands"},
    {Opcode::kClamp, "propagates NaN operands"},         {Opcode::kCompare, "compares NaN as unordered"},
    {Opcode::kIsFinite, "tests for NaN and infinities"}, {Opcode::kTopK, "orders NaN"},
};

// The width (32 or 64) a float element type is computed in on the device
// (f16 and bf16 as float, glsl_types.h), or 0 for non-floats.
int ComputeWidth(ElementType type) {
  switch (type) {
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kC64: return 32;
    case ElementType::kF64:
    case ElementType::kC128: return 64;
    default: return 0;
  }
}

bool Preserves(int width, const ShaderFeatures& features) {
  return width == 64 ? features.preserves_nan_f64 : features.preserves_nan_f32;
}

int OperandWidth(const Instruction& instruction) {
  if (instruction.operands.empty() || !instruction.operand(0)->shape.IsArray()) return 0;
  return ComputeWidth(instruction.operand(0)->shape.element_type());
}

}  // namespace

const char* NanSensitivity(const Instruction& instruction, const ShaderFeatures& features) {
  for (const NanSensitiveOp& op : kNanSensitiveOps) {
    if (op.opcode != instruction.opcode) continue;
    const int width = OperandWidth(instruction);
    return width != 0 && !Preserves(width, features) ? op.why : nullptr;
  }
  return nullptr;
}

Status CheckNanPreservation(const Module& module, const ShaderFeatures& features, std::string_view device,
                            bool allow_unsafe) {
  if (allow_unsafe) return OkStatus();
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const char* why = NanSensitivity(*instruction, features);
      if (why == nullptr) continue;
      const int width = OperandWidth(*instruction);
      return Unimplemented(
          "vulkan: ", OpcodeName(instruction->opcode), " ", instruction->shape.ToString(), " (",
          instruction->name, " in ", computation->name(), ") ", why, ", but the device ", device,
          " cannot keep NaN and infinities in ", width, "-bit floats (no shaderSignedZeroInfNanPreserveFloat",
          width,
          ", VK_KHR_shader_float_controls), so its driver may fold NaN tests away; run it on "
          "another backend, or compile it anyway with the compile option allow_unsafe_nan_math "
          "(kiln_compile_options_t.allow_unsafe_nan_math = 1; kiln run --allow-unsafe-nan-math; or the "
          "environment variable KILN_VULKAN_ALLOW_NAN_UNSAFE=1): results with NaN or infinities may then "
          "be wrong");
    }
  }
  return OkStatus();
}

std::vector<std::string> NanSensitiveOps(const Module& module, const ShaderFeatures& features) {
  std::set<std::string> names;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (NanSensitivity(*instruction, features) != nullptr)
        names.insert(std::string(OpcodeName(instruction->opcode)));
    }
  }
  return {names.begin(), names.end()};
}

bool NanUnsafeAllowedByEnvironment() {
  const char* value = std::getenv("KILN_VULKAN_ALLOW_NAN_UNSAFE");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace kiln::vulkan
