#include "backends/cpu/library_thunk.h"

#include <cstring>
#include <span>

#include "backends/cpu/cpu_buffer.h"

namespace kiln::cpu {
namespace {

StatusOr<Literal> Gather(const Shape& shape, const std::vector<int>& slots, size_t& next,
                         void* const* table) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      KILN_ASSIGN_OR_RETURN(Literal literal, Gather(element, slots, next, table));
      elements.push_back(std::move(literal));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  if (next >= slots.size()) return Internal("cpu: library call has too few argument slots");
  const auto* data = static_cast<const uint8_t*>(table[slots[next++]]);
  return Literal::FromBytes(shape, std::span<const uint8_t>(data, static_cast<size_t>(DenseByteSize(shape))));
}

void FlattenArrays(const Literal& literal, std::vector<const Literal*>& leaves) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.tuple_elements()) FlattenArrays(element, leaves);
  } else if (literal.shape().IsArray()) {
    leaves.push_back(&literal);
  }
}

}  // namespace

interpreter::Evaluator& LibraryRuntime::evaluator() {
  if (!evaluator_.has_value()) evaluator_.emplace(*plan_, queues_, rng_seed_, *stop_);
  return *evaluator_;
}

std::vector<int> BindingSlots(const std::vector<ParameterBinding>& parameters) {
  std::vector<int> slots;
  for (const ParameterBinding& parameter : parameters) {
    slots.insert(slots.end(), parameter.leaf_slots.begin(), parameter.leaf_slots.end());
  }
  return slots;
}

LibraryThunk::LibraryThunk(const Computation* computation, std::vector<ParameterBinding> parameters,
                           std::vector<int> outputs, std::vector<int64_t> output_bytes)
    : Thunk(BindingSlots(parameters), std::move(outputs)),
      computation_(computation),
      parameters_(std::move(parameters)),
      output_bytes_(std::move(output_bytes)) {}

Status LibraryThunk::Run(ExecutionContext& context) const {
  std::vector<Literal> arguments;
  arguments.reserve(parameters_.size());
  for (const ParameterBinding& parameter : parameters_) {
    size_t next = 0;
    KILN_ASSIGN_OR_RETURN(Literal literal,
                          Gather(parameter.shape, parameter.leaf_slots, next, context.slots));
    arguments.push_back(std::move(literal));
  }
  std::vector<const Literal*> pointers;
  pointers.reserve(arguments.size());
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  StatusOr<Literal> evaluated = context.library->evaluator().Run(*computation_, pointers);
  // The interpreter's evaluator runs this op as part of the cpu backend's
  // program; its messages are the cpu backend's.
  if (!evaluated.ok()) return evaluated.status().WithContext("cpu");
  Literal result = std::move(evaluated).value();
  std::vector<const Literal*> leaves;
  FlattenArrays(result, leaves);
  if (leaves.size() != outputs_.size()) {
    return Internal("cpu: '", computation_->name(), "' produced ", leaves.size(), " arrays, expected ",
                    outputs_.size());
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto bytes = leaves[i]->raw();
    if (static_cast<int64_t>(bytes.size()) != output_bytes_[i]) {
      return Internal("cpu: '", computation_->name(), "' result ", i, " has ", bytes.size(),
                      " bytes, expected ", output_bytes_[i]);
    }
    if (!bytes.empty()) std::memcpy(context.slots[outputs_[i]], bytes.data(), bytes.size());
  }
  return OkStatus();
}

}  // namespace kiln::cpu
