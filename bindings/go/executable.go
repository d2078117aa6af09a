package kiln

/*
#include <stdlib.h>
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
	"unsafe"
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

// ExecuteOption configures Execute, ExecuteContext and ExecuteAsync.
type ExecuteOption func(*executeOptions)

type executeOptions struct {
	c       C.kiln_execute_options_t
	device  *Device // kept alive while o.c.device is in use
	donated []int
}

// WithRNGSeed sets the seed of the rng ops: equal seeds give equal numbers.
func WithRNGSeed(seed uint64) ExecuteOption {
	return func(o *executeOptions) { o.c.rng_seed = C.uint64_t(seed) }
}

// WithTimeout bounds the run: it fails with DeadlineExceeded once d has
// passed since the call (for ExecuteAsync, since ExecuteAsync was called). 0
// means no deadline; a negative d is InvalidArgument. ExecuteContext uses the
// sooner of d and its context's deadline.
func WithTimeout(d time.Duration) ExecuteOption {
	return func(o *executeOptions) { o.c.timeout_ns = C.int64_t(d.Nanoseconds()) }
}

// WithDevice runs on device d, a device of the executable's client. Every
// argument must live on it (else InvalidArgument naming the argument;
// Buffer.CopyToDevice moves one), and the results are made on it. Without it
// the run uses the first argument's device, or the client's first device
// when there are no arguments.
func WithDevice(d *Device) ExecuteOption {
	return func(o *executeOptions) {
		o.device = d
		o.c.device = d.handle()
	}
}

// WithDonatedArguments donates the arguments at the given indices to the
// run (as XLA's donate_argnums): it takes them over and frees their memory as
// soon as it no longer needs it. A donated Buffer may afterwards only be
// closed; any other use is a FailedPrecondition error naming the donation. An
// index out of range or repeated is InvalidArgument, and a failed call
// donates nothing.
func WithDonatedArguments(indices ...int) ExecuteOption {
	return func(o *executeOptions) { o.donated = append(o.donated, indices...) }
}

// Execute runs the executable once on args (in parameter order, tuples
// flattened; they are only read unless donated) and returns the result leaves in order. The
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
		if o.c.timeout_ns <= 0 || C.int64_t(left.Nanoseconds()) < o.c.timeout_ns {
			o.c.timeout_ns = C.int64_t(left.Nanoseconds())
		}
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
		if cause == nil && kerr.Code == DeadlineExceeded && hasDeadline && !time.Now().Before(deadline) {
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
	out, _, err := e.run(args, o, false)
	return out, err
}

// ExecuteAsync starts the executable on args without waiting for it, and
// returns its result buffers at once with an Event that becomes ready when
// the run ends. Errors in the arguments are returned at once, as from
// Execute. The run starts once every argument is ready, so runs chain: a
// result may be passed to the next ExecuteAsync (or Execute) at once. The
// results' shapes are known at once; reading one (Buffer.Bytes, ToSlice, or
// an execution using it) waits until it is ready. When the run fails (a
// timeout, a run-time error or a failed argument) the event, every result's
// ReadyEvent and every read of a result return the error. The caller owns the
// results and the event and closes them; the executable, the arguments and
// the client may be closed at once (the run keeps what it needs).
func (e *Executable) ExecuteAsync(args []*Buffer, opts ...ExecuteOption) ([]*Buffer, *Event, error) {
	return e.run(args, newExecuteOptions(opts), true)
}

func (e *Executable) run(args []*Buffer, o *executeOptions, async bool) ([]*Buffer, *Event, error) {
	n, err := e.ResultCount()
	if err != nil {
		return nil, nil, err
	}
	cargs := make([]*C.kiln_buffer_t, len(args))
	for i, a := range args {
		cargs[i] = a.handle()
	}
	if len(o.donated) > 0 {
		for _, d := range o.donated {
			if d < 0 {
				return nil, nil, &Error{Code: InvalidArgument, Message: fmt.Sprintf("donated argument index %d is negative", d)}
			}
		}
		// In C memory: o.c, which points at it, is Go memory passed to C.
		donated := (*C.size_t)(C.malloc(C.size_t(len(o.donated)) * C.size_t(unsafe.Sizeof(C.size_t(0)))))
		defer C.free(unsafe.Pointer(donated))
		for i, d := range o.donated {
			unsafe.Slice(donated, len(o.donated))[i] = C.size_t(d)
		}
		o.c.donated_arguments = donated
		o.c.num_donated_arguments = size(len(o.donated))
	}
	results := make([]*C.kiln_buffer_t, n+1) // +1: never pass a nil array
	var got C.size_t
	var event *C.kiln_event_t
	if async {
		err = statusError(C.kiln_executable_execute_async(e.handle(), bufPtr(cargs), size(len(cargs)), &o.c,
			&results[0], size(n), &got, &event))
	} else {
		err = statusError(C.kiln_executable_execute(e.handle(), bufPtr(cargs), size(len(cargs)), &o.c,
			&results[0], size(n), &got))
	}
	runtime.KeepAlive(args)
	runtime.KeepAlive(o.device)
	runtime.KeepAlive(e)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*Buffer, int(got))
	for i := range out {
		out[i] = newBuffer(results[i], e.client)
	}
	var ev *Event
	if async {
		ev = newEvent(event)
	}
	return out, ev, nil
}

func bufPtr(s []*C.kiln_buffer_t) **C.kiln_buffer_t {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
