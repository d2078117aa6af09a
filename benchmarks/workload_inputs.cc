#include "benchmarks/workload_inputs.h"

#include <fstream>
#include <iterator>
#include <random>

#include "core/hlo_parser.h"

namespace kiln::bench {

StatusOr<std::unique_ptr<Module>> LoadWorkload(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFound(path, ": cannot open file");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  if (!module.ok()) return module.status().WithContext(path);
  if ((*module)->entry() == nullptr) return InvalidArgument(path, ": module has no ENTRY computation");
  return module;
}

StatusOr<std::vector<Literal>> MakeInputs(const Module& module) {
  std::mt19937 generator(20261122);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<Literal> inputs;
  for (const Shape& parameter : module.entry()->program_shape().parameters) {
    for (const Shape& leaf : parameter.Leaves()) {
      Literal literal(leaf);
      switch (leaf.element_type()) {
        case ElementType::kF32:
          for (float& value : literal.data<float>()) value = normal(generator);
          break;
        case ElementType::kC64:
          for (complex64& value : literal.data<complex64>()) value = {normal(generator), normal(generator)};
          break;
        case ElementType::kS8:  // int8_gemm_N's operands
        case ElementType::kS32:
        case ElementType::kS64:
        case ElementType::kPred: break;  // zero-filled
        default:
          return Unimplemented("benchmark inputs of element type ", ElementTypeName(leaf.element_type()));
      }
      inputs.push_back(std::move(literal));
    }
  }
  return inputs;
}

}  // namespace kiln::bench
