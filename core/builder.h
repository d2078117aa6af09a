// Builder: constructs a computation op by op, XlaBuilder style. Ops are cheap
// value handles. The first error is sticky: later ops return invalid handles,
// `first_error()` reports it at once and `Build()` returns it.
// A Builder is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/attributes.h"
#include "core/ir.h"
#include "core/literal.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

class Builder;

// A handle to an op of one Builder. Default-constructed handles are invalid.
class Op {
 public:
  Op() = default;
  bool valid() const { return builder_ != nullptr && id_ >= 0; }
  Builder* builder() const { return builder_; }
  int64_t id() const { return id_; }

 private:
  friend class Builder;
  Op(Builder* builder, int64_t id) : builder_(builder), id_(id) {}
  Builder* builder_ = nullptr;
  int64_t id_ = -1;
};

// Padding schemes of Conv and ReduceWindow in the seed's builder API.
enum class Padding { kValid, kSame };

// Low/high padding per spatial dimension for `padding` (kSame pads so that
// output = ceil(input / stride)).
std::vector<std::pair<int64_t, int64_t>> MakePadding(std::span<const int64_t> input_dims,
                                                     std::span<const int64_t> window_dims,
                                                     std::span<const int64_t> strides, Padding padding);

class Builder {
 public:
  explicit Builder(std::string name);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  const std::string& name() const { return name_; }
  // OK until the first failed op; then that op's error, forever.
  const Status& first_error() const { return first_error_; }
  StatusOr<Shape> GetShape(Op op) const;

  // Builds the module whose entry is this computation, rooted at `root`
  // (default: the last op added). Verifies it. The builder can be reused to
  // build again.
  StatusOr<std::unique_ptr<Module>> Build(Op root = Op());

  // --- Leaves
  Op Parameter(int64_t number, const Shape& shape, const std::string& name);
  Op ConstantLiteral(const Literal& literal);
  template <typename T>
  Op ConstantR0(T value) {
    return ConstantLiteral(Literal::Scalar<T>(value));
  }
  template <typename T>
  Op ConstantR1(const std::vector<T>& values) {
    return ConstantLiteral(Literal::FromVector<T>(values));
  }
  template <typename T>
  Op ConstantR2(const std::vector<std::vector<T>>& rows) {
    std::vector<T> flat;
    for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
    const int64_t cols = rows.empty() ? 0 : static_cast<int64_t>(rows[0].size());
    return ConstantLiteral(Literal::FromVector<T>(flat, {static_cast<int64_t>(rows.size()), cols}));
  }
  Op Iota(const Shape& shape, int64_t iota_dimension);

  // --- Elementwise binary ops. `broadcast_dimensions` maps the lower-rank
  // operand's dimensions into the higher-rank one's (XLA's "broadcast_dimensions"
  // variants); empty means equal shapes or a scalar operand.
  Op Add(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Sub(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Mul(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Div(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Rem(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Max(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Min(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Pow(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Atan2(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op And(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Or(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Xor(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op ShiftLeft(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op ShiftRightArithmetic(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op ShiftRightLogical(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Complex(Op real, Op imag, std::span<const int64_t> broadcast_dimensions = {});
  // Generic form used by all of the above.
  Op BinaryOp(Opcode opcode, Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});

  // --- Comparisons (result PRED).
  Op Eq(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Ne(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Ge(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Gt(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Le(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Lt(Op lhs, Op rhs, std::span<const int64_t> broadcast_dimensions = {});
  Op Compare(Op lhs, Op rhs, ComparisonDirection direction, ComparisonType type = ComparisonType::kDefault,
             std::span<const int64_t> broadcast_dimensions = {});

  // --- Elementwise unary ops.
  Op Abs(Op x);
  Op Neg(Op x);
  Op Not(Op x);
  Op Sign(Op x);
  Op Floor(Op x);
  Op Ceil(Op x);
  Op Round(Op x);  // half away from zero
  Op RoundNearestEven(Op x);
  Op Exp(Op x);
  Op Expm1(Op x);
  Op Log(Op x);
  Op Log1p(Op x);
  Op Logistic(Op x);
  Op Sqrt(Op x);
  Op Rsqrt(Op x);
  Op Cbrt(Op x);
  Op Sin(Op x);
  Op Cos(Op x);
  Op Tan(Op x);
  Op Tanh(Op x);
  Op Erf(Op x);
  Op IsFinite(Op x);
  Op Clz(Op x);
  Op Popcnt(Op x);
  Op Real(Op x);
  Op Imag(Op x);
  Op Copy(Op x);
  Op UnaryOp(Opcode opcode, Op x);

  // --- Ternary.
  Op Select(Op pred, Op on_true, Op on_false);
  Op Clamp(Op min, Op operand, Op max);

  // --- Type changes.
  Op ConvertElementType(Op operand, ElementType new_type);
  Op BitcastConvertType(Op operand, ElementType new_type);
  Op ReducePrecision(Op operand, int64_t exponent_bits, int64_t mantissa_bits);

  // --- Shape manipulation.
  // Adds major dimensions of sizes `broadcast_sizes` (seed semantics).
  Op Broadcast(Op operand, std::span<const int64_t> broadcast_sizes);
  // HLO broadcast: operand dimension i maps to output dimension broadcast_dimensions[i].
  Op BroadcastInDim(Op operand, std::span<const int64_t> out_dims,
                    std::span<const int64_t> broadcast_dimensions);
  Op Reshape(Op operand, std::span<const int64_t> new_sizes);
  // Transposes by `dimensions` first, then reshapes (seed semantics).
  Op Reshape(Op operand, std::span<const int64_t> dimensions, std::span<const int64_t> new_sizes);
  Op Collapse(Op operand, std::span<const int64_t> dimensions);
  Op Transpose(Op operand, std::span<const int64_t> permutation);
  Op Rev(Op operand, std::span<const int64_t> dimensions);
  Op ConcatInDim(std::span<const Op> operands, int64_t dimension);
  Op Pad(Op operand, Op padding_value, std::span<const PaddingDimension> padding_config);
  Op Slice(Op operand, std::span<const int64_t> start_indices, std::span<const int64_t> limit_indices,
           std::span<const int64_t> strides);
  Op SliceInDim(Op operand, int64_t start_index, int64_t limit_index, int64_t stride, int64_t dimension);
  // Seed form: `start_indices` is a rank-1 integer array with one entry per dimension.
  Op DynamicSlice(Op operand, Op start_indices, std::span<const int64_t> slice_sizes);
  // HLO form: one scalar start index per dimension.
  Op DynamicSlice(Op operand, std::span<const Op> start_indices, std::span<const int64_t> slice_sizes);
  Op DynamicUpdateSlice(Op operand, Op update, Op start_indices);
  Op DynamicUpdateSlice(Op operand, Op update, std::span<const Op> start_indices);
  Op Gather(Op operand, Op start_indices, const GatherDimensionNumbers& dimension_numbers,
            std::span<const int64_t> slice_sizes, bool indices_are_sorted = false);
  Op Scatter(std::span<const Op> operands, Op scatter_indices, std::span<const Op> updates,
             const Module& update_computation, const ScatterDimensionNumbers& dimension_numbers,
             bool indices_are_sorted = false, bool unique_indices = false);
  Op Scatter(Op operand, Op scatter_indices, Op updates, const Module& update_computation,
             const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
             bool unique_indices = false);
  Op GetDimensionSize(Op operand, int64_t dimension);

  // --- Tuples.
  Op Tuple(std::span<const Op> elements);
  Op GetTupleElement(Op tuple, int64_t index);

  // --- Contractions.
  Op Dot(Op lhs, Op rhs);
  Op DotGeneral(Op lhs, Op rhs, const DotDimensionNumbers& dimension_numbers);
  // Sets the precision of a dot's or convolution's two operands (XLA's
  // precision config; see OperandPrecision) and returns `op`.
  Op SetOperandPrecision(Op op, OperandPrecision lhs, OperandPrecision rhs);
  // Seed Conv: NCHW / OIHW, no dilation.
  Op Conv(Op lhs, Op rhs, std::span<const int64_t> window_strides, Padding padding);
  Op ConvWithGeneralPadding(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                            std::span<const std::pair<int64_t, int64_t>> padding);
  Op ConvWithGeneralDimensions(Op lhs, Op rhs, std::span<const int64_t> window_strides, Padding padding,
                               const ConvolutionDimensionNumbers& dimension_numbers);
  Op ConvGeneral(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                 std::span<const std::pair<int64_t, int64_t>> padding,
                 const ConvolutionDimensionNumbers& dimension_numbers);
  Op ConvGeneralDilated(Op lhs, Op rhs, std::span<const int64_t> window_strides,
                        std::span<const std::pair<int64_t, int64_t>> padding,
                        std::span<const int64_t> lhs_dilation, std::span<const int64_t> rhs_dilation,
                        const ConvolutionDimensionNumbers& dimension_numbers, int64_t feature_group_count = 1,
                        int64_t batch_group_count = 1);
  // NCHW input, OIHW kernel, NCHW output for `spatial_rank` spatial dims.
  static ConvolutionDimensionNumbers DefaultConvDimensionNumbers(int64_t spatial_rank = 2);

  // --- Fourier transforms.
  // XLA's fft: the discrete Fourier transform of `type` over the operand's
  // fft_length.size() (1 to 3) trailing dimensions. FFT/IFFT keep a c64/c128
  // shape; RFFT takes f32/f64 to c64/c128 with the last dimension
  // fft_length.back()/2+1; IRFFT takes that half spectrum back to f32/f64
  // with the trailing dimensions fft_length. IFFT and IRFFT scale by 1/N.
  Op Fft(Op operand, FftType type, std::span<const int64_t> fft_length);

  // --- Reductions and windows. Nested computations are built modules; they
  // are copied into the module being built.
  Op Reduce(Op operand, Op init_value, const Module& computation, std::span<const int64_t> dimensions);
  Op Reduce(std::span<const Op> operands, std::span<const Op> init_values, const Module& computation,
            std::span<const int64_t> dimensions);
  Op ReduceWindow(Op operand, Op init_value, const Module& computation,
                  std::span<const int64_t> window_dimensions, std::span<const int64_t> window_strides,
                  Padding padding);
  Op ReduceWindowWithGeneralPadding(std::span<const Op> operands, std::span<const Op> init_values,
                                    const Module& computation, std::span<const int64_t> window_dimensions,
                                    std::span<const int64_t> window_strides,
                                    std::span<const int64_t> base_dilations,
                                    std::span<const int64_t> window_dilations,
                                    std::span<const std::pair<int64_t, int64_t>> padding);
  Op SelectAndScatter(Op operand, const Module& select, std::span<const int64_t> window_dimensions,
                      std::span<const int64_t> window_strides, Padding padding, Op source, Op init_value,
                      const Module& scatter);
  Op SelectAndScatterWithGeneralPadding(Op operand, const Module& select,
                                        std::span<const int64_t> window_dimensions,
                                        std::span<const int64_t> window_strides,
                                        std::span<const std::pair<int64_t, int64_t>> padding, Op source,
                                        Op init_value, const Module& scatter);
  Op Map(std::span<const Op> operands, const Module& computation, std::span<const int64_t> dimensions);
  // Seed Sort: ascending sort of one array along its last dimension.
  Op Sort(Op operand);
  // Variadic sort by `comparator` (2N scalar parameters -> PRED) along `dimension`.
  Op Sort(std::span<const Op> operands, const Module& comparator, int64_t dimension = -1,
          bool is_stable = false);
  // The k largest (or smallest) elements along the last dimension and their
  // s32 indices, as a tuple; equal elements keep index order.
  Op TopK(Op operand, int64_t k, bool largest = true);
  // Sum across replicas (one replica: identity).
  Op CrossReplicaSum(Op operand);
  Op AllReduce(Op operand, const Module& computation);

  // --- Batch normalisation (legacy ops of the seed).
  Op BatchNormTraining(Op operand, Op scale, Op offset, float epsilon, int64_t feature_index);
  Op BatchNormInference(Op operand, Op scale, Op offset, Op mean, Op variance, float epsilon,
                        int64_t feature_index);
  Op BatchNormGrad(Op operand, Op scale, Op mean, Op variance, Op grad_output, float epsilon,
                   int64_t feature_index);

  // --- Control flow.
  Op Call(const Module& computation, std::span<const Op> operands);
  Op While(const Module& condition, const Module& body, Op init);
  Op Conditional(Op predicate, Op true_operand, const Module& true_computation, Op false_operand,
                 const Module& false_computation);
  // N-way: branch_index (S32 scalar) out of range runs the last branch.
  Op Conditional(Op branch_index, std::span<const Module* const> branch_computations,
                 std::span<const Op> branch_operands);
  Op OptimizationBarrier(Op operand);

  // --- Random numbers.
  Op RngUniform(Op a, Op b, const Shape& shape);
  Op RngNormal(Op mu, Op sigma, const Shape& shape);
  // PRED... no: result has the element type of `p` is not allowed by XLA; the
  // seed's RngBernoulli gives an S32/U32/F32 array of 0/1 with P(1) = p.
  Op RngBernoulli(Op p, const Shape& shape);
  // Returns (new_state, bits) with bits of `shape`.
  Op RngBitGenerator(RngAlgorithm algorithm, Op initial_state, const Shape& shape);

  // --- Host communication and extension.
  // Returns a tuple (data, token) in HLO; this form returns just the data.
  Op Infeed(const Shape& shape, const std::string& config = "");
  Op Outfeed(Op operand, const std::string& config = "");
  Op CustomCall(const std::string& target, std::span<const Op> operands, const Shape& shape,
                const std::string& opaque = "", bool has_side_effect = false);
  Op AfterAll(std::span<const Op> tokens);
  Op CreateToken();

  // Low-level: adds an instruction after shape inference. `declared` as in
  // InferShape. Used by the op methods above.
  Op AddInstruction(Opcode opcode, std::span<const Op> operands, const Attributes& attrs,
                    std::span<const Module* const> called = {}, const Shape* declared = nullptr,
                    const Literal* literal = nullptr);

 private:
  // Records `status` as the first error (if none yet) and returns an invalid op.
  Op Fail(const Status& status);
  StatusOr<Instruction*> Lookup(Op op, const char* what) const;
  // Imports `computation`'s entry (and its callees) into the pending module.
  StatusOr<Computation*> Import(const Module& computation);

  std::string name_;
  Status first_error_;
  std::unique_ptr<Module> pending_;     // holds imported computations
  std::unique_ptr<Computation> entry_;  // the computation being built
  std::vector<Instruction*> ops_;       // Op id -> instruction
  std::vector<std::pair<const Module*, Computation*>> imported_;
  int64_t next_name_ = 0;
  std::unordered_set<std::string> instruction_names_;  // every name in entry_
};

}  // namespace kiln
