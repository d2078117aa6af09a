#include "core/compiler/emittable_table.h"

namespace kiln::compiler {

ElementTypeSet ElementTypeSet::All() {
  ElementTypeSet set;
  for (int type = static_cast<int>(ElementType::kPred); type <= static_cast<int>(ElementType::kC128); ++type)
    set.Insert(static_cast<ElementType>(type));
  return set;
}

EmittableTable::EmittableTable(std::string backend, std::initializer_list<EmittableRow> rows,
                               InstructionEmittableCheck check, int64_t max_elements)
    : backend_(std::move(backend)), check_(std::move(check)), max_elements_(max_elements) {
  for (size_t i = 0; i < rows_.size(); ++i) rows_[i].opcode = static_cast<Opcode>(i);
  Override(rows);
}

void EmittableTable::Override(std::initializer_list<EmittableRow> rows) {
  for (const EmittableRow& row : rows) Set(row);
}

void EmittableTable::Restrict(ElementTypeSet supported) {
  for (EmittableRow& row : rows_) row.types = row.types.Intersect(supported);
}

Status EmittableTable::Check(const Instruction& instruction) const {
  const EmittableRow& row = rows_[static_cast<size_t>(instruction.opcode)];
  auto refuse = [&](const std::string& why) {
    return Unimplemented(backend_, ": cannot emit ", OpcodeName(instruction.opcode), " ",
                         instruction.shape.ToString(), " (", instruction.name, "): ", why);
  };
  if (row.emittability == Emittability::kNever) return refuse("no kernel of this backend computes it");
  auto check_array = [&](const Shape& shape) -> Status {
    if (!shape.IsArray()) return refuse("its operands and results must be arrays");
    if (!row.types.Contains(shape.element_type()))
      return refuse(std::string("not for element type ") +
                    std::string(ElementTypeName(shape.element_type())));
    if (shape.element_count() > max_elements_)
      return refuse("more than " + std::to_string(max_elements_) + " elements in one array");
    return OkStatus();
  };
  for (const Instruction* operand : instruction.operands) KILN_RETURN_IF_ERROR(check_array(operand->shape));
  if (instruction.shape.IsTuple()) {
    if (!row.tuple_result) return refuse("its result must be one array");
    const std::vector<Shape>& elements = instruction.shape.tuple_shapes();
    if (elements.empty()) return refuse("its result has no arrays");
    for (const Shape& element : elements) KILN_RETURN_IF_ERROR(check_array(element));
  } else {
    KILN_RETURN_IF_ERROR(check_array(instruction.shape));
  }
  const size_t results = instruction.shape.IsTuple() ? instruction.shape.tuple_shapes().size() : 1;
  const auto buffers = static_cast<int64_t>(instruction.operands.size() + results);
  if (buffers > max_kernel_buffers_)
    return refuse("its kernel would bind " + std::to_string(buffers) +
                  " buffers (one per operand and result); this backend binds at most " +
                  std::to_string(max_kernel_buffers_));
  if (row.emittability == Emittability::kAlways) return OkStatus();
  if (!check_)
    return Internal(backend_, ": the emittable table has no check for ", OpcodeName(instruction.opcode));
  return check_(instruction);
}

}  // namespace kiln::compiler
