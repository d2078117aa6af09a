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

// Buffer is an immutable array in a device's memory. Reads are safe from
// several goroutines at once.
type Buffer struct {
	h       *C.kiln_buffer_t
	client  *clientRef
	cleanup runtime.Cleanup
}

type bufferCleanup struct {
	h      *C.kiln_buffer_t
	client *clientRef
}

func (x bufferCleanup) run() {
	C.kiln_buffer_destroy(x.h)
	x.client.release()
}

func newBuffer(h *C.kiln_buffer_t, client *clientRef) *Buffer {
	client.acquire()
	b := &Buffer{h: h, client: client}
	b.cleanup = runtime.AddCleanup(b, bufferCleanup.run, bufferCleanup{h, client})
	return b
}

// Close frees the buffer. It is idempotent and returns nil.
func (b *Buffer) Close() error {
	if b == nil || b.h == nil {
		return nil
	}
	b.cleanup.Stop()
	bufferCleanup{b.h, b.client}.run()
	b.h, b.client = nil, nil
	return nil
}

func (b *Buffer) handle() *C.kiln_buffer_t {
	if b == nil {
		return nil
	}
	return b.h
}

// BufferFromBytes copies a host array (row-major bytes, exactly byte width x
// element count of them) into a new buffer on the client's first device.
// minorToMajor sets the device layout; nil means the default.
func (c *Client) BufferFromBytes(shape Shape, data []byte, minorToMajor []int64) (*Buffer, error) {
	if minorToMajor != nil && len(minorToMajor) != len(shape.Dims) {
		return nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf(
			"buffer from host: minor_to_major has %d entries for rank %d", len(minorToMajor), len(shape.Dims))}
	}
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_client_buffer_from_host(c.handle(), C.kiln_element_type_t(shape.Type),
		i64(shape.Dims), size(len(shape.Dims)), i64(minorToMajor), bytesPtr(data), size(len(data)), &h))
	runtime.KeepAlive(data)
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, c.ref), nil
}

// NewBuffer copies data (row-major) into a new buffer of element type
// TypeOf[T] and dimensions dims on the client's first device.
func NewBuffer[T Element](c *Client, data []T, dims ...int64) (*Buffer, error) {
	b, err := c.BufferFromBytes(NewShape(TypeOf[T](), dims...), sliceBytes(data), nil)
	runtime.KeepAlive(data)
	return b, err
}

// ReadNPY reads a NumPy .npy file into a new buffer.
func (c *Client) ReadNPY(path string) (*Buffer, error) { return c.ReadNPYAs(path, InvalidType) }

// ReadNPYAs is ReadNPY with an expected element type: BF16 reads a two-byte
// void array ('V2', as ml_dtypes saves bf16) as bf16; InvalidType expects none.
func (c *Client) ReadNPYAs(path string, expected ElementType) (*Buffer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_client_buffer_from_npy_file(c.handle(), cpath, C.kiln_element_type_t(expected), &h))
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, c.ref), nil
}

// WriteNPY writes the buffer to path as a .npy file.
func (b *Buffer) WriteNPY(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err := statusError(C.kiln_buffer_to_npy_file(b.handle(), cpath))
	runtime.KeepAlive(b)
	return err
}

// Type returns the element type.
func (b *Buffer) Type() (ElementType, error) {
	var t C.kiln_element_type_t
	err := statusError(C.kiln_buffer_element_type(b.handle(), &t))
	runtime.KeepAlive(b)
	return ElementType(t), err
}

// Dims returns the dimensions.
func (b *Buffer) Dims() ([]int64, error) {
	var rank C.size_t
	if err := statusError(C.kiln_buffer_rank(b.handle(), &rank)); err != nil {
		return nil, err
	}
	dims := make([]int64, int(rank)+1) // +1: never pass a nil array
	err := statusError(C.kiln_buffer_dimensions(b.handle(), i64(dims), rank))
	runtime.KeepAlive(b)
	return dims[:rank], err
}

// Shape returns the element type and dimensions.
func (b *Buffer) Shape() (Shape, error) {
	t, err := b.Type()
	if err != nil {
		return Shape{}, err
	}
	dims, err := b.Dims()
	return Shape{Type: t, Dims: dims}, err
}

// MinorToMajor returns the device layout.
func (b *Buffer) MinorToMajor() ([]int64, error) {
	var rank C.size_t
	if err := statusError(C.kiln_buffer_rank(b.handle(), &rank)); err != nil {
		return nil, err
	}
	m := make([]int64, int(rank)+1)
	err := statusError(C.kiln_buffer_minor_to_major(b.handle(), i64(m), rank))
	runtime.KeepAlive(b)
	return m[:rank], err
}

// ByteSize returns the size of the row-major host copy.
func (b *Buffer) ByteSize() (int, error) {
	var n C.size_t
	err := statusError(C.kiln_buffer_byte_size(b.handle(), &n))
	runtime.KeepAlive(b)
	return int(n), err
}

// CopyTo copies the buffer to dst in row-major order; len(dst) must equal
// ByteSize.
func (b *Buffer) CopyTo(dst []byte) error {
	err := statusError(C.kiln_buffer_to_host(b.handle(), bytesPtr(dst), size(len(dst))))
	runtime.KeepAlive(b)
	return err
}

// Bytes returns a row-major host copy of the buffer.
func (b *Buffer) Bytes() ([]byte, error) {
	n, err := b.ByteSize()
	if err != nil {
		return nil, err
	}
	dst := make([]byte, n)
	return dst, b.CopyTo(dst)
}

// ToSlice returns a row-major host copy of b as []T; the buffer's element
// type must be TypeOf[T].
func ToSlice[T Element](b *Buffer) ([]T, error) {
	t, err := b.Type()
	if err != nil {
		return nil, err
	}
	if want := TypeOf[T](); t != want {
		return nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf("buffer has element type %v, not %v", t, want)}
	}
	n, err := b.ByteSize()
	if err != nil {
		return nil, err
	}
	out := make([]T, n/t.ByteWidth())
	return out, b.CopyTo(sliceBytes(out))
}
