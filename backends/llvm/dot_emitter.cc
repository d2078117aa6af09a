#include "backends/llvm/dot_emitter.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "backends/llvm/complex_ir.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/loop_ir.h"
#include "backends/llvm/scalar_ops_ir.h"

namespace kiln::llvm_ir {
namespace {

// Where each operand dimension's index comes from: a batch or free position
// of the output index, or a contracting loop.
struct OperandMap {
  std::vector<int64_t> output_position;  // -1 for contracting dimensions
  std::vector<int64_t> contracting;      // position in the contracting list, else -1
};

OperandMap MapOperand(int64_t rank, const std::vector<int64_t>& batch,
                      const std::vector<int64_t>& contracting, int64_t free_offset) {
  OperandMap map;
  int64_t next_free = free_offset;
  for (int64_t d = 0; d < rank; ++d) {
    const auto batch_at = std::find(batch.begin(), batch.end(), d);
    const auto contracting_at = std::find(contracting.begin(), contracting.end(), d);
    if (batch_at != batch.end()) {
      map.output_position.push_back(batch_at - batch.begin());
      map.contracting.push_back(-1);
    } else if (contracting_at != contracting.end()) {
      map.output_position.push_back(-1);
      map.contracting.push_back(contracting_at - contracting.begin());
    } else {
      map.output_position.push_back(next_free++);
      map.contracting.push_back(-1);
    }
  }
  return map;
}

bool Distinct(const std::vector<int64_t>& values) {
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

}  // namespace

ElementType DotAccumulationType(ElementType result) {
  switch (result) {
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32: return ElementType::kF32;
    case ElementType::kF64: return ElementType::kF64;
    case ElementType::kC64:  // complex accumulates in its own type, as the interpreter does
    case ElementType::kC128: return result;
    default: return ElementType::kS64;
  }
}

ProductAccumulator::ProductAccumulator(llvm::IRBuilder<>& b, ElementalEmitter& emitter, ElementType result,
                                       const char* name)
    : b_(b),
      emitter_(emitter),
      result_(result),
      accumulation_(DotAccumulationType(result)),
      type_(ComputeType(b.getContext(), accumulation_)),
      sum_(llvm::IRBuilder<>(emitter.entry(), emitter.entry()->begin()).CreateAlloca(type_, nullptr, name)) {
  b_.CreateStore(llvm::Constant::getNullValue(type_), sum_);
}

Status ProductAccumulator::Add(const Instruction& lhs, const IrIndex& lhs_index, const Instruction& rhs,
                               const IrIndex& rhs_index) {
  emitter_.PushScope();
  StatusOr<IrValues> a = emitter_.Emit(lhs, lhs_index);
  StatusOr<IrValues> c = a.ok() ? emitter_.Emit(rhs, rhs_index) : a.status();
  emitter_.PopScope();
  KILN_RETURN_IF_ERROR(c.status());
  llvm::Value* x = EmitConvert(b_, lhs.shape.element_type(), accumulation_, (*a)[0]);
  llvm::Value* y = EmitConvert(b_, rhs.shape.element_type(), accumulation_, (*c)[0]);
  llvm::Value* sum = b_.CreateLoad(type_, sum_);
  if (IsComplex(accumulation_)) {
    // C's complex product (complex_ir.h); the parts add as a vector.
    KILN_ASSIGN_OR_RETURN(llvm::Value * product,
                          EmitComplexBinary(b_, emitter_.target(), Opcode::kMultiply, accumulation_, x, y));
    b_.CreateStore(b_.CreateFAdd(sum, product), sum_);
    return OkStatus();
  }
  const bool floating = IsFloating(accumulation_);
  llvm::Value* product = floating ? b_.CreateFMul(x, y) : b_.CreateMul(x, y);
  b_.CreateStore(floating ? b_.CreateFAdd(sum, product) : b_.CreateAdd(sum, product), sum_);
  return OkStatus();
}

Status ProductAccumulator::AddZeroTimes(const Instruction& rhs, const IrIndex& rhs_index) {
  if (!IsFloating(accumulation_) && !IsComplex(accumulation_)) return OkStatus();
  emitter_.PushScope();
  StatusOr<IrValues> c = emitter_.Emit(rhs, rhs_index);
  emitter_.PopScope();
  KILN_RETURN_IF_ERROR(c.status());
  llvm::Value* zero = llvm::Constant::getNullValue(type_);
  llvm::Value* y = EmitConvert(b_, rhs.shape.element_type(), accumulation_, (*c)[0]);
  llvm::Value* product = nullptr;
  if (IsComplex(accumulation_)) {
    KILN_ASSIGN_OR_RETURN(
        product, EmitComplexBinary(b_, emitter_.target(), Opcode::kMultiply, accumulation_, zero, y));
  } else {
    product = b_.CreateFMul(zero, y);
  }
  b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(type_, sum_), product), sum_);
  return OkStatus();
}

llvm::Value* ProductAccumulator::Result() {
  return EmitConvert(b_, accumulation_, result_, b_.CreateLoad(type_, sum_));
}

Status CheckDotEmittable(const Instruction& dot) {
  auto refuse = [&](const char* why) {
    return Unimplemented("cpu codegen: cannot emit dot ", dot.shape.ToString(), " (", dot.name, "): ", why);
  };
  if (dot.operands.size() != 2 || !dot.shape.IsArray()) return refuse("needs two array operands");
  const Shape& lhs = dot.operand(0)->shape;
  const Shape& rhs = dot.operand(1)->shape;
  const ElementType result = dot.shape.element_type();
  if (IsComplex(result)) {
    // Complex dots multiply and add in the result's own type.
    if (lhs.element_type() != result || rhs.element_type() != result)
      return refuse("complex operands must have the result's type");
  } else {
    for (ElementType type : {lhs.element_type(), rhs.element_type(), result}) {
      if (type == ElementType::kPred || IsComplex(type))
        return refuse("needs non-pred element types of one kind");
    }
  }
  const DotDimensionNumbers& dn = dot.attrs.dot;
  auto in_range = [](const std::vector<int64_t>& dims, int64_t rank) {
    return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= 0 && d < rank; });
  };
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size() ||
      !in_range(dn.lhs_batch_dimensions, lhs.rank()) ||
      !in_range(dn.lhs_contracting_dimensions, lhs.rank()) ||
      !in_range(dn.rhs_batch_dimensions, rhs.rank()) ||
      !in_range(dn.rhs_contracting_dimensions, rhs.rank())) {
    return refuse("bad dimension numbers");
  }
  std::vector<int64_t> lhs_special = dn.lhs_batch_dimensions, rhs_special = dn.rhs_batch_dimensions;
  lhs_special.insert(lhs_special.end(), dn.lhs_contracting_dimensions.begin(),
                     dn.lhs_contracting_dimensions.end());
  rhs_special.insert(rhs_special.end(), dn.rhs_contracting_dimensions.begin(),
                     dn.rhs_contracting_dimensions.end());
  if (!Distinct(lhs_special) || !Distinct(rhs_special)) return refuse("a dimension is listed twice");
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    if (lhs.dimensions(dn.lhs_batch_dimensions[i]) != rhs.dimensions(dn.rhs_batch_dimensions[i]))
      return refuse("batch dimensions differ in size");
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    if (lhs.dimensions(dn.lhs_contracting_dimensions[i]) != rhs.dimensions(dn.rhs_contracting_dimensions[i]))
      return refuse("contracting dimensions differ in size");
  }
  const int64_t lhs_free = lhs.rank() - static_cast<int64_t>(lhs_special.size());
  const int64_t rhs_free = rhs.rank() - static_cast<int64_t>(rhs_special.size());
  if (dot.shape.rank() != static_cast<int64_t>(dn.lhs_batch_dimensions.size()) + lhs_free + rhs_free)
    return refuse("result rank does not match the operands");
  return OkStatus();
}

StatusOr<llvm::Value*> EmitDotElement(llvm::IRBuilder<>& b, ElementalEmitter& emitter, const Instruction& dot,
                                      const IrIndex& index) {
  const DotDimensionNumbers& dn = dot.attrs.dot;
  const Instruction& lhs = *dot.operand(0);
  const Instruction& rhs = *dot.operand(1);
  const auto batch_rank = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  const int64_t lhs_free =
      lhs.shape.rank() - batch_rank - static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
  const OperandMap lhs_map =
      MapOperand(lhs.shape.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions, batch_rank);
  const OperandMap rhs_map = MapOperand(rhs.shape.rank(), dn.rhs_batch_dimensions,
                                        dn.rhs_contracting_dimensions, batch_rank + lhs_free);
  ProductAccumulator sum(b, emitter, dot.shape.element_type(), "dot.acc");

  IrIndex contracting(dn.lhs_contracting_dimensions.size());
  auto operand_index = [&](const OperandMap& map) {
    IrIndex at(map.output_position.size());
    for (size_t d = 0; d < at.size(); ++d) {
      at[d] = map.output_position[d] >= 0 ? index[static_cast<size_t>(map.output_position[d])]
                                          : contracting[static_cast<size_t>(map.contracting[d])];
    }
    return at;
  };
  // The contracting dimensions in lhs order, the last one innermost.
  std::function<Status(size_t)> loop = [&](size_t level) -> Status {
    if (level == contracting.size()) {
      return sum.Add(lhs, operand_index(lhs_map), rhs, operand_index(rhs_map));
    }
    const int64_t size = lhs.shape.dimensions(dn.lhs_contracting_dimensions[level]);
    return EmitCountedLoop(
        b, b.getInt64(0), b.getInt64(size), "dot.k",
        [&](llvm::Value* k) {
          contracting[level] = k;
          return loop(level + 1);
        },
        LoopKind::kAccumulating);
  };
  KILN_RETURN_IF_ERROR(loop(0));
  return sum.Result();
}

}  // namespace kiln::llvm_ir
