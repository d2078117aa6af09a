package kiln

/*
#include <kiln/kiln.h>
*/
import "C"

import (
	"os"
	"runtime"
	"unsafe"
)

// Computation is a built or parsed computation (a module with an entry). It is
// immutable and safe for concurrent use.
type Computation struct {
	h       *C.kiln_computation_t
	cleanup runtime.Cleanup
}

func destroyComputation(h *C.kiln_computation_t) { C.kiln_computation_destroy(h) }

func newComputation(h *C.kiln_computation_t) *Computation {
	c := &Computation{h: h}
	c.cleanup = runtime.AddCleanup(c, destroyComputation, h)
	return c
}

// Close frees the computation. It is idempotent and returns nil.
func (c *Computation) Close() error {
	if c == nil || c.h == nil {
		return nil
	}
	c.cleanup.Stop()
	destroyComputation(c.h)
	c.h = nil
	return nil
}

func (c *Computation) handle() *C.kiln_computation_t {
	if c == nil {
		return nil
	}
	return c.h
}

// ParseHLO parses and verifies XLA HLO text. Errors are InvalidArgument naming
// line and column.
func ParseHLO(text string) (*Computation, error) {
	var h *C.kiln_computation_t
	// The text holds no Go pointers and is not retained, so it is passed as is.
	err := statusError(C.kiln_computation_from_hlo_text((*C.char)(unsafe.Pointer(unsafe.StringData(text))),
		size(len(text)), &h))
	if err != nil {
		return nil, err
	}
	return newComputation(h), nil
}

// ReadHLOFile reads an HLO text file and parses it with ParseHLO.
func ReadHLOFile(path string) (*Computation, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseHLO(string(text))
}

// HLOText prints the computation as HLO text.
func (c *Computation) HLOText() (string, error) {
	var text *C.char
	err := statusError(C.kiln_computation_to_hlo_text(c.handle(), &text))
	runtime.KeepAlive(c)
	if err != nil {
		return "", err
	}
	defer C.kiln_string_destroy(text)
	return C.GoString(text), nil
}

// ParameterCount returns the number of parameters of the entry computation.
func (c *Computation) ParameterCount() (int, error) {
	var n C.size_t
	err := statusError(C.kiln_computation_parameter_count(c.handle(), &n))
	runtime.KeepAlive(c)
	return int(n), err
}

// Grad returns the reverse-mode derivative (vector-Jacobian product) of c as a
// new computation (kiln_computation_vjp). It takes c's parameters, then, unless
// c's result is one float scalar (whose cotangent is 1), one cotangent per
// result leaf; it returns c's result leaves followed by the gradient for each
// parameter number of wrt, in that order. A bad or repeated number, an integer
// parameter or an op without a derivative is an *Error (InvalidArgument or
// Unimplemented) naming it.
func (c *Computation) Grad(wrt ...int64) (*Computation, error) {
	var h *C.kiln_computation_t
	err := statusError(C.kiln_computation_vjp(c.handle(), i64(wrt), size(len(wrt)), &h))
	runtime.KeepAlive(c)
	runtime.KeepAlive(wrt)
	if err != nil {
		return nil, err
	}
	return newComputation(h), nil
}

// ValueAndGrad returns, for a computation whose result is one float scalar (a
// loss), a computation with the same parameters that returns the loss followed
// by its gradient for each parameter number of wrt
// (kiln_computation_value_and_grad).
func (c *Computation) ValueAndGrad(wrt ...int64) (*Computation, error) {
	var h *C.kiln_computation_t
	err := statusError(C.kiln_computation_value_and_grad(c.handle(), i64(wrt), size(len(wrt)), &h))
	runtime.KeepAlive(c)
	runtime.KeepAlive(wrt)
	if err != nil {
		return nil, err
	}
	return newComputation(h), nil
}

// JVP returns the forward-mode derivative (Jacobian-vector product) of c as a
// new computation (kiln_computation_jvp). It takes c's parameters, then one
// tangent per parameter number of wrt (in that order, each of its parameter's
// shape); it returns c's result leaves followed by the tangent of each result
// leaf (zeros for integer leaves). A bad or repeated number, an integer
// parameter or an op without a derivative is an *Error (InvalidArgument or
// Unimplemented) naming it.
func (c *Computation) JVP(wrt ...int64) (*Computation, error) {
	var h *C.kiln_computation_t
	err := statusError(C.kiln_computation_jvp(c.handle(), i64(wrt), size(len(wrt)), &h))
	runtime.KeepAlive(c)
	runtime.KeepAlive(wrt)
	if err != nil {
		return nil, err
	}
	return newComputation(h), nil
}
