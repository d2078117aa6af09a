// Reverse mode through while loops and conditionals, as the control-flow
// seed describes for TensorFlow (cond's gradient is a cond on the same
// predicate over the branches' gradients; a while's gradient is a loop that
// runs as many times as the forward loop did, reading back per iteration
// what the forward loop saved on a stack), in XLA's terms:
//
// conditional: the backward is a conditional on the same predicate or
// index. Its branch j takes (operand j, cotangent of the result), computes
// branch j forward again from its operand and runs that branch's VJP; it
// returns the cotangents of every branch operand, zeros for the operands of
// the other branches. Nothing is saved beyond the operands, which the
// enclosing computation holds anyway.
//
// while: the forward loop is replaced by one whose state also carries a
// counter; every iteration pushes the loop-carried values that change (not
// the invariants) on a tape (core/tape_custom_calls.h) and the counter ends
// as the trip count N. The backward loop runs N times: it pops one
// iteration's state, computes the body forward again from it and runs the
// body's VJP, carrying the cotangent of the whole state. An invariant's
// cotangent passes through the body unchanged plus what each iteration adds,
// so it accumulates across iterations. Memory: N times the bytes of the
// changing state, in a tape that doubles when full; nested loops and
// conditionals inside a body are differentiated inside the backward body,
// where they are computed again, so an inner loop's tape holds one outer
// iteration's history at a time.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/autodiff/rule_helpers.h"
#include "core/autodiff/vjp.h"
#include "core/autodiff/vjp_rules.h"
#include "core/tape_custom_calls.h"

namespace kiln::autodiff {
namespace {

// The backward pass computes `computation` (and what it calls) again, so
// it must give the same values twice: no side effects, no stateful random
// numbers, no tape of an earlier gradient.
Status CheckRecomputable(const Computation& computation, const Instruction& owner, const std::string& part,
                         std::unordered_set<const Computation*>& seen) {
  if (!seen.insert(&computation).second) return OkStatus();
  for (const auto& instruction : computation.instructions()) {
    const std::string where =
        "the " + part + " of " + std::string(OpcodeName(owner.opcode)) + " '" + owner.name + "'";
    if (instruction->opcode == Opcode::kCustomCall &&
        IsTapeCustomCall(instruction->attrs.custom_call_target)) {
      return Unimplemented("kiln grad: ", where, " holds the tape of an earlier gradient (instruction ",
                           instruction->name,
                           "); differentiating a gradient through a while loop again is not "
                           "supported yet");
    }
    if (HasSideEffect(*instruction) || HasTraits(instruction->opcode, kStateful)) {
      return Unimplemented("kiln grad: ", where, " holds '", OpcodeName(instruction->opcode),
                           "' (instruction ", instruction->name,
                           "), which has side effects or state; the backward pass computes ", part,
                           "s again and could not reproduce it");
    }
    for (const Computation* callee : instruction->called) {
      KILN_RETURN_IF_ERROR(CheckRecomputable(*callee, owner, part, seen));
    }
  }
  return OkStatus();
}

Status CheckRecomputable(const Computation& computation, const Instruction& owner, const std::string& part) {
  std::unordered_set<const Computation*> seen;
  return CheckRecomputable(computation, owner, part, seen);
}

// `value` (of `shape`) as a cotangent: its float and complex leaves, nothing for the rest.
Cotangent CotangentOf(VjpEmitter& e, Instruction* value, const Shape& shape) {
  Cotangent cotangent;
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      cotangent.elements.push_back(CotangentOf(e, e.GetTupleElement(value, static_cast<int64_t>(i)),
                                               shape.tuple_shapes(static_cast<int64_t>(i))));
    }
    return cotangent;
  }
  if (CarriesGradient(shape.element_type())) cotangent.array = value;
  return cotangent;
}

// The value of a cotangent of `shape`, zeros where it is symbolically zero
// (and in the leaves that are not floats).
Instruction* Materialize(VjpEmitter& e, const Cotangent& cotangent, const Shape& shape) {
  if (!shape.IsTuple()) {
    if (cotangent.array != nullptr && CarriesGradient(shape.element_type())) return cotangent.array;
    return e.Zeros(shape);
  }
  if (cotangent.elements.empty()) return e.ZerosOf(shape);
  std::vector<Instruction*> elements;
  for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
    elements.push_back(Materialize(e, cotangent.elements[i], shape.tuple_shapes(static_cast<int64_t>(i))));
  }
  return e.Tuple(std::move(elements));
}

// The array leaves of `value` (of `shape`), tuples flattened in order.
void ArrayLeaves(VjpEmitter& e, Instruction* value, const Shape& shape, std::vector<Instruction*>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(value);
    return;
  }
  for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
    ArrayLeaves(e, e.GetTupleElement(value, static_cast<int64_t>(i)),
                shape.tuple_shapes(static_cast<int64_t>(i)), leaves);
  }
}

void LeafShapes(const Shape& shape, std::vector<Shape>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) LeafShapes(element, leaves);
}

// A value of `shape` rebuilt from `leaves` (tuple elements of `source`),
// the next one at `next`.
Instruction* FromLeaves(VjpEmitter& e, Instruction* source, const Shape& shape, int64_t& next) {
  if (!shape.IsTuple()) return e.GetTupleElement(source, next++);
  std::vector<Instruction*> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(FromLeaves(e, source, element, next));
  return e.Tuple(std::move(elements));
}

// A tape number no tape custom call of `module` uses yet.
int64_t NewTapeNumber(const Module& module) {
  int64_t next = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode != Opcode::kCustomCall ||
          !IsTapeCustomCall(instruction->attrs.custom_call_target))
        continue;
      StatusOr<int64_t> number = TapeNumber(*instruction);
      if (number.ok()) next = std::max(next, *number + 1);
    }
  }
  return next;
}

Instruction* TapeCall(VjpEmitter& e, std::string_view target, int64_t tape,
                      std::vector<Instruction*> operands, const Shape& shape) {
  Attributes attrs;
  attrs.custom_call_target = std::string(target);
  attrs.backend_config = std::to_string(tape);
  return e.Add(Opcode::kCustomCall, std::move(operands), std::move(attrs), &shape, {},
               target == kTapePushTarget ? "tape_push" : "tape_pop");
}

// Which state elements the body changes: not those it returns as read.
std::vector<bool> ChangingElements(const Computation& body, const Shape& state) {
  const size_t count = StateElements(state).size();
  std::vector<bool> changing(count, true);
  const Instruction* root = body.root();
  const Instruction* parameter = body.parameters().empty() ? nullptr : body.parameter(0);
  if (!state.IsTuple()) {
    changing[0] = root != parameter;
    return changing;
  }
  if (root->opcode != Opcode::kTuple || root->operands.size() != count) return changing;
  for (size_t i = 0; i < count; ++i) {
    const Instruction* element = root->operand(i);
    changing[i] = !(element->opcode == Opcode::kGetTupleElement && element->operand(0) == parameter &&
                    element->attrs.tuple_index == static_cast<int64_t>(i));
  }
  return changing;
}

}  // namespace

KILN_VJP_RULE(ConditionalRule) {
  Module& module = e.module();
  const size_t branches = x.called.size();
  for (size_t j = 0; j < branches; ++j) {
    KILN_RETURN_IF_ERROR(CheckRecomputable(*x.called[j], x, "branch"));
    if (HasToken(x.operand(j + 1)->shape) || HasToken(x.shape)) {
      return Unimplemented("kiln grad: conditional '", x.name, "' carries a token; not supported yet");
    }
  }
  std::vector<Shape> operand_shapes;
  for (size_t j = 0; j < branches; ++j) operand_shapes.push_back(x.operand(j + 1)->shape);
  Instruction* result_cotangent = Materialize(e, ct, x.shape);

  std::vector<Instruction*> operands = {x.operand(0)};
  std::vector<Computation*> backward_branches;
  for (size_t j = 0; j < branches; ++j) {
    const Computation& branch = *x.called[j];
    Computation* backward = NewComputation(module, branch.name() + "_vjp");
    VjpEmitter b(e, *backward);
    Instruction* input = b.AddParameter(Shape::Tuple({operand_shapes[j], x.shape}), "operand_and_cotangent");
    Instruction* operand = b.GetTupleElement(input, 0);
    backward->set_root(CloneComputation(b, branch, {operand}));
    const Cotangent cotangent = CotangentOf(b, b.GetTupleElement(input, 1), x.shape);
    StatusOr<std::vector<Cotangent>> found = EmitBackward(b, cotangent, std::vector<Instruction*>{operand});
    if (!found.ok()) {
      return Status(found.status().code(), found.status().message() + " (in branch " + std::to_string(j) +
                                               " of conditional '" + x.name + "')");
    }
    std::vector<Instruction*> results;
    for (size_t k = 0; k < branches; ++k) {
      results.push_back(k == j ? Materialize(b, (*found)[0], operand_shapes[k])
                               : b.ZerosOf(operand_shapes[k]));
    }
    backward->set_root(b.Tuple(std::move(results)));
    KILN_RETURN_IF_ERROR(b.status());
    backward_branches.push_back(backward);
    operands.push_back(e.Tuple({x.operand(j + 1), result_cotangent}));
  }
  Instruction* gradients = e.Add(Opcode::kConditional, std::move(operands), {}, nullptr, backward_branches);
  std::vector<Cotangent> result(1);  // the predicate or index has none
  for (size_t j = 0; j < branches; ++j) {
    result.push_back(
        CotangentOf(e, e.GetTupleElement(gradients, static_cast<int64_t>(j)), operand_shapes[j]));
  }
  return result;
}

KILN_VJP_RULE(WhileRule) {
  Module& module = e.module();
  const Computation& condition = *x.called[0];
  const Computation& body = *x.called[1];
  const Shape state = x.shape;
  if (HasToken(state))
    return Unimplemented("kiln grad: while '", x.name, "' carries a token; not supported yet");
  KILN_RETURN_IF_ERROR(CheckRecomputable(body, x, "body"));
  const std::vector<Shape> elements = StateElements(state);
  const auto count = static_cast<int64_t>(elements.size());
  const std::vector<bool> changing = ChangingElements(body, state);
  const Shape counter = Shape::Scalar(ElementType::kS32);
  const int64_t tape = NewTapeNumber(module);

  // Forward: the state plus a counter; each iteration pushes the changing
  // elements as they were before the body ran.
  std::vector<Shape> counted_elements = elements;
  counted_elements.push_back(counter);
  const Shape counted = Shape::Tuple(counted_elements);
  std::vector<Shape> saved_shapes = {counter};
  for (int64_t i = 0; i < count; ++i) {
    if (changing[static_cast<size_t>(i)]) LeafShapes(elements[static_cast<size_t>(i)], saved_shapes);
  }
  const auto state_view = [&](VjpEmitter& c, Instruction* value) {
    std::vector<Instruction*> parts;
    for (int64_t i = 0; i < count; ++i) parts.push_back(c.GetTupleElement(value, i));
    return AsState(c, state, std::move(parts));
  };
  Computation* counted_condition = NewComputation(module, condition.name() + "_counted");
  {
    VjpEmitter c(e, *counted_condition);
    Instruction* parameter = c.AddParameter(counted, "state");
    counted_condition->set_root(CloneComputation(c, condition, {state_view(c, parameter)}));
    KILN_RETURN_IF_ERROR(c.status());
  }
  Computation* counted_body = NewComputation(module, body.name() + "_counted");
  {
    VjpEmitter c(e, *counted_body);
    Instruction* parameter = c.AddParameter(counted, "state");
    Instruction* before = state_view(c, parameter);
    Instruction* after = CloneComputation(c, body, {before});
    std::vector<Instruction*> pushed = {c.GetTupleElement(parameter, count)};
    for (int64_t i = 0; i < count; ++i) {
      if (changing[static_cast<size_t>(i)])
        ArrayLeaves(c, StateElement(c, state, before, i), elements[static_cast<size_t>(i)], pushed);
    }
    std::vector<Instruction*> results;
    for (int64_t i = 0; i < count; ++i) results.push_back(StateElement(c, state, after, i));
    results.push_back(TapeCall(c, kTapePushTarget, tape, std::move(pushed), counter));
    counted_body->set_root(c.Tuple(std::move(results)));
    KILN_RETURN_IF_ERROR(c.status());
  }
  Instruction* init = x.operand(0);
  std::vector<Instruction*> counted_init;
  for (int64_t i = 0; i < count; ++i) counted_init.push_back(StateElement(e, state, init, i));
  counted_init.push_back(e.Constant(Literal::Scalar<int32_t>(0)));
  Instruction* forward = e.Add(Opcode::kWhile, {e.Tuple(std::move(counted_init))}, {}, nullptr,
                               {counted_condition, counted_body});
  e.Replace(&x, state_view(e, forward));
  Instruction* trips = e.GetTupleElement(forward, count);

  // Backward state: (remaining iterations, cotangent of each state element,
  // the invariant elements' values).
  std::vector<Shape> backward_elements = {counter};
  for (const Shape& element : elements) backward_elements.push_back(element);
  std::vector<int64_t> invariants;
  for (int64_t i = 0; i < count; ++i) {
    if (changing[static_cast<size_t>(i)]) continue;
    invariants.push_back(i);
    backward_elements.push_back(elements[static_cast<size_t>(i)]);
  }
  const Shape backward_state = Shape::Tuple(backward_elements);
  Computation* backward_condition = NewComputation(module, condition.name() + "_vjp");
  {
    VjpEmitter c(e, *backward_condition);
    Instruction* parameter = c.AddParameter(backward_state, "state");
    backward_condition->set_root(c.Compare(
        c.GetTupleElement(parameter, 0), c.Constant(Literal::Scalar<int32_t>(0)), ComparisonDirection::kGt));
    KILN_RETURN_IF_ERROR(c.status());
  }
  Computation* backward_body = NewComputation(module, body.name() + "_vjp");
  {
    VjpEmitter c(e, *backward_body);
    Instruction* parameter = c.AddParameter(backward_state, "state");
    Instruction* popped =
        TapeCall(c, kTapePopTarget, tape, {c.GetTupleElement(parameter, 0)}, Shape::Tuple(saved_shapes));
    std::vector<Instruction*> parts;
    int64_t next_leaf = 1;
    size_t next_invariant = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (changing[static_cast<size_t>(i)]) {
        parts.push_back(FromLeaves(c, popped, elements[static_cast<size_t>(i)], next_leaf));
      } else {
        parts.push_back(c.GetTupleElement(parameter, 1 + count + static_cast<int64_t>(next_invariant++)));
      }
    }
    Instruction* before = AsState(c, state, std::move(parts));
    backward_body->set_root(CloneComputation(c, body, {before}));
    std::vector<Instruction*> cotangent_parts;
    for (int64_t i = 0; i < count; ++i) cotangent_parts.push_back(c.GetTupleElement(parameter, 1 + i));
    const Cotangent cotangent = CotangentOf(c, AsState(c, state, cotangent_parts), state);
    StatusOr<std::vector<Cotangent>> found = EmitBackward(c, cotangent, std::vector<Instruction*>{before});
    if (!found.ok()) {
      return Status(found.status().code(),
                    found.status().message() + " (in the body of while '" + x.name + "')");
    }
    Instruction* state_cotangent = Materialize(c, (*found)[0], state);
    std::vector<Instruction*> results = {c.GetTupleElement(popped, 0)};
    for (int64_t i = 0; i < count; ++i) results.push_back(StateElement(c, state, state_cotangent, i));
    for (size_t k = 0; k < invariants.size(); ++k) {
      results.push_back(c.GetTupleElement(parameter, 1 + count + static_cast<int64_t>(k)));
    }
    backward_body->set_root(c.Tuple(std::move(results)));
    KILN_RETURN_IF_ERROR(c.status());
  }
  Instruction* result_cotangent = Materialize(e, ct, state);
  std::vector<Instruction*> backward_init = {trips};
  for (int64_t i = 0; i < count; ++i) backward_init.push_back(StateElement(e, state, result_cotangent, i));
  for (int64_t i : invariants) backward_init.push_back(StateElement(e, state, init, i));
  Instruction* backward = e.Add(Opcode::kWhile, {e.Tuple(std::move(backward_init))}, {}, nullptr,
                                {backward_condition, backward_body});
  std::vector<Instruction*> init_cotangent;
  for (int64_t i = 0; i < count; ++i) init_cotangent.push_back(e.GetTupleElement(backward, 1 + i));
  return std::vector<Cotangent>{CotangentOf(e, AsState(e, state, std::move(init_cotangent)), state)};
}

}  // namespace kiln::autodiff
