#include "core/scalar_computation.h"

#include <memory>

#include "core/ir_edit.h"

namespace kiln {

Computation* AddScalarBinaryComputation(Module& module, Opcode opcode, ElementType type,
                                        const std::string& name) {
  auto computation = std::make_unique<Computation>(name);
  const Shape scalar = Shape::Scalar(type);
  Instruction* lhs = computation->AddInstruction(MakeInstruction(Opcode::kParameter, scalar, {}));
  lhs->name = "lhs";
  Attributes second;
  second.parameter_number = 1;
  Instruction* rhs = computation->AddInstruction(MakeInstruction(Opcode::kParameter, scalar, {}, second));
  rhs->name = "rhs";
  Instruction* root = computation->AddInstruction(MakeInstruction(opcode, scalar, {lhs, rhs}));
  root->name = "result";
  computation->set_root(root);
  return module.AddComputation(std::move(computation));
}

}  // namespace kiln
