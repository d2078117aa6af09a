#include "core/interpreter/tape.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "core/tape_custom_calls.h"

namespace kiln::interpreter {
namespace {

int64_t ArrayBytes(const Shape& shape) { return shape.element_count() * ByteWidth(shape.element_type()); }

}  // namespace

StatusOr<Literal> Tapes::Evaluate(const Instruction& instruction, Operands operands) {
  KILN_RETURN_IF_ERROR(CheckTapeCustomCall(instruction, "interpreter"));
  KILN_ASSIGN_OR_RETURN(int64_t number, TapeNumber(instruction));
  if (operands.empty() || operands.size() != instruction.operands.size()) {
    return Internal("tape custom call '", instruction.name, "' got ", operands.size(), " operands");
  }
  const int32_t counter = operands[0]->data<int32_t>()[0];
  Tape& tape = tapes_[number];
  if (instruction.attrs.custom_call_target == kTapePushTarget) {
    KILN_RETURN_IF_ERROR(Push(tape, operands.subspan(1)));
    return Literal::Scalar<int32_t>(counter + 1);
  }
  return Pop(tape, instruction, counter);
}

Status Tapes::Push(Tape& tape, Operands values) {
  int64_t bytes = 0;
  for (const Literal* value : values) bytes += static_cast<int64_t>(value->raw().size());
  if (tape.size + bytes > tape.capacity) {
    // Doubling: the copies over all pushes cost less than twice the bytes pushed.
    const int64_t capacity = std::max(tape.size + bytes, 2 * tape.capacity);
    auto grown = std::make_unique<uint8_t[]>(static_cast<size_t>(capacity));
    if (tape.size > 0) std::memcpy(grown.get(), tape.data.get(), static_cast<size_t>(tape.size));
    tape.data = std::move(grown);
    statistics_.capacity_bytes += capacity - tape.capacity;
    tape.capacity = capacity;
    statistics_.peak_capacity_bytes = std::max(statistics_.peak_capacity_bytes, statistics_.capacity_bytes);
  }
  for (const Literal* value : values) {
    const std::span<const uint8_t> raw = value->raw();
    if (!raw.empty()) std::memcpy(tape.data.get() + tape.size, raw.data(), raw.size());
    tape.size += static_cast<int64_t>(raw.size());
  }
  statistics_.pushes += 1;
  statistics_.bytes += bytes;
  statistics_.peak_bytes = std::max(statistics_.peak_bytes, statistics_.bytes);
  return OkStatus();
}

StatusOr<Literal> Tapes::Pop(Tape& tape, const Instruction& instruction, int32_t counter) {
  const std::vector<Shape>& shapes = instruction.shape.tuple_shapes();
  int64_t bytes = 0;
  for (size_t i = 1; i < shapes.size(); ++i) bytes += ArrayBytes(shapes[i]);
  if (bytes > tape.size) {
    return Internal("custom-call '", instruction.name, "' pops ", bytes, " bytes from tape ",
                    instruction.attrs.backend_config, ", which holds ", tape.size,
                    " (a pop without its push)");
  }
  tape.size -= bytes;
  statistics_.bytes -= bytes;
  std::vector<Literal> elements;
  elements.push_back(Literal::Scalar<int32_t>(counter - 1));
  int64_t offset = tape.size;
  for (size_t i = 1; i < shapes.size(); ++i) {
    const auto size = static_cast<size_t>(ArrayBytes(shapes[i]));
    KILN_ASSIGN_OR_RETURN(
        Literal element,
        Literal::FromBytes(shapes[i], std::span<const uint8_t>(tape.data.get() + offset, size)));
    elements.push_back(std::move(element));
    offset += static_cast<int64_t>(size);
  }
  return Literal::Tuple(std::move(elements));
}

}  // namespace kiln::interpreter
