#include "backends/vulkan/glsl_emittable.h"

#include <atomic>
#include <cstdint>
#include <limits>

#include "backends/vulkan/glsl_kernel_emitter.h"
#include "backends/vulkan/glsl_ops.h"
#include "backends/vulkan/glsl_types.h"

namespace kiln::vulkan {
namespace {

std::atomic<int64_t> glsl_emittable_tables_made{0};

}  // namespace

int64_t GlslEmittableTablesMade() { return glsl_emittable_tables_made.load(); }

std::shared_ptr<const compiler::EmittableTable> MakeGlslEmittableTable(const ShaderFeatures& features) {
  using compiler::ElementTypeSet;
  using compiler::Emittability;
  constexpr Emittability kAlways = Emittability::kAlways, kChecked = Emittability::kChecked;
  const ElementTypeSet all = ElementTypeSet::All();
  const ElementTypeSet ordered = all.Without({ElementType::kC64, ElementType::kC128});
  auto table = std::make_shared<compiler::EmittableTable>(
      "vulkan",
      std::initializer_list<compiler::EmittableRow>{
          {Opcode::kParameter, kAlways},
          {Opcode::kIota, kAlways, ordered},
          {Opcode::kConvert, kAlways},
          {Opcode::kReal, kAlways},
          {Opcode::kImag, kAlways},
          {Opcode::kComplex, kAlways},
          {Opcode::kSelect, kAlways},
          {Opcode::kBroadcast, kAlways},
          {Opcode::kReshape, kAlways},
          {Opcode::kTranspose, kAlways},
          {Opcode::kSlice, kAlways},
          {Opcode::kReverse, kAlways},
          {Opcode::kConcatenate, kAlways},
          {Opcode::kPad, kAlways},
          {Opcode::kDynamicSlice, kAlways},
          {Opcode::kTuple, kAlways, all, /*tuple_result=*/true},
          {Opcode::kGetTupleElement, kAlways, all, /*tuple_result=*/true},
          // Constants up to a size; compare, clamp and bitcast-convert by
          // type pairs and directions; the rest by their loops (the device's
          // limit on one invocation's iterations), attributes and computations.
          {Opcode::kConstant, kChecked},
          {Opcode::kCompare, kChecked},
          {Opcode::kClamp, kChecked},
          {Opcode::kBitcastConvert, kChecked},
          {Opcode::kReducePrecision, kChecked},
          {Opcode::kIsFinite, kChecked},
          {Opcode::kDynamicUpdateSlice, kChecked},
          {Opcode::kGather, kChecked},
          {Opcode::kDot, kChecked},
          {Opcode::kConvolution, kChecked},
          {Opcode::kMap, kChecked},
          {Opcode::kReduce, kChecked, all, /*tuple_result=*/true},
          {Opcode::kReduceWindow, kChecked, all, /*tuple_result=*/true},
          {Opcode::kScatter, kChecked, all, /*tuple_result=*/true},
          {Opcode::kSelectAndScatter, kChecked},
          {Opcode::kRng, kChecked},
          {Opcode::kRngBitGenerator, kChecked, all, /*tuple_result=*/true},
          {Opcode::kSort, kChecked, all, /*tuple_result=*/true},
          {Opcode::kTopK, kChecked, all, /*tuple_result=*/true},
      },
      [features](const Instruction& instruction) {
        return CheckGlslInstructionEmittable(instruction, features);
      },
      std::numeric_limits<int32_t>::max());
  // Unary and binary ops: the element types glsl_ops.cc writes them for
  // (that file keeps the fact; it is read here once per table).
  GlslPrelude prelude;
  for (int i = 0; i < static_cast<int>(Opcode::kOpcodeCount); ++i) {
    const auto opcode = static_cast<Opcode>(i);
    const OpKind kind = OpcodeKind(opcode);
    if (table->row(opcode).emittability != Emittability::kNever ||
        (kind != OpKind::kUnary && kind != OpKind::kBinary))
      continue;
    ElementTypeSet types;
    bool any = false;
    for (int t = static_cast<int>(ElementType::kPred); t <= static_cast<int>(ElementType::kC128); ++t) {
      const auto type = static_cast<ElementType>(t);
      const bool written = kind == OpKind::kUnary ? UnaryOpExpr(opcode, type, "x", prelude).ok()
                                                  : BinaryOpExpr(opcode, type, "a", "b", prelude).ok();
      if (written) {
        types.Insert(type);
        any = true;
      }
    }
    if (any) table->Set({opcode, kAlways, types});
  }
  ElementTypeSet supported;
  for (int t = static_cast<int>(ElementType::kPred); t <= static_cast<int>(ElementType::kC128); ++t) {
    const auto type = static_cast<ElementType>(t);
    if (CheckElementType(type, features).ok()) supported.Insert(type);
  }
  table->Restrict(supported);
  // Fused kernels bind no scratch (only sort and topk do, whose rows are
  // checked by emitting them): their inputs and outputs may take every binding.
  if (features.max_storage_buffers > 0) table->set_max_kernel_buffers(features.max_storage_buffers);
  glsl_emittable_tables_made.fetch_add(1);
  return table;
}

}  // namespace kiln::vulkan
