package kiln

/*
#include <stdlib.h>
#include <kiln/kiln.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Op is an op of one Builder: a small value valid only with the builder that
// made it (using it with another builder is that builder's InvalidArgument
// error). A failed op is invalid; the builder records the first error.
type Op struct{ id C.kiln_op_t }

// InvalidOp is what a failed op returns.
var InvalidOp = Op{C.KILN_OP_INVALID}

// Valid reports whether the op was created successfully.
func (o Op) Valid() bool { return o.id != C.KILN_OP_INVALID }

// Builder builds one computation op by op, XlaBuilder style: ops return Op
// values, the first failing op makes the builder's error sticky, and Err or
// Build report it. A Builder must not be used from several goroutines at once.
type Builder struct {
	h       *C.kiln_builder_t
	cleanup runtime.Cleanup
	// goErr is a marshalling error found before calling the library (lists
	// that must have equal lengths do not), when it came before any library
	// error; Err and Build report it.
	goErr error
}

func destroyBuilder(h *C.kiln_builder_t) { C.kiln_builder_destroy(h) }

// NewBuilder creates a builder for a computation named name.
func NewBuilder(name string) (*Builder, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var h *C.kiln_builder_t
	if err := statusError(C.kiln_builder_create(cname, &h)); err != nil {
		return nil, err
	}
	b := &Builder{h: h}
	b.cleanup = runtime.AddCleanup(b, destroyBuilder, h)
	return b, nil
}

// Close frees the builder; computations it built stay valid. It is idempotent
// and returns nil.
func (b *Builder) Close() error {
	if b == nil || b.h == nil {
		return nil
	}
	b.cleanup.Stop()
	destroyBuilder(b.h)
	b.h = nil
	return nil
}

func (b *Builder) op(id C.kiln_op_t) Op {
	runtime.KeepAlive(b)
	return Op{id}
}

// Err returns the builder's first error, or nil while every op succeeded.
func (b *Builder) Err() error {
	if b.goErr != nil {
		return b.goErr
	}
	err := statusError(C.kiln_builder_first_error(b.h))
	runtime.KeepAlive(b)
	return err
}

// lengthsDiffer records an InvalidArgument error naming op, unless the
// builder already has an error, when a list is neither nil nor n long; it
// reports whether one was. Several C ops take one count for several arrays, so
// slices of other lengths must not reach them.
func (b *Builder) lengthsDiffer(op string, n int, lists ...[]int64) bool {
	for _, l := range lists {
		if l != nil && len(l) != n {
			b.fail(fmt.Sprintf("%s: lists of lengths %d and %d must have equal lengths", op, n, len(l)))
			return true
		}
	}
	return false
}

func (b *Builder) fail(msg string) {
	if b.Err() == nil {
		b.goErr = &Error{Code: InvalidArgument, Message: msg}
	}
}

// Shape returns the shape of op (a tuple reports Tuple and no dimensions).
func (b *Builder) Shape(op Op) (Shape, error) {
	var t C.kiln_element_type_t
	var rank C.size_t
	if err := statusError(C.kiln_builder_get_shape(b.h, op.id, &t, nil, 0, &rank)); err != nil {
		return Shape{}, err
	}
	dims := make([]int64, int(rank)+1)
	err := statusError(C.kiln_builder_get_shape(b.h, op.id, nil, i64(dims), rank, nil))
	runtime.KeepAlive(b)
	return Shape{Type: ElementType(t), Dims: dims[:rank]}, err
}

// Build builds and verifies the computation rooted at the last op added. It
// returns the builder's first error if any; the builder stays usable.
func (b *Builder) Build() (*Computation, error) { return b.BuildRoot(InvalidOp) }

// BuildRoot builds and verifies the computation rooted at root.
func (b *Builder) BuildRoot(root Op) (*Computation, error) {
	if b.goErr != nil {
		return nil, b.goErr
	}
	var h *C.kiln_computation_t
	err := statusError(C.kiln_builder_build(b.h, root.id, &h))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return newComputation(h), nil
}

// --- marshalling helpers for ops ---------------------------------------------

func ops(s []Op) *C.kiln_op_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.kiln_op_t)(unsafe.Pointer(&s[0]))
}

func ty(t ElementType) C.kiln_element_type_t { return C.kiln_element_type_t(t) }

func cbool(v bool) C.int {
	if v {
		return 1
	}
	return 0
}

// cstr returns a C copy of s (nil for "") and the function that frees it.
func cstr(s string) (*C.char, func()) {
	if s == "" {
		return nil, func() {}
	}
	p := C.CString(s)
	return p, func() { C.free(unsafe.Pointer(p)) }
}

// pin pins the first element of s (if any) and returns a C pointer to it, for
// storing in a C struct that lives in Go memory.
func pin(p *runtime.Pinner, s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	p.Pin(&s[0])
	return (*C.int64_t)(unsafe.Pointer(&s[0]))
}

// --- leaves ------------------------------------------------------------------

// Parameter declares entry parameter number of the given shape (default
// row-major layout). name may be empty.
func (b *Builder) Parameter(number int64, shape Shape, name string) Op {
	return b.ParameterWithLayout(number, shape, nil, name)
}

// ParameterWithLayout is Parameter with a layout (minorToMajor, rank entries).
func (b *Builder) ParameterWithLayout(number int64, shape Shape, minorToMajor []int64, name string) Op {
	if b.lengthsDiffer("parameter", len(shape.Dims), minorToMajor) {
		return InvalidOp
	}
	cname, free := cstr(name)
	defer free()
	return b.op(C.kiln_op_parameter(b.h, C.int64_t(number), ty(shape.Type), i64(shape.Dims),
		size(len(shape.Dims)), i64(minorToMajor), cname))
}

// ConstantBytes is a constant array of the given shape copied from row-major
// bytes.
func (b *Builder) ConstantBytes(shape Shape, data []byte) Op {
	return b.op(C.kiln_op_constant(b.h, ty(shape.Type), i64(shape.Dims), size(len(shape.Dims)),
		bytesPtr(data), size(len(data))))
}

// Constant is a constant array of element type TypeOf[T] and dimensions dims
// copied from data (row-major); no dims makes a scalar from data[0].
func Constant[T Element](b *Builder, data []T, dims ...int64) Op {
	op := b.ConstantBytes(NewShape(TypeOf[T](), dims...), sliceBytes(data))
	runtime.KeepAlive(data)
	return op
}

// ConstantF32 is a scalar f32 constant.
func (b *Builder) ConstantF32(v float32) Op { return b.op(C.kiln_op_constant_f32(b.h, C.float(v))) }

// ConstantF64 is a scalar f64 constant.
func (b *Builder) ConstantF64(v float64) Op { return b.op(C.kiln_op_constant_f64(b.h, C.double(v))) }

// ConstantS32 is a scalar s32 constant.
func (b *Builder) ConstantS32(v int32) Op { return b.op(C.kiln_op_constant_s32(b.h, C.int32_t(v))) }

// ConstantS64 is a scalar s64 constant.
func (b *Builder) ConstantS64(v int64) Op { return b.op(C.kiln_op_constant_s64(b.h, C.int64_t(v))) }

// ConstantU32 is a scalar u32 constant.
func (b *Builder) ConstantU32(v uint32) Op { return b.op(C.kiln_op_constant_u32(b.h, C.uint32_t(v))) }

// ConstantPred is a scalar pred constant.
func (b *Builder) ConstantPred(v bool) Op { return b.op(C.kiln_op_constant_pred(b.h, cbool(v))) }

// Iota is an array of the given shape counting 0, 1, ... along dimension.
func (b *Builder) Iota(shape Shape, dimension int64) Op {
	return b.op(C.kiln_op_iota(b.h, ty(shape.Type), i64(shape.Dims), size(len(shape.Dims)), C.int64_t(dimension)))
}

// --- comparisons, ternary ops and type changes ------------------------------------

// ComparisonDirection is the direction of Compare.
type ComparisonDirection int32

// Comparison directions.
const (
	CompareEQ ComparisonDirection = C.KILN_COMPARE_EQ
	CompareNE ComparisonDirection = C.KILN_COMPARE_NE
	CompareGE ComparisonDirection = C.KILN_COMPARE_GE
	CompareGT ComparisonDirection = C.KILN_COMPARE_GT
	CompareLE ComparisonDirection = C.KILN_COMPARE_LE
	CompareLT ComparisonDirection = C.KILN_COMPARE_LT
)

// ComparisonType is the comparison type of Compare; ComparisonDefault picks
// by element type.
type ComparisonType int32

// Comparison types.
const (
	ComparisonDefault    ComparisonType = C.KILN_COMPARISON_TYPE_DEFAULT
	ComparisonFloat      ComparisonType = C.KILN_COMPARISON_TYPE_FLOAT
	ComparisonTotalOrder ComparisonType = C.KILN_COMPARISON_TYPE_TOTAL_ORDER
	ComparisonSigned     ComparisonType = C.KILN_COMPARISON_TYPE_SIGNED
	ComparisonUnsigned   ComparisonType = C.KILN_COMPARISON_TYPE_UNSIGNED
)

// Compare compares elementwise with an explicit direction and type.
func (b *Builder) Compare(lhs, rhs Op, dir ComparisonDirection, typ ComparisonType, broadcastDims ...int64) Op {
	return b.op(C.kiln_op_compare(b.h, lhs.id, rhs.id, C.kiln_comparison_direction_t(dir),
		C.kiln_comparison_type_t(typ), i64(broadcastDims), size(len(broadcastDims))))
}

// Select picks onTrue where pred holds, else onFalse.
func (b *Builder) Select(pred, onTrue, onFalse Op) Op {
	return b.op(C.kiln_op_select(b.h, pred.id, onTrue.id, onFalse.id))
}

// Clamp clamps operand to [min, max].
func (b *Builder) Clamp(min, operand, max Op) Op {
	return b.op(C.kiln_op_clamp(b.h, min.id, operand.id, max.id))
}

// Convert converts elementwise to newType.
func (b *Builder) Convert(operand Op, newType ElementType) Op {
	return b.op(C.kiln_op_convert(b.h, operand.id, ty(newType)))
}

// BitcastConvert reinterprets the bits as newType.
func (b *Builder) BitcastConvert(operand Op, newType ElementType) Op {
	return b.op(C.kiln_op_bitcast_convert(b.h, operand.id, ty(newType)))
}

// ReducePrecision rounds to a float format with the given exponent and
// mantissa bits.
func (b *Builder) ReducePrecision(operand Op, exponentBits, mantissaBits int64) Op {
	return b.op(C.kiln_op_reduce_precision(b.h, operand.id, C.int64_t(exponentBits), C.int64_t(mantissaBits)))
}

// --- shape manipulation ----------------------------------------------------------

// Broadcast adds major dimensions of the given sizes.
func (b *Builder) Broadcast(operand Op, sizes ...int64) Op {
	return b.op(C.kiln_op_broadcast(b.h, operand.id, i64(sizes), size(len(sizes))))
}

// BroadcastInDim broadcasts to outDims; operand dimension i maps to output
// dimension broadcastDims[i].
func (b *Builder) BroadcastInDim(operand Op, outDims, broadcastDims []int64) Op {
	return b.op(C.kiln_op_broadcast_in_dim(b.h, operand.id, i64(outDims), size(len(outDims)),
		i64(broadcastDims), size(len(broadcastDims))))
}

// Reshape reshapes to newSizes.
func (b *Builder) Reshape(operand Op, newSizes ...int64) Op {
	return b.op(C.kiln_op_reshape(b.h, operand.id, i64(newSizes), size(len(newSizes))))
}

// ReshapeWithDimensions transposes by dimensions first, then reshapes.
func (b *Builder) ReshapeWithDimensions(operand Op, dimensions, newSizes []int64) Op {
	return b.op(C.kiln_op_reshape_with_dimensions(b.h, operand.id, i64(dimensions), size(len(dimensions)),
		i64(newSizes), size(len(newSizes))))
}

// Collapse merges the consecutive dimensions into one.
func (b *Builder) Collapse(operand Op, dimensions ...int64) Op {
	return b.op(C.kiln_op_collapse(b.h, operand.id, i64(dimensions), size(len(dimensions))))
}

// Transpose permutes the dimensions.
func (b *Builder) Transpose(operand Op, permutation ...int64) Op {
	return b.op(C.kiln_op_transpose(b.h, operand.id, i64(permutation), size(len(permutation))))
}

// Rev reverses the given dimensions.
func (b *Builder) Rev(operand Op, dimensions ...int64) Op {
	return b.op(C.kiln_op_rev(b.h, operand.id, i64(dimensions), size(len(dimensions))))
}

// ConcatInDim concatenates operands along dimension.
func (b *Builder) ConcatInDim(operands []Op, dimension int64) Op {
	return b.op(C.kiln_op_concat_in_dim(b.h, ops(operands), size(len(operands)), C.int64_t(dimension)))
}

// Pad pads each dimension by edgeLow, edgeHigh (negative removes) and
// interior copies of paddingValue (a scalar); all three have rank entries.
func (b *Builder) Pad(operand, paddingValue Op, edgeLow, edgeHigh, interior []int64) Op {
	if b.lengthsDiffer("pad", len(edgeLow), edgeHigh, interior) {
		return InvalidOp
	}
	return b.op(C.kiln_op_pad(b.h, operand.id, paddingValue.id, i64(edgeLow), i64(edgeHigh), i64(interior),
		size(len(edgeLow))))
}

// Slice is a static slice; the three lists have rank entries (strides may be
// nil for all 1).
func (b *Builder) Slice(operand Op, startIndices, limitIndices, strides []int64) Op {
	if b.lengthsDiffer("slice", len(startIndices), limitIndices, strides) {
		return InvalidOp
	}
	return b.op(C.kiln_op_slice(b.h, operand.id, i64(startIndices), i64(limitIndices), i64(strides),
		size(len(startIndices))))
}

// SliceInDim slices one dimension.
func (b *Builder) SliceInDim(operand Op, start, limit, stride, dimension int64) Op {
	return b.op(C.kiln_op_slice_in_dim(b.h, operand.id, C.int64_t(start), C.int64_t(limit), C.int64_t(stride),
		C.int64_t(dimension)))
}

// DynamicSlice slices at startIndices (a rank-1 integer array, clamped).
func (b *Builder) DynamicSlice(operand, startIndices Op, sliceSizes ...int64) Op {
	return b.op(C.kiln_op_dynamic_slice(b.h, operand.id, startIndices.id, i64(sliceSizes), size(len(sliceSizes))))
}

// DynamicSliceScalars slices at one scalar start index op per dimension.
func (b *Builder) DynamicSliceScalars(operand Op, startIndices []Op, sliceSizes ...int64) Op {
	return b.op(C.kiln_op_dynamic_slice_scalars(b.h, operand.id, ops(startIndices), size(len(startIndices)),
		i64(sliceSizes), size(len(sliceSizes))))
}

// DynamicUpdateSlice writes update into operand at startIndices (rank-1).
func (b *Builder) DynamicUpdateSlice(operand, update, startIndices Op) Op {
	return b.op(C.kiln_op_dynamic_update_slice(b.h, operand.id, update.id, startIndices.id))
}

// DynamicUpdateSliceScalars writes update into operand at one scalar start
// index op per dimension.
func (b *Builder) DynamicUpdateSliceScalars(operand, update Op, startIndices []Op) Op {
	return b.op(C.kiln_op_dynamic_update_slice_scalars(b.h, operand.id, update.id, ops(startIndices),
		size(len(startIndices))))
}

// GetDimensionSize is the size of dimension as an s32 scalar.
func (b *Builder) GetDimensionSize(operand Op, dimension int64) Op {
	return b.op(C.kiln_op_get_dimension_size(b.h, operand.id, C.int64_t(dimension)))
}

// GatherDimensionNumbers are XLA's GatherDimensionNumbers.
type GatherDimensionNumbers struct {
	OffsetDims               []int64
	CollapsedSliceDims       []int64
	StartIndexMap            []int64
	IndexVectorDim           int64
	OperandBatchingDims      []int64
	StartIndicesBatchingDims []int64
}

// Gather gathers slices of operand at startIndices.
func (b *Builder) Gather(operand, startIndices Op, dn GatherDimensionNumbers, sliceSizes []int64,
	indicesAreSorted bool) Op {
	var p runtime.Pinner
	defer p.Unpin()
	c := C.kiln_gather_dimension_numbers_t{
		struct_size:                     C.sizeof_kiln_gather_dimension_numbers_t,
		offset_dims:                     pin(&p, dn.OffsetDims),
		num_offset_dims:                 size(len(dn.OffsetDims)),
		collapsed_slice_dims:            pin(&p, dn.CollapsedSliceDims),
		num_collapsed_slice_dims:        size(len(dn.CollapsedSliceDims)),
		start_index_map:                 pin(&p, dn.StartIndexMap),
		num_start_index_map:             size(len(dn.StartIndexMap)),
		index_vector_dim:                C.int64_t(dn.IndexVectorDim),
		operand_batching_dims:           pin(&p, dn.OperandBatchingDims),
		num_operand_batching_dims:       size(len(dn.OperandBatchingDims)),
		start_indices_batching_dims:     pin(&p, dn.StartIndicesBatchingDims),
		num_start_indices_batching_dims: size(len(dn.StartIndicesBatchingDims)),
	}
	return b.op(C.kiln_op_gather(b.h, operand.id, startIndices.id, &c, i64(sliceSizes), size(len(sliceSizes)),
		cbool(indicesAreSorted)))
}

// ScatterDimensionNumbers are XLA's ScatterDimensionNumbers.
type ScatterDimensionNumbers struct {
	UpdateWindowDims           []int64
	InsertedWindowDims         []int64
	ScatterDimsToOperandDims   []int64
	IndexVectorDim             int64
	InputBatchingDims          []int64
	ScatterIndicesBatchingDims []int64
}

// Scatter is variadic scatter: as many updates as operands; update combines
// (old..., new...) scalars. It returns a tuple when there are several operands.
func (b *Builder) Scatter(operands []Op, scatterIndices Op, updates []Op, update *Computation,
	dn ScatterDimensionNumbers, indicesAreSorted, uniqueIndices bool) Op {
	var p runtime.Pinner
	defer p.Unpin()
	c := C.kiln_scatter_dimension_numbers_t{
		struct_size:                       C.sizeof_kiln_scatter_dimension_numbers_t,
		update_window_dims:                pin(&p, dn.UpdateWindowDims),
		num_update_window_dims:            size(len(dn.UpdateWindowDims)),
		inserted_window_dims:              pin(&p, dn.InsertedWindowDims),
		num_inserted_window_dims:          size(len(dn.InsertedWindowDims)),
		scatter_dims_to_operand_dims:      pin(&p, dn.ScatterDimsToOperandDims),
		num_scatter_dims_to_operand_dims:  size(len(dn.ScatterDimsToOperandDims)),
		index_vector_dim:                  C.int64_t(dn.IndexVectorDim),
		input_batching_dims:               pin(&p, dn.InputBatchingDims),
		num_input_batching_dims:           size(len(dn.InputBatchingDims)),
		scatter_indices_batching_dims:     pin(&p, dn.ScatterIndicesBatchingDims),
		num_scatter_indices_batching_dims: size(len(dn.ScatterIndicesBatchingDims)),
	}
	op := b.op(C.kiln_op_scatter(b.h, ops(operands), size(len(operands)), scatterIndices.id, ops(updates),
		size(len(updates)), update.handle(), &c, cbool(indicesAreSorted), cbool(uniqueIndices)))
	runtime.KeepAlive(update)
	return op
}

// --- tuples --------------------------------------------------------------------

// Tuple makes a tuple of elements.
func (b *Builder) Tuple(elements ...Op) Op {
	return b.op(C.kiln_op_tuple(b.h, ops(elements), size(len(elements))))
}

// GetTupleElement extracts element index of a tuple.
func (b *Builder) GetTupleElement(tuple Op, index int64) Op {
	return b.op(C.kiln_op_get_tuple_element(b.h, tuple.id, C.int64_t(index)))
}

// --- contractions ------------------------------------------------------------------

// Dot is the vector/matrix dot product.
func (b *Builder) Dot(lhs, rhs Op) Op { return b.op(C.kiln_op_dot(b.h, lhs.id, rhs.id)) }

// DotDimensionNumbers are XLA's DotDimensionNumbers.
type DotDimensionNumbers struct {
	LhsContractingDims []int64
	RhsContractingDims []int64
	LhsBatchDims       []int64
	RhsBatchDims       []int64
}

// DotGeneral is the general dot product.
func (b *Builder) DotGeneral(lhs, rhs Op, dn DotDimensionNumbers) Op {
	var p runtime.Pinner
	defer p.Unpin()
	c := C.kiln_dot_dimension_numbers_t{
		struct_size:                    C.sizeof_kiln_dot_dimension_numbers_t,
		lhs_contracting_dimensions:     pin(&p, dn.LhsContractingDims),
		num_lhs_contracting_dimensions: size(len(dn.LhsContractingDims)),
		rhs_contracting_dimensions:     pin(&p, dn.RhsContractingDims),
		num_rhs_contracting_dimensions: size(len(dn.RhsContractingDims)),
		lhs_batch_dimensions:           pin(&p, dn.LhsBatchDims),
		num_lhs_batch_dimensions:       size(len(dn.LhsBatchDims)),
		rhs_batch_dimensions:           pin(&p, dn.RhsBatchDims),
		num_rhs_batch_dimensions:       size(len(dn.RhsBatchDims)),
	}
	return b.op(C.kiln_op_dot_general(b.h, lhs.id, rhs.id, &c))
}

// Precision is the precision of a dot's or convolution's operand (XLA's
// precision config): PrecisionDefault lets the backend use faster
// algorithms (Winograd convolutions on the CPU); PrecisionHigh and
// PrecisionHighest keep the plain sum of products.
type Precision int32

// Operand precisions.
const (
	PrecisionDefault Precision = C.KILN_PRECISION_DEFAULT
	PrecisionHigh    Precision = C.KILN_PRECISION_HIGH
	PrecisionHighest Precision = C.KILN_PRECISION_HIGHEST
)

// SetPrecision sets the precision of a dot's or convolution's two operands
// and returns the same op (an invalid op, with the builder's error set, for
// any other op).
func (b *Builder) SetPrecision(op Op, lhs, rhs Precision) Op {
	return b.op(C.kiln_op_set_precision(b.h, op.id, C.kiln_precision_t(lhs), C.kiln_precision_t(rhs)))
}

// FftType is the transform of Fft (XLA's FftType).
type FftType int32

// Fourier transforms: FftForward and FftInverse map complex numbers to
// complex numbers (the inverse scaled by 1/N); FftReal takes real numbers to
// the fftLength[last]/2+1 lowest frequencies of the last dimension and
// FftInverseReal takes those back to real numbers (scaled by 1/N).
const (
	FftForward     FftType = C.KILN_FFT_FFT
	FftInverse     FftType = C.KILN_FFT_IFFT
	FftReal        FftType = C.KILN_FFT_RFFT
	FftInverseReal FftType = C.KILN_FFT_IRFFT
)

// Fft is XLA's fft over the operand's len(fftLength) (1 to 3) trailing
// dimensions, as NumPy's fftn, ifftn, rfftn and irfftn compute it.
func (b *Builder) Fft(operand Op, fftType FftType, fftLength []int64) Op {
	var p runtime.Pinner
	defer p.Unpin()
	return b.op(C.kiln_op_fft(b.h, operand.id, C.kiln_fft_type_t(fftType), pin(&p, fftLength), size(len(fftLength))))
}

// Padding is the padding scheme of Conv, ReduceWindow and SelectAndScatter.
type Padding int32

// Padding schemes.
const (
	PaddingValid Padding = C.KILN_PADDING_VALID
	PaddingSame  Padding = C.KILN_PADDING_SAME
)

// ConvDimensionNumbers are XLA's ConvolutionDimensionNumbers; the three
// spatial lists have equal length.
type ConvDimensionNumbers struct {
	InputBatchDim          int64
	InputFeatureDim        int64
	InputSpatialDims       []int64
	KernelInputFeatureDim  int64
	KernelOutputFeatureDim int64
	KernelSpatialDims      []int64
	OutputBatchDim         int64
	OutputFeatureDim       int64
	OutputSpatialDims      []int64
}

// convDN fills a C struct in Go memory; the pinner keeps its lists in place.
func (b *Builder) convDN(p *runtime.Pinner, dn *ConvDimensionNumbers) *C.kiln_conv_dimension_numbers_t {
	if b.lengthsDiffer("convolution dimension numbers", len(dn.InputSpatialDims), dn.KernelSpatialDims,
		dn.OutputSpatialDims) {
		return nil
	}
	return &C.kiln_conv_dimension_numbers_t{
		struct_size:                     C.sizeof_kiln_conv_dimension_numbers_t,
		input_batch_dimension:           C.int64_t(dn.InputBatchDim),
		input_feature_dimension:         C.int64_t(dn.InputFeatureDim),
		input_spatial_dimensions:        pin(p, dn.InputSpatialDims),
		kernel_input_feature_dimension:  C.int64_t(dn.KernelInputFeatureDim),
		kernel_output_feature_dimension: C.int64_t(dn.KernelOutputFeatureDim),
		kernel_spatial_dimensions:       pin(p, dn.KernelSpatialDims),
		output_batch_dimension:          C.int64_t(dn.OutputBatchDim),
		output_feature_dimension:        C.int64_t(dn.OutputFeatureDim),
		output_spatial_dimensions:       pin(p, dn.OutputSpatialDims),
		num_spatial_dimensions:          size(len(dn.InputSpatialDims)),
	}
}

// Conv is the seed Conv: NCHW input, OIHW kernel, no dilation; one stride per
// spatial dimension.
func (b *Builder) Conv(lhs, rhs Op, windowStrides []int64, padding Padding) Op {
	return b.op(C.kiln_op_conv(b.h, lhs.id, rhs.id, i64(windowStrides), size(len(windowStrides)),
		C.kiln_padding_t(padding)))
}

// ConvWithGeneralPadding is Conv with explicit (low, high) padding per
// spatial dimension.
func (b *Builder) ConvWithGeneralPadding(lhs, rhs Op, windowStrides, paddingLow, paddingHigh []int64) Op {
	if b.lengthsDiffer("conv", len(windowStrides), paddingLow, paddingHigh) {
		return InvalidOp
	}
	return b.op(C.kiln_op_conv_with_general_padding(b.h, lhs.id, rhs.id, i64(windowStrides), i64(paddingLow),
		i64(paddingHigh), size(len(windowStrides))))
}

// ConvWithGeneralDimensions is Conv with explicit dimension numbers.
func (b *Builder) ConvWithGeneralDimensions(lhs, rhs Op, windowStrides []int64, padding Padding,
	dn ConvDimensionNumbers) Op {
	var p runtime.Pinner
	defer p.Unpin()
	dnp := b.convDN(&p, &dn)
	if dnp == nil {
		return InvalidOp
	}
	return b.op(C.kiln_op_conv_with_general_dimensions(b.h, lhs.id, rhs.id, i64(windowStrides),
		size(len(windowStrides)), C.kiln_padding_t(padding), dnp))
}

// ConvGeneral is Conv with explicit padding and dimension numbers.
func (b *Builder) ConvGeneral(lhs, rhs Op, windowStrides, paddingLow, paddingHigh []int64,
	dn ConvDimensionNumbers) Op {
	if b.lengthsDiffer("conv", len(windowStrides), paddingLow, paddingHigh) {
		return InvalidOp
	}
	var p runtime.Pinner
	defer p.Unpin()
	dnp := b.convDN(&p, &dn)
	if dnp == nil {
		return InvalidOp
	}
	return b.op(C.kiln_op_conv_general(b.h, lhs.id, rhs.id, i64(windowStrides), i64(paddingLow), i64(paddingHigh),
		size(len(windowStrides)), dnp))
}

// ConvGeneralDilated is the full convolution; lhsDilation and rhsDilation may
// be nil (all 1).
func (b *Builder) ConvGeneralDilated(lhs, rhs Op, windowStrides, paddingLow, paddingHigh, lhsDilation,
	rhsDilation []int64, dn ConvDimensionNumbers, featureGroupCount, batchGroupCount int64) Op {
	if b.lengthsDiffer("conv", len(windowStrides), paddingLow, paddingHigh, lhsDilation, rhsDilation) {
		return InvalidOp
	}
	var p runtime.Pinner
	defer p.Unpin()
	dnp := b.convDN(&p, &dn)
	if dnp == nil {
		return InvalidOp
	}
	return b.op(C.kiln_op_conv_general_dilated(b.h, lhs.id, rhs.id, i64(windowStrides), i64(paddingLow),
		i64(paddingHigh), i64(lhsDilation), i64(rhsDilation), size(len(windowStrides)), dnp,
		C.int64_t(featureGroupCount), C.int64_t(batchGroupCount)))
}
