// Shared pieces of shape inference, split by op family. Only the
// core/shape_inference*.cc files include this; everyone else calls InferShape.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/opcode.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln::shape_inference_internal {

// Everything one inference call sees, bundled so each family function has
// one parameter.
struct OpRequest {
  Opcode opcode;
  std::span<const Shape> operands;
  const Attributes& attrs;
  std::span<const ProgramShape> called;
  const Shape* declared;
};

// "add: <message>": every error names the op first.
template <typename... Args>
Status OpError(const OpRequest& request, const Args&... args) {
  return InvalidArgument(OpcodeName(request.opcode), ": ", args...);
}

// "f32[2], s32[]" for error messages.
std::string ShapesToString(std::span<const Shape> shapes);
// "{0,1,2}" for error messages.
std::string DimsToString(std::span<const int64_t> dims);

Status ExpectOperandCount(const OpRequest& request, size_t count);
Status ExpectCalledCount(const OpRequest& request, size_t count);
// The operand in role `role` must be an array (not a tuple or token).
Status ExpectArray(const OpRequest& request, const Shape& shape, const char* role);
Status ExpectScalar(const OpRequest& request, const Shape& shape, const char* role);
// The declared result shape, required by ops that cannot derive it.
StatusOr<Shape> RequireDeclared(const OpRequest& request);

// Dimension numbers must lie in [0, rank) and be distinct; `sorted` also
// requires them strictly increasing. `what` names the list in errors.
Status CheckDimensionList(const OpRequest& request, std::span<const int64_t> dims, int64_t rank,
                          const char* what, bool sorted = false);

// Output dims of a window over `base` (reduce-window, select-and-scatter).
StatusOr<std::vector<int64_t>> InferWindowOutputDims(const OpRequest& request, std::span<const int64_t> base,
                                                     const Window& window);

// Checks a reducer-like computation: `2 * types.size()` scalar parameters
// (types..., types...) returning the scalar `types` (tuple when more than one).
Status CheckReducer(const OpRequest& request, const ProgramShape& computation,
                    std::span<const ElementType> types, const char* what);

StatusOr<Shape> InferElementwise(const OpRequest& request);
StatusOr<Shape> InferShapeManipulation(const OpRequest& request);
StatusOr<Shape> InferContraction(const OpRequest& request);
StatusOr<Shape> InferFft(const OpRequest& request);
StatusOr<Shape> InferGatherScatter(const OpRequest& request);
StatusOr<Shape> InferReduction(const OpRequest& request);
StatusOr<Shape> InferControlAndMisc(const OpRequest& request);

}  // namespace kiln::shape_inference_internal
