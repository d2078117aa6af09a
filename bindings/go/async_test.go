package kiln_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"kiln.dev/kiln"
)

// checkCode fails the test unless err is a *kiln.Error with code.
func checkCode(t *testing.T, err error, code kiln.Code, what string) {
	t.Helper()
	var kerr *kiln.Error
	if !errors.As(err, &kerr) || kerr.Code != code {
		t.Fatalf("%s: got %v, want a *kiln.Error with code %v", what, err, code)
	}
}

// hostBackends are the backends of the build that split the machine into devices.
func hostBackends(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, b := range must(kiln.Backends()) {
		if b == "cpu" || b == "interpreter" {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatal("neither the cpu nor the interpreter backend is built")
	}
	return out
}

// splitClient is a client of backend with n devices, closed when the test ends.
func splitClient(t *testing.T, backend string, n int) (*kiln.Client, []*kiln.Device) {
	t.Helper()
	c := must(kiln.NewClient(kiln.WithBackend(backend), kiln.WithNumDevices(n)))
	t.Cleanup(func() { c.Close() })
	devices := must(c.Devices())
	if len(devices) != n {
		t.Fatalf("%d devices, want %d", len(devices), n)
	}
	return c, devices
}

// compileAddOne compiles x + 1 for an f32[4] x.
func compileAddOne(t *testing.T, c *kiln.Client) *kiln.Executable {
	t.Helper()
	b := must(kiln.NewBuilder("add_one"))
	defer b.Close()
	comp := must(b.BuildRoot(b.Add(b.Parameter(0, kiln.NewShape(kiln.F32, 4), "x"), b.ConstantF32(1))))
	defer comp.Close()
	exe := must(c.Compile(comp))
	t.Cleanup(func() { exe.Close() })
	return exe
}

func deviceIndex(t *testing.T, b *kiln.Buffer) int {
	t.Helper()
	return must(must(b.Device()).Index())
}

func checkF32(t *testing.T, b *kiln.Buffer, want []float32, what string) {
	t.Helper()
	got, err := kiln.ToSlice[float32](b)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s = %v (%v), want %v", what, got, err, want)
	}
}

func TestSeveralHostDevices(t *testing.T) {
	for _, backend := range hostBackends(t) {
		t.Run(backend, func(t *testing.T) {
			def := must(kiln.NewClient(kiln.WithBackend(backend)))
			defer def.Close()
			if n := must(def.DeviceCount()); n != 1 {
				t.Fatalf("default client: %d devices", n)
			}
			c, devices := splitClient(t, backend, 3)
			if n := must(c.DeviceCount()); n != 3 {
				t.Fatalf("DeviceCount = %d", n)
			}
			seen := map[string]bool{}
			for i, d := range devices {
				if idx := must(d.Index()); idx != i {
					t.Fatalf("device %d has index %d", i, idx)
				}
				desc := must(d.Description())
				if desc == "" || desc != must(c.DeviceDescription(i)) || d.String() != desc {
					t.Fatalf("device %d: description %q, client says %q", i, desc, must(c.DeviceDescription(i)))
				}
				seen[desc] = true
				if again := must(c.Device(i)); !again.Equal(d) {
					t.Fatalf("device %d twice is not equal", i)
				}
			}
			if len(seen) != 3 {
				t.Fatalf("descriptions are not distinct: %v", seen)
			}
			if devices[0].Equal(devices[1]) {
				t.Fatal("devices 0 and 1 are equal")
			}
			_, err := c.Device(3)
			checkCode(t, err, kiln.OutOfRange, "Device(3)")
			_, err = c.Device(-1)
			checkCode(t, err, kiln.OutOfRange, "Device(-1)")
			for _, n := range []int{-1, 65} {
				_, err := kiln.NewClient(kiln.WithBackend(backend), kiln.WithNumDevices(n))
				checkCode(t, err, kiln.InvalidArgument, "WithNumDevices")
			}
		})
	}
}

// A Device keeps its client's native object alive after Client.Close.
func TestDeviceOutlivesItsClient(t *testing.T) {
	c := must(kiln.NewClient(kiln.WithNumDevices(2)))
	d := must(c.Device(1))
	closeAll(t, c)
	b := must(kiln.NewBufferOn(d, []float32{1, 2, 3, 4}, 4))
	defer b.Close()
	if i := deviceIndex(t, b); i != 1 {
		t.Fatalf("buffer on device %d", i)
	}
	checkF32(t, b, []float32{1, 2, 3, 4}, "buffer")
}

func TestBufferPlacementAndCopyToDevice(t *testing.T) {
	for _, backend := range hostBackends(t) {
		t.Run(backend, func(t *testing.T) {
			c, devices := splitClient(t, backend, 3)
			data := []float32{1, 2, 3, 4}
			first := must(kiln.NewBuffer(c, data, 4))
			defer first.Close()
			if i := deviceIndex(t, first); i != 0 {
				t.Fatalf("NewBuffer placed on device %d", i)
			}
			on2 := must(kiln.NewBufferOn(devices[2], data, 4))
			defer on2.Close()
			if d := must(on2.Device()); !d.Equal(devices[2]) {
				t.Fatalf("buffer on %v, want %v", d, devices[2])
			}
			copied := must(on2.CopyToDevice(devices[1]))
			defer copied.Close()
			if i, j := deviceIndex(t, copied), deviceIndex(t, on2); i != 1 || j != 2 {
				t.Fatalf("copy on device %d, original on %d", i, j)
			}
			checkF32(t, copied, data, "copy")
			checkF32(t, on2, data, "original")

			other, otherDevices := splitClient(t, backend, 3)
			_ = other
			_, err := on2.CopyToDevice(otherDevices[2])
			checkCode(t, err, kiln.InvalidArgument, "CopyToDevice to another client's device")
			_, err = on2.CopyToDevice(nil)
			checkCode(t, err, kiln.InvalidArgument, "CopyToDevice(nil)")
		})
	}
}

func TestExecuteOnAChosenDevice(t *testing.T) {
	for _, backend := range hostBackends(t) {
		t.Run(backend, func(t *testing.T) {
			c, devices := splitClient(t, backend, 3)
			exe := compileAddOne(t, c)
			x := must(kiln.NewBufferOn(devices[1], []float32{1, 2, 3, 4}, 4))
			defer x.Close()
			want := []float32{2, 3, 4, 5}

			// No device: the argument's.
			out := must(exe.Execute([]*kiln.Buffer{x}))
			if i := deviceIndex(t, out[0]); i != 1 {
				t.Fatalf("result on device %d, want the argument's (1)", i)
			}
			checkF32(t, out[0], want, "result")
			closeAll(t, out[0])

			out = must(exe.Execute([]*kiln.Buffer{x}, kiln.WithDevice(devices[1])))
			if i := deviceIndex(t, out[0]); i != 1 {
				t.Fatalf("result on device %d, want 1", i)
			}
			closeAll(t, out[0])

			// The wrong device, then the argument moved there.
			_, err := exe.Execute([]*kiln.Buffer{x}, kiln.WithDevice(devices[2]))
			checkCode(t, err, kiln.InvalidArgument, "argument on another device")
			_, _, err = exe.ExecuteAsync([]*kiln.Buffer{x}, kiln.WithDevice(devices[0]))
			checkCode(t, err, kiln.InvalidArgument, "async, argument on another device")
			moved := must(x.CopyToDevice(devices[2]))
			defer moved.Close()
			out = must(exe.Execute([]*kiln.Buffer{moved}, kiln.WithDevice(devices[2])))
			if i := deviceIndex(t, out[0]); i != 2 {
				t.Fatalf("result on device %d, want 2", i)
			}
			checkF32(t, out[0], want, "result on device 2")
			closeAll(t, out[0])

			// A device of another client.
			_, otherDevices := splitClient(t, backend, 3)
			_, err = exe.Execute([]*kiln.Buffer{x}, kiln.WithDevice(otherDevices[1]))
			checkCode(t, err, kiln.InvalidArgument, "device of another client")

			// No arguments: the client's first device, or the chosen one.
			b := must(kiln.NewBuilder("constant"))
			defer b.Close()
			comp := must(b.BuildRoot(b.ConstantF32(7)))
			defer comp.Close()
			constant := must(c.Compile(comp))
			defer constant.Close()
			out = must(constant.Execute(nil))
			if i := deviceIndex(t, out[0]); i != 0 {
				t.Fatalf("result without arguments on device %d", i)
			}
			closeAll(t, out[0])
			out = must(constant.Execute(nil, kiln.WithDevice(devices[2])))
			if i := deviceIndex(t, out[0]); i != 2 {
				t.Fatalf("result without arguments on device %d, want 2", i)
			}
			checkF32(t, out[0], []float32{7}, "constant")
			closeAll(t, out[0])
		})
	}
}

// asyncChain runs exe n times, each on the previous result, closing each
// intermediate buffer (and the executable) at once, and returns the last
// result and event.
func asyncChain(t *testing.T, exe *kiln.Executable, x *kiln.Buffer, n int, opts ...kiln.ExecuteOption) (*kiln.Buffer, *kiln.Event, []*kiln.Event) {
	t.Helper()
	cur := x
	var events []*kiln.Event
	for i := 0; i < n; i++ {
		out, ev, err := exe.ExecuteAsync([]*kiln.Buffer{cur}, opts...)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if cur != x {
			closeAll(t, cur) // the running execution keeps what it needs
		}
		cur = out[0]
		events = append(events, ev)
	}
	return cur, events[len(events)-1], events
}

func TestAsyncChainWait(t *testing.T) {
	c, devices := splitClient(t, "cpu", 2)
	exe := compileAddOne(t, c)
	x := must(kiln.NewBufferOn(devices[1], []float32{1, 2, 3, 4}, 4))
	defer x.Close()
	last, ev, events := asyncChain(t, exe, x, 20)
	defer last.Close()
	// Shapes are known before the data.
	if s := must(last.Shape()); s.Type != kiln.F32 || !slices.Equal(s.Dims, []int64{4}) {
		t.Fatalf("shape %v", s)
	}
	if err := ev.Wait(); err != nil {
		t.Fatal(err)
	}
	if !ev.Ready() || ev.Wait() != nil {
		t.Fatal("not ready after Wait, or a second Wait failed")
	}
	for i, e := range events {
		if !e.Ready() {
			t.Fatalf("event %d is not ready after the last one", i)
		}
		closeAll(t, e, e)
	}
	if ev.Ready() {
		t.Fatal("a closed event reports ready")
	}
	if i := deviceIndex(t, last); i != 1 {
		t.Fatalf("the chain ended on device %d", i)
	}
	checkF32(t, last, []float32{21, 22, 23, 24}, "after 20 steps")
	ready := must(last.ReadyEvent())
	defer ready.Close()
	if err := ready.Wait(); err != nil || !ready.Ready() {
		t.Fatalf("ready event of a filled buffer: %v", err)
	}
}

func TestAsyncChainDoneChannel(t *testing.T) {
	c, devices := splitClient(t, "cpu", 2)
	exe := compileAddOne(t, c)
	x := must(kiln.NewBuffer(c, []float32{0, 0, 0, 1}, 4))
	defer x.Close()
	moved := must(x.CopyToDevice(devices[1]))
	defer moved.Close()
	last, ev, events := asyncChain(t, exe, moved, 10, kiln.WithDevice(devices[1]))
	defer last.Close()
	closeAll(t, exe) // the queued executions keep it
	done := ev.Done()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the event's channel was not closed within a minute")
	}
	if ev.Done() != done {
		t.Fatal("Done returned another channel")
	}
	if err := ev.Err(); err != nil {
		t.Fatal(err)
	}
	// An event that is ready already closes its channel at once.
	select {
	case <-events[0].Done():
	default:
		t.Fatal("the channel of a ready event is open")
	}
	// Closing the event does not close its channel's outcome.
	closeAll(t, ev)
	if ev.Err() != nil {
		t.Fatal(ev.Err())
	}
	for _, e := range events {
		e.Close()
	}
	checkF32(t, last, []float32{10, 10, 10, 11}, "after 10 steps")
}

// The Done channel of an event closed while the work runs is still closed
// when it ends, with the work's error.
func TestAsyncFailureThroughTheChannelAfterClose(t *testing.T) {
	c, exe, endless := countToFixture(t, -1)
	_ = c
	out, ev, err := exe.ExecuteAsync([]*kiln.Buffer{endless}, kiln.WithTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer out[0].Close()
	done := ev.Done()
	closeAll(t, ev)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("not done within a minute")
	}
	checkCode(t, ev.Err(), kiln.DeadlineExceeded, "Err after Close")
}

func TestAsyncFailure(t *testing.T) {
	c, exe, endless := countToFixture(t, -1)
	start := time.Now()
	out, ev, err := exe.ExecuteAsync([]*kiln.Buffer{endless}, kiln.WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Ready() {
		t.Fatalf("an endless loop with a 500 ms deadline is ready after %v", time.Since(start))
	}
	result := out[0]
	defer result.Close()
	// A chained run fails with the failed argument's error.
	next, ev2, err := exe.ExecuteAsync([]*kiln.Buffer{result})
	if err != nil {
		t.Fatal(err)
	}
	defer next[0].Close()
	defer ev2.Close()

	checkCode(t, ev.Wait(), kiln.DeadlineExceeded, "Wait")
	if elapsed := time.Since(start); elapsed < 500*time.Millisecond {
		t.Fatalf("stopped after %v", elapsed)
	}
	if !ev.Ready() {
		t.Fatal("not ready after Wait")
	}
	<-ev.Done()
	checkCode(t, ev.Err(), kiln.DeadlineExceeded, "Err")
	closeAll(t, ev)

	if s := must(result.Shape()); s.Type != kiln.S64 || len(s.Dims) != 0 {
		t.Fatalf("shape of the failed result: %v", s)
	}
	_, err = kiln.ToSlice[int64](result)
	checkCode(t, err, kiln.DeadlineExceeded, "reading the result")
	ready := must(result.ReadyEvent())
	checkCode(t, ready.Wait(), kiln.DeadlineExceeded, "the result's ready event")
	closeAll(t, ready)
	_, err = exe.Execute([]*kiln.Buffer{result})
	checkCode(t, err, kiln.DeadlineExceeded, "Execute on the failed result")

	checkCode(t, ev2.Wait(), kiln.DeadlineExceeded, "the chained run")
	_, err = kiln.ToSlice[int64](next[0])
	checkCode(t, err, kiln.DeadlineExceeded, "the chained run's result")

	// Errors in the arguments come at once, without an event.
	got, bad, err := exe.ExecuteAsync(nil)
	checkCode(t, err, kiln.InvalidArgument, "no arguments")
	if got != nil || bad != nil {
		t.Fatal("results or an event from a refused call")
	}
	_, _, err = exe.ExecuteAsync([]*kiln.Buffer{endless}, kiln.WithTimeout(-time.Second))
	checkCode(t, err, kiln.InvalidArgument, "negative timeout")
	checkUsable(t, c, exe, endless)
}

func TestDonation(t *testing.T) {
	c := must(kiln.NewClient())
	defer c.Close()
	exe := compileAddOne(t, c)
	data := []float32{1, 2, 3, 4}

	x := must(kiln.NewBuffer(c, data, 4))
	out := must(exe.Execute([]*kiln.Buffer{x}, kiln.WithDonatedArguments(0)))
	checkF32(t, out[0], []float32{2, 3, 4, 5}, "result")
	closeAll(t, out[0])
	_, err := x.Bytes()
	checkCode(t, err, kiln.FailedPrecondition, "reading a donated buffer")
	_, err = exe.Execute([]*kiln.Buffer{x})
	checkCode(t, err, kiln.FailedPrecondition, "executing on a donated buffer")
	_, err = x.CopyToDevice(must(c.Device(0)))
	checkCode(t, err, kiln.FailedPrecondition, "copying a donated buffer")
	_, _, err = exe.ExecuteAsync([]*kiln.Buffer{x})
	checkCode(t, err, kiln.FailedPrecondition, "async on a donated buffer")
	closeAll(t, x, x)

	// Asynchronously, donating the previous result.
	y := must(kiln.NewBuffer(c, data, 4))
	out, ev, err := exe.ExecuteAsync([]*kiln.Buffer{y})
	if err != nil {
		t.Fatal(err)
	}
	ev.Close()
	out2, ev2, err := exe.ExecuteAsync([]*kiln.Buffer{out[0]}, kiln.WithDonatedArguments(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := ev2.Wait(); err != nil {
		t.Fatal(err)
	}
	ev2.Close()
	checkF32(t, out2[0], []float32{3, 4, 5, 6}, "two steps")
	_, err = kiln.ToSlice[float32](out[0])
	checkCode(t, err, kiln.FailedPrecondition, "reading a donated result")
	closeAll(t, out[0], out2[0])

	// Bad indices: refused, and nothing is donated.
	for _, indices := range [][]int{{1}, {0, 0}, {-1}} {
		_, err := exe.Execute([]*kiln.Buffer{y}, kiln.WithDonatedArguments(indices...))
		checkCode(t, err, kiln.InvalidArgument, "donated indices")
		_, _, err = exe.ExecuteAsync([]*kiln.Buffer{y}, kiln.WithDonatedArguments(indices...))
		checkCode(t, err, kiln.InvalidArgument, "donated indices, async")
	}
	checkF32(t, y, data, "y after refused donations")
	closeAll(t, y)
}

func TestAliasHostMemory(t *testing.T) {
	for _, backend := range hostBackends(t) {
		t.Run(backend, func(t *testing.T) {
			c, devices := splitClient(t, backend, 2)
			exe := compileAddOne(t, c)
			m := must(kiln.NewHostMemory(16))
			copy(kiln.HostSlice[float32](m), []float32{1, 2, 3, 4})
			b := must(devices[1].AliasHost(kiln.NewShape(kiln.F32, 4), m))
			defer b.Close()
			// The buffer keeps the memory: the Go side may give it up at once.
			closeAll(t, m, m)
			if m.Bytes() != nil || kiln.HostSlice[float32](m) != nil {
				t.Fatal("a closed HostMemory gives a slice")
			}
			alias := must(b.IsHostAlias())
			if want := backend == "cpu"; alias != want {
				t.Fatalf("IsHostAlias = %v on %s", alias, backend)
			}
			if i := deviceIndex(t, b); i != 1 {
				t.Fatalf("aliased buffer on device %d", i)
			}
			out, ev, err := exe.ExecuteAsync([]*kiln.Buffer{b})
			if err != nil {
				t.Fatal(err)
			}
			closeAll(t, b) // the running execution keeps the memory
			if err := ev.Wait(); err != nil {
				t.Fatal(err)
			}
			closeAll(t, ev)
			checkF32(t, out[0], []float32{2, 3, 4, 5}, "x + 1 over aliased memory")
			closeAll(t, out[0])

			// PRED is copied; wrong sizes and a nil device are refused.
			p := must(kiln.NewHostMemory(3))
			defer p.Close()
			copy(p.Bytes(), []byte{1, 0, 1})
			pb := must(devices[0].AliasHost(kiln.NewShape(kiln.Pred, 3), p))
			if must(pb.IsHostAlias()) {
				t.Fatal("a PRED buffer aliases host memory")
			}
			if got := must(kiln.ToSlice[bool](pb)); !slices.Equal(got, []bool{true, false, true}) {
				t.Fatalf("pred buffer %v", got)
			}
			closeAll(t, pb)
			_, err = devices[0].AliasHost(kiln.NewShape(kiln.F32, 4), p)
			checkCode(t, err, kiln.InvalidArgument, "wrong size")
			var none *kiln.Device
			_, err = none.AliasHost(kiln.NewShape(kiln.Pred, 3), p)
			checkCode(t, err, kiln.InvalidArgument, "nil device")
			_, err = devices[0].AliasHost(kiln.NewShape(kiln.Pred, 3), nil)
			checkCode(t, err, kiln.InvalidArgument, "nil memory")
		})
	}
}
