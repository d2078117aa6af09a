// User-defined ops: a process-wide registry of op definitions (name, typed
// inputs and outputs, attributes with defaults and constraints, a shape
// function, kernels per backend and element type, an optional gradient and
// documentation), in the style of TensorFlow's REGISTER_OP and XLA's typed
// FFI. A registered op is a custom-call instruction whose target is the op
// name and whose attributes, every one resolved (defaults and inferred type
// attributes included), travel in backend_config as a dictionary:
//
//   %z = s32[5] custom-call(s32[5] %x), custom_call_target="ZeroOut",
//        backend_config="{preserve_index = 1, T = s32}"
//
// Values: an int (`1`, an optional `: i64` suffix is ignored), a float
// (always with '.', 'e', inf or nan: `0.5`), `true`/`false`, a string in
// double quotes (C escapes), a type (`s32`, `f32`, ...), a shape
// (`shape<2,3>`), a tensor (`tensor<s32[2], [5, 6]>`) and lists of them in
// brackets (`[2, 3]`). The C shim (capi/op_registry.cc) adapts C callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/element_type.h"
#include "core/ir.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

class Builder;
class Literal;
class Op;

enum class AttrKind { kInt, kFloat, kBool, kString, kType, kShape, kTensor, kList };
std::string_view AttrKindName(AttrKind kind);

struct AttrValue {
  AttrKind kind = AttrKind::kInt;
  int64_t i = 0;                             // int, bool (0/1)
  double f = 0;                              // float
  std::string s;                             // string
  ElementType type = ElementType::kInvalid;  // type, tensor
  std::vector<int64_t> dims;                 // shape, tensor
  std::vector<uint8_t> data;                 // tensor: row-major bytes
  AttrKind item_kind = AttrKind::kInt;       // list
  bool item_kind_known = true;               // false for `[]` parsed from text
  std::vector<AttrValue> items;              // list

  bool operator==(const AttrValue&) const = default;
};

// Attributes in definition order (name, value).
using AttrList = std::vector<std::pair<std::string, AttrValue>>;
const AttrValue* FindAttr(const AttrList& attrs, std::string_view name);

// The backend_config dictionary text of `attrs`, and back.
std::string PrintAttrDict(const AttrList& attrs);
StatusOr<AttrList> ParseAttrDict(std::string_view text);
// One value in the same grammar (also accepts TF spellings: 'single quotes',
// DT_INT32, int32, float).
StatusOr<AttrValue> ParseAttrValueText(std::string_view text);
std::string PrintAttrValue(const AttrValue& value);

// TF type names (int32, float, double, bool, ...), XLA names (s32, f32,
// pred, ...) and DT_* spellings.
std::optional<ElementType> OpTypeFromName(std::string_view name);

struct AttrDef {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  AttrKind item_kind = AttrKind::kInt;       // for lists
  std::vector<ElementType> allowed_types;    // type / list(type): empty = any
  std::string allowed_types_text;            // as written, for messages
  std::vector<std::string> allowed_strings;  // string enum: empty = any
  std::optional<int64_t> minimum;            // int >= n; list length >= n
  std::optional<AttrValue> default_value;
  std::string spec;  // as written
};

struct IoDef {
  std::string name;
  std::optional<ElementType> type;  // a fixed type (`int32`), else type_attr
  std::string type_attr;            // `T`: a type or list(type) attribute
  std::string number_attr;          // `N * T`: an int attribute
  std::string spec;
};

struct OpShapeContext {
  std::string_view op_name;
  std::span<const Shape> operands;
  const AttrList* attrs;
};
// Given the resolved output shapes (the defaults), changes them as it likes.
using OpShapeFunction = std::function<Status(const OpShapeContext&, std::vector<Shape>& outputs)>;

struct KernelBuffer {
  ElementType type;
  std::span<const int64_t> dims;
  void* data;
  size_t byte_size;
};
struct KernelFrame {
  std::string_view op_name;
  std::string_view backend;
  std::span<const KernelBuffer> args;
  std::span<const KernelBuffer> results;
  const AttrList* attrs;
};
using OpKernelFunction = std::function<Status(const KernelFrame&)>;

// What a gradient function is given: the shapes of one call's operands and
// of its outputs (one per output array; each output's cotangent has its
// output's shape) and the call's attributes, every one resolved.
struct OpGradientContext {
  std::string_view op_name;
  std::span<const Shape> operands;
  std::span<const Shape> outputs;
  const AttrList* attrs;
};
// The gradient of one call as a computation of its own: ENTRY's parameters
// are the operands, then the outputs, then the outputs' cotangents; its
// result is a tuple of the cotangents of the operands marked in
// `has_gradient` (in operand order), each of its operand's shape. The
// other operands get none (zero).
struct OpGradientComputation {
  std::unique_ptr<Module> module;
  std::vector<bool> has_gradient;
};
using OpGradientFunction = std::function<StatusOr<OpGradientComputation>(const OpGradientContext&)>;

struct OpDef {
  std::string name;
  std::string doc;
  std::vector<AttrDef> attrs;
  std::vector<IoDef> inputs;
  std::vector<IoDef> outputs;
  OpShapeFunction shape_function;
  OpGradientFunction gradient;
  // Keeps whatever the callbacks point at alive (C user data with its release).
  std::vector<std::shared_ptr<void>> keep_alive;

  // Adds a TF-style spec: "preserve_index: int = 0", "T: {float, int32}",
  // "N: int >= 2", "e: {'apple', 'orange'}", "l: list(int) >= 1 = [2, 3]".
  Status AddAttr(std::string_view spec);
  // "to_zero: int32", "to_zero: T", "in: N * T", "in: T" (T a list(type)).
  Status AddInput(std::string_view spec);
  Status AddOutput(std::string_view spec);
  const AttrDef* FindAttrDef(std::string_view attr) const;
};

// What a call resolves to: every attribute and the output array shapes.
struct ResolvedOpCall {
  AttrList attrs;
  std::vector<Shape> outputs;
  // The instruction's shape: the one array, or a tuple of the outputs.
  Shape result_shape;
};

// The registry. Thread-safe; registered ops live until the process exits.
Status RegisterOp(OpDef def);
std::shared_ptr<const OpDef> FindRegisteredOp(std::string_view name);
std::vector<std::shared_ptr<const OpDef>> RegisteredOps();
// `backend`: "cpu" or "interpreter" (host kernels; both run in the host
// evaluator, so they must be one function for a given type), "host" (both);
// `type` kInvalid = any element type.
Status RegisterOpKernel(std::string_view op, std::string_view backend, ElementType type,
                        OpKernelFunction kernel, std::shared_ptr<void> keep_alive);
// The kernel of `op` for `backend` and `type`, or nullptr.
OpKernelFunction FindOpKernel(std::string_view op, std::string_view backend, ElementType type);

// A device kernel of a registered op: code the backend loads as given
// (SPIR-V words on vulkan, PTX text on cuda), its entry point and its
// launch. The frame it gets is in kiln.h (kiln_user_op_register_device_kernel).
struct OpDeviceKernel {
  std::string backend;  // "vulkan" or "cuda"
  ElementType type = ElementType::kInvalid;
  std::vector<uint8_t> code;
  std::string entry;
  uint32_t block_size = 0;  // invocations per workgroup / threads per block; 0: the backend's default
  uint32_t grid_size = 0;   // workgroups / blocks; 0: enough for result 0's elements
};
// Registers `kernel` for `op` after CheckDeviceKernelCode; NOT_FOUND for an
// op not registered, ALREADY_EXISTS for a taken (backend, type),
// INVALID_ARGUMENT for another backend.
Status RegisterOpDeviceKernel(std::string_view op, OpDeviceKernel kernel);
// The device kernel of `op` for `backend` and `type` (else the one for any
// type), or nullptr.
std::shared_ptr<const OpDeviceKernel> FindOpDeviceKernel(std::string_view op, std::string_view backend,
                                                         ElementType type);
// The backends and types with kernels, as "cpu:s32, interpreter:s32".
std::string DescribeOpKernels(std::string_view op);
// The element type that picks a kernel: the first argument's, else the first result's.
ElementType KernelElementType(std::span<const Shape> operands, const Shape& result);

// The shapes of a call's operands, in order (what KernelElementType and the
// checks of a registered op's call read).
std::vector<Shape> OperandShapes(const Instruction& call);

// Checks operand types, counts, attributes and constraints; fills defaults
// and inferred type attributes; runs the shape function.
StatusOr<ResolvedOpCall> ResolveOpCall(const OpDef& def, std::span<const Shape> operands,
                                       const AttrList& given);

// Adds a call of registered op `name` to `builder`; a definition error
// (unknown op, wrong type, bad attribute, shape function error) is returned
// and adds nothing.
StatusOr<Op> BuildRegisteredOpCall(Builder& builder, std::string_view name, std::span<const Op> operands,
                                   const AttrList& attrs);

// For a backend's compile: every custom-call of `module` that names a
// registered op is checked against its definition (attributes, operand
// types, result shape) and must have a kernel for `backend` and its type
// (a host kernel on cpu and interpreter, a device kernel on vulkan and cuda).
// UNIMPLEMENTED naming the op, backend and type when it has none.
Status CheckRegisteredOps(const Module& module, std::string_view backend);

// Runs a registered op on the host (cpu and interpreter).
StatusOr<Literal> EvaluateRegisteredOp(const OpDef& def, const Instruction& instruction,
                                       std::span<const Literal* const> operands, std::string_view backend);

// For autodiff: the gradient computation of `call`, a custom-call of
// registered op `def`, from its gradient function, checked (one cotangent
// per marked operand, of its operand's shape). INVALID_ARGUMENT when the op
// has no gradient function or it built a cotangent of the wrong shape; the
// function's own error with its code. Each names the op and instruction.
StatusOr<OpGradientComputation> BuildOpGradient(const OpDef& def, const Instruction& call);

// `kiln info --ops`: one block per registered op (signature, attributes,
// kernels, doc).
std::string DescribeRegisteredOps();

}  // namespace kiln
