#include "core/tape_custom_calls.h"

#include <charconv>
#include <string>

namespace kiln {
namespace {

bool IsCounter(const Shape& shape) {
  return shape.IsArray() && shape.IsScalar() && shape.element_type() == ElementType::kS32;
}

}  // namespace

bool IsTapeCustomCall(std::string_view target) {
  return target == kTapePushTarget || target == kTapePopTarget;
}

StatusOr<int64_t> TapeNumber(const Instruction& instruction) {
  const std::string& config = instruction.attrs.backend_config;
  int64_t number = -1;
  const char* end = config.data() + config.size();
  const auto parsed = std::from_chars(config.data(), end, number);
  if (config.empty() || parsed.ec != std::errc() || parsed.ptr != end || number < 0) {
    return InvalidArgument("custom-call '", instruction.attrs.custom_call_target, "' of instruction '",
                           instruction.name, "' needs its tape number as backend_config, got '", config, "'");
  }
  return number;
}

Status CheckTapeCustomCall(const Instruction& instruction, std::string_view backend) {
  const std::string& target = instruction.attrs.custom_call_target;
  const auto refuse = [&](const std::string& why) {
    return InvalidArgument(backend, ": custom-call '", target, "' of instruction '", instruction.name, "' ",
                           why);
  };
  KILN_RETURN_IF_ERROR(TapeNumber(instruction).status());
  if (instruction.operands.empty() || !IsCounter(instruction.operand(0)->shape)) {
    return refuse("needs an s32[] counter as its first operand");
  }
  if (target == kTapePushTarget) {
    for (size_t i = 1; i < instruction.operands.size(); ++i) {
      if (!instruction.operand(i)->shape.IsArray()) return refuse("pushes arrays only");
    }
    if (!IsCounter(instruction.shape)) return refuse("returns the s32[] counter");
    return OkStatus();
  }
  if (instruction.operands.size() != 1) return refuse("takes the counter only");
  const Shape& shape = instruction.shape;
  if (!shape.IsTuple() || shape.tuple_shapes().empty() || !IsCounter(shape.tuple_shapes(0))) {
    return refuse("returns a tuple of the s32[] counter and the popped arrays");
  }
  for (const Shape& element : shape.tuple_shapes()) {
    if (!element.IsArray()) return refuse("pops arrays only");
  }
  return OkStatus();
}

}  // namespace kiln
