// Shape inference: for every op one valid case and at least one refused case,
// checking that errors are INVALID_ARGUMENT and name the op.
#include "core/shape_inference.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using ET = ElementType;

Shape F32(std::vector<int64_t> dims) { return Shape(ET::kF32, std::move(dims)); }
Shape S32(std::vector<int64_t> dims) { return Shape(ET::kS32, std::move(dims)); }
Shape U32(std::vector<int64_t> dims) { return Shape(ET::kU32, std::move(dims)); }
Shape Pred(std::vector<int64_t> dims) { return Shape(ET::kPred, std::move(dims)); }

ProgramShape Sig(std::vector<Shape> parameters, Shape result) {
  ProgramShape shape;
  shape.parameters = std::move(parameters);
  shape.result = std::move(result);
  return shape;
}

StatusOr<Shape> Infer(Opcode opcode, std::vector<Shape> operands, const Attributes& attrs = {},
                      std::vector<ProgramShape> called = {}, const Shape* declared = nullptr) {
  return InferShape(opcode, operands, attrs, called, declared);
}

void ExpectShape(const StatusOr<Shape>& result, const Shape& expected) {
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->Compatible(expected)) << result->ToString() << " vs " << expected.ToString();
}

// The error is INVALID_ARGUMENT, starts with the op name and contains `text`.
void ExpectError(const StatusOr<Shape>& result, Opcode opcode, const std::string& text) {
  ASSERT_FALSE(result.ok()) << "unexpectedly inferred " << result->ToString();
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = result.status().message();
  EXPECT_EQ(message.rfind(std::string(OpcodeName(opcode)) + ":", 0), 0u) << message;
  EXPECT_NE(message.find(text), std::string::npos) << "'" << text << "' not in: " << message;
}

TEST(ShapeInferenceTest, BinaryEqualShapes) {
  for (Opcode op : {Opcode::kAdd, Opcode::kSubtract, Opcode::kMultiply, Opcode::kDivide, Opcode::kRemainder,
                    Opcode::kMaximum, Opcode::kMinimum, Opcode::kPower, Opcode::kAtan2}) {
    ExpectShape(Infer(op, {F32({2, 3}), F32({2, 3})}), F32({2, 3}));
  }
  for (Opcode op : {Opcode::kAnd, Opcode::kOr, Opcode::kXor}) {
    ExpectShape(Infer(op, {Pred({4}), Pred({4})}), Pred({4}));
    ExpectShape(Infer(op, {S32({4}), S32({4})}), S32({4}));
  }
  for (Opcode op : {Opcode::kShiftLeft, Opcode::kShiftRightArithmetic, Opcode::kShiftRightLogical}) {
    ExpectShape(Infer(op, {U32({4}), U32({4})}), U32({4}));
  }
}

TEST(ShapeInferenceTest, BinaryShapeMismatchNamesShapes) {
  ExpectError(
      Infer(Opcode::kAdd, {F32({2, 3}), F32({3})}), Opcode::kAdd,
      "shapes f32[2,3] and f32[3] are not compatible; expected equal shapes (use broadcast_dimensions)");
  ExpectError(Infer(Opcode::kAdd, {F32({2}), S32({2})}), Opcode::kAdd, "element types");
  ExpectError(Infer(Opcode::kAdd, {F32({2})}), Opcode::kAdd, "takes 2 operands");
  ExpectError(Infer(Opcode::kMultiply, {Shape::Tuple({F32({2})}), F32({2})}), Opcode::kMultiply,
              "must be an array");
}

TEST(ShapeInferenceTest, BinaryTypeRules) {
  ExpectError(Infer(Opcode::kAnd, {F32({2}), F32({2})}), Opcode::kAnd, "pred or an integer");
  ExpectError(Infer(Opcode::kShiftLeft, {Pred({2}), Pred({2})}), Opcode::kShiftLeft, "integer");
  ExpectError(Infer(Opcode::kAdd, {Pred({2}), Pred({2})}), Opcode::kAdd, "numeric");
  ExpectError(Infer(Opcode::kMaximum, {Shape(ET::kC64, {2}), Shape(ET::kC64, {2})}), Opcode::kMaximum,
              "non-complex");
  ExpectError(Infer(Opcode::kAtan2, {S32({2}), S32({2})}), Opcode::kAtan2, "floating-point");
}

TEST(ShapeInferenceTest, UnaryOps) {
  for (Opcode op : {Opcode::kExp,
                    Opcode::kExpm1,
                    Opcode::kLog,
                    Opcode::kLog1p,
                    Opcode::kLogistic,
                    Opcode::kSqrt,
                    Opcode::kRsqrt,
                    Opcode::kCbrt,
                    Opcode::kSin,
                    Opcode::kCos,
                    Opcode::kTan,
                    Opcode::kTanh,
                    Opcode::kErf,
                    Opcode::kFloor,
                    Opcode::kCeil,
                    Opcode::kRoundNearestAfz,
                    Opcode::kRoundNearestEven,
                    Opcode::kNegate,
                    Opcode::kSign,
                    Opcode::kAbs,
                    Opcode::kCopy}) {
    ExpectShape(Infer(op, {F32({3})}), F32({3}));
    ExpectError(Infer(op, {}), op, "takes 1 operands");
  }
  ExpectShape(Infer(Opcode::kNot, {Pred({2})}), Pred({2}));
  ExpectShape(Infer(Opcode::kClz, {S32({2})}), S32({2}));
  ExpectShape(Infer(Opcode::kPopcnt, {U32({2})}), U32({2}));
  ExpectShape(Infer(Opcode::kAbs, {Shape(ET::kC64, {2})}), F32({2}));
  ExpectShape(Infer(Opcode::kCopy, {Shape::Tuple({F32({1}), Shape::Token()})}),
              Shape::Tuple({F32({1}), Shape::Token()}));
}

TEST(ShapeInferenceTest, UnaryTypeErrors) {
  ExpectError(Infer(Opcode::kExp, {S32({2})}), Opcode::kExp, "floating-point or complex");
  ExpectError(Infer(Opcode::kSin, {Pred({2})}), Opcode::kSin, "floating-point or complex");
  ExpectError(Infer(Opcode::kNot, {F32({2})}), Opcode::kNot, "pred or an integer");
  ExpectError(Infer(Opcode::kClz, {F32({2})}), Opcode::kClz, "integer");
  ExpectError(Infer(Opcode::kPopcnt, {Pred({2})}), Opcode::kPopcnt, "integer");
  ExpectError(Infer(Opcode::kFloor, {S32({2})}), Opcode::kFloor, "floating-point");
  ExpectError(Infer(Opcode::kNegate, {Pred({2})}), Opcode::kNegate, "numeric");
  ExpectError(Infer(Opcode::kSign, {U32({2})}), Opcode::kSign, "signed");
  ExpectError(Infer(Opcode::kAbs, {Shape::Token()}), Opcode::kAbs, "must be an array");
}

TEST(ShapeInferenceTest, ComplexRealImagIsFinite) {
  ExpectShape(Infer(Opcode::kComplex, {F32({2}), F32({2})}), Shape(ET::kC64, {2}));
  ExpectShape(Infer(Opcode::kComplex, {Shape(ET::kF64, {}), Shape(ET::kF64, {})}), Shape(ET::kC128, {}));
  ExpectError(Infer(Opcode::kComplex, {S32({2}), S32({2})}), Opcode::kComplex, "f32 or f64");
  ExpectShape(Infer(Opcode::kReal, {Shape(ET::kC64, {3})}), F32({3}));
  ExpectShape(Infer(Opcode::kImag, {Shape(ET::kC128, {3})}), Shape(ET::kF64, {3}));
  ExpectError(Infer(Opcode::kImag, {S32({3})}), Opcode::kImag, "complex");
  ExpectShape(Infer(Opcode::kIsFinite, {F32({3})}), Pred({3}));
  ExpectError(Infer(Opcode::kIsFinite, {S32({3})}), Opcode::kIsFinite, "floating-point");
}

TEST(ShapeInferenceTest, Compare) {
  Attributes attrs;
  attrs.comparison_direction = ComparisonDirection::kLt;
  ExpectShape(Infer(Opcode::kCompare, {F32({2}), F32({2})}, attrs), Pred({2}));
  ExpectError(Infer(Opcode::kCompare, {F32({2}), F32({3})}, attrs), Opcode::kCompare, "not compatible");
  ExpectError(Infer(Opcode::kCompare, {Shape(ET::kC64, {2}), Shape(ET::kC64, {2})}, attrs), Opcode::kCompare,
              "EQ and NE");
  attrs.comparison_type = ComparisonType::kSigned;
  ExpectError(Infer(Opcode::kCompare, {F32({2}), F32({2})}, attrs), Opcode::kCompare, "SIGNED");
  ExpectShape(Infer(Opcode::kCompare, {S32({2}), S32({2})}, attrs), Pred({2}));
  attrs.comparison_type = ComparisonType::kTotalOrder;
  ExpectShape(Infer(Opcode::kCompare, {F32({}), F32({})}, attrs), Pred({}));
}

TEST(ShapeInferenceTest, SelectAndClamp) {
  ExpectShape(Infer(Opcode::kSelect, {Pred({2}), F32({2}), F32({2})}), F32({2}));
  ExpectShape(Infer(Opcode::kSelect, {Pred({}), F32({2}), F32({2})}), F32({2}));
  ExpectError(Infer(Opcode::kSelect, {Pred({3}), F32({2}), F32({2})}), Opcode::kSelect, "predicate");
  ExpectError(Infer(Opcode::kSelect, {S32({2}), F32({2}), F32({2})}), Opcode::kSelect, "pred");
  ExpectError(Infer(Opcode::kSelect, {Pred({2}), F32({2}), S32({2})}), Opcode::kSelect, "element types");
  ExpectShape(Infer(Opcode::kClamp, {F32({}), F32({4}), F32({})}), F32({4}));
  ExpectShape(Infer(Opcode::kClamp, {F32({4}), F32({4}), F32({4})}), F32({4}));
  ExpectError(Infer(Opcode::kClamp, {F32({3}), F32({4}), F32({})}), Opcode::kClamp,
              "scalar or have the shape");
  ExpectError(Infer(Opcode::kClamp, {S32({}), F32({4}), F32({})}), Opcode::kClamp, "element types");
}

TEST(ShapeInferenceTest, ConvertAndBitcast) {
  const Shape s32 = S32({2, 3});
  ExpectShape(Infer(Opcode::kConvert, {F32({2, 3})}, {}, {}, &s32), s32);
  ExpectError(Infer(Opcode::kConvert, {F32({2, 3})}), Opcode::kConvert, "must be declared");
  const Shape wrong = S32({3});
  ExpectError(Infer(Opcode::kConvert, {F32({2, 3})}, {}, {}, &wrong), Opcode::kConvert, "dimensions");
  const Shape f32 = F32({2});
  ExpectError(Infer(Opcode::kConvert, {Shape(ET::kC64, {2})}, {}, {}, &f32), Opcode::kConvert, "complex");

  const Shape same = U32({2});
  ExpectShape(Infer(Opcode::kBitcastConvert, {F32({2})}, {}, {}, &same), same);
  const Shape narrower = Shape(ET::kU8, {2, 4});
  ExpectShape(Infer(Opcode::kBitcastConvert, {F32({2})}, {}, {}, &narrower), narrower);
  const Shape wider = Shape(ET::kF64, {3});
  ExpectShape(Infer(Opcode::kBitcastConvert, {F32({3, 2})}, {}, {}, &wider), wider);
  ExpectError(Infer(Opcode::kBitcastConvert, {F32({3, 3})}, {}, {}, &wider), Opcode::kBitcastConvert,
              "minor dimension of size 2");
  ExpectError(Infer(Opcode::kBitcastConvert, {F32({2})}, {}, {}, &wrong), Opcode::kBitcastConvert,
              "does not match");
}

TEST(ShapeInferenceTest, ReducePrecision) {
  Attributes attrs;
  attrs.exponent_bits = 5;
  attrs.mantissa_bits = 10;
  ExpectShape(Infer(Opcode::kReducePrecision, {F32({2})}, attrs), F32({2}));
  ExpectError(Infer(Opcode::kReducePrecision, {S32({2})}, attrs), Opcode::kReducePrecision, "floating-point");
  attrs.exponent_bits = 0;
  ExpectError(Infer(Opcode::kReducePrecision, {F32({2})}, attrs), Opcode::kReducePrecision, "exponent_bits");
}

TEST(ShapeInferenceTest, Broadcast) {
  Attributes attrs;
  attrs.dimensions = {1};
  const Shape out = F32({2, 3});
  ExpectShape(Infer(Opcode::kBroadcast, {F32({3})}, attrs, {}, &out), out);
  ExpectShape(Infer(Opcode::kBroadcast, {F32({1})}, attrs, {}, &out), out);  // degenerate
  ExpectError(Infer(Opcode::kBroadcast, {F32({2})}, attrs, {}, &out), Opcode::kBroadcast, "cannot broadcast");
  attrs.dimensions = {2};
  ExpectError(Infer(Opcode::kBroadcast, {F32({3})}, attrs, {}, &out), Opcode::kBroadcast, "out of range");
  attrs.dimensions = {};
  ExpectError(Infer(Opcode::kBroadcast, {F32({3})}, attrs, {}, &out), Opcode::kBroadcast, "must map each");
  ExpectError(Infer(Opcode::kBroadcast, {F32({3})}, attrs), Opcode::kBroadcast, "declared");
}

TEST(ShapeInferenceTest, Reshape) {
  const Shape out = F32({3, 2});
  ExpectShape(Infer(Opcode::kReshape, {F32({2, 3})}, {}, {}, &out), out);
  const Shape bad = F32({4});
  ExpectError(Infer(Opcode::kReshape, {F32({2, 3})}, {}, {}, &bad), Opcode::kReshape, "6 elements");
}

TEST(ShapeInferenceTest, TransposeAndReverse) {
  Attributes attrs;
  attrs.dimensions = {1, 2, 0};
  ExpectShape(Infer(Opcode::kTranspose, {F32({2, 3, 4})}, attrs), F32({3, 4, 2}));
  attrs.dimensions = {1, 1, 0};
  ExpectError(Infer(Opcode::kTranspose, {F32({2, 3, 4})}, attrs), Opcode::kTranspose, "appears twice");
  attrs.dimensions = {1, 0};
  ExpectError(Infer(Opcode::kTranspose, {F32({2, 3, 4})}, attrs), Opcode::kTranspose, "3 entries");
  ExpectShape(Infer(Opcode::kReverse, {F32({2, 3})}, attrs), F32({2, 3}));
  attrs.dimensions = {2};
  ExpectError(Infer(Opcode::kReverse, {F32({2, 3})}, attrs), Opcode::kReverse, "out of range");
}

TEST(ShapeInferenceTest, Concatenate) {
  Attributes attrs;
  attrs.dimensions = {0};
  ExpectShape(Infer(Opcode::kConcatenate, {F32({2, 3}), F32({4, 3})}, attrs), F32({6, 3}));
  ExpectError(Infer(Opcode::kConcatenate, {F32({2, 3}), F32({4, 2})}, attrs), Opcode::kConcatenate,
              "except in dimension 0");
  ExpectError(Infer(Opcode::kConcatenate, {}, attrs), Opcode::kConcatenate, "at least one");
  attrs.dimensions = {2};
  ExpectError(Infer(Opcode::kConcatenate, {F32({2, 3})}, attrs), Opcode::kConcatenate, "out of range");
}

TEST(ShapeInferenceTest, Pad) {
  Attributes attrs;
  attrs.padding = {{1, 2, 1}, {-1, 0, 0}};
  ExpectShape(Infer(Opcode::kPad, {F32({2, 3}), F32({})}, attrs), F32({6, 2}));
  ExpectError(Infer(Opcode::kPad, {F32({2, 3}), S32({})}, attrs), Opcode::kPad, "element type");
  attrs.padding = {{0, 0, -1}, {0, 0, 0}};
  ExpectError(Infer(Opcode::kPad, {F32({2, 3}), F32({})}, attrs), Opcode::kPad, "interior");
  attrs.padding = {{0, 0, 0}, {-2, -2, 0}};
  ExpectError(Infer(Opcode::kPad, {F32({2, 3}), F32({})}, attrs), Opcode::kPad, "negative size");
  attrs.padding = {{0, 0, 0}};
  ExpectError(Infer(Opcode::kPad, {F32({2, 3}), F32({})}, attrs), Opcode::kPad, "rank 2");
}

TEST(ShapeInferenceTest, Slice) {
  Attributes attrs;
  attrs.slice_starts = {0, 1};
  attrs.slice_limits = {2, 5};
  attrs.slice_strides = {1, 2};
  ExpectShape(Infer(Opcode::kSlice, {F32({2, 5})}, attrs), F32({2, 2}));
  attrs.slice_limits = {2, 6};
  ExpectError(Infer(Opcode::kSlice, {F32({2, 5})}, attrs), Opcode::kSlice, "out of range");
  attrs.slice_limits = {2};
  ExpectError(Infer(Opcode::kSlice, {F32({2, 5})}, attrs), Opcode::kSlice, "must each have 2 entries");
}

TEST(ShapeInferenceTest, DynamicSliceAndUpdate) {
  Attributes attrs;
  attrs.dynamic_slice_sizes = {1, 2};
  ExpectShape(Infer(Opcode::kDynamicSlice, {F32({3, 4}), S32({}), S32({})}, attrs), F32({1, 2}));
  ExpectError(Infer(Opcode::kDynamicSlice, {F32({3, 4}), S32({})}, attrs), Opcode::kDynamicSlice,
              "expected 2");
  ExpectError(Infer(Opcode::kDynamicSlice, {F32({3, 4}), F32({}), F32({})}, attrs), Opcode::kDynamicSlice,
              "integer scalar");
  attrs.dynamic_slice_sizes = {4, 2};
  ExpectError(Infer(Opcode::kDynamicSlice, {F32({3, 4}), S32({}), S32({})}, attrs), Opcode::kDynamicSlice,
              "out of range");
  ExpectShape(Infer(Opcode::kDynamicUpdateSlice, {F32({3, 4}), F32({1, 2}), S32({}), S32({})}), F32({3, 4}));
  ExpectError(Infer(Opcode::kDynamicUpdateSlice, {F32({3, 4}), F32({4, 2}), S32({}), S32({})}),
              Opcode::kDynamicUpdateSlice, "fit inside");
  ExpectError(Infer(Opcode::kDynamicUpdateSlice, {F32({3, 4}), F32({1, 2}), S32({})}),
              Opcode::kDynamicUpdateSlice, "expected 2");
}

TEST(ShapeInferenceTest, Gather) {
  // Gather rows of a [5,4] matrix by a [3] index vector: result [3,4].
  Attributes attrs;
  attrs.gather->offset_dims = {1};
  attrs.gather->collapsed_slice_dims = {0};
  attrs.gather->start_index_map = {0};
  attrs.gather->index_vector_dim = 1;
  attrs.gather_slice_sizes = {1, 4};
  ExpectShape(Infer(Opcode::kGather, {F32({5, 4}), S32({3})}, attrs), F32({3, 4}));
  attrs.gather_slice_sizes = {2, 4};
  ExpectError(Infer(Opcode::kGather, {F32({5, 4}), S32({3})}, attrs), Opcode::kGather,
              "collapsed dimension 0");
  attrs.gather_slice_sizes = {1, 4};
  ExpectError(Infer(Opcode::kGather, {F32({5, 4}), F32({3})}, attrs), Opcode::kGather, "integer array");
  attrs.gather->start_index_map = {0, 1};
  ExpectError(Infer(Opcode::kGather, {F32({5, 4}), S32({3})}, attrs), Opcode::kGather, "start_index_map");
}

TEST(ShapeInferenceTest, GatherWithBatchingDims) {
  // operand [2,5,4], indices [2,3,1] with batch dim 0 of both: result [2,3,4].
  Attributes attrs;
  attrs.gather->offset_dims = {2};
  attrs.gather->collapsed_slice_dims = {1};
  attrs.gather->start_index_map = {1};
  attrs.gather->index_vector_dim = 2;
  attrs.gather->operand_batching_dims = {0};
  attrs.gather->start_indices_batching_dims = {0};
  attrs.gather_slice_sizes = {1, 1, 4};
  ExpectShape(Infer(Opcode::kGather, {F32({2, 5, 4}), S32({2, 3, 1})}, attrs), F32({2, 3, 4}));
  ExpectError(Infer(Opcode::kGather, {F32({3, 5, 4}), S32({2, 3, 1})}, attrs), Opcode::kGather,
              "differ in size");
}

TEST(ShapeInferenceTest, Scatter) {
  // Scatter-add rows [3,4] into [5,4] at indices [3].
  Attributes attrs;
  attrs.scatter->update_window_dims = {1};
  attrs.scatter->inserted_window_dims = {0};
  attrs.scatter->scatter_dims_to_operand_dims = {0};
  attrs.scatter->index_vector_dim = 1;
  const ProgramShape add = Sig({F32({}), F32({})}, F32({}));
  ExpectShape(Infer(Opcode::kScatter, {F32({5, 4}), S32({3}), F32({3, 4})}, attrs, {add}), F32({5, 4}));
  ExpectError(Infer(Opcode::kScatter, {F32({5, 4}), S32({3}), F32({2, 4})}, attrs, {add}), Opcode::kScatter,
              "must match indices");
  ExpectError(Infer(Opcode::kScatter, {F32({5, 4}), S32({3}), F32({3, 4})}, attrs, {Sig({F32({})}, F32({}))}),
              Opcode::kScatter, "takes 1 parameters; expected 2");
  ExpectError(Infer(Opcode::kScatter, {F32({5, 4}), S32({3})}, attrs, {add}), Opcode::kScatter, "N updates");
  // Variadic: two operands give a tuple.
  const ProgramShape add2 = Sig({F32({}), S32({}), F32({}), S32({})}, Shape::Tuple({F32({}), S32({})}));
  ExpectShape(
      Infer(Opcode::kScatter, {F32({5, 4}), S32({5, 4}), S32({3}), F32({3, 4}), S32({3, 4})}, attrs, {add2}),
      Shape::Tuple({F32({5, 4}), S32({5, 4})}));
}

TEST(ShapeInferenceTest, IotaTupleGetTupleElement) {
  Attributes attrs;
  attrs.iota_dimension = 1;
  const Shape iota = S32({2, 3});
  ExpectShape(Infer(Opcode::kIota, {}, attrs, {}, &iota), iota);
  attrs.iota_dimension = 2;
  ExpectError(Infer(Opcode::kIota, {}, attrs, {}, &iota), Opcode::kIota, "out of range");
  const Shape tuple = Shape::Tuple({F32({2}), S32({})});
  ExpectShape(Infer(Opcode::kTuple, {F32({2}), S32({})}), tuple);
  attrs.tuple_index = 1;
  ExpectShape(Infer(Opcode::kGetTupleElement, {tuple}, attrs), S32({}));
  attrs.tuple_index = 2;
  ExpectError(Infer(Opcode::kGetTupleElement, {tuple}, attrs), Opcode::kGetTupleElement, "out of range");
  ExpectError(Infer(Opcode::kGetTupleElement, {F32({2})}, attrs), Opcode::kGetTupleElement,
              "must be a tuple");
}

TEST(ShapeInferenceTest, Dot) {
  Attributes attrs;
  attrs.dot->lhs_contracting_dimensions = {1};
  attrs.dot->rhs_contracting_dimensions = {0};
  ExpectShape(Infer(Opcode::kDot, {F32({2, 3}), F32({3, 4})}, attrs), F32({2, 4}));
  ExpectError(Infer(Opcode::kDot, {F32({2, 3}), F32({2, 4})}, attrs), Opcode::kDot, "differ in size");
  ExpectError(Infer(Opcode::kDot, {F32({2, 3}), S32({3, 4})}, attrs), Opcode::kDot, "same element type");
  attrs.dot->lhs_batch_dimensions = {0};
  attrs.dot->rhs_batch_dimensions = {0};
  attrs.dot->lhs_contracting_dimensions = {2};
  attrs.dot->rhs_contracting_dimensions = {1};
  ExpectShape(Infer(Opcode::kDot, {F32({5, 2, 3}), F32({5, 3, 4})}, attrs), F32({5, 2, 4}));
  attrs.dot->rhs_contracting_dimensions = {3};
  ExpectError(Infer(Opcode::kDot, {F32({5, 2, 3}), F32({5, 3, 4})}, attrs), Opcode::kDot, "out of range");
}

Attributes ConvAttrs(int64_t kernel_size, int64_t stride, int64_t pad) {
  Attributes attrs;
  attrs.conv->input_spatial_dimensions = {2, 3};
  attrs.conv->kernel_spatial_dimensions = {2, 3};
  attrs.conv->output_spatial_dimensions = {2, 3};
  for (int i = 0; i < 2; ++i) {
    WindowDimension dim;
    dim.size = kernel_size;
    dim.stride = stride;
    dim.padding_low = dim.padding_high = pad;
    attrs.window->dimensions.push_back(dim);
  }
  return attrs;
}

TEST(ShapeInferenceTest, Convolution) {
  Attributes attrs = ConvAttrs(3, 1, 1);
  ExpectShape(Infer(Opcode::kConvolution, {F32({1, 2, 5, 5}), F32({4, 2, 3, 3})}, attrs), F32({1, 4, 5, 5}));
  attrs = ConvAttrs(3, 2, 0);
  ExpectShape(Infer(Opcode::kConvolution, {F32({1, 2, 7, 7}), F32({4, 2, 3, 3})}, attrs), F32({1, 4, 3, 3}));
  ExpectError(Infer(Opcode::kConvolution, {F32({1, 3, 7, 7}), F32({4, 2, 3, 3})}, attrs),
              Opcode::kConvolution, "input features");
  ExpectError(Infer(Opcode::kConvolution, {F32({1, 2, 7, 7}), F32({4, 2, 2, 3})}, attrs),
              Opcode::kConvolution, "window size");
  ExpectError(Infer(Opcode::kConvolution, {F32({1, 2, 7}), F32({4, 2, 3, 3})}, attrs), Opcode::kConvolution,
              "rank 4");
}

TEST(ShapeInferenceTest, ConvolutionDilationAndGroups) {
  Attributes attrs = ConvAttrs(3, 1, 0);
  for (auto& dim : attrs.window->dimensions) {
    dim.base_dilation = 2;
    dim.window_dilation = 2;
  }
  // base: (5-1)*2+1 = 9; window: (3-1)*2+1 = 5; output 9-5+1 = 5.
  ExpectShape(Infer(Opcode::kConvolution, {F32({1, 2, 5, 5}), F32({4, 2, 3, 3})}, attrs), F32({1, 4, 5, 5}));
  attrs = ConvAttrs(1, 1, 0);
  attrs.feature_group_count = 2;
  ExpectShape(Infer(Opcode::kConvolution, {F32({1, 4, 5, 5}), F32({6, 2, 1, 1})}, attrs), F32({1, 6, 5, 5}));
  ExpectError(Infer(Opcode::kConvolution, {F32({1, 4, 5, 5}), F32({5, 2, 1, 1})}, attrs),
              Opcode::kConvolution, "divisible");
  attrs.feature_group_count = 1;
  attrs.batch_group_count = 2;
  ExpectShape(Infer(Opcode::kConvolution, {F32({4, 2, 5, 5}), F32({6, 2, 1, 1})}, attrs), F32({2, 6, 5, 5}));
  attrs.feature_group_count = 2;
  ExpectError(Infer(Opcode::kConvolution, {F32({4, 4, 5, 5}), F32({6, 2, 1, 1})}, attrs),
              Opcode::kConvolution, "at most one");
}

TEST(ShapeInferenceTest, Reduce) {
  Attributes attrs;
  attrs.dimensions = {0};
  const ProgramShape add = Sig({F32({}), F32({})}, F32({}));
  ExpectShape(Infer(Opcode::kReduce, {F32({2, 3}), F32({})}, attrs, {add}), F32({3}));
  ExpectError(Infer(Opcode::kReduce, {F32({2, 3}), F32({})}, attrs, {Sig({F32({})}, F32({}))}),
              Opcode::kReduce, "to_apply computation takes 1 parameters; expected 2");
  ExpectError(Infer(Opcode::kReduce, {F32({2, 3}), F32({})}, attrs, {Sig({F32({2}), F32({2})}, F32({2}))}),
              Opcode::kReduce, "scalar");
  ExpectError(Infer(Opcode::kReduce, {F32({2, 3}), F32({2})}, attrs, {add}), Opcode::kReduce, "init value");
  attrs.dimensions = {2};
  ExpectError(Infer(Opcode::kReduce, {F32({2, 3}), F32({})}, attrs, {add}), Opcode::kReduce, "out of range");
}

TEST(ShapeInferenceTest, VariadicReduce) {
  Attributes attrs;
  attrs.dimensions = {1};
  const ProgramShape argmax = Sig({F32({}), S32({}), F32({}), S32({})}, Shape::Tuple({F32({}), S32({})}));
  ExpectShape(Infer(Opcode::kReduce, {F32({2, 3}), S32({2, 3}), F32({}), S32({})}, attrs, {argmax}),
              Shape::Tuple({F32({2}), S32({2})}));
  ExpectError(Infer(Opcode::kReduce, {F32({2, 3}), S32({2, 3}), F32({})}, attrs, {argmax}), Opcode::kReduce,
              "N init values");
}

Window MakeWindow2D(int64_t size, int64_t stride) {
  Window window;
  for (int i = 0; i < 2; ++i) {
    WindowDimension dim;
    dim.size = size;
    dim.stride = stride;
    window.dimensions.push_back(dim);
  }
  return window;
}

TEST(ShapeInferenceTest, ReduceWindow) {
  Attributes attrs;
  attrs.window = MakeWindow2D(2, 3);
  const ProgramShape max = Sig({F32({}), F32({})}, F32({}));
  ExpectShape(Infer(Opcode::kReduceWindow, {F32({4, 6}), F32({})}, attrs, {max}), F32({1, 2}));
  attrs.window->dimensions.pop_back();
  ExpectError(Infer(Opcode::kReduceWindow, {F32({4, 6}), F32({})}, attrs, {max}), Opcode::kReduceWindow,
              "window has 1 dimensions");
  attrs.window = MakeWindow2D(2, 0);
  ExpectError(Infer(Opcode::kReduceWindow, {F32({4, 6}), F32({})}, attrs, {max}), Opcode::kReduceWindow,
              ">= 1");
}

TEST(ShapeInferenceTest, SelectAndScatter) {
  Attributes attrs;
  attrs.window = MakeWindow2D(2, 2);
  const ProgramShape ge = Sig({F32({}), F32({})}, Pred({}));
  const ProgramShape add = Sig({F32({}), F32({})}, F32({}));
  ExpectShape(Infer(Opcode::kSelectAndScatter, {F32({4, 6}), F32({2, 3}), F32({})}, attrs, {ge, add}),
              F32({4, 6}));
  ExpectError(Infer(Opcode::kSelectAndScatter, {F32({4, 6}), F32({2, 2}), F32({})}, attrs, {ge, add}),
              Opcode::kSelectAndScatter, "source");
  ExpectError(Infer(Opcode::kSelectAndScatter, {F32({4, 6}), F32({2, 3}), F32({})}, attrs, {add, add}),
              Opcode::kSelectAndScatter, "select computation");
}

TEST(ShapeInferenceTest, Sort) {
  Attributes attrs;
  attrs.dimensions = {-1};
  const ProgramShape lt = Sig({F32({}), F32({})}, Pred({}));
  ExpectShape(Infer(Opcode::kSort, {F32({2, 3})}, attrs, {lt}), F32({2, 3}));
  const ProgramShape lt2 = Sig({F32({}), F32({}), S32({}), S32({})}, Pred({}));
  ExpectShape(Infer(Opcode::kSort, {F32({3}), S32({3})}, attrs, {lt2}), Shape::Tuple({F32({3}), S32({3})}));
  ExpectError(Infer(Opcode::kSort, {F32({3}), S32({3})}, attrs, {lt}), Opcode::kSort, "comparator takes 2");
  ExpectError(Infer(Opcode::kSort, {F32({3})}, attrs, {Sig({F32({}), F32({})}, F32({}))}), Opcode::kSort,
              "pred[]");
  attrs.dimensions = {2};
  ExpectError(Infer(Opcode::kSort, {F32({2, 3})}, attrs, {lt}), Opcode::kSort, "out of range");
}

TEST(ShapeInferenceTest, MapAndAllReduce) {
  const ProgramShape add = Sig({F32({}), F32({})}, F32({}));
  ExpectShape(Infer(Opcode::kMap, {F32({4}), F32({4})}, {}, {add}), F32({4}));
  ExpectError(Infer(Opcode::kMap, {F32({4}), F32({5})}, {}, {add}), Opcode::kMap, "equal dimensions");
  ExpectError(Infer(Opcode::kMap, {F32({4})}, {}, {add}), Opcode::kMap, "takes 2 parameters; expected 1");
  ExpectShape(Infer(Opcode::kAllReduce, {F32({4})}, {}, {add}), F32({4}));
  ExpectError(Infer(Opcode::kAllReduce, {S32({4})}, {}, {add}), Opcode::kAllReduce, "to_apply");
}

TEST(ShapeInferenceTest, BatchNorm) {
  Attributes attrs;
  attrs.feature_index = 1;
  const Shape x = F32({2, 3, 4});
  const Shape f = F32({3});
  ExpectShape(Infer(Opcode::kBatchNormTraining, {x, f, f}, attrs), Shape::Tuple({x, f, f}));
  ExpectShape(Infer(Opcode::kBatchNormInference, {x, f, f, f, f}, attrs), x);
  ExpectShape(Infer(Opcode::kBatchNormGrad, {x, f, f, f, x}, attrs), Shape::Tuple({x, f, f}));
  ExpectError(Infer(Opcode::kBatchNormTraining, {x, F32({4}), f}, attrs), Opcode::kBatchNormTraining,
              "expected f32[3]");
  attrs.feature_index = 3;
  ExpectError(Infer(Opcode::kBatchNormInference, {x, f, f, f, f}, attrs), Opcode::kBatchNormInference,
              "feature_index");
  attrs.feature_index = 1;
  ExpectError(Infer(Opcode::kBatchNormGrad, {x, f, f, f, f}, attrs), Opcode::kBatchNormGrad, "operand 4");
}

TEST(ShapeInferenceTest, While) {
  const Shape state = Shape::Tuple({S32({}), F32({2})});
  const ProgramShape cond = Sig({state}, Pred({}));
  const ProgramShape body = Sig({state}, state);
  ExpectShape(Infer(Opcode::kWhile, {state}, {}, {cond, body}), state);
  ExpectError(Infer(Opcode::kWhile, {state}, {}, {body, body}), Opcode::kWhile, "condition");
  ExpectError(Infer(Opcode::kWhile, {state}, {}, {cond, Sig({state}, S32({}))}), Opcode::kWhile, "body");
  ExpectError(Infer(Opcode::kWhile, {state}, {}, {cond}), Opcode::kWhile, "expects 2 called");
}

TEST(ShapeInferenceTest, Conditional) {
  const ProgramShape a = Sig({F32({2})}, F32({}));
  const ProgramShape b = Sig({S32({})}, F32({}));
  ExpectShape(Infer(Opcode::kConditional, {Pred({}), F32({2}), S32({})}, {}, {a, b}), F32({}));
  ExpectShape(Infer(Opcode::kConditional, {S32({}), F32({2}), S32({}), F32({2})}, {}, {a, b, a}), F32({}));
  ExpectError(Infer(Opcode::kConditional, {Pred({}), F32({2}), S32({}), F32({2})}, {}, {a, b, a}),
              Opcode::kConditional, "2 branch");
  ExpectError(Infer(Opcode::kConditional, {Pred({}), S32({}), S32({})}, {}, {a, b}), Opcode::kConditional,
              "branch 0");
  ExpectError(Infer(Opcode::kConditional, {F32({}), F32({2}), S32({})}, {}, {a, b}), Opcode::kConditional,
              "pred[] or s32[]");
  ExpectError(Infer(Opcode::kConditional, {Pred({}), F32({2}), S32({})}, {}, {a, Sig({S32({})}, S32({}))}),
              Opcode::kConditional, "same shape");
}

TEST(ShapeInferenceTest, CallAndCustomCall) {
  const ProgramShape callee = Sig({F32({2}), S32({})}, F32({}));
  ExpectShape(Infer(Opcode::kCall, {F32({2}), S32({})}, {}, {callee}), F32({}));
  ExpectError(Infer(Opcode::kCall, {F32({2})}, {}, {callee}), Opcode::kCall, "takes 2 parameters");
  ExpectError(Infer(Opcode::kCall, {F32({3}), S32({})}, {}, {callee}), Opcode::kCall, "operand 0");
  const Shape out = F32({7});
  ExpectShape(Infer(Opcode::kCustomCall, {F32({2})}, {}, {}, &out), out);
  ExpectError(Infer(Opcode::kCustomCall, {F32({2})}), Opcode::kCustomCall, "declared");
}

TEST(ShapeInferenceTest, Rng) {
  const Shape out = F32({3});
  Attributes attrs;
  ExpectShape(Infer(Opcode::kRng, {F32({}), F32({})}, attrs, {}, &out), out);
  ExpectError(Infer(Opcode::kRng, {F32({2}), F32({})}, attrs, {}, &out), Opcode::kRng, "scalar");
  ExpectError(Infer(Opcode::kRng, {S32({}), S32({})}, attrs, {}, &out), Opcode::kRng, "element type");
  attrs.rng_distribution = RngDistribution::kNormal;
  const Shape ints = S32({3});
  ExpectError(Infer(Opcode::kRng, {S32({}), S32({})}, attrs, {}, &ints), Opcode::kRng, "normal");
  const Shape state = Shape(ET::kU64, {2});
  const Shape result = Shape::Tuple({state, U32({4})});
  ExpectShape(Infer(Opcode::kRngBitGenerator, {state}, {}, {}, &result), result);
  ExpectError(Infer(Opcode::kRngBitGenerator, {F32({2})}, {}, {}, &result), Opcode::kRngBitGenerator, "u64");
  const Shape bad = Shape::Tuple({state, F32({4})});
  ExpectError(Infer(Opcode::kRngBitGenerator, {state}, {}, {}, &bad), Opcode::kRngBitGenerator,
              "random bits");
}

TEST(ShapeInferenceTest, TokensAndHostCommunication) {
  const Shape token = Shape::Token();
  ExpectShape(Infer(Opcode::kAfterAll, {}), token);
  ExpectShape(Infer(Opcode::kAfterAll, {token, token}), token);
  ExpectError(Infer(Opcode::kAfterAll, {F32({})}), Opcode::kAfterAll, "token");
  const Shape infeed = Shape::Tuple({F32({2}), token});
  ExpectShape(Infer(Opcode::kInfeed, {token}, {}, {}, &infeed), infeed);
  const Shape bad_infeed = F32({2});
  ExpectError(Infer(Opcode::kInfeed, {token}, {}, {}, &bad_infeed), Opcode::kInfeed, "(data, token[])");
  ExpectShape(Infer(Opcode::kOutfeed, {F32({2}), token}), token);
  ExpectError(Infer(Opcode::kOutfeed, {F32({2}), F32({2})}), Opcode::kOutfeed, "token");
  const Shape send = Shape::Tuple({F32({2}), U32({}), token});
  ExpectShape(Infer(Opcode::kSend, {F32({2}), token}), send);
  ExpectShape(Infer(Opcode::kSendDone, {send}), token);
  ExpectShape(Infer(Opcode::kRecv, {token}, {}, {}, &send), send);
  ExpectShape(Infer(Opcode::kRecvDone, {send}), Shape::Tuple({F32({2}), token}));
  ExpectError(Infer(Opcode::kRecvDone, {F32({2})}), Opcode::kRecvDone, "recv");
  ExpectError(Infer(Opcode::kSend, {F32({2})}), Opcode::kSend, "takes 2 operands");
}

TEST(ShapeInferenceTest, LeavesAndMisc) {
  const Shape value = F32({2});
  ExpectShape(Infer(Opcode::kConstant, {}, {}, {}, &value), value);
  ExpectError(Infer(Opcode::kConstant, {}), Opcode::kConstant, "declared");
  ExpectShape(Infer(Opcode::kParameter, {}, {}, {}, &value), value);
  Attributes negative;
  negative.parameter_number = -1;
  ExpectError(Infer(Opcode::kParameter, {}, negative, {}, &value), Opcode::kParameter, ">= 0");
  ExpectShape(Infer(Opcode::kReplicaId, {}), U32({}));
  ExpectShape(Infer(Opcode::kPartitionId, {}), U32({}));
  ExpectError(Infer(Opcode::kReplicaId, {value}), Opcode::kReplicaId, "takes 0 operands");
  const Shape tuple = Shape::Tuple({F32({2}), Shape::Token()});
  ExpectShape(Infer(Opcode::kOptimizationBarrier, {tuple}), tuple);
  ExpectError(Infer(Opcode::kOptimizationBarrier, {}), Opcode::kOptimizationBarrier, "takes 1 operands");
  Attributes dim;
  dim.dimensions = {1};
  ExpectShape(Infer(Opcode::kGetDimensionSize, {F32({2, 5})}, dim), S32({}));
  ExpectError(Infer(Opcode::kGetDimensionSize, {F32({2})}, dim), Opcode::kGetDimensionSize, "out of range");
}

TEST(ShapeInferenceTest, MalformedShapesAreRefused) {
  ExpectError(Infer(Opcode::kAdd, {F32({-1}), F32({-1})}), Opcode::kAdd, "negative dimension");
  const Shape huge = F32({int64_t{1} << 40, int64_t{1} << 40});
  ExpectError(Infer(Opcode::kConstant, {}, {}, {}, &huge), Opcode::kConstant, "too many elements");
  Shape bad_layout = F32({2, 3});
  bad_layout.mutable_layout().minor_to_major = {0, 0};
  ExpectError(Infer(Opcode::kNegate, {bad_layout}), Opcode::kNegate, "permutation");
  EXPECT_FALSE(Infer(Opcode::kOpcodeCount, {}).ok());
}

}  // namespace
}  // namespace kiln
