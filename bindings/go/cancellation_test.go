package kiln_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"kiln.dev/kiln"
)

// countToPath holds count_to, shared by the bindings' tests: it counts i up from
// 0 while i != n, and for n = -1 that is 2^64 iterations.
const countToPath = "../testdata/count_to.hlo"

// compileCountTo returns the count_to executable on client c.
func compileCountTo(t testing.TB, c *kiln.Client) *kiln.Executable {
	t.Helper()
	text := must(os.ReadFile(countToPath))
	comp := must(kiln.ParseHLO(string(text)))
	defer comp.Close()
	return must(c.Compile(comp))
}

// countToFixture makes a client, the count_to module compiled on it and an
// argument buffer holding n, closed (in reverse order) when the test ends.
func countToFixture(t *testing.T, n int64) (*kiln.Client, *kiln.Executable, *kiln.Buffer) {
	t.Helper()
	c := must(kiln.NewClient())
	t.Cleanup(func() { c.Close() })
	exe := compileCountTo(t, c)
	t.Cleanup(func() { exe.Close() })
	argument := must(kiln.NewBuffer(c, []int64{n}))
	t.Cleanup(func() { argument.Close() })
	return c, exe, argument
}

// compileForever returns, built with the builder, a while loop over an f32
// whose condition is the constant true.
func compileForever(t testing.TB, c *kiln.Client) *kiln.Executable {
	t.Helper()
	scalar := kiln.NewShape(kiln.F32)
	cb := must(kiln.NewBuilder("cond"))
	defer cb.Close()
	cb.Parameter(0, scalar, "s")
	cond := must(cb.BuildRoot(cb.ConstantPred(true)))
	defer cond.Close()
	bb := must(kiln.NewBuilder("body"))
	defer bb.Close()
	body := must(bb.BuildRoot(bb.Add(bb.Parameter(0, scalar, "s"), bb.ConstantF32(1))))
	defer body.Close()
	b := must(kiln.NewBuilder("forever"))
	defer b.Close()
	comp := must(b.BuildRoot(b.While(cond, body, b.Parameter(0, scalar, "x"))))
	defer comp.Close()
	return must(c.Compile(comp))
}

// checkUsable runs normal computations on what a stopped run used: exe counts
// to 7, and endless (holding -1) is unchanged and negates to 1 on another
// executable of the same client.
func checkUsable(t *testing.T, c *kiln.Client, exe *kiln.Executable, endless *kiln.Buffer) {
	t.Helper()
	if v := must(kiln.ToSlice[int64](endless)); v[0] != -1 {
		t.Fatalf("the argument changed to %v", v)
	}
	seven := must(kiln.NewBuffer(c, []int64{7}))
	defer seven.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := must(exe.ExecuteContext(ctx, []*kiln.Buffer{seven}))
	defer closeAll(t, out[0])
	if v := must(kiln.ToSlice[int64](out[0])); v[0] != 7 {
		t.Fatalf("count_to(7) = %v", v)
	}
	b := must(kiln.NewBuilder("negate"))
	defer b.Close()
	neg := must(b.BuildRoot(b.Neg(b.Parameter(0, kiln.NewShape(kiln.S64), "x"))))
	defer neg.Close()
	negExe := must(c.Compile(neg))
	defer negExe.Close()
	negated := must(negExe.Execute([]*kiln.Buffer{endless}))
	defer closeAll(t, negated[0])
	if v := must(kiln.ToSlice[int64](negated[0])); v[0] != 1 {
		t.Fatalf("-(-1) = %v", v)
	}
}

// checkStopped checks that err is a *kiln.Error with code and that errors.Is
// matches it to target (a context error).
func checkStopped(t *testing.T, err error, code kiln.Code, target error) {
	t.Helper()
	var kerr *kiln.Error
	if !errors.As(err, &kerr) || kerr.Code != code {
		t.Fatalf("got %v, want a *kiln.Error with code %v", err, code)
	}
	if !errors.Is(err, target) {
		t.Fatalf("errors.Is(%v, %v) is false", err, target)
	}
}

// eachBackend runs test as a subtest named after each backend of the build,
// on a client of that backend closed when it returns. A backend that cannot
// run on this machine (its client creation fails with Unavailable, as cuda's
// does without the NVIDIA driver) is skipped, saying why; any other failure to
// create a client fails the test, and so does a run in which every backend was
// skipped.
func eachBackend(t *testing.T, test func(t *testing.T, c *kiln.Client)) {
	t.Helper()
	backends := must(kiln.Backends())
	if len(backends) == 0 {
		t.Fatal("no backends")
	}
	ran, skipped := 0, 0
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			ran++
			c, err := kiln.NewClient(kiln.WithBackend(backend))
			var kerr *kiln.Error
			if errors.As(err, &kerr) && kerr.Code == kiln.Unavailable {
				skipped++
				t.Skipf("skipping backend %s: %s", backend, kerr.Message)
			}
			if err != nil {
				t.Fatalf("creating a client of backend %s: %v", backend, err)
			}
			defer c.Close()
			test(t, c)
		})
	}
	// ran is 0 when -run selected none of the subtests.
	if ran > 0 && ran == skipped {
		t.Fatalf("every backend was skipped (%d of %d): nothing was tested", skipped, len(backends))
	}
}

func TestDeadlineStopsAnEndlessLoop(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *kiln.Client) {
		exe := compileCountTo(t, c)
		defer exe.Close()
		endless := must(kiln.NewBuffer(c, []int64{-1}))
		defer endless.Close()

		// The deadline counts from WithTimeout, so the clock starts before it.
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		out, err := exe.ExecuteContext(ctx, []*kiln.Buffer{endless})
		elapsed := time.Since(start)
		if out != nil {
			t.Fatalf("results from a stopped run: %v", out)
		}
		checkStopped(t, err, kiln.DeadlineExceeded, context.DeadlineExceeded)
		if errors.Is(err, context.Canceled) {
			t.Fatalf("%v is also context.Canceled", err)
		}
		if elapsed < 50*time.Millisecond || elapsed > 30*time.Second {
			t.Fatalf("stopped after %v", elapsed)
		}
		checkUsable(t, c, exe, endless)
	})
}

func TestCancelFromAnotherGoroutine(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *kiln.Client) {
		exe := compileCountTo(t, c)
		defer exe.Close()
		endless := must(kiln.NewBuffer(c, []int64{-1}))
		defer endless.Close()

		// A deadline far away as well, so that the stop seen is the cancellation's.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		timer := time.AfterFunc(50*time.Millisecond, cancel)
		defer timer.Stop()
		_, err := exe.ExecuteContext(ctx, []*kiln.Buffer{endless})
		checkStopped(t, err, kiln.Cancelled, context.Canceled)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v is also context.DeadlineExceeded", err)
		}
		checkUsable(t, c, exe, endless)
	})
}

func TestCancelAWhileLoopBuiltWithTheBuilder(t *testing.T) {
	c := must(kiln.NewClient())
	defer c.Close()
	exe := compileForever(t, c)
	defer exe.Close()
	x := must(kiln.NewBuffer(c, []float32{0}))
	defer x.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("the user gave up")
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel(why)
	}()
	_, err := exe.ExecuteContext(ctx, []*kiln.Buffer{x})
	checkStopped(t, err, kiln.Cancelled, context.Canceled)
	if context.Cause(ctx) != why {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}

func TestADoneContextFailsBeforeRunning(t *testing.T) {
	c := must(kiln.NewClient())
	defer c.Close()
	exe := compileCountTo(t, c)
	defer exe.Close()
	// count_to(7) ends at once on its own: only a refusal to start explains the errors.
	seven := must(kiln.NewBuffer(c, []int64{7}))
	defer seven.Close()

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := exe.ExecuteContext(cancelled, []*kiln.Buffer{seven})
	checkStopped(t, err, kiln.Cancelled, context.Canceled)
	if !strings.Contains(err.Error(), "before the execution started") {
		t.Fatalf("message: %v", err)
	}

	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	_, err = exe.ExecuteContext(expired, []*kiln.Buffer{seven})
	checkStopped(t, err, kiln.DeadlineExceeded, context.DeadlineExceeded)
}

func TestContextsThatDoNotFireChangeNothing(t *testing.T) {
	_, exe, n := countToFixture(t, 100)
	long, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), context.TODO(), long} {
		out := must(exe.ExecuteContext(ctx, []*kiln.Buffer{n}, kiln.WithRNGSeed(1)))
		if v := must(kiln.ToSlice[int64](out[0])); v[0] != 100 {
			t.Fatalf("count_to(100) = %v", v)
		}
		closeAll(t, out[0])
	}
}

func TestNilContextIsAnInvalidArgument(t *testing.T) {
	_, exe, n := countToFixture(t, 1)
	var kerr *kiln.Error
	// A nil Context, on purpose.
	if _, err := exe.ExecuteContext(nil, []*kiln.Buffer{n}); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument {
		t.Fatalf("nil context: %v", err)
	}
}

// ownContext is a Context the context package does not know (Done is its own
// channel), so that context.AfterFunc has to watch it with a goroutine.
type ownContext struct {
	context.Context
	done chan struct{}
}

func (c ownContext) Done() <-chan struct{} { return c.done }

func (c ownContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func TestCancelAContextOfAnotherImplementation(t *testing.T) {
	_, exe, endless := countToFixture(t, -1)
	ctx := ownContext{context.Background(), make(chan struct{})}
	timer := time.AfterFunc(50*time.Millisecond, func() { close(ctx.done) })
	defer timer.Stop()
	_, err := exe.ExecuteContext(ctx, []*kiln.Buffer{endless})
	checkStopped(t, err, kiln.Cancelled, context.Canceled)
}

// Neither finished nor stopped runs leave a goroutine behind, also while the
// context they ran under lives on.
func TestExecuteContextLeavesNoGoroutine(t *testing.T) {
	c, exe, n := countToFixture(t, 3)
	endless := must(kiln.NewBuffer(c, []int64{-1}))
	defer endless.Close()

	runs := 200
	if testing.Short() {
		runs = 20
	}
	live, cancelLive := context.WithCancel(context.Background())
	defer cancelLive()
	own := ownContext{context.Background(), make(chan struct{})}
	defer close(own.done)
	before := runtime.NumGoroutine()
	for i := 0; i < runs; i++ {
		for _, ctx := range []context.Context{live, own} {
			out := must(exe.ExecuteContext(ctx, []*kiln.Buffer{n}))
			closeAll(t, out[0])
		}
		ctx, cancel := context.WithTimeout(live, time.Millisecond)
		if _, err := exe.ExecuteContext(ctx, []*kiln.Buffer{endless}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run %d: %v", i, err)
		}
		cancel()
	}
	// Goroutines that end on their own (context.AfterFunc's watcher of own
	// after its stop, timers' callbacks) may still be finishing: allow them a
	// moment, then require no more than before.
	for wait := 0; runtime.NumGoroutine() > before && wait < 100; wait++ {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before %d runs, %d after", before, 3*runs, after)
	}
}
