#include "core/identity_custom_calls.h"

namespace kiln {

bool IsIdentityCustomCall(std::string_view target) {
  // Sharding: with_sharding_constraint. SPMDFullToShardShape and
  // SPMDShardToFullShape: the edges of a manually partitioned region
  // (shard_map), whose shapes agree on one device. MoveToHost and
  // MoveToDevice: memory-space transfers, both spaces the host's here.
  static constexpr std::string_view kTargets[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                                                  "MoveToHost", "MoveToDevice"};
  for (std::string_view known : kTargets) {
    if (target == known) return true;
  }
  return false;
}

Status CheckIdentityCustomCall(const Instruction& instruction, std::string_view backend) {
  const std::string& target = instruction.attrs.custom_call_target;
  if (instruction.operands.size() != 1) {
    return InvalidArgument(backend, ": custom-call '", target, "' of instruction '", instruction.name,
                           "' must have one operand, got ", instruction.operands.size());
  }
  const Shape& operand = instruction.operand(0)->shape;
  if (!instruction.shape.Compatible(operand)) {
    return Unimplemented(backend, ": custom-call '", target, "' of instruction '", instruction.name,
                         "' turns ", operand.ToString(), " into ", instruction.shape.ToString(),
                         ": the program is partitioned over several devices, and Kiln runs a program on one "
                         "device; export it for a single device");
  }
  return OkStatus();
}

}  // namespace kiln
