#include "core/lowering/registered_op_launch.h"

#include <algorithm>

#include "core/array_leaves.h"
#include "core/lowering/user_op_device_frame.h"

namespace kiln {
bool CallsRegisteredDeviceKernel(const Instruction& instruction, std::string_view backend) {
  if (instruction.opcode != Opcode::kCustomCall) return false;
  if (FindRegisteredOp(instruction.attrs.custom_call_target) == nullptr) return false;
  const ElementType type = KernelElementType(OperandShapes(instruction), instruction.shape);
  return FindOpDeviceKernel(instruction.attrs.custom_call_target, backend, type) != nullptr;
}

StatusOr<RegisteredOpLaunch> PlanRegisteredOpLaunch(const Instruction& call, std::string_view backend,
                                                    uint32_t default_block_size) {
  const std::string& name = call.attrs.custom_call_target;
  std::shared_ptr<const OpDef> def = FindRegisteredOp(name);
  if (call.opcode != Opcode::kCustomCall || def == nullptr)
    return Internal(backend, ": instruction '", call.name, "' is not a call of a registered op");
  const std::vector<Shape> operands = OperandShapes(call);
  const ElementType type = KernelElementType(operands, call.shape);
  RegisteredOpLaunch launch;
  launch.op = name;
  launch.instruction = call.name;
  launch.kernel = FindOpDeviceKernel(name, backend, type);
  if (launch.kernel == nullptr) {
    return Unimplemented("op '", name, "' has no ", backend, " kernel for element type ",
                         ElementTypeName(type), " (instruction '", call.name,
                         "'; kernels: ", DescribeOpKernels(name), ")");
  }
  KILN_ASSIGN_OR_RETURN(AttrList given, ParseAttrDict(call.attrs.backend_config));
  StatusOr<ResolvedOpCall> resolved = ResolveOpCall(*def, operands, given);
  if (!resolved.ok()) return resolved.status().WithContext("instruction '" + call.name + "'");
  AttrList attrs;  // every attribute, definition order
  for (const AttrDef& attr : def->attrs) {
    const AttrValue* value = FindAttr(resolved->attrs, attr.name);
    if (value == nullptr) return Internal("op '", name, "': attribute '", attr.name, "' was not resolved");
    attrs.emplace_back(attr.name, *value);
    if (attr.kind == AttrKind::kInt || attr.kind == AttrKind::kBool) launch.scalar_attrs.push_back(value->i);
  }
  for (const Shape& operand : operands) launch.element_counts.push_back(operand.element_count());
  const std::vector<Shape> results = ArrayLeaves(call.shape);
  for (const Shape& result : results) launch.element_counts.push_back(result.element_count());
  launch.num_args = operands.size();
  launch.num_results = results.size();
  launch.frame = BuildUserOpDeviceFrame(operands, results, attrs);
  launch.block_size = launch.kernel->block_size != 0 ? launch.kernel->block_size : default_block_size;
  if (launch.kernel->grid_size != 0) {
    launch.grid_size = launch.kernel->grid_size;
  } else {
    const int64_t elements = results.empty() ? 0 : results[0].element_count();
    launch.grid_size =
        std::max<uint64_t>(1, (static_cast<uint64_t>(elements) + launch.block_size - 1) / launch.block_size);
  }
  return launch;
}

}  // namespace kiln
