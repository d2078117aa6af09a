package kiln

/*
#include <kiln/kiln.h>

static kiln_execute_options_t kiln_go_execute_options(void) {
  kiln_execute_options_t o = KILN_EXECUTE_OPTIONS_INIT;
  return o;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Executable is a computation compiled for a client. It may run concurrently
// from several goroutines.
type Executable struct {
	h       *C.kiln_executable_t
	client  *clientRef
	cleanup runtime.Cleanup
}

type executableCleanup struct {
	h      *C.kiln_executable_t
	client *clientRef
}

func (x executableCleanup) run() {
	C.kiln_executable_destroy(x.h)
	x.client.release()
}

func newExecutable(h *C.kiln_executable_t, client *clientRef) *Executable {
	client.acquire()
	e := &Executable{h: h, client: client}
	e.cleanup = runtime.AddCleanup(e, executableCleanup.run, executableCleanup{h, client})
	return e
}

// Close frees the executable. It is idempotent and returns nil.
func (e *Executable) Close() error {
	if e == nil || e.h == nil {
		return nil
	}
	e.cleanup.Stop()
	executableCleanup{e.h, e.client}.run()
	e.h, e.client = nil, nil
	return nil
}

func (e *Executable) handle() *C.kiln_executable_t {
	if e == nil {
		return nil
	}
	return e.h
}

// ParameterCount returns the number of arguments Execute takes (the array
// leaves of the entry's parameters).
func (e *Executable) ParameterCount() (int, error) {
	var n C.size_t
	err := statusError(C.kiln_executable_parameter_count(e.handle(), &n))
	runtime.KeepAlive(e)
	return int(n), err
}

// ResultCount returns the number of results Execute returns (the array leaves
// of the entry's result).
func (e *Executable) ResultCount() (int, error) {
	var n C.size_t
	err := statusError(C.kiln_executable_result_count(e.handle(), &n))
	runtime.KeepAlive(e)
	return int(n), err
}

// ParameterType returns the element type of argument index.
func (e *Executable) ParameterType(index int) (ElementType, error) {
	var t C.kiln_element_type_t
	err := statusError(C.kiln_executable_parameter_type(e.handle(), size(index), &t))
	runtime.KeepAlive(e)
	return ElementType(t), err
}

// ExecuteOption configures Execute and ExecuteContext.
type ExecuteOption func(*executeOptions)

type executeOptions struct{ c C.kiln_execute_options_t }

// WithRNGSeed sets the seed of the rng ops: equal seeds give equal numbers.
func WithRNGSeed(seed uint64) ExecuteOption {
	return func(o *executeOptions) { o.c.rng_seed = C.uint64_t(seed) }
}

// Execute runs the executable once on args (in parameter order, tuples
// flattened; they are only read) and returns the result leaves in order. The
// caller owns the results and closes them. It runs until the computation ends;
// ExecuteContext bounds it.
func (e *Executable) Execute(args []*Buffer, opts ...ExecuteOption) ([]*Buffer, error) {
	return e.execute(args, newExecuteOptions(opts))
}

// ExecuteContext is Execute bounded by ctx: ctx's deadline becomes the
// library's timeout and ctx's cancellation cancels the run, so either stops
// even a while loop that never ends (within microseconds: the library checks
// between steps and at every loop back-edge). A ctx already done fails before
// anything runs.
//
// A run stopped for ctx returns an error wrapping both a *Error and ctx.Err():
// errors.Is(err, context.DeadlineExceeded) or errors.Is(err, context.Canceled)
// holds, and errors.As gives the *Error, whose Code is DeadlineExceeded or
// Cancelled to match ctx.Err() (whichever of the library's timer and ctx's
// fired first) and whose Message is the library's. The executable, its client
// and args stay usable afterwards.
//
// For a ctx that can be cancelled ExecuteContext registers a callback with
// context.AfterFunc, which cancels a kiln_cancellation_t, and removes it before
// returning: no goroutine outlives the call. A nil ctx is an InvalidArgument
// error.
func (e *Executable) ExecuteContext(ctx context.Context, args []*Buffer, opts ...ExecuteOption) ([]*Buffer, error) {
	if ctx == nil {
		return nil, &Error{Code: InvalidArgument, Message: "ExecuteContext: nil context.Context"}
	}
	o := newExecuteOptions(opts)
	if err := ctx.Err(); err != nil {
		return nil, contextError(err, "ExecuteContext: the context was done before the execution started")
	}
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		left := time.Until(deadline)
		if left <= 0 {
			// Past but not yet reported by ctx (its timer has not fired): 0 would
			// mean no deadline to the library.
			return nil, contextError(context.DeadlineExceeded,
				"ExecuteContext: the context's deadline passed before the execution started")
		}
		o.c.timeout_ns = C.int64_t(left.Nanoseconds())
	}
	if ctx.Done() != nil {
		var cancellation *C.kiln_cancellation_t
		if err := statusError(C.kiln_cancellation_create(&cancellation)); err != nil {
			return nil, err
		}
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			C.kiln_cancellation_cancel(cancellation)
			close(fired)
		})
		defer func() {
			// The callback may be running: wait for it before freeing what it uses.
			if !stop() {
				<-fired
			}
			C.kiln_cancellation_destroy(cancellation)
		}()
		o.c.cancellation = cancellation
	}
	out, err := e.execute(args, o)
	var kerr *Error
	if err != nil && errors.As(err, &kerr) && (kerr.Code == Cancelled || kerr.Code == DeadlineExceeded) {
		cause := ctx.Err()
		if cause == nil && kerr.Code == DeadlineExceeded && hasDeadline {
			// The library's clock reached ctx's deadline a moment before ctx's timer fired.
			cause = context.DeadlineExceeded
		}
		if cause != nil {
			return nil, contextError(cause, kerr.Message)
		}
	}
	return out, err
}

// contextError is a *Error with the code matching cause (a ctx.Err() value),
// joined with cause so that errors.Is finds it.
func contextError(cause error, message string) error {
	code := Cancelled
	if errors.Is(cause, context.DeadlineExceeded) {
		code = DeadlineExceeded
	}
	return fmt.Errorf("%w: %w", &Error{Code: code, Message: message}, cause)
}

func newExecuteOptions(opts []ExecuteOption) *executeOptions {
	o := &executeOptions{c: C.kiln_go_execute_options()}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func (e *Executable) execute(args []*Buffer, o *executeOptions) ([]*Buffer, error) {
	n, err := e.ResultCount()
	if err != nil {
		return nil, err
	}
	cargs := make([]*C.kiln_buffer_t, len(args))
	for i, a := range args {
		cargs[i] = a.handle()
	}
	results := make([]*C.kiln_buffer_t, n+1) // +1: never pass a nil array
	var got C.size_t
	err = statusError(C.kiln_executable_execute(e.handle(), bufPtr(cargs), size(len(cargs)), &o.c,
		&results[0], size(n), &got))
	runtime.KeepAlive(args)
	runtime.KeepAlive(e)
	if err != nil {
		return nil, err
	}
	out := make([]*Buffer, int(got))
	for i := range out {
		out[i] = newBuffer(results[i], e.client)
	}
	return out, nil
}

func bufPtr(s []*C.kiln_buffer_t) **C.kiln_buffer_t {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
