package kiln

/*
#include <stdint.h>
#include <kiln/kiln.h>

extern void kilnGoEventReady(kiln_status_t* status, uintptr_t h);

static void kiln_go_event_ready(const kiln_status_t* status, void* user_data) {
  kilnGoEventReady((kiln_status_t*)status, (uintptr_t)user_data);
}

// Registers kilnGoEventReady with a cgo.Handle (an integer, not a Go pointer).
static kiln_status_t* kiln_go_event_on_ready(const kiln_event_t* event, uintptr_t h) {
  return kiln_event_on_ready(event, kiln_go_event_ready, (void*)h);
}
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"sync"
)

// Event is the completion of background work: an asynchronous execution
// (Executable.ExecuteAsync) or the filling of a buffer (Buffer.ReadyEvent).
// It becomes ready once, with success or the work's error. Closing it cancels
// nothing; it may outlive the executable, buffers and client of its work. It
// is safe for concurrent use (Close excepted).
type Event struct {
	h       *C.kiln_event_t
	cleanup runtime.Cleanup

	register sync.Once
	state    *eventState
}

// eventState is what the library's callback completes; it is reached from C
// only through a cgo.Handle, so it may outlive the Event.
type eventState struct {
	done chan struct{}
	err  error
}

func (s *eventState) complete(err error) {
	s.err = err
	close(s.done)
}

func destroyEvent(h *C.kiln_event_t) { C.kiln_event_destroy(h) }

func newEvent(h *C.kiln_event_t) *Event {
	e := &Event{h: h, state: &eventState{done: make(chan struct{})}}
	e.cleanup = runtime.AddCleanup(e, destroyEvent, h)
	return e
}

// Close frees the event handle. It is idempotent and returns nil; a Done
// channel obtained before is still closed when the work ends.
func (e *Event) Close() error {
	if e == nil || e.h == nil {
		return nil
	}
	e.cleanup.Stop()
	destroyEvent(e.h)
	e.h = nil
	return nil
}

func (e *Event) handle() *C.kiln_event_t {
	if e == nil {
		return nil
	}
	return e.h
}

// Wait blocks until the event is ready and returns the work's error (nil on
// success). It may be called any number of times, from any goroutine.
func (e *Event) Wait() error {
	err := statusError(C.kiln_event_await(e.handle()))
	runtime.KeepAlive(e)
	return err
}

// Ready reports, without blocking, whether the event is ready. A closed
// Event reports false.
func (e *Event) Ready() bool {
	var ready C.int
	err := statusError(C.kiln_event_is_ready(e.handle(), &ready))
	runtime.KeepAlive(e)
	return err == nil && ready != 0
}

// Done returns a channel that is closed when the event is ready, after which
// Err gives the outcome. The first call registers a callback with
// kiln_event_on_ready (the library calls it on the thread that finishes the
// work, or at once when the event is ready already). Calling Done first on a
// closed Event gives a closed channel and Err an InvalidArgument error.
func (e *Event) Done() <-chan struct{} {
	e.register.Do(func() {
		h := cgo.NewHandle(e.state)
		if err := statusError(C.kiln_go_event_on_ready(e.handle(), C.uintptr_t(h))); err != nil {
			// Not registered: the callback will not run.
			h.Delete()
			e.state.complete(err)
		}
		runtime.KeepAlive(e)
	})
	return e.state.done
}

// Err returns nil while the event is not ready; once the channel of Done is
// closed it returns the work's error (nil on success), as the library's
// callback reported it.
func (e *Event) Err() error {
	select {
	case <-e.Done():
		return e.state.err
	default:
		return nil
	}
}

// ReadyEvent returns an event that becomes ready when the buffer holds its
// data (at once for a buffer made from host memory); for a buffer whose
// execution failed it carries that execution's error.
func (b *Buffer) ReadyEvent() (*Event, error) {
	var h *C.kiln_event_t
	err := statusError(C.kiln_buffer_ready_event(b.handle(), &h))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return newEvent(h), nil
}
