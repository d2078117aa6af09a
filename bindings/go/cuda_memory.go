package kiln

/*
#include <stdint.h>
#include <kiln/kiln.h>

extern void kilnGoCUDARelease(uintptr_t h);

static void kiln_go_cuda_release(void* user_data) { kilnGoCUDARelease((uintptr_t)user_data); }

// Aliases CUDA device memory; the release callback gets a cgo.Handle (an
// integer), or there is none when h is 0.
static kiln_status_t* kiln_go_alias_cuda_memory(kiln_device_t* device, kiln_element_type_t type,
                                                const int64_t* dims, size_t rank, uint64_t address,
                                                uintptr_t h, kiln_buffer_t** out_buffer) {
  return kiln_device_buffer_alias_cuda_memory(device, type, dims, rank, address,
                                              h == 0 ? NULL : kiln_go_cuda_release, (void*)h, out_buffer);
}
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
)

// CUDAMemory is where a buffer of a "cuda" client lies in GPU memory: the
// GPU's CUDA device ordinal and the CUdeviceptr of its row-major bytes (0 for
// an array without elements).
type CUDAMemory struct {
	Ordinal int
	Address uint64
}

// CUDAMemory returns where the buffer (once it is ready; the error of the run
// that was to fill it, if that failed) lies in GPU memory, or nil for a buffer
// of another backend. The memory stays valid while the buffer is open; never
// write through it (buffers are immutable).
func (b *Buffer) CUDAMemory() (*CUDAMemory, error) {
	if b != nil && b.h != nil {
		var name *C.char
		if err := statusError(C.kiln_client_backend_name(b.client.h, &name)); err != nil {
			return nil, err
		}
		if C.GoString(name) != "cuda" {
			return nil, nil
		}
	}
	var ordinal C.int
	var address C.uint64_t
	err := statusError(C.kiln_buffer_cuda_memory(b.handle(), &ordinal, &address))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return &CUDAMemory{Ordinal: int(ordinal), Address: uint64(address)}, nil
}

// AliasCUDAMemory makes a buffer of the given shape over CUDA device memory
// the caller owns (another library's allocation on d's GPU, in the primary
// context), read in place: no copy. d is a device of a "cuda" client; address
// (a CUdeviceptr) holds the array's bytes in row-major order, aligned to the
// element type (a complex type to its parts' width); it may be 0 only for an
// array without elements. Work queued on that memory must be complete, or
// queued on the legacy default stream, which this call synchronises.
//
// The caller keeps the memory allocated and unchanged until release (may be
// nil) is called: exactly once, on any goroutine, after the buffer and every
// run reading it are gone, or before AliasCUDAMemory returns when it fails.
// Refusals are *Error with code InvalidArgument naming the call: a device of
// another backend (its memory is not CUDA memory), a misaligned or 0 address,
// a bad shape.
func (d *Device) AliasCUDAMemory(shape Shape, address uint64, release func()) (*Buffer, error) {
	var h C.uintptr_t
	if release != nil {
		h = C.uintptr_t(cgo.NewHandle(release)) // deleted by kilnGoCUDARelease
	}
	var out *C.kiln_buffer_t
	err := statusError(C.kiln_go_alias_cuda_memory(d.handle(), C.kiln_element_type_t(shape.Type), i64(shape.Dims),
		size(len(shape.Dims)), C.uint64_t(address), h, &out))
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return newBuffer(out, d.client), nil
}
