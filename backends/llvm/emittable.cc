#include "backends/llvm/emittable.h"

#include <algorithm>

#include "backends/llvm/convolution_emitter.h"
#include "backends/llvm/dot_emitter.h"
#include "backends/llvm/scalar_ops_ir.h"

namespace kiln::llvm_ir {
namespace {

Status Refuse(const Instruction& instruction, const char* why) {
  return Unimplemented("cpu codegen: cannot emit ", OpcodeName(instruction.opcode), " ",
                       instruction.shape.ToString(), " (", instruction.name, "): ", why);
}

// A shape that is not a tuple is its own one leaf: it is answered without
// Shape::Leaves, which copies every leaf (the lowering asks this of every
// instruction of every kernel, 7% of a 200k-instruction compile).
bool AllLeavesArrays(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray();
  for (const Shape& leaf : shape.Leaves()) {
    if (!leaf.IsArray()) return false;
  }
  return !shape.Leaves().empty();
}

bool AnyComplex(const Instruction& instruction) {
  auto complex_leaf = [](const Shape& shape) {
    if (!shape.IsTuple()) return IsComplex(shape.element_type());
    for (const Shape& leaf : shape.Leaves()) {
      if (IsComplex(leaf.element_type())) return true;
    }
    return false;
  };
  if (complex_leaf(instruction.shape)) return true;
  for (const Instruction* operand : instruction.operands) {
    if (complex_leaf(operand->shape)) return true;
  }
  return false;
}

Status CheckComputation(const Computation& computation, bool scalar_only, bool skip_root);

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool AllBelow(const std::vector<int64_t>& values, int64_t limit) {
  return std::all_of(values.begin(), values.end(),
                     [&](int64_t value) { return value >= 0 && value < limit; });
}

// The emitter indexes with these numbers unchecked, so anything malformed is
// refused here (the library path then reports it).
Status CheckGather(const Instruction& instruction) {
  if (instruction.operands.size() != 2)
    return Refuse(instruction, "gather needs an operand and start indices");
  const Shape& operand = instruction.operand(0)->shape;
  const Shape& indices = instruction.operand(1)->shape;
  const GatherDimensionNumbers& numbers = instruction.attrs.gather;
  const std::vector<int64_t>& slice_sizes = instruction.attrs.gather_slice_sizes;
  const int64_t operand_rank = operand.rank();
  if (!IsIntegral(indices.element_type())) return Refuse(instruction, "start indices must be integers");
  if (static_cast<int64_t>(slice_sizes.size()) != operand_rank) return Refuse(instruction, "bad slice sizes");
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (slice_sizes[static_cast<size_t>(d)] < 0 ||
        slice_sizes[static_cast<size_t>(d)] > operand.dimensions(d)) {
      return Refuse(instruction, "slice larger than the operand");
    }
  }
  if (numbers.index_vector_dim < 0 || numbers.index_vector_dim > indices.rank()) {
    return Refuse(instruction, "bad index_vector_dim");
  }
  const int64_t vector_size =
      numbers.index_vector_dim == indices.rank() ? 1 : indices.dimensions(numbers.index_vector_dim);
  if (static_cast<int64_t>(numbers.start_index_map.size()) != vector_size ||
      !AllBelow(numbers.start_index_map, operand_rank) ||
      !AllBelow(numbers.collapsed_slice_dims, operand_rank) ||
      !AllBelow(numbers.operand_batching_dims, operand_rank) ||
      !AllBelow(numbers.start_indices_batching_dims, indices.rank()) ||
      numbers.operand_batching_dims.size() != numbers.start_indices_batching_dims.size() ||
      !AllBelow(numbers.offset_dims, instruction.shape.rank())) {
    return Refuse(instruction, "bad gather dimension numbers");
  }
  if (Contains(numbers.start_indices_batching_dims, numbers.index_vector_dim)) {
    return Refuse(instruction, "index_vector_dim cannot be a batching dimension");
  }
  int64_t windowed = 0;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(numbers.collapsed_slice_dims, d) && !Contains(numbers.operand_batching_dims, d)) ++windowed;
  }
  const int64_t batch_rank = instruction.shape.rank() - static_cast<int64_t>(numbers.offset_dims.size());
  const int64_t indices_batch_rank = indices.rank() - (numbers.index_vector_dim < indices.rank() ? 1 : 0);
  if (windowed != static_cast<int64_t>(numbers.offset_dims.size()) || batch_rank != indices_batch_rank) {
    return Refuse(instruction, "gather offset or batch dimensions do not match the operands");
  }
  return OkStatus();
}

Status CheckInstruction(const Instruction& instruction, bool scalar_only) {
  const Opcode opcode = instruction.opcode;
  for (const Instruction* operand : instruction.operands) {
    if (!AllLeavesArrays(operand->shape)) return Refuse(instruction, "operands must be arrays");
  }
  if (!AllLeavesArrays(instruction.shape)) return Refuse(instruction, "results must be arrays");
  if (AnyComplex(instruction)) {
    // What complex numbers do not have: an order, bits to reinterpret, iota.
    switch (opcode) {
      case Opcode::kIota:
      case Opcode::kClamp:
      case Opcode::kBitcastConvert:
      case Opcode::kSort: return Refuse(instruction, "not defined for complex numbers");
      case Opcode::kCompare:
        if (instruction.attrs.comparison_direction != ComparisonDirection::kEq &&
            instruction.attrs.comparison_direction != ComparisonDirection::kNe) {
          return Refuse(instruction, "complex numbers only compare for (in)equality");
        }
        break;
      default: break;
    }
  }
  if (instruction.shape.IsTuple() && opcode != Opcode::kTuple && opcode != Opcode::kReduce &&
      opcode != Opcode::kReduceWindow) {
    return Refuse(instruction, "tuple-shaped results only come from tuple, reduce and reduce-window");
  }
  if (scalar_only && instruction.shape.IsArray() && instruction.shape.element_count() != 1) {
    return Refuse(instruction, "called computations must be scalar");
  }
  const ElementType type =
      instruction.shape.IsArray() ? instruction.shape.element_type() : ElementType::kInvalid;
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kCompare:
    case Opcode::kConvert:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kDynamicSlice:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kReal:
    case Opcode::kImag: return OkStatus();
    case Opcode::kComplex:
      if (!IsComplex(type) || instruction.operands.size() != 2)
        return Refuse(instruction, "needs c64 or c128");
      return OkStatus();
    case Opcode::kBitcastConvert: {
      const Shape& from = instruction.operand(0)->shape;
      const int64_t from_width = ByteWidth(from.element_type()), to_width = ByteWidth(type);
      if (from_width == to_width) return OkStatus();
      if (from.element_type() == ElementType::kPred || type == ElementType::kPred)
        return Refuse(instruction, "pred has no bytes to split or join");
      // Narrowing adds a last dimension of wide / narrow pieces; widening removes it.
      const Shape& wide = from_width > to_width ? from : instruction.shape;
      const Shape& narrow = from_width > to_width ? instruction.shape : from;
      const int64_t ratio = std::max(from_width, to_width) / std::min(from_width, to_width);
      std::vector<int64_t> expected = wide.dimensions();
      expected.push_back(ratio);
      if (narrow.dimensions() != expected) return Refuse(instruction, "bitcast-convert shapes do not match");
      return OkStatus();
    }
    case Opcode::kIsFinite:
    case Opcode::kReducePrecision:
      if (!IsFloating(instruction.operand(0)->shape.element_type()))
        return Refuse(instruction, "needs a float operand");
      if (opcode == Opcode::kReducePrecision &&
          (instruction.attrs.exponent_bits < 1 || instruction.attrs.mantissa_bits < 0)) {
        return Refuse(instruction, "bad exponent or mantissa bits");
      }
      return OkStatus();
    case Opcode::kGather: return CheckGather(instruction);
    case Opcode::kDot: return CheckDotEmittable(instruction);
    case Opcode::kConvolution: return CheckConvolutionEmittable(instruction);
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (instruction.called.size() != 1) return Refuse(instruction, "needs one computation");
      return CheckComputation(*instruction.called[0], /*scalar_only=*/true, /*skip_root=*/false);
    default: break;
  }
  const OpKind kind = OpcodeKind(opcode);
  if (kind == OpKind::kUnary && UnaryOpSupported(opcode, instruction.operand(0)->shape.element_type()))
    return OkStatus();
  if (kind == OpKind::kBinary && BinaryOpSupported(opcode, type)) return OkStatus();
  return Unimplemented("cpu codegen: cannot emit ", OpcodeName(opcode), " for element type ",
                       type == ElementType::kInvalid ? "tuple" : ElementTypeName(type), " (",
                       instruction.name, ")");
}

Status CheckComputation(const Computation& computation, bool scalar_only, bool skip_root) {
  if (computation.root() == nullptr)
    return InvalidArgument("cpu codegen: ", computation.name(), " has no root");
  for (const Instruction* instruction : computation.PostOrder()) {
    if (skip_root && instruction == computation.root()) continue;
    KILN_RETURN_IF_ERROR(CheckInstruction(*instruction, scalar_only));
  }
  return OkStatus();
}

// A scalar computation of `arguments` returning `results` (pred[] or the
// given types), emittable inline.
Status CheckScalarComputation(const Instruction& instruction, const Computation& computation,
                              const std::vector<ElementType>& arguments,
                              const std::vector<ElementType>& results) {
  const auto& parameters = computation.parameters();
  if (parameters.size() != arguments.size() || computation.root() == nullptr) {
    return Refuse(instruction, "nested computation has the wrong number of parameters");
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Shape& shape = parameters[i]->shape;
    if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != arguments[i]) {
      return Refuse(instruction, "nested computation parameters must be scalars of the operand types");
    }
  }
  const std::vector<Shape> leaves = computation.root()->shape.Leaves();
  if (leaves.size() != results.size())
    return Refuse(instruction, "nested computation returns the wrong arity");
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].IsArray() || leaves[i].rank() != 0 || leaves[i].element_type() != results[i]) {
      return Refuse(instruction, "nested computation returns the wrong types");
    }
  }
  return CheckComputation(computation, /*scalar_only=*/true, /*skip_root=*/false);
}

Status CheckScatter(const Instruction& instruction) {
  const size_t count = instruction.operands.size() / 2;
  if (count == 0 || instruction.operands.size() != 2 * count + 1 || instruction.called.size() != 1) {
    return Refuse(instruction, "scatter needs N operands, indices, N updates and a computation");
  }
  const Shape& indices = instruction.operand(count)->shape;
  const Shape& updates = instruction.operand(count + 1)->shape;
  const std::vector<int64_t>& operand_dims = instruction.operand(0)->shape.dimensions();
  const auto operand_rank = static_cast<int64_t>(operand_dims.size());
  if (!IsIntegral(indices.element_type())) return Refuse(instruction, "scatter indices must be integers");
  std::vector<ElementType> types;
  for (size_t k = 0; k < count; ++k) {
    const Shape& operand = instruction.operand(k)->shape;
    const Shape& update = instruction.operand(count + 1 + k)->shape;
    if (operand.dimensions() != operand_dims || update.dimensions() != updates.dimensions() ||
        update.element_type() != operand.element_type()) {
      return Refuse(instruction, "scatter operands (and updates) must share dimensions and types");
    }
    types.push_back(operand.element_type());
  }
  const ScatterDimensionNumbers& numbers = instruction.attrs.scatter;
  if (numbers.index_vector_dim < 0 || numbers.index_vector_dim > indices.rank()) {
    return Refuse(instruction, "bad index_vector_dim");
  }
  const int64_t vector_size =
      numbers.index_vector_dim == indices.rank() ? 1 : indices.dimensions(numbers.index_vector_dim);
  if (static_cast<int64_t>(numbers.scatter_dims_to_operand_dims.size()) != vector_size ||
      !AllBelow(numbers.scatter_dims_to_operand_dims, operand_rank) ||
      !AllBelow(numbers.inserted_window_dims, operand_rank) ||
      !AllBelow(numbers.input_batching_dims, operand_rank) ||
      !AllBelow(numbers.scatter_indices_batching_dims, indices.rank()) ||
      numbers.input_batching_dims.size() != numbers.scatter_indices_batching_dims.size() ||
      !AllBelow(numbers.update_window_dims, updates.rank()) ||
      Contains(numbers.scatter_indices_batching_dims, numbers.index_vector_dim)) {
    return Refuse(instruction, "bad scatter dimension numbers");
  }
  int64_t windowed = 0;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(numbers.inserted_window_dims, d) && !Contains(numbers.input_batching_dims, d)) ++windowed;
  }
  const int64_t batch_rank = updates.rank() - static_cast<int64_t>(numbers.update_window_dims.size());
  const int64_t indices_batch_rank = indices.rank() - (numbers.index_vector_dim < indices.rank() ? 1 : 0);
  if (windowed != static_cast<int64_t>(numbers.update_window_dims.size()) ||
      batch_rank != indices_batch_rank) {
    return Refuse(instruction, "scatter window or batch dimensions do not match the operands");
  }
  std::vector<ElementType> arguments = types;
  arguments.insert(arguments.end(), types.begin(), types.end());
  return CheckScalarComputation(instruction, *instruction.called[0], arguments, types);
}

Status CheckSelectAndScatter(const Instruction& instruction) {
  if (instruction.operands.size() != 3 || instruction.called.size() != 2) {
    return Refuse(instruction, "select-and-scatter needs operand, source, init and two computations");
  }
  const Shape& operand = instruction.operand(0)->shape;
  const Shape& source = instruction.operand(1)->shape;
  const ElementType type = operand.element_type();
  if (source.element_type() != type || instruction.operand(2)->shape.element_type() != type ||
      instruction.operand(2)->shape.rank() != 0 || source.rank() != operand.rank()) {
    return Refuse(instruction, "operand, source and init must share a type");
  }
  const std::vector<WindowDimension>& window = instruction.attrs.window->dimensions;
  if (static_cast<int64_t>(window.size()) != operand.rank())
    return Refuse(instruction, "window rank mismatch");
  for (const WindowDimension& w : window) {
    if (w.size < 1 || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1) {
      return Refuse(instruction, "bad window");
    }
  }
  KILN_RETURN_IF_ERROR(
      CheckScalarComputation(instruction, *instruction.called[0], {type, type}, {ElementType::kPred}));
  return CheckScalarComputation(instruction, *instruction.called[1], {type, type}, {type});
}

// Scatter and select-and-scatter are emitted as a kernel's serial root only.
Status CheckScatterRoot(const Instruction& root) {
  for (const Instruction* operand : root.operands) {
    if (!AllLeavesArrays(operand->shape)) return Refuse(root, "operands must be arrays");
  }
  if (!AllLeavesArrays(root.shape) || AnyComplex(root))
    return Refuse(root, "only real (non-complex) arrays are supported");
  return root.opcode == Opcode::kScatter ? CheckScatter(root) : CheckSelectAndScatter(root);
}

// Operand, update of the same type and rank, then one integer scalar start
// index per dimension.
Status CheckDynamicUpdateSliceRoot(const Instruction& root) {
  if (root.operands.size() < 2) return Refuse(root, "needs an operand and an update");
  const Shape& operand = root.operand(0)->shape;
  const Shape& update = root.operand(1)->shape;
  if (!operand.IsArray() || !update.IsArray() || operand.element_type() != update.element_type() ||
      operand.rank() != update.rank() || !root.shape.IsArray() ||
      root.shape.dimensions() != operand.dimensions()) {
    return Refuse(root, "operand, update and result must be arrays of one type and rank");
  }
  if (static_cast<int64_t>(root.operands.size()) != 2 + operand.rank())
    return Refuse(root, "needs one scalar start index per dimension");
  for (size_t i = 2; i < root.operands.size(); ++i) {
    const Shape& start = root.operand(i)->shape;
    if (!start.IsArray() || start.rank() != 0 || !IsIntegral(start.element_type()))
      return Refuse(root, "start indices must be integer scalars");
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (update.dimensions(d) > operand.dimensions(d))
      return Refuse(root, "the update is larger than the operand");
  }
  return OkStatus();
}

}  // namespace

Status CheckEmittable(const Computation& computation, const EmittableOptions& options) {
  const Instruction* root = computation.root();
  const bool scatter_root =
      root != nullptr && (root->opcode == Opcode::kScatter || root->opcode == Opcode::kSelectAndScatter);
  if (scatter_root) KILN_RETURN_IF_ERROR(CheckScatterRoot(*root));
  const bool update_root =
      options.dynamic_update_slice_root && root != nullptr && root->opcode == Opcode::kDynamicUpdateSlice;
  if (update_root) KILN_RETURN_IF_ERROR(CheckDynamicUpdateSliceRoot(*root));
  KILN_RETURN_IF_ERROR(
      CheckComputation(computation, /*scalar_only=*/false, /*skip_root=*/scatter_root || update_root));
  for (const Instruction* parameter : computation.parameters()) {
    if (!parameter->shape.IsArray()) {
      return Unimplemented("cpu codegen: parameter ", parameter->name, " of ", computation.name(),
                           " must be an array, got ", parameter->shape.ToString());
    }
  }
  // All outputs are written by one loop nest, so they must share dimensions.
  const std::vector<Shape> leaves = computation.root()->shape.Leaves();
  for (const Shape& leaf : leaves) {
    if (leaf.dimensions() != leaves[0].dimensions()) {
      return Unimplemented("cpu codegen: outputs of ", computation.name(),
                           " differ in dimensions: ", computation.root()->shape.ToString());
    }
  }
  return OkStatus();
}

namespace {

// The checks of CheckEmittable on the computation of `instruction` alone:
// its parameters are the operands (arrays, which the table checked), so
// only the root's own checks and the one loop nest of its outputs remain.
Status CheckInstructionAlone(const Instruction& instruction, const EmittableOptions& options) {
  const Opcode opcode = instruction.opcode;
  if (opcode == Opcode::kScatter || opcode == Opcode::kSelectAndScatter) {
    KILN_RETURN_IF_ERROR(CheckScatterRoot(instruction));
  } else if (options.dynamic_update_slice_root && opcode == Opcode::kDynamicUpdateSlice) {
    KILN_RETURN_IF_ERROR(CheckDynamicUpdateSliceRoot(instruction));
  } else {
    KILN_RETURN_IF_ERROR(CheckInstruction(instruction, /*scalar_only=*/false));
  }
  if (instruction.shape.IsTuple()) {
    const std::vector<Shape>& leaves = instruction.shape.tuple_shapes();
    for (const Shape& leaf : leaves) {
      if (leaf.dimensions() != leaves[0].dimensions())
        return Unimplemented("cpu codegen: outputs of ", instruction.name,
                             " differ in dimensions: ", instruction.shape.ToString());
    }
  }
  return OkStatus();
}

}  // namespace

compiler::EmittableTable MakeLlvmEmittableTable(std::string backend, const EmittableOptions& options) {
  using compiler::ElementTypeSet;
  using compiler::Emittability;
  constexpr Emittability kAlways = Emittability::kAlways, kChecked = Emittability::kChecked;
  const ElementTypeSet all = ElementTypeSet::All();
  // Complex numbers have no order and no iota.
  const ElementTypeSet ordered = all.Without({ElementType::kC64, ElementType::kC128});
  compiler::EmittableTable table(
      std::move(backend),
      {
          {Opcode::kParameter, kAlways},
          {Opcode::kConstant, kAlways},
          {Opcode::kIota, kAlways, ordered},
          {Opcode::kConvert, kAlways},
          {Opcode::kSelect, kAlways},
          {Opcode::kClamp, kAlways, ordered},
          {Opcode::kBroadcast, kAlways},
          {Opcode::kReshape, kAlways},
          {Opcode::kTranspose, kAlways},
          {Opcode::kSlice, kAlways},
          {Opcode::kReverse, kAlways},
          {Opcode::kConcatenate, kAlways},
          {Opcode::kPad, kAlways},
          {Opcode::kDynamicSlice, kAlways},
          {Opcode::kGetTupleElement, kAlways},
          {Opcode::kReal, kAlways},
          {Opcode::kImag, kAlways},
          {Opcode::kTuple, kChecked, all, /*tuple_result=*/true},
          // Complex numbers compare for (in)equality only; the rest are
          // checked for their attributes, operand counts and types.
          {Opcode::kCompare, kChecked},
          {Opcode::kComplex, kChecked},
          {Opcode::kBitcastConvert, kChecked},
          {Opcode::kIsFinite, kChecked},
          {Opcode::kReducePrecision, kChecked},
          {Opcode::kGather, kChecked},
          {Opcode::kDot, kChecked},
          {Opcode::kConvolution, kChecked},
          {Opcode::kMap, kChecked},
          {Opcode::kReduce, kChecked, all, /*tuple_result=*/true},
          {Opcode::kReduceWindow, kChecked, all, /*tuple_result=*/true},
          {Opcode::kScatter, kChecked, all, /*tuple_result=*/true},
          {Opcode::kSelectAndScatter, kChecked},
      },
      [options](const Instruction& instruction) { return CheckInstructionAlone(instruction, options); });
  if (options.dynamic_update_slice_root) table.Set({Opcode::kDynamicUpdateSlice, kChecked});
  // Unary and binary ops: the element types the scalar emitters compute
  // them for (scalar_ops_ir.h keeps that fact; it is read here once).
  for (int i = 0; i < static_cast<int>(Opcode::kOpcodeCount); ++i) {
    const auto opcode = static_cast<Opcode>(i);
    const OpKind kind = OpcodeKind(opcode);
    if (table.row(opcode).emittability != Emittability::kNever ||
        (kind != OpKind::kUnary && kind != OpKind::kBinary))
      continue;
    ElementTypeSet types;
    bool any = false;
    for (int t = static_cast<int>(ElementType::kPred); t <= static_cast<int>(ElementType::kC128); ++t) {
      const auto type = static_cast<ElementType>(t);
      if (kind == OpKind::kUnary ? UnaryOpSupported(opcode, type) : BinaryOpSupported(opcode, type)) {
        types.Insert(type);
        any = true;
      }
    }
    if (!any) continue;
    // abs of complex numbers gives real ones, of types abs also takes.
    table.Set({opcode, kAlways, types});
  }
  return table;
}

const compiler::EmittableTable& CpuEmittableTable() {
  static const compiler::EmittableTable* const table = [] {
    auto* cpu = new compiler::EmittableTable(MakeLlvmEmittableTable("cpu"));
    // A fused gather keeps the vector form of the kernel's row loop:
    // contiguous loads for whole-row slices (the row's start index loaded
    // and clamped once), masked vector gathers for single elements.
    cpu->set_fuses_gathers(true);
    return cpu;
  }();
  return *table;
}

}  // namespace kiln::llvm_ir
