#include "backends/cpu/codegen/compile_tier.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kiln::cpu::codegen {
namespace {

// Doubles, so that products of large shapes saturate instead of overflowing.
double Elements(const Shape& shape) {
  double total = 0;
  for (const Shape& leaf : shape.Leaves()) total += static_cast<double>(leaf.element_count());
  return total;
}

double WindowElements(const Window& window) {
  double total = 1;
  for (const WindowDimension& dimension : window.dimensions) total *= static_cast<double>(dimension.size);
  return total;
}

// Scalar loop iterations of one instruction.
double Iterations(const Instruction& instruction) {
  const double results = Elements(instruction.shape);
  switch (instruction.opcode) {
    case Opcode::kDot: {
      double contracted = 1;
      for (int64_t dimension : instruction.attrs.dot->lhs_contracting_dimensions) {
        contracted *= static_cast<double>(instruction.operand(0)->shape.dimensions(dimension));
      }
      return results * contracted;
    }
    case Opcode::kConvolution: {
      const Shape& kernel = instruction.operand(1)->shape;
      const int64_t input_features =
          kernel.dimensions(instruction.attrs.conv->kernel_input_feature_dimension);
      return results * WindowElements(instruction.attrs.window) * static_cast<double>(input_features);
    }
    case Opcode::kReduceWindow: return results * WindowElements(instruction.attrs.window);
    case Opcode::kSelectAndScatter:
      return Elements(instruction.operand(0)->shape) * WindowElements(instruction.attrs.window);
    default: {
      // A reduction or a scatter walks its largest operand, not its result.
      double walked = results;
      for (const Instruction* operand : instruction.operands)
        walked = std::max(walked, Elements(operand->shape));
      return walked;
    }
  }
}

// The loop iterations of a computation and the instructions that run them
// (all but parameters and constants).
struct LoopWork {
  double iterations = 0;
  int64_t instructions = 0;
};

LoopWork MeasureLoopWork(const Computation& computation) {
  LoopWork work;
  for (const std::unique_ptr<Instruction>& instruction : computation.instructions()) {
    if (instruction->opcode == Opcode::kParameter || instruction->opcode == Opcode::kConstant) continue;
    work.iterations += Iterations(*instruction);
    ++work.instructions;
  }
  return work;
}

}  // namespace

int64_t EstimatedIterations(const Computation& computation) {
  constexpr double kLimit = static_cast<double>(std::numeric_limits<int64_t>::max()) / 2;
  return static_cast<int64_t>(std::min(MeasureLoopWork(computation).iterations, kLimit));
}

CompileTier ChooseCompileTier(const Computation& computation, int64_t quick_tier_max_iterations) {
  const LoopWork work = MeasureLoopWork(computation);
  const double limit = static_cast<double>(quick_tier_max_iterations);
  if (work.iterations <= limit) return CompileTier::kQuick;
  // Past the reference size, the limit grows with the instructions.
  const double per_instruction_limit = limit / static_cast<double>(kQuickTierReferenceInstructions);
  return work.iterations <= per_instruction_limit * static_cast<double>(work.instructions)
             ? CompileTier::kQuick
             : CompileTier::kOptimized;
}

int64_t QuickTierMaxIterationsFromEnvironment() {
  static const int64_t limit = [] {
    const char* text = std::getenv("KILN_CPU_QUICK_TIER_MAX_ITERATIONS");
    if (text == nullptr || *text == '\0') return kQuickTierMaxIterations;
    int64_t value = -1;
    const char* end = text + std::strlen(text);
    const auto [stop, error] = std::from_chars(text, end, value);
    if (error != std::errc() || stop != end || value < 0) {
      std::fprintf(stderr,
                   "kiln: KILN_CPU_QUICK_TIER_MAX_ITERATIONS=%s is not a non-negative integer; using %lld\n",
                   text, static_cast<long long>(kQuickTierMaxIterations));
      return kQuickTierMaxIterations;
    }
    return value;
  }();
  return limit;
}

}  // namespace kiln::cpu::codegen
