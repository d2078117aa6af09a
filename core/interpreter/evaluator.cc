#include "core/interpreter/evaluator.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/interpreter/kernels.h"
#include "core/rng_stream.h"
#include "core/tape_custom_calls.h"

namespace kiln::interpreter {
namespace {

// Whether a value of `actual` shape may bind a parameter of `expected` shape.
bool Binds(const Shape& expected, const Shape& actual) { return expected.Compatible(actual); }

Literal TupleOf(Operands operands) {
  std::vector<Literal> elements;
  elements.reserve(operands.size());
  for (const Literal* operand : operands) elements.push_back(*operand);
  return Literal::Tuple(std::move(elements));
}

}  // namespace

uint64_t RngStream::Next() { return RngStreamDraw(key, ++counter); }

namespace {

// The order a computation's instructions run in, where each reads its
// operands, and when each intermediate value can be dropped.
ComputationPlan PlanComputation(const Computation& computation) {
  ComputationPlan plan;
  std::unordered_map<const Instruction*, size_t> slot_of;
  for (const Instruction* instruction : computation.LiveInstructions()) {
    slot_of[instruction] = plan.order.size();
    plan.order.push_back(instruction);
  }
  plan.operand_slots.resize(plan.order.size());
  plan.release_after.resize(plan.order.size());
  std::vector<size_t> last_use(plan.order.size(), 0);
  for (size_t i = 0; i < plan.order.size(); ++i) {
    for (const Instruction* operand : plan.order[i]->operands) {
      const size_t slot = slot_of.at(operand);
      plan.operand_slots[i].push_back(slot);
      last_use[slot] = i;
    }
  }
  plan.root_slot =
      computation.root() != nullptr && slot_of.count(computation.root()) ? slot_of.at(computation.root()) : 0;
  for (size_t slot = 0; slot < plan.order.size(); ++slot) {
    if (slot != plan.root_slot && last_use[slot] > slot) plan.release_after[last_use[slot]].push_back(slot);
  }
  return plan;
}

}  // namespace

ModulePlan ModulePlan::Build(const Module& module) {
  ModulePlan result;
  for (const auto& computation : module.computations()) {
    result.plans_.emplace(computation.get(), PlanComputation(*computation));
  }
  return result;
}

ModulePlan ModulePlan::OnFirstUse(const Module& module) {
  ModulePlan result;
  result.module_ = &module;
  return result;
}

const ComputationPlan* ModulePlan::Find(const Computation* computation) const {
  if (module_ == nullptr) {
    auto it = plans_.find(computation);
    return it == plans_.end() ? nullptr : &it->second;
  }
  std::lock_guard<std::mutex> lock(*mutex_);
  if (auto it = plans_.find(computation); it != plans_.end()) return &it->second;
  // Names are unique in a verified module: this finds the computation only
  // when it is the module's.
  if (computation == nullptr || module_->FindComputation(computation->name()) != computation) return nullptr;
  return &plans_.emplace(computation, PlanComputation(*computation)).first->second;
}

size_t ModulePlan::planned() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  return plans_.size();
}

Evaluator::Evaluator(const ModulePlan& plan, HostQueues* queues, uint64_t rng_seed, StopCondition stop)
    : plan_(plan), stop_(std::move(stop)) {
  rng_.key = rng_seed;
  context_.runner = this;
  context_.queues = queues;
  context_.rng = &rng_;
}

StatusOr<Literal> Evaluator::Run(const Computation& computation, Operands arguments) {
  const ComputationPlan* plan = plan_.Find(&computation);
  if (plan == nullptr || plan->order.empty()) {
    return Internal("computation '", computation.name(), "' is not part of the compiled module");
  }
  const size_t count = plan->order.size();
  std::vector<Literal> owned(count);
  std::vector<const Literal*> values(count, nullptr);
  std::vector<const Literal*> operands;
  for (size_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(stop_.Check());
    const Instruction& instruction = *plan->order[i];
    if (instruction.opcode == Opcode::kParameter) {
      const auto number = static_cast<size_t>(instruction.attrs.parameter_number);
      if (number >= arguments.size() || !Binds(instruction.shape, arguments[number]->shape())) {
        return Internal("computation '", computation.name(), "' parameter ", number, " of shape ",
                        instruction.shape.ToString(), " got ",
                        number < arguments.size() ? arguments[number]->shape().ToString() : "no argument");
      }
      values[i] = arguments[number];
    } else if (instruction.opcode == Opcode::kConstant) {
      if (!instruction.literal.has_value()) return Internal("constant '", instruction.name, "' has no value");
      values[i] = &*instruction.literal;
    } else {
      operands.clear();
      for (size_t slot : plan->operand_slots[i]) operands.push_back(values[slot]);
      StatusOr<Literal> result = EvaluateInstruction(instruction, operands, arguments);
      if (!result.ok()) return result.status();
      owned[i] = std::move(result).value();
      values[i] = &owned[i];
    }
    for (size_t slot : plan->release_after[i]) {
      owned[slot] = Literal();
      values[slot] = nullptr;
    }
  }
  const size_t root = plan->root_slot;
  if (values[root] == &owned[root]) return std::move(owned[root]);
  return *values[root];
}

StatusOr<Literal> Evaluator::EvaluateWhile(const Instruction& instruction, Operands operands) {
  if (instruction.called.size() != 2) return Internal("while needs a condition and a body");
  const Computation& condition = *instruction.called[0];
  const Computation& body = *instruction.called[1];
  Literal state = *operands[0];
  int64_t iterations = 0;
  auto where = [&](const Status& status) { return StoppedInLoop(status, instruction.name, iterations); };
  for (;; ++iterations) {
    KILN_RETURN_IF_ERROR(where(stop_.Check()));  // the back-edge
    const Literal* argument = &state;
    StatusOr<Literal> keep_going = Run(condition, Operands(&argument, 1));
    if (!keep_going.ok()) return where(keep_going.status());
    if (keep_going->element_count() != 1 || keep_going->shape().element_type() != ElementType::kPred) {
      return InvalidArgument("while condition must return pred[], got ", keep_going->shape().ToString());
    }
    if (!keep_going->data<bool>()[0]) return state;
    StatusOr<Literal> next = Run(body, Operands(&argument, 1));
    if (!next.ok()) return where(next.status());
    state = std::move(next).value();
  }
}

StatusOr<Literal> Evaluator::EvaluateConditional(const Instruction& instruction, Operands operands) {
  const Literal& selector = *operands[0];
  const int64_t branches = static_cast<int64_t>(instruction.called.size());
  if (branches == 0 || static_cast<int64_t>(operands.size()) != branches + 1 ||
      selector.element_count() != 1) {
    return Internal("conditional needs a scalar selector and one operand per branch");
  }
  int64_t branch;
  if (selector.shape().element_type() == ElementType::kPred) {
    branch = selector.data<bool>()[0] ? 0 : 1;  // {true_computation, false_computation}
  } else {
    branch = selector.GetAsInt64(0);
    if (branch < 0 || branch >= branches) branch = branches - 1;  // XLA: out of range runs the last branch
  }
  if (branch >= branches) return Internal("predicated conditional needs two branches");
  const Literal* argument = operands[static_cast<size_t>(branch) + 1];
  return Run(*instruction.called[static_cast<size_t>(branch)], Operands(&argument, 1));
}

StatusOr<Literal> Evaluator::EvaluateInstruction(const Instruction& instruction, Operands operands,
                                                 Operands arguments) {
  (void)arguments;
  switch (instruction.opcode) {
    case Opcode::kAbs:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kCopy:
    case Opcode::kCos:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopcnt:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh: return EvaluateUnary(instruction, operands);
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor: return EvaluateBinary(instruction, operands);
    case Opcode::kSelect: return EvaluateSelect(instruction, operands);
    case Opcode::kClamp: return EvaluateClamp(instruction, operands);
    case Opcode::kCompare: return EvaluateCompare(instruction, operands);
    case Opcode::kConvert: return EvaluateConvert(instruction, operands);
    case Opcode::kBitcastConvert: return EvaluateBitcastConvert(instruction, operands);
    case Opcode::kComplex: return EvaluateComplex(instruction, operands);
    case Opcode::kReal:
    case Opcode::kImag: return EvaluateRealImag(instruction, operands);
    case Opcode::kIsFinite: return EvaluateIsFinite(instruction, operands);
    case Opcode::kReducePrecision: return EvaluateReducePrecision(instruction, operands);

    case Opcode::kBroadcast: return EvaluateBroadcast(instruction, operands);
    case Opcode::kReshape: return EvaluateReshape(instruction, operands);
    case Opcode::kTranspose: return EvaluateTranspose(instruction, operands);
    case Opcode::kReverse: return EvaluateReverse(instruction, operands);
    case Opcode::kConcatenate: return EvaluateConcatenate(instruction, operands);
    case Opcode::kPad: return EvaluatePad(instruction, operands);
    case Opcode::kSlice: return EvaluateSlice(instruction, operands);
    case Opcode::kDynamicSlice: return EvaluateDynamicSlice(instruction, operands);
    case Opcode::kDynamicUpdateSlice: return EvaluateDynamicUpdateSlice(instruction, operands);
    case Opcode::kIota: return EvaluateIota(instruction, operands);
    case Opcode::kGetDimensionSize: {
      const Shape& shape = operands[0]->shape();
      const int64_t dimension = instruction.attrs.dimensions.empty() ? -1 : instruction.attrs.dimensions[0];
      if (dimension < 0 || dimension >= shape.rank()) {
        return InvalidArgument("get-dimension-size dimension ", dimension, " out of range for ",
                               shape.ToString());
      }
      return Literal::Scalar<int32_t>(static_cast<int32_t>(shape.dimensions(dimension)))
          .Convert(instruction.shape.element_type());
    }

    case Opcode::kTuple: return TupleOf(operands);
    case Opcode::kGetTupleElement: {
      const auto& elements = operands[0]->tuple_elements();
      const int64_t index = instruction.attrs.tuple_index;
      if (index < 0 || index >= static_cast<int64_t>(elements.size())) {
        return InvalidArgument("get-tuple-element index ", index, " out of range for ",
                               operands[0]->shape().ToString());
      }
      return elements[static_cast<size_t>(index)];
    }

    case Opcode::kReduce: return EvaluateReduce(instruction, operands, context_);
    case Opcode::kReduceWindow: return EvaluateReduceWindow(instruction, operands, context_);
    case Opcode::kSelectAndScatter: return EvaluateSelectAndScatter(instruction, operands, context_);
    case Opcode::kMap: return EvaluateMap(instruction, operands, context_);
    case Opcode::kAllReduce:
      // One replica: the sum over replicas is the operand itself.
      if (operands.size() == 1) return *operands[0];
      return TupleOf(operands);
    case Opcode::kDot: return EvaluateDot(instruction, operands);
    case Opcode::kConvolution: return EvaluateConvolution(instruction, operands);
    case Opcode::kFft: return EvaluateFft(instruction, operands);
    case Opcode::kGather: return EvaluateGather(instruction, operands);
    case Opcode::kScatter: return EvaluateScatter(instruction, operands, context_);
    case Opcode::kSort: return EvaluateSort(instruction, operands, context_);
    case Opcode::kTopK: return EvaluateTopK(instruction, operands);
    case Opcode::kRng: return EvaluateRng(instruction, operands, context_);
    case Opcode::kRngBitGenerator: return EvaluateRngBitGenerator(instruction, operands);
    case Opcode::kBatchNormTraining: return EvaluateBatchNormTraining(instruction, operands);
    case Opcode::kBatchNormInference: return EvaluateBatchNormInference(instruction, operands);
    case Opcode::kBatchNormGrad: return EvaluateBatchNormGrad(instruction, operands);

    case Opcode::kCall:
    case Opcode::kFusion:
      if (instruction.called.size() != 1) {
        return Internal(OpcodeName(instruction.opcode), " needs one computation");
      }
      return Run(*instruction.called[0], operands);
    case Opcode::kWhile: return EvaluateWhile(instruction, operands);
    case Opcode::kConditional: return EvaluateConditional(instruction, operands);
    case Opcode::kOptimizationBarrier: return *operands[0];

    case Opcode::kInfeed: return EvaluateInfeed(instruction, operands, context_);
    case Opcode::kOutfeed: return EvaluateOutfeed(instruction, operands, context_);
    case Opcode::kCustomCall:
      if (IsTapeCustomCall(instruction.attrs.custom_call_target))
        return tapes_.Evaluate(instruction, operands);
      return EvaluateCustomCall(instruction, operands);
    case Opcode::kAfterAll: return Literal(Shape::Token());
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: return Literal::Scalar<uint32_t>(0).Convert(instruction.shape.element_type());

    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return Unimplemented(OpcodeName(instruction.opcode), " needs a second device; the interpreter has one");
    case Opcode::kParameter:
    case Opcode::kConstant: return Internal(OpcodeName(instruction.opcode), " evaluated as an op");
    case Opcode::kOpcodeCount: break;
  }
  return Unimplemented("opcode ", static_cast<int>(instruction.opcode), " is not supported");
}

}  // namespace kiln::interpreter
