#include "tests/differential/graph_generator.h"

#include <algorithm>
#include <string>

#include "core/builder.h"
#include "core/verifier.h"
#include "tests/differential/graph_context.h"
#include "tests/differential/moves.h"

namespace kiln::differential {
namespace {

// The moves of each family; the first one is always played first, so every
// graph of a family contains the family's op.
std::vector<Move> FamilyMoves(OpFamily family) {
  switch (family) {
    case OpFamily::kElementwise: return {EmitBinary, EmitUnary, EmitUnary, EmitBinary, EmitBinary};
    case OpFamily::kCompareSelect:
      return {EmitCompareSelect, EmitCompareSelect, EmitClamp, EmitIsFinite, EmitUnary, EmitBinary};
    case OpFamily::kConvert: return {EmitConvert, EmitConvert, EmitUnary, EmitBinary};
    case OpFamily::kShape:
      return {EmitTranspose, EmitBroadcast, EmitReshape, EmitSlice, EmitConcatenate,
              EmitPad,       EmitReverse,   EmitIota,    EmitBinary};
    case OpFamily::kDynamicSlice: return {EmitDynamicSlice, EmitDynamicUpdateSlice, EmitBinary};
    case OpFamily::kReduce: return {EmitReduce, EmitArgMaxReduce, EmitReduce, EmitBinary};
    case OpFamily::kReduceWindow: return {EmitReduceWindow, EmitReduceWindow, EmitUnary, EmitBinary};
    case OpFamily::kDot: return {EmitDotGeneral, EmitDot, EmitDotGeneral, EmitBinary};
    case OpFamily::kConvolution: return {EmitConvolution, EmitConvolution, EmitUnary};
    case OpFamily::kGatherScatter: return {EmitGather, EmitScatter, EmitBinary};
    case OpFamily::kSort: return {EmitSort, EmitSort, EmitUnary};
    case OpFamily::kWhile: return {EmitWhile, EmitWhile, EmitBinary};
    case OpFamily::kConditional: return {EmitConditional, EmitConditional, EmitBinary};
    case OpFamily::kComplex:
      return {EmitComplexUnary,  EmitComplexBinary, EmitComplexUnary, EmitComplexBinary, EmitComplexParts,
              EmitComplexSelect, EmitComplexSum,    EmitTranspose,    EmitSlice,         EmitReshape,
              EmitBroadcast,     EmitConcatenate,   EmitReverse};
    case OpFamily::kMixed:
      return {EmitBinary,       EmitUnary,   EmitCompareSelect, EmitClamp,
              EmitIsFinite,     EmitConvert, EmitBroadcast,     EmitReshape,
              EmitTranspose,    EmitSlice,   EmitConcatenate,   EmitPad,
              EmitReverse,      EmitIota,    EmitDynamicSlice,  EmitDynamicUpdateSlice,
              EmitGather,       EmitScatter, EmitReduce,        EmitArgMaxReduce,
              EmitReduceWindow, EmitDot,     EmitDotGeneral,    EmitConvolution,
              EmitSort,         EmitWhile,   EmitConditional};
  }
  return {EmitBinary};
}

// Ops a move may add at most (a contraction with two new inputs, each clamped);
// generation stops early enough that the entry stays within 40 ops.
constexpr int64_t kMaxOpsPerMove = 12;
constexpr int64_t kMaxOps = 40;
constexpr int64_t kMaxOutputs = 6;

}  // namespace

std::vector<OpFamily> AllOpFamilies() {
  return {OpFamily::kElementwise,  OpFamily::kCompareSelect, OpFamily::kConvert,      OpFamily::kShape,
          OpFamily::kDynamicSlice, OpFamily::kReduce,        OpFamily::kReduceWindow, OpFamily::kDot,
          OpFamily::kConvolution,  OpFamily::kGatherScatter, OpFamily::kSort,         OpFamily::kWhile,
          OpFamily::kConditional,  OpFamily::kMixed,         OpFamily::kComplex};
}

std::string_view OpFamilyName(OpFamily family) {
  switch (family) {
    case OpFamily::kElementwise: return "elementwise";
    case OpFamily::kCompareSelect: return "compare_select";
    case OpFamily::kConvert: return "convert";
    case OpFamily::kShape: return "shape";
    case OpFamily::kDynamicSlice: return "dynamic_slice";
    case OpFamily::kReduce: return "reduce";
    case OpFamily::kReduceWindow: return "reduce_window";
    case OpFamily::kDot: return "dot";
    case OpFamily::kConvolution: return "convolution";
    case OpFamily::kGatherScatter: return "gather_scatter";
    case OpFamily::kSort: return "sort";
    case OpFamily::kWhile: return "while";
    case OpFamily::kConditional: return "conditional";
    case OpFamily::kMixed: return "mixed";
    case OpFamily::kComplex: return "complex";
  }
  return "unknown";
}

std::vector<ElementType> GeneratedElementTypes() {
  return {ElementType::kPred, ElementType::kS8,  ElementType::kS16, ElementType::kS32, ElementType::kS64,
          ElementType::kU8,   ElementType::kU16, ElementType::kU32, ElementType::kU64, ElementType::kF16,
          ElementType::kBF16, ElementType::kF32, ElementType::kF64};
}

std::vector<ElementType> FamilyElementTypes(OpFamily family) {
  if (family == OpFamily::kComplex) return {ElementType::kC64, ElementType::kC128};
  return GeneratedElementTypes();
}

StatusOr<GeneratedGraph> GenerateGraph(OpFamily family, uint64_t seed) {
  // Consecutive seeds walk through every element type.
  const std::vector<ElementType> types = FamilyElementTypes(family);
  const ElementType type = types[static_cast<size_t>((seed + static_cast<uint64_t>(family)) % types.size())];
  return GenerateGraph(family, seed, type);
}

StatusOr<GeneratedGraph> GenerateGraph(OpFamily family, uint64_t seed, ElementType element_type) {
  RandomSource random(seed * 0x100000001b3ULL + static_cast<uint64_t>(family));
  const std::string name = std::string(OpFamilyName(family)) + "_" +
                           std::string(ElementTypeName(element_type)) + "_" + std::to_string(seed);
  Builder builder(name);
  GeneratedGraph graph;
  graph.element_type = element_type;
  GraphContext context(builder, random, element_type, &graph.arguments);

  const std::vector<Move> moves = FamilyMoves(family);
  const int64_t target = random.Between(5, kMaxOps - kMaxOpsPerMove - 1);
  for (bool first = true;
       first || (context.op_count() < target && context.op_count() < kMaxOps - kMaxOpsPerMove - 1);
       first = false) {
    const Move move = first ? moves.front() : random.Pick(moves);
    move(context);
    if (!builder.first_error().ok()) {
      return Internal("generator built an invalid op for ", name, ": ", builder.first_error().ToString());
    }
  }

  // The results: the newest values nothing consumed.
  std::vector<Value> outputs;
  for (auto it = context.values().rbegin(); it != context.values().rend(); ++it) {
    if (!it->used && static_cast<int64_t>(outputs.size()) < kMaxOutputs) outputs.push_back(*it);
  }
  if (outputs.empty()) outputs.push_back(context.values().back());
  std::vector<Op> roots;
  for (const Value& output : outputs) {
    roots.push_back(output.op);
    graph.checks.push_back(LeafCheck{output.exact, std::max(1.0, output.bound)});
  }
  Op root = builder.Tuple(roots);
  KILN_ASSIGN_OR_RETURN(graph.module, builder.Build(root));
  KILN_RETURN_IF_ERROR(VerifyModule(*graph.module));
  return graph;
}

}  // namespace kiln::differential
