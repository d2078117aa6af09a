package kiln_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"kiln.dev/kiln"
)

// must returns v, or panics (failing the test) on a non-nil error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func closeAll(t testing.TB, cs ...interface{ Close() error }) {
	t.Helper()
	for _, c := range cs {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

// --- (a) a two-layer MLP through the builder ----------------------------------

var (
	mlpW1 = []float32{0.5, -0.25, 0.1, 0.3, 0.8, -0.5, -0.2, 0.4, 0.6, 0.1, -0.3, 0.2} // [4,3]
	mlpB1 = []float32{0.1, 0, -0.1}                                                    // [3]
	mlpW2 = []float32{1, -1, 0.5, 0.5, -0.75, 0.25}                                    // [3,2]
	mlpB2 = []float32{0, 1}                                                            // [2]
)

// buildMLP is relu(x . w1 + b1) . W2 + b2 with x, w1 and b1 parameters and
// W2, b2 constants.
func buildMLP(t testing.TB) *kiln.Computation {
	b := must(kiln.NewBuilder("mlp"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 2, 4), "x")
	w1 := b.Parameter(1, kiln.NewShape(kiln.F32, 4, 3), "w1")
	b1 := b.Parameter(2, kiln.NewShape(kiln.F32, 3), "b1")
	h := b.Max(b.Add(b.Dot(x, w1), b1, 1), b.ConstantF32(0))
	y := b.Add(b.Dot(h, kiln.Constant(b, mlpW2, 3, 2)), kiln.Constant(b, mlpB2, 2), 1)
	if s := must(b.Shape(y)); s.Type != kiln.F32 || fmt.Sprint(s.Dims) != "[2 2]" {
		t.Fatalf("shape of y = %v", s)
	}
	return must(b.BuildRoot(y))
}

func mlpReference(x []float32) []float64 {
	y := make([]float64, 4)
	for r := 0; r < 2; r++ {
		h := make([]float64, 3)
		for j := range h {
			s := float64(mlpB1[j])
			for k := 0; k < 4; k++ {
				s += float64(x[r*4+k]) * float64(mlpW1[k*3+j])
			}
			h[j] = math.Max(s, 0)
		}
		for j := 0; j < 2; j++ {
			s := float64(mlpB2[j])
			for k := 0; k < 3; k++ {
				s += h[k] * float64(mlpW2[k*2+j])
			}
			y[r*2+j] = s
		}
	}
	return y
}

// runMLP executes the MLP on x and checks the result against mlpReference.
func runMLP(t testing.TB, c *kiln.Client, exe *kiln.Executable, x []float32) {
	xb := must(kiln.NewBuffer(c, x, 2, 4))
	w1 := must(kiln.NewBuffer(c, mlpW1, 4, 3))
	b1 := must(kiln.NewBuffer(c, mlpB1, 3))
	defer closeAll(t, xb, w1, b1)
	out := must(exe.Execute([]*kiln.Buffer{xb, w1, b1}))
	defer closeAll(t, out[0])
	if len(out) != 1 {
		t.Fatalf("%d results, want 1", len(out))
	}
	got := must(kiln.ToSlice[float32](out[0]))
	want := mlpReference(x)
	for i := range want {
		if !near(float64(got[i]), want[i], 1e-5) {
			t.Fatalf("y = %v, want %v", got, want)
		}
	}
}

func TestBuilderMLP(t *testing.T) {
	c := must(kiln.NewClient())
	defer c.Close()
	comp := buildMLP(t)
	defer comp.Close()
	if n := must(comp.ParameterCount()); n != 3 {
		t.Fatalf("parameter count %d", n)
	}
	exe := must(c.Compile(comp))
	defer exe.Close()
	if n := must(exe.ResultCount()); n != 1 {
		t.Fatalf("result count %d", n)
	}
	runMLP(t, c, exe, []float32{1, 2, 3, 4, -1, 0.5, 0, 2})
	// relu must clip: a strongly negative input.
	runMLP(t, c, exe, []float32{-3, -2, -1, -4, 0, 0, 0, 0})
}

// --- (b) an HLO module of the conformance corpus with its .npy files ----------

func TestConformanceMLPForward(t *testing.T) {
	dir := filepath.Join("..", "..", "tests", "conformance", "corpus", "mlp_forward")
	c := must(kiln.NewClient())
	defer c.Close()
	comp := must(kiln.ReadHLOFile(filepath.Join(dir, "module.hlo")))
	defer comp.Close()
	exe := must(c.Compile(comp))
	defer exe.Close()
	n := must(exe.ParameterCount())
	args := make([]*kiln.Buffer, n)
	for i := range args {
		typ := must(exe.ParameterType(i))
		args[i] = must(c.ReadNPYAs(filepath.Join(dir, fmt.Sprintf("in%d.npy", i)), typ))
		defer args[i].Close()
	}
	out := must(exe.Execute(args))
	for i, r := range out {
		defer r.Close()
		want := must(c.ReadNPY(filepath.Join(dir, fmt.Sprintf("out%d.npy", i))))
		defer want.Close()
		if ws, gs := must(want.Shape()), must(r.Shape()); ws.String() != gs.String() {
			t.Fatalf("result %d: shape %v, want %v", i, gs, ws)
		}
		g, w := must(kiln.ToSlice[float32](r)), must(kiln.ToSlice[float32](want))
		for j := range w {
			if !near(float64(g[j]), float64(w[j]), 1e-4) {
				t.Fatalf("result %d[%d] = %v, want %v", i, j, g[j], w[j])
			}
		}
	}
	// Round trip through .npy.
	path := filepath.Join(t.TempDir(), "y.npy")
	if err := out[0].WriteNPY(path); err != nil {
		t.Fatal(err)
	}
	back := must(c.ReadNPY(path))
	defer back.Close()
	if a, b := must(back.Bytes()), must(out[0].Bytes()); string(a) != string(b) {
		t.Fatal("npy round trip changed the data")
	}
}

// --- (c) errors: typed, with the code and the library's message ------------------

func TestShapeError(t *testing.T) {
	b := must(kiln.NewBuilder("bad"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 2), "x")
	y := b.Parameter(1, kiln.NewShape(kiln.F32, 3), "y")
	sum := b.Add(x, y)
	if sum.Valid() {
		t.Fatal("adding f32[2] and f32[3] gave a valid op")
	}
	for _, err := range []error{b.Err(), func() error { _, err := b.Build(); return err }()} {
		var kerr *kiln.Error
		if !errors.As(err, &kerr) {
			t.Fatalf("error %v (%T) is not a *kiln.Error", err, err)
		}
		if kerr.Code != kiln.InvalidArgument || int(kerr.Code) != 3 {
			t.Fatalf("code %v, want INVALID_ARGUMENT (3)", kerr.Code)
		}
		if !strings.Contains(kerr.Message, "add") {
			t.Fatalf("message %q does not name the op", kerr.Message)
		}
		if !strings.Contains(err.Error(), "INVALID_ARGUMENT") {
			t.Fatalf("Error() = %q", err.Error())
		}
	}
	// Later ops fail too, and the first error stays.
	if b.Neg(sum).Valid() {
		t.Fatal("op on an invalid operand is valid")
	}
}

func TestOpOfAnotherBuilderIsInvalidArgument(t *testing.T) {
	first := must(kiln.NewBuilder("first"))
	defer first.Close()
	second := must(kiln.NewBuilder("second"))
	defer second.Close()
	x := first.Parameter(0, kiln.NewShape(kiln.F32), "x")
	y := second.Parameter(0, kiln.NewShape(kiln.F32), "y")
	if second.Add(x, y).Valid() {
		t.Fatal("adding an op of another builder gave a valid op")
	}
	var kerr *kiln.Error
	if err := second.Err(); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument {
		t.Fatalf("error %v, want INVALID_ARGUMENT", err)
	}
	for _, needle := range []string{"kiln_op_add: operand 'lhs'", "builder 'first'", "not of builder 'second'"} {
		if !strings.Contains(kerr.Message, needle) {
			t.Fatalf("message %q does not contain %q", kerr.Message, needle)
		}
	}
	if _, err := first.BuildRoot(y); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument ||
		!strings.Contains(kerr.Message, "kiln_builder_build: argument 'root'") {
		t.Fatalf("building on an op of another builder: %v", err)
	}
	own := must(first.BuildRoot(x))
	defer own.Close()
	if n := must(own.ParameterCount()); n != 1 {
		t.Fatalf("parameter count %d, want 1", n)
	}
}

func TestOperandPrecision(t *testing.T) {
	b := must(kiln.NewBuilder("precision"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 2, 3), "x")
	w := b.Parameter(1, kiln.NewShape(kiln.F32, 3, 4), "w")
	product := b.SetPrecision(b.Dot(x, w), kiln.PrecisionHighest, kiln.PrecisionDefault)
	computation := must(b.BuildRoot(product))
	defer computation.Close()
	text := must(computation.HLOText())
	if !strings.Contains(text, "operand_precision={highest,default}") {
		t.Fatalf("precision missing from %s", text)
	}
	if b.SetPrecision(b.Add(x, x), kiln.PrecisionHigh, kiln.PrecisionHigh).Valid() {
		t.Fatal("an add took an operand precision")
	}
	var kerr *kiln.Error
	if err := b.Err(); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument ||
		!strings.Contains(kerr.Message, "only dot and convolution") {
		t.Fatalf("error %v", err)
	}
}

func TestFft(t *testing.T) {
	b := must(kiln.NewBuilder("fft"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 2, 8), "x")
	back := b.Fft(b.Fft(x, kiln.FftReal, []int64{8}), kiln.FftInverseReal, []int64{8})
	computation := must(b.BuildRoot(back))
	defer computation.Close()
	if text := must(computation.HLOText()); !strings.Contains(text, "fft_type=RFFT, fft_length={8}") {
		t.Fatalf("fft missing from %s", text)
	}
	c := must(kiln.NewClient())
	defer c.Close()
	exe := must(c.Compile(computation))
	defer exe.Close()
	signal := make([]float32, 16)
	for i := range signal {
		signal[i] = float32(i)*0.5 - 3
	}
	xb := must(kiln.NewBuffer(c, signal, 2, 8))
	defer closeAll(t, xb)
	out := must(exe.Execute([]*kiln.Buffer{xb}))
	defer closeAll(t, out[0])
	got := must(kiln.ToSlice[float32](out[0]))
	for i := range signal {
		if !near(float64(got[i]), float64(signal[i]), 1e-5) {
			t.Fatalf("irfft(rfft(x)) = %v, want %v", got, signal)
		}
	}
	if b.Fft(x, kiln.FftForward, []int64{8}).Valid() {
		t.Fatal("an FFT took real numbers")
	}
	var kerr *kiln.Error
	if err := b.Err(); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument ||
		!strings.Contains(kerr.Message, "fft: FFT needs a complex") {
		t.Fatalf("error %v", err)
	}
}

func TestOtherErrors(t *testing.T) {
	var kerr *kiln.Error
	if _, err := kiln.NewClient(kiln.WithBackend("no-such-backend")); !errors.As(err, &kerr) ||
		kerr.Code != kiln.NotFound {
		t.Fatalf("unknown backend: %v", err)
	}
	if _, err := kiln.NewClient(kiln.WithBackend("")); !errors.As(err, &kerr) ||
		kerr.Code != kiln.InvalidArgument || !strings.Contains(kerr.Message, "empty") {
		t.Fatalf("empty backend name: %v", err)
	}
	if _, err := kiln.ParseHLO("HloModule m\nENTRY e {\n  ROOT p = f32[2] negate(\n}\n"); !errors.As(err, &kerr) ||
		kerr.Code != kiln.InvalidArgument {
		t.Fatalf("bad HLO: %v", err)
	}
	if _, err := kiln.ParseHLO("HloModule m\nENTRY e {\n  ROOT p = f32[2] bogus()\n}\n"); !errors.As(err, &kerr) ||
		kerr.Code != kiln.Unimplemented || !strings.Contains(kerr.Message, "unsupported op 'bogus'") {
		t.Fatalf("unknown op: %v", err)
	}
	c := must(kiln.NewClient())
	defer c.Close()
	if _, err := kiln.NewBuffer(c, []float32{1, 2, 3}, 2); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument {
		t.Fatalf("wrong byte size: %v", err)
	}
	if _, err := c.ReadNPY(filepath.Join(t.TempDir(), "missing.npy")); !errors.As(err, &kerr) ||
		kerr.Code != kiln.NotFound {
		t.Fatalf("missing npy: %v", err)
	}
	buf := must(kiln.NewBuffer(c, []int32{1, 2}, 2))
	if _, err := kiln.ToSlice[float32](buf); !errors.As(err, &kerr) {
		t.Fatalf("ToSlice with the wrong type: %v", err)
	}
	// Closed handles are idempotent to close and report errors when used.
	closeAll(t, buf, buf)
	if _, err := buf.Dims(); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument {
		t.Fatalf("closed buffer: %v", err)
	}
	// Mismatched list lengths are caught before the library reads past them.
	b := must(kiln.NewBuilder("lists"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 4), "x")
	b.Slice(x, []int64{0}, []int64{2, 3}, nil)
	if err := b.Err(); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument {
		t.Fatalf("slice with lists of different lengths: %v", err)
	}
}

func TestMisc(t *testing.T) {
	if kiln.Version() == "" || kiln.VersionNumber() != kiln.HeaderVersionNumber {
		t.Fatalf("version %q (%d), header %d", kiln.Version(), kiln.VersionNumber(), kiln.HeaderVersionNumber)
	}
	names := must(kiln.Backends())
	if len(names) == 0 {
		t.Fatal("no backends")
	}
	c := must(kiln.NewClient())
	defer c.Close()
	if name := must(c.BackendName()); name == "" {
		t.Fatal("empty backend name")
	}
	if n := must(c.DeviceCount()); n < 1 {
		t.Fatal("no devices")
	}
	_ = must(c.DeviceDescription(0))
	if kiln.F32.String() != "f32" || kiln.F32.ByteWidth() != 4 || kiln.InvalidArgument.String() != "INVALID_ARGUMENT" {
		t.Fatal("names")
	}
	// Text round trip, and a buffer with a layout.
	comp := buildMLP(t)
	defer comp.Close()
	text := must(comp.HLOText())
	again := must(kiln.ParseHLO(text))
	defer again.Close()
	buf := must(c.BufferFromBytes(kiln.NewShape(kiln.S32, 2, 2), []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, []int64{0, 1}))
	defer buf.Close()
	if m := must(buf.MinorToMajor()); fmt.Sprint(m) != "[0 1]" {
		t.Fatalf("minor_to_major %v", m)
	}
	if v := must(kiln.ToSlice[int32](buf)); fmt.Sprint(v) != "[1 2 3 4]" {
		t.Fatalf("values %v", v)
	}
}

// A client closed before its executables and buffers stays alive for them.
func TestCloseClientFirst(t *testing.T) {
	c := must(kiln.NewClient())
	comp := buildMLP(t)
	exe := must(c.Compile(comp))
	closeAll(t, comp)
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	args := []*kiln.Buffer{must(kiln.NewBuffer(c, x, 2, 4)), must(kiln.NewBuffer(c, mlpW1, 4, 3)),
		must(kiln.NewBuffer(c, mlpB1, 3))}
	closeAll(t, c, c)
	var kerr *kiln.Error
	if _, err := kiln.NewBuffer(c, mlpW1, 4, 3); !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument {
		t.Fatalf("buffer from a closed client: %v", err)
	}
	// The executable and buffers still work: the native client lives on.
	out := must(exe.Execute(args))
	got := must(kiln.ToSlice[float32](out[0]))
	if want := mlpReference(x); !near(float64(got[3]), want[3], 1e-5) {
		t.Fatalf("y = %v, want %v", got, want)
	}
	closeAll(t, out[0], args[0], args[1], args[2], exe)
}

// Handles never closed are freed by their cleanups.
func TestCleanupSafetyNet(t *testing.T) {
	for i := 0; i < 100; i++ {
		c := must(kiln.NewClient())
		_ = must(kiln.NewBuffer(c, []float32{1}, 1))
		b := must(kiln.NewBuilder("f"))
		b.Neg(b.Parameter(0, kiln.NewShape(kiln.F32, 1), "x"))
		comp := must(b.Build())
		_ = must(c.Compile(comp))
	}
	for i := 0; i < 5; i++ {
		runtime.GC()
	}
}

// --- (d) create/destroy loops without resident-memory growth -----------------------

func rssKiB(t testing.TB) int64 {
	data := must(os.ReadFile("/proc/self/status"))
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			return must(strconv.ParseInt(f[1], 10, 64))
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

func iterations(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// checkNoGrowth runs body n times after a warm-up of n/10 and fails when the
// resident set grew by more than slackKiB. A window that grew more is run
// again: a leak grows the resident set in every window, while a one-off step
// (the Go heap or a malloc arena growing once) does not repeat, so only a
// second window that grows too fails the test.
func checkNoGrowth(t *testing.T, n int, slackKiB int64, body func()) {
	for i := 0; i < n/10; i++ {
		body()
	}
	window := func() int64 {
		runtime.GC()
		before := rssKiB(t)
		for i := 0; i < n; i++ {
			body()
		}
		runtime.GC()
		after := rssKiB(t)
		t.Logf("%d iterations: VmRSS %d KiB -> %d KiB", n, before, after)
		return after - before
	}
	if growth := window(); growth <= slackKiB {
		return
	}
	t.Logf("grew by more than %d KiB; running a confirming window", slackKiB)
	if growth := window(); growth > slackKiB {
		t.Fatalf("resident memory grew by %d KiB over %d iterations, twice in a row", growth, n)
	}
}

func tinyComputation(t testing.TB) *kiln.Computation {
	b := must(kiln.NewBuilder("tiny"))
	defer b.Close()
	x := b.Parameter(0, kiln.NewShape(kiln.F32, 4), "x")
	b.Add(b.Mul(x, x), b.ConstantF32(1))
	return must(b.Build())
}

func TestNoLeakBuffersAndBuilders(t *testing.T) {
	if testing.Short() {
		t.Skip("long loop")
	}
	n := iterations("KILN_GO_LEAK_ITERATIONS", 100_000)
	c := must(kiln.NewClient())
	defer c.Close()
	comp := tinyComputation(t)
	defer comp.Close()
	exe := must(c.Compile(comp))
	defer exe.Close()
	data := []float32{1, 2, 3, 4}
	checkNoGrowth(t, n, 4096, func() {
		// A builder and a computation...
		b := must(kiln.NewBuilder("loop"))
		x := b.Parameter(0, kiln.NewShape(kiln.F32, 4), "x")
		b.Add(x, b.Add(x, b.Parameter(1, kiln.NewShape(kiln.F32, 3), "y"))) // sticky error path too
		_, _ = b.Build()
		b2 := must(kiln.NewBuilder("ok"))
		b2.Neg(b2.Parameter(0, kiln.NewShape(kiln.F32, 4), "x"))
		cm := must(b2.Build())
		closeAll(t, b, b2, cm)
		// ...and buffers through an execute.
		in := must(kiln.NewBuffer(c, data, 4))
		out := must(exe.Execute([]*kiln.Buffer{in}))
		_ = must(out[0].Bytes())
		closeAll(t, in, out[0])
	})
}

func TestNoLeakClientsAndCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("long loop")
	}
	n := iterations("KILN_GO_COMPILE_LEAK_ITERATIONS", 100_000)
	checkNoGrowth(t, n, 4096, func() {
		c := must(kiln.NewClient())
		comp := tinyComputation(t)
		exe := must(c.Compile(comp))
		in := must(kiln.NewBuffer(c, []float32{1, 2, 3, 4}, 4))
		out := must(exe.Execute([]*kiln.Buffer{in}))
		closeAll(t, out[0], in, exe, comp, c)
	})
}

// --- (e) one executable run from two goroutines at once ---------------------------

func TestConcurrentExecute(t *testing.T) {
	c := must(kiln.NewClient())
	defer c.Close()
	comp := buildMLP(t)
	defer comp.Close()
	exe := must(c.Compile(comp))
	defer exe.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			runtime.LockOSThread() // each goroutine on its own OS thread
			defer runtime.UnlockOSThread()
			for i := 0; i < 200; i++ {
				x := make([]float32, 8)
				for k := range x {
					x[k] = float32(g*100+i) * 0.01 * float32(k-3)
				}
				if err := func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("%v", r)
						}
					}()
					runMLP(&fatalTB{t}, c, exe, x)
					return nil
				}(); err != nil {
					errs <- fmt.Errorf("goroutine %d iteration %d: %w", g, i, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// fatalTB turns Fatal into a panic so that helpers can run off the test's
// goroutine (t.Fatal must not be called there).
type fatalTB struct{ *testing.T }

func (f *fatalTB) Helper()                           {}
func (f *fatalTB) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (f *fatalTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
