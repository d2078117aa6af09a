#include "core/single_instruction.h"

#include <atomic>
#include <vector>

namespace kiln {
namespace {

std::atomic<int64_t> built{0};

}  // namespace

int64_t SingleInstructionComputationsBuilt() { return built.load(std::memory_order_relaxed); }

std::unique_ptr<Computation> SingleInstructionComputation(const Instruction& instruction,
                                                          const std::string& name) {
  built.fetch_add(1, std::memory_order_relaxed);
  auto computation = std::make_unique<Computation>(name);
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    auto parameter = std::make_unique<Instruction>();
    parameter->opcode = Opcode::kParameter;
    parameter->name = "p" + std::to_string(i);
    parameter->shape = instruction.operand(i)->shape;
    parameter->attrs.parameter_number = static_cast<int64_t>(i);
    parameters.push_back(computation->AddInstruction(std::move(parameter)));
  }
  auto copy = std::make_unique<Instruction>(instruction);
  copy->operands = parameters;
  computation->set_root(computation->AddInstruction(std::move(copy)));
  return computation;
}

}  // namespace kiln
