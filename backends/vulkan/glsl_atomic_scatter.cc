#include "backends/vulkan/glsl_atomic_scatter.h"

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "core/reducer.h"

namespace kiln::vulkan {
namespace {

// The atomic instruction that is `opcode` on 32-bit integers; empty for
// the others.
std::string IntegerAtomicInstruction(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return "atomicAdd";
    case Opcode::kMinimum: return "atomicMin";
    case Opcode::kMaximum: return "atomicMax";
    case Opcode::kAnd: return "atomicAnd";
    case Opcode::kOr: return "atomicOr";
    case Opcode::kXor: return "atomicXor";
    default: return "";
  }
}

}  // namespace

AtomicScatterPlan PlanAtomicScatter(const Instruction& scatter, const ShaderFeatures& features) {
  AtomicScatterPlan plan;
  if (scatter.opcode != Opcode::kScatter || scatter.operands.size() != 3 || scatter.called.size() != 1 ||
      scatter.called[0] == nullptr || !scatter.shape.IsArray())
    return plan;
  const ElementType type = scatter.shape.element_type();
  if (type != ElementType::kF32 && type != ElementType::kS32 && type != ElementType::kU32) return plan;
  if (scatter.operand(0)->shape.element_type() != type || scatter.operand(2)->shape.element_type() != type)
    return plan;
  const Computation& combiner = *scatter.called[0];
  if (combiner.parameters().size() != 2 || combiner.root() == nullptr) return plan;
  for (const Instruction* parameter : combiner.parameters()) {
    if (!parameter->shape.IsArray() || parameter->shape.rank() != 0 ||
        parameter->shape.element_type() != type)
      return plan;
  }
  const Instruction& root = *combiner.root();
  if (!root.shape.IsArray() || root.shape.rank() != 0 || root.shape.element_type() != type) return plan;
  // The atomic instructions below are of commutative ops only, so either
  // order of the parameters is the same.
  const std::optional<Opcode> opcode = BinaryCombinerOpcode(combiner);
  plan.type = type;
  plan.storage_type = type == ElementType::kS32 ? "int" : "uint";
  if (type == ElementType::kF32) {
    if (opcode == Opcode::kAdd && features.float32_atomic_add) {
      plan.kind = ScatterAtomicKind::kInstruction;
      plan.instruction = "atomicAdd";
      plan.storage_type = "float";
      plan.needs_float_atomic_extension = true;
      return plan;
    }
    plan.kind = ScatterAtomicKind::kCompareSwap;
    return plan;
  }
  const std::string instruction = opcode.has_value() ? IntegerAtomicInstruction(*opcode) : "";
  if (!instruction.empty()) {
    plan.kind = ScatterAtomicKind::kInstruction;
    plan.instruction = instruction;
    return plan;
  }
  plan.kind = ScatterAtomicKind::kCompareSwap;
  return plan;
}

std::string AtomicScatterGlobals() {
  return "layout(push_constant) uniform ScatterPass { uint mode; } k_pass;\n";
}

std::string AtomicScatterStored(const AtomicScatterPlan& plan, const std::string& value) {
  if (plan.type == ElementType::kF32 && plan.storage_type == "uint") return "floatBitsToUint(" + value + ")";
  return value;
}

std::string AtomicScatterCombine(const AtomicScatterPlan& plan, const std::string& element,
                                 const std::string& value, const std::string& combine,
                                 const std::string& indent) {
  if (plan.kind == ScatterAtomicKind::kInstruction)
    return indent + plan.instruction + "(" + element + ", " + value + ");\n";
  // Read the element, combine, and store the result only if the element
  // still holds what was read; else combine again with what it now holds.
  // Bits are compared, so a NaN does not loop forever.
  const bool bits = plan.storage_type == "uint" && plan.type == ElementType::kF32;
  const std::string& s = plan.storage_type;
  const std::string as_value = bits ? "uintBitsToFloat(k_seen)" : "k_seen";
  return indent + "{\n" + indent + "  " + s + " k_seen = " + element + ";\n" + indent + "  for (;;) {\n" +
         indent + "    " + s +
         " k_want = " + AtomicScatterStored(plan, combine + "(" + as_value + ", " + value + ")") + ";\n" +
         indent + "    " + s + " k_was = atomicCompSwap(" + element + ", k_seen, k_want);\n" + indent +
         "    if (k_was == k_seen) break;\n" + indent + "    k_seen = k_was;\n" + indent + "  }\n" + indent +
         "}\n";
}

std::string AtomicScatterMain(int64_t outputs, int64_t updates, const std::string& copy_body,
                              const std::string& update_body) {
  auto loop = [](int64_t count, const std::string& body) {
    return "    for (uint k_g = gl_GlobalInvocationID.x; k_g < " + std::to_string(count) +
           "u; k_g += k_stride) {\n      int k_i = int(k_g);\n" + body + "    }\n";
  };
  return "void main() {\n  uint k_stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n  if (k_pass.mode == " +
         std::to_string(kAtomicScatterCopyMode) + "u) {\n" + loop(outputs, copy_body) + "  } else {\n" +
         loop(updates, update_body) + "  }\n}\n";
}

std::vector<KernelLaunch> AtomicScatterLaunches(int64_t outputs, int64_t updates, int64_t workgroup_size) {
  return {KernelLaunch{LinearGrid(outputs, workgroup_size, kGlslMaxWorkgroups), {kAtomicScatterCopyMode}},
          KernelLaunch{LinearGrid(updates, workgroup_size, kGlslMaxWorkgroups), {kAtomicScatterUpdateMode}}};
}

}  // namespace kiln::vulkan
