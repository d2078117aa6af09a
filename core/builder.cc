// The Builder: every op runs shape inference as it is added, so an illegal
// call fails at once with the op's name; the first failure is sticky.
#include "core/builder.h"

#include <algorithm>

#include "core/shape_inference.h"
#include "core/verifier.h"

namespace kiln {
namespace {

// Parameter numbers index a dense table; this bound keeps a typo from
// allocating gigabytes.
constexpr int64_t kMaxParameterNumber = int64_t{1} << 20;

bool IsIdentityPermutation(std::span<const int64_t> dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> Iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(start + i);
  return values;
}

// Fills an optional per-dimension list: empty means `fill` everywhere.
StatusOr<std::vector<int64_t>> PerDimension(std::string_view op, const char* what,
                                            std::span<const int64_t> values, size_t rank, int64_t fill) {
  if (values.empty()) return std::vector<int64_t>(rank, fill);
  if (values.size() != rank) {
    return InvalidArgument(op, ": ", what, " has ", values.size(), " entries; expected ", rank);
  }
  return std::vector<int64_t>(values.begin(), values.end());
}

StatusOr<Window> MakeWindow(std::string_view op, std::span<const int64_t> sizes,
                            std::span<const int64_t> strides,
                            std::span<const std::pair<int64_t, int64_t>> padding,
                            std::span<const int64_t> base_dilations,
                            std::span<const int64_t> window_dilations) {
  const size_t rank = sizes.size();
  KILN_ASSIGN_OR_RETURN(auto stride, PerDimension(op, "window strides", strides, rank, 1));
  KILN_ASSIGN_OR_RETURN(auto base, PerDimension(op, "base dilations", base_dilations, rank, 1));
  KILN_ASSIGN_OR_RETURN(auto dilation, PerDimension(op, "window dilations", window_dilations, rank, 1));
  if (!padding.empty() && padding.size() != rank) {
    return InvalidArgument(op, ": padding has ", padding.size(), " entries; expected ", rank);
  }
  Window window;
  for (size_t i = 0; i < rank; ++i) {
    WindowDimension dim;
    dim.size = sizes[i];
    dim.stride = stride[i];
    dim.base_dilation = base[i];
    dim.window_dilation = dilation[i];
    if (!padding.empty()) {
      dim.padding_low = padding[i].first;
      dim.padding_high = padding[i].second;
    }
    window.dimensions.push_back(dim);
  }
  return window;
}

// Dims of the result of an implicit (XLA builder) broadcast of two operands,
// and how each operand's dims map into it.
struct BroadcastPlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> lhs_map;
  std::vector<int64_t> rhs_map;
};

StatusOr<BroadcastPlan> PlanBroadcast(std::string_view op, const Shape& lhs, const Shape& rhs,
                                      std::span<const int64_t> broadcast_dimensions) {
  const auto incompatible = [&]() {
    return InvalidArgument(op, ": shapes ", lhs.ToString(), " and ", rhs.ToString(),
                           " are not compatible; expected equal shapes (use broadcast_dimensions)");
  };
  BroadcastPlan plan;
  if (broadcast_dimensions.empty()) {
    if (lhs.rank() == rhs.rank()) {
      for (int64_t i = 0; i < lhs.rank(); ++i) {
        const int64_t a = lhs.dimensions(i);
        const int64_t b = rhs.dimensions(i);
        if (a != b && a != 1 && b != 1) return incompatible();
        plan.dims.push_back(a == 1 ? b : a);
      }
      plan.lhs_map = plan.rhs_map = Iota(lhs.rank());
    } else if (lhs.rank() == 0 || rhs.rank() == 0) {
      plan.dims = lhs.rank() == 0 ? rhs.dimensions() : lhs.dimensions();
      (lhs.rank() == 0 ? plan.rhs_map : plan.lhs_map) = Iota(static_cast<int64_t>(plan.dims.size()));
    } else {
      return incompatible();
    }
    return plan;
  }
  const bool lhs_is_lower = lhs.rank() < rhs.rank();
  const Shape& lower = lhs_is_lower ? lhs : rhs;
  const Shape& higher = lhs_is_lower ? rhs : lhs;
  if (static_cast<int64_t>(broadcast_dimensions.size()) != lower.rank()) {
    return InvalidArgument(op, ": broadcast_dimensions has ", broadcast_dimensions.size(),
                           " entries; expected one per dimension of the lower-rank operand ",
                           lower.ToString(), " (other operand ", higher.ToString(), ")");
  }
  plan.dims = higher.dimensions();
  for (size_t i = 0; i < broadcast_dimensions.size(); ++i) {
    const int64_t j = broadcast_dimensions[i];
    if (j < 0 || j >= higher.rank() || (i > 0 && broadcast_dimensions[i - 1] >= j)) {
      return InvalidArgument(op, ": broadcast_dimensions entry ", j, " must be increasing and in [0, ",
                             higher.rank(), ") for operands ", lhs.ToString(), " and ", rhs.ToString());
    }
    const int64_t a = lower.dimensions(static_cast<int64_t>(i));
    int64_t& b = plan.dims[static_cast<size_t>(j)];
    if (a == b || a == 1) continue;
    if (b != 1) {
      return InvalidArgument(op, ": dimension ", i, " of ", lower.ToString(), " (size ", a,
                             ") does not match dimension ", j, " of ", higher.ToString(), " (size ", b, ")");
    }
    b = a;
  }
  std::vector<int64_t> lower_map(broadcast_dimensions.begin(), broadcast_dimensions.end());
  plan.lhs_map = lhs_is_lower ? lower_map : Iota(higher.rank());
  plan.rhs_map = lhs_is_lower ? Iota(higher.rank()) : lower_map;
  return plan;
}

// Gives `op` (of `shape`) the dims `dims`, its dimension i landing on
// dims[map[i]]; size-1 dims that do not match are dropped by a reshape first
// (XLA's degenerate-dimension broadcast).
Op BroadcastTo(Builder& builder, Op op, const Shape& shape, const std::vector<int64_t>& dims,
               const std::vector<int64_t>& map) {
  if (shape.dimensions() == dims && IsIdentityPermutation(map)) return op;
  std::vector<int64_t> kept_sizes;
  std::vector<int64_t> kept_map;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const int64_t target = map[static_cast<size_t>(i)];
    if (shape.dimensions(i) == dims[static_cast<size_t>(target)]) {
      kept_sizes.push_back(shape.dimensions(i));
      kept_map.push_back(target);
    }
  }
  if (static_cast<int64_t>(kept_sizes.size()) != shape.rank()) op = builder.Reshape(op, kept_sizes);
  return builder.BroadcastInDim(op, dims, kept_map);
}

// Inserts the explicit broadcasts XLA's builder implies for a binary op.
// Operands that cannot be looked up pass through so that the op itself
// reports them.
StatusOr<std::pair<Op, Op>> BroadcastOperands(Builder& builder, Opcode opcode, Op lhs, Op rhs,
                                              std::span<const int64_t> broadcast_dimensions) {
  StatusOr<Shape> lhs_shape = builder.GetShape(lhs);
  StatusOr<Shape> rhs_shape = builder.GetShape(rhs);
  if (!lhs_shape.ok() || !rhs_shape.ok() || !lhs_shape->IsArray() || !rhs_shape->IsArray()) {
    return std::make_pair(lhs, rhs);
  }
  if (broadcast_dimensions.empty() && lhs_shape->dimensions() == rhs_shape->dimensions()) {
    return std::make_pair(lhs, rhs);
  }
  KILN_ASSIGN_OR_RETURN(BroadcastPlan plan,
                        PlanBroadcast(OpcodeName(opcode), *lhs_shape, *rhs_shape, broadcast_dimensions));
  Op new_lhs = BroadcastTo(builder, lhs, *lhs_shape, plan.dims, plan.lhs_map);
  Op new_rhs = BroadcastTo(builder, rhs, *rhs_shape, plan.dims, plan.rhs_map);
  return std::make_pair(new_lhs, new_rhs);
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> MakePadding(std::span<const int64_t> input_dims,
                                                     std::span<const int64_t> window_dims,
                                                     std::span<const int64_t> strides, Padding padding) {
  std::vector<std::pair<int64_t, int64_t>> result;
  for (size_t i = 0; i < input_dims.size(); ++i) {
    if (padding == Padding::kValid) {
      result.emplace_back(0, 0);
      continue;
    }
    const int64_t window = i < window_dims.size() ? window_dims[i] : 1;
    const int64_t stride = i < strides.size() && strides[i] > 0 ? strides[i] : 1;
    const int64_t output = (input_dims[i] + stride - 1) / stride;
    const int64_t needed = std::max<int64_t>(0, (output - 1) * stride + window - input_dims[i]);
    result.emplace_back(needed / 2, needed - needed / 2);
  }
  return result;
}

Builder::Builder(std::string name)
    : name_(std::move(name)),
      pending_(std::make_unique<Module>(name_ + ".pending")),
      entry_(std::make_unique<Computation>(name_)) {}

Builder::~Builder() = default;

Op Builder::Fail(const Status& status) {
  if (first_error_.ok()) first_error_ = status;
  return Op();
}

StatusOr<Instruction*> Builder::Lookup(Op op, const char* what) const {
  if (op.builder() == nullptr || op.id() < 0) {
    return InvalidArgument(what, ": an operand is an invalid op (default-constructed or from a failed op)");
  }
  if (op.builder() != this) {
    return InvalidArgument(what, ": an operand was made by builder '", op.builder()->name(),
                           "', not by this builder '", name_, "'");
  }
  if (op.id() >= static_cast<int64_t>(ops_.size())) {
    return InvalidArgument(what, ": operand id ", op.id(), " is not an op of builder '", name_, "'");
  }
  return ops_[static_cast<size_t>(op.id())];
}

StatusOr<Shape> Builder::GetShape(Op op) const {
  KILN_ASSIGN_OR_RETURN(Instruction * instruction, Lookup(op, "get-shape"));
  return instruction->shape;
}

StatusOr<Computation*> Builder::Import(const Module& computation) {
  if (computation.entry() == nullptr) {
    return InvalidArgument("nested computation module '", computation.name(), "' has no entry computation");
  }
  Status verified = VerifyModule(computation);
  if (!verified.ok()) return verified.WithContext("nested computation '" + computation.name() + "'");
  // Always copy: a Module's address may be reused after it is destroyed, so
  // pointer identity cannot tell that two calls passed the same computation.
  Computation* copy = pending_->ImportComputation(*computation.entry());
  imported_.emplace_back(&computation, copy);
  return copy;
}

Op Builder::AddInstruction(Opcode opcode, std::span<const Op> operands, const Attributes& attrs,
                           std::span<const Module* const> called, const Shape* declared,
                           const Literal* literal) {
  if (!first_error_.ok()) return Op();
  const std::string op_name(OpcodeName(opcode));
  std::vector<Instruction*> operand_instructions;
  std::vector<Shape> operand_shapes;
  for (Op op : operands) {
    StatusOr<Instruction*> instruction = Lookup(op, op_name.c_str());
    if (!instruction.ok()) return Fail(instruction.status());
    operand_instructions.push_back(*instruction);
    operand_shapes.push_back((*instruction)->shape);
  }
  std::vector<Computation*> callees;
  std::vector<ProgramShape> signatures;
  for (const Module* module : called) {
    if (module == nullptr) return Fail(InvalidArgument(op_name, ": a called computation is null"));
    StatusOr<Computation*> callee = Import(*module);
    if (!callee.ok()) return Fail(callee.status().WithContext(op_name));
    callees.push_back(*callee);
    signatures.push_back((*callee)->program_shape());
  }
  StatusOr<Shape> shape = InferShape(opcode, operand_shapes, attrs, signatures, declared);
  if (!shape.ok()) return Fail(shape.status());
  if (opcode == Opcode::kConstant) {
    if (literal == nullptr || !literal->shape().Compatible(*shape)) {
      return Fail(
          InvalidArgument("constant: the value does not match the declared shape ", shape->ToString()));
    }
  }
  auto instruction = std::make_unique<Instruction>();
  instruction->opcode = opcode;
  instruction->shape = std::move(*shape);
  instruction->operands = std::move(operand_instructions);
  instruction->called = std::move(callees);
  instruction->attrs = attrs;
  if (literal != nullptr && opcode == Opcode::kConstant) instruction->literal = *literal;
  // Generated names never collide with each other; only user-named parameters
  // could take one.
  do {
    instruction->name = op_name + "." + std::to_string(next_name_++);
  } while (!instruction_names_.insert(instruction->name).second);
  ops_.push_back(entry_->AddInstruction(std::move(instruction)));
  return Op(this, static_cast<int64_t>(ops_.size()) - 1);
}

// Looks up `op`'s shape for a builder method, or fails that method.
#define KILN_OPERAND_SHAPE_OR_FAIL(shape_var, op, what)                                     \
  if (!first_error_.ok()) return Op();                                                      \
  auto KILN_CONCAT(shape_var, _or) = Lookup(op, what);                                      \
  if (!KILN_CONCAT(shape_var, _or).ok()) return Fail(KILN_CONCAT(shape_var, _or).status()); \
  const Shape shape_var = (*KILN_CONCAT(shape_var, _or))->shape

StatusOr<std::unique_ptr<Module>> Builder::Build(Op root) {
  if (!first_error_.ok()) return first_error_;
  if (ops_.empty()) return InvalidArgument("builder '", name_, "' has no ops to build");
  Instruction* root_instruction = ops_.back();
  if (root.builder() != nullptr || root.id() >= 0) {
    KILN_ASSIGN_OR_RETURN(root_instruction, Lookup(root, "build"));
  }
  const auto& parameters = entry_->parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr) {
      return InvalidArgument("builder '", name_, "': parameter ", i,
                             " is missing; parameters must be numbered 0..", parameters.size() - 1,
                             " without gaps");
    }
  }
  entry_->set_root(root_instruction);
  auto module = std::make_unique<Module>(name_);
  Computation* entry = module->ImportComputation(*entry_);
  if (entry->name() != name_) {
    // A nested computation took the builder's name; give it another one.
    Computation* clash = module->FindComputation(name_);
    for (int suffix = 1; clash != nullptr; ++suffix) {
      const std::string candidate = name_ + ".callee." + std::to_string(suffix);
      if (module->FindComputation(candidate) == nullptr) {
        clash->set_name(candidate);
        clash = nullptr;
      }
    }
    entry->set_name(name_);
  }
  module->set_entry(entry);
  KILN_RETURN_IF_ERROR(VerifyModule(*module));
  return StatusOr<std::unique_ptr<Module>>(std::move(module));
}

// --- Leaves

Op Builder::Parameter(int64_t number, const Shape& shape, const std::string& name) {
  if (!first_error_.ok()) return Op();
  if (number < 0 || number > kMaxParameterNumber) {
    return Fail(InvalidArgument("parameter: number ", number, " must be in [0, ", kMaxParameterNumber, "]"));
  }
  const auto& parameters = entry_->parameters();
  if (static_cast<size_t>(number) < parameters.size() && parameters[static_cast<size_t>(number)] != nullptr) {
    return Fail(InvalidArgument("parameter: number ", number, " is already used by '",
                                parameters[static_cast<size_t>(number)]->name, "'"));
  }
  Attributes attrs;
  attrs.parameter_number = number;
  Op op = AddInstruction(Opcode::kParameter, {}, attrs, {}, &shape);
  if (!op.valid() || name.empty()) return op;
  if (instruction_names_.insert(name).second) {
    instruction_names_.erase(ops_.back()->name);
    ops_.back()->name = name;
  }
  return op;
}

Op Builder::ConstantLiteral(const Literal& literal) {
  const Shape shape = literal.shape();
  return AddInstruction(Opcode::kConstant, {}, Attributes(), {}, &shape, &literal);
}

Op Builder::Iota(const Shape& shape, int64_t iota_dimension) {
  Attributes attrs;
  attrs.iota_dimension = iota_dimension;
  return AddInstruction(Opcode::kIota, {}, attrs, {}, &shape);
}

// --- Elementwise binary ops

Op Builder::BinaryOp(Opcode opcode, Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions) {
  if (!first_error_.ok()) return Op();
  StatusOr<std::pair<Op, Op>> operands = BroadcastOperands(*this, opcode, lhs, rhs, broadcast_dimensions);
  if (!operands.ok()) return Fail(operands.status());
  const Op pair[] = {operands->first, operands->second};
  return AddInstruction(opcode, pair, Attributes());
}

Op Builder::Add(Op lhs, Op rhs, std::span<const int64_t> bd) { return BinaryOp(Opcode::kAdd, lhs, rhs, bd); }
Op Builder::Sub(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kSubtract, lhs, rhs, bd);
}
Op Builder::Mul(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kMultiply, lhs, rhs, bd);
}
Op Builder::Div(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kDivide, lhs, rhs, bd);
}
Op Builder::Rem(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kRemainder, lhs, rhs, bd);
}
Op Builder::Max(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kMaximum, lhs, rhs, bd);
}
Op Builder::Min(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kMinimum, lhs, rhs, bd);
}
Op Builder::Pow(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kPower, lhs, rhs, bd);
}
Op Builder::Atan2(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kAtan2, lhs, rhs, bd);
}
Op Builder::And(Op lhs, Op rhs, std::span<const int64_t> bd) { return BinaryOp(Opcode::kAnd, lhs, rhs, bd); }
Op Builder::Or(Op lhs, Op rhs, std::span<const int64_t> bd) { return BinaryOp(Opcode::kOr, lhs, rhs, bd); }
Op Builder::Xor(Op lhs, Op rhs, std::span<const int64_t> bd) { return BinaryOp(Opcode::kXor, lhs, rhs, bd); }
Op Builder::ShiftLeft(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kShiftLeft, lhs, rhs, bd);
}
Op Builder::ShiftRightArithmetic(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kShiftRightArithmetic, lhs, rhs, bd);
}
Op Builder::ShiftRightLogical(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kShiftRightLogical, lhs, rhs, bd);
}
Op Builder::Complex(Op real, Op imag, std::span<const int64_t> bd) {
  return BinaryOp(Opcode::kComplex, real, imag, bd);
}

// --- Comparisons

Op Builder::Compare(Op lhs, Op rhs, ComparisonDirection direction, ComparisonType type,
                    std::span<const int64_t> broadcast_dimensions) {
  if (!first_error_.ok()) return Op();
  StatusOr<std::pair<Op, Op>> operands =
      BroadcastOperands(*this, Opcode::kCompare, lhs, rhs, broadcast_dimensions);
  if (!operands.ok()) return Fail(operands.status());
  Attributes attrs;
  attrs.comparison_direction = direction;
  attrs.comparison_type = type;
  const Op pair[] = {operands->first, operands->second};
  return AddInstruction(Opcode::kCompare, pair, attrs);
}

Op Builder::Eq(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return Compare(lhs, rhs, ComparisonDirection::kEq, ComparisonType::kDefault, bd);
}
Op Builder::Ne(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return Compare(lhs, rhs, ComparisonDirection::kNe, ComparisonType::kDefault, bd);
}
Op Builder::Ge(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return Compare(lhs, rhs, ComparisonDirection::kGe, ComparisonType::kDefault, bd);
}
Op Builder::Gt(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return Compare(lhs, rhs, ComparisonDirection::kGt, ComparisonType::kDefault, bd);
}
Op Builder::Le(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return Compare(lhs, rhs, ComparisonDirection::kLe, ComparisonType::kDefault, bd);
}
Op Builder::Lt(Op lhs, Op rhs, std::span<const int64_t> bd) {
  return Compare(lhs, rhs, ComparisonDirection::kLt, ComparisonType::kDefault, bd);
}

// --- Elementwise unary ops

Op Builder::UnaryOp(Opcode opcode, Op x) {
  const Op operand[] = {x};
  return AddInstruction(opcode, operand, Attributes());
}

Op Builder::Abs(Op x) { return UnaryOp(Opcode::kAbs, x); }
Op Builder::Neg(Op x) { return UnaryOp(Opcode::kNegate, x); }
Op Builder::Not(Op x) { return UnaryOp(Opcode::kNot, x); }
Op Builder::Sign(Op x) { return UnaryOp(Opcode::kSign, x); }
Op Builder::Floor(Op x) { return UnaryOp(Opcode::kFloor, x); }
Op Builder::Ceil(Op x) { return UnaryOp(Opcode::kCeil, x); }
Op Builder::Round(Op x) { return UnaryOp(Opcode::kRoundNearestAfz, x); }
Op Builder::RoundNearestEven(Op x) { return UnaryOp(Opcode::kRoundNearestEven, x); }
Op Builder::Exp(Op x) { return UnaryOp(Opcode::kExp, x); }
Op Builder::Expm1(Op x) { return UnaryOp(Opcode::kExpm1, x); }
Op Builder::Log(Op x) { return UnaryOp(Opcode::kLog, x); }
Op Builder::Log1p(Op x) { return UnaryOp(Opcode::kLog1p, x); }
Op Builder::Logistic(Op x) { return UnaryOp(Opcode::kLogistic, x); }
Op Builder::Sqrt(Op x) { return UnaryOp(Opcode::kSqrt, x); }
Op Builder::Rsqrt(Op x) { return UnaryOp(Opcode::kRsqrt, x); }
Op Builder::Cbrt(Op x) { return UnaryOp(Opcode::kCbrt, x); }
Op Builder::Sin(Op x) { return UnaryOp(Opcode::kSin, x); }
Op Builder::Cos(Op x) { return UnaryOp(Opcode::kCos, x); }
Op Builder::Tan(Op x) { return UnaryOp(Opcode::kTan, x); }
Op Builder::Tanh(Op x) { return UnaryOp(Opcode::kTanh, x); }
Op Builder::Erf(Op x) { return UnaryOp(Opcode::kErf, x); }
Op Builder::IsFinite(Op x) { return UnaryOp(Opcode::kIsFinite, x); }
Op Builder::Clz(Op x) { return UnaryOp(Opcode::kClz, x); }
Op Builder::Popcnt(Op x) { return UnaryOp(Opcode::kPopcnt, x); }
Op Builder::Real(Op x) { return UnaryOp(Opcode::kReal, x); }
Op Builder::Imag(Op x) { return UnaryOp(Opcode::kImag, x); }
Op Builder::Copy(Op x) { return UnaryOp(Opcode::kCopy, x); }

// --- Ternary

Op Builder::Select(Op pred, Op on_true, Op on_false) {
  const Op operands[] = {pred, on_true, on_false};
  return AddInstruction(Opcode::kSelect, operands, Attributes());
}

Op Builder::Clamp(Op min, Op operand, Op max) {
  const Op operands[] = {min, operand, max};
  return AddInstruction(Opcode::kClamp, operands, Attributes());
}

// --- Type changes

Op Builder::ConvertElementType(Op operand, ElementType new_type) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "convert");
  const Shape declared(new_type, shape.dimensions());
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kConvert, operands, Attributes(), {}, &declared);
}

Op Builder::BitcastConvertType(Op operand, ElementType new_type) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "bitcast-convert");
  std::vector<int64_t> dims = shape.dimensions();
  const int in_bits = BitWidth(shape.element_type());
  const int out_bits = BitWidth(new_type);
  if (in_bits > 0 && out_bits > 0 && out_bits < in_bits) dims.push_back(in_bits / out_bits);
  if (in_bits > 0 && out_bits > in_bits && !dims.empty()) dims.pop_back();
  const Shape declared(new_type, dims);
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kBitcastConvert, operands, Attributes(), {}, &declared);
}

Op Builder::ReducePrecision(Op operand, int64_t exponent_bits, int64_t mantissa_bits) {
  Attributes attrs;
  attrs.exponent_bits = exponent_bits;
  attrs.mantissa_bits = mantissa_bits;
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kReducePrecision, operands, attrs);
}

// --- Shape manipulation

Op Builder::Broadcast(Op operand, std::span<const int64_t> broadcast_sizes) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "broadcast");
  std::vector<int64_t> dims(broadcast_sizes.begin(), broadcast_sizes.end());
  dims.insert(dims.end(), shape.dimensions().begin(), shape.dimensions().end());
  const std::vector<int64_t> mapping =
      ::kiln::Iota(shape.rank(), static_cast<int64_t>(broadcast_sizes.size()));
  return BroadcastInDim(operand, dims, mapping);
}

Op Builder::BroadcastInDim(Op operand, std::span<const int64_t> out_dims,
                           std::span<const int64_t> broadcast_dimensions) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "broadcast");
  const Shape declared(shape.element_type(), std::vector<int64_t>(out_dims.begin(), out_dims.end()));
  Attributes attrs;
  attrs.dimensions.assign(broadcast_dimensions.begin(), broadcast_dimensions.end());
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kBroadcast, operands, attrs, {}, &declared);
}

Op Builder::Reshape(Op operand, std::span<const int64_t> new_sizes) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "reshape");
  const Shape declared(shape.element_type(), std::vector<int64_t>(new_sizes.begin(), new_sizes.end()));
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kReshape, operands, Attributes(), {}, &declared);
}

Op Builder::Reshape(Op operand, std::span<const int64_t> dimensions, std::span<const int64_t> new_sizes) {
  if (IsIdentityPermutation(dimensions)) return Reshape(operand, new_sizes);
  return Reshape(Transpose(operand, dimensions), new_sizes);
}

Op Builder::Collapse(Op operand, std::span<const int64_t> dimensions) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "collapse");
  bool consecutive = !dimensions.empty();
  for (size_t i = 0; consecutive && i < dimensions.size(); ++i) {
    consecutive = dimensions[i] >= 0 && dimensions[i] < shape.rank() &&
                  (i == 0 || dimensions[i] == dimensions[i - 1] + 1);
  }
  if (!consecutive) {
    return Fail(
        InvalidArgument("collapse: dimensions must be a non-empty, in-order, consecutive subset of the "
                        "dimensions of ",
                        shape.ToString()));
  }
  std::vector<int64_t> sizes;
  int64_t collapsed = 1;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d < dimensions.front() || d > dimensions.back()) {
      sizes.push_back(shape.dimensions(d));
      continue;
    }
    collapsed *= shape.dimensions(d);
    if (d == dimensions.back()) sizes.push_back(collapsed);
  }
  return Reshape(operand, sizes);
}

Op Builder::Transpose(Op operand, std::span<const int64_t> permutation) {
  Attributes attrs;
  attrs.dimensions.assign(permutation.begin(), permutation.end());
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kTranspose, operands, attrs);
}

Op Builder::Rev(Op operand, std::span<const int64_t> dimensions) {
  Attributes attrs;
  attrs.dimensions.assign(dimensions.begin(), dimensions.end());
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kReverse, operands, attrs);
}

Op Builder::ConcatInDim(std::span<const Op> operands, int64_t dimension) {
  Attributes attrs;
  attrs.dimensions = {dimension};
  return AddInstruction(Opcode::kConcatenate, operands, attrs);
}

Op Builder::Pad(Op operand, Op padding_value, std::span<const PaddingDimension> padding_config) {
  Attributes attrs;
  attrs.padding.assign(padding_config.begin(), padding_config.end());
  const Op operands[] = {operand, padding_value};
  return AddInstruction(Opcode::kPad, operands, attrs);
}

Op Builder::Slice(Op operand, std::span<const int64_t> start_indices, std::span<const int64_t> limit_indices,
                  std::span<const int64_t> strides) {
  Attributes attrs;
  attrs.slice_starts.assign(start_indices.begin(), start_indices.end());
  attrs.slice_limits.assign(limit_indices.begin(), limit_indices.end());
  attrs.slice_strides.assign(strides.begin(), strides.end());
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kSlice, operands, attrs);
}

Op Builder::SliceInDim(Op operand, int64_t start_index, int64_t limit_index, int64_t stride,
                       int64_t dimension) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "slice");
  if (dimension < 0 || dimension >= shape.rank()) {
    return Fail(
        InvalidArgument("slice: dimension ", dimension, " is out of range for operand ", shape.ToString()));
  }
  std::vector<int64_t> starts(static_cast<size_t>(shape.rank()), 0);
  std::vector<int64_t> limits = shape.dimensions();
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  starts[static_cast<size_t>(dimension)] = start_index;
  limits[static_cast<size_t>(dimension)] = limit_index;
  strides[static_cast<size_t>(dimension)] = stride;
  return Slice(operand, starts, limits, strides);
}

namespace {

// Splits a rank-1 index array into the scalars HLO's dynamic slices take.
StatusOr<std::vector<Op>> SplitIndexVector(Builder& builder, Op indices, const char* op_name) {
  KILN_ASSIGN_OR_RETURN(Shape shape, builder.GetShape(indices));
  if (shape.rank() != 1 || !IsIntegral(shape.element_type())) {
    return InvalidArgument(op_name, ": start_indices ", shape.ToString(), " must be a rank-1 integer array");
  }
  std::vector<Op> scalars;
  for (int64_t i = 0; i < shape.dimensions(0); ++i) {
    const int64_t start[] = {i};
    const int64_t limit[] = {i + 1};
    const int64_t stride[] = {1};
    scalars.push_back(builder.Reshape(builder.Slice(indices, start, limit, stride), {}));
  }
  return scalars;
}

}  // namespace

Op Builder::DynamicSlice(Op operand, Op start_indices, std::span<const int64_t> slice_sizes) {
  if (!first_error_.ok()) return Op();
  StatusOr<std::vector<Op>> scalars = SplitIndexVector(*this, start_indices, "dynamic-slice");
  if (!scalars.ok()) return Fail(scalars.status());
  return DynamicSlice(operand, std::span<const Op>(*scalars), slice_sizes);
}

Op Builder::DynamicSlice(Op operand, std::span<const Op> start_indices,
                         std::span<const int64_t> slice_sizes) {
  std::vector<Op> operands = {operand};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  Attributes attrs;
  attrs.dynamic_slice_sizes.assign(slice_sizes.begin(), slice_sizes.end());
  return AddInstruction(Opcode::kDynamicSlice, operands, attrs);
}

Op Builder::DynamicUpdateSlice(Op operand, Op update, Op start_indices) {
  if (!first_error_.ok()) return Op();
  StatusOr<std::vector<Op>> scalars = SplitIndexVector(*this, start_indices, "dynamic-update-slice");
  if (!scalars.ok()) return Fail(scalars.status());
  return DynamicUpdateSlice(operand, update, std::span<const Op>(*scalars));
}

Op Builder::DynamicUpdateSlice(Op operand, Op update, std::span<const Op> start_indices) {
  std::vector<Op> operands = {operand, update};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  return AddInstruction(Opcode::kDynamicUpdateSlice, operands, Attributes());
}

Op Builder::Gather(Op operand, Op start_indices, const GatherDimensionNumbers& dimension_numbers,
                   std::span<const int64_t> slice_sizes, bool indices_are_sorted) {
  Attributes attrs;
  attrs.gather = dimension_numbers;
  attrs.gather_slice_sizes.assign(slice_sizes.begin(), slice_sizes.end());
  attrs.indices_are_sorted = indices_are_sorted;
  const Op operands[] = {operand, start_indices};
  return AddInstruction(Opcode::kGather, operands, attrs);
}

Op Builder::Scatter(std::span<const Op> operands, Op scatter_indices, std::span<const Op> updates,
                    const Module& update_computation, const ScatterDimensionNumbers& dimension_numbers,
                    bool indices_are_sorted, bool unique_indices) {
  std::vector<Op> all(operands.begin(), operands.end());
  all.push_back(scatter_indices);
  all.insert(all.end(), updates.begin(), updates.end());
  Attributes attrs;
  attrs.scatter = dimension_numbers;
  attrs.indices_are_sorted = indices_are_sorted;
  attrs.unique_indices = unique_indices;
  const Module* called[] = {&update_computation};
  return AddInstruction(Opcode::kScatter, all, attrs, called);
}

Op Builder::Scatter(Op operand, Op scatter_indices, Op updates, const Module& update_computation,
                    const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted,
                    bool unique_indices) {
  const Op operands[] = {operand};
  const Op update_ops[] = {updates};
  return Scatter(operands, scatter_indices, update_ops, update_computation, dimension_numbers,
                 indices_are_sorted, unique_indices);
}

Op Builder::GetDimensionSize(Op operand, int64_t dimension) {
  Attributes attrs;
  attrs.dimensions = {dimension};
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kGetDimensionSize, operands, attrs);
}

// --- Tuples

Op Builder::Tuple(std::span<const Op> elements) {
  return AddInstruction(Opcode::kTuple, elements, Attributes());
}

Op Builder::GetTupleElement(Op tuple, int64_t index) {
  Attributes attrs;
  attrs.tuple_index = index;
  const Op operands[] = {tuple};
  return AddInstruction(Opcode::kGetTupleElement, operands, attrs);
}

// --- Contractions

Op Builder::Dot(Op lhs, Op rhs) {
  KILN_OPERAND_SHAPE_OR_FAIL(lhs_shape, lhs, "dot");
  KILN_OPERAND_SHAPE_OR_FAIL(rhs_shape, rhs, "dot");
  const auto is_vector_or_matrix = [](const Shape& s) {
    return s.IsArray() && (s.rank() == 1 || s.rank() == 2);
  };
  if (!is_vector_or_matrix(lhs_shape) || !is_vector_or_matrix(rhs_shape)) {
    return Fail(InvalidArgument("dot: operands ", lhs_shape.ToString(), " and ", rhs_shape.ToString(),
                                " must be vectors or matrices; use DotGeneral for other ranks"));
  }
  DotDimensionNumbers dimension_numbers;
  dimension_numbers.lhs_contracting_dimensions = {lhs_shape.rank() - 1};
  dimension_numbers.rhs_contracting_dimensions = {0};
  return DotGeneral(lhs, rhs, dimension_numbers);
}

Op Builder::DotGeneral(Op lhs, Op rhs, const DotDimensionNumbers& dimension_numbers) {
  Attributes attrs;
  attrs.dot = dimension_numbers;
  const Op operands[] = {lhs, rhs};
  return AddInstruction(Opcode::kDot, operands, attrs);
}

Op Builder::SetOperandPrecision(Op op, OperandPrecision lhs, OperandPrecision rhs) {
  if (!first_error_.ok()) return Op();
  StatusOr<Instruction*> instruction = Lookup(op, "set-operand-precision");
  if (!instruction.ok()) return Fail(instruction.status());
  const Opcode opcode = (*instruction)->opcode;
  if (opcode != Opcode::kDot && opcode != Opcode::kConvolution) {
    return Fail(InvalidArgument("set-operand-precision: '", (*instruction)->name, "' is a ",
                                OpcodeName(opcode), "; only dot and convolution have operand precisions"));
  }
  (*instruction)->attrs.operand_precision = {lhs, rhs};
  return op;
}

ConvolutionDimensionNumbers Builder::DefaultConvDimensionNumbers(int64_t spatial_rank) {
  ConvolutionDimensionNumbers dn;
  dn.input_batch_dimension = 0;
  dn.input_feature_dimension = 1;
  dn.kernel_output_feature_dimension = 0;
  dn.kernel_input_feature_dimension = 1;
  dn.output_batch_dimension = 0;
  dn.output_feature_dimension = 1;
  for (int64_t i = 0; i < spatial_rank; ++i) {
    dn.input_spatial_dimensions.push_back(i + 2);
    dn.kernel_spatial_dimensions.push_back(i + 2);
    dn.output_spatial_dimensions.push_back(i + 2);
  }
  return dn;
}

Op Builder::Conv(Op lhs, Op rhs, std::span<const int64_t> window_strides, Padding padding) {
  KILN_OPERAND_SHAPE_OR_FAIL(lhs_shape, lhs, "convolution");
  if (lhs_shape.rank() < 2) {
    return Fail(InvalidArgument("convolution: input ", lhs_shape.ToString(),
                                " must have rank >= 2 (N, C, spatial...)"));
  }
  return ConvWithGeneralDimensions(lhs, rhs, window_strides, padding,
                                   DefaultConvDimensionNumbers(lhs_shape.rank() - 2));
}

Op Builder::ConvWithGeneralPadding(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                                   std::span<const std::pair<int64_t, int64_t>> padding) {
  KILN_OPERAND_SHAPE_OR_FAIL(lhs_shape, lhs, "convolution");
  if (lhs_shape.rank() < 2) {
    return Fail(InvalidArgument("convolution: input ", lhs_shape.ToString(),
                                " must have rank >= 2 (N, C, spatial...)"));
  }
  return ConvGeneral(lhs, rhs, window_strides, padding, DefaultConvDimensionNumbers(lhs_shape.rank() - 2));
}

Op Builder::ConvWithGeneralDimensions(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                                      Padding padding, const ConvolutionDimensionNumbers& dimension_numbers) {
  KILN_OPERAND_SHAPE_OR_FAIL(lhs_shape, lhs, "convolution");
  KILN_OPERAND_SHAPE_OR_FAIL(rhs_shape, rhs, "convolution");
  std::vector<int64_t> input_sizes;
  std::vector<int64_t> kernel_sizes;
  const auto& dn = dimension_numbers;
  for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
    const int64_t in = dn.input_spatial_dimensions[i];
    const int64_t k = i < dn.kernel_spatial_dimensions.size() ? dn.kernel_spatial_dimensions[i] : -1;
    if (in < 0 || in >= lhs_shape.rank() || k < 0 || k >= rhs_shape.rank()) {
      return Fail(InvalidArgument("convolution: spatial dimension numbers do not fit input ",
                                  lhs_shape.ToString(), " and kernel ", rhs_shape.ToString()));
    }
    input_sizes.push_back(lhs_shape.dimensions(in));
    kernel_sizes.push_back(rhs_shape.dimensions(k));
  }
  if (window_strides.size() != input_sizes.size()) {
    return Fail(InvalidArgument("convolution: ", window_strides.size(), " window strides given; expected ",
                                input_sizes.size(), " (one per spatial dimension)"));
  }
  return ConvGeneral(lhs, rhs, window_strides,
                     MakePadding(input_sizes, kernel_sizes, window_strides, padding), dimension_numbers);
}

Op Builder::ConvGeneral(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                        std::span<const std::pair<int64_t, int64_t>> padding,
                        const ConvolutionDimensionNumbers& dimension_numbers) {
  return ConvGeneralDilated(lhs, rhs, window_strides, padding, {}, {}, dimension_numbers);
}

Op Builder::ConvGeneralDilated(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                               std::span<const std::pair<int64_t, int64_t>> padding,
                               std::span<const int64_t> lhs_dilation, std::span<const int64_t> rhs_dilation,
                               const ConvolutionDimensionNumbers& dimension_numbers,
                               int64_t feature_group_count, int64_t batch_group_count) {
  KILN_OPERAND_SHAPE_OR_FAIL(rhs_shape, rhs, "convolution");
  std::vector<int64_t> kernel_sizes;
  for (int64_t d : dimension_numbers.kernel_spatial_dimensions) {
    if (d < 0 || d >= rhs_shape.rank()) {
      return Fail(InvalidArgument("convolution: kernel spatial dimension ", d, " is out of range for kernel ",
                                  rhs_shape.ToString()));
    }
    kernel_sizes.push_back(rhs_shape.dimensions(d));
  }
  const size_t spatial = dimension_numbers.input_spatial_dimensions.size();
  if (kernel_sizes.size() != spatial || window_strides.size() != spatial) {
    return Fail(InvalidArgument("convolution: ", window_strides.size(), " window strides and ",
                                kernel_sizes.size(), " kernel spatial dimensions given; expected ", spatial,
                                " of each"));
  }
  StatusOr<Window> window =
      MakeWindow("convolution", kernel_sizes, window_strides, padding, lhs_dilation, rhs_dilation);
  if (!window.ok()) return Fail(window.status());
  Attributes attrs;
  attrs.window = std::move(*window);
  attrs.conv = dimension_numbers;
  attrs.feature_group_count = feature_group_count;
  attrs.batch_group_count = batch_group_count;
  const Op operands[] = {lhs, rhs};
  return AddInstruction(Opcode::kConvolution, operands, attrs);
}

// --- Reductions and windows

Op Builder::Reduce(Op operand, Op init_value, const Module& computation,
                   std::span<const int64_t> dimensions) {
  const Op operands[] = {operand};
  const Op inits[] = {init_value};
  return Reduce(operands, inits, computation, dimensions);
}

Op Builder::Reduce(std::span<const Op> operands, std::span<const Op> init_values, const Module& computation,
                   std::span<const int64_t> dimensions) {
  std::vector<Op> all(operands.begin(), operands.end());
  all.insert(all.end(), init_values.begin(), init_values.end());
  if (operands.size() != init_values.size()) {
    return Fail(InvalidArgument("reduce: ", operands.size(), " operands but ", init_values.size(),
                                " init values; expected one init value per operand"));
  }
  Attributes attrs;
  attrs.dimensions.assign(dimensions.begin(), dimensions.end());
  const Module* called[] = {&computation};
  return AddInstruction(Opcode::kReduce, all, attrs, called);
}

Op Builder::ReduceWindow(Op operand, Op init_value, const Module& computation,
                         std::span<const int64_t> window_dimensions, std::span<const int64_t> window_strides,
                         Padding padding) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "reduce-window");
  if (static_cast<int64_t>(window_dimensions.size()) != shape.rank() ||
      static_cast<int64_t>(window_strides.size()) != shape.rank()) {
    return Fail(InvalidArgument("reduce-window: window dimensions ", window_dimensions.size(),
                                " and strides ", window_strides.size(),
                                " must both have one entry per dimension of operand ", shape.ToString()));
  }
  const auto pads = MakePadding(shape.dimensions(), window_dimensions, window_strides, padding);
  const Op operands[] = {operand};
  const Op inits[] = {init_value};
  return ReduceWindowWithGeneralPadding(operands, inits, computation, window_dimensions, window_strides, {},
                                        {}, pads);
}

Op Builder::ReduceWindowWithGeneralPadding(std::span<const Op> operands, std::span<const Op> init_values,
                                           const Module& computation,
                                           std::span<const int64_t> window_dimensions,
                                           std::span<const int64_t> window_strides,
                                           std::span<const int64_t> base_dilations,
                                           std::span<const int64_t> window_dilations,
                                           std::span<const std::pair<int64_t, int64_t>> padding) {
  if (!first_error_.ok()) return Op();
  if (operands.size() != init_values.size()) {
    return Fail(InvalidArgument("reduce-window: ", operands.size(), " operands but ", init_values.size(),
                                " init values; expected one init value per operand"));
  }
  StatusOr<Window> window = MakeWindow("reduce-window", window_dimensions, window_strides, padding,
                                       base_dilations, window_dilations);
  if (!window.ok()) return Fail(window.status());
  std::vector<Op> all(operands.begin(), operands.end());
  all.insert(all.end(), init_values.begin(), init_values.end());
  Attributes attrs;
  attrs.window = std::move(*window);
  const Module* called[] = {&computation};
  return AddInstruction(Opcode::kReduceWindow, all, attrs, called);
}

Op Builder::SelectAndScatter(Op operand, const Module& select, std::span<const int64_t> window_dimensions,
                             std::span<const int64_t> window_strides, Padding padding, Op source,
                             Op init_value, const Module& scatter) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "select-and-scatter");
  if (static_cast<int64_t>(window_dimensions.size()) != shape.rank() ||
      static_cast<int64_t>(window_strides.size()) != shape.rank()) {
    return Fail(InvalidArgument("select-and-scatter: window dimensions ", window_dimensions.size(),
                                " and strides ", window_strides.size(),
                                " must both have one entry per dimension of operand ", shape.ToString()));
  }
  const auto pads = MakePadding(shape.dimensions(), window_dimensions, window_strides, padding);
  return SelectAndScatterWithGeneralPadding(operand, select, window_dimensions, window_strides, pads, source,
                                            init_value, scatter);
}

Op Builder::SelectAndScatterWithGeneralPadding(Op operand, const Module& select,
                                               std::span<const int64_t> window_dimensions,
                                               std::span<const int64_t> window_strides,
                                               std::span<const std::pair<int64_t, int64_t>> padding,
                                               Op source, Op init_value, const Module& scatter) {
  if (!first_error_.ok()) return Op();
  StatusOr<Window> window =
      MakeWindow("select-and-scatter", window_dimensions, window_strides, padding, {}, {});
  if (!window.ok()) return Fail(window.status());
  Attributes attrs;
  attrs.window = std::move(*window);
  const Op operands[] = {operand, source, init_value};
  const Module* called[] = {&select, &scatter};
  return AddInstruction(Opcode::kSelectAndScatter, operands, attrs, called);
}

Op Builder::Map(std::span<const Op> operands, const Module& computation,
                std::span<const int64_t> dimensions) {
  Attributes attrs;
  attrs.dimensions.assign(dimensions.begin(), dimensions.end());
  const Module* called[] = {&computation};
  return AddInstruction(Opcode::kMap, operands, attrs, called);
}

namespace {

// A two-parameter scalar computation `(T, T) -> op(p0, p1)`.
StatusOr<std::unique_ptr<Module>> ScalarBinaryComputation(const std::string& name, ElementType type,
                                                          Op (Builder::*op)(Op, Op,
                                                                            std::span<const int64_t>)) {
  Builder builder(name);
  Op lhs = builder.Parameter(0, Shape::Scalar(type), "lhs");
  Op rhs = builder.Parameter(1, Shape::Scalar(type), "rhs");
  (builder.*op)(lhs, rhs, {});
  return builder.Build();
}

}  // namespace

Op Builder::Sort(Op operand) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "sort");
  if (!shape.IsArray()) return Fail(InvalidArgument("sort: operand ", shape.ToString(), " must be an array"));
  StatusOr<std::unique_ptr<Module>> comparator =
      ScalarBinaryComputation("lt_comparator", shape.element_type(), &Builder::Lt);
  if (!comparator.ok()) return Fail(comparator.status().WithContext("sort"));
  const Op operands[] = {operand};
  return Sort(operands, **comparator, -1, false);
}

Op Builder::Fft(Op operand, FftType type, std::span<const int64_t> fft_length) {
  Attributes attrs;
  attrs.fft_type = type;
  attrs.fft_length.assign(fft_length.begin(), fft_length.end());
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kFft, operands, attrs);
}

Op Builder::TopK(Op operand, int64_t k, bool largest) {
  Attributes attrs;
  attrs.top_k = k;
  attrs.largest = largest;
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kTopK, operands, attrs);
}

Op Builder::Sort(std::span<const Op> operands, const Module& comparator, int64_t dimension, bool is_stable) {
  if (!first_error_.ok()) return Op();
  if (operands.empty()) return Fail(InvalidArgument("sort: needs at least one operand"));
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operands[0], "sort");
  StatusOr<int64_t> canonical = CanonicalizeDimension(dimension, shape.rank(), "sort");
  if (!canonical.ok())
    return Fail(InvalidArgument(canonical.status().message(), " (operand ", shape.ToString(), ")"));
  Attributes attrs;
  attrs.dimensions = {*canonical};
  attrs.is_stable = is_stable;
  const Module* called[] = {&comparator};
  return AddInstruction(Opcode::kSort, operands, attrs, called);
}

Op Builder::CrossReplicaSum(Op operand) {
  KILN_OPERAND_SHAPE_OR_FAIL(shape, operand, "all-reduce");
  if (!shape.IsArray())
    return Fail(InvalidArgument("all-reduce: operand ", shape.ToString(), " must be an array"));
  StatusOr<std::unique_ptr<Module>> sum =
      ScalarBinaryComputation("add_reducer", shape.element_type(), &Builder::Add);
  if (!sum.ok()) return Fail(sum.status().WithContext("all-reduce"));
  return AllReduce(operand, **sum);
}

Op Builder::AllReduce(Op operand, const Module& computation) {
  const Op operands[] = {operand};
  const Module* called[] = {&computation};
  return AddInstruction(Opcode::kAllReduce, operands, Attributes(), called);
}

// --- Batch normalisation

Op Builder::BatchNormTraining(Op operand, Op scale, Op offset, float epsilon, int64_t feature_index) {
  Attributes attrs;
  attrs.epsilon = epsilon;
  attrs.feature_index = feature_index;
  const Op operands[] = {operand, scale, offset};
  return AddInstruction(Opcode::kBatchNormTraining, operands, attrs);
}

Op Builder::BatchNormInference(Op operand, Op scale, Op offset, Op mean, Op variance, float epsilon,
                               int64_t feature_index) {
  Attributes attrs;
  attrs.epsilon = epsilon;
  attrs.feature_index = feature_index;
  const Op operands[] = {operand, scale, offset, mean, variance};
  return AddInstruction(Opcode::kBatchNormInference, operands, attrs);
}

Op Builder::BatchNormGrad(Op operand, Op scale, Op mean, Op variance, Op grad_output, float epsilon,
                          int64_t feature_index) {
  Attributes attrs;
  attrs.epsilon = epsilon;
  attrs.feature_index = feature_index;
  const Op operands[] = {operand, scale, mean, variance, grad_output};
  return AddInstruction(Opcode::kBatchNormGrad, operands, attrs);
}

// --- Control flow

Op Builder::Call(const Module& computation, std::span<const Op> operands) {
  const Module* called[] = {&computation};
  return AddInstruction(Opcode::kCall, operands, Attributes(), called);
}

Op Builder::While(const Module& condition, const Module& body, Op init) {
  const Op operands[] = {init};
  const Module* called[] = {&condition, &body};
  return AddInstruction(Opcode::kWhile, operands, Attributes(), called);
}

Op Builder::Conditional(Op predicate, Op true_operand, const Module& true_computation, Op false_operand,
                        const Module& false_computation) {
  const Op operands[] = {predicate, true_operand, false_operand};
  const Module* called[] = {&true_computation, &false_computation};
  return AddInstruction(Opcode::kConditional, operands, Attributes(), called);
}

Op Builder::Conditional(Op branch_index, std::span<const Module* const> branch_computations,
                        std::span<const Op> branch_operands) {
  std::vector<Op> operands = {branch_index};
  operands.insert(operands.end(), branch_operands.begin(), branch_operands.end());
  return AddInstruction(Opcode::kConditional, operands, Attributes(), branch_computations);
}

Op Builder::OptimizationBarrier(Op operand) {
  const Op operands[] = {operand};
  return AddInstruction(Opcode::kOptimizationBarrier, operands, Attributes());
}

// --- Random numbers

Op Builder::RngUniform(Op a, Op b, const Shape& shape) {
  Attributes attrs;
  attrs.rng_distribution = RngDistribution::kUniform;
  const Op operands[] = {a, b};
  return AddInstruction(Opcode::kRng, operands, attrs, {}, &shape);
}

Op Builder::RngNormal(Op mu, Op sigma, const Shape& shape) {
  Attributes attrs;
  attrs.rng_distribution = RngDistribution::kNormal;
  const Op operands[] = {mu, sigma};
  return AddInstruction(Opcode::kRng, operands, attrs, {}, &shape);
}

Op Builder::RngBernoulli(Op p, const Shape& shape) {
  KILN_OPERAND_SHAPE_OR_FAIL(p_shape, p, "rng");
  if (!p_shape.IsScalar() || !IsFloating(p_shape.element_type())) {
    return Fail(InvalidArgument("rng: Bernoulli probability ", p_shape.ToString(),
                                " must be a floating-point scalar"));
  }
  if (!shape.IsArray() || shape.element_type() == ElementType::kPred || IsComplex(shape.element_type())) {
    return Fail(
        InvalidArgument("rng: Bernoulli result ", shape.ToString(), " must be an integer or float array"));
  }
  StatusOr<Literal> one = Literal::Scalar<float>(1.0f).Convert(p_shape.element_type());
  if (!one.ok()) return Fail(one.status().WithContext("rng"));
  const Literal zero(Shape::Scalar(p_shape.element_type()));
  Op uniform = RngUniform(ConstantLiteral(zero), ConstantLiteral(*one),
                          Shape(p_shape.element_type(), shape.dimensions()));
  return ConvertElementType(Lt(uniform, p), shape.element_type());
}

Op Builder::RngBitGenerator(RngAlgorithm algorithm, Op initial_state, const Shape& shape) {
  KILN_OPERAND_SHAPE_OR_FAIL(state, initial_state, "rng-bit-generator");
  const Shape declared = Shape::Tuple({state, shape});
  Attributes attrs;
  attrs.rng_algorithm = algorithm;
  const Op operands[] = {initial_state};
  return AddInstruction(Opcode::kRngBitGenerator, operands, attrs, {}, &declared);
}

// --- Host communication and extension

Op Builder::Infeed(const Shape& shape, const std::string& config) {
  Op token = CreateToken();
  const Shape declared = Shape::Tuple({shape, Shape::Token()});
  Attributes attrs;
  attrs.infeed_config = config;
  const Op operands[] = {token};
  return GetTupleElement(AddInstruction(Opcode::kInfeed, operands, attrs, {}, &declared), 0);
}

Op Builder::Outfeed(Op operand, const std::string& config) {
  Op token = CreateToken();
  Attributes attrs;
  attrs.infeed_config = config;
  const Op operands[] = {operand, token};
  return AddInstruction(Opcode::kOutfeed, operands, attrs);
}

Op Builder::CustomCall(const std::string& target, std::span<const Op> operands, const Shape& shape,
                       const std::string& opaque, bool has_side_effect) {
  if (!first_error_.ok()) return Op();
  if (target.empty()) return Fail(InvalidArgument("custom-call: the target name must not be empty"));
  Attributes attrs;
  attrs.custom_call_target = target;
  attrs.backend_config = opaque;
  attrs.custom_call_has_side_effect = has_side_effect;
  return AddInstruction(Opcode::kCustomCall, operands, attrs, {}, &shape);
}

Op Builder::AfterAll(std::span<const Op> tokens) {
  return AddInstruction(Opcode::kAfterAll, tokens, Attributes());
}

Op Builder::CreateToken() { return AfterAll({}); }

#undef KILN_OPERAND_SHAPE_OR_FAIL

}  // namespace kiln
