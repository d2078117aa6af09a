package kiln

/*
#include <kiln/kiln.h>

static kiln_execute_options_t kiln_go_execute_options(void) {
  kiln_execute_options_t o = KILN_EXECUTE_OPTIONS_INIT;
  return o;
}
*/
import "C"

import "runtime"

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

// ExecuteOption configures Execute.
type ExecuteOption func(*executeOptions)

type executeOptions struct{ c C.kiln_execute_options_t }

// WithRNGSeed sets the seed of the rng ops: equal seeds give equal numbers.
func WithRNGSeed(seed uint64) ExecuteOption {
	return func(o *executeOptions) { o.c.rng_seed = C.uint64_t(seed) }
}

// Execute runs the executable once on args (in parameter order, tuples
// flattened; they are only read) and returns the result leaves in order. The
// caller owns the results and closes them.
func (e *Executable) Execute(args []*Buffer, opts ...ExecuteOption) ([]*Buffer, error) {
	o := executeOptions{c: C.kiln_go_execute_options()}
	for _, opt := range opts {
		opt(&o)
	}
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
