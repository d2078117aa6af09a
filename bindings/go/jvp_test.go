package kiln_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"kiln.dev/kiln"
)

// sineTimes is f(w: f32[3], x: f32[3], n: s32[]) = (sin(w) * x, n).
func sineTimes(t testing.TB) *kiln.Computation {
	b := must(kiln.NewBuilder("sine_times"))
	defer b.Close()
	w := b.Parameter(0, kiln.NewShape(kiln.F32, 3), "w")
	x := b.Parameter(1, kiln.NewShape(kiln.F32, 3), "x")
	n := b.Parameter(2, kiln.NewShape(kiln.S32), "n")
	b.Tuple(b.Mul(b.Sin(w), x), n)
	return must(b.Build())
}

// wrt (1, 0): x's tangent comes first, then w's; the results are (f, n, df, dn).
func TestJVPReturnsResultsThenTheirTangents(t *testing.T) {
	w, x := []float32{1, -2, 0.5}, []float32{3, 0.25, -4}
	dw, dx := []float32{0.5, 1, -1.5}, []float32{2, -1, 0.125}
	f := sineTimes(t)
	defer f.Close()
	jvp := must(f.JVP(1, 0))
	defer jvp.Close()
	if n := must(jvp.ParameterCount()); n != 5 {
		t.Fatalf("parameter count %d, want 5", n)
	}
	c := must(kiln.NewClient())
	defer c.Close()
	exe := must(c.Compile(jvp))
	defer exe.Close()
	wb, xb, nb := must(kiln.NewBuffer(c, w, 3)), must(kiln.NewBuffer(c, x, 3)), must(kiln.NewBuffer(c, []int32{7}))
	dxb, dwb := must(kiln.NewBuffer(c, dx, 3)), must(kiln.NewBuffer(c, dw, 3))
	defer closeAll(t, wb, xb, nb, dxb, dwb)
	out := must(exe.Execute([]*kiln.Buffer{wb, xb, nb, dxb, dwb}))
	if len(out) != 4 {
		t.Fatalf("%d results, want 4", len(out))
	}
	defer closeAll(t, out[0], out[1], out[2], out[3])
	y, dy := must(kiln.ToSlice[float32](out[0])), must(kiln.ToSlice[float32](out[2]))
	n, dn := must(kiln.ToSlice[int32](out[1])), must(kiln.ToSlice[int32](out[3]))
	for i := range w {
		wi, xi := float64(w[i]), float64(x[i])
		want := math.Cos(wi)*float64(dw[i])*xi + math.Sin(wi)*float64(dx[i])
		if !near(float64(y[i]), math.Sin(wi)*xi, 1e-5) || !near(float64(dy[i]), want, 1e-5) {
			t.Fatalf("y %v dy %v for w %v x %v", y, dy, w, x)
		}
	}
	if n[0] != 7 || dn[0] != 0 {
		t.Fatalf("n %v and its tangent %v, want 7 and 0 (an integer has no tangent)", n, dn)
	}
}

func TestJVPRefusalsNameWhatIsWrong(t *testing.T) {
	f := sineTimes(t)
	defer f.Close()
	for _, tc := range []struct {
		wrt    []int64
		needle string
	}{{[]int64{3}, "parameter 3"}, {[]int64{0, 0}, "repeats parameter 0"}, {[]int64{2}, "s32"}, {nil, "wrt is empty"}} {
		_, err := f.JVP(tc.wrt...)
		var kerr *kiln.Error
		if !errors.As(err, &kerr) || kerr.Code != kiln.InvalidArgument || !strings.Contains(kerr.Message, tc.needle) ||
			!strings.Contains(kerr.Message, "kiln_computation_jvp") {
			t.Fatalf("wrt %v: %v, want InvalidArgument mentioning %q", tc.wrt, err, tc.needle)
		}
	}
}
