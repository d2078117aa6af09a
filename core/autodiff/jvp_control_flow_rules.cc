// Forward mode through while loops and conditionals. Forward mode needs no
// tape: a value's tangent is computed where the value is, so
//
// while: the loop is replaced by one whose state also carries the tangents
// of the state's float leaves that have one; its body is the original body
// followed by its tangents, its condition reads the original state. Which
// leaves carry a tangent is a fixed point: those whose initial tangent is
// not zero, plus those the body gives one (a loop-carried value that an
// invariant with a tangent feeds), until no more are added. Leaves without
// one (counters, leaves no differentiated value reaches) cost nothing.
// Memory: the state's tangent leaves, once, whatever the trip count.
//
// conditional (both forms): each branch takes its operand and the tangents
// of that operand's leaves, and returns its result and the tangents of the
// result leaves any branch gives one (zeros in the others).
#include <memory>
#include <string>

#include "core/autodiff/jvp_rules.h"
#include "core/autodiff/rule_helpers.h"

namespace kiln::autodiff {
namespace {

// The tangent of each array leaf of a value of `shape` (tuples flattened in
// order), null where it is zero or the leaf is not a float.
void TangentLeaves(const Tangent& t, const Shape& shape, std::vector<Instruction*>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(CarriesGradient(shape.element_type()) ? t.array : nullptr);
    return;
  }
  for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
    TangentLeaves(i < t.elements.size() ? t.elements[i] : Tangent{},
                  shape.tuple_shapes(static_cast<int64_t>(i)), leaves);
  }
}

std::vector<Instruction*> TangentLeaves(const Tangent& t, const Shape& shape) {
  std::vector<Instruction*> leaves;
  TangentLeaves(t, shape, leaves);
  return leaves;
}

// The tangent of a value of `shape` whose leaves' tangents are `leaves`
// (null: zero), the next one at `next`.
Tangent TangentFromLeaves(const Shape& shape, const std::vector<Instruction*>& leaves, size_t& next) {
  if (!shape.IsTuple()) return Of(leaves[next++]);
  Tangent tangent;
  for (const Shape& element : shape.tuple_shapes())
    tangent.elements.push_back(TangentFromLeaves(element, leaves, next));
  if (tangent.IsZero()) tangent.elements.clear();
  return tangent;
}

Tangent TangentFromLeaves(const Shape& shape, const std::vector<Instruction*>& leaves) {
  size_t next = 0;
  return TangentFromLeaves(shape, leaves, next);
}

// The leaves of `shape` (flattened in order) marked in `carried`.
std::vector<Shape> CarriedShapes(const Shape& shape, const std::vector<bool>& carried) {
  const std::vector<Shape> leaves = shape.Leaves();
  std::vector<Shape> shapes;
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (carried[k]) shapes.push_back(leaves[k]);
  }
  return shapes;
}

// The tangents of the leaves marked in `carried`, zeros where one is null.
std::vector<Instruction*> CarriedValues(VjpEmitter& e, const Shape& shape,
                                        const std::vector<Instruction*>& leaves,
                                        const std::vector<bool>& carried) {
  const std::vector<Shape> shapes = shape.Leaves();
  std::vector<Instruction*> values;
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (carried[k]) values.push_back(leaves[k] != nullptr ? leaves[k] : e.Zeros(shapes[k]));
  }
  return values;
}

// Leaves k marked in `carried`, read from elements first, first + 1, ... of
// `tuple`; null for the others.
std::vector<Instruction*> ReadCarried(VjpEmitter& e, Instruction* tuple, int64_t first,
                                      const std::vector<bool>& carried) {
  std::vector<Instruction*> leaves;
  for (bool is_carried : carried) leaves.push_back(is_carried ? e.GetTupleElement(tuple, first++) : nullptr);
  return leaves;
}

Status InPart(const Status& status, const std::string& where) {
  return Status(status.code(), status.message() + " (in " + where + ")");
}

}  // namespace

KILN_JVP_RULE(JvpWhileRule) {
  Module& module = e.module();
  const Computation& condition = *x.called[0];
  const Computation& body = *x.called[1];
  const Shape state = x.shape;
  const std::vector<Shape> elements = StateElements(state);
  const auto count = static_cast<int64_t>(elements.size());
  const std::vector<Instruction*> init_tangents = TangentLeaves(t[0], state);
  std::vector<bool> carried;
  for (Instruction* leaf : init_tangents) carried.push_back(leaf != nullptr);
  const auto state_view = [&](VjpEmitter& c, Instruction* value) {
    std::vector<Instruction*> parts;
    for (int64_t i = 0; i < count; ++i) parts.push_back(c.GetTupleElement(value, i));
    return AsState(c, state, std::move(parts));
  };
  while (true) {
    std::vector<Shape> carried_elements = elements;
    for (const Shape& shape : CarriedShapes(state, carried)) carried_elements.push_back(shape);
    const Shape carrying = Shape::Tuple(carried_elements);
    Computation* new_body = NewComputation(module, body.name() + "_jvp");
    VjpEmitter c(e, *new_body);
    Instruction* parameter = c.AddParameter(carrying, "state");
    Instruction* before = state_view(c, parameter);
    Instruction* after = CloneComputation(c, body, {before});
    new_body->set_root(after);
    const std::pair<Instruction*, Tangent> seed = {
        before, TangentFromLeaves(state, ReadCarried(c, parameter, count, carried))};
    StatusOr<Tangent> found = EmitTangents(c, std::span(&seed, 1));
    if (!found.ok()) return InPart(found.status(), "the body of while '" + x.name + "'");
    after = new_body->root();
    const std::vector<Instruction*> after_tangents = TangentLeaves(*found, state);
    bool grew = false;
    for (size_t k = 0; k < carried.size(); ++k) {
      if (!carried[k] && after_tangents[k] != nullptr) carried[k] = grew = true;
    }
    // A body tried with too few tangents is left unused (BuildJvp drops it).
    if (grew) continue;
    std::vector<Instruction*> results;
    for (int64_t i = 0; i < count; ++i) results.push_back(StateElement(c, state, after, i));
    for (Instruction* tangent : CarriedValues(c, state, after_tangents, carried)) results.push_back(tangent);
    new_body->set_root(c.Tuple(std::move(results)));
    KILN_RETURN_IF_ERROR(c.status());

    Computation* new_condition = NewComputation(module, condition.name() + "_jvp");
    VjpEmitter d(e, *new_condition);
    new_condition->set_root(
        CloneComputation(d, condition, {state_view(d, d.AddParameter(carrying, "state"))}));
    KILN_RETURN_IF_ERROR(d.status());

    Instruction* init = x.operand(0);
    std::vector<Instruction*> carried_init;
    for (int64_t i = 0; i < count; ++i) carried_init.push_back(StateElement(e, state, init, i));
    for (Instruction* tangent : CarriedValues(e, state, init_tangents, carried))
      carried_init.push_back(tangent);
    Instruction* loop =
        e.Add(Opcode::kWhile, {e.Tuple(std::move(carried_init))}, {}, nullptr, {new_condition, new_body});
    e.Replace(&x, state_view(e, loop));
    return TangentFromLeaves(state, ReadCarried(e, loop, count, carried));
  }
}

KILN_JVP_RULE(JvpConditionalRule) {
  Module& module = e.module();
  const size_t branches = x.called.size();
  struct Branch {
    Computation* computation;
    std::unique_ptr<VjpEmitter> emitter;
    Instruction* result;
    std::vector<Instruction*> result_tangents;
    std::vector<bool> carried;  // the operand leaves that get a tangent
  };
  std::vector<Branch> derived(branches);
  std::vector<bool> result_carried(x.shape.Leaves().size(), false);
  for (size_t j = 0; j < branches; ++j) {
    Branch& branch = derived[j];
    const Shape& operand_shape = x.operand(j + 1)->shape;
    for (Instruction* leaf : TangentLeaves(t[j + 1], operand_shape))
      branch.carried.push_back(leaf != nullptr);
    std::vector<Shape> inputs = {operand_shape};
    for (const Shape& shape : CarriedShapes(operand_shape, branch.carried)) inputs.push_back(shape);
    branch.computation = NewComputation(module, x.called[j]->name() + "_jvp");
    branch.emitter = std::make_unique<VjpEmitter>(e, *branch.computation);
    VjpEmitter& b = *branch.emitter;
    Instruction* input = b.AddParameter(Shape::Tuple(inputs), "operand_and_tangents");
    Instruction* operand = b.GetTupleElement(input, 0);
    branch.computation->set_root(CloneComputation(b, *x.called[j], {operand}));
    const std::pair<Instruction*, Tangent> seed = {
        operand, TangentFromLeaves(operand_shape, ReadCarried(b, input, 1, branch.carried))};
    StatusOr<Tangent> found = EmitTangents(b, std::span(&seed, 1));
    if (!found.ok())
      return InPart(found.status(), "branch " + std::to_string(j) + " of conditional '" + x.name + "'");
    branch.result = branch.computation->root();
    branch.result_tangents = TangentLeaves(*found, x.shape);
    for (size_t k = 0; k < result_carried.size(); ++k) {
      result_carried[k] = result_carried[k] || branch.result_tangents[k] != nullptr;
    }
  }
  bool any = false;
  for (bool carried : result_carried) any = any || carried;
  if (!any) return Tangent{};  // the unused branches are dropped by BuildJvp
  std::vector<Instruction*> operands = {x.operand(0)};
  std::vector<Computation*> computations;
  for (size_t j = 0; j < branches; ++j) {
    Branch& branch = derived[j];
    VjpEmitter& b = *branch.emitter;
    std::vector<Instruction*> results = {branch.result};
    for (Instruction* tangent : CarriedValues(b, x.shape, branch.result_tangents, result_carried)) {
      results.push_back(tangent);
    }
    branch.computation->set_root(b.Tuple(std::move(results)));
    KILN_RETURN_IF_ERROR(b.status());
    computations.push_back(branch.computation);
    std::vector<Instruction*> input = {x.operand(j + 1)};
    for (Instruction* tangent : CarriedValues(
             e, x.operand(j + 1)->shape, TangentLeaves(t[j + 1], x.operand(j + 1)->shape), branch.carried)) {
      input.push_back(tangent);
    }
    operands.push_back(e.Tuple(std::move(input)));
  }
  Instruction* derivative = e.Add(Opcode::kConditional, std::move(operands), {}, nullptr, computations);
  e.Replace(&x, e.GetTupleElement(derivative, 0));
  return TangentFromLeaves(x.shape, ReadCarried(e, derivative, 1, result_carried));
}

}  // namespace kiln::autodiff
