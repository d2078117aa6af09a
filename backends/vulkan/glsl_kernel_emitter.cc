#include "backends/vulkan/glsl_kernel_emitter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "backends/vulkan/constant_operands.h"
#include "backends/vulkan/glsl_atomic_scatter.h"
#include "backends/vulkan/glsl_bitonic_sort.h"
#include "backends/vulkan/glsl_ops.h"
#include "backends/vulkan/glsl_serial_sort.h"
#include "backends/vulkan/glsl_types.h"
#include "core/int_math.h"
#include "core/lowering/bitonic_sort.h"
#include "core/reducer.h"
#include "core/rng_bit_layout.h"

namespace kiln::vulkan {
namespace {

// One GLSL expression per array leaf of a value (a tuple has several).
using Values = std::vector<std::string>;

// A multi-index as GLSL int expressions; `linear` is the row-major linear
// index when already known (elementwise chains pass it along, so a buffer
// read does not recompose what the loop just decomposed).
struct Index {
  std::vector<std::string> dims;
  std::string linear;
};

// Constant arrays bigger than this are refused: they belong in a buffer.
constexpr int64_t kMaxConstantElements = 4096;

Status Refuse(const Instruction& instruction, const std::string& why) {
  return Unimplemented("vulkan: cannot emit ", OpcodeName(instruction.opcode), " ",
                       instruction.shape.ToString(), " (", instruction.name, "): ", why);
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t value : values) product *= value;
  return product;
}

bool Contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// The interpreter's accumulators (core/interpreter/accumulation.h): float
// for f16/bf16/f32, the type itself for f64 and complex, wrapping integers
// (32 bits give the same low bits as its 64 when the result has no more).
ElementType AccumulatorType(ElementType out) {
  if (out == ElementType::kF16 || out == ElementType::kBF16 || out == ElementType::kF32)
    return ElementType::kF32;
  if (out == ElementType::kF64 || IsComplex(out)) return out;
  return BitWidth(out) > 32 ? ElementType::kU64 : ElementType::kU32;
}

constexpr int64_t kLoopCountCap = int64_t{1} << 62;

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > kLoopCountCap / b) return kLoopCountCap;
  return a * b;
}

int64_t SaturatingAdd(int64_t a, int64_t b) { return std::min(kLoopCountCap, a + b); }

// A loop header for `var` from `begin` while < `end`, by `step`.
// (Mesa's lavapipe ends an invocation's loops after 65535 iterations in
// all, counted over every loop of the shader, so longer loops come out
// short there; splitting a loop does not help, only fewer iterations do.)
std::string LoopHeader(const std::string& var, const std::string& begin, const std::string& end,
                       const std::string& step) {
  const std::string increment = step == "1" ? "++" + var : var + " += " + step;
  return "for (int " + var + " = " + begin + "; " + var + " < " + end + "; " + increment + ")";
}

// A scatter's dimension numbers, checked and resolved against its shapes.
struct ScatterGeometry {
  size_t count = 0;  // arrays scattered together
  std::vector<int64_t> operand_dims;
  std::vector<int64_t> update_dims;
  // The operand dims the update window spans, in update_window_dims' order.
  std::vector<int64_t> window_operand_dims;
  std::vector<int64_t> window_size;  // per operand dim (1 where not spanned)
  std::vector<int64_t> batch_dims;   // update dims that are not window dims
  std::vector<int64_t> batch_extents;
  bool has_vector = false;   // index_vector_dim is a dimension of the indices
  bool window_last = false;  // the update window dims are the update's last ones, in order
};

class Emitter {
 public:
  Emitter(const ShaderFeatures& features) : features_(features) {}

  Status CheckComputation(const Computation& computation, int depth);
  StatusOr<GlslKernel> Emit(const Computation& kernel, std::string_view entry_name);
  // `instruction` as a kernel of its own, its operands its input buffers,
  // without building that kernel's computation.
  StatusOr<GlslKernel> EmitAlone(const Instruction& instruction);
  GlslKernel Finish(GlslKernel& result, const std::string& buffers);
  // Emits the kernel for inlining into a loop shader (glsl_whole_loop.h):
  // binding i is read and written as buffer `buffer_names[i]`, every name
  // the emitter makes up starts with `name_prefix`, and each output element
  // is computed by one invocation (no subgroup lanes).
  StatusOr<GlslKernelParts> EmitParts(const Computation& kernel, std::vector<std::string> buffer_names,
                                      std::string_view name_prefix);

 private:
  // Code.
  void Line(const std::string& text) {
    body_ += std::string(static_cast<size_t>(2 * indent_), ' ') + text + "\n";
  }
  void Open(const std::string& header) {
    Line(header + " {");
    ++indent_;
    memo_.emplace_back();
    scopes_.push_back(-1);
  }
  // A loop that runs at most `trips` times each time it is reached: it adds
  // that many iterations for every iteration of the loops around it.
  void OpenLoop(const std::string& header, int64_t trips) {
    CountLoop(trips);
    Open(header);
    scopes_.back() = loop_scale_;
    loop_scale_ = SaturatingMultiply(loop_scale_, trips);
  }
  void CountLoop(int64_t trips) {
    loop_iterations_ = SaturatingAdd(loop_iterations_, SaturatingMultiply(loop_scale_, trips));
  }
  void Close() {
    if (scopes_.back() >= 0) loop_scale_ = scopes_.back();
    scopes_.pop_back();
    memo_.pop_back();
    --indent_;
    Line("}");
  }
  std::string Fresh(const char* prefix) { return name_prefix_ + prefix + std::to_string(counter_++); }
  // The GLSL name of binding `binding`'s buffer block.
  std::string BufferName(int binding) const {
    const auto index = static_cast<size_t>(binding);
    return index < buffer_names_.size() ? buffer_names_[index] : "b" + std::to_string(binding);
  }
  std::string Var(ElementType type, const std::string& expression) {
    const std::string name = Fresh("v");
    Line(GlslValueType(type) + " " + name + " = " + expression + ";");
    return name;
  }
  std::string IntVar(const std::string& expression) {
    if (IsSimple(expression)) return expression;
    const std::string name = Fresh("i");
    Line("int " + name + " = " + expression + ";");
    return name;
  }
  static bool IsSimple(const std::string& expression) {
    return std::all_of(expression.begin(), expression.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  std::string Linear(const Index& index, const std::vector<int64_t>& dims);
  Index Delinearize(const std::string& linear, const std::vector<int64_t>& dims);

  // Every array of `instruction` (its result leaves and operands) of a type
  // the device has and within 32-bit indexing, and what it calls.
  Status CheckArrays(const Instruction& instruction, int depth);
  // The kernel whose outputs are `root`'s and whose input buffers are
  // `inputs` (checked by the caller).
  StatusOr<GlslKernel> EmitRoot(const Instruction& root, const std::vector<const Instruction*>& inputs,
                                std::string_view entry_name);

  StatusOr<Values> Value(const Instruction& instruction, const Index& index);
  StatusOr<std::string> Scalar(const Instruction& instruction, const Index& index) {
    KILN_ASSIGN_OR_RETURN(Values values, Value(instruction, index));
    if (values.size() != 1) return Refuse(instruction, "a tuple where an array was expected");
    return values[0];
  }
  // The operand of an elementwise op at the op's index (a scalar operand of
  // select or clamp is read at its only element).
  StatusOr<std::string> ElementwiseOperand(const Instruction& instruction, size_t i, const Index& index) {
    const Instruction& operand = *instruction.operand(i);
    if (operand.shape.rank() == 0 && instruction.shape.rank() != 0) return Scalar(operand, Index{});
    return Scalar(operand, index);
  }
  StatusOr<Values> EmitInstruction(const Instruction& instruction, const Index& index);
  // `computation` on `arguments` (its parameters' leaves in order); where
  // `constant_arguments` (one flag per argument) says so, a parameter holds
  // a compile-time constant that may be zero, and float ops with it take
  // the constant-operand helpers (ConstantParameters).
  StatusOr<Values> Call(const Computation& computation, const Values& arguments,
                        const std::vector<bool>* constant_arguments = nullptr);
  // One accumulator per value: `instruction`'s operands first .. first +
  // count - 1, read at `at` (a reduce's initial values, a scatter's operand).
  StatusOr<Values> Accumulators(const Instruction& instruction, size_t first, size_t count, const Index& at);
  // accumulators = instruction's computation(accumulators, operands first ..
  // first + count - 1 at `at`); every result is computed before any
  // accumulator changes. `constant_arguments` as Call's.
  Status Accumulate(const Instruction& instruction, Values& accumulators, size_t first, const Index& at,
                    const std::vector<bool>* constant_arguments = nullptr);
  // Call's flags for a reduce's computation applied to its `count` initial
  // values and `count` elements: each initial value that is a constant that
  // may be zero. Lavapipe folds `+0 + x` to x where it sees such a constant
  // meet an element (a short loop unrolled, a subgroup's last fold), which
  // gives -0 for x = -0 where XLA's +0 + -0 is +0: those steps take the
  // helpers. Empty where no initial value is such a constant.
  static std::vector<bool> ConstantInitialValues(const Instruction& reduce, size_t count);
  // A float sum that started from +0 after its loop: + (+0) through the
  // constant-operand helper. Lavapipe folds the first `+0 + p` of an
  // unrolled loop to p, so products that are all -0 summed to -0 where
  // XLA's sum is +0; a sum from +0 is never -0 otherwise, so this turns
  // that -0 into +0 and leaves every other sum, and the loop keeps its
  // plain adds.
  Status EndSumFromPositiveZero(ElementType type, const std::string& sum);
  StatusOr<Values> EmitReduce(const Instruction& instruction, const Index& index);
  // The root reduce's lanes each fold a strided part of the reduced
  // elements, then combine by butterfly shuffles, then fold in the initial
  // values once.
  StatusOr<Values> EmitCooperativeReduce(const Instruction& instruction, const Index& index,
                                         const std::vector<int64_t>& reduced_extents);
  int64_t CooperativeLanes(const Instruction& root) const;
  // A sum of one f16 or bf16 array (IsNarrowFloatSum): its elements are
  // added as f32 values (serially, or by the subgroup's lanes and then
  // shuffles where `cooperative`), the initial value last, and the sum is
  // rounded to the element type once. Rounding every partial sum to f16
  // lost the result where lanes' partial sums grew past f16's spacing.
  StatusOr<Values> EmitNarrowFloatSum(const Instruction& reduce, const Index& index,
                                      const std::vector<int64_t>& reduced_extents, bool cooperative);
  // The index of a reduce's operand element: the output `index` in the kept
  // dimensions, `r` delinearised over `reduced_extents` in the reduced ones.
  StatusOr<Index> ReducedOperandIndex(const Instruction& reduce, const Index& index, const std::string& r,
                                      const std::vector<int64_t>& reduced_extents);
  StatusOr<Values> EmitReduceWindow(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitDot(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitConvolution(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitConcatenate(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitPad(const Instruction& instruction, const Index& index);
  StatusOr<std::vector<std::string>> DynamicStarts(const Instruction& instruction, size_t first,
                                                   const std::vector<int64_t>& sizes);
  StatusOr<std::string> EmitDynamicSlice(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitDynamicUpdateSlice(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitGather(const Instruction& instruction, const Index& index);
  // Kernels built around one instruction with a loop of their own (the
  // grid-stride loop runs over rows, not output elements).
  // Sort and topk kernels: the bitonic network's passes (glsl_bitonic_sort.h),
  // or on a CPU device for short rows one invocation's merge sort per row
  // (glsl_serial_sort.h).
  StatusOr<GlslKernel> EmitSortRows(const Instruction& sort, GlslKernel& result, const std::string& buffers);
  StatusOr<GlslKernel> EmitTopKRows(const Instruction& top_k, GlslKernel& result, const std::string& buffers);
  // k_hi_first(row, lo, hi) as a GLSL function whose body `hi_first` emits
  // (returning its decision's expression).
  StatusOr<std::string> EmitComparatorFunction(const std::function<StatusOr<std::string>()>& hi_first);
  // A GLSL function of its own, `signature { ...; return value; }`: the
  // value and the statements it needs are emitted with their own text,
  // scopes and indentation, then the kernel's are restored. `loops` gets
  // the loop iterations of one call.
  StatusOr<std::string> EmitFunction(const std::string& signature,
                                     const std::function<StatusOr<std::string>()>& value, int64_t* loops);
  StatusOr<GlslKernel> FinishSort(const Instruction& root, GlslKernel& result, const std::string& buffers,
                                  int64_t rows, int64_t length, int64_t outputs,
                                  const std::string& comparator, const std::string& gather);
  StatusOr<int> BufferOf(const Instruction& instruction, const Instruction& operand);
  StatusOr<Values> EmitScatter(const Instruction& instruction, const Index& index);
  // Where the index vector at `batch` (one index per batch dim) puts a
  // scatter's update window: each operand dim's start, and the conditions
  // that the window fits in the operand.
  struct ScatterWindow {
    std::vector<std::string> starts;
    std::vector<std::string> fits;
  };
  StatusOr<ScatterWindow> ScatterWindowAt(const Instruction& instruction, const ScatterGeometry& g,
                                          const std::vector<std::string>& batch);
  // A root scatter combined with atomics (glsl_atomic_scatter.h): the copy
  // of the operand, then one invocation per update element.
  StatusOr<GlslKernel> EmitAtomicScatter(const Instruction& scatter, const AtomicScatterPlan& plan,
                                         GlslKernel& result, const std::string& buffers);
  // k_scatter_combine(k_a, k_b), the scatter's combiner as a GLSL function.
  StatusOr<std::string> EmitScatterCombineFunction(const Instruction& scatter, const AtomicScatterPlan& plan);
  // Whether `instruction` or a producer fused with it (up to the kernel's
  // input buffers) draws random numbers (whose key a multi-launch kernel's
  // push constants cannot carry).
  bool DrawsRandomNumbers(const Instruction& instruction) const;
  StatusOr<std::string> EmitRng(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitBitcastChangingWidth(const Instruction& instruction, const Index& index);
  StatusOr<Values> EmitRngBitGenerator(const Instruction& instruction, const Index& index);
  StatusOr<Values> EmitSelectAndScatter(const Instruction& instruction, const Index& index);
  StatusOr<std::string> EmitConstant(const Instruction& instruction, const Index& index);
  StatusOr<std::string> ClampedIndex(const Instruction& index_operand, const std::string& value,
                                     int64_t high);

  const ShaderFeatures& features_;
  GlslPrelude prelude_;
  std::string globals_;
  std::string body_;
  // A kernel whose root is a reduce may give each output element a subgroup
  // (CooperativeLanes): this is that reduce and the subgroup's size.
  const Instruction* cooperative_reduce_ = nullptr;
  int64_t lanes_ = 0;
  int indent_ = 0;
  int counter_ = 0;
  std::vector<std::unordered_map<std::string, Values>> memo_;
  std::unordered_map<const Instruction*, int> buffers_;   // kernel parameters
  std::unordered_map<const Instruction*, Values> bound_;  // parameters of called computations
  ConstantParameters constant_parameters_;                // those bound to constants (Call)
  std::unordered_map<const Instruction*, std::string> constants_;
  bool uses_rng_key_ = false;
  // Emitting for a loop shader (EmitParts): the buffers' names, the prefix
  // of made-up names, and each binding's element type as emitted.
  bool inline_ = false;
  std::vector<std::string> buffer_names_;
  std::string name_prefix_;
  std::vector<ElementType> binding_types_;
  // Emitting an instruction alone (EmitAlone): its operands, whatever
  // their opcodes, are read from the input buffers.
  bool alone_ = false;
  int64_t alone_repeated_operands_ = 0;  // operands read twice or more, beyond the first
  // Loop iterations of one pass of the grid-stride loop's body: every
  // loop's trips times those of the loops around it (see GlslKernel).
  std::vector<int64_t> scopes_;  // per open block: the enclosing loop scale of a loop, else -1
  int64_t loop_scale_ = 1;
  int64_t loop_iterations_ = 0;
  int64_t heaviest_loops_ = 0;
  const Instruction* heaviest_ = nullptr;
  int64_t comparator_loops_ = 0;  // loop iterations of one k_hi_first call
  int64_t combine_loops_ = 0;     // loop iterations of one k_scatter_combine call
};

Status Emitter::CheckComputation(const Computation& computation, int depth) {
  if (depth > 8) return Unimplemented("vulkan: computations nested too deeply");
  // Parameters last, so that a type the device lacks is blamed on the op
  // that computes with it.
  std::vector<const Instruction*> order;
  for (const auto& owned : computation.instructions()) {
    if (owned->opcode != Opcode::kParameter) order.push_back(owned.get());
  }
  for (const Instruction* parameter : computation.parameters()) order.push_back(parameter);
  for (const Instruction* pointer : order) KILN_RETURN_IF_ERROR(CheckArrays(*pointer, depth));
  return OkStatus();
}

Status Emitter::CheckArrays(const Instruction& instruction, int depth) {
  auto check = [&](const Shape& shape) -> Status {
    for (const Shape& leaf : shape.Leaves()) {
      if (!leaf.IsArray()) return Refuse(instruction, "only arrays (and tuples of them) are emitted");
      if (Status status = CheckElementType(leaf.element_type(), features_); !status.ok())
        return Refuse(instruction, status.message());
      if (leaf.element_count() > std::numeric_limits<int32_t>::max())
        return Refuse(instruction, "more elements than 32-bit indexing reaches");
      NeedTypeExtensions(leaf.element_type(), prelude_);
    }
    return OkStatus();
  };
  KILN_RETURN_IF_ERROR(check(instruction.shape));
  for (const Instruction* operand : instruction.operands) KILN_RETURN_IF_ERROR(check(operand->shape));
  for (const Computation* called : instruction.called) {
    if (called != nullptr) KILN_RETURN_IF_ERROR(CheckComputation(*called, depth + 1));
  }
  return OkStatus();
}

std::string Emitter::Linear(const Index& index, const std::vector<int64_t>& dims) {
  if (!index.linear.empty()) return index.linear;
  if (dims.empty()) return "0";
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::string sum;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    const std::string term =
        strides[d] == 1 ? index.dims[d] : index.dims[d] + " * " + std::to_string(strides[d]);
    sum += sum.empty() ? term : " + " + term;
  }
  return IntVar(sum.empty() ? "0" : sum);
}

Index Emitter::Delinearize(const std::string& linear, const std::vector<int64_t>& dims) {
  Index index;
  index.linear = linear;
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) {
      index.dims.push_back("0");
      continue;
    }
    std::string expression =
        strides[d] == 1 ? linear : "(" + linear + " / " + std::to_string(strides[d]) + ")";
    if (d > 0) expression += " % " + std::to_string(dims[d]);
    index.dims.push_back(IntVar(expression));
  }
  return index;
}

StatusOr<Values> Emitter::Value(const Instruction& instruction, const Index& index) {
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(&instruction)) + "@";
  for (const std::string& dim : index.dims) key += dim + ",";
  for (auto scope = memo_.rbegin(); scope != memo_.rend(); ++scope) {
    if (auto it = scope->find(key); it != scope->end()) return it->second;
  }
  const int64_t loops_before = loop_iterations_;
  KILN_ASSIGN_OR_RETURN(Values values, EmitInstruction(instruction, index));
  // The op whose loops weigh most (an op around it with no loops of its
  // own does not take the blame).
  if (loop_iterations_ - loops_before > heaviest_loops_) {
    heaviest_loops_ = loop_iterations_ - loops_before;
    heaviest_ = &instruction;
  }
  memo_.back()[key] = values;
  return values;
}

StatusOr<Values> Emitter::Call(const Computation& computation, const Values& arguments,
                               const std::vector<bool>* constant_arguments) {
  size_t next = 0;
  std::vector<const Instruction*> constant;
  for (const Instruction* parameter : computation.parameters()) {
    const size_t leaves = parameter->shape.Leaves().size();
    if (next + leaves > arguments.size())
      return Internal("vulkan: too few arguments for ", computation.name());
    bound_[parameter] = Values(arguments.begin() + static_cast<std::ptrdiff_t>(next),
                               arguments.begin() + static_cast<std::ptrdiff_t>(next + leaves));
    if (constant_arguments != nullptr && next + leaves <= constant_arguments->size() &&
        std::all_of(constant_arguments->begin() + static_cast<std::ptrdiff_t>(next),
                    constant_arguments->begin() + static_cast<std::ptrdiff_t>(next + leaves),
                    [](bool flag) { return flag; }) &&
        constant_parameters_.insert(parameter).second)
      constant.push_back(parameter);
    next += leaves;
  }
  memo_.emplace_back();
  StatusOr<Values> result = Value(*computation.root(), Index{});
  memo_.pop_back();
  for (const Instruction* parameter : constant) constant_parameters_.erase(parameter);
  return result;
}

StatusOr<std::string> Emitter::EmitConstant(const Instruction& instruction, const Index& index) {
  if (!instruction.literal.has_value()) return Refuse(instruction, "a constant without a value");
  const Literal& literal = *instruction.literal;
  const int64_t count = literal.element_count();
  if (count == 1) return LiteralElement(literal, 0);
  if (count > kMaxConstantElements)
    return Refuse(instruction, "a constant of more than " + std::to_string(kMaxConstantElements) +
                                   " elements belongs in a buffer");
  auto it = constants_.find(&instruction);
  if (it == constants_.end()) {
    const std::string name = Fresh("k_const");
    const ElementType type = instruction.shape.element_type();
    std::string text = "const " + GlslValueType(type) + " " + name + "[" + std::to_string(count) +
                       "] = " + GlslValueType(type) + "[" + std::to_string(count) + "](";
    for (int64_t i = 0; i < count; ++i) text += (i == 0 ? "" : ", ") + LiteralElement(literal, i);
    globals_ += text + ");\n";
    it = constants_.emplace(&instruction, name).first;
  }
  return it->second + "[" + Linear(index, instruction.shape.dimensions()) + "]";
}

StatusOr<Values> Emitter::EmitInstruction(const Instruction& instruction, const Index& index) {
  const ElementType type =
      instruction.shape.IsArray() ? instruction.shape.element_type() : ElementType::kInvalid;
  auto one = [&](StatusOr<std::string> value) -> StatusOr<Values> {
    if (!value.ok()) {
      if (value.status().message().rfind("vulkan: ", 0) == 0) return value.status();
      return Refuse(instruction, value.status().message());
    }
    return Values{Var(type, *value)};
  };
  if (alone_ && instruction.opcode != Opcode::kParameter) {
    if (auto it = buffers_.find(&instruction); it != buffers_.end()) {
      const std::string element =
          BufferName(it->second) + ".d[" + Linear(index, instruction.shape.dimensions()) + "]";
      return Values{Var(type, LoadValue(type, element, prelude_))};
    }
  }
  switch (instruction.opcode) {
    case Opcode::kParameter: {
      if (auto it = bound_.find(&instruction); it != bound_.end()) return it->second;
      auto it = buffers_.find(&instruction);
      if (it == buffers_.end()) return Internal("vulkan: parameter ", instruction.name, " is not bound");
      const std::string element =
          BufferName(it->second) + ".d[" + Linear(index, instruction.shape.dimensions()) + "]";
      return Values{Var(type, LoadValue(type, element, prelude_))};
    }
    case Opcode::kConstant: {
      KILN_ASSIGN_OR_RETURN(std::string value, EmitConstant(instruction, index));
      return Values{value};
    }
    case Opcode::kIota: {
      const auto d = static_cast<size_t>(instruction.attrs.iota_dimension);
      if (d >= index.dims.size()) return Refuse(instruction, "bad iota dimension");
      if (IsComplex(type)) return Refuse(instruction, "iota is not defined for complex numbers");
      return one(ConvertExpr(ElementType::kS32, type, index.dims[d], prelude_));
    }
    case Opcode::kCompare: {
      KILN_ASSIGN_OR_RETURN(std::string a, ElementwiseOperand(instruction, 0, index));
      KILN_ASSIGN_OR_RETURN(std::string b, ElementwiseOperand(instruction, 1, index));
      return one(CompareExpr(instruction.attrs.comparison_direction, instruction.attrs.comparison_type,
                             instruction.operand(0)->shape.element_type(), a, b, prelude_));
    }
    case Opcode::kConvert: {
      KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 0, index));
      return one(ConvertExpr(instruction.operand(0)->shape.element_type(), type, x, prelude_));
    }
    case Opcode::kBitcastConvert: {
      if (instruction.operand(0)->shape.rank() != instruction.shape.rank())
        return one(EmitBitcastChangingWidth(instruction, index));
      KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 0, index));
      return one(BitcastExpr(instruction.operand(0)->shape.element_type(), type, x, prelude_));
    }
    case Opcode::kReducePrecision: {
      KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 0, index));
      return one(ReducePrecisionExpr(type, instruction.attrs.exponent_bits, instruction.attrs.mantissa_bits,
                                     x, prelude_));
    }
    case Opcode::kIsFinite: {
      KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 0, index));
      if (!IsFloating(instruction.operand(0)->shape.element_type()))
        return Refuse(instruction, "is-finite needs a floating-point operand");
      return one("(!(isnan(" + x + ") || isinf(" + x + ")))");
    }
    case Opcode::kReal:
    case Opcode::kImag: {
      KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 0, index));
      if (!IsComplex(instruction.operand(0)->shape.element_type()))
        return one(instruction.opcode == Opcode::kReal ? x : ZeroValue(type));
      return one(x + (instruction.opcode == Opcode::kReal ? ".x" : ".y"));
    }
    case Opcode::kComplex: {
      KILN_ASSIGN_OR_RETURN(std::string re, ElementwiseOperand(instruction, 0, index));
      KILN_ASSIGN_OR_RETURN(std::string im, ElementwiseOperand(instruction, 1, index));
      return one(GlslValueType(type) + "(" + re + ", " + im + ")");
    }
    case Opcode::kSelect: {
      KILN_ASSIGN_OR_RETURN(std::string p, ElementwiseOperand(instruction, 0, index));
      KILN_ASSIGN_OR_RETURN(std::string a, ElementwiseOperand(instruction, 1, index));
      KILN_ASSIGN_OR_RETURN(std::string b, ElementwiseOperand(instruction, 2, index));
      return one("(" + p + " ? " + a + " : " + b + ")");
    }
    case Opcode::kClamp: {
      // min(max(x, low), high), with the ops' own NaN rules, as the interpreter.
      if (IsComplex(type)) return Refuse(instruction, "clamp is not defined for complex numbers");
      KILN_ASSIGN_OR_RETURN(std::string low, ElementwiseOperand(instruction, 0, index));
      KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 1, index));
      KILN_ASSIGN_OR_RETURN(std::string high, ElementwiseOperand(instruction, 2, index));
      StatusOr<std::string> max = BinaryOpExpr(Opcode::kMaximum, type, x, low, prelude_);
      if (!max.ok()) return one(max);
      return one(BinaryOpExpr(Opcode::kMinimum, type, *max, high, prelude_));
    }
    case Opcode::kBroadcast: {
      const Instruction& operand = *instruction.operand(0);
      std::vector<int64_t> mapping = instruction.attrs.dimensions;
      if (mapping.empty() && operand.shape.rank() > 0) {
        for (int64_t i = 0; i < operand.shape.rank(); ++i)
          mapping.push_back(instruction.shape.rank() - operand.shape.rank() + i);
      }
      Index operand_index;
      for (int64_t target : mapping) {
        if (target < 0 || target >= static_cast<int64_t>(index.dims.size()))
          return Refuse(instruction, "bad broadcast dimensions");
        operand_index.dims.push_back(index.dims[static_cast<size_t>(target)]);
      }
      return Value(operand, operand_index);
    }
    case Opcode::kReshape: {
      const Instruction& operand = *instruction.operand(0);
      if (operand.shape.dimensions() == instruction.shape.dimensions()) return Value(operand, index);
      return Value(operand,
                   Delinearize(Linear(index, instruction.shape.dimensions()), operand.shape.dimensions()));
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& permutation = instruction.attrs.dimensions;
      Index operand_index;
      operand_index.dims.resize(index.dims.size());
      if (permutation.size() != index.dims.size()) return Refuse(instruction, "bad permutation");
      for (size_t i = 0; i < permutation.size(); ++i)
        operand_index.dims[static_cast<size_t>(permutation[i])] = index.dims[i];
      return Value(*instruction.operand(0), operand_index);
    }
    case Opcode::kSlice: {
      Index operand_index;
      for (size_t d = 0; d < index.dims.size(); ++d) {
        const int64_t stride =
            instruction.attrs.slice_strides.empty() ? 1 : instruction.attrs.slice_strides[d];
        const int64_t start = instruction.attrs.slice_starts[d];
        std::string expression = index.dims[d];
        if (stride != 1) expression = expression + " * " + std::to_string(stride);
        if (start != 0) expression = expression + " + " + std::to_string(start);
        operand_index.dims.push_back(IntVar(expression));
      }
      return Value(*instruction.operand(0), operand_index);
    }
    case Opcode::kReverse: {
      Index operand_index{index.dims, ""};
      for (int64_t d : instruction.attrs.dimensions) {
        const auto dim = static_cast<size_t>(d);
        operand_index.dims[dim] =
            IntVar(std::to_string(instruction.shape.dimensions(d) - 1) + " - " + index.dims[dim]);
      }
      return Value(*instruction.operand(0), operand_index);
    }
    case Opcode::kConcatenate: return one(EmitConcatenate(instruction, index));
    case Opcode::kPad: return one(EmitPad(instruction, index));
    case Opcode::kDynamicSlice: return one(EmitDynamicSlice(instruction, index));
    case Opcode::kDynamicUpdateSlice: return one(EmitDynamicUpdateSlice(instruction, index));
    case Opcode::kGather: return one(EmitGather(instruction, index));
    case Opcode::kDot: return one(EmitDot(instruction, index));
    case Opcode::kConvolution: return one(EmitConvolution(instruction, index));
    case Opcode::kReduce: return EmitReduce(instruction, index);
    case Opcode::kReduceWindow: return EmitReduceWindow(instruction, index);
    case Opcode::kTuple: {
      Values values;
      for (const Instruction* operand : instruction.operands) {
        if (operand->shape.IsArray() && operand->shape.rank() != static_cast<int64_t>(index.dims.size()))
          return Refuse(instruction, "a tuple of differently shaped arrays inside a kernel");
        KILN_ASSIGN_OR_RETURN(Values leaves, Value(*operand, index));
        values.insert(values.end(), leaves.begin(), leaves.end());
      }
      return values;
    }
    case Opcode::kGetTupleElement: {
      const Instruction& operand = *instruction.operand(0);
      const auto element = static_cast<size_t>(instruction.attrs.tuple_index);
      if (!operand.shape.IsTuple() || element >= operand.shape.tuple_shapes().size())
        return Refuse(instruction, "bad tuple index");
      size_t first = 0;
      for (size_t i = 0; i < element; ++i) first += operand.shape.tuple_shapes()[i].Leaves().size();
      const size_t count = instruction.shape.Leaves().size();
      KILN_ASSIGN_OR_RETURN(Values leaves, Value(operand, index));
      return Values(leaves.begin() + static_cast<std::ptrdiff_t>(first),
                    leaves.begin() + static_cast<std::ptrdiff_t>(first + count));
    }
    case Opcode::kMap: {
      Values arguments;
      for (size_t i = 0; i < instruction.operands.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, i, index));
        arguments.push_back(x);
      }
      KILN_ASSIGN_OR_RETURN(Values result, Call(*instruction.called[0], arguments));
      if (result.size() != 1) return Refuse(instruction, "a map computation must return one scalar");
      return result;
    }
    case Opcode::kRng: return one(EmitRng(instruction, index));
    case Opcode::kRngBitGenerator: return EmitRngBitGenerator(instruction, index);
    case Opcode::kSort:
    case Opcode::kTopK: return Refuse(instruction, "a sort or topk must be its kernel's root");
    case Opcode::kScatter: return EmitScatter(instruction, index);
    case Opcode::kSelectAndScatter: return EmitSelectAndScatter(instruction, index);
    default: break;
  }
  const OpKind kind = OpcodeKind(instruction.opcode);
  if (kind == OpKind::kUnary) {
    const ElementType operand_type = instruction.operand(0)->shape.element_type();
    KILN_ASSIGN_OR_RETURN(std::string x, ElementwiseOperand(instruction, 0, index));
    StatusOr<std::string> value = UnaryOpExpr(instruction.opcode, operand_type, x, prelude_);
    if (!value.ok()) return one(value);
    return one(Normalize(type, *value, prelude_));
  }
  if (kind == OpKind::kBinary) {
    KILN_ASSIGN_OR_RETURN(std::string a, ElementwiseOperand(instruction, 0, index));
    KILN_ASSIGN_OR_RETURN(std::string b, ElementwiseOperand(instruction, 1, index));
    // A constant that may be zero takes the form no driver folds wrongly.
    const int constant = GuardedConstantOperand(instruction, &constant_parameters_);
    StatusOr<std::string> value =
        constant < 0 ? BinaryOpExpr(instruction.opcode, type, a, b, prelude_)
                     : BinaryOpWithConstantExpr(instruction.opcode, type, a, b, constant, prelude_);
    if (!value.ok()) return one(value);
    return one(Normalize(type, *value, prelude_));
  }
  return Refuse(instruction, "not an op a Vulkan kernel computes (it runs outside kernels)");
}

StatusOr<Values> Emitter::Accumulators(const Instruction& instruction, size_t first, size_t count,
                                       const Index& at) {
  Values accumulators;
  for (size_t k = 0; k < count; ++k) {
    const Instruction& value_of = *instruction.operand(first + k);
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(value_of, at));
    const std::string name = Fresh("acc");
    Line(GlslValueType(value_of.shape.element_type()) + " " + name + " = " + value + ";");
    accumulators.push_back(name);
  }
  return accumulators;
}

Status Emitter::Accumulate(const Instruction& instruction, Values& accumulators, size_t first,
                           const Index& at, const std::vector<bool>* constant_arguments) {
  const size_t count = accumulators.size();
  Values arguments = accumulators;
  for (size_t k = 0; k < count; ++k) {
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(*instruction.operand(first + k), at));
    arguments.push_back(value);
  }
  KILN_ASSIGN_OR_RETURN(Values next, Call(*instruction.called[0], arguments, constant_arguments));
  if (next.size() != count) return Refuse(instruction, "its computation returns the wrong number of values");
  for (size_t k = 0; k < count; ++k) Line(accumulators[k] + " = " + next[k] + ";");
  return OkStatus();
}

StatusOr<Values> Emitter::EmitReduce(const Instruction& instruction, const Index& index) {
  const size_t count = instruction.operands.size() / 2;
  if (count == 0 || instruction.operands.size() != 2 * count || instruction.called.size() != 1)
    return Refuse(instruction, "reduce needs N arrays, N initial values and a computation");
  const Shape& input = instruction.operand(0)->shape;
  const std::vector<int64_t>& reduced = instruction.attrs.dimensions;
  std::vector<int64_t> reduced_extents;
  for (int64_t d : reduced) {
    if (d < 0 || d >= input.rank()) return Refuse(instruction, "bad reduce dimensions");
    reduced_extents.push_back(input.dimensions(d));
  }
  if (IsNarrowFloatSum(instruction))
    return EmitNarrowFloatSum(instruction, index, reduced_extents, &instruction == cooperative_reduce_);
  if (&instruction == cooperative_reduce_) return EmitCooperativeReduce(instruction, index, reduced_extents);
  // Accumulators start at the initial values and live across the loop.
  KILN_ASSIGN_OR_RETURN(Values accumulators, Accumulators(instruction, count, count, Index{}));
  const int64_t total = Product(reduced_extents);
  if (total == 0) return accumulators;
  // Constant initial values meet the first element before the loop
  // (ConstantInitialValues), so the loop's steps stay as they were.
  const std::vector<bool> constant = ConstantInitialValues(instruction, count);
  int64_t begin = 0;
  if (!constant.empty()) {
    KILN_ASSIGN_OR_RETURN(Index first_index, ReducedOperandIndex(instruction, index, "0", reduced_extents));
    KILN_RETURN_IF_ERROR(Accumulate(instruction, accumulators, 0, first_index, &constant));
    begin = 1;
  }
  if (total == begin) return accumulators;
  const std::string r = Fresh("r");
  OpenLoop(LoopHeader(r, std::to_string(begin), std::to_string(total), "1"), total - begin);
  KILN_ASSIGN_OR_RETURN(Index operand_index, ReducedOperandIndex(instruction, index, r, reduced_extents));
  KILN_RETURN_IF_ERROR(Accumulate(instruction, accumulators, 0, operand_index));
  Close();
  return accumulators;
}

std::vector<bool> Emitter::ConstantInitialValues(const Instruction& reduce, size_t count) {
  std::vector<bool> constant(2 * count, false);
  bool any = false;
  for (size_t k = 0; k < count; ++k) {
    constant[k] = IsConstantThatMayHoldZero(*reduce.operand(count + k));
    any = any || constant[k];
  }
  return any ? constant : std::vector<bool>();
}

Status Emitter::EndSumFromPositiveZero(ElementType type, const std::string& sum) {
  if (!IsFloating(type) && !IsComplex(type)) return OkStatus();
  KILN_ASSIGN_OR_RETURN(std::string value,
                        BinaryOpWithConstantExpr(Opcode::kAdd, type, sum, ZeroValue(type), 1, prelude_));
  Line(sum + " = " + value + ";");
  return OkStatus();
}

StatusOr<Index> Emitter::ReducedOperandIndex(const Instruction& reduce, const Index& index,
                                             const std::string& r,
                                             const std::vector<int64_t>& reduced_extents) {
  const Shape& input = reduce.operand(0)->shape;
  const std::vector<int64_t>& reduced = reduce.attrs.dimensions;
  const Index within = Delinearize(r, reduced_extents);
  Index at;
  size_t kept = 0;
  for (int64_t d = 0; d < input.rank(); ++d) {
    const auto position = std::find(reduced.begin(), reduced.end(), d);
    if (position != reduced.end()) {
      at.dims.push_back(within.dims[static_cast<size_t>(position - reduced.begin())]);
    } else {
      if (kept >= index.dims.size()) return Refuse(reduce, "reduce output rank does not match");
      at.dims.push_back(index.dims[kept++]);
    }
  }
  if (reduced.size() == static_cast<size_t>(input.rank())) at.linear = r;
  return at;
}

int64_t Emitter::CooperativeLanes(const Instruction& root) const {
  const int64_t lanes = features_.subgroup_size;
  if (root.opcode != Opcode::kReduce || !features_.subgroup_shuffle || lanes < 2 ||
      lanes > kGlslWorkgroupSize || (lanes & (lanes - 1)) != 0 || root.operands.empty() ||
      root.called.size() != 1)
    return 0;
  // Only reductions over trailing dimensions, whose elements are adjacent
  // in memory, so the lanes' reads are too; a column reduction's one
  // invocation per column already reads adjacent columns together.
  const Shape& input = root.operand(0)->shape;
  std::vector<int64_t> reduced = root.attrs.dimensions;
  std::sort(reduced.begin(), reduced.end());
  int64_t total = 1;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i] != input.rank() - static_cast<int64_t>(reduced.size() - i)) return 0;
    total *= input.dimensions(reduced[i]);
  }
  // Worth it only when each lane has a few elements to fold.
  if (total < 4 * lanes) return 0;
  // Shuffles take 32-bit values and bools (wider ones need more extensions).
  for (const Instruction* operand : root.operands) {
    const std::string type = GlslValueType(operand->shape.element_type());
    if (type != "float" && type != "int" && type != "uint" && type != "bool") return 0;
  }
  return lanes;
}

StatusOr<Values> Emitter::EmitCooperativeReduce(const Instruction& instruction, const Index& index,
                                                const std::vector<int64_t>& reduced_extents) {
  const size_t count = instruction.operands.size() / 2;
  const int64_t total = Product(reduced_extents);
  auto operand_index = [&](const std::string& r) {
    return ReducedOperandIndex(instruction, index, r, reduced_extents);
  };
  // Every lane has an element (total >= lanes): it starts from it.
  const std::string first = Fresh("r");
  Line("int " + first + " = int(k_lane);");
  KILN_ASSIGN_OR_RETURN(Index first_index, operand_index(first));
  Values accumulators;
  for (size_t k = 0; k < count; ++k) {
    const Instruction& operand = *instruction.operand(k);
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(operand, first_index));
    const std::string name = Fresh("acc");
    Line(GlslValueType(operand.shape.element_type()) + " " + name + " = " + value + ";");
    accumulators.push_back(name);
  }
  const std::string lanes = std::to_string(lanes_);
  const std::string r = Fresh("r");
  OpenLoop(LoopHeader(r, first + " + " + lanes, std::to_string(total), lanes), CeilDiv(total, lanes_));
  KILN_ASSIGN_OR_RETURN(Index at, operand_index(r));
  KILN_RETURN_IF_ERROR(Accumulate(instruction, accumulators, 0, at));
  Close();
  for (int64_t offset = lanes_ / 2; offset >= 1; offset /= 2) {
    Values arguments = accumulators;
    for (size_t k = 0; k < count; ++k)
      arguments.push_back(
          Var(instruction.operand(k)->shape.element_type(),
              "subgroupShuffleXor(" + accumulators[k] + ", " + std::to_string(offset) + "u)"));
    KILN_ASSIGN_OR_RETURN(Values next, Call(*instruction.called[0], arguments));
    if (next.size() != count)
      return Refuse(instruction, "its computation returns the wrong number of values");
    for (size_t k = 0; k < count; ++k) Line(accumulators[k] + " = " + next[k] + ";");
  }
  // The initial values, once, first (as the serial fold has them), with
  // the helpers where they are constants (ConstantInitialValues).
  KILN_ASSIGN_OR_RETURN(Values arguments, Accumulators(instruction, count, count, Index{}));
  arguments.insert(arguments.end(), accumulators.begin(), accumulators.end());
  const std::vector<bool> constant = ConstantInitialValues(instruction, count);
  KILN_ASSIGN_OR_RETURN(Values result,
                        Call(*instruction.called[0], arguments, constant.empty() ? nullptr : &constant));
  if (result.size() != count)
    return Refuse(instruction, "its computation returns the wrong number of values");
  return result;
}

StatusOr<Values> Emitter::EmitNarrowFloatSum(const Instruction& reduce, const Index& index,
                                             const std::vector<int64_t>& reduced_extents, bool cooperative) {
  const ElementType type = reduce.shape.element_type();
  const Instruction& initial = *reduce.operand(1);
  KILN_ASSIGN_OR_RETURN(std::string initial_value, Scalar(initial, Index{}));
  const int64_t total = Product(reduced_extents);
  if (total == 0) return Values{initial_value};
  auto element = [&](const std::string& r) -> StatusOr<std::string> {
    KILN_ASSIGN_OR_RETURN(Index at, ReducedOperandIndex(reduce, index, r, reduced_extents));
    return Scalar(*reduce.operand(0), at);
  };
  // Loaded f16/bf16 values are exact f32 values; plain f32 adds from here.
  const std::string first = Fresh("r");
  Line("int " + first + " = " + (cooperative ? "int(k_lane)" : "0") + ";");
  KILN_ASSIGN_OR_RETURN(std::string first_value, element(first));
  const std::string sum = Fresh("acc");
  Line("float " + sum + " = " + first_value + ";");
  // Every lane has an element (CooperativeLanes: total >= 4 lanes).
  const int64_t step = cooperative ? lanes_ : 1;
  if (total > step) {
    const std::string r = Fresh("r");
    OpenLoop(LoopHeader(r, first + " + " + std::to_string(step), std::to_string(total), std::to_string(step)),
             CeilDiv(total, step) - 1);
    KILN_ASSIGN_OR_RETURN(std::string value, element(r));
    Line(sum + " += " + value + ";");
    Close();
  }
  if (cooperative) {
    for (int64_t offset = lanes_ / 2; offset >= 1; offset /= 2)
      Line(sum + " += subgroupShuffleXor(" + sum + ", " + std::to_string(offset) + "u);");
  }
  // A constant initial value meets the sum through the constant-operand
  // helper (ConstantInitialValues: +0 + -0 must stay +0 on lavapipe).
  KILN_ASSIGN_OR_RETURN(
      std::string total_sum,
      IsConstantThatMayHoldZero(initial)
          ? BinaryOpWithConstantExpr(Opcode::kAdd, ElementType::kF32, initial_value, sum, 0, prelude_)
          : BinaryOpExpr(Opcode::kAdd, ElementType::kF32, initial_value, sum, prelude_));
  return Values{Var(type, Normalize(type, total_sum, prelude_))};
}

StatusOr<Values> Emitter::EmitReduceWindow(const Instruction& instruction, const Index& index) {
  const size_t count = instruction.operands.size() / 2;
  if (count == 0 || instruction.operands.size() != 2 * count || instruction.called.size() != 1)
    return Refuse(instruction, "reduce-window needs N arrays, N initial values and a computation");
  const Shape& input = instruction.operand(0)->shape;
  const Window& window = instruction.attrs.window;
  if (static_cast<int64_t>(window.dimensions.size()) != input.rank() ||
      index.dims.size() != window.dimensions.size())
    return Refuse(instruction, "window rank does not match the operand");
  KILN_ASSIGN_OR_RETURN(Values accumulators, Accumulators(instruction, count, count, Index{}));
  std::vector<int64_t> sizes;
  for (const WindowDimension& w : window.dimensions) sizes.push_back(w.size);
  const int64_t total = Product(sizes);
  if (total == 0) return accumulators;
  const std::string r = Fresh("w");
  OpenLoop(LoopHeader(r, "0", std::to_string(total), "1"), total);
  const Index within = Delinearize(r, sizes);
  Index operand_index;
  std::string inside;
  for (size_t d = 0; d < window.dimensions.size(); ++d) {
    const WindowDimension& w = window.dimensions[d];
    // Where this window element falls in the (dilated, padded) input; padding
    // and holes between dilated elements contribute nothing.
    const std::string position =
        IntVar(index.dims[d] + " * " + std::to_string(w.stride) + " + " + within.dims[d] + " * " +
               std::to_string(w.window_dilation) + " - " + std::to_string(w.padding_low));
    const std::string dim = std::to_string(input.dimensions(static_cast<int64_t>(d)));
    std::string condition = position + " >= 0";
    if (w.base_dilation != 1) {
      const std::string b = std::to_string(w.base_dilation);
      condition += " && " + position + " % " + b + " == 0 && " + position + " / " + b + " < " + dim;
      operand_index.dims.push_back("(" + position + " / " + b + ")");
    } else {
      condition += " && " + position + " < " + dim;
      operand_index.dims.push_back(position);
    }
    inside += (inside.empty() ? "" : " && ") + ("(" + condition + ")");
  }
  Open("if (" + inside + ")");
  for (std::string& dim : operand_index.dims) dim = IntVar(dim);
  KILN_RETURN_IF_ERROR(Accumulate(instruction, accumulators, 0, operand_index));
  Close();
  Close();
  return accumulators;
}

StatusOr<std::string> Emitter::EmitDot(const Instruction& instruction, const Index& index) {
  const Instruction& lhs = *instruction.operand(0);
  const Instruction& rhs = *instruction.operand(1);
  const DotDimensionNumbers& dn = instruction.attrs.dot;
  const ElementType out = instruction.shape.element_type();
  const ElementType acc = AccumulatorType(out);
  if (dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size() ||
      dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size())
    return Refuse(instruction, "bad dot dimension numbers");
  std::vector<int64_t> extents;
  for (int64_t d : dn.lhs_contracting_dimensions) extents.push_back(lhs.shape.dimensions(d));
  const std::string sum = Fresh("acc");
  Line(GlslValueType(acc) + " " + sum + " = " + ZeroValue(acc) + ";");
  const int64_t total = Product(extents);
  if (total > 0) {
    const std::string r = Fresh("c");
    OpenLoop(LoopHeader(r, "0", std::to_string(total), "1"), total);
    const Index within = Delinearize(r, extents);
    const size_t batch = dn.lhs_batch_dimensions.size();
    size_t next_free = batch;
    auto operand_index = [&](const Shape& shape, const std::vector<int64_t>& batch_dims,
                             const std::vector<int64_t>& contracting) {
      Index result;
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (auto it = std::find(batch_dims.begin(), batch_dims.end(), d); it != batch_dims.end()) {
          result.dims.push_back(index.dims[static_cast<size_t>(it - batch_dims.begin())]);
        } else if (auto jt = std::find(contracting.begin(), contracting.end(), d); jt != contracting.end()) {
          result.dims.push_back(within.dims[static_cast<size_t>(jt - contracting.begin())]);
        } else {
          result.dims.push_back(next_free < index.dims.size() ? index.dims[next_free] : "0");
          ++next_free;
        }
      }
      return result;
    };
    const Index lhs_index = operand_index(lhs.shape, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
    const Index rhs_index = operand_index(rhs.shape, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
    if (next_free != index.dims.size()) return Refuse(instruction, "dot output rank does not match");
    KILN_ASSIGN_OR_RETURN(std::string a, Scalar(lhs, lhs_index));
    KILN_ASSIGN_OR_RETURN(std::string b, Scalar(rhs, rhs_index));
    KILN_ASSIGN_OR_RETURN(std::string wide_a, ConvertExpr(lhs.shape.element_type(), acc, a, prelude_));
    KILN_ASSIGN_OR_RETURN(std::string wide_b, ConvertExpr(rhs.shape.element_type(), acc, b, prelude_));
    KILN_ASSIGN_OR_RETURN(std::string product,
                          BinaryOpExpr(Opcode::kMultiply, acc, wide_a, wide_b, prelude_));
    Line(sum + " = " + sum + " + " + product + ";");
    Close();
    KILN_RETURN_IF_ERROR(EndSumFromPositiveZero(acc, sum));
  }
  return ConvertExpr(acc, out, sum, prelude_);
}

// A direct loop per output element, in the interpreter's order: kernel taps
// (row-major over the kernel's spatial dims), then input features of the
// group. A float tap that lands on padding or between dilated inputs adds
// zero times each weight (README, numerics: "a convolution's padding"): NaN
// for an infinite or NaN weight; an integer one adds nothing.
StatusOr<std::string> Emitter::EmitConvolution(const Instruction& instruction, const Index& index) {
  const Instruction& lhs = *instruction.operand(0);
  const Instruction& rhs = *instruction.operand(1);
  const ConvolutionDimensionNumbers& dn = instruction.attrs.conv;
  const Window& window = instruction.attrs.window;
  const ElementType out = instruction.shape.element_type();
  const ElementType acc = AccumulatorType(out);
  const size_t spatial = dn.input_spatial_dimensions.size();
  const int64_t rank = static_cast<int64_t>(spatial) + 2;
  if (lhs.shape.rank() != rank || rhs.shape.rank() != rank || instruction.shape.rank() != rank ||
      dn.kernel_spatial_dimensions.size() != spatial || dn.output_spatial_dimensions.size() != spatial ||
      window.dimensions.size() != spatial || index.dims.size() != static_cast<size_t>(rank))
    return Refuse(instruction, "convolution ranks do not match its dimension numbers and window");
  const int64_t feature_groups = instruction.attrs.feature_group_count;
  const int64_t batch_groups = instruction.attrs.batch_group_count;
  const int64_t cig = rhs.shape.dimensions(dn.kernel_input_feature_dimension);
  const int64_t out_features = rhs.shape.dimensions(dn.kernel_output_feature_dimension);
  const int64_t out_batch = instruction.shape.dimensions(dn.output_batch_dimension);
  const int64_t partitions = feature_groups * batch_groups;
  if (feature_groups < 1 || batch_groups < 1 || out_features % partitions != 0)
    return Refuse(instruction, "bad feature or batch group count");
  for (const WindowDimension& w : window.dimensions) {
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return Refuse(instruction, "convolution window needs positive strides and dilations");
  }
  const int64_t chunk = out_features / partitions;
  const std::string n = index.dims[static_cast<size_t>(dn.output_batch_dimension)];
  const std::string f = index.dims[static_cast<size_t>(dn.output_feature_dimension)];
  const std::string p = IntVar(f + " / " + std::to_string(chunk));
  const std::string group = feature_groups > 1 ? p : "0";
  const std::string batch = batch_groups > 1 ? IntVar(p + " * " + std::to_string(out_batch) + " + " + n) : n;
  std::vector<int64_t> kernel_spatial;
  for (int64_t d : dn.kernel_spatial_dimensions) kernel_spatial.push_back(rhs.shape.dimensions(d));
  const std::string sum = Fresh("acc");
  Line(GlslValueType(acc) + " " + sum + " = " + ZeroValue(acc) + ";");
  const int64_t taps = Product(kernel_spatial);
  if (taps == 0 || cig == 0) return ConvertExpr(acc, out, sum, prelude_);
  const std::string t = Fresh("t");
  OpenLoop(LoopHeader(t, "0", std::to_string(taps), "1"), taps);
  const Index tap = Delinearize(t, kernel_spatial);
  std::string inside;
  Index lhs_index, rhs_index;
  lhs_index.dims.resize(static_cast<size_t>(rank));
  rhs_index.dims.resize(static_cast<size_t>(rank));
  for (size_t d = 0; d < spatial; ++d) {
    const WindowDimension& w = window.dimensions[d];
    const std::string o = index.dims[static_cast<size_t>(dn.output_spatial_dimensions[d])];
    const std::string position =
        IntVar(o + " * " + std::to_string(w.stride) + " + " + tap.dims[d] + " * " +
               std::to_string(w.window_dilation) + " - " + std::to_string(w.padding_low));
    const std::string dim = std::to_string(lhs.shape.dimensions(dn.input_spatial_dimensions[d]));
    std::string condition = position + " >= 0";
    std::string at = position;
    if (w.base_dilation != 1) {
      const std::string b = std::to_string(w.base_dilation);
      condition += " && " + position + " % " + b + " == 0 && " + position + " / " + b + " < " + dim;
      at = "(" + position + " / " + b + ")";
    } else {
      condition += " && " + position + " < " + dim;
    }
    inside += (inside.empty() ? "" : " && ") + ("(" + condition + ")");
    lhs_index.dims[static_cast<size_t>(dn.input_spatial_dimensions[d])] = at;
    rhs_index.dims[static_cast<size_t>(dn.kernel_spatial_dimensions[d])] =
        w.window_reversal ? std::to_string(kernel_spatial[d] - 1) + " - " + tap.dims[d] : tap.dims[d];
  }
  // The kernel's spatial index, shared by both branches below.
  for (std::string& dim : rhs_index.dims) {
    if (!dim.empty()) dim = IntVar(dim);
  }
  Open("if (" + (inside.empty() ? std::string("true") : inside) + ")");
  for (std::string& dim : lhs_index.dims) {
    if (!dim.empty()) dim = IntVar(dim);
  }
  const std::string c = Fresh("c");
  OpenLoop(LoopHeader(c, "0", std::to_string(cig), "1"), cig);
  lhs_index.dims[static_cast<size_t>(dn.input_batch_dimension)] = batch;
  lhs_index.dims[static_cast<size_t>(dn.input_feature_dimension)] =
      group == "0" ? c : IntVar(group + " * " + std::to_string(cig) + " + " + c);
  rhs_index.dims[static_cast<size_t>(dn.kernel_input_feature_dimension)] = c;
  rhs_index.dims[static_cast<size_t>(dn.kernel_output_feature_dimension)] = f;
  KILN_ASSIGN_OR_RETURN(std::string a, Scalar(lhs, lhs_index));
  KILN_ASSIGN_OR_RETURN(std::string b, Scalar(rhs, rhs_index));
  KILN_ASSIGN_OR_RETURN(std::string wide_a, ConvertExpr(lhs.shape.element_type(), acc, a, prelude_));
  KILN_ASSIGN_OR_RETURN(std::string wide_b, ConvertExpr(rhs.shape.element_type(), acc, b, prelude_));
  KILN_ASSIGN_OR_RETURN(std::string product, BinaryOpExpr(Opcode::kMultiply, acc, wide_a, wide_b, prelude_));
  Line(sum + " = " + sum + " + " + product + ";");
  Close();
  Close();
  if (IsFloating(acc)) {
    // The padded tap's zero times each weight, in the same order: NaN for
    // an infinite or NaN weight, else a zero, which changes no sum (sums
    // start at +0 and are never -0). Written as a NaN test, not as a
    // product: lavapipe folds a product with a literal zero to zero,
    // `precise` or not. Its loop is not counted towards the loop limit
    // again: an invocation runs one of the two branches.
    Open("else");
    const std::string zc = Fresh("c");
    Open(LoopHeader(zc, "0", std::to_string(cig), "1"));
    rhs_index.dims[static_cast<size_t>(dn.kernel_input_feature_dimension)] = zc;
    KILN_ASSIGN_OR_RETURN(std::string padded_b, Scalar(rhs, rhs_index));
    KILN_ASSIGN_OR_RETURN(std::string padded_wide_b,
                          ConvertExpr(rhs.shape.element_type(), acc, padded_b, prelude_));
    const std::string weight = Var(acc, padded_wide_b);
    Open("if (isnan(" + weight + ") || isinf(" + weight + "))");
    Line(sum + " = " + sum + " + " + FloatLiteral(acc, std::nan("")) + ";");
    Close();
    Close();
    Close();
  }
  Close();
  KILN_RETURN_IF_ERROR(EndSumFromPositiveZero(acc, sum));
  return ConvertExpr(acc, out, sum, prelude_);
}

StatusOr<ScatterGeometry> ScatterGeometryOf(const Instruction& instruction) {
  ScatterGeometry g;
  g.count = (instruction.operands.size() - 1) / 2;
  if (g.count == 0 || instruction.operands.size() != 2 * g.count + 1 || instruction.called.size() != 1)
    return Refuse(instruction, "scatter needs N operands, indices, N updates and a computation");
  const Instruction& indices = *instruction.operand(g.count);
  const ScatterDimensionNumbers& dn = instruction.attrs.scatter;
  g.operand_dims = instruction.operand(0)->shape.dimensions();
  g.update_dims = instruction.operand(g.count + 1)->shape.dimensions();
  const auto operand_rank = static_cast<int64_t>(g.operand_dims.size());
  const auto update_rank = static_cast<int64_t>(g.update_dims.size());
  if (!IsIntegral(indices.shape.element_type()))
    return Refuse(instruction, "scatter indices must be integers");
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices.shape.rank())
    return Refuse(instruction, "bad scatter index_vector_dim");
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d))
      g.window_operand_dims.push_back(d);
  }
  if (g.window_operand_dims.size() != dn.update_window_dims.size())
    return Refuse(instruction, "scatter update_window_dims do not match the operand");
  g.window_size.assign(g.operand_dims.size(), 1);
  for (size_t w = 0; w < g.window_operand_dims.size(); ++w) {
    const int64_t u = dn.update_window_dims[w];
    if (u < 0 || u >= update_rank) return Refuse(instruction, "bad update_window_dims");
    g.window_size[static_cast<size_t>(g.window_operand_dims[w])] = g.update_dims[static_cast<size_t>(u)];
  }
  for (int64_t d = 0; d < update_rank; ++d) {
    if (!Contains(dn.update_window_dims, d)) {
      g.batch_dims.push_back(d);
      g.batch_extents.push_back(g.update_dims[static_cast<size_t>(d)]);
    }
  }
  g.has_vector = dn.index_vector_dim < indices.shape.rank();
  if (static_cast<int64_t>(g.batch_dims.size()) != indices.shape.rank() - (g.has_vector ? 1 : 0))
    return Refuse(instruction, "scatter batch dimensions do not match the indices");
  g.window_last = true;
  for (size_t w = 0; w < dn.update_window_dims.size(); ++w) {
    if (dn.update_window_dims[w] != update_rank - static_cast<int64_t>(dn.update_window_dims.size() - w))
      g.window_last = false;
  }
  return g;
}

StatusOr<Emitter::ScatterWindow> Emitter::ScatterWindowAt(const Instruction& instruction,
                                                          const ScatterGeometry& g,
                                                          const std::vector<std::string>& batch) {
  const Instruction& indices = *instruction.operand(g.count);
  const ElementType index_type = indices.shape.element_type();
  const ScatterDimensionNumbers& dn = instruction.attrs.scatter;
  const auto operand_rank = static_cast<int64_t>(g.operand_dims.size());
  ScatterWindow window;
  window.starts.assign(g.operand_dims.size(), "0");
  for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
    const int64_t d = dn.scatter_dims_to_operand_dims[k];
    if (d < 0 || d >= operand_rank) return Refuse(instruction, "bad scatter_dims_to_operand_dims");
    Index vector_at;
    size_t next = 0;
    for (int64_t i = 0; i < indices.shape.rank(); ++i)
      vector_at.dims.push_back(i == dn.index_vector_dim ? std::to_string(k) : batch[next++]);
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(indices, vector_at));
    const int64_t high = g.operand_dims[static_cast<size_t>(d)] - g.window_size[static_cast<size_t>(d)];
    window.fits.push_back(high < 0 ? "false"
                                   : value + " >= " + ZeroValue(index_type) + " && " + value +
                                         " <= " + IntLiteral(index_type, high));
    window.starts[static_cast<size_t>(d)] = IntVar("int(" + value + ")");
  }
  for (size_t i = 0; i < dn.input_batching_dims.size() && i < dn.scatter_indices_batching_dims.size(); ++i) {
    const int64_t dim = dn.scatter_indices_batching_dims[i];
    const int64_t position = g.has_vector && dim > dn.index_vector_dim ? dim - 1 : dim;
    if (position < 0 || position >= static_cast<int64_t>(batch.size()))
      return Refuse(instruction, "bad scatter batching dims");
    window.starts[static_cast<size_t>(dn.input_batching_dims[i])] = batch[static_cast<size_t>(position)];
  }
  return window;
}

// The conditions joined by &&, each in parentheses ("true" for none).
std::string JoinedConditions(const std::vector<std::string>& conditions) {
  std::string text;
  for (const std::string& condition : conditions)
    text += (text.empty() ? "" : " && ") + ("(" + condition + ")");
  return text.empty() ? "true" : text;
}

// Each output element is its own: it starts as the operand's element and
// applies, in the interpreter's order (row-major over the updates), every
// update that lands on it; updates whose window does not fit are skipped.
// When the update's window dimensions are its last ones, update order is
// scatter-index order and one index vector gives at most one update here,
// so the loop runs over index vectors; otherwise over every update element.
// (A root scatter whose combiner is atomic-able runs one invocation per
// update instead: EmitAtomicScatter.)
StatusOr<Values> Emitter::EmitScatter(const Instruction& instruction, const Index& index) {
  KILN_ASSIGN_OR_RETURN(const ScatterGeometry g, ScatterGeometryOf(instruction));
  if (index.dims.size() != g.operand_dims.size()) return Refuse(instruction, "bad scatter index_vector_dim");
  const ScatterDimensionNumbers& dn = instruction.attrs.scatter;
  const size_t count = g.count;
  KILN_ASSIGN_OR_RETURN(Values accumulators, Accumulators(instruction, 0, count, index));
  if (instruction.operand(count + 1)->shape.element_count() == 0) return accumulators;
  // The loop: over index vectors, or over all update elements.
  const std::string u = Fresh("u");
  const std::vector<int64_t>& loop_extents = g.window_last ? g.batch_extents : g.update_dims;
  OpenLoop(LoopHeader(u, "0", std::to_string(Product(loop_extents)), "1"), Product(loop_extents));
  const Index at = Delinearize(u, loop_extents);
  std::vector<std::string> batch;  // the batch index, one per batch dim
  for (size_t b = 0; b < g.batch_dims.size(); ++b)
    batch.push_back(g.window_last ? at.dims[b] : at.dims[static_cast<size_t>(g.batch_dims[b])]);
  KILN_ASSIGN_OR_RETURN(ScatterWindow window, ScatterWindowAt(instruction, g, batch));
  std::vector<std::string>& fits = window.fits;
  const std::vector<std::string>& starts = window.starts;
  // Where the update lands must be this element.
  Index update_index;
  update_index.dims.resize(g.update_dims.size());
  for (size_t b = 0; b < g.batch_dims.size(); ++b)
    update_index.dims[static_cast<size_t>(g.batch_dims[b])] = batch[b];
  for (size_t dim = 0; dim < g.operand_dims.size(); ++dim) {
    const auto w =
        std::find(g.window_operand_dims.begin(), g.window_operand_dims.end(), static_cast<int64_t>(dim));
    if (w == g.window_operand_dims.end()) {
      fits.push_back(index.dims[dim] + " == " + starts[dim]);
      continue;
    }
    const auto update_dim =
        static_cast<size_t>(dn.update_window_dims[static_cast<size_t>(w - g.window_operand_dims.begin())]);
    if (g.window_last) {
      const std::string offset = IntVar(index.dims[dim] + " - " + starts[dim]);
      fits.push_back(offset + " >= 0 && " + offset + " < " + std::to_string(g.window_size[dim]));
      update_index.dims[update_dim] = offset;
    } else {
      fits.push_back(index.dims[dim] + " == " + starts[dim] + " + " + at.dims[update_dim]);
      update_index.dims[update_dim] = at.dims[update_dim];
    }
  }
  Open("if (" + JoinedConditions(fits) + ")");
  KILN_RETURN_IF_ERROR(Accumulate(instruction, accumulators, count + 1, update_index));
  Close();
  Close();
  return accumulators;
}

bool Emitter::DrawsRandomNumbers(const Instruction& instruction) const {
  std::vector<const Instruction*> pending{&instruction};
  std::vector<const Instruction*> seen;
  while (!pending.empty()) {
    const Instruction* next = pending.back();
    pending.pop_back();
    if (buffers_.count(next) > 0 || std::find(seen.begin(), seen.end(), next) != seen.end()) continue;
    seen.push_back(next);
    if (next->opcode == Opcode::kRng || next->opcode == Opcode::kRngBitGenerator) return true;
    for (const Instruction* operand : next->operands) pending.push_back(operand);
  }
  return false;
}

StatusOr<std::string> Emitter::EmitScatterCombineFunction(const Instruction& scatter,
                                                          const AtomicScatterPlan& plan) {
  const std::string type = GlslValueType(plan.type);
  return EmitFunction(
      type + " k_scatter_combine(" + type + " k_a, " + type + " k_b)",
      [&]() -> StatusOr<std::string> {
        KILN_ASSIGN_OR_RETURN(Values combined, Call(*scatter.called[0], Values{"k_a", "k_b"}));
        if (combined.size() != 1) return Refuse(scatter, "its computation must return one value");
        return combined[0];
      },
      &combine_loops_);
}

StatusOr<GlslKernel> Emitter::EmitAtomicScatter(const Instruction& scatter, const AtomicScatterPlan& plan,
                                                GlslKernel& result, const std::string& buffers) {
  KILN_ASSIGN_OR_RETURN(const ScatterGeometry g, ScatterGeometryOf(scatter));
  const ScatterDimensionNumbers& dn = scatter.attrs.scatter;
  const std::string out = BufferName(result.input_count);
  const int64_t outputs = scatter.shape.element_count();
  const int64_t updates = Product(g.update_dims);
  heaviest_ = &scatter;
  if (plan.needs_float_atomic_extension) prelude_.NeedExtension("GL_EXT_shader_atomic_float");
  std::string combine_function;
  if (plan.kind == ScatterAtomicKind::kCompareSwap) {
    KILN_ASSIGN_OR_RETURN(combine_function, EmitScatterCombineFunction(scatter, plan));
  }
  // Mode 0: the operand, element for element.
  indent_ = 3;
  memo_.emplace_back();
  {
    const Index index = Delinearize("k_i", g.operand_dims);
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(*scatter.operand(0), index));
    Line(out + ".d[k_i] = " + AtomicScatterStored(plan, value) + ";");
  }
  memo_.pop_back();
  const std::string copy_body = std::move(body_);
  body_.clear();
  const int64_t copy_loops = loop_iterations_;
  loop_iterations_ = 0;
  // Mode 1: update element k_i lands at its window's start plus its place
  // in the window, when the whole window fits (XLA skips the others).
  memo_.emplace_back();
  const Index at = Delinearize("k_i", g.update_dims);
  std::vector<std::string> batch;
  for (int64_t d : g.batch_dims) batch.push_back(at.dims[static_cast<size_t>(d)]);
  KILN_ASSIGN_OR_RETURN(const ScatterWindow window, ScatterWindowAt(scatter, g, batch));
  Open("if (" + JoinedConditions(window.fits) + ")");
  const std::vector<int64_t> strides = RowMajorStrides(g.operand_dims);
  std::string target;
  for (size_t dim = 0; dim < g.operand_dims.size(); ++dim) {
    // A dimension of one element is 0 wherever the window fits.
    if (g.operand_dims[dim] == 1) continue;
    std::string coordinate = window.starts[dim];
    const auto w =
        std::find(g.window_operand_dims.begin(), g.window_operand_dims.end(), static_cast<int64_t>(dim));
    if (w != g.window_operand_dims.end()) {
      const auto update_dim =
          static_cast<size_t>(dn.update_window_dims[static_cast<size_t>(w - g.window_operand_dims.begin())]);
      coordinate = "(" + coordinate + " + " + at.dims[update_dim] + ")";
    }
    const std::string term =
        strides[dim] == 1 ? coordinate : coordinate + " * " + std::to_string(strides[dim]);
    target += (target.empty() ? "" : " + ") + term;
  }
  const std::string t = IntVar(target.empty() ? "0" : target);
  KILN_ASSIGN_OR_RETURN(std::string value, Scalar(*scatter.operand(g.count + 1), at));
  body_ += AtomicScatterCombine(plan, out + ".d[" + t + "]", value, "k_scatter_combine",
                                std::string(static_cast<size_t>(2 * indent_), ' '));
  Close();
  memo_.pop_back();
  const std::string update_body = std::move(body_);
  body_.clear();
  // A compare-and-swap runs the combiner once more for each other
  // invocation that changed the element meanwhile: counted once here.
  const int64_t update_loops = SaturatingAdd(loop_iterations_, combine_loops_);
  result.invocations = std::max(outputs, updates);
  result.workgroup_size = kGlslWorkgroupSize;
  result.push_constant_bytes = kAtomicScatterPushConstantBytes;
  result.launches = AtomicScatterLaunches(outputs, updates, kGlslWorkgroupSize);
  result.max_loop_iterations =
      std::max(SaturatingMultiply(CeilDiv(outputs, kGlslMaxGridInvocations), SaturatingAdd(1, copy_loops)),
               SaturatingMultiply(CeilDiv(updates, kGlslMaxGridInvocations), SaturatingAdd(1, update_loops)));
  result.source = "// Kiln kernel " + result.name + "\n#version 450\n" + prelude_.Extensions() +
                  "layout(local_size_x_id = 0) in;\n" + buffers + AtomicScatterGlobals() + globals_ +
                  prelude_.Helpers() + combine_function +
                  AtomicScatterMain(outputs, updates, copy_body, update_body);
  result.loop_op =
      std::string(OpcodeName(scatter.opcode)) + " " + scatter.shape.ToString() + " (" + scatter.name + ")";
  return result;
}

// Each output (operand) element starts at the initial value and scatters
// into itself, in source order, every source element whose window selects
// it; only sources whose window covers the element are visited.
StatusOr<Values> Emitter::EmitSelectAndScatter(const Instruction& instruction, const Index& index) {
  if (instruction.operands.size() != 3 || instruction.called.size() != 2)
    return Refuse(instruction, "select-and-scatter needs operand, source, init and two computations");
  const Instruction& operand = *instruction.operand(0);
  const Instruction& source = *instruction.operand(1);
  const Window& window = instruction.attrs.window;
  const size_t rank = static_cast<size_t>(operand.shape.rank());
  const ElementType type = operand.shape.element_type();
  if (window.dimensions.size() != rank || source.shape.rank() != operand.shape.rank() ||
      index.dims.size() != rank)
    return Refuse(instruction, "window rank does not match the operand");
  for (const WindowDimension& w : window.dimensions) {
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1 || w.size < 1)
      return Refuse(instruction, "select-and-scatter needs positive window sizes, strides and dilations");
  }
  KILN_ASSIGN_OR_RETURN(std::string init, Scalar(*instruction.operand(2), Index{}));
  const std::string acc = Fresh("acc");
  Line(GlslValueType(type) + " " + acc + " = " + init + ";");
  if (source.shape.element_count() == 0) return Values{acc};
  const std::string self = Linear(index, operand.shape.dimensions());
  // The box of sources whose window covers this element, one loop per dim.
  std::vector<std::string> s(rank);
  for (size_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[d];
    const std::string q = IntVar(index.dims[d] + " * " + std::to_string(w.base_dilation) + " + " +
                                 std::to_string(w.padding_low));
    const std::string reach = std::to_string((w.size - 1) * w.window_dilation);
    const std::string stride = std::to_string(w.stride);
    const std::string lo = IntVar("max(" + q + " - " + reach + ", 0) + " + stride + " - 1");
    s[d] = Fresh("s");
    const std::string hi =
        IntVar("min(" + q + " < 0 ? -1 : " + q + " / " + stride + ", " +
               std::to_string(source.shape.dimensions(static_cast<int64_t>(d)) - 1) + ") + 1");
    // Sources s with q - reach <= s * stride <= q, within the source.
    const int64_t box = std::min((w.size - 1) * w.window_dilation / w.stride + 1,
                                 source.shape.dimensions(static_cast<int64_t>(d)));
    OpenLoop(LoopHeader(s[d], lo + " / " + stride, hi, "1"), box);
  }
  // The selected element of this source's window: the first in window
  // order unless `select` prefers a later one.
  const std::string selected = Fresh("sel");
  const std::string selected_value = Fresh("selv");
  Line("int " + selected + " = -1;");
  Line(GlslValueType(type) + " " + selected_value + " = " + ZeroValue(type) + ";");
  std::vector<int64_t> sizes;
  for (const WindowDimension& w : window.dimensions) sizes.push_back(w.size);
  const std::string r = Fresh("w");
  OpenLoop(LoopHeader(r, "0", std::to_string(Product(sizes)), "1"), Product(sizes));
  const Index within = Delinearize(r, sizes);
  std::string inside;
  Index candidate;
  for (size_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[d];
    const std::string position =
        IntVar(s[d] + " * " + std::to_string(w.stride) + " + " + within.dims[d] + " * " +
               std::to_string(w.window_dilation) + " - " + std::to_string(w.padding_low));
    const std::string dim = std::to_string(operand.shape.dimensions(static_cast<int64_t>(d)));
    std::string condition = position + " >= 0";
    if (w.base_dilation != 1) {
      const std::string b = std::to_string(w.base_dilation);
      condition += " && " + position + " % " + b + " == 0 && " + position + " / " + b + " < " + dim;
      candidate.dims.push_back("(" + position + " / " + b + ")");
    } else {
      condition += " && " + position + " < " + dim;
      candidate.dims.push_back(position);
    }
    inside += (inside.empty() ? "" : " && ") + ("(" + condition + ")");
  }
  Open("if (" + (inside.empty() ? std::string("true") : inside) + ")");
  for (std::string& dim : candidate.dims) dim = IntVar(dim);
  const std::string candidate_linear = Linear(candidate, operand.shape.dimensions());
  KILN_ASSIGN_OR_RETURN(std::string value, Scalar(operand, candidate));
  Open("if (" + selected + " < 0)");
  Line(selected + " = " + candidate_linear + ";");
  Line(selected_value + " = " + value + ";");
  --indent_;
  memo_.pop_back();
  Line("} else {");
  ++indent_;
  memo_.emplace_back();
  KILN_ASSIGN_OR_RETURN(Values keep, Call(*instruction.called[0], {selected_value, value}));
  if (keep.size() != 1) return Refuse(instruction, "select must return one pred");
  Open("if (!" + keep[0] + ")");
  Line(selected + " = " + candidate_linear + ";");
  Line(selected_value + " = " + value + ";");
  Close();
  Close();
  Close();
  Close();
  Open("if (" + selected + " == " + self + ")");
  KILN_ASSIGN_OR_RETURN(std::string update, Scalar(source, Index{s, ""}));
  KILN_ASSIGN_OR_RETURN(Values next, Call(*instruction.called[1], {acc, update}));
  if (next.size() != 1) return Refuse(instruction, "scatter must return one value");
  Line(acc + " = " + next[0] + ";");
  Close();
  for (size_t d = 0; d < rank; ++d) Close();
  return Values{acc};
}

// Element i of one launch is a SplitMix64 hash of the launch's key (push
// constants, two 32-bit words) and i, as the CUDA backend's rng: uniform in
// [a, b) from the top 53 bits, normal by Box-Muller (mean a, deviation b),
// integers a + (x mod (b - a)). The executable gives each launch its own
// key (RngLaunchKey of the execution's seed and the launch's number).
StatusOr<std::string> Emitter::EmitRng(const Instruction& instruction, const Index& index) {
  const ElementType type = instruction.shape.element_type();
  if (instruction.operands.size() != 2) return Refuse(instruction, "rng needs two scalar operands");
  for (const Instruction* operand : instruction.operands) {
    if (operand->shape.element_count() != 1 || operand->shape.element_type() != type)
      return Refuse(instruction, "rng operands must be scalars of the result's type");
  }
  const bool normal = instruction.attrs.rng_distribution == RngDistribution::kNormal;
  if (IsComplex(type) || type == ElementType::kPred || (normal && !IsFloating(type)))
    return Refuse(instruction, "rng of this type is not defined");
  if (!features_.i64) return Refuse(instruction, "the counter hash needs 64-bit integers (shaderInt64)");
  const bool use_double = features_.f64;
  if (type == ElementType::kF64 && normal)
    return Refuse(instruction, "normal f64 random numbers need double log and cos");
  prelude_.NeedExtension("GL_EXT_shader_explicit_arithmetic_types_int64");
  prelude_.Helper("k_mix64",
                  "uint64_t k_mix64(uint64_t x) {\n"
                  "  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ul;\n"
                  "  x = (x ^ (x >> 27)) * 0x94D049BB133111EBul;\n"
                  "  return x ^ (x >> 31);\n}\n");
  uses_rng_key_ = true;
  KILN_ASSIGN_OR_RETURN(std::string a, Scalar(*instruction.operand(0), Index{}));
  KILN_ASSIGN_OR_RETURN(std::string b, Scalar(*instruction.operand(1), Index{}));
  const std::string linear = Linear(index, instruction.shape.dimensions());
  const std::string counter = Fresh("rc");
  Line("uint64_t " + counter + " = (uint64_t(k_key.lo) | (uint64_t(k_key.hi) << 32)) + uint64_t(" + linear +
       ") * 0x3C6EF372FE94F82Aul;");
  const std::string first = Fresh("rb");
  Line("uint64_t " + first + " = k_mix64(" + counter + ");");
  const std::string t = GlslValueType(type);
  if (!IsFloating(type)) {
    const std::string low = Fresh("rl");
    const std::string high = Fresh("rh");
    Line("int64_t " + low + " = int64_t(" + a + ");");
    Line("int64_t " + high + " = int64_t(" + b + ");");
    const std::string span = Fresh("rs");
    Line("uint64_t " + span + " = " + high + " > " + low + " ? uint64_t(" + high + " - " + low + ") : 0ul;");
    return Normalize(type,
                     t + "(" + low + " + int64_t(" + span + " == 0ul ? 0ul : " + first + " % " + span + "))",
                     prelude_);
  }
  // Computed in double where the device has it (in float otherwise, from
  // the top 24 bits), rounded once to the type.
  const ElementType wide = use_double ? ElementType::kF64 : ElementType::kF32;
  const std::string w = GlslValueType(wide);
  auto unit = [&](const std::string& bits) {
    return use_double ? "(double(" + bits + " >> 11) * " + FloatLiteral(wide, 0x1.0p-53) + ")"
                      : "(float(uint(" + bits + " >> 40)) * " + FloatLiteral(wide, 0x1.0p-24) + ")";
  };
  KILN_ASSIGN_OR_RETURN(std::string low, ConvertExpr(type, wide, a, prelude_));
  KILN_ASSIGN_OR_RETURN(std::string top, ConvertExpr(type, wide, b, prelude_));
  const std::string sample = Fresh("rv");
  if (normal) {
    // log and cos in float: GLSL has no double versions (f64 is refused above).
    const std::string second = Fresh("rb");
    Line("uint64_t " + second + " = k_mix64(" + counter + " + 0x9E3779B97F4A7C15ul);");
    const std::string u1 = Fresh("ru");
    Line("float " + u1 + " = float(" + FloatLiteral(wide, 1.0) + " - " + unit(first) + ");");
    Line(w + " " + sample + " = " + low + " + " + top + " * " + w + "(sqrt(-2.0 * log(" + u1 +
         ")) * cos(6.283185307179586 * float(" + unit(second) + ")));");
    return ConvertExpr(wide, type, sample, prelude_);
  }
  Line(w + " " + sample + " = " + low + " + (" + top + " - " + low + ") * " + unit(first) + ";");
  KILN_ASSIGN_OR_RETURN(std::string rounded, ConvertExpr(wide, type, sample, prelude_));
  const std::string value = Var(type, rounded);
  KILN_ASSIGN_OR_RETURN(std::string widened, ConvertExpr(type, wide, value, prelude_));
  // Rounding to the type can reach b; the interval stays half-open.
  return "((" + widened + " >= " + top + " && " + top + " > " + low + ") ? " + a + " : " + value + ")";
}

// Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds) blocks, as the
// interpreter's rng-bit-generator (core/interpreter/rng.cc), unrolled.
std::string ThreefryHelper() {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  std::string text =
      "uvec2 k_threefry(uint k0, uint k1, uint c0, uint c1) {\n  uint ks[3] = uint[3](k0, k1, 0x1BD11BDAu ^ "
      "k0 ^ "
      "k1);\n  uint x0 = c0 + k0;\n  uint x1 = c1 + k1;\n";
  for (int round = 0; round < 20; ++round) {
    const int r = kRotations[round % 8];
    text += "  x0 += x1; x1 = (x1 << " + std::to_string(r) + ") | (x1 >> " + std::to_string(32 - r) +
            "); x1 ^= x0;\n";
    if (round % 4 == 3) {
      const int injection = round / 4 + 1;
      text += "  x0 += ks[" + std::to_string(injection % 3) + "]; x1 += ks[" +
              std::to_string((injection + 1) % 3) + "] + " + std::to_string(injection) + "u;\n";
    }
  }
  return text + "  return uvec2(x0, x1);\n}\n";
}

std::string PhiloxHelper() {
  std::string text = "uvec4 k_philox(uint k0, uint k1, uvec4 c) {\n  uint h0, l0, h1, l1;\n";
  for (int round = 0; round < 10; ++round) {
    text +=
        "  umulExtended(0xD2511F53u, c.x, h0, l0); umulExtended(0xCD9E8D57u, c.z, h1, l1);\n"
        "  c = uvec4(h1 ^ c.y ^ k0, l1, h0 ^ c.w ^ k1, l0); k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;\n";
  }
  return text + "  return c;\n}\n";
}

// (new state, bits), laid out as XLA lays them out (core/rng_bit_layout.h):
// each element names its counter block and word; the new state advances the
// counter by the blocks the whole output used.
StatusOr<Values> Emitter::EmitRngBitGenerator(const Instruction& instruction, const Index& index) {
  const Instruction& state = *instruction.operand(0);
  const Shape& shape = instruction.shape;
  if (!shape.IsTuple() || shape.tuple_shapes().size() != 2 ||
      state.shape.element_type() != ElementType::kU64 || state.shape.rank() != 1)
    return Refuse(instruction, "rng-bit-generator needs a u64 state and a (state, bits) result");
  if (!features_.i64) return Refuse(instruction, "its u64 state needs 64-bit integers (shaderInt64)");
  const Shape& bits_shape = shape.tuple_shapes(1);
  const ElementType type = bits_shape.element_type();
  const int64_t n = state.shape.element_count();
  StatusOr<RngBitLayout> planned = PlanRngBits(instruction.attrs.rng_algorithm, n, bits_shape);
  if (!planned.ok()) return Refuse(instruction, planned.status().message());
  const RngBitLayout& layout = *planned;
  prelude_.NeedExtension("GL_EXT_shader_explicit_arithmetic_types_int64");
  const bool philox = layout.algorithm == RngAlgorithm::kPhilox;
  KILN_ASSIGN_OR_RETURN(std::string key, Scalar(state, Index{{"0"}, ""}));
  KILN_ASSIGN_OR_RETURN(std::string counter, Scalar(state, Index{{"1"}, ""}));
  // XLA's two-word Philox state is reversed: the key is the counter's high word.
  std::string high = key;
  if (n > 2) {
    KILN_ASSIGN_OR_RETURN(high, Scalar(state, Index{{"2"}, ""}));
  }
  // The new state's element (the index is the state's or, when this leaf
  // is not the one asked for, the other leaf's: clamped either way).
  const std::string at =
      index.dims.size() == 1 ? IntVar("clamp(" + index.dims[0] + ", 0, " + std::to_string(n - 1) + ")") : "0";
  KILN_ASSIGN_OR_RETURN(std::string kept, Scalar(state, Index{{at}, ""}));
  const std::string advanced = Var(ElementType::kU64, counter + " + " + std::to_string(layout.blocks) + "ul");
  std::string new_state = "(" + at + " == 1 ? " + advanced + " : " + kept + ")";
  if (philox && n > 2)
    new_state = "(" + at + " == 2 ? " + kept + " + (" + advanced + " < " + counter +
                " ? 1ul : 0ul) : " + new_state + ")";
  const std::string state_value = Var(ElementType::kU64, new_state);
  // The bits' element, its block and its first word (RngBitSourceOf).
  const std::string element = IntVar(!index.linear.empty() ? index.linear
                                     : index.dims.size() == static_cast<size_t>(bits_shape.rank())
                                         ? Linear(index, bits_shape.dimensions())
                                         : "0");
  std::string block_expr;
  std::string word;
  if (philox) {
    const int per_element = layout.element_word_bits == 64 ? 2 : 1;
    block_expr = element + " / " + std::to_string(4 / per_element);
    word = IntVar("(" + element + " % " + std::to_string(4 / per_element) + ") * " +
                  std::to_string(per_element));
  } else if (layout.element_word_bits == 64) {
    block_expr = element;
    word = "0";
  } else if (layout.split_dim < 0) {
    block_expr = "0";
    word = "0";
  } else {
    const std::string stride = std::to_string(layout.split_stride);
    const std::string extent = std::to_string(layout.split_extent);
    const std::string along = IntVar("(" + element + " / " + stride + ") % " + extent);
    block_expr = "((" + element + " / " + stride + " / " + extent + ") * " +
                 std::to_string((layout.split_extent + 1) / 2) + " + " + along + " / 2) * " + stride + " + " +
                 element + " % " + stride;
    word = IntVar(along + " % 2");
  }
  const std::string block = Var(ElementType::kU64, "uint64_t(" + block_expr + ")");
  const std::string k0 = "uint(" + key + ")", k1 = "uint(" + key + " >> 32)";
  const std::string got = Fresh("rg");
  if (philox) {
    prelude_.Helper("k_philox", PhiloxHelper());
    const std::string low = Var(ElementType::kU64, counter + " + " + block);
    const std::string upper = Var(ElementType::kU64, high + " + (" + low + " < " + counter + " ? 1ul : 0ul)");
    Line("uvec4 " + got + " = k_philox(" + k0 + ", " + k1 + ", uvec4(uint(" + low + "), uint(" + low +
         " >> 32), uint(" + upper + "), uint(" + upper + " >> 32)));");
  } else {
    prelude_.Helper("k_threefry", ThreefryHelper());
    const std::string value = Var(ElementType::kU64, counter + " + " + block);
    Line("uvec2 " + got + " = k_threefry(" + k0 + ", " + k1 + ", uint(" + value + "), uint(" + value +
         " >> 32));");
  }
  std::string bits_value;
  const int64_t bytes = BitWidth(type) / 8;
  if (bytes == 8) {
    KILN_ASSIGN_OR_RETURN(bits_value, BitcastExpr(ElementType::kU64, type,
                                                  "(uint64_t(" + got + "[" + word + "]) | (uint64_t(" + got +
                                                      "[" + word + " + 1]) << 32))",
                                                  prelude_));
  } else if (bytes == 4) {
    KILN_ASSIGN_OR_RETURN(bits_value, BitcastExpr(ElementType::kU32, type, got + "[" + word + "]", prelude_));
  } else {
    // A narrow element is the low bits of its word.
    const std::string piece = "(" + got + "[" + word + "] & " + (bytes == 1 ? "0xffu" : "0xffffu") + ")";
    KILN_ASSIGN_OR_RETURN(
        bits_value, BitcastExpr(bytes == 1 ? ElementType::kU8 : ElementType::kU16, type, piece, prelude_));
  }
  return Values{state_value, Var(type, bits_value)};
}

// The unsigned type of a width (the bits of a bitcast).
ElementType UnsignedOfWidth(int bits) {
  switch (bits) {
    case 8: return ElementType::kU8;
    case 16: return ElementType::kU16;
    case 32: return ElementType::kU32;
    default: return ElementType::kU64;
  }
}

// Bytes copied as they lie (little-endian, as the interpreter's byte copy
// on its hosts): a narrower result has one more minor dimension, element j
// of it the j-th piece of the input element; a wider one drops the
// input's minor dimension, piece j at bit j * (input width).
StatusOr<std::string> Emitter::EmitBitcastChangingWidth(const Instruction& instruction, const Index& index) {
  const Instruction& operand = *instruction.operand(0);
  const ElementType from = operand.shape.element_type();
  const ElementType to = instruction.shape.element_type();
  const int in_bits = BitWidth(from);
  const int out_bits = BitWidth(to);
  if (IsComplex(from) || IsComplex(to) || from == ElementType::kPred || to == ElementType::kPred)
    return Refuse(instruction, "bitcast-convert is not defined for complex or pred");
  if ((in_bits == 64 || out_bits == 64) && !features_.i64)
    return Refuse(instruction, "64-bit pieces need 64-bit integers (shaderInt64)");
  const ElementType in_unsigned = UnsignedOfWidth(in_bits);
  const ElementType out_unsigned = UnsignedOfWidth(out_bits);
  const std::string in_glsl = GlslValueType(in_unsigned);
  const std::string out_glsl = GlslValueType(out_unsigned);
  if (in_bits > out_bits) {
    const int64_t ratio = in_bits / out_bits;
    if (operand.shape.rank() + 1 != instruction.shape.rank() ||
        instruction.shape.dimensions().back() != ratio)
      return Refuse(instruction, "a narrowing bitcast-convert adds a minor dimension of the width ratio");
    Index operand_index{std::vector<std::string>(index.dims.begin(), index.dims.end() - 1), ""};
    KILN_ASSIGN_OR_RETURN(std::string x, Scalar(operand, operand_index));
    KILN_ASSIGN_OR_RETURN(std::string bits, BitcastExpr(from, in_unsigned, x, prelude_));
    const std::string piece =
        out_glsl + "((" + in_glsl + "(" + bits + ") >> (" + index.dims.back() + " * " +
        std::to_string(out_bits) + ")) & " +
        UintLiteral(in_unsigned, out_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << out_bits) - 1) + ")";
    return BitcastExpr(out_unsigned, to, piece, prelude_);
  }
  const int64_t ratio = out_bits / in_bits;
  if (operand.shape.rank() != instruction.shape.rank() + 1 || operand.shape.dimensions().back() != ratio)
    return Refuse(instruction, "a widening bitcast-convert drops a minor dimension of the width ratio");
  std::string sum;
  for (int64_t j = 0; j < ratio; ++j) {
    Index operand_index{index.dims, ""};
    operand_index.dims.push_back(std::to_string(j));
    KILN_ASSIGN_OR_RETURN(std::string x, Scalar(operand, operand_index));
    KILN_ASSIGN_OR_RETURN(std::string bits, BitcastExpr(from, in_unsigned, x, prelude_));
    const std::string part = "(" + out_glsl + "(" + bits + ") << " + std::to_string(j * in_bits) + ")";
    sum += (sum.empty() ? "" : " | ") + part;
  }
  return BitcastExpr(out_unsigned, to, Var(out_unsigned, sum), prelude_);
}

StatusOr<std::string> Emitter::EmitConcatenate(const Instruction& instruction, const Index& index) {
  if (instruction.attrs.dimensions.size() != 1) return Refuse(instruction, "concatenate needs one dimension");
  const auto dim = static_cast<size_t>(instruction.attrs.dimensions[0]);
  const ElementType type = instruction.shape.element_type();
  const std::string result = Fresh("v");
  Line(GlslValueType(type) + " " + result + ";");
  int64_t offset = 0;
  for (size_t i = 0; i < instruction.operands.size(); ++i) {
    const Instruction& operand = *instruction.operand(i);
    const int64_t size = operand.shape.dimensions(static_cast<int64_t>(dim));
    const bool last = i + 1 == instruction.operands.size();
    const std::string condition = index.dims[dim] + " < " + std::to_string(offset + size);
    Open(last ? std::string("if (true)") : "if (" + condition + ")");
    Index operand_index{index.dims, ""};
    if (offset != 0) operand_index.dims[dim] = IntVar(index.dims[dim] + " - " + std::to_string(offset));
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(operand, operand_index));
    Line(result + " = " + value + ";");
    --indent_;
    memo_.pop_back();
    if (last) {
      Line("}");
    } else {
      Line("} else {");
      ++indent_;
      memo_.emplace_back();
    }
    offset += size;
  }
  // Close the else blocks opened for all but the last operand.
  for (size_t i = 0; i + 1 < instruction.operands.size(); ++i) Close();
  return result;
}

StatusOr<std::string> Emitter::EmitPad(const Instruction& instruction, const Index& index) {
  const Instruction& operand = *instruction.operand(0);
  const std::vector<PaddingDimension>& padding = instruction.attrs.padding;
  if (padding.size() != index.dims.size()) return Refuse(instruction, "bad padding");
  KILN_ASSIGN_OR_RETURN(std::string pad_value, Scalar(*instruction.operand(1), Index{}));
  std::string inside;
  Index operand_index;
  for (size_t d = 0; d < padding.size(); ++d) {
    const PaddingDimension& p = padding[d];
    const std::string t = IntVar(index.dims[d] + " - (" + std::to_string(p.low) + ")");
    const std::string step = std::to_string(p.interior + 1);
    const std::string dim = std::to_string(operand.shape.dimensions(static_cast<int64_t>(d)));
    std::string condition = t + " >= 0";
    if (p.interior != 0) {
      condition += " && " + t + " % " + step + " == 0 && " + t + " / " + step + " < " + dim;
      operand_index.dims.push_back("(" + t + " / " + step + ")");
    } else {
      condition += " && " + t + " < " + dim;
      operand_index.dims.push_back(t);
    }
    inside += (inside.empty() ? "" : " && ") + ("(" + condition + ")");
  }
  const std::string result = Fresh("v");
  Line(GlslValueType(instruction.shape.element_type()) + " " + result + " = " + pad_value + ";");
  if (inside.empty()) inside = "true";
  Open("if (" + inside + ")");
  for (std::string& dim : operand_index.dims) dim = IntVar(dim);
  KILN_ASSIGN_OR_RETURN(std::string value, Scalar(operand, operand_index));
  Line(result + " = " + value + ";");
  Close();
  return result;
}

// An index value clamped to [0, high] in its own type (so that a huge s64
// does not wrap before the clamp), then made an int.
StatusOr<std::string> Emitter::ClampedIndex(const Instruction& index_operand, const std::string& value,
                                            int64_t high) {
  const ElementType type = index_operand.shape.element_type();
  if (!IsIntegral(type)) return Refuse(index_operand, "indices must be integers");
  return IntVar("int(clamp(" + value + ", " + ZeroValue(type) + ", " +
                IntLiteral(type, std::max<int64_t>(high, 0)) + "))");
}

StatusOr<std::vector<std::string>> Emitter::DynamicStarts(const Instruction& instruction, size_t first,
                                                          const std::vector<int64_t>& sizes) {
  const Shape& operand = instruction.operand(0)->shape;
  std::vector<std::string> starts;
  const size_t rank = static_cast<size_t>(operand.rank());
  const bool vector_form =
      instruction.operands.size() == first + 1 && instruction.operand(first)->shape.rank() == 1;
  if (!vector_form && instruction.operands.size() != first + rank)
    return Refuse(instruction, "wrong number of start indices");
  if (sizes.size() != rank) return Refuse(instruction, "wrong number of slice sizes");
  for (size_t d = 0; d < rank; ++d) {
    const Instruction& index_operand = *instruction.operand(vector_form ? first : first + d);
    Index at;
    if (vector_form) at.dims.push_back(std::to_string(d));
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(index_operand, at));
    KILN_ASSIGN_OR_RETURN(
        std::string start,
        ClampedIndex(index_operand, value, operand.dimensions(static_cast<int64_t>(d)) - sizes[d]));
    starts.push_back(start);
  }
  return starts;
}

StatusOr<std::string> Emitter::EmitDynamicSlice(const Instruction& instruction, const Index& index) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> starts,
                        DynamicStarts(instruction, 1, instruction.attrs.dynamic_slice_sizes));
  Index operand_index;
  for (size_t d = 0; d < starts.size(); ++d)
    operand_index.dims.push_back(IntVar(starts[d] + " + " + index.dims[d]));
  return Scalar(*instruction.operand(0), operand_index);
}

StatusOr<std::string> Emitter::EmitDynamicUpdateSlice(const Instruction& instruction, const Index& index) {
  const Instruction& update = *instruction.operand(1);
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> starts,
                        DynamicStarts(instruction, 2, update.shape.dimensions()));
  std::string inside;
  Index update_index;
  for (size_t d = 0; d < starts.size(); ++d) {
    const std::string t = IntVar(index.dims[d] + " - " + starts[d]);
    inside += (inside.empty() ? "" : " && ") +
              ("(" + t + " >= 0 && " + t + " < " +
               std::to_string(update.shape.dimensions(static_cast<int64_t>(d))) + ")");
    update_index.dims.push_back(t);
  }
  if (inside.empty()) inside = "true";
  const std::string result = Fresh("v");
  Line(GlslValueType(instruction.shape.element_type()) + " " + result + ";");
  Open("if (" + inside + ")");
  KILN_ASSIGN_OR_RETURN(std::string updated, Scalar(update, update_index));
  Line(result + " = " + updated + ";");
  --indent_;
  memo_.pop_back();
  Line("} else {");
  ++indent_;
  memo_.emplace_back();
  KILN_ASSIGN_OR_RETURN(std::string kept, Scalar(*instruction.operand(0), index));
  Line(result + " = " + kept + ";");
  Close();
  return result;
}

StatusOr<std::string> Emitter::EmitGather(const Instruction& instruction, const Index& index) {
  const Instruction& operand = *instruction.operand(0);
  const Instruction& indices = *instruction.operand(1);
  const GatherDimensionNumbers& dn = instruction.attrs.gather;
  const std::vector<int64_t>& slice_sizes = instruction.attrs.gather_slice_sizes;
  const int64_t rank = operand.shape.rank();
  if (static_cast<int64_t>(slice_sizes.size()) != rank || dn.index_vector_dim < 0 ||
      dn.index_vector_dim > indices.shape.rank())
    return Refuse(instruction, "bad gather slice sizes or index_vector_dim");
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d))
      window_dims.push_back(d);
  }
  if (window_dims.size() != dn.offset_dims.size()) return Refuse(instruction, "bad gather offset_dims");
  std::vector<std::string> batch;
  for (int64_t d = 0; d < instruction.shape.rank(); ++d) {
    if (!Contains(dn.offset_dims, d)) batch.push_back(index.dims[static_cast<size_t>(d)]);
  }
  const bool has_vector = dn.index_vector_dim < indices.shape.rank();
  if (static_cast<int64_t>(batch.size()) != indices.shape.rank() - (has_vector ? 1 : 0))
    return Refuse(instruction, "gather batch dimensions do not match the indices");
  // Component k of the start index vector of this batch position.
  auto indices_at = [&](int64_t k) {
    Index at;
    size_t next = 0;
    for (int64_t d = 0; d < indices.shape.rank(); ++d)
      at.dims.push_back(d == dn.index_vector_dim ? std::to_string(k) : batch[next++]);
    return at;
  };
  std::vector<std::string> starts(static_cast<size_t>(rank), "0");
  for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
    const int64_t d = dn.start_index_map[k];
    if (d < 0 || d >= rank) return Refuse(instruction, "bad start_index_map");
    KILN_ASSIGN_OR_RETURN(std::string value, Scalar(indices, indices_at(static_cast<int64_t>(k))));
    KILN_ASSIGN_OR_RETURN(
        starts[static_cast<size_t>(d)],
        ClampedIndex(indices, value, operand.shape.dimensions(d) - slice_sizes[static_cast<size_t>(d)]));
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size() && i < dn.start_indices_batching_dims.size(); ++i) {
    const int64_t dim = dn.start_indices_batching_dims[i];
    const int64_t position = has_vector && dim > dn.index_vector_dim ? dim - 1 : dim;
    if (position < 0 || position >= static_cast<int64_t>(batch.size()))
      return Refuse(instruction, "bad batching dims");
    const int64_t d = dn.operand_batching_dims[i];
    const int64_t high =
        std::max<int64_t>(operand.shape.dimensions(d) - slice_sizes[static_cast<size_t>(d)], 0);
    starts[static_cast<size_t>(d)] =
        IntVar("clamp(" + batch[static_cast<size_t>(position)] + ", 0, " + std::to_string(high) + ")");
  }
  for (size_t w = 0; w < window_dims.size(); ++w) {
    auto& start = starts[static_cast<size_t>(window_dims[w])];
    start = IntVar(start + " + " + index.dims[static_cast<size_t>(dn.offset_dims[w])]);
  }
  return Scalar(operand, Index{starts, ""});
}

StatusOr<int> Emitter::BufferOf(const Instruction& instruction, const Instruction& operand) {
  auto it = buffers_.find(&operand);
  if (it == buffers_.end()) return Refuse(instruction, "its operands must be the kernel's parameters");
  return it->second;
}

StatusOr<std::string> Emitter::EmitComparatorFunction(
    const std::function<StatusOr<std::string>()>& hi_first) {
  // Defined after the prelude's helpers, which it may call.
  return EmitFunction("bool k_hi_first(int k_row, int k_lo, int k_hi)", hi_first, &comparator_loops_);
}

StatusOr<std::string> Emitter::EmitFunction(const std::string& signature,
                                            const std::function<StatusOr<std::string>()>& value,
                                            int64_t* loops) {
  std::string saved_body = std::move(body_);
  auto saved_memo = std::move(memo_);
  const int saved_indent = indent_;
  body_.clear();
  memo_.clear();
  memo_.emplace_back();
  indent_ = 1;
  const int64_t loops_before = loop_iterations_;
  StatusOr<std::string> result = value();
  const int64_t function_loops = loop_iterations_ - loops_before;
  std::string text = signature + " {\n" + body_;
  body_ = std::move(saved_body);
  memo_ = std::move(saved_memo);
  indent_ = saved_indent;
  loop_iterations_ = loops_before;
  if (!result.ok()) return result.status();
  *loops = function_loops;
  return text + "  return " + *result + ";\n}\n";
}

StatusOr<GlslKernel> Emitter::FinishSort(const Instruction& root, GlslKernel& result,
                                         const std::string& buffers, int64_t rows, int64_t length,
                                         int64_t outputs, const std::string& comparator,
                                         const std::string& gather) {
  const std::string head = "// Kiln kernel " + result.name + "\n#version 450\n" + prelude_.Extensions() +
                           "layout(local_size_x_id = 0) in;\n" + buffers;
  result.invocations = outputs;
  // The serial sort only where its loops, with this comparator's, stay
  // within the device's limit (its scratch is never the smaller: a
  // fallback to the bitonic network fits in it).
  const SerialSortLayout serial = PlanSerialSort(rows, length, outputs, features_);
  const std::vector<KernelLaunch> serial_dispatches = SerialSortDispatches(serial);
  const int64_t serial_loops = SerialSortLoopIterations(serial, serial_dispatches, comparator_loops_);
  if (SortsRowsSerially(features_, rows, length) &&
      (features_.max_loop_iterations <= 0 || serial_loops <= features_.max_loop_iterations)) {
    result.workgroup_size = serial.workgroup_size;
    result.push_constant_bytes = kSerialSortPushConstantBytes;
    result.launches = serial_dispatches;
    result.max_loop_iterations = serial_loops;
    result.source = head + SerialSortGlobals() + globals_ + prelude_.Helpers() + comparator +
                    SerialSortFunctions(serial) + SerialSortMain(serial, gather);
  } else {
    if (rows * BitonicPaddedLength(length) > std::numeric_limits<int32_t>::max())
      return Refuse(root, "its rows padded to a power of two pass 32-bit indexing");
    const BitonicSortLayout layout = PlanBitonicSort(rows, length, outputs, features_);
    result.workgroup_size = layout.workgroup_size;
    result.push_constant_bytes = kBitonicPushConstantBytes;
    result.launches = BitonicSortDispatches(layout);
    result.max_loop_iterations = BitonicSortLoopIterations(layout, result.launches, comparator_loops_);
    result.source = head + BitonicSortGlobals(layout) + globals_ + prelude_.Helpers() + comparator +
                    BitonicSortFunctions(layout) + BitonicSortMain(layout, gather);
  }
  if (heaviest_ != nullptr)
    result.loop_op = std::string(OpcodeName(heaviest_->opcode)) + " " + heaviest_->shape.ToString() + " (" +
                     heaviest_->name + ")";
  return result;
}

// The rows along the sort dimension (at each position of the others) put
// in order by the bitonic network with the comparator inlined; then every
// operand gathered in that order.
StatusOr<GlslKernel> Emitter::EmitSortRows(const Instruction& sort, GlslKernel& result,
                                           const std::string& buffers) {
  if (sort.operands.empty() || sort.called.size() != 1 || sort.called[0] == nullptr)
    return Refuse(sort, "sort needs operands and a comparator");
  const Shape& shape = sort.operand(0)->shape;
  const int64_t rank = shape.rank();
  int64_t dimension = sort.attrs.dimensions.empty() ? rank - 1 : sort.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  if (rank == 0) dimension = 0;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) return Refuse(sort, "bad sort dimension");
  std::vector<int> inputs;
  for (const Instruction* operand : sort.operands) {
    if (operand->shape.dimensions() != shape.dimensions())
      return Refuse(sort, "sort operands must share dimensions");
    KILN_ASSIGN_OR_RETURN(int buffer, BufferOf(sort, *operand));
    inputs.push_back(buffer);
  }
  if (result.output_count != static_cast<int>(inputs.size()))
    return Refuse(sort, "a sort's outputs must be its operands' leaves");
  const int64_t length = rank == 0 ? 1 : shape.dimensions(dimension);
  int64_t inner = 1;
  for (int64_t d = dimension + 1; d < rank; ++d) inner *= shape.dimensions(d);
  const int64_t rows = length == 0 ? 0 : shape.element_count() / length;
  const std::string in = std::to_string(inner);
  const std::string row_elements = std::to_string(length * inner);
  const Computation& comparator = *sort.called[0];
  KILN_ASSIGN_OR_RETURN(
      std::string function, EmitComparatorFunction([&]() -> StatusOr<std::string> {
        Line("int k_base = (k_row / " + in + ") * " + row_elements + " + k_row % " + in + ";");
        Values arguments;
        for (size_t k = 0; k < inputs.size(); ++k) {
          const ElementType type = sort.operand(k)->shape.element_type();
          for (const char* e : {"k_hi", "k_lo"}) {
            const std::string element =
                BufferName(inputs[k]) + ".d[k_base + " + std::string(e) + " * " + in + "]";
            arguments.push_back(Var(type, LoadValue(type, element, prelude_)));
          }
        }
        KILN_ASSIGN_OR_RETURN(Values less, Call(comparator, arguments));
        if (less.size() != 1) return Refuse(sort, "the comparator must return one pred");
        return less[0];
      }));
  // Output element k_o, in the outputs' own order (writes side by side):
  // its row, its place e in the row, and the row's first element.
  std::string gather = "    int k_outer = k_o / " + row_elements + ";\n    int k_in = k_o % " + in +
                       ";\n    int k_e = (k_o / " + in + ") % " + std::to_string(length) +
                       ";\n    int k_base = k_outer * " + row_elements +
                       " + k_in;\n    int k_from = k_sorted(k_outer * " + in + " + k_in, k_e);\n";
  for (size_t k = 0; k < inputs.size(); ++k) {
    gather += "    b" + std::to_string(result.input_count + static_cast<int>(k)) + ".d[k_o] = b" +
              std::to_string(inputs[k]) + ".d[k_base + k_from * " + in + "];\n";
  }
  return FinishSort(sort, result, buffers, rows, length, shape.element_count(), function, gather);
}

// The k largest (smallest) of each last-dimension row: the row sorted by
// value (floats in the total order), ties in index order, its first k.
StatusOr<GlslKernel> Emitter::EmitTopKRows(const Instruction& top_k, GlslKernel& result,
                                           const std::string& buffers) {
  if (top_k.operands.size() != 1 || result.output_count != 2) return Refuse(top_k, "bad topk");
  const Instruction& operand = *top_k.operand(0);
  const ElementType type = operand.shape.element_type();
  if (IsComplex(type) || type == ElementType::kPred) return Refuse(top_k, "topk needs ordered elements");
  KILN_ASSIGN_OR_RETURN(int input, BufferOf(top_k, operand));
  if (operand.shape.rank() == 0) return Refuse(top_k, "topk needs a rank >= 1 operand");
  const int64_t length = operand.shape.dimensions().back();
  const int64_t k = top_k.attrs.top_k;
  if (k < 0 || k > length) return Refuse(top_k, "bad k");
  const int64_t rows = length == 0 ? 0 : operand.shape.element_count() / length;
  const std::string n = std::to_string(length);
  const std::string b = BufferName(input);
  const ComparisonDirection direction =
      top_k.attrs.largest ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  const ComparisonType comparison = IsFloating(type) ? ComparisonType::kTotalOrder : ComparisonType::kDefault;
  KILN_ASSIGN_OR_RETURN(
      std::string function, EmitComparatorFunction([&]() -> StatusOr<std::string> {
        const std::string x = Var(type, LoadValue(type, b + ".d[k_row * " + n + " + k_hi]", prelude_));
        const std::string y = Var(type, LoadValue(type, b + ".d[k_row * " + n + " + k_lo]", prelude_));
        return CompareExpr(direction, comparison, type, x, y, prelude_);
      }));
  const std::string kk = std::to_string(k);
  const std::string gather =
      "    int k_row = k_o / " + kk + ";\n    int k_from = k_sorted(k_row, k_o % " + kk + ");\n    b" +
      std::to_string(result.input_count) + ".d[k_o] = " + b + ".d[k_row * " + n + " + k_from];\n    b" +
      std::to_string(result.input_count + 1) +
      ".d[k_o] = " + StoreValue(top_k.shape.tuple_shapes(1).element_type(), "k_from", prelude_) + ";\n";
  return FinishSort(top_k, result, buffers, rows, length, rows * k, function, gather);
}

StatusOr<GlslKernel> Emitter::Emit(const Computation& kernel, std::string_view entry_name) {
  if (kernel.root() == nullptr) return InvalidArgument("vulkan: kernel ", kernel.name(), " has no root");
  KILN_RETURN_IF_ERROR(CheckComputation(kernel, 0));
  const std::vector<const Instruction*> parameters(kernel.parameters().begin(), kernel.parameters().end());
  return EmitRoot(*kernel.root(), parameters, entry_name);
}

StatusOr<GlslKernel> Emitter::EmitAlone(const Instruction& instruction) {
  KILN_RETURN_IF_ERROR(CheckArrays(instruction, 0));
  // An operand read twice (multiply(x, x)) is one buffer here and two
  // parameters in the instruction's own computation: the text differs, the
  // answer does not.
  std::vector<const Instruction*> inputs;
  for (const Instruction* operand : instruction.operands) {
    if (std::find(inputs.begin(), inputs.end(), operand) == inputs.end()) inputs.push_back(operand);
  }
  alone_ = true;
  alone_repeated_operands_ = static_cast<int64_t>(instruction.operands.size() - inputs.size());
  return EmitRoot(instruction, inputs, "check");
}

StatusOr<GlslKernel> Emitter::EmitRoot(const Instruction& root, const std::vector<const Instruction*>& inputs,
                                       std::string_view entry_name) {
  GlslKernel result;
  result.name = std::string(entry_name);
  std::string buffers;
  for (const Instruction* parameter : inputs) {
    if (!parameter->shape.IsArray()) return Refuse(*parameter, "kernel parameters must be arrays");
    const int binding = static_cast<int>(buffers_.size());
    buffers_[parameter] = binding;
    binding_types_.push_back(parameter->shape.element_type());
    buffers += "layout(std430, set = 0, binding = " + std::to_string(binding) + ") readonly buffer In" +
               std::to_string(binding) + " { " + GlslStorageType(parameter->shape.element_type()) +
               " d[]; } b" + std::to_string(binding) + ";\n";
  }
  result.input_count = static_cast<int>(buffers_.size());
  // The output leaves, in order: a tuple root's elements (nested tuples
  // flattened), each leaf of a tuple-shaped value.
  struct Leaf {
    const Instruction* instruction;
    size_t leaf;
    Shape shape;
  };
  std::vector<Leaf> leaves;
  auto expand = [&](auto&& self, const Instruction* instruction) -> void {
    if (instruction->opcode == Opcode::kTuple) {
      for (const Instruction* operand : instruction->operands) self(self, operand);
      return;
    }
    const std::vector<Shape> shapes = instruction->shape.Leaves();
    for (size_t i = 0; i < shapes.size(); ++i) leaves.push_back({instruction, i, shapes[i]});
  };
  expand(expand, &root);
  if (leaves.empty()) return Refuse(root, "a kernel without outputs");
  // A root scatter whose combiner is atomic-able reads and writes its one
  // output (atomics), in the storage type its plan says.
  AtomicScatterPlan atomic_scatter;
  if (root.opcode == Opcode::kScatter && leaves.size() == 1 && root.shape.element_count() > 0 &&
      root.operands.size() == 3 && root.operand(2)->shape.element_count() > 0 && !DrawsRandomNumbers(root))
    atomic_scatter = PlanAtomicScatter(root, features_);
  const bool atomic = atomic_scatter.kind != ScatterAtomicKind::kNone;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const int binding = result.input_count + static_cast<int>(k);
    buffers += "layout(std430, set = 0, binding = " + std::to_string(binding) + ") " +
               (atomic ? "" : "writeonly ") + "buffer Out" + std::to_string(binding) + " { " +
               (atomic ? atomic_scatter.storage_type : GlslStorageType(leaves[k].shape.element_type())) +
               " d[]; } b" + std::to_string(binding) + ";\n";
    result.invocations = std::max(result.invocations, leaves[k].shape.element_count());
    binding_types_.push_back(leaves[k].shape.element_type());
  }
  result.output_count = static_cast<int>(leaves.size());
  result.binding_count = result.input_count + result.output_count;
  if (GlslKernelScratchBytes(root, features_) > 0) {
    result.has_scratch = true;
    buffers += "layout(std430, set = 0, binding = " + std::to_string(result.binding_count) +
               ") buffer Scratch { int d[]; } k_scratch;\n";
    ++result.binding_count;
  }
  // An instruction emitted alone reads each operand from one buffer; as a
  // kernel of its own it binds one per operand, repeats included.
  const int64_t bindings = result.binding_count + alone_repeated_operands_;
  if (features_.max_storage_buffers > 0 && bindings > features_.max_storage_buffers)
    return Refuse(root, "its kernel binds " + std::to_string(bindings) +
                            " storage buffers and this device at most " +
                            std::to_string(features_.max_storage_buffers));
  const Opcode root_opcode = root.opcode;
  if (inline_ &&
      (root_opcode == Opcode::kSort || root_opcode == Opcode::kTopK || atomic || result.has_scratch))
    return Refuse(root,
                  "a loop shader inlines elementwise kernels only, not a sort, top-k or atomic scatter");
  if (root_opcode == Opcode::kSort || root_opcode == Opcode::kTopK) {
    heaviest_ = &root;
    return root_opcode == Opcode::kSort ? EmitSortRows(root, result, buffers)
                                        : EmitTopKRows(root, result, buffers);
  }
  if (atomic) return EmitAtomicScatter(root, atomic_scatter, result, buffers);

  if (const int64_t lanes = inline_ ? 0 : CooperativeLanes(root); lanes > 0) {
    cooperative_reduce_ = &root;
    lanes_ = lanes;
    prelude_.NeedExtension("GL_KHR_shader_subgroup_basic");
    prelude_.NeedExtension("GL_KHR_shader_subgroup_shuffle");
  }
  // Leaves of one shape share one index (and what they compute in common).
  std::vector<std::vector<size_t>> groups;
  for (size_t k = 0; k < leaves.size(); ++k) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<size_t>& group) {
      return leaves[group[0]].shape.dimensions() == leaves[k].shape.dimensions();
    });
    if (same == groups.end()) {
      groups.push_back({k});
    } else {
      same->push_back(k);
    }
  }
  indent_ = 2;
  memo_.emplace_back();
  for (const std::vector<size_t>& group : groups) {
    const Shape& shape = leaves[group[0]].shape;
    const int64_t count = shape.element_count();
    if (count == 0) continue;
    const bool all = count == result.invocations;
    if (!all) Open("if (k_i < " + std::to_string(count) + ")");
    if (all) memo_.emplace_back();
    const Index index = Delinearize("k_i", shape.dimensions());
    for (size_t k : group) {
      KILN_ASSIGN_OR_RETURN(Values values, Value(*leaves[k].instruction, index));
      if (leaves[k].leaf >= values.size()) return Internal("vulkan: output leaf out of range");
      const std::string b = BufferName(result.input_count + static_cast<int>(k));
      Line(std::string(lanes_ > 0 ? "if (k_lane == 0u) " : "") + b +
           ".d[k_i] = " + StoreValue(leaves[k].shape.element_type(), values[leaves[k].leaf], prelude_) + ";");
    }
    if (!all) Close();
    if (all) memo_.pop_back();
  }
  // A subgroup per output element: the dispatch covers lanes_ invocations
  // for each.
  if (lanes_ > 0) result.invocations = SaturatingMultiply(result.invocations, lanes_);
  return Finish(result, buffers);
}

GlslKernel Emitter::Finish(GlslKernel& result, const std::string& buffers) {
  std::string declarations = buffers;
  if (uses_rng_key_) {
    declarations += "layout(push_constant) uniform Key { uint lo; uint hi; } k_key;\n";
    result.takes_rng_key = true;
    result.push_constant_bytes = 8;
  }
  // The grid-stride loop runs over output elements; with a subgroup per
  // element, over the subgroups (whose lanes then run the same trips, as
  // their shuffles need).
  const std::string loop =
      lanes_ > 0 ? "  uint k_lane = gl_SubgroupInvocationID;\n"
                   "  uint k_stride = gl_NumWorkGroups.x * gl_NumSubgroups;\n"
                   "  for (uint k_g = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; k_g < " +
                       std::to_string(result.invocations / lanes_) + "u; k_g += k_stride) {\n"
                 : "  uint k_stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
                   "  for (uint k_g = gl_GlobalInvocationID.x; k_g < " +
                       std::to_string(result.invocations) + "u; k_g += k_stride) {\n";
  std::string source = "// Kiln kernel " + result.name + "\n#version 450\n" + prelude_.Extensions() +
                       "layout(local_size_x_id = 0) in;\n" + declarations + globals_ + prelude_.Helpers() +
                       "void main() {\n" + loop + "    int k_i = int(k_g);\n" + body_ + "  }\n}\n";
  result.source = std::move(source);
  const int64_t passes = CeilDiv(result.invocations, kGlslMaxGridInvocations);
  result.max_loop_iterations = SaturatingMultiply(passes, SaturatingAdd(1, loop_iterations_));
  if (heaviest_ != nullptr)
    result.loop_op = std::string(OpcodeName(heaviest_->opcode)) + " " + heaviest_->shape.ToString() + " (" +
                     heaviest_->name + ")";
  return result;
}

}  // namespace

StatusOr<GlslKernelParts> Emitter::EmitParts(const Computation& kernel, std::vector<std::string> buffer_names,
                                             std::string_view name_prefix) {
  inline_ = true;
  buffer_names_ = std::move(buffer_names);
  name_prefix_ = std::string(name_prefix);
  KILN_ASSIGN_OR_RETURN(GlslKernel glsl, Emit(kernel, name_prefix));
  if (glsl.takes_rng_key || !glsl.launches.empty() || glsl.has_scratch || lanes_ > 0)
    return Unimplemented("vulkan: kernel ", kernel.name(),
                         " takes a random key, several launches, scratch or subgroup lanes: a loop shader "
                         "cannot inline it");
  if (binding_types_.size() != buffer_names_.size())
    return Internal("vulkan: kernel ", kernel.name(), " has ", binding_types_.size(), " buffers, ",
                    buffer_names_.size(), " names given");
  GlslKernelParts parts;
  parts.prelude = prelude_;
  parts.globals = globals_;
  parts.body = body_;
  parts.invocations = glsl.invocations;
  parts.loop_iterations = loop_iterations_;
  parts.binding_types = binding_types_;
  return parts;
}

int64_t GlslKernelScratchBytes(const Instruction& root, const ShaderFeatures& features) {
  if ((root.opcode != Opcode::kSort && root.opcode != Opcode::kTopK) || root.operands.empty()) return 0;
  const Shape& shape = root.operand(0)->shape;
  const int64_t rank = shape.rank();
  int64_t dimension = rank - 1;
  if (root.opcode == Opcode::kSort && !root.attrs.dimensions.empty()) dimension = root.attrs.dimensions[0];
  if (dimension < 0) dimension += rank;
  const int64_t length = rank == 0 || dimension < 0 || dimension >= rank ? 1 : shape.dimensions(dimension);
  const int64_t rows = length == 0 ? 0 : shape.element_count() / length;
  // Two regions of each row's element numbers for the serial merge sort;
  // one element number per place of each row padded to a power of two for
  // the bitonic network.
  if (SortsRowsSerially(features, rows, length)) return SerialSortScratchBytes(rows, length);
  return std::max<int64_t>(rows * BitonicPaddedLength(length) * 4, 4);
}

StatusOr<GlslKernel> EmitGlslKernel(const Computation& kernel, const ShaderFeatures& features,
                                    std::string_view entry_name) {
  Emitter emitter(features);
  return emitter.Emit(kernel, entry_name);
}

StatusOr<GlslKernelParts> EmitGlslKernelParts(const Computation& kernel, const ShaderFeatures& features,
                                              std::vector<std::string> buffer_names,
                                              std::string_view name_prefix) {
  Emitter emitter(features);
  return emitter.EmitParts(kernel, std::move(buffer_names), name_prefix);
}

Status CheckGlslLoopIterations(const GlslKernel& kernel, const ShaderFeatures& features) {
  if (features.max_loop_iterations <= 0 || kernel.max_loop_iterations <= features.max_loop_iterations)
    return OkStatus();
  return Unimplemented("vulkan: cannot emit ",
                       kernel.loop_op.empty() ? "kernel " + kernel.name : kernel.loop_op, ": it needs ",
                       kernel.max_loop_iterations,
                       " loop iterations in one shader invocation and this device (Mesa's lavapipe) stops an "
                       "invocation after ",
                       features.max_loop_iterations, "; run it on the cpu backend");
}

// Emits and drops the source: the refusals are then exactly the emitter's
// (and the device's loop limit, so that fusion keeps such kernels apart),
// and emitting a kernel's text is cheap next to compiling it.
Status CheckGlslEmittable(const Computation& kernel, const ShaderFeatures& features) {
  KILN_ASSIGN_OR_RETURN(GlslKernel glsl, EmitGlslKernel(kernel, features, "check"));
  return CheckGlslLoopIterations(glsl, features);
}

Status CheckGlslInstructionEmittable(const Instruction& instruction, const ShaderFeatures& features) {
  Emitter emitter(features);
  KILN_ASSIGN_OR_RETURN(GlslKernel glsl, emitter.EmitAlone(instruction));
  return CheckGlslLoopIterations(glsl, features);
}

}  // namespace kiln::vulkan
