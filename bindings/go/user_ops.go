package kiln

/*
#include <stdint.h>
#include <stdlib.h>
#include <kiln/kiln.h>

extern kiln_status_t* kilnGoOpKernel(kiln_op_call_frame_t* frame);
extern void kilnGoOpRelease(uintptr_t h);

static kiln_status_t* kiln_go_op_kernel(const kiln_op_call_frame_t* frame) {
  return kilnGoOpKernel((kiln_op_call_frame_t*)frame);
}
static void kiln_go_op_release(void* user_data) { kilnGoOpRelease((uintptr_t)user_data); }

static kiln_status_t* kiln_go_register_kernel(const char* op, const char* backend, kiln_element_type_t type,
                                              uintptr_t h) {
  return kiln_user_op_register_kernel(op, backend, type, kiln_go_op_kernel, (void*)h, kiln_go_op_release);
}
extern kiln_status_t* kilnGoOpGrad(kiln_builder_t* builder, kiln_op_t* operands, size_t num_operands,
                                   kiln_op_t* outputs, kiln_op_t* output_grads, size_t num_outputs,
                                   kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                   uintptr_t h);

static kiln_status_t* kiln_go_op_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                      const kiln_op_t* outputs, const kiln_op_t* output_grads,
                                      size_t num_outputs, const kiln_op_attr_t* attrs, size_t num_attrs,
                                      kiln_op_t* operand_grads, void* user_data) {
  return kilnGoOpGrad(builder, (kiln_op_t*)operands, num_operands, (kiln_op_t*)outputs, (kiln_op_t*)output_grads,
                      num_outputs, (kiln_op_attr_t*)attrs, num_attrs, operand_grads, (uintptr_t)user_data);
}
extern kiln_status_t* kilnGoOpShape(kiln_op_call_frame_t* frame);
// The gradient and shape functions and, as the op's user data, the handle of
// its opCallbacks (released with the definition unless the op is registered).
static kiln_status_t* kiln_go_set_callbacks(kiln_user_op_def_t* def, uintptr_t h, int grad, int shape) {
  kiln_status_t* status = grad ? kiln_user_op_def_set_grad_fn(def, kiln_go_op_grad) : NULL;
  if (status == NULL && shape) status = kiln_user_op_def_set_shape_fn(def, kilnGoOpShape);
  if (status != NULL) {
    kilnGoOpRelease(h);
    return status;
  }
  return kiln_user_op_def_set_user_data(def, (void*)h, kiln_go_op_release);
}
static kiln_op_t kiln_go_op_at(const kiln_op_t* ops, size_t i) { return ops[i]; }
static void kiln_go_set_op_at(kiln_op_t* ops, size_t i, kiln_op_t op) { ops[i] = op; }
static const kiln_op_attr_t* kiln_go_attr_at(const kiln_op_attr_t* attrs, size_t i) { return attrs + i; }
static const kiln_op_buffer_t* kiln_go_buffer_at(const kiln_op_buffer_t* buffers, size_t i) { return buffers + i; }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// OpDef defines a user-defined op with TensorFlow-style specs, as the seed's
// "Adding an op" does: Attrs like "preserve_index: int >= 0 = 0",
// "T: {float, int32}", "N: int >= 1"; Inputs and Outputs like
// "to_zero: int32", "to_zero: T", "in: N * T".
type OpDef struct {
	Name    string
	Attrs   []string
	Inputs  []string
	Outputs []string
	Doc     string
	// Grad, when set, is the op's gradient (after TensorFlow's
	// RegisterGradient): ValueAndGrad and Grad differentiate calls with it.
	Grad GradFunc
	// Shape, when set, is the op's shape function: it may change the result
	// dims a build gives each call (by default those of the argument at the
	// same position, else of argument 0, else a scalar).
	Shape ShapeFunc
}

// opCallbacks is an op's user data: its gradient and shape functions.
type opCallbacks struct {
	grad  GradFunc
	shape ShapeFunc
}

// ShapeFrame is what a shape function gets: the arguments' shapes, the
// results' shapes so far (their types come from the definition) and the
// call's attributes. It is valid during the call only.
type ShapeFrame struct {
	frame *C.kiln_op_call_frame_t
}

// ShapeFunc sets the result dims of a call with SetResultDims, or refuses the
// call: an *Error it returns keeps its code, any other error is Unknown;
// either fails the build, naming the op.
type ShapeFunc func(f *ShapeFrame) error

// NumArgs and NumResults count the arguments and results.
func (f *ShapeFrame) NumArgs() int    { return int(f.frame.num_args) }
func (f *ShapeFrame) NumResults() int { return int(f.frame.num_results) }

// ArgShape and ResultShape are argument or result i's element type and dims.
func (f *ShapeFrame) ArgShape(i int) Shape {
	return bufferShape(C.kiln_go_buffer_at(f.frame.args, C.size_t(i)))
}
func (f *ShapeFrame) ResultShape(i int) Shape {
	return bufferShape(C.kiln_go_buffer_at(f.frame.results, C.size_t(i)))
}

// SetResultDims sets result i's dims; an index past the results is
// OutOfRange, a negative size InvalidArgument.
func (f *ShapeFrame) SetResultDims(i int, dims []int64) error {
	if i < 0 {
		return &Error{Code: OutOfRange, Message: fmt.Sprintf("SetResultDims: result %d", i)}
	}
	var p *C.int64_t
	if len(dims) > 0 {
		p = (*C.int64_t)(C.malloc(C.size_t(8 * len(dims))))
		defer C.free(unsafe.Pointer(p))
		copy(unsafe.Slice((*int64)(unsafe.Pointer(p)), len(dims)), dims)
	}
	return statusError(C.kiln_user_op_frame_set_result_dims(f.frame, C.size_t(i), p, C.size_t(len(dims))))
}

// Attr is attribute name's value, as KernelFrame.Attr gives it.
func (f *ShapeFrame) Attr(name string) (any, bool) {
	for i := 0; i < int(f.frame.num_attrs); i++ {
		a := C.kiln_go_attr_at(f.frame.attrs, C.size_t(i))
		if C.GoString(a.name) == name {
			return attrValue(a), true
		}
	}
	return nil, false
}

func runShape(fn ShapeFunc, frame *C.kiln_op_call_frame_t) (status *C.kiln_status_t) {
	defer func() {
		if r := recover(); r != nil {
			status = kernelStatus(&Error{Code: Internal, Message: fmt.Sprintf("the Go shape function panicked: %v", r)})
		}
	}()
	return kernelStatus(fn(&ShapeFrame{frame: frame}))
}

// GradFrame is what a gradient function gets: Builder, the builder of the
// gradient computation (the library's: valid during the call only, never
// Close it), and as its ops the op's Operands, Outputs (one per output array)
// and OutputGrads (their cotangents), and the call's attributes (Attr).
type GradFrame struct {
	Builder     *Builder
	Operands    []Op
	Outputs     []Op
	OutputGrads []Op
	attrs       *C.kiln_op_attr_t
	numAttrs    int
}

// GradFunc builds the cotangent of each operand (of its operand's shape) with
// f.Builder; a shorter slice or InvalidOp means no gradient (zero). An *Error
// it returns keeps its code; any other error is Unknown; either reaches the
// caller of the differentiation, naming the op.
type GradFunc func(f *GradFrame) ([]Op, error)

// Attr is attribute name's value, as KernelFrame.Attr gives it.
func (f *GradFrame) Attr(name string) (any, bool) {
	for i := 0; i < f.numAttrs; i++ {
		a := C.kiln_go_attr_at(f.attrs, C.size_t(i))
		if C.GoString(a.name) == name {
			return attrValue(a), true
		}
	}
	return nil, false
}

func runGrad(fn GradFunc, builder *C.kiln_builder_t, operands *C.kiln_op_t, numOperands int,
	outputs, outputGrads *C.kiln_op_t, numOutputs int, attrs *C.kiln_op_attr_t, numAttrs int,
	operandGrads *C.kiln_op_t) (status *C.kiln_status_t) {
	opsOf := func(p *C.kiln_op_t, n int) []Op {
		out := make([]Op, n)
		for i := range out {
			out[i] = Op{C.kiln_go_op_at(p, C.size_t(i))}
		}
		return out
	}
	// The builder is borrowed: h is cleared after the call, so Close does nothing.
	b := &Builder{h: builder}
	defer func() {
		b.h = nil
		if r := recover(); r != nil {
			status = kernelStatus(&Error{Code: Internal, Message: fmt.Sprintf("the Go gradient function panicked: %v", r)})
		}
	}()
	frame := &GradFrame{Builder: b, Operands: opsOf(operands, numOperands), Outputs: opsOf(outputs, numOutputs),
		OutputGrads: opsOf(outputGrads, numOutputs), attrs: attrs, numAttrs: numAttrs}
	grads, err := fn(frame)
	if err != nil {
		return kernelStatus(err)
	}
	if len(grads) > numOperands {
		return kernelStatus(&Error{Code: InvalidArgument,
			Message: fmt.Sprintf("the gradient function returned %d cotangents for %d operand(s)", len(grads), numOperands)})
	}
	for i, g := range grads {
		C.kiln_go_set_op_at(operandGrads, C.size_t(i), g.id)
	}
	return nil
}

// RegisterOp registers def process-wide (ops live until the process exits).
// A bad spec is InvalidArgument; a taken name AlreadyExists.
func RegisterOp(def OpDef) error {
	cname, free := cstr(def.Name)
	defer free()
	var d *C.kiln_user_op_def_t
	if err := statusError(C.kiln_user_op_def_create(cname, &d)); err != nil {
		return err
	}
	defer C.kiln_user_op_def_destroy(d)
	add := func(specs []string, fn func(*C.kiln_user_op_def_t, *C.char) *C.kiln_status_t) error {
		for _, spec := range specs {
			cs, free := cstr(spec)
			err := statusError(fn(d, cs))
			free()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(def.Attrs, func(d *C.kiln_user_op_def_t, s *C.char) *C.kiln_status_t {
		return C.kiln_user_op_def_add_attr(d, s)
	}); err != nil {
		return err
	}
	if err := add(def.Inputs, func(d *C.kiln_user_op_def_t, s *C.char) *C.kiln_status_t {
		return C.kiln_user_op_def_add_input(d, s)
	}); err != nil {
		return err
	}
	if err := add(def.Outputs, func(d *C.kiln_user_op_def_t, s *C.char) *C.kiln_status_t {
		return C.kiln_user_op_def_add_output(d, s)
	}); err != nil {
		return err
	}
	cdoc, freeDoc := cstr(def.Doc)
	defer freeDoc()
	if err := statusError(C.kiln_user_op_def_set_doc(d, cdoc)); err != nil {
		return err
	}
	if def.Grad != nil || def.Shape != nil {
		// Deleted by kilnGoOpRelease unless the op is registered.
		h := cgo.NewHandle(&opCallbacks{grad: def.Grad, shape: def.Shape})
		if err := statusError(C.kiln_go_set_callbacks(d, C.uintptr_t(h), cbool(def.Grad != nil),
			cbool(def.Shape != nil))); err != nil {
			return err
		}
	}
	return statusError(C.kiln_user_op_register(d))
}

// KernelFrame is what a kernel gets: its arguments, its results (to fill,
// every element) and the attributes. It is valid during the call only.
type KernelFrame struct {
	frame *C.kiln_op_call_frame_t
}

// KernelFunc is a Go kernel. An *Error it returns keeps its code; any other
// error is Unknown; either reaches the caller of the execute.
type KernelFunc func(f *KernelFrame) error

func (f *KernelFrame) buffer(results bool, i int) *C.kiln_op_buffer_t {
	if results {
		return C.kiln_go_buffer_at(f.frame.results, C.size_t(i))
	}
	return C.kiln_go_buffer_at(f.frame.args, C.size_t(i))
}

// OpName is the op's name.
func (f *KernelFrame) OpName() string { return C.GoString(f.frame.op_name) }

// NumArgs and NumResults count the arguments and results.
func (f *KernelFrame) NumArgs() int    { return int(f.frame.num_args) }
func (f *KernelFrame) NumResults() int { return int(f.frame.num_results) }

// ArgShape is argument i's element type and dims.
func (f *KernelFrame) ArgShape(i int) Shape { return bufferShape(f.buffer(false, i)) }

func bufferShape(b *C.kiln_op_buffer_t) Shape {
	dims := make([]int64, int(b.rank))
	if b.rank > 0 {
		copy(dims, unsafe.Slice((*int64)(unsafe.Pointer(b.dims)), int(b.rank)))
	}
	return Shape{Type: ElementType(b._type), Dims: dims}
}

// ArgBytes and ResultBytes view argument or result i's row-major data.
func (f *KernelFrame) ArgBytes(i int) []byte    { return bufferBytes(f.buffer(false, i)) }
func (f *KernelFrame) ResultBytes(i int) []byte { return bufferBytes(f.buffer(true, i)) }

func bufferBytes(b *C.kiln_op_buffer_t) []byte {
	if b.byte_size == 0 || b.data == nil {
		return nil
	}
	return unsafe.Slice((*byte)(b.data), int(b.byte_size))
}

// ArgInt32s, ResultInt32s, ArgFloat32s and ResultFloat32s view the data as
// a slice of that type (the caller checks the element type).
func (f *KernelFrame) ArgInt32s(i int) []int32    { return view[int32](f.buffer(false, i)) }
func (f *KernelFrame) ResultInt32s(i int) []int32 { return view[int32](f.buffer(true, i)) }
func (f *KernelFrame) ArgFloat32s(i int) []float32 {
	return view[float32](f.buffer(false, i))
}
func (f *KernelFrame) ResultFloat32s(i int) []float32 {
	return view[float32](f.buffer(true, i))
}

func view[T any](b *C.kiln_op_buffer_t) []T {
	var zero T
	n := int(b.byte_size) / int(unsafe.Sizeof(zero))
	if n == 0 || b.data == nil {
		return nil
	}
	return unsafe.Slice((*T)(b.data), n)
}

// Attr is attribute name's value: int64, float64, bool, string, ElementType,
// []int64 (a shape), or []any (a list); false when the op has none by
// that name. (Tensor attributes come as []byte of their row-major data.)
func (f *KernelFrame) Attr(name string) (any, bool) {
	for i := 0; i < int(f.frame.num_attrs); i++ {
		a := C.kiln_go_attr_at(f.frame.attrs, C.size_t(i))
		if C.GoString(a.name) == name {
			return attrValue(a), true
		}
	}
	return nil, false
}

func attrValue(a *C.kiln_op_attr_t) any {
	switch a.kind {
	case C.KILN_OP_ATTR_INT:
		return int64(a.i)
	case C.KILN_OP_ATTR_FLOAT:
		return float64(a.f)
	case C.KILN_OP_ATTR_BOOL:
		return a.i != 0
	case C.KILN_OP_ATTR_STRING:
		return C.GoStringN(a.s, C.int(a.s_size))
	case C.KILN_OP_ATTR_TYPE:
		return ElementType(a._type)
	case C.KILN_OP_ATTR_SHAPE:
		dims := make([]int64, int(a.rank))
		if a.rank > 0 {
			copy(dims, unsafe.Slice((*int64)(unsafe.Pointer(a.dims)), int(a.rank)))
		}
		return dims
	case C.KILN_OP_ATTR_TENSOR:
		return C.GoBytes(a.data, C.int(a.byte_size))
	}
	items := make([]any, int(a.num_items))
	for i := range items {
		items[i] = attrValue(C.kiln_go_attr_at(a.items, C.size_t(i)))
	}
	return items
}

// RegisterKernel registers Go kernel fn of op for backend ("cpu",
// "interpreter", or "host" for both) and element type t (InvalidType: any).
// The kernel may run on any goroutine-less C thread of the library.
func RegisterKernel(op, backend string, t ElementType, fn KernelFunc) error {
	cop, freeOp := cstr(op)
	defer freeOp()
	cbackend, freeBackend := cstr(backend)
	defer freeBackend()
	h := cgo.NewHandle(fn) // deleted by kilnGoOpRelease if the registration fails
	return statusError(C.kiln_go_register_kernel(cop, cbackend, ty(t), C.uintptr_t(h)))
}

// RegisterDeviceKernel registers a device kernel of op for backend and
// element type t (InvalidType: any type): a SPIR-V module for "vulkan", PTX
// text for "cuda", with entry point entry, launched with the frame kiln.h
// documents for kiln_user_op_register_device_kernel (a buffer per argument
// then per result, each buffer's element count, then the op's int and bool
// attributes). blockSize and gridSize set the launch; 0 keeps the default (64
// invocations a workgroup on vulkan, 256 threads a block on cuda; a grid
// covering result 0). Code that is not SPIR-V or PTX is InvalidArgument, an
// entry point it lacks NotFound, a taken (backend, type) AlreadyExists.
func RegisterDeviceKernel(op, backend string, t ElementType, code []byte, entry string, blockSize, gridSize uint32) error {
	cop, freeOp := cstr(op)
	defer freeOp()
	cbackend, freeBackend := cstr(backend)
	defer freeBackend()
	centry, freeEntry := cstr(entry)
	defer freeEntry()
	ccode := C.CBytes(code)
	defer C.free(ccode)
	return statusError(C.kiln_user_op_register_device_kernel_with_launch(cop, cbackend, ty(t), ccode,
		C.size_t(len(code)), centry, C.uint32_t(blockSize), C.uint32_t(gridSize)))
}

// CallRegistered calls user-defined op name with attrs, the attribute
// dictionary text ("{preserve_index = 2}"; "" for none). Errors are the
// builder's, as for every op.
func (b *Builder) CallRegistered(name string, operands []Op, attrs string) Op {
	cname, free := cstr(name)
	defer free()
	var cattrs *C.char
	if attrs != "" {
		var freeAttrs func()
		cattrs, freeAttrs = cstr(attrs)
		defer freeAttrs()
	}
	return b.op(C.kiln_op_call_registered(b.h, cname, ops(operands), size(len(operands)), cattrs))
}

// RegisteredOps describes every registered op, as `kiln info --ops` does.
func RegisteredOps() (string, error) {
	var text *C.char
	if err := statusError(C.kiln_user_op_registry_describe(&text)); err != nil {
		return "", err
	}
	defer C.kiln_string_destroy(text)
	return C.GoString(text), nil
}

func kernelStatus(err error) *C.kiln_status_t {
	if err == nil {
		return nil
	}
	code, message := Unknown, err.Error()
	var kerr *Error
	if errors.As(err, &kerr) {
		code, message = kerr.Code, kerr.Message
	}
	cmessage := C.CString(message)
	defer C.free(unsafe.Pointer(cmessage))
	return C.kiln_status_create(C.kiln_status_code_t(code), cmessage)
}
