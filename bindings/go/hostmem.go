package kiln

/*
#include <stdint.h>
#include <stdlib.h>
#include <kiln/kiln.h>

extern void kilnGoHostRelease(uintptr_t h);

static void kiln_go_host_release(void* user_data) { kilnGoHostRelease((uintptr_t)user_data); }

// Aliases C memory; the release callback gets a cgo.Handle (an integer).
static kiln_status_t* kiln_go_alias_host(kiln_device_t* device, kiln_element_type_t type, const int64_t* dims,
                                         size_t rank, const void* data, size_t byte_size, uintptr_t h,
                                         kiln_buffer_t** out_buffer) {
  return kiln_device_buffer_alias_host(device, type, dims, rank, data, byte_size, kiln_go_host_release,
                                       (void*)h, out_buffer);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// HostMemoryAlignment is the alignment of HostMemory. The "cpu" backend
// reads host memory in place when it is aligned to its element type (a
// complex type to its parts' width), so 64 bytes is more than any type needs.
const HostMemoryAlignment = 64

// HostMemory is host memory allocated by C (aligned to HostMemoryAlignment)
// for Device.AliasHost: cgo forbids the library to keep Go memory, so a
// zero-copy buffer can only be made over memory allocated outside Go. Fill it
// through Bytes (or HostSlice), then alias it; from then on it must not be
// changed while a buffer aliasing it lives.
//
// The memory is freed when the HostMemory is closed and the library has
// released it for every buffer made over it (kiln_host_release_fn), whichever
// comes last; so a HostMemory may be closed right after AliasHost. After
// Close, slices obtained from Bytes or HostSlice must no longer be used, as
// with memory from syscall.Mmap. There is no cleanup: a HostMemory that is
// never closed is never freed, since Go cannot tell when its slices are no
// longer used.
type HostMemory struct {
	p    unsafe.Pointer
	n    int
	refs atomic.Int64 // 1 for the open HostMemory, 1 per buffer the library has not released
}

// NewHostMemory allocates n bytes of zeroed C memory aligned to
// HostMemoryAlignment.
func NewHostMemory(n int) (*HostMemory, error) {
	if n < 0 {
		return nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf("NewHostMemory(%d): negative size", n)}
	}
	// aligned_alloc wants a multiple of the alignment, and one byte at least.
	rounded := (n + HostMemoryAlignment) / HostMemoryAlignment * HostMemoryAlignment
	p := C.aligned_alloc(HostMemoryAlignment, C.size_t(rounded))
	if p == nil {
		return nil, &Error{Code: ResourceExhausted, Message: fmt.Sprintf("NewHostMemory(%d): aligned_alloc failed", n)}
	}
	clear(unsafe.Slice((*byte)(p), rounded))
	m := &HostMemory{p: p, n: n}
	m.refs.Store(1)
	return m, nil
}

func (m *HostMemory) release() {
	if m.refs.Add(-1) == 0 {
		C.free(m.p)
	}
}

// Bytes returns the memory as a byte slice (nil once closed).
func (m *HostMemory) Bytes() []byte {
	if m == nil || m.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(m.p), m.n)
}

// HostSlice views m as []T (len(m.Bytes()) / size of T elements; nil once
// closed). T's alignment divides HostMemoryAlignment.
func HostSlice[T Element](m *HostMemory) []T {
	b := m.Bytes()
	var z T
	if len(b) < int(unsafe.Sizeof(z)) {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// Close gives up the Go side's use of the memory: it is freed now, or when
// the last buffer aliasing it is released. It is idempotent and returns nil.
func (m *HostMemory) Close() error {
	if m == nil || m.p == nil {
		return nil
	}
	p := m.p
	m.p = nil
	if m.refs.Add(-1) == 0 {
		C.free(p)
	}
	return nil
}

// AliasHost makes a buffer of the given shape over m (all of its bytes, in
// row-major order) without copying where the device reads host memory
// directly: the "cpu" backend does for non-PRED data aligned to its element
// type, as HostMemory always is (Buffer.IsHostAlias then reports true); other
// backends, and PRED, copy the bytes before AliasHost returns. The
// library keeps m's memory (see HostMemory) until the buffer and every run
// reading it are gone; m must not be changed meanwhile.
func (d *Device) AliasHost(shape Shape, m *HostMemory) (*Buffer, error) {
	if m == nil || m.p == nil {
		return nil, &Error{Code: InvalidArgument, Message: "AliasHost: nil or closed HostMemory"}
	}
	m.refs.Add(1) // released by kilnGoHostRelease, which the library calls once, also when it fails
	handle := cgo.NewHandle(m)
	var h *C.kiln_buffer_t
	err := statusError(C.kiln_go_alias_host(d.handle(), C.kiln_element_type_t(shape.Type), i64(shape.Dims),
		size(len(shape.Dims)), m.p, size(m.n), C.uintptr_t(handle), &h))
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(h, d.client), nil
}

// IsHostAlias reports whether the buffer reads memory given to AliasHost in
// place.
func (b *Buffer) IsHostAlias() (bool, error) {
	var alias C.int
	err := statusError(C.kiln_buffer_is_host_alias(b.handle(), &alias))
	runtime.KeepAlive(b)
	return alias != 0, err
}
