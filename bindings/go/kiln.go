// Package kiln is the Go binding of Kiln, an XLA-style array compiler and
// runtime, over its C ABI (kiln/kiln.h, libkiln.so).
//
// The binding is thin: it marshals arguments and owns handles; all logic lives
// in the library. The library is found with pkg-config (package "kiln"): an
// installed libkiln provides kiln.pc; for a build tree, ci.sh writes one.
//
// A typical program:
//
//	client, err := kiln.NewClient()          // default backend
//	defer client.Close()
//	b, _ := kiln.NewBuilder("f")
//	x := b.Parameter(0, kiln.NewShape(kiln.F32, 2), "x")
//	b.Mul(x, x)
//	comp, err := b.Build()                   // first builder error, if any
//	exe, err := client.Compile(comp)
//	in, err := kiln.NewBuffer(client, []float32{1, 2}, 2)
//	out, err := exe.Execute([]*kiln.Buffer{in})
//	y, err := kiln.ToSlice[float32](out[0])
//
// Ownership: every handle (Client, Builder, Computation, Executable, Buffer,
// Event, HostMemory) has an idempotent Close; a Device has none. Call it
// (usually with defer) when done; a cleanup registered with runtime.AddCleanup
// frees forgotten handles (HostMemory excepted) only as a safety net.
// Executables, buffers and devices keep their client's native object alive, so a
// client may be closed before them: it is freed when the last of them closes.
// Close must not run concurrently with other uses of the same handle.
//
// Errors are *Error values carrying the library's status code and message;
// use errors.As to inspect them.
//
// Deadlines and cancellation: Executable.ExecuteContext stops a run when its
// context's deadline passes or it is cancelled (even a while loop that never
// ends); the error then also wraps ctx.Err() for errors.Is.
//
// Devices and asynchronous work: Client.Devices gives the client's devices
// (WithNumDevices splits a host backend into several), WithDevice and
// WithDonatedArguments configure a run, and Executable.ExecuteAsync returns
// results at once with an Event (Wait, Ready, Done/Err). Device.AliasHost
// makes a buffer over C-allocated HostMemory without copying.
//
// DLPack: Buffer.ToDLPackVersioned and Device.BufferFromDLPackVersioned (and
// their legacy forms) exchange tensors with other frameworks as pointers to
// C structs; see ReadDLPackVersioned and DeleteDLPackVersioned.
//
// Safetensors: OpenSafetensors reads a safetensors file's tensors by name
// into buffers; SaveSafetensors writes buffers and metadata to one.
//
// Threads: a Client, Computation, Executable and Buffer may be used from
// several goroutines at once; a Builder may not.
package kiln

/*
#cgo pkg-config: kiln
#include <stdlib.h>
#include <kiln/kiln.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Version returns the library's version as "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.kiln_version()) }

// VersionNumber returns the library's version as major*10000 + minor*100 + patch.
func VersionNumber() uint32 { return uint32(C.kiln_version_number()) }

// HeaderVersionNumber is the version of kiln.h this package was compiled against.
const HeaderVersionNumber = C.KILN_VERSION_NUMBER

// Code is a status code of the canonical set.
type Code int32

// The canonical status codes.
const (
	OK                 Code = C.KILN_STATUS_OK
	Cancelled          Code = C.KILN_STATUS_CANCELLED
	Unknown            Code = C.KILN_STATUS_UNKNOWN
	InvalidArgument    Code = C.KILN_STATUS_INVALID_ARGUMENT
	DeadlineExceeded   Code = C.KILN_STATUS_DEADLINE_EXCEEDED
	NotFound           Code = C.KILN_STATUS_NOT_FOUND
	AlreadyExists      Code = C.KILN_STATUS_ALREADY_EXISTS
	PermissionDenied   Code = C.KILN_STATUS_PERMISSION_DENIED
	ResourceExhausted  Code = C.KILN_STATUS_RESOURCE_EXHAUSTED
	FailedPrecondition Code = C.KILN_STATUS_FAILED_PRECONDITION
	Aborted            Code = C.KILN_STATUS_ABORTED
	OutOfRange         Code = C.KILN_STATUS_OUT_OF_RANGE
	Unimplemented      Code = C.KILN_STATUS_UNIMPLEMENTED
	Internal           Code = C.KILN_STATUS_INTERNAL
	Unavailable        Code = C.KILN_STATUS_UNAVAILABLE
	DataLoss           Code = C.KILN_STATUS_DATA_LOSS
)

// String returns the upper-case name of the code ("INVALID_ARGUMENT").
func (c Code) String() string {
	return C.GoString(C.kiln_status_code_name(C.kiln_status_code_t(c)))
}

// Error is a failure reported by the library: its status code and message.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("kiln: %v: %s", e.Code, e.Message) }

// statusError converts an owned status into an error (nil for success) and
// frees the status.
func statusError(s *C.kiln_status_t) error {
	if s == nil {
		return nil
	}
	err := borrowedStatusError(s)
	C.kiln_status_destroy(s)
	return err
}

// borrowedStatusError converts a status the library owns (one passed to a
// callback) into an error (nil for success) without freeing it.
func borrowedStatusError(s *C.kiln_status_t) error {
	if s == nil {
		return nil
	}
	return &Error{Code: Code(C.kiln_status_code(s)), Message: C.GoString(C.kiln_status_message(s))}
}

// ElementType is an array element type as XLA names it.
type ElementType int32

// The element types.
const (
	InvalidType ElementType = C.KILN_TYPE_INVALID
	Pred        ElementType = C.KILN_TYPE_PRED
	S8          ElementType = C.KILN_TYPE_S8
	S16         ElementType = C.KILN_TYPE_S16
	S32         ElementType = C.KILN_TYPE_S32
	S64         ElementType = C.KILN_TYPE_S64
	U8          ElementType = C.KILN_TYPE_U8
	U16         ElementType = C.KILN_TYPE_U16
	U32         ElementType = C.KILN_TYPE_U32
	U64         ElementType = C.KILN_TYPE_U64
	F16         ElementType = C.KILN_TYPE_F16
	BF16        ElementType = C.KILN_TYPE_BF16
	F32         ElementType = C.KILN_TYPE_F32
	F64         ElementType = C.KILN_TYPE_F64
	C64         ElementType = C.KILN_TYPE_C64
	C128        ElementType = C.KILN_TYPE_C128
	Tuple       ElementType = C.KILN_TYPE_TUPLE
	Token       ElementType = C.KILN_TYPE_TOKEN
)

// String returns the lower-case HLO name ("f32").
func (t ElementType) String() string {
	return C.GoString(C.kiln_element_type_name(C.kiln_element_type_t(t)))
}

// ByteWidth returns the bytes per element; 0 for tuple, token and invalid.
func (t ElementType) ByteWidth() int {
	return int(C.kiln_element_type_byte_width(C.kiln_element_type_t(t)))
}

// Shape is an element type and dimensions (row-major unless a layout is given).
type Shape struct {
	Type ElementType
	Dims []int64
}

// NewShape returns the shape of type t with the given dimensions.
func NewShape(t ElementType, dims ...int64) Shape { return Shape{Type: t, Dims: dims} }

func (s Shape) String() string { return fmt.Sprintf("%v%v", s.Type, s.Dims) }

// Element is the set of Go types that map to an element type one to one.
type Element interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 |
		float32 | float64 | complex64 | complex128
}

// TypeOf returns the element type of T.
func TypeOf[T Element]() ElementType {
	var z T
	switch any(z).(type) {
	case bool:
		return Pred
	case int8:
		return S8
	case int16:
		return S16
	case int32:
		return S32
	case int64:
		return S64
	case uint8:
		return U8
	case uint16:
		return U16
	case uint32:
		return U32
	case uint64:
		return U64
	case float32:
		return F32
	case float64:
		return F64
	case complex64:
		return C64
	default:
		return C128
	}
}

// Backends returns the names of the backends this library contains.
func Backends() ([]string, error) {
	var n C.size_t
	if err := statusError(C.kiln_backend_count(&n)); err != nil {
		return nil, err
	}
	names := make([]string, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		var name *C.char
		if err := statusError(C.kiln_backend_name(i, &name)); err != nil {
			return nil, err
		}
		names = append(names, C.GoString(name))
	}
	return names, nil
}

// RegisterCustomCall registers a C function (a kiln_custom_call_fn, e.g. one
// exported from cgo code) as the process-wide custom-call target name.
func RegisterCustomCall(name string, fn unsafe.Pointer) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return statusError(C.kiln_register_custom_call(cname, C.kiln_custom_call_fn(fn)))
}

// --- marshalling helpers ---------------------------------------------------

// i64 returns a pointer to the first element of s, or nil when s is empty. The
// slice holds no Go pointers, so cgo may pass it; C does not retain it.
func i64(s []int64) *C.int64_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&s[0]))
}

func size(n int) C.size_t { return C.size_t(n) }

// bytesPtr returns a pointer to the data of b, or nil when b is empty.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// sliceBytes views the memory of s as bytes (no copy).
func sliceBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}
