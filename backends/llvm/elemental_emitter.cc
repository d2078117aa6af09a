#include "backends/llvm/elemental_emitter.h"

#include <algorithm>
#include <set>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>

#include "backends/llvm/complex_ir.h"
#include "backends/llvm/convolution_emitter.h"
#include "backends/llvm/dot_emitter.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/loop_ir.h"
#include "backends/llvm/scalar_ops_ir.h"
#include "backends/llvm/window_ir.h"
#include "core/passes/fusion.h"

namespace kiln::llvm_ir {
namespace {

size_t LeafCount(const Shape& shape) { return shape.IsTuple() ? shape.Leaves().size() : 1; }

}  // namespace

ElementalEmitter::ElementalEmitter(llvm::IRBuilder<>& b, const TargetHooks& target, llvm::BasicBlock* entry,
                                   std::vector<llvm::Value*> parameter_buffers)
    : b_(b), target_(target), entry_(entry), parameter_buffers_(std::move(parameter_buffers)) {
  scopes_.emplace_back();
}

llvm::Value* ElementalEmitter::Linearize(const IrIndex& index, const std::vector<int64_t>& dims) {
  llvm::Value* linear = b_.getInt64(0);
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] != 1)
      linear =
          b_.CreateAdd(linear, b_.CreateMul(index[d], b_.getInt64(stride), "", true, true), "", true, true);
    stride *= dims[d];
  }
  return linear;
}

IrIndex ElementalEmitter::Delinearize(llvm::Value* linear, const std::vector<int64_t>& dims) {
  IrIndex index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    if (d == 0) {
      index[d] = linear;
    } else {
      index[d] = b_.CreateURem(linear, b_.getInt64(dims[d]));
      linear = b_.CreateUDiv(linear, b_.getInt64(dims[d]));
    }
  }
  return index;
}

IrIndex ElementalEmitter::OperandIndex(const Instruction& operand, const IrIndex& index) const {
  if (operand.shape.rank() == 0) return {};
  return index;
}

StatusOr<IrValues> ElementalEmitter::Emit(const Instruction& instruction, const IrIndex& index) {
  CacheKey key{&instruction, index};
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto found = scope->find(key);
    if (found != scope->end()) return found->second;
  }
  RowBuffer* row = RowBufferAt(instruction, index);
  llvm::Value* slot = row == nullptr ? nullptr : b_.CreateInBoundsGEP(row->element, row->data, index.back());
  IrValues values;
  if (row != nullptr && row->filled) {
    values = {b_.CreateLoad(row->element, slot)};
  } else {
    // Lanes cooperate only along chains of row reductions: anything else
    // may branch or loop differently per lane (CooperativeRows).
    const bool cooperating = cooperating_;
    cooperating_ = cooperating && IsRowReduction(instruction);
    StatusOr<IrValues> emitted = EmitUncached(instruction, index);
    cooperating_ = cooperating;
    KILN_RETURN_IF_ERROR(emitted.status());
    values = std::move(emitted).value();
    if (row != nullptr) b_.CreateStore(values[0], slot);
  }
  scopes_.back()[std::move(key)] = values;
  return values;
}

void ElementalEmitter::AddRowBuffer(const Instruction& instruction, const IrIndex& row_index,
                                    int64_t length) {
  llvm::IRBuilder<> entry_builder(entry_, entry_->begin());
  RowBuffer& row = row_buffers_[&instruction];
  row.element = ComputeType(b_.getContext(), instruction.shape.element_type());
  row.data = entry_builder.CreateAlloca(llvm::ArrayType::get(row.element, static_cast<uint64_t>(length)),
                                        nullptr, "row." + instruction.name);
  row.row_index = row_index;
  row.filled = false;
}

void ElementalEmitter::FinishRowBuffers() {
  for (auto& [instruction, row] : row_buffers_) row.filled = true;
}

ElementalEmitter::RowBuffer* ElementalEmitter::RowBufferAt(const Instruction& instruction,
                                                           const IrIndex& index) {
  auto found = row_buffers_.find(&instruction);
  if (found == row_buffers_.end()) return nullptr;
  RowBuffer& row = found->second;
  if (index.size() != row.row_index.size() + 1) return nullptr;
  if (!std::equal(row.row_index.begin(), row.row_index.end(), index.begin())) return nullptr;
  return &row;
}

StatusOr<IrValues> ElementalEmitter::EmitUncached(const Instruction& instruction, const IrIndex& index) {
  switch (instruction.opcode) {
    case Opcode::kReduce: return EmitReduce(instruction, index);
    case Opcode::kReduceWindow: return EmitReduceWindow(instruction, index);
    case Opcode::kTuple: {
      IrValues values;
      for (const Instruction* operand : instruction.operands) {
        KILN_ASSIGN_OR_RETURN(IrValues leaves, Emit(*operand, index));
        values.insert(values.end(), leaves.begin(), leaves.end());
      }
      return values;
    }
    case Opcode::kGetTupleElement: {
      const Instruction& operand = *instruction.operand(0);
      const auto element = static_cast<size_t>(instruction.attrs.tuple_index);
      if (operand.opcode == Opcode::kTuple) return Emit(*operand.operand(element), index);
      KILN_ASSIGN_OR_RETURN(IrValues leaves, Emit(operand, index));
      size_t offset = 0;
      for (size_t i = 0; i < element; ++i)
        offset += LeafCount(operand.shape.tuple_shapes(static_cast<int64_t>(i)));
      const size_t count = LeafCount(instruction.shape);
      if (offset + count > leaves.size())
        return Internal("cpu codegen: bad get-tuple-element ", instruction.name);
      return IrValues(leaves.begin() + static_cast<std::ptrdiff_t>(offset),
                      leaves.begin() + static_cast<std::ptrdiff_t>(offset + count));
    }
    default: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * value, EmitOne(instruction, index));
      return IrValues{value};
    }
  }
}

StatusOr<llvm::Value*> ElementalEmitter::EmitOne(const Instruction& instruction, const IrIndex& index) {
  const ElementType type = instruction.shape.element_type();
  auto operand_value = [&](size_t i, const IrIndex& at) -> StatusOr<llvm::Value*> {
    KILN_ASSIGN_OR_RETURN(IrValues values, Emit(*instruction.operand(i), at));
    if (values.size() != 1) return Internal("cpu codegen: ", instruction.name, " has a tuple operand");
    return values[0];
  };
  auto elementwise_operand = [&](size_t i) {
    return operand_value(i, OperandIndex(*instruction.operand(i), index));
  };
  switch (instruction.opcode) {
    case Opcode::kParameter: return EmitParameter(instruction, index);
    case Opcode::kConstant: return EmitConstant(instruction, index);
    case Opcode::kIota:
      return EmitConvert(b_, ElementType::kS64, type,
                         index[static_cast<size_t>(instruction.attrs.iota_dimension)]);
    case Opcode::kCompare: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * lhs, elementwise_operand(0));
      KILN_ASSIGN_OR_RETURN(llvm::Value * rhs, elementwise_operand(1));
      return EmitCompare(b_, instruction.attrs.comparison_direction, instruction.attrs.comparison_type,
                         instruction.operand(0)->shape.element_type(), lhs, rhs);
    }
    case Opcode::kConvert: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(0));
      return EmitConvert(b_, instruction.operand(0)->shape.element_type(), type, x);
    }
    case Opcode::kBitcastConvert: {
      const ElementType from = instruction.operand(0)->shape.element_type();
      const int64_t from_bits = 8 * ByteWidth(from), to_bits = 8 * ByteWidth(type);
      if (from_bits == to_bits) {
        KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(0));
        return EmitBitcastConvert(b_, from, type, x);
      }
      // Little-endian pieces along a last dimension of size wide / narrow.
      if (from_bits > to_bits) {
        const IrIndex whole(index.begin(), index.end() - 1);
        KILN_ASSIGN_OR_RETURN(llvm::Value * x, operand_value(0, whole));
        llvm::Value* bits = ToBits(b_, from, x);
        llvm::Value* shift =
            b_.CreateMul(b_.CreateZExtOrTrunc(index.back(), bits->getType()),
                         llvm::ConstantInt::get(bits->getType(), static_cast<uint64_t>(to_bits)));
        llvm::Value* piece =
            b_.CreateTrunc(b_.CreateLShr(bits, shift), b_.getIntNTy(static_cast<unsigned>(to_bits)));
        return FromBits(b_, type, piece);
      }
      llvm::Type* wide = b_.getIntNTy(static_cast<unsigned>(to_bits));
      llvm::Value* bits = llvm::ConstantInt::get(wide, 0);
      for (int64_t k = 0; k < to_bits / from_bits; ++k) {
        IrIndex piece_index = index;
        piece_index.push_back(b_.getInt64(k));
        KILN_ASSIGN_OR_RETURN(llvm::Value * x, operand_value(0, piece_index));
        llvm::Value* piece = b_.CreateZExt(ToBits(b_, from, x), wide);
        bits = b_.CreateOr(bits, b_.CreateShl(piece, static_cast<uint64_t>(k * from_bits)));
      }
      return FromBits(b_, type, bits);
    }
    case Opcode::kIsFinite: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(0));
      return EmitIsFinite(b_, x);
    }
    case Opcode::kReducePrecision: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(0));
      return EmitReducePrecision(b_, type, x, instruction.attrs.exponent_bits,
                                 std::min<int64_t>(instruction.attrs.mantissa_bits, 64));
    }
    case Opcode::kSelect: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * predicate, elementwise_operand(0));
      KILN_ASSIGN_OR_RETURN(llvm::Value * on_true, elementwise_operand(1));
      KILN_ASSIGN_OR_RETURN(llvm::Value * on_false, elementwise_operand(2));
      return b_.CreateSelect(predicate, on_true, on_false);
    }
    case Opcode::kClamp: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * low, elementwise_operand(0));
      KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(1));
      KILN_ASSIGN_OR_RETURN(llvm::Value * high, elementwise_operand(2));
      return EmitMinimum(b_, target_, type, EmitMaximum(b_, target_, type, x, low), high);
    }
    case Opcode::kBroadcast: {
      const Instruction& operand = *instruction.operand(0);
      std::vector<int64_t> mapping = instruction.attrs.dimensions;
      if (mapping.empty()) {
        for (int64_t i = 0; i < operand.shape.rank(); ++i)
          mapping.push_back(instruction.shape.rank() - operand.shape.rank() + i);
      }
      IrIndex operand_index;
      for (int64_t target : mapping) operand_index.push_back(index[static_cast<size_t>(target)]);
      return operand_value(0, operand_index);
    }
    case Opcode::kReshape: return EmitReshape(instruction, index);
    case Opcode::kTranspose: {
      IrIndex operand_index(index.size());
      const std::vector<int64_t>& permutation = instruction.attrs.dimensions;
      for (size_t i = 0; i < index.size(); ++i) operand_index[static_cast<size_t>(permutation[i])] = index[i];
      return operand_value(0, operand_index);
    }
    case Opcode::kSlice: {
      IrIndex operand_index(index.size());
      for (size_t d = 0; d < index.size(); ++d) {
        const int64_t stride =
            instruction.attrs.slice_strides.empty() ? 1 : instruction.attrs.slice_strides[d];
        operand_index[d] = b_.CreateAdd(b_.CreateMul(index[d], b_.getInt64(stride)),
                                        b_.getInt64(instruction.attrs.slice_starts[d]));
      }
      return operand_value(0, operand_index);
    }
    case Opcode::kReverse: {
      IrIndex operand_index = index;
      for (int64_t d : instruction.attrs.dimensions) {
        const auto dim = static_cast<size_t>(d);
        operand_index[dim] = b_.CreateSub(b_.getInt64(instruction.shape.dimensions(d) - 1), index[dim]);
      }
      return operand_value(0, operand_index);
    }
    case Opcode::kConcatenate: return EmitConcatenate(instruction, index);
    case Opcode::kPad: return EmitPad(instruction, index);
    case Opcode::kDynamicSlice: return EmitDynamicSlice(instruction, index);
    case Opcode::kDynamicUpdateSlice: return EmitDynamicUpdateSlice(instruction, index);
    case Opcode::kGather: return EmitGather(instruction, index);
    case Opcode::kDot: return EmitDotElement(b_, *this, instruction, index);
    case Opcode::kConvolution: return EmitConvolutionElement(b_, *this, instruction, index);
    case Opcode::kReal:
    case Opcode::kImag: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(0));
      if (!IsComplex(instruction.operand(0)->shape.element_type())) {
        // Of a real value: itself, and a zero imaginary part.
        return instruction.opcode == Opcode::kReal ? x : llvm::Constant::getNullValue(x->getType());
      }
      return instruction.opcode == Opcode::kReal ? RealPart(b_, x) : ImagPart(b_, x);
    }
    case Opcode::kComplex: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * real, elementwise_operand(0));
      KILN_ASSIGN_OR_RETURN(llvm::Value * imag, elementwise_operand(1));
      return MakeComplex(b_, real, imag);
    }
    case Opcode::kMap: {
      IrValues arguments;
      for (size_t i = 0; i < instruction.operands.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(i));
        arguments.push_back(x);
      }
      KILN_ASSIGN_OR_RETURN(IrValues result, EmitCall(*instruction.called[0], arguments, false));
      if (result.size() != 1) return Internal("cpu codegen: map computation must return one scalar");
      return result[0];
    }
    default: break;
  }
  const OpKind kind = OpcodeKind(instruction.opcode);
  if (kind == OpKind::kUnary) {
    KILN_ASSIGN_OR_RETURN(llvm::Value * x, elementwise_operand(0));
    return EmitUnaryOp(b_, target_, instruction.opcode, instruction.operand(0)->shape.element_type(), x);
  }
  if (kind == OpKind::kBinary) {
    KILN_ASSIGN_OR_RETURN(llvm::Value * lhs, elementwise_operand(0));
    KILN_ASSIGN_OR_RETURN(llvm::Value * rhs, elementwise_operand(1));
    return EmitBinaryOp(b_, target_, instruction.opcode, type, lhs, rhs);
  }
  return Unimplemented("cpu codegen: cannot emit ", OpcodeName(instruction.opcode), " (", instruction.name,
                       ")");
}

StatusOr<llvm::Value*> ElementalEmitter::EmitParameter(const Instruction& instruction, const IrIndex& index) {
  auto bound = bound_parameters_.find(&instruction);
  if (bound != bound_parameters_.end()) return bound->second;
  const auto number = static_cast<size_t>(instruction.attrs.parameter_number);
  if (number >= parameter_buffers_.size()) {
    return Internal("cpu codegen: parameter ", number, " has no buffer");
  }
  const ElementType type = instruction.shape.element_type();
  llvm::Value* linear = Linearize(index, instruction.shape.dimensions());
  llvm::Value* address =
      b_.CreateInBoundsGEP(StorageType(b_.getContext(), type), parameter_buffers_[number], linear);
  return LoadElement(b_, type, address);
}

llvm::Value* ElementalEmitter::EmitConstant(const Instruction& instruction, const IrIndex& index) {
  const Literal& literal = *instruction.literal;
  const ElementType type = instruction.shape.element_type();
  if (literal.element_count() == 1) return ConstantFromBytes(b_.getContext(), type, literal.raw().data());
  llvm::GlobalVariable*& global = constant_globals_[&instruction];
  // Constant data arrays hold scalars: complex elements are stored as pairs
  // of their parts.
  const bool complex = IsComplex(type);
  llvm::Type* storage = StorageType(b_.getContext(), type);
  llvm::Type* scalar = complex ? storage->getScalarType() : storage;
  const uint64_t scalars_per_element = complex ? 2 : 1;
  if (global == nullptr) {
    llvm::Module* module = b_.GetInsertBlock()->getModule();
    const auto count = static_cast<uint64_t>(literal.element_count()) * scalars_per_element;
    llvm::StringRef bytes(reinterpret_cast<const char*>(literal.raw().data()), literal.raw().size());
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(bytes, count, scalar);
    global = new llvm::GlobalVariable(*module, data->getType(), /*isConstant=*/true,
                                      llvm::GlobalValue::PrivateLinkage, data, "constant");
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    global->setAlignment(llvm::Align(64));
  }
  llvm::Value* linear = Linearize(index, instruction.shape.dimensions());
  if (complex) linear = b_.CreateMul(linear, b_.getInt64(2));
  return LoadElement(b_, type, b_.CreateInBoundsGEP(scalar, global, linear));
}

StatusOr<llvm::Value*> ElementalEmitter::EmitReshape(const Instruction& instruction, const IrIndex& index) {
  const Instruction& operand = *instruction.operand(0);
  const std::vector<int64_t>& out_dims = instruction.shape.dimensions();
  const std::vector<int64_t>& in_dims = operand.shape.dimensions();
  // Trailing dimensions both shapes share map one to one; only the leading
  // rest goes through a linear index (keeps the inner loop contiguous).
  size_t shared = 0;
  while (shared < out_dims.size() && shared < in_dims.size() &&
         out_dims[out_dims.size() - 1 - shared] == in_dims[in_dims.size() - 1 - shared]) {
    ++shared;
  }
  const size_t out_lead = out_dims.size() - shared;
  const size_t in_lead = in_dims.size() - shared;
  IrIndex operand_index(in_dims.size());
  for (size_t i = 0; i < shared; ++i) operand_index[in_lead + i] = index[out_lead + i];
  llvm::Value* linear = Linearize(
      IrIndex(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(out_lead)),
      std::vector<int64_t>(out_dims.begin(), out_dims.begin() + static_cast<std::ptrdiff_t>(out_lead)));
  for (size_t d = in_lead; d-- > 0;) {
    if (in_dims[d] == 1) {
      operand_index[d] = b_.getInt64(0);
      continue;
    }
    operand_index[d] = d == 0 ? linear : b_.CreateURem(linear, b_.getInt64(in_dims[d]));
    if (d > 0) linear = b_.CreateUDiv(linear, b_.getInt64(in_dims[d]));
  }
  KILN_ASSIGN_OR_RETURN(IrValues values, Emit(operand, operand_index));
  return values[0];
}

StatusOr<llvm::Value*> ElementalEmitter::EmitIf(llvm::Value* condition,
                                                const std::function<StatusOr<llvm::Value*>()>& then,
                                                llvm::Value* otherwise) {
  llvm::Function* function = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = b_.GetInsertBlock();
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(b_.getContext(), "if.then", function);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(b_.getContext(), "if.merge", function);
  b_.CreateCondBr(condition, then_block, merge);
  b_.SetInsertPoint(then_block);
  PushScope();
  StatusOr<llvm::Value*> value = then();
  PopScope();
  KILN_RETURN_IF_ERROR(value.status());
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  llvm::PHINode* phi = b_.CreatePHI(otherwise->getType(), 2);
  phi->addIncoming(*value, then_end);
  phi->addIncoming(otherwise, before);
  return phi;
}

StatusOr<llvm::Value*> ElementalEmitter::EmitConcatenate(const Instruction& instruction,
                                                         const IrIndex& index) {
  const auto dim = static_cast<size_t>(instruction.attrs.dimensions.at(0));
  llvm::Function* function = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(b_.getContext(), "concat.merge", function);
  std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> incoming;
  int64_t offset = 0;
  const size_t count = instruction.operands.size();
  for (size_t k = 0; k < count; ++k) {
    const Instruction& operand = *instruction.operand(k);
    const int64_t size = operand.shape.dimensions(static_cast<int64_t>(dim));
    llvm::BasicBlock* next = nullptr;
    if (k + 1 < count) {
      llvm::BasicBlock* take = llvm::BasicBlock::Create(b_.getContext(), "concat.take", function);
      next = llvm::BasicBlock::Create(b_.getContext(), "concat.next", function);
      b_.CreateCondBr(b_.CreateICmpSLT(index[dim], b_.getInt64(offset + size)), take, next);
      b_.SetInsertPoint(take);
    }
    IrIndex operand_index = index;
    operand_index[dim] = b_.CreateSub(index[dim], b_.getInt64(offset));
    PushScope();
    StatusOr<IrValues> values = Emit(operand, operand_index);
    PopScope();
    KILN_RETURN_IF_ERROR(values.status());
    incoming.emplace_back((*values)[0], b_.GetInsertBlock());
    b_.CreateBr(merge);
    if (next != nullptr) b_.SetInsertPoint(next);
    offset += size;
  }
  b_.SetInsertPoint(merge);
  llvm::PHINode* phi = b_.CreatePHI(incoming[0].first->getType(), static_cast<unsigned>(incoming.size()));
  for (auto& [value, block] : incoming) phi->addIncoming(value, block);
  return phi;
}

StatusOr<llvm::Value*> ElementalEmitter::EmitPad(const Instruction& instruction, const IrIndex& index) {
  const Instruction& operand = *instruction.operand(0);
  KILN_ASSIGN_OR_RETURN(IrValues padding, Emit(*instruction.operand(1), {}));
  llvm::Value* inside = b_.getTrue();
  IrIndex operand_index(index.size());
  for (size_t d = 0; d < index.size(); ++d) {
    const PaddingDimension& pad = instruction.attrs.padding[d];
    llvm::Value* shifted = b_.CreateSub(index[d], b_.getInt64(pad.low));
    inside = b_.CreateAnd(inside, b_.CreateICmpSGE(shifted, b_.getInt64(0)));
    llvm::Value* position = shifted;
    if (pad.interior > 0) {
      llvm::Value* step = b_.getInt64(pad.interior + 1);
      inside = b_.CreateAnd(inside, b_.CreateICmpEQ(b_.CreateSRem(shifted, step), b_.getInt64(0)));
      position = b_.CreateSDiv(shifted, step);
    }
    inside = b_.CreateAnd(
        inside, b_.CreateICmpSLT(position, b_.getInt64(operand.shape.dimensions(static_cast<int64_t>(d)))));
    operand_index[d] = position;
  }
  return EmitIf(
      inside,
      [&]() -> StatusOr<llvm::Value*> {
        KILN_ASSIGN_OR_RETURN(IrValues values, Emit(operand, operand_index));
        return values[0];
      },
      padding[0]);
}

StatusOr<llvm::Value*> ElementalEmitter::EmitDynamicUpdateSlice(const Instruction& instruction,
                                                                const IrIndex& index) {
  const Instruction& operand = *instruction.operand(0);
  const Instruction& update = *instruction.operand(1);
  const size_t rank = index.size();
  IrIndex update_index(rank);
  llvm::Value* inside = b_.getTrue();
  for (size_t d = 0; d < rank; ++d) {
    const Instruction& start_operand = *instruction.operand(2 + d);
    KILN_ASSIGN_OR_RETURN(IrValues values, Emit(start_operand, {}));
    llvm::Value* start = IndexToS64(values[0], start_operand.shape.element_type());
    const int64_t size = update.shape.dimensions(static_cast<int64_t>(d));
    // Starts are clamped so that the whole update fits, as XLA does.
    const int64_t limit = operand.shape.dimensions(static_cast<int64_t>(d)) - size;
    start = b_.CreateSelect(b_.CreateICmpSLT(start, b_.getInt64(0)), b_.getInt64(0), start);
    start = b_.CreateSelect(b_.CreateICmpSGT(start, b_.getInt64(limit)), b_.getInt64(limit), start);
    update_index[d] = b_.CreateSub(index[d], start);
    inside = b_.CreateAnd(inside, b_.CreateICmpSGE(update_index[d], b_.getInt64(0)));
    inside = b_.CreateAnd(inside, b_.CreateICmpSLT(update_index[d], b_.getInt64(size)));
  }
  KILN_ASSIGN_OR_RETURN(IrValues kept, Emit(operand, index));
  return EmitIf(
      inside,
      [&]() -> StatusOr<llvm::Value*> {
        KILN_ASSIGN_OR_RETURN(IrValues values, Emit(update, update_index));
        return values[0];
      },
      kept[0]);
}

StatusOr<llvm::Value*> ElementalEmitter::EmitDynamicSlice(const Instruction& instruction,
                                                          const IrIndex& index) {
  const Instruction& operand = *instruction.operand(0);
  const size_t rank = index.size();
  const bool vector_form = instruction.operands.size() == 2 && instruction.operand(1)->shape.rank() == 1;
  IrIndex operand_index(rank);
  for (size_t d = 0; d < rank; ++d) {
    const Instruction& start_operand = vector_form ? *instruction.operand(1) : *instruction.operand(1 + d);
    IrIndex at = vector_form ? IrIndex{b_.getInt64(static_cast<int64_t>(d))} : IrIndex{};
    KILN_ASSIGN_OR_RETURN(IrValues values, Emit(start_operand, at));
    llvm::Value* start = IndexToS64(values[0], start_operand.shape.element_type());
    const int64_t limit = operand.shape.dimensions(static_cast<int64_t>(d)) -
                          instruction.shape.dimensions(static_cast<int64_t>(d));
    start = b_.CreateSelect(b_.CreateICmpSLT(start, b_.getInt64(0)), b_.getInt64(0), start);
    start = b_.CreateSelect(b_.CreateICmpSGT(start, b_.getInt64(limit)), b_.getInt64(limit), start);
    operand_index[d] = b_.CreateAdd(start, index[d]);
  }
  KILN_ASSIGN_OR_RETURN(IrValues values, Emit(operand, operand_index));
  return values[0];
}

llvm::Value* ElementalEmitter::IndexToS64(llvm::Value* value, ElementType type) {
  if (type == ElementType::kU64) {
    return b_.CreateSelect(b_.CreateICmpUGT(value, b_.getInt64(INT64_MAX)), b_.getInt64(INT64_MAX), value);
  }
  return EmitConvert(b_, type, ElementType::kS64, value);
}

// XLA gather: output dimensions not in offset_dims index the batch of start
// indices; offset_dims walk the slice. Start indices are clamped so the whole
// slice lies inside the operand (emittable.cc checked the dimension numbers).
StatusOr<llvm::Value*> ElementalEmitter::EmitGather(const Instruction& instruction, const IrIndex& index) {
  const Instruction& operand = *instruction.operand(0);
  const Instruction& indices = *instruction.operand(1);
  const GatherDimensionNumbers& numbers = instruction.attrs.gather;
  const std::vector<int64_t>& slice_sizes = instruction.attrs.gather_slice_sizes;
  auto contains = [](const std::vector<int64_t>& values, int64_t value) {
    return std::find(values.begin(), values.end(), value) != values.end();
  };
  IrIndex batch_index;
  for (size_t d = 0; d < index.size(); ++d) {
    if (!contains(numbers.offset_dims, static_cast<int64_t>(d))) batch_index.push_back(index[d]);
  }
  // The element of `indices` holding component `k` of the start vector.
  const int64_t indices_rank = indices.shape.rank();
  auto indices_index = [&](int64_t k) {
    IrIndex at;
    for (int64_t d = 0, b = 0; d < indices_rank; ++d) {
      at.push_back(d == numbers.index_vector_dim ? b_.getInt64(k) : batch_index[static_cast<size_t>(b++)]);
    }
    return at;
  };
  const size_t operand_rank = static_cast<size_t>(operand.shape.rank());
  IrIndex start(operand_rank, b_.getInt64(0));
  for (size_t k = 0; k < numbers.start_index_map.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(IrValues values, Emit(indices, indices_index(static_cast<int64_t>(k))));
    start[static_cast<size_t>(numbers.start_index_map[k])] =
        IndexToS64(values[0], indices.shape.element_type());
  }
  for (size_t i = 0; i < numbers.operand_batching_dims.size(); ++i) {
    int64_t position = numbers.start_indices_batching_dims[i];
    if (position > numbers.index_vector_dim) --position;
    start[static_cast<size_t>(numbers.operand_batching_dims[i])] = batch_index[static_cast<size_t>(position)];
  }
  IrIndex operand_index(operand_rank);
  size_t window = 0;
  for (size_t d = 0; d < operand_rank; ++d) {
    const int64_t limit = operand.shape.dimensions(static_cast<int64_t>(d)) - slice_sizes[d];
    llvm::Value* clamped =
        b_.CreateSelect(b_.CreateICmpSLT(start[d], b_.getInt64(0)), b_.getInt64(0), start[d]);
    clamped = b_.CreateSelect(b_.CreateICmpSGT(clamped, b_.getInt64(limit)), b_.getInt64(limit), clamped);
    const bool windowed = !contains(numbers.collapsed_slice_dims, static_cast<int64_t>(d)) &&
                          !contains(numbers.operand_batching_dims, static_cast<int64_t>(d));
    if (windowed) clamped = b_.CreateAdd(clamped, index[static_cast<size_t>(numbers.offset_dims[window++])]);
    operand_index[d] = clamped;
  }
  KILN_ASSIGN_OR_RETURN(IrValues values, Emit(operand, operand_index));
  return values[0];
}

StatusOr<IrValues> ElementalEmitter::EmitCall(const Computation& computation, const IrValues& arguments,
                                              bool reassociate) {
  if (arguments.size() != computation.parameters().size()) {
    return Internal("cpu codegen: ", computation.name(), " takes ", computation.parameters().size(),
                    " arguments, got ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) bound_parameters_[computation.parameter(i)] = arguments[i];
  const llvm::FastMathFlags saved = b_.getFastMathFlags();
  if (reassociate) {
    // Reductions have no order guarantee (as in XLA), so their arithmetic may
    // be reassociated; that is what lets LLVM vectorise them.
    llvm::FastMathFlags flags = saved;
    flags.setAllowReassoc();
    b_.setFastMathFlags(flags);
  }
  PushScope();
  StatusOr<IrValues> result = Emit(*computation.root(), {});
  PopScope();
  b_.setFastMathFlags(saved);
  for (const Instruction* parameter : computation.parameters()) bound_parameters_.erase(parameter);
  return result;
}

Status ElementalEmitter::EmitRowReductions(const Instruction& consumer, const IrIndex& row_index,
                                           const std::vector<int64_t>& row_dims) {
  // Post-order over the operands, so a reduction's own row reductions come first.
  std::vector<const Instruction*> found;
  std::set<const Instruction*> visited;
  std::vector<std::pair<const Instruction*, size_t>> stack = {{&consumer, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->operands.size()) {
      const Instruction* operand = node->operands[next++];
      if (visited.insert(operand).second) stack.emplace_back(operand, 0);
      continue;
    }
    if (node != &consumer && IsRowReduction(*node) && node->shape.dimensions() == row_dims)
      found.push_back(node);
    stack.pop_back();
  }
  for (const Instruction* reduction : found) KILN_RETURN_IF_ERROR(Emit(*reduction, row_index).status());
  return OkStatus();
}

StatusOr<IrValues> ElementalEmitter::EmitReduce(const Instruction& instruction, const IrIndex& index) {
  if (IsRowReduction(instruction)) {
    KILN_RETURN_IF_ERROR(EmitRowReductions(instruction, index, instruction.shape.dimensions()));
  }
  const size_t count = instruction.operands.size() / 2;
  const Instruction& input = *instruction.operand(0);
  const std::vector<int64_t>& in_dims = input.shape.dimensions();
  std::vector<bool> reduced(in_dims.size(), false);
  for (int64_t d : instruction.attrs.dimensions) reduced[static_cast<size_t>(d)] = true;
  // Accumulators live in allocas that mem2reg turns into registers.
  llvm::IRBuilder<> entry_builder(entry_, entry_->begin());
  std::vector<llvm::AllocaInst*> accumulators;
  std::vector<ElementType> types;
  for (size_t i = 0; i < count; ++i) {
    const Instruction& init = *instruction.operand(count + i);
    types.push_back(init.shape.element_type());
    KILN_ASSIGN_OR_RETURN(IrValues initial, Emit(init, {}));
    accumulators.push_back(entry_builder.CreateAlloca(initial[0]->getType(), nullptr, "acc"));
    b_.CreateStore(initial[0], accumulators.back());
  }
  std::vector<size_t> reduced_dims;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    if (reduced[d]) reduced_dims.push_back(d);
  }
  if (cooperating_ && IsRowReduction(instruction))
    return EmitCooperativeRowReduction(instruction, index, accumulators);
  IrIndex input_index(in_dims.size());
  for (size_t d = 0, k = 0; d < in_dims.size(); ++d) {
    if (!reduced[d]) input_index[d] = index[k++];
  }
  // Nested loops over the reduced dimensions, the last one innermost.
  std::function<Status(size_t)> loop = [&](size_t level) -> Status {
    if (level == reduced_dims.size()) {
      PushScope();
      IrValues arguments;
      for (size_t i = 0; i < count; ++i)
        arguments.push_back(b_.CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]));
      for (size_t i = 0; i < count; ++i) {
        StatusOr<IrValues> value = Emit(*instruction.operand(i), input_index);
        if (!value.ok()) {
          PopScope();
          return value.status();
        }
        arguments.push_back((*value)[0]);
      }
      StatusOr<IrValues> result = EmitCall(*instruction.called[0], arguments, true);
      PopScope();
      KILN_RETURN_IF_ERROR(result.status());
      if (result->size() != count)
        return Internal("cpu codegen: reducer of ", instruction.name, " returns ", result->size(), " values");
      for (size_t i = 0; i < count; ++i) b_.CreateStore((*result)[i], accumulators[i]);
      return OkStatus();
    }
    const size_t d = reduced_dims[level];
    if (in_dims[d] == 1) {
      // No loop over a dimension of one: JAX's bounds check of a gather's
      // indices reduces one (the index vector), and a loop there, even of
      // one trip, kept the fused gather's loop around it from vectorising.
      input_index[d] = b_.getInt64(0);
      return loop(level + 1);
    }
    return EmitCountedLoop(
        b_, b_.getInt64(0), b_.getInt64(in_dims[d]), "reduce",
        [&](llvm::Value* i) -> Status {
          input_index[d] = i;
          return loop(level + 1);
        },
        LoopKind::kAccumulating);
  };
  KILN_RETURN_IF_ERROR(loop(0));
  IrValues results;
  for (size_t i = 0; i < count; ++i)
    results.push_back(b_.CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]));
  return results;
}

StatusOr<IrValues> ElementalEmitter::EmitCooperativeRowReduction(
    const Instruction& instruction, const IrIndex& index,
    const std::vector<llvm::AllocaInst*>& accumulators) {
  const Instruction& input = *instruction.operand(0);
  const std::vector<int64_t>& in_dims = input.shape.dimensions();
  const size_t last = in_dims.size() - 1;
  IrIndex input_index(index.begin(), index.end());
  input_index.push_back(nullptr);
  llvm::AllocaInst* accumulator = accumulators[0];
  llvm::Type* type = accumulator->getAllocatedType();
  auto combine = [&](llvm::Value* lhs, llvm::Value* rhs) -> StatusOr<llvm::Value*> {
    PushScope();
    StatusOr<IrValues> result = EmitCall(*instruction.called[0], {lhs, rhs}, true);
    PopScope();
    KILN_RETURN_IF_ERROR(result.status());
    if (result->size() != 1)
      return Internal("cpu codegen: reducer of ", instruction.name, " returns ", result->size(), " values");
    return (*result)[0];
  };
  // This lane's elements: lane, lane + lanes, ... (threads diverge here).
  const int64_t lanes = cooperative_.lanes;
  llvm::Value* trips = b_.CreateUDiv(b_.CreateSub(b_.getInt64(in_dims[last] + lanes - 1), cooperative_.lane),
                                     b_.getInt64(lanes));
  cooperating_ = false;
  Status status = EmitCountedLoop(
      b_, b_.getInt64(0), trips, "reduce.lane",
      [&](llvm::Value* trip) -> Status {
        input_index[last] = b_.CreateAdd(b_.CreateMul(trip, b_.getInt64(lanes)), cooperative_.lane);
        PushScope();
        StatusOr<IrValues> value = Emit(input, input_index);
        StatusOr<llvm::Value*> sum = value.ok() ? combine(b_.CreateLoad(type, accumulator), (*value)[0])
                                                : StatusOr<llvm::Value*>(value.status());
        PopScope();
        KILN_RETURN_IF_ERROR(sum.status());
        b_.CreateStore(*sum, accumulator);
        return OkStatus();
      },
      LoopKind::kAccumulating);
  cooperating_ = true;
  KILN_RETURN_IF_ERROR(status);
  // Butterfly: after log2(lanes) steps every lane holds the total.
  llvm::Value* total = b_.CreateLoad(type, accumulator);
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    KILN_ASSIGN_OR_RETURN(total, combine(total, cooperative_.shuffle_xor(b_, total, offset)));
  }
  return IrValues{total};
}

StatusOr<IrValues> ElementalEmitter::EmitReduceWindow(const Instruction& instruction, const IrIndex& index) {
  const size_t count = instruction.operands.size() / 2;
  const std::vector<int64_t>& in_dims = instruction.operand(0)->shape.dimensions();
  const Window& window = instruction.attrs.window;
  llvm::IRBuilder<> entry_builder(entry_, entry_->begin());
  std::vector<llvm::AllocaInst*> accumulators;
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(IrValues initial, Emit(*instruction.operand(count + i), {}));
    accumulators.push_back(entry_builder.CreateAlloca(initial[0]->getType(), nullptr, "acc"));
    b_.CreateStore(initial[0], accumulators.back());
  }
  const size_t rank = in_dims.size();
  IrIndex input_index(rank);
  std::vector<llvm::Value*> window_index(rank);
  std::function<Status(size_t)> loop = [&](size_t d) -> Status {
    if (d == rank) {
      // The window element's input position, unless it is padding or falls
      // between dilated input elements.
      llvm::Value* inside = b_.getTrue();
      for (size_t k = 0; k < rank; ++k) {
        input_index[k] =
            EmitWindowInputPosition(b_, window.dimensions[k], in_dims[k], index[k], window_index[k], &inside);
      }
      llvm::Function* function = b_.GetInsertBlock()->getParent();
      llvm::BasicBlock* body = llvm::BasicBlock::Create(b_.getContext(), "window.body", function);
      llvm::BasicBlock* skip = llvm::BasicBlock::Create(b_.getContext(), "window.skip", function);
      b_.CreateCondBr(inside, body, skip);
      b_.SetInsertPoint(body);
      PushScope();
      IrValues arguments;
      for (size_t i = 0; i < count; ++i)
        arguments.push_back(b_.CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]));
      Status status = OkStatus();
      for (size_t i = 0; i < count && status.ok(); ++i) {
        StatusOr<IrValues> value = Emit(*instruction.operand(i), input_index);
        if (value.ok())
          arguments.push_back((*value)[0]);
        else
          status = value.status();
      }
      StatusOr<IrValues> result =
          status.ok() ? EmitCall(*instruction.called[0], arguments, true) : StatusOr<IrValues>(status);
      PopScope();
      KILN_RETURN_IF_ERROR(result.status());
      if (result->size() != count)
        return Internal("cpu codegen: reducer of ", instruction.name, " returns ", result->size(), " values");
      for (size_t i = 0; i < count; ++i) b_.CreateStore((*result)[i], accumulators[i]);
      b_.CreateBr(skip);
      b_.SetInsertPoint(skip);
      return OkStatus();
    }
    return EmitCountedLoop(
        b_, b_.getInt64(0), b_.getInt64(window.dimensions[d].size), "window",
        [&](llvm::Value* i) -> Status {
          window_index[d] = i;
          return loop(d + 1);
        },
        LoopKind::kAccumulating);
  };
  KILN_RETURN_IF_ERROR(loop(0));
  IrValues results;
  for (size_t i = 0; i < count; ++i)
    results.push_back(b_.CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]));
  return results;
}

}  // namespace kiln::llvm_ir
