package kiln

/*
#include <stdlib.h>
#include <kiln/kiln.h>

static kiln_client_options_t kiln_go_client_options(void) {
  kiln_client_options_t o = KILN_CLIENT_OPTIONS_INIT;
  return o;
}

static kiln_compile_options_t kiln_go_compile_options(void) {
  kiln_compile_options_t o = KILN_COMPILE_OPTIONS_INIT;
  return o;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// clientRef is the native client and the number of Go objects that need it:
// the Client itself while open, and every open Executable and Buffer made from
// it. The native client is destroyed when the count reaches zero, so children
// may outlive an explicit Client.Close (kiln.h requires children to be
// destroyed first).
type clientRef struct {
	h    *C.kiln_client_t
	refs atomic.Int64
}

func (r *clientRef) acquire() { r.refs.Add(1) }

func (r *clientRef) release() {
	if r.refs.Add(-1) == 0 {
		C.kiln_client_destroy(r.h)
	}
}

// Client is one backend and its devices. It is safe for concurrent use.
type Client struct {
	ref     *clientRef
	cleanup runtime.Cleanup
}

// ClientOption configures NewClient.
type ClientOption func(*clientOptions)

type clientOptions struct {
	backend    *string
	numDevices int
}

// WithBackend selects a backend by name ("interpreter", "cpu", ...). Without
// it the library picks its default; an empty name is InvalidArgument.
func WithBackend(name string) ClientOption {
	return func(o *clientOptions) { o.backend = &name }
}

// WithNumDevices sets how many devices the client presents (0, the default,
// means the backend's own count). The host backends ("cpu", "interpreter")
// split the machine into n devices (at most 64) that share its cores and
// memory; a GPU backend accepts only 0 or its physical count (else
// InvalidArgument).
func WithNumDevices(n int) ClientOption {
	return func(o *clientOptions) { o.numDevices = n }
}

// NewClient creates a client. An unknown backend is NotFound; one that cannot
// run on this machine is Unavailable.
func NewClient(opts ...ClientOption) (*Client, error) {
	var o clientOptions
	for _, opt := range opts {
		opt(&o)
	}
	copts := C.kiln_go_client_options()
	if o.backend != nil {
		copts.backend = C.CString(*o.backend)
		defer C.free(unsafe.Pointer(copts.backend))
	}
	if int(int32(o.numDevices)) != o.numDevices {
		return nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf("WithNumDevices(%d): out of int32 range", o.numDevices)}
	}
	copts.num_devices = C.int32_t(o.numDevices)
	var h *C.kiln_client_t
	if err := statusError(C.kiln_client_create(&copts, &h)); err != nil {
		return nil, err
	}
	ref := &clientRef{h: h}
	ref.refs.Store(1)
	c := &Client{ref: ref}
	c.cleanup = runtime.AddCleanup(c, (*clientRef).release, ref)
	return c, nil
}

// Close releases the client. Its native object is freed once every executable
// and buffer made from it is closed too. Close is idempotent and returns nil.
func (c *Client) Close() error {
	if c == nil || c.ref == nil {
		return nil
	}
	c.cleanup.Stop()
	c.ref.release()
	c.ref = nil
	return nil
}

// handle returns the native client, or nil once closed (the library then
// reports InvalidArgument naming the parameter).
func (c *Client) handle() *C.kiln_client_t {
	if c == nil || c.ref == nil {
		return nil
	}
	return c.ref.h
}

// BackendName returns the name of the client's backend.
func (c *Client) BackendName() (string, error) {
	var name *C.char
	err := statusError(C.kiln_client_backend_name(c.handle(), &name))
	s := C.GoString(name)
	runtime.KeepAlive(c)
	return s, err
}

// DeviceCount returns the number of devices of the client's backend.
func (c *Client) DeviceCount() (int, error) {
	var n C.size_t
	err := statusError(C.kiln_client_device_count(c.handle(), &n))
	runtime.KeepAlive(c)
	return int(n), err
}

// DeviceDescription describes device index (OutOfRange past the end).
func (c *Client) DeviceDescription(index int) (string, error) {
	var d *C.char
	err := statusError(C.kiln_client_device_description(c.handle(), size(index), &d))
	s := C.GoString(d)
	runtime.KeepAlive(c)
	return s, err
}

// TransferToInfeed queues a host array (row-major bytes) for the next infeed
// op run by this client's executables.
func (c *Client) TransferToInfeed(shape Shape, data []byte) error {
	err := statusError(C.kiln_client_transfer_to_infeed(c.handle(), C.kiln_element_type_t(shape.Type),
		i64(shape.Dims), size(len(shape.Dims)), bytesPtr(data), size(len(data))))
	runtime.KeepAlive(c)
	return err
}

// CompileOption configures Compile.
type CompileOption func(*compileOptions)

type compileOptions struct{ c C.kiln_compile_options_t }

// WithOptimizationLevel sets the optimisation level (0 = only what correctness
// needs; the library's default is 2).
func WithOptimizationLevel(level int) CompileOption {
	return func(o *compileOptions) { o.c.optimization_level = C.int32_t(level) }
}

// WithNumThreads sets the threads for intra-op parallelism (0 = one per core).
func WithNumThreads(n int) CompileOption {
	return func(o *compileOptions) { o.c.num_threads = C.int32_t(n) }
}

// WithAllowUnsafeNanMath compiles a computation whose results depend on NaN
// or infinities even for a device whose driver may assume there are none
// (vulkan without float controls), which refuses it otherwise as
// Unimplemented: such results may then be wrong. Off by default.
func WithAllowUnsafeNanMath() CompileOption {
	return func(o *compileOptions) { o.c.allow_unsafe_nan_math = 1 }
}

// Compile compiles a computation for the client's backend. The computation
// may be closed right after. An op the backend cannot run is Unimplemented.
func (c *Client) Compile(comp *Computation, opts ...CompileOption) (*Executable, error) {
	o := compileOptions{c: C.kiln_go_compile_options()}
	for _, opt := range opts {
		opt(&o)
	}
	var h *C.kiln_executable_t
	err := statusError(C.kiln_client_compile(c.handle(), comp.handle(), &o.c, &h))
	runtime.KeepAlive(comp)
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	return newExecutable(h, c.ref), nil
}
